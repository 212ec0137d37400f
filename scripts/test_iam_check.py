"""Tests of the least-privilege check itself (scripts/iam_check.py), run by `make test`:

    .venv/bin/python -m unittest discover -s scripts -p 'test_*.py'

It must fail on a role that lacks an action the code performs (the exporter without PutItem and
DeleteItem, as the template had it), on one that lacks what Lambda does with it for an event
source, and on a name it cannot place; it must read SAM's policy templates as SAM expands them.
And, both ways (D29), on each mistake seeded here: a statement whose dynamodb:LeadingKeys
condition excludes a recorded prefix, or that a line without keys cannot prove; a condition it
cannot evaluate; a function no test ran; a statement no test exercised (but not when the
allow-list names it with a reason; a stale entry fails); a role granting a write prefix its
function never writes.
"""

import copy
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import iam_check  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/Table"

# What the exporter's code does to settle a job (recorded names of a local stack), with the
# leading key prefixes of its requests.
NAMES = {"TABLE_NAME": {"t-local"}, "BUCKET_NAME": {"b-local"}}
TENANT = ("T#",)
EXPORTER_SETTLES = {
    ("exporter", "dynamodb:GetItem", "table/t-local", TENANT),
    ("exporter", "dynamodb:Query", "table/t-local", TENANT),
    ("exporter", "dynamodb:UpdateItem", "table/t-local", TENANT),
    ("exporter", "dynamodb:PutItem", "table/t-local", TENANT),
    ("exporter", "dynamodb:DeleteItem", "table/t-local", TENANT),
    ("exporter", "s3:PutObject", "bucket/b-local/exports/*", None),
}
# The statement each small role below has for its function's logs, which Lambda writes.
ROOT_LOGS = {"Sid": "Logs", "Effect": "Allow",
             "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
             "Resource": "*"}


def sam(resources):
    """A small SAM template: a table, a queue and `resources`."""
    return {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "Table": {"Type": "AWS::DynamoDB::Table", "Properties": {}},
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {}},
            **resources,
        },
    }


def function(binary, **properties):
    return {
        "Type": "AWS::Serverless::Function",
        "Metadata": {"BuildProperties": {"Binary": binary}},
        "Properties": {
            "CodeUri": ".",
            "Handler": "bootstrap",
            "Runtime": "provided.al2023",
            "Environment": {"Variables": {"TABLE_NAME": {"Ref": "Table"}}},
            **properties,
        },
    }


def role(*statements):
    """A role of the stack with `statements` (and its function's logs)."""
    return {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": {},
            "Policies": [{"PolicyName": "p", "PolicyDocument": {
                "Statement": [ROOT_LOGS, *statements],
            }}],
        },
    }


def with_roles(roles):
    """A template of functions, by binary, each with a role of the statements given."""
    resources = {}
    for binary, statements in roles.items():
        logical = "".join(part.title() for part in binary.split("-"))
        resources[f"{logical}Role"] = role(*statements)
        resources[logical] = function(binary, Role={"Fn::GetAtt": [f"{logical}Role", "Arn"]})
    return sam(resources)


def table_statement(sid, actions, *leading, operator="ForAllValues:StringLike"):
    statement = {"Sid": sid, "Effect": "Allow", "Action": actions,
                 "Resource": {"Fn::GetAtt": ["Table", "Arn"]}}
    if leading:
        statement["Condition"] = {operator: {"dynamodb:LeadingKeys": list(leading)}}
    return statement


def findings(template, accesses, names=None, allowlist=()):
    return iam_check.check(iam_check.Stack(template), accesses, NAMES if names is None else names,
                           allowlist)


def denied_lines(template, accesses, names):
    found = findings(template, accesses, names)
    return [(f, a, r) for f, a, r, *_ in found.denied], found.unplaced


