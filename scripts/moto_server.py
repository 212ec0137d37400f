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

moto answers every Query by sorting the whole table, and an index query filters and sorts again:
with 200,000 items a table query costs a third of a second and an index query two thirds, and the
dialing engine's periodic index queries then keep the single-threaded server busy for seconds.
`_query_by_partition` hands moto's own query only the queried partition's items: a table query's
partition is the table's own, an index query's comes from `_KeysByValue`, the keys of the items
by their value of the index's hash key, built on the first query of that index and kept by the
writes (`_reindex`). Everything after the choice of items, sorting included, is moto's.
"""
import copy
import functools
import inspect
import sys
import threading
import types
from collections import defaultdict

import moto.dynamodb.models as dynamodb_models
import moto.sqs.models as sqs_models
from moto.dynamodb.exceptions import ResourceNotFoundException
from moto.dynamodb.models.dynamo_type import DynamoType, Item
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
        else:
            if range_key is not None:
                table.items[hash_key][range_key] = item
            else:
                table.items[hash_key] = item
            _reindex(table, hash_key, range_key)


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

# The attribute of a Table that holds its `_IndexedKeys`.
_INDEXED_KEYS = "_outbound_indexed_keys"


class _KeysByValue:
    """The keys (hash, range) of a table's items by their value of one attribute.

    Values that cannot be hashed (lists, maps, sets) are left out: a query's key value is a
    scalar, which never equals one of them.
    """

    def __init__(self, attr):
        self.attr = attr
        self.keys = defaultdict(set)
        self.value_of = {}

    def update(self, key, item):
        """Files `key` under the value `item` (the one stored at `key`, or None) has now."""
        old = self.value_of.pop(key, None)
        if old is not None:
            keys = self.keys[old]
            keys.discard(key)
            if not keys:
                del self.keys[old]
        value = item.attrs.get(self.attr) if item is not None else None
        if value is None:
            return
        try:
            hash(value)
        except TypeError:
            return
        # A copy: a dict's key must not change, and the item's own value is the item's to change.
        value = DynamoType(value)
        self.value_of[key] = value
        self.keys[value].add(key)


class _IndexedKeys:
    """A table's `_KeysByValue` by attribute, for the `items` they were built from."""

    def __init__(self, items):
        self.items = items
        self.by_attr = {}


def _indexed_keys(table):
    """The table's `_IndexedKeys`, or None if it has none (or has none for its current items)."""
    indexed = table.__dict__.get(_INDEXED_KEYS)
    if indexed is not None and indexed.items is not table.items:
        # The items were replaced wholesale (a table restored from a backup): start again.
        del table.__dict__[_INDEXED_KEYS]
        return None
    return indexed


def _forget_indexed_keys(table):
    """Drops the table's `_IndexedKeys`; the next index query builds them again."""
    table.__dict__.pop(_INDEXED_KEYS, None)


def _stored(table, hash_key, range_key):
    """The item stored at the key, or None."""
    # `.get`, not `[]`: the table's items are a defaultdict, and a lookup must not add a partition.
    entry = table.items.get(hash_key)
    if table.range_key_attr is None:
        return entry if isinstance(entry, Item) else None
    return entry.get(range_key) if isinstance(entry, dict) else None


def _stored_items(table):
    for hash_key, entry in table.items.items():
        if table.range_key_attr is None:
            if isinstance(entry, Item):
                yield (hash_key, None), entry
        elif isinstance(entry, dict):
            for range_key, item in entry.items():
                yield (hash_key, range_key), item


def _keys_by_value(table, attr):
    """The table's `_KeysByValue` of `attr`, built from all its items if it has none yet."""
    indexed = _indexed_keys(table)
    if indexed is None:
        indexed = table.__dict__[_INDEXED_KEYS] = _IndexedKeys(table.items)
    keys_by_value = indexed.by_attr.get(attr)
    if keys_by_value is None:
        keys_by_value = indexed.by_attr[attr] = _KeysByValue(attr)
        for key, item in _stored_items(table):
            keys_by_value.update(key, item)
    return keys_by_value


def _reindex(table, hash_key, range_key):
    """Files the item at the key (now there, changed, or gone) afresh in the table's indexes."""
    indexed = _indexed_keys(table)
    if indexed is None:
        return
    if table.range_key_attr is None:
        range_key = None
    try:
        item = _stored(table, hash_key, range_key)
        for keys_by_value in indexed.by_attr.values():
            keys_by_value.update((hash_key, range_key), item)
    except TypeError:  # a key that cannot be hashed, so nothing moto could have stored there
        _forget_indexed_keys(table)


