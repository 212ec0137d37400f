"""Tests of scripts/moto_server.py's queries by partition, run by `make test`:

    .venv/bin/python -m unittest discover -s scripts -p 'test_*.py'

moto's Query sorts the whole table; the server's answers it from the queried partition only, and
an index query from the keys it keeps by the index's hash key. Every answer must be stock moto's:
a seeded run of random writes (puts, updates that set and remove index keys, deletes,
transactions, some cancelled, batch writes, PartiQL, a table dropped and made again, an index
added, a table restored from a backup) is queried through both, page by page, both ways, with
limits, key conditions and filters, on tables shaped like ours (pk/sk, gsi1 and gsi2 projecting
ALL, a stream) and on others (an LSI, a GSI without a range key, a table without one).

`QueryTimingTest` prints what a table query and an index query cost with and without the patch
on a table of MOTO_QUERY_TIMING_ITEMS items, only when that is set (make bench); it asserts only
the answers.
"""

import contextlib
import os
import random
import statistics
import sys
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import boto3  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from moto import mock_aws  # noqa: E402
from moto.dynamodb.models import dynamodb_backends  # noqa: E402
from moto.dynamodb.models.dynamo_type import DynamoType, Item  # noqa: E402
from moto.dynamodb.models.table import Table  # noqa: E402

import moto_server  # noqa: E402

REGION = "us-east-1"
ACCOUNT = "123456789012"

PKS = ["T#1#TASK#a", "T#1#TASK#b", "T#2#TASK#a", "DIALER"]
SKS = [f"C#{i:03d}" for i in range(50)]
FLAT_PKS = [f"C#{i:03d}" for i in range(50)]
GSI1PKS = ["RUN#00", "RUN#01", "RUN#02"]
GSI1SKS = [f"T#{i % 3}#{i:02d}" for i in range(30)]
GSI2PKS = ["FLY#00", "FLY#01"]
GSI2SKS = [f"{i:03d}" for i in range(30)]
LSISKS = [f"L#{i:02d}" for i in range(20)]
STATUSES = ["RUNNING", "WAIT", "DONE"]
VALUES = {
    "gsi1pk": GSI1PKS,
    "gsi1sk": GSI1SKS,
    "gsi2pk": GSI2PKS,
    "gsi2sk": GSI2SKS,
    "lsisk": LSISKS,
    "status": STATUSES,
}

# Range key conditions by key attribute: (expression on #r, values).
RANGE_CONDITIONS = {
    "sk": [
        ("begins_with(#r, :a)", ["C#01"]),
        ("#r BETWEEN :a AND :b", ["C#010", "C#035"]),
        ("#r < :a", ["C#020"]),
    ],
    "gsi1sk": [
        ("begins_with(#r, :a)", ["T#1"]),
        ("#r BETWEEN :a AND :b", ["T#0#05", "T#2#20"]),
        ("#r < :a", ["T#1#15"]),
    ],
    "gsi2sk": [
        ("begins_with(#r, :a)", ["01"]),
        ("#r BETWEEN :a AND :b", ["005", "020"]),
        ("#r < :a", ["012"]),
    ],
    "lsisk": [
        ("begins_with(#r, :a)", ["L#1"]),
        ("#r BETWEEN :a AND :b", ["L#03", "L#12"]),
        ("#r < :a", ["L#08"]),
    ],
}
FILTERS = [
    ("#f = :f", "status", {"S": "WAIT"}),
    ("attribute_exists(#f)", "gsi1pk", None),
    ("#f > :f", "n", {"N": "2"}),
]


def s(value):
    return {"S": value}


def key_schema(hash_attr, range_attr=None):
    keys = [{"AttributeName": hash_attr, "KeyType": "HASH"}]
    if range_attr:
        keys.append({"AttributeName": range_attr, "KeyType": "RANGE"})
    return keys


def definitions(*attrs):
    return [{"AttributeName": a, "AttributeType": "S"} for a in attrs]


