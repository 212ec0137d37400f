"""Tests of the least-privilege check itself (scripts/iam_check.py), run by `make test`:

    .venv/bin/python -m unittest discover -s scripts -p 'test_*.py'

It must fail on a role that lacks an action the code performs (the exporter without PutItem and
DeleteItem, as the template had it), on one that lacks what Lambda does with it for an event
source, and on a name it cannot place; it must read SAM's policy templates as SAM expands them.
And, both ways (D29, D32), on each mistake seeded here: a statement whose dynamodb:LeadingKeys
condition excludes a recorded prefix, or that a line without keys cannot prove; a condition it
cannot evaluate; a function no test ran; a statement no test exercised (but not when the
allow-list names what its code does with a reason; a stale entry fails); a role granting a write
prefix its function never writes; an action added to a statement the tests use; a resource
widened to `*` or a table's ARN to `table/*`; reads beyond what the log read; an action added to
the console's custom-resource role, whose code no test records; a Connect resource named other
than as the Service Authorization Reference names it. Today's template, as least privilege has
it, passes with a representative log; its over-grants are the ones named here.
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
QUEUE = "arn:aws:sqs:us-east-1:123456789012:Queue"


def logs_statement(logical):
    """The statement each small role below has for its function's logs, which Lambda writes:
    the log group Lambda makes for the function (named by its logical id)."""
    return {"Sid": "Logs", "Effect": "Allow",
            "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": f"arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/{logical}:*"}


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


def role(logical, *statements):
    """A role of the stack for function `logical` with `statements` (and its function's logs)."""
    return {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": {},
            "Policies": [{"PolicyName": "p", "PolicyDocument": {
                "Statement": [logs_statement(logical), *statements],
            }}],
        },
    }


def with_roles(roles):
    """A template of functions, by binary, each with a role of the statements given."""
    resources = {}
    for binary, statements in roles.items():
        logical = "".join(part.title() for part in binary.split("-"))
        resources[f"{logical}Role"] = role(logical, *statements)
        resources[logical] = function(binary, Role={"Fn::GetAtt": [f"{logical}Role", "Arn"]})
    return sam(resources)


def table_statement(sid, actions, *leading, operator="ForAllValues:StringLike"):
    statement = {"Sid": sid, "Effect": "Allow", "Action": actions,
                 "Resource": {"Fn::GetAtt": ["Table", "Arn"]}}
    if leading:
        statement["Condition"] = {operator: {"dynamodb:LeadingKeys": list(leading)}}
    return statement


def findings(template, accesses, names=None, allowlist=(), stacks=None):
    stacks = stacks or iam_check.stacks(template)
    return iam_check.check(stacks, accesses, NAMES if names is None else names, allowlist)


def failing(found):
    """Every failing finding, as (kind, who, statement or action, item)."""
    rows = set()
    for kind in iam_check.Findings.FAILING:
        for finding in getattr(found, kind):
            if kind == "stale":
                row = (iam_check._entry_text(finding[0]), finding[1], "")
            elif kind == "not_run":
                row = (finding[0], "", "")
            elif kind == "unexercised":
                row = (finding[0], finding[1], "")
            elif kind == "overbroad":
                row = (finding[0], finding[1], finding[3])
            else:  # denied, unplaced: function, action, resource; the others: who, label, item
                row = tuple(finding[:3])
            rows.add((kind, *row))
    return rows


