"""Serves moto's DynamoDB, S3 and SQS on one port, single-threaded.

The stock moto_server is threaded and takes no lock around a condition check, so concurrent
conditional writes can both win there. One request at a time makes every condition atomic,
as DynamoDB's are.

moto's TransactWriteItems keeps a deep copy of the whole table for each of its actions, to roll
back a cancelled transaction; a bulk import (99 actions a transaction) then costs time and memory
in proportion to actions x table size, hours and many GiB for 10,000 contacts. `_undo_by_item`
remembers the items the actions touch instead and puts them back on cancellation: the same
outcome, at a cost in proportion to the actions. It also cuts the stream records the cancelled
actions wrote, so a table's stream holds committed changes only, as DynamoDB's does.

moto's SendMessage reads the queue's attributes for one FIFO setting, and computing them counts
the queue's visible and delayed messages, one clock read per message: sending 10,000 dial jobs
(a tick of 10,000 running tasks) costs time in proportion to messages squared, most of an hour.
`_cheap_attributes_while_sending` answers a standard queue's send no attributes (it has none of
the FIFO ones the send reads); every other read, and FIFO queues, get moto's.
"""
import copy
import sys
import threading
import types

import moto.dynamodb.models as dynamodb_models
import moto.sqs.models as sqs_models
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


def _touched(backend, transact_items):
    """(table, hash, range, copy of the item or None) of every action, or None if unsure."""
    touched = []
    for action in transact_items:
        try:
            (op,) = action.values()
            table = backend.tables[op["TableName"]]
            key = op["Key"] if "Key" in op else op["Item"]
            hash_key = DynamoType(key[table.hash_key_attr])
            range_key = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
            item = table.get_item(hash_key, range_key)
        except Exception:  # malformed: let moto answer it, with its own table copies
            return None
        touched.append((table, hash_key, range_key, copy.deepcopy(item)))
    return touched


def _put_back(touched):
    for table, hash_key, range_key, item in reversed(touched):
        if item is None:
            table.delete_item(hash_key, range_key)
        elif range_key is not None:
            table.items[hash_key][range_key] = item
        else:
            table.items[hash_key] = item


def _undo_by_item(transact_write_items):
    def patched(self, transact_items):
        touched = _touched(self, transact_items)
        if touched is None:
            return transact_write_items(self, transact_items)

        def deepcopy(value, memo=None):
            # The tables moto would copy for its rollback: the live table, so that rollback
            # is a no-op and `_put_back` does it.
            return value if isinstance(value, Table) else copy.deepcopy(value, memo)

        # A table's stream as it was: moto applies a cancelled transaction's other actions
        # before it rolls them back, and their records must not stay in the stream (DynamoDB's
        # stream holds committed changes only; the event outbox relies on it).
        streams = {
            id(table): (table, len(table.stream_shard.items))
            for table, _, _, _ in touched
            if table.stream_shard is not None
        }

        # The method reads the module's `copy`; one request at a time, so swapping it is safe.
        dynamodb_models.copy = types.SimpleNamespace(deepcopy=deepcopy)
        try:
            return transact_write_items(self, transact_items)
        except Exception:
            _put_back(touched)
            for table, length in streams.values():
                del table.stream_shard.items[length:]
            raise
        finally:
            dynamodb_models.copy = copy

    return patched


dynamodb_models.DynamoDBBackend.transact_write_items = _undo_by_item(
    dynamodb_models.DynamoDBBackend.transact_write_items
)

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

moto_app = DomainDispatcherApplication(create_backend_app)

# What this server adds to moto, so that tests needing it can tell a stale server from this one.
FEATURES_PATH = "/_outbound/features"
FEATURES = b'{"transactWriteUndoByItem": true, "sqsSendWithoutCountingMessages": true, "streamsWithoutCancelledWrites": true}'


def app(environ, start_response):
    if environ.get("PATH_INFO") == FEATURES_PATH:
        start_response("200 OK", [("Content-Type", "application/json")])
        return [FEATURES]
    return moto_app(environ, start_response)


host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
port = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
run_simple(host, port, app, threaded=False, processes=1)
