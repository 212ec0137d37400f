"""Serves moto's DynamoDB, S3 and SQS on one port, single-threaded.

The stock moto_server is threaded and takes no lock around a condition check, so concurrent
conditional writes can both win there. One request at a time makes every condition atomic,
as DynamoDB's are.
"""
import sys

from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
port = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
run_simple(host, port, DomainDispatcherApplication(create_backend_app), threaded=False, processes=1)
