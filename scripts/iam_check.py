"""The least-privilege check of `make test`, both ways (D29): every AWS action a function
performed under the tests is one that its role in template.yaml allows, and so is everything
Lambda does with that role for it; and its role allows nothing more than that, but for what
the allow-list (scripts/iam_allowlist.yaml) names with its reason.

    .venv/bin/python scripts/iam_check.py --log .local/aws-actions.jsonl \
        [--template template.yaml] [--allowlist scripts/iam_allowlist.yaml]

What it compares:

- Needed, by function. What its code asked of AWS under `cargo test`, the contract check and
  the console's test: the action log the functions' SDK clients write when AWS_ACTION_LOG names
  a file (shared/adapters/src/aws/actions.rs), one line per function, IAM action and resource
  (`table/t-01j...`, `bucket/b-01j.../exports/*`, `queue/b-01j...-dial`, `connect/{instance}`,
  ...), for DynamoDB with `keys`, the leading (partition) key prefixes the request named (each
  value up to and including its first `#`, the whole value without one: `T#`, `CALL#`,
  `DIALER`; none for a Scan), and lines naming which variable gave each local name
  (`{"names": {"TABLE_NAME": "t-01j...", ...}}`). A local name stands for the template's
  resource that the template sets that variable to (`TABLE_NAME: !Ref Table`), so it becomes
  that resource's ARN. And what Lambda itself does with the function's role, read from the
  template: receive and delete from the queues of its SQS event sources, read the streams of
  its DynamoDB ones, send to their on-failure destinations, write to its log group, and send
  traces when tracing is active.
- Allowed, by function. The statements of its role, as CloudFormation will have them: SAM's
  transform (samtranslator, the version `sam` deploys with) applied first, so the roles SAM
  generates, its policy templates (DynamoDBCrudPolicy, SQSSendMessagePolicy, ...) and the AWS
  managed policies it attaches for event sources are what is evaluated; then `!Ref`, `!GetAtt`,
  `!Sub`, `!If`, ... resolved to the ARNs of the stack's own resources in a made-up account and
  region, with the parameters' defaults and DialProvider=amazon-connect (the configuration that
  grants the most). A statement allows an action on a resource when both match its patterns
  (`*` and `?` as IAM reads them) and its Condition is proven true; an explicit Deny wins
  unless its Condition is proven false.
- Conditions. `dynamodb:LeadingKeys` under ForAllValues: or ForAnyValue: with StringLike,
  StringEquals, StringNotLike or StringNotEquals, as IAM reads them (ForAllValues over no keys
  is true, ForAnyValue over none false). A recorded prefix `P#` stands for every key beginning
  with it: `CALL#*` covers `CALL#`, `T#acme#*` does not cover `T#`. An action that names keys
  whose line has no `keys` (an older log) has unknown keys, which prove no such condition.
  Any other condition (key or operator) is not evaluated: its statement allows nothing.

Fails (exit 1), one line each, on:

- DENIED: a needed action its role does not allow, saying why (no statement, a condition not
  met, the keys unknown, a condition it cannot evaluate).
- UNPLACED: a recorded function or name it cannot place in the template.
- UNEVALUATED: a statement with a condition it cannot evaluate.
- NOT RUN: a function of the template with no line in the log.
- UNEXERCISED: an Allow statement of a function that ran (by function and Sid, or function,
  actions and resources without one) that allowed none of its needs, the code's or Lambda's.
- OVERBROAD: a DynamoDB write action (PutItem, UpdateItem, DeleteItem, BatchWriteItem) that a
  function's role allows on a key prefix its code never wrote with that action, among the
  prefixes any function's line names on that table.
- STALE: an allow-list entry that excuses none of the above (so the list cannot rot), or one
  that is malformed.

The allow-list excuses NOT RUN (`{function, reason}`), UNEXERCISED (`{function, sid, reason}`,
or `{function, action, resource, reason}` for a statement without a Sid) and OVERBROAD
(`{function, action, prefix, reason}`); never a denied, unplaced or unevaluated line. It prints
what it excused, and, without failing, the actions of exercised statements nothing needed.
"""

import argparse
import copy
import fnmatch
import json
import logging
import re
import sys
from pathlib import Path

import yaml

# samtranslator's own metrics, never published here, would warn on every translation.
logging.getLogger("samtranslator").setLevel(logging.ERROR)

ACCOUNT = "123456789012"
REGION = "us-east-1"
PARTITION = "aws"
STACK = "outbound"
STACK_ID = f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/{STACK}/6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

# Parameters set for the check beyond their defaults: the Amazon Connect provider, so that its
# statements (and what they allow) are evaluated too.
PARAMETERS = {
    "JwtIssuer": "https://issuer.example.com",
    "JwtAudience": "client",
    "DialProvider": "amazon-connect",
    "ConnectInstanceId": "11111111-2222-3333-4444-555555555555",
    "ConnectContactFlowId": "66666666-7777-8888-9999-000000000000",
    "ConnectQueueId": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
}

# Variables no function reads, for names the local stack gives resources the template creates:
# the bucket notifies the import queue, and its function is fed from it.
UNREAD_VARIABLES = {"IMPORT_QUEUE_URL": "ImportQueue"}