def gsi(name, hash_attr, range_attr=None, projection=None):
    return {
        "IndexName": name,
        "KeySchema": key_schema(hash_attr, range_attr),
        "Projection": projection or {"ProjectionType": "ALL"},
    }


# name: (create_table arguments, table hash values, {index: (hash attr, range attr, values)})
TABLES = {
    # Ours (template.yaml, local/src/provision.rs).
    "main": (
        dict(
            AttributeDefinitions=definitions("pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"),
            KeySchema=key_schema("pk", "sk"),
            GlobalSecondaryIndexes=[
                gsi("gsi1", "gsi1pk", "gsi1sk"),
                gsi("gsi2", "gsi2pk", "gsi2sk"),
            ],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        ),
        PKS,
        {"gsi1": ("gsi1pk", "gsi1sk", GSI1PKS), "gsi2": ("gsi2pk", "gsi2sk", GSI2PKS)},
    ),
    "other": (
        dict(
            AttributeDefinitions=definitions("pk", "sk", "lsisk", "gsi1pk"),
            KeySchema=key_schema("pk", "sk"),
            LocalSecondaryIndexes=[
                gsi("lsi1", "pk", "lsisk", {"ProjectionType": "KEYS_ONLY"}),
            ],
            GlobalSecondaryIndexes=[
                gsi(
                    "gsi3",
                    "gsi1pk",
                    projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["status"]},
                ),
            ],
        ),
        PKS,
        {"lsi1": ("pk", "lsisk", PKS), "gsi3": ("gsi1pk", None, GSI1PKS)},
    ),
    "flat": (
        dict(
            AttributeDefinitions=definitions("pk", "gsi1pk", "gsi1sk"),
            KeySchema=key_schema("pk"),
            GlobalSecondaryIndexes=[gsi("gsi1", "gsi1pk", "gsi1sk")],
        ),
        FLAT_PKS,
        {"gsi1": ("gsi1pk", "gsi1sk", GSI1PKS)},
    ),
}


@contextlib.contextmanager
def stock_queries():
    """Queries answered by moto's own Table.query, as without the patch."""
    patched = Table.query
    Table.query = patched.__wrapped__
    try:
        yield
    finally:
        Table.query = patched


@contextlib.contextmanager
def counting_full_reads():
    """Counts the reads of the whole table (Table.all_items) while it lasts."""
    all_items = Table.all_items
    calls = []

    def counted(self):
        calls.append(self.name)
        return all_items(self)

    Table.all_items = counted
    try:
        yield calls
    finally:
        Table.all_items = all_items


def create_table(client, name):
    arguments, _, _ = TABLES[name]
    client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", **arguments)