# A representative log: what the functions' code did under the last full test run, each access
# once, with a name for each variable.
REPRESENTATIVE_LOG = """
call-events connect:GetContactAttributes connect/i-rep/contact/*
call-events dynamodb:BatchGetItem table/t-rep T#
call-events dynamodb:DeleteItem table/t-rep T#
call-events dynamodb:GetItem table/t-rep CALL#
call-events dynamodb:GetItem table/t-rep T#
call-events dynamodb:PutItem table/t-rep T#
call-events dynamodb:UpdateItem table/t-rep CALL#
call-events dynamodb:UpdateItem table/t-rep DIALER#
call-events dynamodb:UpdateItem table/t-rep DIALER
call-events dynamodb:UpdateItem table/t-rep T#
contact-import dynamodb:DeleteItem table/t-rep T#
contact-import dynamodb:GetItem table/t-rep T#
contact-import dynamodb:PutItem table/t-rep T#
contact-import dynamodb:Query table/t-rep T#
contact-import dynamodb:UpdateItem table/t-rep T#
contact-import s3:GetObject bucket/b-rep/uploads/*
contact-import s3:PutObject bucket/b-rep/results/*
datasource-api connect:DescribeContactFlow connect/i-rep/contact-flow/9e4a7c12
datasource-api connect:DescribeContactFlow connect/i-rep/contact-flow/b71d3e58
datasource-api connect:DescribeContactFlow connect/i-rep/contact-flow/c4e8a2f6
datasource-api connect:DescribeContactFlow connect/i-rep/contact-flow/f0e1d2c3
datasource-api connect:DescribeContactFlow connect/i-rep/contact-flow/unpublis
datasource-api connect:DescribeQueue connect/i-rep/queue/1b7d5e6f
datasource-api connect:DescribeQueue connect/i-rep/queue/7d3f1a2b
datasource-api connect:DescribeQueue connect/i-rep/queue/8e4a2b3c
datasource-api connect:DescribeQueue connect/i-rep/queue/9f5b3c4d
datasource-api connect:ListPhoneNumbersV2 connect/i-rep/phone-number/*
datasource-api dynamodb:BatchGetItem table/t-rep T#
datasource-api dynamodb:ConditionCheckItem table/t-rep T#
datasource-api dynamodb:DeleteItem table/t-rep CID#
datasource-api dynamodb:DeleteItem table/t-rep T#
datasource-api dynamodb:GetItem table/t-rep T#
datasource-api dynamodb:PutItem table/t-rep CID#
datasource-api dynamodb:PutItem table/t-rep RECLAIM#
datasource-api dynamodb:PutItem table/t-rep T#
datasource-api dynamodb:Query table/t-rep T#
datasource-api dynamodb:Query table/t-rep -
datasource-api dynamodb:Query table/t-rep/index/gsi1 -
datasource-api dynamodb:UpdateItem table/t-rep OPERATOR#
datasource-api dynamodb:UpdateItem table/t-rep T#
datasource-api dynamodb:UpdateItem table/t-rep UNATTRIBUTED#
datasource-api s3:GetObject bucket/b-rep/exports/*
datasource-api s3:GetObject bucket/b-rep/results/*
datasource-api s3:PutObject bucket/b-rep/exports/*
datasource-api s3:PutObject bucket/b-rep/imports/*
datasource-api s3:PutObject bucket/b-rep/results/*
datasource-api s3:PutObject bucket/b-rep/uploads/*
datasource-api sqs:SendMessage queue/q-exports
datasource-api sqs:SendMessage queue/q-reclaim
dialer connect:DescribeContact connect/i-rep/contact/*
dialer connect:GetCurrentMetricData connect/i-rep/queue/0a6c4d5e
dialer connect:GetCurrentMetricData connect/i-rep/queue/7d3f1a2b
dialer connect:GetCurrentMetricData connect/i-rep/queue/8e4a2b3c
dialer connect:StartOutboundVoiceContact connect/i-rep/contact/*
dialer dynamodb:BatchGetItem table/t-rep T#
dialer dynamodb:ConditionCheckItem table/t-rep CID#
dialer dynamodb:ConditionCheckItem table/t-rep T#
dialer dynamodb:DeleteItem table/t-rep T#
dialer dynamodb:GetItem table/t-rep CALL#
dialer dynamodb:GetItem table/t-rep DIALER
dialer dynamodb:GetItem table/t-rep T#
dialer dynamodb:PutItem table/t-rep T#
dialer dynamodb:Query table/t-rep T#
dialer dynamodb:Query table/t-rep/index/gsi1 RUN#
dialer dynamodb:Query table/t-rep/index/gsi1 T#
dialer dynamodb:UpdateItem table/t-rep CALL#
dialer dynamodb:UpdateItem table/t-rep DIALER#
dialer dynamodb:UpdateItem table/t-rep DIALER
dialer dynamodb:UpdateItem table/t-rep T#
dialer s3:GetObject bucket/b-rep/recalls/*
dialer sqs:SendMessage queue/q-call-events
dialer sqs:SendMessage queue/q-dial
dialer-tick connect:GetCurrentMetricData connect/i-rep/queue/0a6c4d5e
dialer-tick connect:GetCurrentMetricData connect/i-rep/queue/7d3f1a2b
dialer-tick connect:GetCurrentMetricData connect/i-rep/queue/8e4a2b3c
dialer-tick dynamodb:BatchGetItem table/t-rep T#
dialer-tick dynamodb:Query table/t-rep/index/gsi1 RUN#
dialer-tick dynamodb:Query table/t-rep/index/gsi1 T#
dialer-tick dynamodb:Query table/t-rep/index/gsi2 FLY#
dialer-tick dynamodb:PutItem table/t-rep T#
dialer-tick dynamodb:Query table/t-rep T#
dialer-tick dynamodb:UpdateItem table/t-rep T#
dialer-tick sqs:SendMessage queue/q-dial
event-publisher events:PutEvents event-bus/bus-rep
event-publisher sqs:SendMessage queue/q-dead-letters
exporter dynamodb:BatchGetItem table/t-rep T#
exporter dynamodb:DeleteItem table/t-rep T#
exporter dynamodb:GetItem table/t-rep T#
exporter dynamodb:PutItem table/t-rep T#
exporter dynamodb:Query table/t-rep T#
exporter dynamodb:UpdateItem table/t-rep T#
exporter s3:PutObject bucket/b-rep/exports/*
flow-results dynamodb:ConditionCheckItem table/t-rep T#
flow-results dynamodb:PutItem table/t-rep CALL#
flow-results dynamodb:UpdateItem table/t-rep CALL#
reclaim dynamodb:BatchWriteItem table/t-rep T#
reclaim dynamodb:DeleteItem table/t-rep RECLAIM#
reclaim dynamodb:GetItem table/t-rep T#
reclaim dynamodb:Query table/t-rep RECLAIM#
reclaim dynamodb:Query table/t-rep T#
reclaim sqs:SendMessage queue/q-reclaim
task-api dynamodb:BatchGetItem table/t-rep T#
task-api dynamodb:ConditionCheckItem table/t-rep T#
task-api dynamodb:DeleteItem table/t-rep T#
task-api dynamodb:GetItem table/t-rep T#
task-api dynamodb:PutItem table/t-rep RECLAIM#
task-api dynamodb:PutItem table/t-rep T#
task-api dynamodb:Query table/t-rep T#
task-api dynamodb:Query table/t-rep -
task-api dynamodb:Query table/t-rep/index/gsi1 T#
task-api dynamodb:UpdateItem table/t-rep T#
task-api dynamodb:UpdateItem table/t-rep UNATTRIBUTED#
task-api s3:PutObject bucket/b-rep/exports/*
task-api s3:PutObject bucket/b-rep/recalls/*
task-api sqs:SendMessage queue/q-dial
task-api sqs:SendMessage queue/q-exports
task-api sqs:SendMessage queue/q-reclaim
"""
REPRESENTATIVE_NAMES = {
    "TABLE_NAME": {"t-rep"}, "BUCKET_NAME": {"b-rep"}, "DIAL_QUEUE_URL": {"q-dial"},
    "CALL_EVENTS_QUEUE_URL": {"q-call-events"}, "EXPORT_QUEUE_URL": {"q-exports"},
    "RECLAIM_QUEUE_URL": {"q-reclaim"}, "IMPORT_QUEUE_URL": {"q-imports"},
    "EVENT_BUS_NAME": {"bus-rep"}, "EVENT_DEAD_LETTER_QUEUE_URL": {"q-dead-letters"},
    "CONNECT_INSTANCE_ID": {"i-rep"},
}