# AWS managed policies SAM attaches, as AWS documents them (their actions, on every resource).
AWS_MANAGED = {
    "service-role/AWSLambdaBasicExecutionRole": [
        "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents",
    ],
    "service-role/AWSLambdaSQSQueueExecutionRole": [
        "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
        "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents",
    ],
    "service-role/AWSLambdaDynamoDBExecutionRole": [
        "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
        "dynamodb:ListStreams",
        "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents",
    ],
    "AWSXrayWriteOnlyAccess": [
        "xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
        "xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries",
    ],
}

NO_VALUE = object()


class CheckError(Exception):
    """The template or the log cannot be evaluated."""


# ---------------------------------------------------------------------------- reading


class _Loader(yaml.SafeLoader):
    pass


def _short_form(tag):
    def construct(loader, node):
        if isinstance(node, yaml.ScalarNode):
            value = loader.construct_scalar(node)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)
        if tag == "Ref":
            return {"Ref": value}
        if tag == "Condition":
            return {"Condition": value}
        if tag == "GetAtt" and isinstance(value, str):
            value = value.split(".", 1)
        return {f"Fn::{tag}": value}

    return construct


for _tag in ["Ref", "Condition", "GetAtt", "Sub", "If", "Equals", "Not", "And", "Or", "Join",
             "Split", "Select", "FindInMap", "Base64", "Cidr", "ImportValue", "GetAZs",
             "Contains", "EachMemberEquals", "EachMemberIn", "ValueOf", "RefAll", "Length",
             "ToJsonString"]:
    _Loader.add_constructor(f"!{_tag}", _short_form(_tag))


def load_template(path):
    return yaml.load(Path(path).read_text(), Loader=_Loader)


def read_log(path):
    """The log's accesses (function, action, resource, keys) and its names (variable -> local
    names). Keys are the sorted prefixes a line names, or None when it has no `keys`."""
    accesses, names, absent = set(), {}, set()
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            raise CheckError(f"{path}:{number}: not JSON: {error}") from error
        if "names" in entry:
            for variable, name in entry["names"].items():
                names.setdefault(variable, set()).add(local_name(variable, name))
            continue
        if "absent" in entry:
            # Names a test points a client at because nothing is there (a table that does not
            # exist, to show what a failure does): no role's statement is about them.
            absent.update(entry["absent"])
            continue
        keys = entry.get("keys")
        if keys is not None:
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise CheckError(f"{path}:{number}: keys is not a list of texts: {keys!r}")
            keys = tuple(sorted(set(keys)))
        accesses.add((entry["function"], entry["action"], entry["resource"], keys))
    accesses = {
        access for access in accesses
        if access[2].partition("/")[2].partition("/")[0] not in absent
    }
    return accesses, names


def local_name(variable, value):
    """A queue by its name, the last segment of its URL; anything else as it is."""
    if variable.endswith("_QUEUE_URL"):
        return value.rstrip("/").rsplit("/", 1)[-1]
    return value


# ---------------------------------------------------------------------------- translating


def translate(template, parameters):
    """The template as CloudFormation will have it after SAM's transform. AWS::LanguageExtensions'
    Fn::ForEach blocks (the alarms and outputs) are left out: no role is made in them."""
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator
    import boto3

    sam = copy.deepcopy(template)
    for section in ("Resources", "Outputs", "Conditions"):
        for key in [k for k in sam.get(section, {}) if k.startswith("Fn::ForEach::")]:
            del sam[section][key]
    # The code is packaged by `sam build`; where it lies does not change a role.
    for resource in sam.get("Resources", {}).values():
        if isinstance(resource, dict) and resource.get("Type") == "AWS::Serverless::Function":
            resource.setdefault("Properties", {})["CodeUri"] = "s3://code/function.zip"
    transform = sam.get("Transform")
    if isinstance(transform, list):
        sam["Transform"] = [t for t in transform if t != "AWS::LanguageExtensions"]
        if len(sam["Transform"]) == 1:
            sam["Transform"] = sam["Transform"][0]
    translator = Translator(
        managed_policy_map={},
        sam_parser=Parser(),
        boto_session=boto3.Session(region_name=REGION),
    )
    return translator.translate(
        sam, parameter_values=dict(parameters), get_managed_policy_map=lambda: {}
    )