class TheTemplate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.template = iam_check.load_template(ROOT / "template.yaml")

    def exporter_table_statements(self, template):
        stack = iam_check.Stack(template)
        role_id = stack.role_of("ExporterFunction")
        statements = []
        for policy in template["Resources"][role_id]["Properties"].get("Policies", []):
            statements += policy["PolicyDocument"]["Statement"]
        return [s for s in statements if "dynamodb:UpdateItem" in iam_check.as_list(s["Action"])]

    def test_the_exporter_may_settle_its_jobs(self):
        denied, unplaced = denied_lines(self.template, EXPORTER_SETTLES, NAMES)
        self.assertEqual(unplaced, [])
        self.assertEqual([d for d in denied if d[0] == "exporter"], [])

    def test_an_exporter_without_put_and_delete_is_refused_them(self):
        template = copy.deepcopy(self.template)
        statements = self.exporter_table_statements(template)
        self.assertTrue(statements, "the exporter's role has a statement on the table")
        for statement in statements:
            statement["Action"] = ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:UpdateItem"]
        denied, _ = denied_lines(template, EXPORTER_SETTLES, NAMES)
        self.assertEqual(
            sorted(d for d in denied if d[0] == "exporter"),
            [
                ("exporter", "dynamodb:DeleteItem", TABLE),
                ("exporter", "dynamodb:PutItem", TABLE),
            ],
        )

    def test_each_role_writes_only_the_key_prefixes_its_function_writes(self):
        """The template's LeadingKeys conditions (D29), as the keys of store/keys.rs: T# the
        tenants' items, CID# caller ID guards, RECLAIM# reclaim intents, CALL# call records,
        DIALER (and DIALER#n) the service's dialing counters, OPERATOR# an operator's request
        rate."""
        put, update, delete, batch = iam_check.WRITE_ACTIONS
        expected = {
            "datasource-api": {put: {"T#", "CID#", "RECLAIM#"}, update: {"T#", "OPERATOR#"},
                               delete: {"T#", "CID#"}},
            "task-api": {put: {"T#", "RECLAIM#"}, update: {"T#"}, delete: {"T#"}},
            "contact-import": {put: {"T#"}, update: {"T#"}, delete: {"T#"}},
            "exporter": {put: {"T#"}, update: {"T#"}, delete: {"T#"}},
            "reclaim": {delete: {"RECLAIM#"}, batch: {"T#"}},
            "dialer-tick": {update: {"T#"}},
            "dialer": {put: {"T#"}, update: {"T#", "CALL#", "DIALER", "DIALER#"},
                       delete: {"T#"}},
            "call-events": {put: {"T#"}, update: {"T#", "CALL#", "DIALER", "DIALER#"},
                            delete: {"T#"}},
            "flow-results": {put: {"CALL#"}, update: {"CALL#"}},
            "event-publisher": {},
        }
        prefixes = ["T#", "CID#", "RECLAIM#", "CALL#", "DIALER", "DIALER#", "OPERATOR#", "OTHER#"]
        stack = iam_check.Stack(self.template)
        self.assertEqual(set(stack.functions), set(expected))
        for function, writes in expected.items():
            _, statements = stack.statements(stack.functions[function])
            for action in iam_check.WRITE_ACTIONS:
                granted = {p for p in prefixes if iam_check.allowed(statements, action, TABLE, (p,))}
                self.assertEqual(granted, writes.get(action, set()), f"{function} {action}")

    def test_after_sams_transform_each_role_is_the_functions_own_with_no_policy_of_aws(self):
        stack = iam_check.Stack(self.template)
        roles = {stack.role_of(logical_id) for logical_id in stack.functions.values()}
        self.assertEqual(len(roles), len(stack.functions))
        for role in roles:
            for arn in stack.resources[role]["Properties"].get("ManagedPolicyArns", []):
                self.assertIn("Ref", arn, f"{role}: only the stack's own policies")