def representative_log(stack=None):
    """REPRESENTATIVE_LOG as `read_log` reads a log: (function, action, resource, keys), keys
    none (no field), `-` (no keys) or the prefixes; and, with the stack, each function's reads
    of the secrets its environment names (at cold start), with their names."""
    accesses, names = set(), {**REPRESENTATIVE_NAMES}
    for line in REPRESENTATIVE_LOG.strip().splitlines():
        function, action, resource, *keys = line.split()
        keys = None if not keys else () if keys == ["-"] else tuple(sorted(keys[0].split(",")))
        accesses.add((function, action, resource, keys))
    for function, logical_id in (stack.functions.items() if stack else ()):
        variables = stack.resources[logical_id]["Properties"].get("Environment", {}).get("Variables", {})
        for variable, value in variables.items():
            target = value.get("Ref") if isinstance(value, dict) else None
            if stack.resources.get(target, {}).get("Type") == "AWS::SecretsManager::Secret":
                arn = f"arn:aws:secretsmanager:us-east-1:000000000000:secret:rep-{target}-a1b2c3"
                names[variable] = {arn}
                accesses.add((function, "secretsmanager:GetSecretValue", f"secret/{arn}", None))
    return accesses, names


# What today's template allows that its functions' code never asks for, found with the
# representative log (not allow-listed: no code path asks for them): contact-import has the
# API functions' TableReadPolicy (BatchGetItem, ConditionCheckItem, a query of the indexes);
# call-events has DescribeContact, which only the dialer's reconcile jobs call.
def statements_by_sid(template, sid, owner, required=True):
    """The statements with that Sid in the policies of resource `owner` (a role, inline, or a
    managed policy), whichever branch of an Fn::If holds them."""
    properties = template["Resources"][owner]["Properties"]
    documents = ([properties["PolicyDocument"]] if "PolicyDocument" in properties
                 else [policy["PolicyDocument"] for policy in properties.get("Policies", [])])
    found = []
    for document in documents:
        for statement in document["Statement"]:
            branches = statement["Fn::If"][1:] if "Fn::If" in statement else [statement]
            found += [b for b in branches if isinstance(b, dict) and b.get("Sid") == sid]
    if not found and required:
        raise AssertionError(f"no statement {sid} in {owner}")
    return found


def denied_lines(template, accesses, names, stacks=None):
    found = findings(template, accesses, names, stacks=stacks)
    return [(f, a, r) for f, a, r, *_ in found.denied], found.unplaced


ALLOWLIST = iam_check.read_allowlist(ROOT / "scripts" / "iam_allowlist.yaml")
SUB = "arn:${AWS::Partition}:connect:${AWS::Region}:${AWS::AccountId}"
CONNECT = "arn:aws:connect:us-east-1:123456789012"
INSTANCE = f"{CONNECT}:instance/11111111-2222-3333-4444-555555555555"