class Resolver:
    """Resolves intrinsic functions to values in a made-up account and region."""

    def __init__(self, template, overrides):
        self.resources = template.get("Resources", {})
        self.mappings = template.get("Mappings", {})
        self.parameters = {
            "AWS::AccountId": ACCOUNT,
            "AWS::Region": REGION,
            "AWS::Partition": PARTITION,
            "AWS::StackName": STACK,
            "AWS::StackId": STACK_ID,
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::NotificationARNs": [],
        }
        for name, parameter in template.get("Parameters", {}).items():
            value = overrides.get(name, parameter.get("Default"))
            if value is None:
                value = ""
            if parameter.get("Type") == "CommaDelimitedList":
                value = str(value).split(",") if not isinstance(value, list) else value
            self.parameters[name] = value
        self.condition_definitions = template.get("Conditions", {})
        self.conditions = {}

    def condition(self, name):
        if name not in self.conditions:
            if name not in self.condition_definitions:
                raise CheckError(f"no condition {name}")
            self.conditions[name] = bool(self.resolve(self.condition_definitions[name]))
        return self.conditions[name]

    # Names and ARNs of the stack's own resources.

    def name(self, logical_id):
        resource = self.resources[logical_id]
        kind, properties = resource["Type"], resource.get("Properties", {})
        explicit = {
            "AWS::S3::Bucket": "BucketName",
            "AWS::DynamoDB::Table": "TableName",
            "AWS::SQS::Queue": "QueueName",
            "AWS::Events::EventBus": "Name",
            "AWS::Logs::LogGroup": "LogGroupName",
            "AWS::IAM::Role": "RoleName",
            "AWS::SNS::Topic": "TopicName",
            "AWS::Lambda::Function": "FunctionName",
        }.get(kind)
        if explicit and explicit in properties:
            return self.resolve(properties[explicit])
        return logical_id.lower() if kind == "AWS::S3::Bucket" else logical_id

    def ref(self, logical_id):
        kind = self.resources[logical_id]["Type"]
        name = self.name(logical_id)
        if kind == "AWS::SQS::Queue":
            return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}"
        if kind in ("AWS::IAM::ManagedPolicy",):
            return f"arn:{PARTITION}:iam::{ACCOUNT}:policy/{name}"
        if kind == "AWS::SNS::Topic":
            return self.get_att(logical_id, "TopicArn")
        return name

    def get_att(self, logical_id, attribute):
        if logical_id not in self.resources:
            raise CheckError(f"!GetAtt of no resource: {logical_id}.{attribute}")
        kind = self.resources[logical_id]["Type"]
        name = self.name(logical_id)
        arns = {
            "AWS::SQS::Queue": f"arn:{PARTITION}:sqs:{REGION}:{ACCOUNT}:{name}",
            "AWS::DynamoDB::Table": f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{name}",
            "AWS::S3::Bucket": f"arn:{PARTITION}:s3:::{name}",
            "AWS::Events::EventBus": f"arn:{PARTITION}:events:{REGION}:{ACCOUNT}:event-bus/{name}",
            "AWS::IAM::Role": f"arn:{PARTITION}:iam::{ACCOUNT}:role/{name}",
            "AWS::Logs::LogGroup": f"arn:{PARTITION}:logs:{REGION}:{ACCOUNT}:log-group:{name}:*",
            "AWS::SNS::Topic": f"arn:{PARTITION}:sns:{REGION}:{ACCOUNT}:{name}",
            "AWS::Lambda::Function": f"arn:{PARTITION}:lambda:{REGION}:{ACCOUNT}:function:{name}",
        }
        if attribute == "Arn" and kind in arns:
            return arns[kind]
        if kind == "AWS::DynamoDB::Table" and attribute == "StreamArn":
            return arns[kind] + "/stream/2026-01-01T00:00:00.000"
        if kind == "AWS::SQS::Queue" and attribute == "QueueName":
            return name
        if kind == "AWS::SQS::Queue" and attribute == "QueueUrl":
            return self.ref(logical_id)
        if kind == "AWS::SNS::Topic" and attribute == "TopicArn":
            return arns[kind]
        if kind == "AWS::Events::EventBus" and attribute == "Name":
            return name
        return f"{logical_id}.{attribute}"

    def variable(self, name):
        if name in self.parameters:
            return self.parameters[name]
        if "." in name:
            logical_id, attribute = name.split(".", 1)
            return self.get_att(logical_id, attribute)
        if name in self.resources:
            return self.ref(name)
        raise CheckError(f"!Ref of nothing: {name}")

    def sub(self, text, variables):
        def replace(match):
            inner = match.group(1)
            if inner.startswith("!"):
                return "${" + inner[1:] + "}"
            value = variables[inner] if inner in variables else self.variable(inner)
            if isinstance(value, list):
                value = ",".join(value)
            return str(value)

        return re.sub(r"\$\{([^}]+)\}", replace, text)

    def resolve(self, value):
        if isinstance(value, list):
            items = [self.resolve(item) for item in value]
            return [item for item in items if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, argument), = value.items()
            if key == "Ref":
                return NO_VALUE if argument == "AWS::NoValue" else self.variable(argument)
            if key == "Condition":
                return self.condition(argument)
            if key == "Fn::GetAtt":
                logical_id, attribute = (
                    argument if isinstance(argument, list) else argument.split(".", 1)
                )
                return self.get_att(self.resolve(logical_id), self.resolve(attribute))
            if key == "Fn::Sub":
                if isinstance(argument, list):
                    text, variables = argument
                    return self.sub(text, {k: self.resolve(v) for k, v in variables.items()})
                return self.sub(argument, {})
            if key == "Fn::If":
                name, then, otherwise = argument
                return self.resolve(then if self.condition(name) else otherwise)
            if key == "Fn::Equals":
                left, right = (self.resolve(a) for a in argument)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self.resolve(argument[0])
            if key == "Fn::And":
                return all(self.resolve(a) for a in argument)
            if key == "Fn::Or":
                return any(self.resolve(a) for a in argument)
            if key == "Fn::Join":
                separator, items = argument
                items = self.resolve(items)
                return separator.join(str(i) for i in items)
            if key == "Fn::Split":
                separator, text = argument
                return str(self.resolve(text)).split(separator)
            if key == "Fn::Select":
                index, items = argument
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::FindInMap":
                name, first, second = (self.resolve(a) for a in argument)
                return self.mappings[name][first][second]
            if key == "Fn::Base64":
                return self.resolve(argument)
        return {k: v for k, v in ((k, self.resolve(v)) for k, v in value.items()) if v is not NO_VALUE}


