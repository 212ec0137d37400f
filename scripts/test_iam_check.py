"""Tests of the least-privilege check itself (scripts/iam_check.py), run by `make test`:

    .venv/bin/python -m unittest discover -s scripts -p 'test_*.py'

It must fail on a role that lacks an action the code performs (the exporter without PutItem and
DeleteItem, as the template had it), on one that lacks what Lambda does with it for an event
source, and on a name it cannot place; it must read SAM's policy templates as SAM expands them.
"""

import copy
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import iam_check  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/Table"

# What the exporter's code does to settle a job (recorded names of a local stack).
NAMES = {"TABLE_NAME": {"t-local"}, "BUCKET_NAME": {"b-local"}}
EXPORTER_SETTLES = {
    ("exporter", "dynamodb:GetItem", "table/t-local"),
    ("exporter", "dynamodb:Query", "table/t-local"),
    ("exporter", "dynamodb:UpdateItem", "table/t-local"),
    ("exporter", "dynamodb:PutItem", "table/t-local"),
    ("exporter", "dynamodb:DeleteItem", "table/t-local"),
    ("exporter", "s3:PutObject", "bucket/b-local/exports/*"),
}


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


def denied_lines(template, accesses, names):
    denied, unplaced, _, _ = iam_check.check(iam_check.Stack(template), accesses, names)
    return [(f, a, r) for f, a, r, _, _ in denied], unplaced


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


if __name__ == "__main__":
    unittest.main()
