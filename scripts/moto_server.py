"""Serves moto's S3, SQS and EventBridge on one port, single-threaded.

DynamoDB is not served from here: every stack serves its own (dynoxide, in process:
local/src/dynamodb.rs), which keeps conditions atomic under concurrent clients. moto stays for
the services no DynamoDB emulator offers, one request at a time as it has always run here: its
S3, SQS and EventBridge backends were never written to be served by many threads at once.

moto's SendMessage reads the queue's attributes for one FIFO setting, and computing them counts
the queue's visible and delayed messages, one clock read per message: sending 10,000 dial jobs
(a tick of 10,000 running tasks) costs time in proportion to messages squared, most of an hour.
`_cheap_attributes_while_sending` answers a standard queue's send no attributes (it has none of
the FIFO ones the send reads); every other read, and FIFO queues, get moto's.
"""
import sys
import threading

import moto.sqs.models as sqs_models
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


_sending = threading.local()


def _cheap_attributes_while_sending():
    attributes = sqs_models.Queue.attributes
    send_message = sqs_models.SQSBackend.send_message

    def queue_attributes(queue):
        if getattr(_sending, "active", False) and not queue.fifo_queue:
            return {}
        return attributes.fget(queue)

    def sending(self, *args, **kwargs):
        _sending.active = True
        try:
            return send_message(self, *args, **kwargs)
        finally:
            _sending.active = False

    sqs_models.Queue.attributes = property(queue_attributes)
    sqs_models.SQSBackend.send_message = sending


_cheap_attributes_while_sending()

app = DomainDispatcherApplication(create_backend_app)


if __name__ == "__main__":
    host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    run_simple(host, port, app, threaded=False, processes=1)