# ---------------------------------------------------------------------------- the model


def as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


class Stack:
    """The functions of a translated template: their roles' statements and what Lambda needs."""

    def __init__(self, sam_template, overrides=None):
        overrides = {**PARAMETERS, **(overrides or {})}
        self.sam = sam_template
        self.cfn = translate(sam_template, {
            name: value for name, value in overrides.items()
            if name in sam_template.get("Parameters", {})
        })
        self.resolver = Resolver(self.cfn, overrides)
        self.resources = self.cfn["Resources"]
        self.functions = {}  # binary name -> logical id
        for logical_id, resource in self.sam["Resources"].items():
            if not isinstance(resource, dict) or resource.get("Type") != "AWS::Serverless::Function":
                continue
            binary = (resource.get("Metadata", {}).get("BuildProperties", {}).get("Binary")
                      or logical_id)
            self.functions[binary] = logical_id

    def active(self, resource):
        condition = resource.get("Condition")
        return condition is None or self.resolver.condition(condition)

    def role_of(self, function_id):
        role = self.resources[function_id]["Properties"]["Role"]
        if isinstance(role, dict) and "Fn::GetAtt" in role:
            attribute = role["Fn::GetAtt"]
            logical_id = attribute[0] if isinstance(attribute, list) else attribute.split(".")[0]
            return logical_id
        raise CheckError(f"{function_id}: its role is not one of the stack's: {role}")

    def statements(self, function_id):
        """Every statement of the function's role: inline, managed (the stack's and AWS's), and
        the stack's policies attached to it."""
        role_id = self.role_of(function_id)
        role = self.resources[role_id]["Properties"]
        documents = []
        for policy in as_list(role.get("Policies")):
            documents.append(policy["PolicyDocument"])
        for arn in as_list(role.get("ManagedPolicyArns")):
            if isinstance(arn, dict) and "Ref" in arn and arn["Ref"] in self.resources:
                managed = self.resources[arn["Ref"]]
                if self.active(managed):
                    documents.append(managed["Properties"]["PolicyDocument"])
                continue
            arn = self.resolver.resolve(arn)
            if arn is NO_VALUE:
                continue
            name = str(arn).split(":policy/", 1)[-1]
            if name not in AWS_MANAGED:
                raise CheckError(f"{function_id}: unknown managed policy {arn}")
            documents.append({"Statement": [
                {"Effect": "Allow", "Action": AWS_MANAGED[name], "Resource": "*"}
            ]})
        for resource in self.resources.values():
            if resource["Type"] not in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
                continue
            if {"Ref": role_id} in as_list(resource["Properties"].get("Roles")) and self.active(resource):
                documents.append(resource["Properties"]["PolicyDocument"])
        statements = []
        for document in documents:
            for statement in as_list(self.resolver.resolve(document).get("Statement")):
                statements.append(statement)
        return role_id, statements

    def platform_needs(self, function_id):
        """What Lambda does with the function's role: (action, resource, why)."""
        needs = []
        function = self.resources[function_id]["Properties"]
        for logical_id, resource in self.resources.items():
            if resource["Type"] != "AWS::Lambda::EventSourceMapping" or not self.active(resource):
                continue
            properties = resource["Properties"]
            if properties.get("FunctionName") != {"Ref": function_id}:
                continue
            source = self.resolver.resolve(properties["EventSourceArn"])
            why = f"event source {logical_id}"
            if ":sqs:" in source:
                for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"):
                    needs.append((action, source, why))
            elif ":dynamodb:" in source:
                for action in ("dynamodb:DescribeStream", "dynamodb:GetRecords",
                               "dynamodb:GetShardIterator", "dynamodb:ListStreams"):
                    needs.append((action, source, why))
            else:
                raise CheckError(f"{logical_id}: an event source this check does not know: {source}")
            destination = properties.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
            if destination:
                needs.extend(self.send_to(self.resolver.resolve(destination), why + " on failure"))
        for resource in self.resources.values():
            if resource["Type"] != "AWS::Lambda::EventInvokeConfig" or not self.active(resource):
                continue
            properties = resource["Properties"]
            if properties.get("FunctionName") != {"Ref": function_id}:
                continue
            for outcome in ("OnSuccess", "OnFailure"):
                destination = properties.get("DestinationConfig", {}).get(outcome, {}).get("Destination")
                if destination:
                    needs.extend(self.send_to(self.resolver.resolve(destination), f"invoke {outcome}"))
        logging = function.get("LoggingConfig", {})
        if "LogGroup" in logging:
            group = self.resolver.resolve(logging["LogGroup"])
        else:
            group = f"/aws/lambda/{self.resolver.name(function_id)}"
            needs.append(("logs:CreateLogGroup",
                          f"arn:{PARTITION}:logs:{REGION}:{ACCOUNT}:log-group:{group}:*", "its logs"))
        stream = f"arn:{PARTITION}:logs:{REGION}:{ACCOUNT}:log-group:{group}:log-stream:*"
        needs.append(("logs:CreateLogStream", stream, "its logs"))
        needs.append(("logs:PutLogEvents", stream, "its logs"))
        if function.get("TracingConfig", {}).get("Mode") == "Active":
            for action in ("xray:PutTraceSegments", "xray:PutTelemetryRecords"):
                needs.append((action, "*", "active tracing"))
        return needs

    @staticmethod
    def send_to(arn, why):
        if ":sqs:" in arn:
            return [("sqs:SendMessage", arn, why)]
        if ":sns:" in arn:
            return [("sns:Publish", arn, why)]
        if ":lambda:" in arn:
            return [("lambda:InvokeFunction", arn, why)]
        if ":events:" in arn:
            return [("events:PutEvents", arn, why)]
        raise CheckError(f"a destination this check does not know: {arn}")

    # Local names to the template's resources.

    def variables(self):
        """Variable -> what the template sets it to: ("resource", id) or ("parameter", name)."""
        if getattr(self, "_variables", None) is not None:
            return self._variables
        targets = self._variables = {}
        for logical_id in self.functions.values():
            environment = self.resources[logical_id]["Properties"].get("Environment", {})
            for variable, value in environment.get("Variables", {}).items():
                if isinstance(value, dict) and "Ref" in value:
                    name = value["Ref"]
                    kind = "resource" if name in self.resources else "parameter"
                    targets.setdefault(variable, set()).add((kind, name))
        for variable, logical_id in UNREAD_VARIABLES.items():
            targets.setdefault(variable, set()).add(("resource", logical_id))
        return targets

    def arn(self, resource, names):
        """The ARN a recorded resource (`table/{name}`, ...) stands for; None when its name
        cannot be placed."""
        kind, _, rest = resource.partition("/")
        name, _, tail = rest.partition("/")
        targets = {
            target
            for variable, local in names.items() if name in local
            for target in self.variables().get(variable, ())
        }
        if len(targets) != 1:
            return None
        (target_kind, target), = targets
        if target_kind == "parameter":
            value = self.resolver.parameters[target]
            if kind == "connect":
                arn = f"arn:{PARTITION}:connect:{REGION}:{ACCOUNT}:instance/{value}"
                return f"{arn}/{tail}" if tail else arn
            return None
        if kind == "table":
            arn = self.resolver.get_att(target, "Arn")
            return f"{arn}/{tail}" if tail else arn
        if kind == "bucket":
            return f"{self.resolver.get_att(target, 'Arn')}/{tail}"
        if kind in ("queue", "event-bus"):
            return self.resolver.get_att(target, "Arn")
        return None