class QueryEquivalenceTest(unittest.TestCase):
    SEED = 20240611
    OPERATIONS = 2000
    CHECK_EVERY = 400

    def setUp(self):
        mock = mock_aws()
        mock.start()
        self.addCleanup(mock.stop)
        self.client = boto3.client("dynamodb", region_name=REGION)
        self.rng = random.Random(self.SEED)
        for name in TABLES:
            create_table(self.client, name)
        # table name: {index: (hash attr, range attr, values)}, as the run changes them
        self.indexes = {name: dict(TABLES[name][2]) for name in TABLES}
        self.hash_values = {name: TABLES[name][1] for name in TABLES}
        self.outcomes = {}

    # ------------------------------------------------------------------ writes

    def key(self, table):
        rng = self.rng
        if table == "flat":
            return {"pk": s(rng.choice(FLAT_PKS))}
        return {"pk": s(rng.choice(PKS)), "sk": s(rng.choice(SKS))}

    def item(self, table, key=None):
        rng = self.rng
        item = dict(key or self.key(table))
        for attr, values in VALUES.items():
            if rng.random() < (0.85 if attr == "status" else 0.6):
                item[attr] = s(rng.choice(values))
        item["n"] = {"N": str(rng.randint(0, 5))}
        if rng.random() < 0.3:
            item["note"] = s("x" * rng.randint(1, 300))
        return item

    def table(self):
        return self.rng.choice(["main", "main", "other", "flat"])

    def put(self):
        table = self.table()
        extra = {}
        if self.rng.random() < 0.2:
            extra["ConditionExpression"] = "attribute_not_exists(pk)"
        self.client.put_item(TableName=table, Item=self.item(table), **extra)

    def update_expression(self, table):
        """(UpdateExpression, names, values) setting, removing and adding random attributes."""
        rng = self.rng
        attrs = rng.sample(list(VALUES) + ["n"], rng.randint(1, 4))
        sets, removes, adds, names, values = [], [], [], {}, {}
        for i, attr in enumerate(attrs):
            names[f"#a{i}"] = attr
            if attr == "n":
                adds.append(f"#a{i} :v{i}")
                values[f":v{i}"] = {"N": "1"}
            elif rng.random() < 0.35:
                removes.append(f"#a{i}")
            else:
                sets.append(f"#a{i} = :v{i}")
                values[f":v{i}"] = s(rng.choice(VALUES[attr]))
        clauses = []
        if sets:
            clauses.append("SET " + ", ".join(sets))
        if removes:
            clauses.append("REMOVE " + ", ".join(removes))
        if adds:
            clauses.append("ADD " + ", ".join(adds))
        return " ".join(clauses), names, values

    def update(self):
        table = self.table()
        expression, names, values = self.update_expression(table)
        extra = {}
        if self.rng.random() < 0.2:
            extra["ConditionExpression"] = "attribute_exists(pk)"
        if values:
            extra["ExpressionAttributeValues"] = values
        self.client.update_item(
            TableName=table,
            Key=self.key(table),
            UpdateExpression=expression,
            ExpressionAttributeNames=names,
            **extra,
        )

    def update_by_attribute_updates(self):
        table = self.table()
        attr = self.rng.choice(["gsi1pk", "gsi2pk", "gsi2sk"])
        if self.rng.random() < 0.4:
            update = {"Action": "DELETE"}
        else:
            update = {"Action": "PUT", "Value": s(self.rng.choice(VALUES[attr]))}
        self.client.update_item(
            TableName=table, Key=self.key(table), AttributeUpdates={attr: update}
        )

    def delete(self):
        table = self.table()
        extra = {}
        if self.rng.random() < 0.3:
            extra = dict(
                ConditionExpression="#s = :s",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":s": s(self.rng.choice(STATUSES))},
            )
        self.client.delete_item(TableName=table, Key=self.key(table), **extra)

    def transact(self):
        rng = self.rng
        actions, seen = [], set()
        fail = rng.random() < 0.4
        for _ in range(rng.randint(2, 6)):
            table = self.table()
            key = self.key(table)
            marker = (table, str(sorted((k, v["S"]) for k, v in key.items())))
            if marker in seen:
                continue
            seen.add(marker)
            kind = rng.choice(["Put", "Update", "Delete", "ConditionCheck"])
            if kind == "Put":
                actions.append({"Put": {"TableName": table, "Item": self.item(table, key)}})
            elif kind == "Update":
                expression, names, values = self.update_expression(table)
                update = {
                    "TableName": table,
                    "Key": key,
                    "UpdateExpression": expression,
                    "ExpressionAttributeNames": names,
                }
                if values:
                    update["ExpressionAttributeValues"] = values
                actions.append({"Update": update})
            elif kind == "Delete":
                actions.append({"Delete": {"TableName": table, "Key": key}})
            else:
                actions.append(
                    {
                        "ConditionCheck": {
                            "TableName": table,
                            "Key": key,
                            "ConditionExpression": "attribute_exists(pk)",
                        }
                    }
                )
        if fail:
            # Last, so that the actions before it are applied, then rolled back.
            table = self.table()
            key = self.key(table)
            marker = (table, str(sorted((k, v["S"]) for k, v in key.items())))
            if marker not in seen:
                actions.append(
                    {
                        "ConditionCheck": {
                            "TableName": table,
                            "Key": key,
                            "ConditionExpression": "#s = :never",
                            "ExpressionAttributeNames": {"#s": "status"},
                            "ExpressionAttributeValues": {":never": s("NEVER")},
                        }
                    }
                )
        self.client.transact_write_items(TransactItems=actions)

    def batch_write(self):
        rng = self.rng
        requests = {}
        seen = set()
        for _ in range(rng.randint(1, 25)):
            table = self.table()
            key = self.key(table)
            marker = (table, str(sorted((k, v["S"]) for k, v in key.items())))
            if marker in seen:
                continue
            seen.add(marker)
            if rng.random() < 0.7:
                request = {"PutRequest": {"Item": self.item(table, key)}}
            else:
                request = {"DeleteRequest": {"Key": key}}
            requests.setdefault(table, []).append(request)
        self.client.batch_write_item(RequestItems=requests)

    def partiql(self):
        rng = self.rng
        table = self.table()
        key = self.key(table)
        where = " AND ".join(f"{k}='{v['S']}'" for k, v in key.items())
        kind = rng.choice(["set", "remove", "insert", "delete"])
        if kind == "set":
            statement = (
                f"UPDATE \"{table}\" SET gsi1pk='{rng.choice(GSI1PKS)}', "
                f"gsi1sk='{rng.choice(GSI1SKS)}' WHERE {where}"
            )
        elif kind == "remove":
            attr = rng.choice(["gsi1pk", "gsi1sk"])
            statement = f"UPDATE \"{table}\" REMOVE {attr} WHERE {where}"
        elif kind == "insert":
            values = dict(key, gsi1pk=s(rng.choice(GSI1PKS)), gsi1sk=s(rng.choice(GSI1SKS)))
            document = ", ".join(f"'{k}': '{v['S']}'" for k, v in values.items())
            statement = f"INSERT INTO \"{table}\" VALUE {{{document}}}"
        else:
            statement = f"DELETE FROM \"{table}\" WHERE {where}"
        self.client.execute_statement(Statement=statement)

    def operate(self, step):
        if step == 800:
            # Dropped and made again: nothing of the old table's indexes may remain.
            self.client.delete_table(TableName="main")
            create_table(self.client, "main")
            return
        if step == 1200:
            # An index added to a table with items: built from them on its first query.
            self.client.update_table(
                TableName="other",
                AttributeDefinitions=definitions("pk", "sk", "lsisk", "gsi1pk", "gsi2pk", "gsi2sk"),
                GlobalSecondaryIndexUpdates=[
                    {"Create": gsi("gsi4", "gsi2pk", "gsi2sk", {"ProjectionType": "KEYS_ONLY"})}
                ],
            )
            self.indexes["other"]["gsi4"] = ("gsi2pk", "gsi2sk", GSI2PKS)
            return
        if step == 1600:
            backup = self.client.create_backup(TableName="main", BackupName="backup")
            self.client.restore_table_from_backup(
                TargetTableName="restored", BackupArn=backup["BackupDetails"]["BackupArn"]
            )
            self.indexes["restored"] = {"gsi1": ("gsi1pk", "gsi1sk", GSI1PKS)}
            self.hash_values["restored"] = PKS
            return
        operation = self.rng.choices(
            [
                self.put,
                self.update,
                self.update_by_attribute_updates,
                self.delete,
                self.transact,
                self.batch_write,
                self.partiql,
            ],
            weights=[30, 30, 5, 12, 12, 6, 5],
        )[0]
        try:
            operation()
            outcome = "ok"
        except ClientError as error:
            outcome = error.response["Error"]["Code"]
        self.outcomes.setdefault(operation.__name__, {}).setdefault(outcome, 0)
        self.outcomes[operation.__name__][outcome] += 1

    # ----------------------------------------------------------------- queries

    def variant(self, table, index, hash_attr, range_attr, hash_value, plain):
        """Query arguments for one hash value: plain, or with random options."""
        rng = self.rng
        names = {"#h": hash_attr}
        values = {":h": s(hash_value)}
        condition = "#h = :h"
        params = {"TableName": table}
        if index:
            params["IndexName"] = index
        if not plain:
            if range_attr and rng.random() < 0.6:
                expression, operands = rng.choice(RANGE_CONDITIONS[range_attr])
                names["#r"] = range_attr
                for name, operand in zip([":a", ":b"], operands):
                    values[name] = s(operand)
                condition += " AND " + expression
            if rng.random() < 0.5:
                params["ScanIndexForward"] = False
            if rng.random() < 0.6:
                params["Limit"] = rng.choice([1, 2, 4, 9])
            if rng.random() < 0.4:
                expression, attr, operand = rng.choice(FILTERS)
                params["FilterExpression"] = expression
                names["#f"] = attr
                if operand is not None:
                    values[":f"] = operand
            if rng.random() < 0.15:
                params["ProjectionExpression"] = "pk, #h, note"
            elif rng.random() < 0.1:
                params["Select"] = "COUNT"
        params.update(
            KeyConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
        )
        return params

    def pages(self, params):
        """Every page of the query's answer, or the error it gets."""
        params = dict(params)
        pages = []
        try:
            while len(pages) < 500:
                page = self.client.query(**params)
                page.pop("ResponseMetadata", None)
                pages.append(page)
                if "LastEvaluatedKey" not in page:
                    break
                params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        except ClientError as error:
            pages.append(("error", error.response["Error"]))
        return pages

    def check_queries(self):
        checked = 0
        for table, indexes in self.indexes.items():
            families = [(None, "pk", "sk" if table != "flat" else None, self.hash_values[table])]
            families += [(index, *spec) for index, spec in indexes.items()]
            for index, hash_attr, range_attr, hash_values in families:
                if len(hash_values) > 10:
                    hash_values = self.rng.sample(hash_values, 8)
                for hash_value in list(hash_values) + ["MISSING"]:
                    for plain in (True, False):
                        params = self.variant(
                            table, index, hash_attr, range_attr, hash_value, plain
                        )
                        with stock_queries():
                            expected = self.pages(params)
                        with counting_full_reads() as full_reads:
                            actual = self.pages(params)
                        self.assertEqual(actual, expected, params)
                        self.assertEqual(full_reads, [], params)
                        checked += 1
        return checked

    def test_queries_answer_as_stock_moto(self):
        checked = 0
        for step in range(self.OPERATIONS):
            self.operate(step)
            if (step + 1) % self.CHECK_EVERY == 0:
                checked += self.check_queries()
        checked += self.check_queries()
        # The run did what it is meant to: writes of every kind went through, and some failed.
        for name in ("put", "update", "update_by_attribute_updates", "delete", "transact",
                     "batch_write", "partiql"):
            self.assertIn("ok", self.outcomes.get(name, {}), (name, self.outcomes))
        self.assertIn("TransactionCanceledException", self.outcomes["transact"])
        self.assertIn("ConditionalCheckFailedException", self.outcomes["put"])
        self.assertGreater(checked, 400)

    def test_index_keys_follow_every_write(self):
        """The kept keys of each index equal keys built afresh from the items, after each write."""
        backend = dynamodb_backends[ACCOUNT][REGION]
        for table, indexes in self.indexes.items():
            for index, (hash_attr, _, values) in indexes.items():
                self.client.query(  # builds the index's keys
                    TableName=table,
                    IndexName=index,
                    KeyConditionExpression="#h = :h",
                    ExpressionAttributeNames={"#h": hash_attr},
                    ExpressionAttributeValues={":h": s(values[0])},
                )
        for step in range(1, 400):  # not the steps that drop or add tables and indexes
            self.operate(step)
            for name, indexes in self.indexes.items():
                table = backend.get_table(name)
                indexed = moto_server._indexed_keys(table)
                self.assertIsNotNone(indexed, (step, name))
                self.assertEqual(
                    set(indexed.by_attr), {attr for attr, _, _ in indexes.values()}, (step, name)
                )
                for attr, kept in indexed.by_attr.items():
                    fresh = moto_server._KeysByValue(attr)
                    for key, item in moto_server._stored_items(table):
                        fresh.update(key, item)
                    self.assertEqual(dict(kept.keys), dict(fresh.keys), (step, name, attr))
                    self.assertEqual(kept.value_of, fresh.value_of, (step, name, attr))