class Translation(unittest.TestCase):
    def test_policy_templates_are_expanded_as_sam_does(self):
        read = sam({"Reader": function("reader", Policies=[
            {"DynamoDBReadPolicy": {"TableName": {"Ref": "Table"}}},
        ])})
        writes = {("reader", "dynamodb:PutItem", "table/t-local"),
                  ("reader", "dynamodb:GetItem", "table/t-local")}
        denied, _ = denied_lines(read, writes, NAMES)
        self.assertEqual(denied, [("reader", "dynamodb:PutItem", TABLE)])
        crud = sam({"Reader": function("reader", Policies=[
            {"DynamoDBCrudPolicy": {"TableName": {"Ref": "Table"}}},
        ])})
        self.assertEqual(denied_lines(crud, writes, NAMES), ([], []))

    def test_an_sqs_event_source_needs_receive_and_delete_on_its_queue(self):
        role = {
            "Type": "AWS::IAM::Role",
            "Properties": {
                "AssumeRolePolicyDocument": {},
                "Policies": [{"PolicyName": "p", "PolicyDocument": {"Statement": [
                    {"Effect": "Allow", "Action": "logs:*",
                     "Resource": "*"},
                    {"Effect": "Allow", "Action": "sqs:ReceiveMessage",
                     "Resource": {"Fn::GetAtt": ["Queue", "Arn"]}},
                ]}}],
            },
        }
        template = sam({
            "WorkerRole": role,
            "Worker": function("worker", Role={"Fn::GetAtt": ["WorkerRole", "Arn"]}, Events={
                "Jobs": {"Type": "SQS", "Properties": {"Queue": {"Fn::GetAtt": ["Queue", "Arn"]}}},
            }),
        })
        denied, _ = denied_lines(template, set(), NAMES)
        queue = "arn:aws:sqs:us-east-1:123456789012:Queue"
        self.assertEqual(sorted(denied), [
            ("worker", "sqs:DeleteMessage", queue),
            ("worker", "sqs:GetQueueAttributes", queue),
        ])

    def test_a_name_no_variable_gives_is_not_placed(self):
        template = sam({"Reader": function("reader", Policies=[
            {"DynamoDBCrudPolicy": {"TableName": {"Ref": "Table"}}},
        ])})
        denied, unplaced = denied_lines(
            template, {("reader", "dynamodb:GetItem", "table/elsewhere")}, NAMES
        )
        self.assertEqual(denied, [])
        self.assertEqual([u[:3] for u in unplaced],
                         [("reader", "dynamodb:GetItem", "table/elsewhere")])


    def test_a_name_a_test_declared_absent_is_left_out(self):
        import json
        import tempfile
        lines = [
            {"names": {"TABLE_NAME": "t-1"}},
            {"absent": ["no-such-table"]},
            {"function": "reader", "action": "dynamodb:UpdateItem",
             "resource": "table/no-such-table", "keys": ["T#"]},
            {"function": "reader", "action": "dynamodb:GetItem", "resource": "table/t-1",
             "keys": ["T#"]},
        ]
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "actions.jsonl"
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            accesses, names = iam_check.read_log(path)
        self.assertEqual(accesses, {("reader", "dynamodb:GetItem", "table/t-1", ("T#",))})
        self.assertEqual(names, {"TABLE_NAME": {"t-1"}})


class Matching(unittest.TestCase):
    def test_wildcards_and_an_explicit_deny(self):
        statements = [
            {"Effect": "Allow", "Action": "dynamodb:*Item", "Resource": f"{TABLE}*"},
            {"Effect": "Deny", "Action": "dynamodb:DeleteItem", "Resource": f"{TABLE}/index/*"},
        ]
        self.assertTrue(iam_check.allowed(statements, "dynamodb:PutItem", TABLE))
        self.assertTrue(iam_check.allowed(statements, "dynamodb:DeleteItem", TABLE))
        self.assertFalse(iam_check.allowed(statements, "dynamodb:DeleteItem", f"{TABLE}/index/g"))
        self.assertFalse(iam_check.allowed(statements, "dynamodb:Query", TABLE))