# ---------------------------------------------------------------------------- evaluating

# The DynamoDB actions whose requests name leading keys (dynamodb:LeadingKeys); any other
# action's request has none, which ForAllValues: reads as true and ForAnyValue: as false.
KEYED_ACTIONS = {
    f"dynamodb:{name}" for name in (
        "GetItem", "BatchGetItem", "Query", "Scan", "PutItem", "UpdateItem", "DeleteItem",
        "BatchWriteItem", "ConditionCheckItem", "PartiQLSelect", "PartiQLInsert",
        "PartiQLUpdate", "PartiQLDelete",
    )
}
# The writes whose key prefixes must be the function's own (OVERBROAD).
WRITE_ACTIONS = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
                 "dynamodb:BatchWriteItem")
# The condition operators evaluated on dynamodb:LeadingKeys: (glob?, negated?).
STRING_OPERATORS = {
    "StringLike": (True, False),
    "StringEquals": (False, False),
    "StringNotLike": (True, True),
    "StringNotEquals": (False, True),
}
LEADING_KEYS = "dynamodb:leadingkeys"

# How the keys a recorded prefix stands for meet a list of values.
ALL, SOME, NONE = "all", "some", "none"


def _matches(patterns, value):
    return any(fnmatch.fnmatchcase(value.lower(), str(p).lower()) for p in as_list(patterns))


def _covers(statement, action, resource):
    """Whether the statement's actions and resources take in the action on the resource (its
    Condition aside)."""
    if "Action" in statement:
        if not _matches(statement["Action"], action):
            return False
    elif _matches(statement.get("NotAction"), action):
        return False
    if "Resource" in statement:
        return _matches(statement["Resource"], resource)
    return not _matches(statement.get("NotResource"), resource)


def request_keys(action, keys):
    """The leading key prefixes of a request, as conditions see them: none for an action that
    names no keys, None (unknown) for one whose log line did not say."""
    if action.lower() not in {a.lower() for a in KEYED_ACTIONS}:
        return frozenset()
    return None if keys is None else frozenset(keys)


def _open(prefix):
    """Whether a recorded prefix stands for every key beginning with it (it ends at a `#`)
    rather than for that whole value."""
    return "#" in prefix