class TheTemplate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.template = iam_check.load_template(ROOT / "template.yaml")
        cls.stacks = iam_check.stacks(cls.template)
        cls.least = cls.template

    def check(self, template=None, log=None, allowlist=ALLOWLIST):
        """The check of `template` (the least-privilege one by default) with the representative
        log."""
        template = self.least if template is None else template
        stacks = self.stacks if template is self.template else iam_check.stacks(template)
        accesses, names = representative_log(stacks[0])
        return findings(template, accesses if log is None else log, names, allowlist, stacks=stacks)

    def seeded(self, change):
        """The least-privilege template with `change` made to a copy of it."""
        template = copy.deepcopy(self.least)
        change(template)
        return template

    def exporter_table_statements(self, template):
        stack = iam_check.Stack(template)
        role_id = stack.role_of("ExporterFunction")
        statements = []
        for policy in template["Resources"][role_id]["Properties"].get("Policies", []):
            statements += policy["PolicyDocument"]["Statement"]
        return [s for s in statements if "dynamodb:UpdateItem" in iam_check.as_list(s["Action"])]

    def test_the_exporter_may_settle_its_jobs(self):
        denied, unplaced = denied_lines(self.template, EXPORTER_SETTLES, NAMES, self.stacks)
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
        rate, UNATTRIBUTED# the request rate of tokens that name no tenant (D32)."""
        put, update, delete, batch = iam_check.WRITE_ACTIONS
        expected = {
            "datasource-api": {put: {"T#", "CID#", "RECLAIM#"},
                               update: {"T#", "OPERATOR#", "UNATTRIBUTED#"}, delete: {"T#", "CID#"}},
            "task-api": {put: {"T#", "RECLAIM#"}, update: {"T#", "UNATTRIBUTED#"}, delete: {"T#"}},
            "contact-import": {put: {"T#"}, update: {"T#"}, delete: {"T#"}},
            "exporter": {put: {"T#"}, update: {"T#"}, delete: {"T#"}},
            "reclaim": {delete: {"RECLAIM#"}, batch: {"T#"}},
            "dialer-tick": {put: {"T#"}, update: {"T#"}},
            "dialer": {put: {"T#"}, update: {"T#", "CALL#", "DIALER", "DIALER#"},
                       delete: {"T#"}},
            "call-events": {put: {"T#"}, update: {"T#", "CALL#", "DIALER", "DIALER#"},
                            delete: {"T#"}},
            "flow-results": {put: {"CALL#"}, update: {"CALL#"}},
            "event-publisher": {},
        }
        prefixes = ["T#", "CID#", "RECLAIM#", "CALL#", "DIALER", "DIALER#", "OPERATOR#",
                    "UNATTRIBUTED#", "OTHER#"]
        stack = self.stacks[0]
        self.assertEqual(set(stack.functions), set(expected))
        for function, writes in expected.items():
            _, statements = stack.statements(stack.functions[function])
            for action in iam_check.WRITE_ACTIONS:
                granted = {p for p in prefixes if iam_check.allowed(statements, action, TABLE, (p,))}
                self.assertEqual(granted, writes.get(action, set()), f"{function} {action}")

    def test_after_sams_transform_each_role_is_the_functions_own_with_no_policy_of_aws(self):
        stack = self.stacks[0]
        roles = {stack.role_of(logical_id) for logical_id in stack.functions.values()}
        self.assertEqual(len(roles), len(stack.functions))
        for role in roles:
            for arn in stack.resources[role]["Properties"].get("ManagedPolicyArns", []):
                self.assertIn("Ref", arn, f"{role}: only the stack's own policies")

    def test_every_role_of_the_template_is_checked_the_console_custom_resources_too(self):
        for stack in self.stacks:
            roles = set(stack.roles())
            self.assertIn("ConsoleOriginSettingsRole", roles)
            self.assertEqual(stack.lambdas("ConsoleOriginSettingsRole"),
                             ["ConsoleOriginSettingsFunction"])
            self.assertEqual(roles, {stack.role_of(f) for f in stack.functions.values()}
                             | {"ConsoleOriginSettingsRole"})

    # Today's template.

    def test_todays_template_with_a_representative_log_passes_as_least_privilege_has_it(self):
        found = self.check()
        self.assertEqual(failing(found), set())
        self.assertEqual(found.failures(), 0)
        self.assertEqual(len(found.counts), 10)
        excused = {(kind, finding[0], finding[1]) for kind, finding, _ in found.excused}
        self.assertIn(("expected", "ConsoleOriginSettingsRole", "s3:PutBucketCORS"), excused)

    def test_todays_template_has_no_over_grant(self):
        self.assertEqual(failing(self.check(self.template)), set())

    # Each over-grant seeded into it.

    def test_an_action_added_to_a_statement_the_tests_use_fails(self):
        def change(template):
            statement, = statements_by_sid(template, "ExportJobsAndTheirContacts", "ExporterRole")
            statement["Action"].append("dynamodb:Scan")

        self.assertEqual(failing(self.check(self.seeded(change))), {
            ("extra", "exporter", "ExportJobsAndTheirContacts", "dynamodb:Scan"),
        })

    def test_a_resource_widened_to_everything_or_every_table_fails(self):
        def everything(template):
            statement, = statements_by_sid(template, "WriteExports", "ExporterRole")
            statement["Resource"] = "*"

        self.assertEqual(failing(self.check(self.seeded(everything))), {
            ("wide", "exporter", "WriteExports", "*"),
        })

        def every_table(template):
            statement, = statements_by_sid(template, "ExportJobsAndTheirContacts", "ExporterRole")
            statement["Resource"] = {"Fn::Sub": "arn:${AWS::Partition}:dynamodb:${AWS::Region}:"
                                                "${AWS::AccountId}:table/*"}

        self.assertEqual(failing(self.check(self.seeded(every_table))), {
            ("wide", "exporter", "ExportJobsAndTheirContacts",
             "arn:aws:dynamodb:us-east-1:123456789012:table/*"),
        })

    def test_reads_of_what_its_function_never_read_fail(self):
        """GetObject where the data source function only reads its import reports (results/):
        the statement's action and each of its prefixes are used, but not together."""
        def change(template):
            statement, = statements_by_sid(template, "ImportFilesAndReports", "DataSourceApiRole")
            statement["Action"] = ["s3:PutObject", "s3:GetObject"]

        bucket = "arn:aws:s3:::outbound-123456789012-us-east-1-9e0f1a2b3c4d"
        self.assertEqual(failing(self.check(self.seeded(change))), {
            ("read", "datasource-api", "ImportFilesAndReports", f"s3:GetObject {bucket}/imports/*"),
            ("read", "datasource-api", "ImportFilesAndReports", f"s3:GetObject {bucket}/uploads/*"),
        })

    def test_the_custom_resource_role_fails_on_an_added_action_or_a_wider_resource(self):
        def added(template):
            statement, = statements_by_sid(template, "UploadsCors", "ConsoleOriginSettingsRole")
            statement["Action"] = ["s3:PutBucketCORS", "s3:PutBucketPolicy"]

        self.assertEqual(failing(self.check(self.seeded(added))), {
            ("extra", "ConsoleOriginSettingsRole", "UploadsCors", "s3:PutBucketPolicy"),
        })

        def wider(template):
            statement, = statements_by_sid(template, "ConsoleClient", "ConsoleOriginSettingsRole")
            statement["Resource"] = {"Fn::Sub": "arn:${AWS::Partition}:cognito-idp:*:"
                                                "${AWS::AccountId}:userpool/*"}

        self.assertEqual(failing(self.check(self.seeded(wider))), {
            ("wide", "ConsoleOriginSettingsRole", "ConsoleClient",
             "arn:aws:cognito-idp:*:123456789012:userpool/*"),
        })

    def test_the_custom_resource_role_is_held_to_what_the_allow_list_says_its_code_does(self):
        console = [e for e in ALLOWLIST if e.get("role") == "ConsoleOriginSettingsRole"]
        self.assertEqual(len(console), 2, "its code's two calls, each with its reason")
        others = [e for e in ALLOWLIST if e not in console]
        self.assertEqual(failing(self.check(allowlist=others)), {
            ("unexercised", "ConsoleOriginSettingsRole", "UploadsCors", ""),
            ("unexercised", "ConsoleOriginSettingsRole", "ConsoleClient", ""),
        })

        def removed(template):
            statement, = statements_by_sid(template, "UploadsCors", "ConsoleOriginSettingsRole")
            statement["Action"] = "s3:PutBucketAcl"

        self.assertEqual(failing(self.check(self.seeded(removed))), {
            ("unexercised", "ConsoleOriginSettingsRole", "UploadsCors", ""),
            ("denied", "ConsoleOriginSettingsRole", "s3:PutBucketCORS",
             "arn:aws:s3:::outbound-123456789012-us-east-1-9e0f1a2b3c4d"),
        })

    def test_a_connect_resource_named_other_than_as_the_reference_names_it_fails(self):
        def instance_numbers(template):
            statement, = statements_by_sid(template, "ConnectNumbersAndFlows", "DataSourceApiRole")
            statement["Resource"] = [
                {"Fn::Sub": f"{SUB}:instance/${{ConnectInstanceId}}/phone-number/*"}
                if "phone-number" in str(r) else r for r in statement["Resource"]]

        self.assertEqual(failing(self.check(self.seeded(instance_numbers))), {
            ("misnamed", "datasource-api", "ConnectNumbersAndFlows",
             f"{INSTANCE}/phone-number/*"),
            ("denied", "datasource-api", "connect:ListPhoneNumbersV2", f"{CONNECT}:phone-number/*"),
            ("extra", "datasource-api", "ConnectNumbersAndFlows", "connect:ListPhoneNumbersV2"),
        })

        def whole_instance(template):
            statement, = statements_by_sid(template, "ConnectCalls", "DialerPolicy")
            statement["Resource"] = [{"Fn::Sub": f"{SUB}:instance/${{ConnectInstanceId}}"},
                                     {"Fn::Sub": f"{SUB}:instance/${{ConnectInstanceId}}/*"}]

        self.assertEqual(failing(self.check(self.seeded(whole_instance))), {
            ("misnamed", "dialer", "ConnectCalls", INSTANCE),
            ("misnamed", "dialer", "ConnectCalls", f"{INSTANCE}/*"),
        })

    def test_connect_resources_are_placed_as_the_reference_names_them(self):
        stack = self.stacks[0]
        names = {"CONNECT_INSTANCE_ID": {"i-rep"}}
        placed = {
            ("connect:ListPhoneNumbersV2", "connect/i-rep/phone-number/*"): f"{CONNECT}:phone-number/*",
            ("connect:DescribePhoneNumber", "connect/i-rep/phone-number/n-1"): f"{CONNECT}:phone-number/n-1",
            ("connect:StartOutboundVoiceContact", "connect/i-rep/contact/*"): f"{INSTANCE}/contact/*",
            ("connect:GetContactAttributes", "connect/i-rep/contact/c-1"): f"{INSTANCE}/contact/c-1",
            ("connect:DescribeQueue", "connect/i-rep/queue/q-1"): f"{INSTANCE}/queue/q-1",
            ("connect:GetCurrentMetricData", "connect/i-rep/queue/q-1"): f"{INSTANCE}/queue/q-1",
            ("connect:DescribeContactFlow", "connect/i-rep/contact-flow/f-1"):
                f"{INSTANCE}/contact-flow/f-1",
        }
        for (action, resource), arn in placed.items():
            self.assertEqual(stack.place(action, resource, names), (arn, None), action)
        for action, resource in [("connect:DescribeQueue", "connect/i-rep/contact/*"),
                                 ("connect:StartOutboundVoiceContact", "connect/i-rep"),
                                 ("connect:StopContact", "connect/i-rep/contact/c-1")]:
            arn, why = stack.place(action, resource, names)
            self.assertIsNone(arn, action)
            self.assertIn("Service Authorization Reference", why)
        for action, types in iam_check.CONNECT_ACTIONS.items():
            for resource_type in types:
                self.assertIn(resource_type, iam_check.CONNECT_RESOURCE_TYPES, action)


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


    def test_a_pattern_within_another(self):
        within = iam_check._within
        self.assertTrue(within(f"{TABLE}/index/*", f"{TABLE}/index/*"))
        self.assertTrue(within(f"{TABLE}/index/gsi1", f"{TABLE}/index/*"))
        self.assertTrue(within("arn:aws:s3:::b/exports/*", "arn:aws:s3:::b/*"))
        self.assertFalse(within(f"{TABLE}/index/*", f"{TABLE}/index/gsi1"))
        self.assertFalse(within("*", TABLE))
        self.assertFalse(within(f"{TABLE}*", TABLE))
        self.assertFalse(within("arn:aws:s3:::b/a*", "arn:aws:s3:::b/a?"), "? is one character")

    def test_the_widest_a_grant_may_name_for_a_resource(self):
        widest = iam_check.widest
        self.assertEqual(widest(TABLE), TABLE)
        self.assertEqual(widest(f"{TABLE}/index/gsi1"), f"{TABLE}/index/*")
        self.assertEqual(widest(f"{TABLE}/stream/2026-01-01T00:00:00.000"), f"{TABLE}/stream/*")
        self.assertEqual(widest(f"{INSTANCE}/queue/q-1"), f"{INSTANCE}/queue/*")
        self.assertEqual(widest(f"{CONNECT}:phone-number/*"), f"{CONNECT}:phone-number/*")
        self.assertEqual(widest("arn:aws:s3:::b/exports/*"), "arn:aws:s3:::b/exports/*")
        self.assertEqual(widest("arn:aws:logs:us-east-1:1:log-group:g:log-stream:*"),
                         "arn:aws:logs:us-east-1:1:log-group:g:*")
        self.assertEqual(widest("arn:aws:sqs:us-east-1:1:q"), "arn:aws:sqs:us-east-1:1:q")


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

    def test_a_statement_no_test_exercised_fails_unless_the_allow_list_names_its_access(self):
        extra = {"Sid": "QueueJobs", "Effect": "Allow", "Action": "sqs:SendMessage",
                 "Resource": {"Fn::GetAtt": ["Queue", "Arn"]}}
        template = with_roles({"reader": [table_statement("Read", "dynamodb:GetItem"), extra]})
        log = {("reader", "dynamodb:GetItem", "table/t-local", TENANT)}
        found = findings(template, log)
        self.assertEqual([u[:2] for u in found.unexercised], [("reader", "QueueJobs")])
        self.assertEqual(found.failures(), 1, "Logs is exercised by Lambda's writes of its logs")
        entry = {"function": "reader", "action": "sqs:SendMessage", "resource": "${Queue.Arn}",
                 "reason": "a job no test makes"}
        found = findings(template, log, allowlist=[entry])
        self.assertEqual(found.failures(), 0)
        self.assertEqual(found.excused, [("expected", ("reader", "sqs:SendMessage", QUEUE),
                                          "a job no test makes")])
        # As an ARN too.
        self.assertEqual(findings(template, log, allowlist=[{**entry, "resource": QUEUE}]).failures(), 0)
        # Without a reason, or with a wildcard, it names nothing.
        for malformed in [{k: v for k, v in entry.items() if k != "reason"},
                          {**entry, "action": "sqs:*"}, {**entry, "resource": "*"},
                          {**entry, "sid": "QueueJobs"}]:
            found = findings(template, log, allowlist=[malformed])
            self.assertEqual((len(found.unexercised), [s[0] for s in found.stale]), (1, [malformed]))
        # What it names is a need: the statement may still be no wider than it.
        extra["Resource"] = "*"
        found = findings(template, log, allowlist=[entry])
        self.assertEqual([(w[1], w[2]) for w in found.wide], [("QueueJobs", "*")])

    def test_a_stale_allow_list_entry_fails(self):
        template = with_roles({"reader": [
            {"Sid": "Read", "Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:Query"],
             "Resource": [TABLE, f"{TABLE}/index/*"]},
        ]})
        log = {("reader", "dynamodb:GetItem", "table/t-local", TENANT),
               ("reader", "dynamodb:Query", "table/t-local", TENANT),
               ("reader", "dynamodb:Query", "table/t-local/index/gsi1", TENANT)}
        self.assertEqual(findings(template, log).failures(), 0)
        access = {"function": "reader", "action": "dynamodb:GetItem", "resource": "${Table.Arn}",
                  "reason": "x"}
        for entry, why in [
            (access, "the tests record it now"),
            ({**access, "resource": "${Table.Arn}/index/gsi2"}, "no more and no less"),
            ({**access, "function": "writer"}, "no function"),
            ({"role": "NoSuchRole", "action": "s3:GetObject", "resource": "${Table.Arn}",
              "reason": "x"}, "no role"),
            ({**access, "resource": "${NoSuchThing.Arn}"}, "names nothing"),
            ({"function": "reader", "sid": "Read", "reason": "a shape no longer read"}, "malformed"),
            ({"function": "writer", "action": "dynamodb:PutItem", "prefix": "T#", "reason": "x"},
             "excuses nothing"),
            ({"function": "reader", "reason": "it runs"}, "excuses nothing"),
        ]:
            found = findings(template, log, allowlist=[entry])
            self.assertEqual([s[0] for s in found.stale], [entry])
            self.assertIn(why, found.stale[0][1])
            self.assertEqual(found.failures(), 1, entry)

    def test_a_role_granting_a_write_prefix_its_function_never_writes_fails(self):
        writes = {
            ("flow-results", "dynamodb:UpdateItem", "table/t-local", ("CALL#",)),
            ("dialer", "dynamodb:PutItem", "table/t-local", ("CALL#",)),
            ("dialer", "dynamodb:PutItem", "table/t-local", ("T#",)),
            ("dialer", "dynamodb:GetItem", "table/t-local", ("CID#",)),
        }
        broad = with_roles({
            "flow-results": [table_statement("CallRecords", "dynamodb:UpdateItem")],
            "dialer": [table_statement("Dialing", ["dynamodb:PutItem", "dynamodb:GetItem"])],
        })
        found = findings(broad, writes)
        self.assertEqual(sorted((f, a, p) for f, a, _, p in found.overbroad), [
            ("dialer", "dynamodb:PutItem", "CID#"),  # read by it, never written
            ("flow-results", "dynamodb:UpdateItem", "CID#"),
            ("flow-results", "dynamodb:UpdateItem", "T#"),
        ])
        self.assertEqual(found.failures(), 3)
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