class LeadingKeys(unittest.TestCase):
    """Conditions on dynamodb:LeadingKeys, as IAM reads them, of recorded key prefixes."""

    def test_a_condition_that_excludes_a_recorded_prefix_denies_it(self):
        template = with_roles({"flow-results": [
            table_statement("CallRecords", "dynamodb:UpdateItem", "CALL#*"),
        ]})
        call = ("flow-results", "dynamodb:UpdateItem", "table/t-local", ("CALL#",))
        self.assertEqual(findings(template, {call}).failures(), 0)
        for keys in [("T#",), ("CALL#", "T#")]:
            tenant = ("flow-results", "dynamodb:UpdateItem", "table/t-local", keys)
            found = findings(template, {call, tenant})
            self.assertEqual([(d[1], d[3]) for d in found.denied],
                             [("dynamodb:UpdateItem", keys)])
            self.assertIn("excludes", found.denied[0][4])

    def test_a_line_without_keys_proves_no_condition(self):
        template = with_roles({"flow-results": [
            table_statement("CallRecords", "dynamodb:UpdateItem", "CALL#*"),
        ]})
        found = findings(template, {("flow-results", "dynamodb:UpdateItem", "table/t-local", None)})
        self.assertEqual(len(found.denied), 1)
        self.assertIn("no keys", found.denied[0][4])
        # Nor is the statement exercised by it.
        self.assertEqual([u[:2] for u in found.unexercised], [("flow-results", "CallRecords")])

    def test_a_prefix_stands_for_every_key_beginning_with_it(self):
        def allows(patterns, keys, operator="ForAllValues:StringLike"):
            statement = table_statement("S", "dynamodb:PutItem", *patterns, operator=operator)
            statement["Resource"] = TABLE
            return iam_check.allowed([statement], "dynamodb:PutItem", TABLE, keys)

        self.assertTrue(allows(["CALL#*"], ("CALL#",)))
        self.assertTrue(allows(["C*"], ("CALL#",)))
        self.assertTrue(allows(["*#*"], ("CALL#",)))
        self.assertFalse(allows(["T#acme#*"], ("T#",)), "more specific than the prefix")
        self.assertFalse(allows(["CALL#?*"], ("CALL#",)), "not the key CALL# itself")
        self.assertFalse(allows(["CALL#"], ("CALL#",)), "only the key CALL# itself")
        # A value without `#` is the whole key.
        self.assertTrue(allows(["DIALER"], ("DIALER",)))
        self.assertTrue(allows(["DIALER", "DIALER#*"], ("DIALER", "DIALER#")))
        self.assertFalse(allows(["DIALER"], ("DIALER#",)))
        self.assertTrue(allows(["DIALER"], ("DIALER",), "ForAllValues:StringEquals"))
        self.assertFalse(allows(["CALL#"], ("CALL#",), "ForAllValues:StringEquals"))
        self.assertFalse(allows(["T#*"], ("T#",), "ForAllValues:StringNotLike"))
        self.assertTrue(allows(["T#*"], ("CALL#",), "ForAllValues:StringNotLike"))
        self.assertFalse(allows(["T#acme#*"], ("T#",), "ForAllValues:StringNotLike"),
                         "some keys of T# may be T#acme#...")

    def test_for_all_values_of_no_keys_is_true_for_any_value_false(self):
        for operator, scan in [("ForAllValues:StringLike", True), ("ForAnyValue:StringLike", False)]:
            statement = table_statement("S", "dynamodb:Scan", "T#*", operator=operator)
            statement["Resource"] = TABLE
            self.assertEqual(iam_check.allowed([statement], "dynamodb:Scan", TABLE, ()), scan, operator)
        statement = table_statement("S", "dynamodb:BatchWriteItem", "T#*", operator="ForAnyValue:StringLike")
        statement["Resource"] = TABLE
        self.assertTrue(iam_check.allowed([statement], "dynamodb:BatchWriteItem", TABLE, ("CALL#", "T#")))
        statement["Condition"] = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["T#*"]}}
        self.assertFalse(iam_check.allowed([statement], "dynamodb:BatchWriteItem", TABLE, ("CALL#", "T#")))

    def test_a_deny_wins_unless_its_condition_is_disproven(self):
        allow = {"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": TABLE}
        deny = {"Effect": "Deny", "Action": "dynamodb:PutItem", "Resource": TABLE,
                "Condition": {"ForAnyValue:StringLike": {"dynamodb:LeadingKeys": ["CID#*"]}}}
        self.assertTrue(iam_check.allowed([allow, deny], "dynamodb:PutItem", TABLE, ("T#",)))
        self.assertFalse(iam_check.allowed([allow, deny], "dynamodb:PutItem", TABLE, ("CID#",)))
        self.assertFalse(iam_check.allowed([allow, deny], "dynamodb:PutItem", TABLE, None),
                         "unknown keys may be the denied ones")

    def test_a_condition_it_cannot_evaluate_allows_nothing_and_fails(self):
        statement = table_statement("Tagged", ["dynamodb:GetItem"])
        statement["Condition"] = {"StringEquals": {"aws:PrincipalTag/team": "dialing"}}
        template = with_roles({"reader": [statement]})
        found = findings(template, {("reader", "dynamodb:GetItem", "table/t-local", TENANT)})
        self.assertEqual([d[1] for d in found.denied], ["dynamodb:GetItem"])
        self.assertIn("cannot evaluate", found.denied[0][4])
        self.assertEqual(found.unevaluated,
                         [("reader", "Tagged", "StringEquals aws:PrincipalTag/team")])
        # Nor a set operator on another key, nor one on the leading keys it does not know.
        for condition in [{"ForAllValues:StringLike": {"dynamodb:Attributes": ["pk"]}},
                          {"StringLike": {"dynamodb:LeadingKeys": ["T#*"]}},
                          {"ForAllValues:StringLikeIfExists": {"dynamodb:LeadingKeys": ["T#*"]}}]:
            statement["Condition"] = condition
            self.assertEqual(len(findings(template, {
                ("reader", "dynamodb:GetItem", "table/t-local", TENANT)}).unevaluated), 1, condition)