def _closure(patterns, states):
    """IAM's glob (`*` any run, `?` one character, nothing else special) as an automaton: a
    state is (pattern, position); a `*` may match nothing."""
    states, todo = set(states), list(states)
    while todo:
        index, position = todo.pop()
        pattern = patterns[index]
        if position < len(pattern) and pattern[position] == "*":
            following = (index, position + 1)
            if following not in states:
                states.add(following)
                todo.append(following)
    return frozenset(states)


def _step(patterns, states, character):
    following = set()
    for index, position in states:
        pattern = patterns[index]
        if position < len(pattern):
            if pattern[position] == "*":
                following.add((index, position))
            elif pattern[position] in ("?", character):
                following.add((index, position + 1))
    return _closure(patterns, following)


def _accepts(patterns, states):
    return any(position == len(patterns[index]) for index, position in states)


def _glob_meets(prefix, patterns):
    """ALL when every key the prefix stands for matches one of the glob patterns, NONE when none
    does, SOME otherwise."""
    states = _closure(patterns, {(index, 0) for index in range(len(patterns))})
    for character in prefix:
        states = _step(patterns, states, character)
    if not _open(prefix):
        return ALL if _accepts(patterns, states) else NONE
    if not states:
        return NONE  # No pattern can go on from the prefix.
    # Every extension accepted: every state set reachable from here accepts. The characters of
    # the patterns, and one of none of them, stand for every character.
    alphabet = {c for pattern in patterns for c in pattern if c not in "*?"} | {"\0"}
    seen, todo = {states}, [states]
    while todo:
        current = todo.pop()
        if not _accepts(patterns, current):
            return SOME
        for character in alphabet:
            following = _step(patterns, current, character)
            if following not in seen:
                seen.add(following)
                todo.append(following)
    return ALL


def _literal_meets(prefix, values):
    if not _open(prefix):
        return ALL if prefix in values else NONE
    # Infinitely many keys begin with it: some may equal a value, never all.
    return SOME if any(value.startswith(prefix) for value in values) else NONE


def _and(values):
    values = list(values)
    if any(value is False for value in values):
        return False
    return True if all(value is True for value in values) else None


def unevaluable(condition):
    """The parts (`operator key`) of a Condition this check cannot evaluate."""
    parts = []
    if not condition:
        return parts
    if not isinstance(condition, dict):
        return [f"Condition {condition!r}"]
    for operator, tests in condition.items():
        qualifier, _, name = operator.rpartition(":")
        if not isinstance(tests, dict):
            parts.append(f"{operator} {tests!r}")
            continue
        for key, values in tests.items():
            texts = as_list(values)
            if (qualifier not in ("ForAllValues", "ForAnyValue") or name not in STRING_OPERATORS
                    or key.lower() != LEADING_KEYS
                    or not all(isinstance(v, str) and "${" not in v for v in texts)):
                parts.append(f"{operator} {key}")
    return parts


def evaluate(condition, keys):
    """A Condition's value for a request whose leading key prefixes are `keys` (None: unknown):
    True when proven, False when disproven, None when neither; and what kept it from True."""
    if not condition:
        return True, []
    cannot = unevaluable(condition)
    if cannot:
        return None, [f"cannot evaluate {part}" for part in cannot]
    if keys is None:
        return None, ["the log records no keys for it, so dynamodb:LeadingKeys is unknown"]
    results, why = [], []
    for operator, tests in condition.items():
        qualifier, _, name = operator.rpartition(":")
        glob, negated = STRING_OPERATORS[name]
        for key, values in tests.items():
            values = [str(v) for v in as_list(values)]
            meets = []
            for prefix in sorted(keys):
                met = _glob_meets(prefix, values) if glob else _literal_meets(prefix, values)
                if negated:
                    met = {ALL: NONE, NONE: ALL, SOME: SOME}[met]
                meets.append(met)
            if qualifier == "ForAllValues":
                result = (False if NONE in meets
                          else True if all(m == ALL for m in meets) else None)
            else:
                result = (True if ALL in meets
                          else False if all(m == NONE for m in meets) else None)
            results.append(result)
            if result is not True:
                shown = ", ".join(sorted(keys)) or "none"
                why.append(f"{operator} {key} {values} {'excludes' if result is False else 'is not proven for'}"
                           f" the keys {shown}")
    value = _and(results)
    return value, ([] if value is True else why)


def label(statement):
    """How a statement is named: its Sid, else its actions and resources."""
    if statement.get("Sid"):
        return statement["Sid"]
    actions = ",".join(str(a) for a in as_list(statement.get("Action", statement.get("NotAction"))))
    resources = ",".join(str(r) for r in as_list(statement.get("Resource", statement.get("NotResource"))))
    return f"[{actions} on {resources}]"


def decide(statements, action, resource, keys=None):
    """IAM's answer for an identity policy, for a request whose leading keys are `keys` (as
    the log has them: None unknown): an explicit Deny wins unless its condition is disproven,
    then any Allow whose condition is proven. Answers (allowed, why not)."""
    keys = request_keys(action, keys)
    allow, why = False, []
    for statement in statements:
        if not _covers(statement, action, resource):
            continue
        value, notes = evaluate(statement.get("Condition"), keys)
        if statement.get("Effect") == "Deny":
            if value is not False:
                return False, [f"Deny {label(statement)}" + (f" ({'; '.join(notes)})" if notes else "")]
        elif statement.get("Effect") == "Allow":
            if value is True:
                allow = True
            else:
                why.append(f"{label(statement)}: {'; '.join(notes)}")
    if allow:
        return True, []
    return False, why or ["no statement allows it"]