@unittest.skipUnless(
    os.environ.get("MOTO_QUERY_TIMING_ITEMS"),
    "a measurement (make bench): set MOTO_QUERY_TIMING_ITEMS to the table's size",
)
class QueryTimingTest(unittest.TestCase):
    """Prints a table query's and an index query's cost with and without the patch."""

    ITEMS = int(os.environ.get("MOTO_QUERY_TIMING_ITEMS") or "100000")

    def setUp(self):
        mock = mock_aws()
        mock.start()
        self.addCleanup(mock.stop)
        create_table(boto3.client("dynamodb", region_name=REGION), "main")
        self.backend = dynamodb_backends[ACCOUNT][REGION]
        table = self.backend.get_table("main")
        # Straight into the table's storage: a few times faster than moto's put_item, which sizes
        # the whole item again for each attribute, and without a stream record each. 40 items a
        # task; one in 25 in one of gsi1's 100 RUN# partitions, one in 10 in one of gsi2's 100
        # FLY# partitions.
        for i in range(self.ITEMS):
            attrs = {
                "pk": s(f"T#1#TASK#{i // 40:06d}"),
                "sk": s(f"C#{i:07d}"),
                "status": s("WAIT"),
                "phone": s("+15550000000"),
                "n": {"N": str(i % 7)},
            }
            if i % 25 == 0:
                attrs["gsi1pk"] = s(f"RUN#{(i // 25) % 100:02d}")
                attrs["gsi1sk"] = s(f"T#1#{i:07d}")
            if i % 10 == 0:
                attrs["gsi2pk"] = s(f"FLY#{(i // 10) % 100:02d}")
                attrs["gsi2sk"] = s(f"{i:07d}")
            item = Item(DynamoType(attrs["pk"]), DynamoType(attrs["sk"]), {})
            item.attrs.update((k, DynamoType(v)) for k, v in attrs.items())
            table.items[item.hash_key][item.range_key] = item

    def query(self, hash_value, index_name=None):
        return self.backend.query(
            "main", s(hash_value), None, [], None, None, True, None, index_name=index_name
        )

    def timed(self, runs, query):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            answer = query()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000, answer

    def test_print_query_costs(self):
        cases = [
            ("table query", lambda: self.query("T#1#TASK#000100")),
            ("gsi1 query", lambda: self.query("RUN#10", "gsi1")),
            ("gsi2 query", lambda: self.query("FLY#10", "gsi2")),
        ]
        lines = [
            f"\nmoto Query at {self.ITEMS} items, median ms "
            "(first: the first patched query, which for an index builds its keys):"
        ]
        for label, query in cases:
            first, _ = self.timed(1, query)
            patched, answer = self.timed(15, query)
            with stock_queries():
                stock, expected = self.timed(3, query)
            self.assertEqual(answer, expected)
            self.assertTrue(answer[0])
            lines.append(
                f"  {label} ({len(answer[0])} items): stock {stock:.1f}, "
                f"patched {patched:.2f} (first {first:.1f})"
            )
        print("\n".join(lines), file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