def _reindex_writes():
    """Re-files every item a write touches: Table's put and delete (which every other write
    calls, PartiQL and table imports included) and the backend's update, which changes the
    stored item in place."""
    put_item = Table.put_item
    delete_item = Table.delete_item
    update_item = dynamodb_models.DynamoDBBackend.update_item

    @functools.wraps(put_item)
    def put(self, item_attrs, *args, **kwargs):
        try:
            return put_item(self, item_attrs, *args, **kwargs)
        finally:
            if _indexed_keys(self) is not None:
                try:
                    hash_key = DynamoType(item_attrs[self.hash_key_attr])
                    range_key = (
                        DynamoType(item_attrs[self.range_key_attr])
                        if self.range_key_attr is not None
                        else None
                    )
                except Exception:  # moto reads the key the same way first: nothing was stored
                    hash_key = None
                if hash_key is not None:
                    _reindex(self, hash_key, range_key)

    @functools.wraps(delete_item)
    def delete(self, hash_key, range_key, *args, **kwargs):
        try:
            return delete_item(self, hash_key, range_key, *args, **kwargs)
        finally:
            if range_key is None and self.range_key_attr is not None:
                # moto then drops the whole partition.
                _forget_indexed_keys(self)
            else:
                _reindex(self, hash_key, range_key)

    @functools.wraps(update_item)
    def update(self, table_name, key, *args, **kwargs):
        try:
            return update_item(self, table_name, key, *args, **kwargs)
        finally:
            try:
                table = self.get_table(table_name)
            except ResourceNotFoundException:
                table = None
            if table is not None and _indexed_keys(table) is not None:
                # The key as moto's update_item reads it.
                try:
                    if table.hash_key_attr in key and table.range_key_attr in key:
                        hash_key = DynamoType(key[table.hash_key_attr])
                        range_key = DynamoType(key[table.range_key_attr])
                    elif table.hash_key_attr in key:
                        hash_key, range_key = DynamoType(key[table.hash_key_attr]), None
                    else:
                        hash_key, range_key = DynamoType(key), None
                except Exception:  # moto failed on the same before it wrote anything
                    hash_key = None
                if hash_key is not None:
                    _reindex(table, hash_key, range_key)

    Table.put_item = put
    Table.delete_item = delete
    dynamodb_models.DynamoDBBackend.update_item = update


def _queried_items(table, hash_key, index_name):
    """The items a query of `hash_key` can return, as `table.items` holds them, or None to let
    moto look at every item (for a query it refuses, or a key value that cannot be hashed)."""
    try:
        hash(hash_key)
    except TypeError:
        return None
    if not index_name:
        entry = table.items.get(hash_key)
        return {} if entry is None else {hash_key: entry}
    index = {i.name: i for i in table.all_indexes()}.get(index_name)
    if index is None:
        return None
    hash_attrs = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
    if not hash_attrs:
        return None
    items = {}
    for item_hash, item_range in _keys_by_value(table, hash_attrs[0]).keys.get(hash_key, ()):
        item = _stored(table, item_hash, item_range)
        if item is None:
            continue
        if table.range_key_attr is None:
            items[item_hash] = item
        else:
            items.setdefault(item_hash, {})[item_range] = item
    return items


def _query_by_partition(query):
    all_items = Table.all_items
    signature = inspect.signature(query)

    @functools.wraps(query)
    def patched(self, *args, **kwargs):
        arguments = signature.bind(self, *args, **kwargs).arguments
        items = _queried_items(self, arguments["hash_key"], arguments.get("index_name"))
        if items is None:
            return query(self, *args, **kwargs)
        # moto's query reads its candidates from `all_items()`, the table's items sorted by key,
        # and filters and sorts them as before: the same answer, from the partition's items only.
        # One request at a time, so shadowing the method on the table for this call is safe.
        part = types.SimpleNamespace(items=items, range_key_attr=self.range_key_attr)
        self.all_items = lambda: all_items(part)
        try:
            return query(self, *args, **kwargs)
        finally:
            del self.all_items

    return patched


_reindex_writes()
Table.query = _query_by_partition(Table.query)

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
FEATURES = b'{"transactWriteUndoByItem": true, "sqsSendWithoutCountingMessages": true, "streamsWithoutCancelledWrites": true, "queryByPartition": true}'


def app(environ, start_response):
    if environ.get("PATH_INFO") == FEATURES_PATH:
        start_response("200 OK", [("Content-Type", "application/json")])
        return [FEATURES]
    return moto_app(environ, start_response)


if __name__ == "__main__":
    host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    run_simple(host, port, app, threaded=False, processes=1)