def allowed(statements, action, resource, keys=None):
    """Whether IAM allows it (see `decide`)."""
    return decide(statements, action, resource, keys)[0]


def _shown(keys):
    if keys is None:
        return " keys unknown"
    return f" keys [{', '.join(sorted(keys))}]" if keys else ""


class Findings:
    """What the check found. Each list holds tuples, the first item the function."""

    FAILING = ("denied", "unplaced", "unevaluated", "not_run", "unexercised", "overbroad", "stale")

    def __init__(self):
        self.denied = []       # (function, action, arn, keys, why, role)
        self.unplaced = []     # (function, action, resource, why)
        self.unevaluated = []  # (function, statement label, part)
        self.not_run = []      # (function,)
        self.unexercised = []  # (function, statement label, statement)
        self.overbroad = []    # (function, action, table, prefix)
        self.stale = []        # (entry, why)
        self.excused = []      # (kind, finding, reason)
        self.idle = []         # (function, statement label, action, resource): information
        self.counts = {}       # function -> actions its code needed

    def failures(self):
        return sum(len(getattr(self, kind)) for kind in self.FAILING)


def check(stack, accesses, names, allowlist=()):
    """What the roles refuse of what the functions needed, and what they allow beyond it (see
    the module). `accesses` are (function, action, resource[, keys]) as `read_log` has them;
    `allowlist` the entries of `read_allowlist`."""
    findings = Findings()
    needed = {function: set() for function in stack.functions}
    ran = set()
    universe = {}  # table ARN -> every prefix a line names on it
    for access in sorted(accesses, key=lambda a: (a[:3], len(a) > 3 and a[3] is not None,
                                                   a[3] if len(a) > 3 and a[3] else ())):
        function, action, resource = access[:3]
        keys = tuple(sorted(access[3])) if len(access) > 3 and access[3] is not None else None
        ran.add(function)
        if function not in stack.functions:
            findings.unplaced.append((function, action, resource, "no such function in the template"))
            continue
        arn = stack.arn(resource, names)
        if arn is None:
            findings.unplaced.append((function, action, resource, "no variable of the template names it"))
            continue
        needed[function].add((action, arn, keys, "its code, under the tests"))
        if action.startswith("dynamodb:") and keys and ":table/" in arn and "/" not in arn.split(":table/", 1)[1]:
            universe.setdefault(arn, set()).update(keys)
    for function, logical_id in sorted(stack.functions.items()):
        role_id, statements = stack.statements(logical_id)
        needs = sorted(needed[function], key=lambda n: (n[0], n[1], n[2] is not None, n[2] or ()))
        needs += [(action, arn, (), why) for action, arn, why in stack.platform_needs(logical_id)]
        findings.counts[function] = len(needed[function])
        for statement in statements:
            for part in unevaluable(statement.get("Condition")):
                findings.unevaluated.append((function, label(statement), part))
        for action, arn, keys, why in needs:
            ok, why_not = decide(statements, action, arn, keys)
            if not ok:
                findings.denied.append((function, action, arn, keys, f"{why}; {' | '.join(why_not)}", role_id))
        if function not in ran:
            findings.not_run.append((function,))
            continue
        for statement in statements:
            if statement.get("Effect") != "Allow":
                continue
            granting = [
                (action, arn) for action, arn, keys, _ in needs
                if _covers(statement, action, arn)
                and evaluate(statement.get("Condition"), request_keys(action, keys))[0] is True
            ]
            if not granting:
                findings.unexercised.append((function, label(statement), statement))
                continue
            for action in as_list(statement.get("Action")):
                for pattern in as_list(statement.get("Resource", "*")):
                    single = {"Effect": "Allow", "Action": action, "Resource": pattern}
                    if not any(_covers(single, a, r) for a, r in granting):
                        findings.idle.append((function, label(statement), action, pattern))
        for table, prefixes in sorted(universe.items()):
            for action in WRITE_ACTIONS:
                written = set()
                for need_action, arn, keys, _ in needs:
                    if need_action == action and arn == table and keys:
                        written.update(keys)
                for prefix in sorted(prefixes - written):
                    if decide(statements, action, table, (prefix,))[0]:
                        findings.overbroad.append((function, action, table, prefix))
    _excuse(findings, stack, allowlist)
    return findings


# ---------------------------------------------------------------------------- the allow-list

ENTRY_SHAPES = {
    frozenset({"function", "reason"}): "not_run",
    frozenset({"function", "sid", "reason"}): "unexercised",
    frozenset({"function", "action", "resource", "reason"}): "unexercised",
    frozenset({"function", "action", "prefix", "reason"}): "overbroad",
}