def connect_template(*statements):
    """A dialer whose role has `statements`, with an instance of Amazon Connect."""
    template = with_roles({"dialer": list(statements)})
    template["Parameters"] = {"ConnectInstanceId": {"Type": "String", "Default": ""}}
    template["Resources"]["Dialer"]["Properties"]["Environment"]["Variables"][
        "CONNECT_INSTANCE_ID"] = {"Ref": "ConnectInstanceId"}
    return template


def connect_statement(sid, actions, *paths):
    return {"Sid": sid, "Effect": "Allow", "Action": list(actions),
            "Resource": [{"Fn::Sub": f"{SUB}:{path}"} for path in paths]}


CONNECT_NAMES = {**NAMES, "CONNECT_INSTANCE_ID": {"i-local"}}


class Breadth(unittest.TestCase):
    """No action and no resource wider than what the needs ask for, every role's (D32)."""

    def test_an_action_added_to_a_statement_the_tests_use_fails(self):
        log = {("reader", "dynamodb:GetItem", "table/t-local", TENANT)}
        template = with_roles({"reader": [table_statement("Read", ["dynamodb:GetItem"])]})
        self.assertEqual(findings(template, log).failures(), 0)
        for added, why in [("dynamodb:DeleteItem", "allowed none of its needs"),
                           ("dynamodb:Get*", "wildcard")]:
            template = with_roles({"reader": [table_statement("Read", ["dynamodb:GetItem", added])]})
            found = findings(template, log)
            self.assertEqual([e[:3] for e in found.extra], [("reader", "Read", added)])
            self.assertIn(why, found.extra[0][3])
            self.assertEqual(found.failures(), 1 + len(found.overbroad))

    def test_a_resource_widened_to_everything_or_every_table_fails(self):
        log = {("reader", "dynamodb:GetItem", "table/t-local", TENANT),
               ("reader", "dynamodb:Query", "table/t-local/index/gsi1", TENANT)}
        def reads(*resources):
            return with_roles({"reader": [
                {"Sid": "Items", "Effect": "Allow", "Action": "dynamodb:GetItem",
                 "Resource": resources[0]},
                {"Sid": "Queries", "Effect": "Allow", "Action": "dynamodb:Query",
                 "Resource": resources[1]},
            ]})

        # Every index of the table: the template cannot know which the code queries.
        self.assertEqual(findings(reads(TABLE, f"{TABLE}/index/*"), log).failures(), 0)
        for items, queries, wide in [
            ("*", f"{TABLE}/index/*", ("Items", "*")),
            ("arn:aws:dynamodb:us-east-1:123456789012:table/*", f"{TABLE}/index/*",
             ("Items", "arn:aws:dynamodb:us-east-1:123456789012:table/*")),
            (TABLE, f"{TABLE}*", ("Queries", f"{TABLE}*")),
            (TABLE, [f"{TABLE}/index/*", "arn:aws:dynamodb:us-east-1:123456789012:table/Other"],
             ("Queries", "arn:aws:dynamodb:us-east-1:123456789012:table/Other")),
        ]:
            found = findings(reads(items, queries), log)
            self.assertEqual([w[1:3] for w in found.wide], [wide])
            self.assertEqual(found.failures(), 1, (items, queries))

    def test_reads_beyond_what_the_log_read_fail(self):
        """Each action and each resource of the statement is used, but not together."""
        log = {("reader", "dynamodb:GetItem", "table/t-local", TENANT),
               ("reader", "dynamodb:Query", "table/t-local/index/gsi1", TENANT)}
        template = with_roles({"reader": [
            {"Sid": "Reads", "Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:Query"],
             "Resource": [TABLE, f"{TABLE}/index/*"]},
        ]})
        found = findings(template, log)
        self.assertEqual([r[:3] for r in found.read],
                         [("reader", "Reads", f"dynamodb:Query {TABLE}")])
        self.assertEqual(found.failures(), 1)
        # A queue it only sends to, among queues it receives from.
        template = sam({
            "Queue2": {"Type": "AWS::SQS::Queue", "Properties": {}},
            "ReaderRole": role("Reader", {
                "Sid": "Queues", "Effect": "Allow",
                "Action": ["sqs:ReceiveMessage", "sqs:SendMessage"],
                "Resource": [QUEUE, {"Fn::GetAtt": ["Queue2", "Arn"]}]}),
            "Reader": function("reader", Role={"Fn::GetAtt": ["ReaderRole", "Arn"]}, Environment={
                "Variables": {"ONE_QUEUE_URL": {"Ref": "Queue"}, "TWO_QUEUE_URL": {"Ref": "Queue2"}}}),
        })
        names = {"ONE_QUEUE_URL": {"q-one"}, "TWO_QUEUE_URL": {"q-two"}}
        log = {("reader", "sqs:ReceiveMessage", "queue/q-one", None),
               ("reader", "sqs:SendMessage", "queue/q-two", None)}
        found = findings(template, log, names)
        self.assertEqual([r[:3] for r in found.read],
                         [("reader", "Queues", "sqs:ReceiveMessage arn:aws:sqs:us-east-1:123456789012:Queue2")])
        self.assertEqual([u[:3] for u in found.unused],
                         [("reader", "Queues", f"sqs:SendMessage {QUEUE}")])

    def test_a_role_whose_code_no_test_records_is_held_to_what_the_allow_list_names(self):
        """As the console's custom resources: a Lambda function of the template's own code."""
        settings = {"Sid": "Cors", "Effect": "Allow", "Action": ["s3:PutBucketCORS"],
                    "Resource": {"Fn::GetAtt": ["Bucket", "Arn"]}}
        template = sam({
            "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {}},
            "SettingsRole": {"Type": "AWS::IAM::Role", "Properties": {
                "AssumeRolePolicyDocument": {},
                "Policies": [{"PolicyName": "p", "PolicyDocument": {"Statement": [
                    logs_statement("Settings"), settings]}}]}},
            "Settings": {"Type": "AWS::Lambda::Function", "Properties": {
                "Runtime": "python3.13", "Handler": "index.handler", "Code": {"ZipFile": "x"},
                "Role": {"Fn::GetAtt": ["SettingsRole", "Arn"]}}},
        })
        entry = {"role": "SettingsRole", "action": "s3:PutBucketCORS", "resource": "${Bucket.Arn}",
                 "reason": "its custom resource sets the bucket's CORS"}
        found = findings(template, set())
        self.assertEqual([u[:2] for u in found.unexercised], [("SettingsRole", "Cors")])
        self.assertEqual(findings(template, set(), allowlist=[entry]).failures(), 0)
        settings["Action"].append("s3:PutBucketPolicy")
        found = findings(template, set(), allowlist=[entry])
        self.assertEqual([e[:3] for e in found.extra],
                         [("SettingsRole", "Cors", "s3:PutBucketPolicy")])
        settings["Action"] = ["s3:PutBucketCORS"]
        settings["Resource"] = "arn:aws:s3:::*"
        found = findings(template, set(), allowlist=[entry])
        self.assertEqual([w[:3] for w in found.wide], [("SettingsRole", "Cors", "arn:aws:s3:::*")])

    def test_connect_actions_are_placed_and_exercise_their_statement(self):
        template = connect_template(connect_statement(
            "ConnectCalls", ["connect:StartOutboundVoiceContact"],
            "instance/${ConnectInstanceId}/contact/*"))
        log = {("dialer", "connect:StartOutboundVoiceContact", "connect/i-local/contact/*", None)}
        self.assertEqual(findings(template, log, CONNECT_NAMES).failures(), 0)
        found = findings(template, {("dialer", "connect:DescribeContact",
                                     "connect/i-local/contact/*", None)}, CONNECT_NAMES)
        self.assertEqual([d[1] for d in found.denied], ["connect:DescribeContact"])
        self.assertEqual([u[1] for u in found.unexercised], ["ConnectCalls"])
        # Recorded on the instance, where the Reference names a contact of it.
        found = findings(template, {("dialer", "connect:StartOutboundVoiceContact",
                                     "connect/i-local", None)}, CONNECT_NAMES)
        self.assertEqual([u[:2] for u in found.unplaced],
                         [("dialer", "connect:StartOutboundVoiceContact")])
        self.assertIn("contact", found.unplaced[0][3])

    def test_a_connect_resource_named_other_than_as_the_reference_names_it_fails(self):
        log = {("dialer", "connect:StartOutboundVoiceContact", "connect/i-local/contact/*", None),
               ("dialer", "connect:ListPhoneNumbersV2", "connect/i-local/phone-number/*", None),
               ("dialer", "connect:DescribeQueue", "connect/i-local/queue/q-1", None)}
        right = connect_template(
            connect_statement("Calls", ["connect:StartOutboundVoiceContact"],
                              "instance/${ConnectInstanceId}/contact/*"),
            connect_statement("Numbers", ["connect:ListPhoneNumbersV2", "connect:DescribeQueue"],
                              "phone-number/*", "instance/${ConnectInstanceId}/queue/*"))
        self.assertEqual(findings(right, log, CONNECT_NAMES).failures(), 0)
        wrong = connect_template(
            connect_statement("Calls", ["connect:StartOutboundVoiceContact"],
                              "instance/${ConnectInstanceId}", "instance/${ConnectInstanceId}/*"),
            connect_statement("Numbers", ["connect:ListPhoneNumbersV2", "connect:DescribeQueue"],
                              "instance/${ConnectInstanceId}/phone-number/*",
                              "instance/${ConnectInstanceId}/queue/*"),
            connect_statement("Stop", ["connect:StopContact"], "instance/${ConnectInstanceId}/contact/*"))
        found = findings(wrong, log, CONNECT_NAMES)
        self.assertEqual(sorted(m[1:3] for m in found.misnamed), [
            ("Calls", INSTANCE),
            ("Calls", f"{INSTANCE}/*"),
            ("Numbers", f"{INSTANCE}/phone-number/*"),
            ("Stop", "connect:StopContact"),
        ])
        self.assertIn("phone-number/*", dict((m[2], m[3]) for m in found.misnamed)[
            f"{INSTANCE}/phone-number/*"])
        self.assertEqual([d[1:3] for d in found.denied],
                         [("connect:ListPhoneNumbersV2", f"{CONNECT}:phone-number/*")])


class TheAllowList(unittest.TestCase):
    def test_its_entries_are_well_formed_with_reasons(self):
        entries = iam_check.read_allowlist(ROOT / "scripts" / "iam_allowlist.yaml")
        for entry in entries:
            self.assertIsNotNone(iam_check._entry_kind(entry), entry)


if __name__ == "__main__":
    unittest.main()