class BothWays(unittest.TestCase):
    """What a role allows beyond what its function needed fails, but for the allow-list."""

    def test_a_function_no_test_ran_fails_unless_allow_listed(self):
        template = with_roles({
            "reader": [table_statement("Read", "dynamodb:GetItem")],
            "idle": [table_statement("Read", "dynamodb:GetItem")],
        })
        log = {("reader", "dynamodb:GetItem", "table/t-local", TENANT)}
        found = findings(template, log)
        self.assertEqual(found.not_run, [("idle",)])
        self.assertEqual(found.unexercised, [], "a function not run is reported once, as that")
        entry = {"function": "idle", "reason": "run by no test yet"}
        found = findings(template, log, allowlist=[entry])
        self.assertEqual(found.failures(), 0)
        self.assertEqual(found.excused, [("not_run", ("idle",), "run by no test yet")])
        stale = {"function": "reader", "reason": "it runs"}
        found = findings(template, log, allowlist=[entry, stale])
        self.assertEqual([s[0] for s in found.stale], [stale])

    def test_a_statement_no_test_exercised_fails_unless_allow_listed_with_a_reason(self):
        extra = {"Sid": "QueueJobs", "Effect": "Allow", "Action": "sqs:SendMessage",
                 "Resource": {"Fn::GetAtt": ["Queue", "Arn"]}}
        template = with_roles({"reader": [table_statement("Read", "dynamodb:GetItem"), extra]})
        log = {("reader", "dynamodb:GetItem", "table/t-local", TENANT)}
        found = findings(template, log)
        self.assertEqual([u[:2] for u in found.unexercised], [("reader", "QueueJobs")])
        self.assertEqual(found.failures(), 1, "Logs is exercised by Lambda's writes of its logs")
        entry = {"function": "reader", "sid": "QueueJobs", "reason": "a job no test makes"}
        self.assertEqual(findings(template, log, allowlist=[entry]).failures(), 0)
        # Without a reason, it excuses nothing.
        found = findings(template, log, allowlist=[{"function": "reader", "sid": "QueueJobs"}])
        self.assertEqual((len(found.unexercised), len(found.stale)), (1, 1))
        # A statement without a Sid, by an action and a resource of it.
        del extra["Sid"]
        template = with_roles({"reader": [table_statement("Read", "dynamodb:GetItem"), extra]})
        queue = "arn:aws:sqs:us-east-1:123456789012:Queue"
        entry = {"function": "reader", "action": "sqs:SendMessage", "resource": queue,
                 "reason": "a job no test makes"}
        self.assertEqual(findings(template, log, allowlist=[entry]).failures(), 0)

    def test_a_stale_allow_list_entry_fails(self):
        template = with_roles({"reader": [table_statement("Read", "dynamodb:GetItem")]})
        log = {("reader", "dynamodb:GetItem", "table/t-local", TENANT)}
        for entry in [
            {"function": "reader", "sid": "Read", "reason": "exercised now"},
            {"function": "reader", "sid": "Gone", "reason": "no such statement"},
            {"function": "writer", "action": "dynamodb:PutItem", "prefix": "T#", "reason": "x"},
            {"function": "reader", "sid": "Read", "note": "a key it does not know", "reason": "x"},
        ]:
            found = findings(template, log, allowlist=[entry])
            self.assertEqual([s[0] for s in found.stale], [entry])
            self.assertEqual(found.failures(), 1)

    def test_a_role_granting_a_write_prefix_its_function_never_writes_fails(self):
        writes = {
            ("flow-results", "dynamodb:UpdateItem", "table/t-local", ("CALL#",)),
            ("dialer", "dynamodb:PutItem", "table/t-local", ("CALL#",)),
            ("dialer", "dynamodb:PutItem", "table/t-local", ("T#",)),
            ("dialer", "dynamodb:GetItem", "table/t-local", ("CID#",)),
        }
        broad = with_roles({
            "flow-results": [table_statement("CallRecords", ["dynamodb:UpdateItem", "dynamodb:GetItem"])],
            "dialer": [table_statement("Dialing", ["dynamodb:PutItem", "dynamodb:GetItem"])],
        })
        found = findings(broad, writes)
        self.assertEqual(sorted((f, a, p) for f, a, _, p in found.overbroad), [
            ("dialer", "dynamodb:PutItem", "CID#"),  # read by it, never written
            ("flow-results", "dynamodb:UpdateItem", "CID#"),
            ("flow-results", "dynamodb:UpdateItem", "T#"),
        ])
        narrow = with_roles({
            "flow-results": [table_statement("CallRecords", "dynamodb:UpdateItem", "CALL#*")],
            "dialer": [table_statement("Dialing", "dynamodb:PutItem", "T#*", "CALL#*"),
                       table_statement("Reads", "dynamodb:GetItem")],
        })
        self.assertEqual(findings(narrow, writes).failures(), 0)
        entries = [
            {"function": "flow-results", "action": "dynamodb:UpdateItem", "prefix": "T#",
             "reason": "seeded"},
            {"function": "flow-results", "action": "dynamodb:UpdateItem", "prefix": "CID#",
             "reason": "seeded"},
            {"function": "dialer", "action": "dynamodb:PutItem", "prefix": "CID#",
             "reason": "seeded"},
        ]
        self.assertEqual(findings(broad, writes, allowlist=entries).failures(), 0)

    def test_connect_actions_are_placed_and_exercise_their_statement(self):
        statement = {"Sid": "ConnectCalls", "Effect": "Allow",
                     "Action": ["connect:StartOutboundVoiceContact"],
                     "Resource": [
                         {"Fn::Sub": "arn:${AWS::Partition}:connect:${AWS::Region}:${AWS::AccountId}:instance/${ConnectInstanceId}"},
                         {"Fn::Sub": "arn:${AWS::Partition}:connect:${AWS::Region}:${AWS::AccountId}:instance/${ConnectInstanceId}/*"},
                     ]}
        template = with_roles({"dialer": [statement]})
        template["Parameters"] = {"ConnectInstanceId": {"Type": "String", "Default": ""}}
        template["Resources"]["Dialer"]["Properties"]["Environment"]["Variables"][
            "CONNECT_INSTANCE_ID"] = {"Ref": "ConnectInstanceId"}
        names = {**NAMES, "CONNECT_INSTANCE_ID": {"i-local"}}
        log = {("dialer", "connect:StartOutboundVoiceContact", "connect/i-local", None)}
        self.assertEqual(findings(template, log, names).failures(), 0)
        found = findings(template, {("dialer", "connect:DescribeContact", "connect/i-local", None)}, names)
        self.assertEqual([d[1] for d in found.denied], ["connect:DescribeContact"])
        self.assertEqual([u[1] for u in found.unexercised], ["ConnectCalls"])


class TheAllowList(unittest.TestCase):
    def test_its_entries_are_well_formed_with_reasons(self):
        entries = iam_check.read_allowlist(ROOT / "scripts" / "iam_allowlist.yaml")
        for entry in entries:
            self.assertIsNotNone(iam_check._entry_kind(entry), entry)


if __name__ == "__main__":
    unittest.main()