def read_allowlist(path):
    """The allow-list's entries: a YAML (or JSON) list of mappings, each of one shape of
    ENTRY_SHAPES with a reason. A missing file is an empty list."""
    path = Path(path)
    if not path.exists():
        return []
    entries = yaml.safe_load(path.read_text()) or []
    if isinstance(entries, dict) and "entries" in entries:
        entries = entries["entries"] or []
    if not isinstance(entries, list):
        raise CheckError(f"{path}: not a list of entries")
    return entries


def _entry_kind(entry):
    if not isinstance(entry, dict):
        return None
    kind = ENTRY_SHAPES.get(frozenset(entry))
    if kind is None or not all(isinstance(v, str) and v.strip() for v in entry.values()):
        return None
    return kind


def _excuses(entry, kind, finding):
    if entry["function"] != finding[0]:
        return False
    if kind == "not_run":
        return True
    if kind == "unexercised":
        statement = finding[2]
        if "sid" in entry:
            return statement.get("Sid") == entry["sid"]
        return (not statement.get("Sid")
                and entry["action"] in [str(a) for a in as_list(statement.get("Action"))]
                and any(entry["resource"] == str(r) or fnmatch.fnmatchcase(str(r), entry["resource"])
                        for r in as_list(statement.get("Resource"))))
    if kind == "overbroad":
        return entry["action"].lower() == finding[1].lower() and entry["prefix"] == finding[3]
    return False


def _excuse(findings, stack, allowlist):
    """Moves the findings an entry excuses to `excused`; an entry that excuses none is stale."""
    for entry in allowlist:
        kind = _entry_kind(entry)
        if kind is None:
            findings.stale.append((entry, "malformed: one of {function, reason}, {function, sid,"
                                   " reason}, {function, action, resource, reason}, {function,"
                                   " action, prefix, reason}, each a text"))
            continue
        found = getattr(findings, kind)
        matching = [finding for finding in found if _excuses(entry, kind, finding)]
        if not matching:
            findings.stale.append((entry, "excuses nothing the check found"))
            continue
        for finding in matching:
            found.remove(finding)
            findings.excused.append((kind, finding, entry["reason"]))


def _entry_text(entry):
    if not isinstance(entry, dict):
        return repr(entry)
    return " ".join(f"{k}={v}" for k, v in entry.items() if k != "reason")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--template", default=str(root / "template.yaml"))
    parser.add_argument("--log", required=True, help="the action log (AWS_ACTION_LOG)")
    parser.add_argument("--allowlist", default=str(Path(__file__).resolve().parent / "iam_allowlist.yaml"),
                        help="what the roles may allow that no test needs, with the reasons")
    args = parser.parse_args(argv)
    try:
        accesses, names = read_log(args.log)
        if not accesses:
            raise CheckError(f"{args.log} records no action: were the tests run with AWS_ACTION_LOG set?")
        stack = Stack(load_template(args.template))
        findings = check(stack, accesses, names, read_allowlist(args.allowlist))
    except CheckError as error:
        print(f"iam_check: {error}", file=sys.stderr)
        return 1
    print("iam_check: actions recorded per function: " + ", ".join(
        f"{function} {count}" for function, count in findings.counts.items()))
    if findings.idle:
        print("iam_check: allowed by a statement the tests exercise, but nothing needed it"
              " (function statement action resource):")
        for function, name, action, resource in findings.idle:
            print(f"  {function} {name} {action} {resource}")
    if findings.excused:
        print("iam_check: excused by the allow-list:")
        for kind, finding, reason in findings.excused:
            what = {
                "not_run": lambda f: f"{f[0]} (not run)",
                "unexercised": lambda f: f"{f[0]} {f[1]} (unexercised)",
                "overbroad": lambda f: f"{f[0]} {f[1]} {f[3]} (prefix never written)",
            }[kind](finding)
            print(f"  {what}: {reason}")
    for function, action, resource, why in findings.unplaced:
        print(f"iam_check: UNPLACED {function} {action} {resource}: {why}")
    for function, action, resource, keys, why, role in findings.denied:
        print(f"iam_check: DENIED {function} {action} {resource}{_shown(keys)} ({why}; role {role})")
    for function, name, part in findings.unevaluated:
        print(f"iam_check: UNEVALUATED {function} {name}: {part} (the statement allows nothing here)")
    for (function,) in findings.not_run:
        print(f"iam_check: NOT RUN {function}: no test ran its code (no line of the log)")
    for function, name, _ in findings.unexercised:
        print(f"iam_check: UNEXERCISED {function} {name}: allowed none of its needs")
    for function, action, table, prefix in findings.overbroad:
        print(f"iam_check: OVERBROAD {function} {action} {table} {prefix}: its role allows it,"
              " its code never wrote that prefix")
    for entry, why in findings.stale:
        print(f"iam_check: STALE allow-list entry {_entry_text(entry)}: {why}")
    if findings.failures():
        print("iam_check: " + ", ".join(
            f"{len(getattr(findings, kind))} {kind.replace('_', ' ')}" for kind in Findings.FAILING
        ), file=sys.stderr)
        return 1
    print(f"iam_check: every action of {len(findings.counts)} functions is allowed by its role,"
          " and each role allows no more than they need but for the allow-list")
    return 0


if __name__ == "__main__":
    sys.exit(main())
