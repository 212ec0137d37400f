"""The least-privilege check of `make test`, both ways (D29, D32): every AWS action a function
performed under the tests is one that its role in template.yaml allows, and so is everything
Lambda does with that role for it; and every role of the template allows nothing more than
that, no action and no resource wider than the tests exercised, but for what the allow-list
(scripts/iam_allowlist.yaml) names with its reason.

    .venv/bin/python scripts/iam_check.py --log .local/aws-actions.jsonl \
        [--template template.yaml] [--allowlist scripts/iam_allowlist.yaml]

What it compares:

- Needed, by role. What the code of its functions asked of AWS under `cargo test`, the contract
  check and the console's test: the action log the functions' SDK clients write when
  AWS_ACTION_LOG names a file (shared/adapters/src/aws/actions.rs), one line per function, IAM
  action and resource (`table/t-01j...`, `bucket/b-01j.../exports/*`, `queue/b-01j...-dial`,
  `connect/{instance}/queue/{id}`, ...), for DynamoDB with `keys`, the leading (partition) key
  prefixes the request named (each value up to and including its first `#`, the whole value
  without one: `T#`, `CALL#`, `DIALER`; none for a Scan), and lines naming which variable gave
  each local name (`{"names": {"TABLE_NAME": "t-01j...", ...}}`). A local name stands for the
  template's resource that the template sets that variable to (`TABLE_NAME: !Ref Table`), so it
  becomes that resource's ARN; a Connect resource becomes the ARN of the resource type the
  Service Authorization Reference gives its action (CONNECT_ACTIONS: a contact of the instance
  for StartOutboundVoiceContact, the account's `phone-number/*` for ListPhoneNumbersV2, ...).
  What Lambda itself does with the role, read from the template, for every Lambda function
  that runs with it (the console's custom resources' too): receive and delete from the queues
  of its SQS event sources, read the streams of its DynamoDB ones, send to their on-failure
  destinations, write to its log group, and send traces when tracing is active. And what the
  allow-list says the code of a role does that no test records (the console's custom resources
  run in CloudFormation only), which counts as needed.
- Allowed, by role: every AWS::IAM::Role of the template, the ones SAM makes for its functions
  too. Its statements, as CloudFormation will have them: SAM's transform (samtranslator, the
  version `sam` deploys with) applied first, so the roles SAM generates, its policy templates
  (DynamoDBCrudPolicy, SQSSendMessagePolicy, ...) and the AWS managed policies it attaches for
  event sources are what is evaluated; then `!Ref`, `!GetAtt`, `!Sub`, `!If`, ... resolved to
  the ARNs of the stack's own resources in a made-up account and region, with the parameters'
  defaults, a console user pool, and each DialProvider in turn (CONFIGURATIONS: the log does
  not say which provider a test ran, so a need is denied when no configuration allows it, and
  anything else is found when one configuration has it). A statement allows an action on a
  resource when both match its patterns (`*` and `?` as IAM reads them) and its Condition is
  proven true; an explicit Deny wins unless its Condition is proven false.
- Conditions. `dynamodb:LeadingKeys` under ForAllValues: or ForAnyValue: with StringLike,
  StringEquals, StringNotLike or StringNotEquals, as IAM reads them (ForAllValues over no keys
  is true, ForAnyValue over none false). A recorded prefix `P#` stands for every key beginning
  with it: `CALL#*` covers `CALL#`, `T#acme#*` does not cover `T#`. An action that names keys
  whose line has no `keys` (an older log) has unknown keys, which prove no such condition.
  Any other condition (key or operator) is not evaluated: its statement allows nothing.
- Breadth. A resource a statement names may be no wider than a resource it allows a need on
  (`widest`): that resource itself, or every resource of its kind under the same parent when
  the template cannot know which (the table's indexes and streams, the instance's queues,
  flows and contacts, a log group's streams). `table/*` for one table, `instance/{id}/*` for
  its queues, or `*`, is wider.

Fails (exit 1), one line each, naming the function (or the role, when no function the log
records runs with it), the role, the statement (its Sid, else its actions and resources) and
the action or resource, on:

- DENIED: a needed action its role does not allow, saying why (no statement, a condition not
  met, the keys unknown, a condition it cannot evaluate).
- UNPLACED: a recorded function or name it cannot place in the template, or a Connect
  resource recorded as a kind the Reference does not give its action.
- UNEVALUATED: a statement with a condition it cannot evaluate.
- MISNAMED: a Connect action of a statement that CONNECT_ACTIONS does not know, or a resource
  of a statement with Connect actions that is no resource type the Service Authorization
  Reference gives them (`instance/{id}` or `instance/{id}/*` for DescribeQueue, whose resource
  is `instance/{id}/queue/{queue}`; an instance's `phone-number/*`, where phone numbers are the
  account's).
- NOT RUN: a function of the template with no line in the log.
- UNEXERCISED: an Allow statement that allowed none of its role's needs.
- EXTRA: an action of an exercised statement that allowed none of its needs (an action added
  to a statement the tests use), or one named by a wildcard.
- WIDE: a resource of an exercised statement that allowed none of its needs, or one wider
  than what it allowed (see Breadth); NotAction and NotResource.
- READ, UNUSED: a resource of the stack or of any role's needs (a table, an index, a queue, a
  bucket's prefix, a Connect queue) that the role allows an action on that its needs never did
  there, a read (READ) or not (UNUSED), where no action or resource already found allows it:
  what a statement allows across its actions and resources (Query on a table only read item
  by item).
- OVERBROAD: a DynamoDB write action (PutItem, UpdateItem, DeleteItem, BatchWriteItem) that a
  function's role allows on a key prefix its code never wrote with that action, among the
  prefixes any function's line names on that table.
- STALE: an allow-list entry that excuses none of the above (so the list cannot rot): one that
  is malformed, names no function or role of the template, names an access the log records
  anyway, or changes nothing the check finds.

The allow-list excuses NOT RUN (`{function, reason}`) and OVERBROAD (`{function, action,
prefix, reason}`), and names the accesses no test records (`{function, action, resource,
reason}`, `{role, action, resource, reason}`: one action, no wildcard, one resource, not `*`,
written as an Fn::Sub of the template), which count as needs: so a role can still allow
nothing broader than them. Never a denied, unplaced, unevaluated or misnamed line. It prints
what it excused.
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

# The configurations the check evaluates the template in, beyond PARAMETERS: each provider of
# DialProvider, whose statements differ (Amazon Connect's actions; the simulated provider's
# reports on CallEventsQueue), as the log does not say which one a test ran; each with a user
# pool for the console, so that its custom resource's statement on the pool's app client is
# evaluated too (the pool in the check's region, as its id says).
CONSOLE_POOL = {"CognitoUserPoolId": f"{REGION}_CheckPool"}
CONFIGURATIONS = ({"DialProvider": "amazon-connect", **CONSOLE_POOL},
                  {"DialProvider": "simulated", **CONSOLE_POOL})

# Amazon Connect's resource types, as the Service Authorization Reference ("Actions, resources,
# and condition keys for Amazon Connect") names them, by the path after
# arn:${Partition}:connect:${Region}:${Account}:. A phone number is the account's, not an
# instance's.
CONNECT_RESOURCE_TYPES = {
    "instance": "instance/${InstanceId}",
    "contact": "instance/${InstanceId}/contact/${ContactId}",
    "contact-flow": "instance/${InstanceId}/contact-flow/${ContactFlowId}",
    "queue": "instance/${InstanceId}/queue/${QueueId}",
    "routing-profile": "instance/${InstanceId}/routing-profile/${RoutingProfileId}",
    "phone-number": "phone-number/${PhoneNumberId}",
    "wildcard-phone-number": "phone-number/*",
}
# The resource types the Reference gives each Connect action the service uses (its required
# ones, `contact*` and the like). An action missing here is one the check cannot place.
CONNECT_ACTIONS = {
    "connect:StartOutboundVoiceContact": ("contact",),
    "connect:DescribeContact": ("contact",),
    "connect:GetContactAttributes": ("contact",),
    "connect:DescribeContactFlow": ("contact-flow",),
    "connect:DescribeQueue": ("queue",),
    "connect:GetCurrentMetricData": ("queue", "routing-profile"),
    "connect:ListPhoneNumbersV2": ("wildcard-phone-number",),
    "connect:DescribePhoneNumber": ("phone-number",),
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
            "AWS::SecretsManager::Secret": "Name",
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
        if kind == "AWS::SecretsManager::Secret":
            # Its ARN, which ends in six characters Secrets Manager adds to the name.
            return f"arn:{PARTITION}:secretsmanager:{REGION}:{ACCOUNT}:secret:{name}-AbCdEf"
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
    """The roles of a translated template: their statements, the functions that run with each,
    and what Lambda needs of them."""

    def __init__(self, sam_template, overrides=None):
        overrides = {**PARAMETERS, **(overrides or {})}
        self.sam = sam_template
        self.cfn = translate(sam_template, {
            name: value for name, value in overrides.items()
            if name in sam_template.get("Parameters", {})
        })
        self.resolver = Resolver(self.cfn, overrides)
        self.resources = self.cfn["Resources"]
        self.functions = {}  # binary name -> logical id: the functions whose code the log records
        for logical_id, resource in self.sam["Resources"].items():
            if not isinstance(resource, dict) or resource.get("Type") != "AWS::Serverless::Function":
                continue
            binary = (resource.get("Metadata", {}).get("BuildProperties", {}).get("Binary")
                      or logical_id)
            self.functions[binary] = logical_id

    def active(self, resource):
        condition = resource.get("Condition")
        return condition is None or self.resolver.condition(condition)

    def roles(self):
        """Every role of the stack (AWS::IAM::Role, the ones SAM makes for its functions too)
        that the check's parameters create."""
        return [logical_id for logical_id, resource in self.resources.items()
                if resource["Type"] == "AWS::IAM::Role" and self.active(resource)]

    def lambdas(self, role_id):
        """The stack's Lambda functions (logical ids) that run with the role."""
        return [logical_id for logical_id, resource in self.resources.items()
                if resource["Type"] == "AWS::Lambda::Function" and self.active(resource)
                and self.role_of(logical_id) == role_id]

    def role_of(self, function_id):
        role = self.resources[function_id]["Properties"]["Role"]
        if isinstance(role, dict) and "Fn::GetAtt" in role:
            attribute = role["Fn::GetAtt"]
            logical_id = attribute[0] if isinstance(attribute, list) else attribute.split(".")[0]
            return logical_id
        raise CheckError(f"{function_id}: its role is not one of the stack's: {role}")

    def statements(self, function_id):
        """The role of a function and every statement of it (see `role_statements`)."""
        role_id = self.role_of(function_id)
        return role_id, self.role_statements(role_id)

    def role_statements(self, role_id):
        """Every statement of the role: inline, managed (the stack's and AWS's), and the stack's
        policies attached to it."""
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
                raise CheckError(f"{role_id}: unknown managed policy {arn}")
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
        return statements

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

    def place(self, action, resource, names):
        """The ARN a recorded resource (`table/{name}`, `connect/{instance}/queue/{id}`, ...) of
        an action stands for, and None with why when it cannot be placed."""
        kind, _, rest = resource.partition("/")
        # A secret is recorded by the ARN it was read by, which may hold a `/`.
        name, _, tail = (rest, "", "") if kind == "secret" else rest.partition("/")
        targets = {
            target
            for variable, local in names.items() if name in local
            for target in self.variables().get(variable, ())
        }
        if len(targets) != 1:
            return None, ("no variable of the template names it" if not targets
                          else f"variables of several resources name it: {sorted(targets)}")
        (target_kind, target), = targets
        if target_kind == "parameter":
            if kind == "connect":
                return connect_arn(action, self.resolver.parameters[target], tail)
            return None, f"{kind} names no resource of the template"
        if kind == "table":
            arn = self.resolver.get_att(target, "Arn")
            return (f"{arn}/{tail}" if tail else arn), None
        if kind == "bucket":
            return f"{self.resolver.get_att(target, 'Arn')}/{tail}", None
        if kind in ("queue", "event-bus"):
            return self.resolver.get_att(target, "Arn"), None
        if kind == "secret":
            return self.resolver.ref(target), None
        return None, f"a resource of a kind this check does not place ({kind})"

    def own_resources(self):
        """The stack's own resources an action may read or write, as a grant names them: each
        table (and every index and stream of it), queue, bucket's objects and secret."""
        arns = []
        for logical_id, resource in self.resources.items():
            if not self.active(resource):
                continue
            if resource["Type"] == "AWS::DynamoDB::Table":
                table = self.resolver.get_att(logical_id, "Arn")
                arns += [table, f"{table}/index/*", f"{table}/stream/*"]
            elif resource["Type"] == "AWS::SQS::Queue":
                arns.append(self.resolver.get_att(logical_id, "Arn"))
            elif resource["Type"] == "AWS::S3::Bucket":
                arns.append(f"{self.resolver.get_att(logical_id, 'Arn')}/*")
            elif resource["Type"] == "AWS::SecretsManager::Secret":
                arns.append(self.resolver.ref(logical_id))
        return arns


def stacks(template):
    """The template as the check evaluates it: a Stack for each of CONFIGURATIONS (one, when the
    template has none of their parameters)."""
    parameters = template.get("Parameters", {})
    configurations = []
    for overrides in CONFIGURATIONS:
        kept = {name: value for name, value in overrides.items() if name in parameters}
        if kept not in configurations:
            configurations.append(kept)
    return [Stack(template, overrides) for overrides in configurations]


def _connect_prefix():
    return f"arn:{PARTITION}:connect:{REGION}:{ACCOUNT}:"


def _connect_types(action):
    for known, types in CONNECT_ACTIONS.items():
        if known.lower() == action.lower():
            return types
    return None


def connect_arn(action, instance, tail):
    """The ARN of what a Connect action of the instance acts on, as the Service Authorization
    Reference names its resource type, from the recorded `{kind}/{id}` (`queue/{id}`,
    `contact/*`, `phone-number/*`; nothing for the instance itself). None, with why, for an action
    the check does not know or a kind that is not the action's."""
    types = _connect_types(action)
    if types is None:
        return None, (f"{action} is missing from CONNECT_ACTIONS: add the resource types the"
                      " Service Authorization Reference gives it")
    kind, _, identifier = tail.partition("/")
    for resource_type in types:
        path = CONNECT_RESOURCE_TYPES[resource_type]
        segments = path.split("/")
        own_kind = segments[-2] if len(segments) > 2 else ("" if resource_type == "instance" else segments[0])
        if kind != own_kind:
            continue
        path = path.replace("${InstanceId}", instance)
        path = re.sub(r"\$\{[A-Za-z]+\}", identifier or "*", path)
        return _connect_prefix() + path, None
    named = ", ".join(f"{t} ({_connect_prefix()}{CONNECT_RESOURCE_TYPES[t]})" for t in types)
    return None, (f"recorded on {kind or 'the instance'}, but the Service Authorization Reference"
                  f" gives {action} the resource type {named}")


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


# ---------------------------------------------------------------------------- breadth


def _within(pattern, bound):
    """Whether every resource the pattern names is one the bound names (IAM's globs, `*` any
    run, `?` one character; case aside). Sound, not complete: a `*` or `?` of the pattern is
    taken in only by a `*` of the bound, so a pattern the bound takes in only by a coincidence
    of its characters is said not to be within it."""
    pattern, bound = pattern.lower(), bound.lower()
    seen = {}

    def within(i, j):
        if (i, j) in seen:
            return seen[i, j]
        if j == len(bound):
            answer = i == len(pattern)
        elif bound[j] == "*":
            answer = within(i, j + 1) or (i < len(pattern) and within(i + 1, j))
        elif i == len(pattern) or pattern[i] in "*?":
            answer = False
        else:
            answer = bound[j] in ("?", pattern[i]) and within(i + 1, j + 1)
        seen[i, j] = answer
        return answer

    return within(0, 0)


def widest(arn):
    """The broadest pattern a grant may name for a resource a need names: that resource; for one
    named under a parent by its kind (`table/{t}/index/{i}`, `table/{t}/stream/{label}`,
    `instance/{id}/queue/{q}`, `instance/{id}/contact-flow/{f}`), every one of its kind under that
    parent, as the template cannot know which (the operator's queues and flows, the table's
    streams); for a log stream, every stream of its log group."""
    fields = arn.split(":", 5)
    if len(fields) < 6:
        return arn
    head, rest = ":".join(fields[:5]), fields[5]
    if fields[2] == "logs":
        group = re.match(r"(log-group:[^:]+)(:|$)", rest)
        return f"{head}:{group.group(1)}:*" if group else arn
    segments = rest.split("/")
    if len(segments) >= 4 and len(segments) % 2 == 0:
        return f"{head}:{'/'.join(segments[:-1] + ['*'])}"
    return arn


# Actions that read (by the start of their names): what READ is about.
READ_VERBS = ("Get", "BatchGet", "Query", "Scan", "Describe", "List", "Receive",
              "ConditionCheck", "PartiQLSelect", "Select")


def is_read(action):
    return action.split(":", 1)[-1].startswith(READ_VERBS)


def _service(arn):
    fields = arn.split(":")
    return fields[2].lower() if len(fields) > 2 else ""


def _may_be_connect(pattern):
    """Whether a resource pattern may name a resource of Amazon Connect."""
    fields = str(pattern).split(":")
    return pattern == "*" or (len(fields) > 2 and fnmatch.fnmatchcase("connect", fields[2].lower()))


def _connect_bound(resource_type):
    """The pattern of every resource of a Connect resource type (its ids any)."""
    return _connect_prefix() + re.sub(r"\$\{[A-Za-z]+\}", "*", CONNECT_RESOURCE_TYPES[resource_type])


# DynamoDB's actions on a table's stream; the others act on the table (Query and Scan on an index
# too).
STREAM_ACTIONS = {"dynamodb:describestream", "dynamodb:getrecords", "dynamodb:getsharditerator",
                  "dynamodb:liststreams"}


def applies(action, resource):
    """Whether the action acts on resources of that kind at all (a queue's action on a queue, a
    Connect action on its resource types): the resources READ asks about."""
    if action.lower().startswith("connect:"):
        return any(_within(resource, _connect_bound(t)) for t in _connect_types(action) or ())
    if action.lower().startswith("dynamodb:"):
        stream, index = "/stream/" in resource, "/index/" in resource
        if action.lower() in STREAM_ACTIONS:
            return stream
        if action.lower() in ("dynamodb:query", "dynamodb:scan"):
            return not stream
        return not stream and not index
    return True


def misnamed(statement):
    """What of a statement's Connect actions and resources is not as the Service Authorization
    Reference names them: (action or resource, why) for each action the check does not know and
    each resource pattern that is no resource type of the statement's Connect actions."""
    actions = [str(a) for a in as_list(statement.get("Action")) if str(a).lower().startswith("connect:")]
    if not actions:
        return []
    found, types = [], set()
    for action in actions:
        known = _connect_types(action)
        if known is None:
            found.append((action, "missing from CONNECT_ACTIONS: add the resource types the Service"
                                  " Authorization Reference gives it"))
        else:
            types.update(known)
    if not types:
        return found
    bounds = {t: _connect_bound(t) for t in sorted(types)}
    for pattern in as_list(statement.get("Resource")):
        pattern = str(pattern)
        if not _may_be_connect(pattern) or any(_within(pattern, b) for b in bounds.values()):
            continue
        named = "; ".join(f"{t}: arn:${{Partition}}:connect:${{Region}}:${{Account}}:"
                          f"{CONNECT_RESOURCE_TYPES[t]}" for t in bounds)
        found.append((pattern, f"names no resource the Service Authorization Reference gives"
                               f" {', '.join(actions)} ({named})"))
    return found


def over_grants(statements, needs, resources):
    """What the Allow statements allow beyond the needs ((action, arn, keys, why)): statements
    that allow none (UNEXERCISED); actions of the others that allow none, or are wildcards
    (EXTRA); resources of them that allow none, or are wider than `widest` of every need they
    allow (WIDE); and, among `resources` (the stack's and every role's, as `widest` names them:
    {arn: the key prefixes the log names on it}), each resource an action of the statements
    applies to and is allowed on but no need did it on (READ for a read, UNUSED otherwise): what
    a statement allows across its actions and resources that none of its needs asks for (Query
    where only GetItem was done, on an index only queried). What an action or resource already
    found allows is not found again. Answers {kind: [finding]}, each finding (statement label,
    item, why[, statement])."""
    found = {"unexercised": [], "extra": [], "wide": [], "read": [], "unused": []}
    flagged = set()  # (statement index, action or pattern) already found, or (index, None)
    for index, statement in enumerate(statements):
        if statement.get("Effect") != "Allow":
            continue
        name = label(statement)
        if "NotAction" in statement or "NotResource" in statement:
            found["wide"].append((name, "NotAction" if "NotAction" in statement else "NotResource",
                                  "allows everything but what it names"))
            flagged.add((index, None))
            continue
        granting = [
            (action, arn) for action, arn, keys, _ in needs
            if _covers(statement, action, arn)
            and evaluate(statement.get("Condition"), request_keys(action, keys))[0] is True
        ]
        if not granting:
            found["unexercised"].append((name, None, "allowed none of its needs", statement))
            flagged.add((index, None))
            continue
        for action in as_list(statement.get("Action")):
            action = str(action)
            if "*" in action or "?" in action:
                why = "names actions by a wildcard"
            elif not any(_matches(action, a) for a, _ in granting):
                why = "allowed none of its needs"
            else:
                continue
            found["extra"].append((name, action, why))
            flagged.add((index, action.lower()))
        misnamed_patterns = {item for item, _ in misnamed(statement)}
        for pattern in as_list(statement.get("Resource")):
            pattern = str(pattern)
            covered = sorted({r for _, r in granting if _matches(pattern, r)})
            if not covered:
                why = "allowed none of its needs"
            elif not any(_within(pattern, widest(r)) for r in covered):
                why = f"wider than what it allowed: {', '.join(covered)}"
            else:
                continue
            flagged.add((index, pattern))
            if pattern not in misnamed_patterns:
                found["wide"].append((name, pattern, why))
    candidates = sorted({
        str(action) for statement in statements if statement.get("Effect") == "Allow"
        for action in as_list(statement.get("Action"))
        if "*" not in str(action) and "?" not in str(action)
    })
    for action in candidates:
        for resource, prefixes in sorted(resources.items()):
            if _service(resource) != action.split(":", 1)[0].lower() or not applies(action, resource):
                continue
            options = [()]
            if action.lower() in {a.lower() for a in KEYED_ACTIONS}:
                options += [(p,) for p in sorted(prefixes)]
            if not any(decide(statements, action, resource, keys)[0] for keys in options):
                continue
            if any(a.lower() == action.lower() and _within(resource, widest(r)) for a, r, _, _ in needs):
                continue
            allowing = [(index, s) for index, s in enumerate(statements)
                        if s.get("Effect") == "Allow" and _covers(s, action, resource)]
            if any((index, None) in flagged or (index, action.lower()) in flagged
                   or any((index, str(p)) in flagged for p in as_list(s.get("Resource"))
                          if _matches(p, resource))
                   for index, s in allowing):
                continue
            names = ", ".join(label(s) for _, s in allowing)
            if is_read(action):
                found["read"].append((names, f"{action} {resource}", "its code never read it"))
            else:
                found["unused"].append((names, f"{action} {resource}", "its code never did that there"))
    return found


class Findings:
    """What the check found. Each list holds tuples, the first item who the role is for: its
    function, or the role itself when no function the log records runs with it."""

    FAILING = ("denied", "unplaced", "unevaluated", "misnamed", "not_run", "unexercised",
               "extra", "wide", "read", "unused", "overbroad", "stale")

    def __init__(self):
        self.denied = []       # (function, action, arn, keys, why, role)
        self.unplaced = []     # (function, action, resource, why)
        self.unevaluated = []  # (function, statement label, part)
        self.misnamed = []     # (function, statement label, action or resource, why, role)
        self.not_run = []      # (function,)
        self.unexercised = []  # (function, statement label, statement, role)
        self.extra = []        # (function, statement label, action, why, role)
        self.wide = []         # (function, statement label, resource, why, role)
        self.read = []         # (function, statement labels, "action resource", why, role)
        self.unused = []       # (function, statement labels, "action resource", why, role)
        self.overbroad = []    # (function, action, table, prefix)
        self.stale = []        # (entry, why)
        self.excused = []      # (kind, finding, reason)
        self.counts = {}       # function -> actions its code needed

    def failures(self):
        return sum(len(getattr(self, kind)) for kind in self.FAILING)


def _key(finding):
    return tuple(item for item in finding if not isinstance(item, dict))


def check(stacks, accesses, names, allowlist=()):
    """What the roles refuse of what the functions needed, and what they allow beyond it (see
    the module), in each configuration of `stacks` (a Stack, or several of one template). A
    need is denied when no configuration allows it: the log does not say which one a test
    ran; anything else is found when one configuration has it. `accesses` are (function,
    action, resource[, keys]) as `read_log` has them; `allowlist` the entries of
    `read_allowlist`."""
    stacks = [stacks] if isinstance(stacks, Stack) else list(stacks)
    first = stacks[0]
    findings = Findings()
    entries = _sorted_entries(allowlist, findings)
    needed = {function: set() for function in first.functions}
    ran = set()
    prefixes = {}  # table ARN -> every prefix a line names on it
    for access in sorted(accesses, key=lambda a: (a[:3], len(a) > 3 and a[3] is not None,
                                                   a[3] if len(a) > 3 and a[3] else ())):
        function, action, resource = access[:3]
        keys = tuple(sorted(access[3])) if len(access) > 3 and access[3] is not None else None
        ran.add(function)
        if function not in first.functions:
            findings.unplaced.append((function, action, resource, "no such function in the template"))
            continue
        arn, why = first.place(action, resource, names)
        if arn is None:
            findings.unplaced.append((function, action, resource, why))
            continue
        needed[function].add((action, arn, keys, "its code, under the tests"))
        if action.startswith("dynamodb:") and keys and ":table/" in arn and "/" not in arn.split(":table/", 1)[1]:
            prefixes.setdefault(arn, set()).update(keys)
    for function in first.functions:
        findings.counts[function] = len(needed[function])

    results = [_check_configuration(stack, entries, needed, ran, prefixes) for stack in stacks]
    # Denied in every configuration that has the role.
    denials = [{(f[0], f[1], f[2], f[3], f[5]): f for f in result["denied"]} for result in results]
    role_sets = [result["roles"] for result in results]
    for key, finding in _union(denials).items():
        role = key[4]
        if all(key in denied for denied, roles in zip(denials, role_sets) if role in roles):
            findings.denied.append(finding)
    for kind in ("unevaluated", "misnamed", "not_run", "unexercised", "extra", "wide", "read",
                 "unused", "overbroad"):
        seen = set()
        for result in results:
            for finding in result[kind]:
                if _key(finding) not in seen:
                    seen.add(_key(finding))
                    getattr(findings, kind).append(finding)
    # An expectation is stale when no configuration needs it, or it names nothing.
    verdicts = {}
    for result in results:
        for entry_id, (entry, why, finding) in result["expectations"].items():
            verdicts.setdefault(entry_id, []).append((entry, why, finding))
    for entry in entries["expected"]:
        seen = verdicts.get(id(entry))
        if not seen:
            continue
        used = [finding for _, why, finding in seen if why is None]
        if used:
            findings.excused.append(used[0])
        else:
            findings.stale.append((entry, seen[0][1]))
    _excuse(findings, entries)
    return findings


def _union(dicts):
    merged = {}
    for d in dicts:
        for key, value in d.items():
            merged.setdefault(key, value)
    return merged


def _check_configuration(stack, entries, needed, ran, prefixes):
    """The findings of one configuration of the stack (see `check`), as lists by kind, with the
    roles it has and what became of each expectation: {id(entry): (entry, why stale or None,
    what it excused)}."""
    out = {kind: [] for kind in ("denied", "unevaluated", "misnamed", "not_run", "unexercised",
                                 "extra", "wide", "read", "unused", "overbroad")}
    roles = stack.roles()
    out["roles"] = set(roles)
    out["expectations"] = {}
    functions_of = {role_id: [] for role_id in roles}
    for function, logical_id in sorted(stack.functions.items()):
        functions_of.setdefault(stack.role_of(logical_id), []).append(function)
    expected = _expectations(stack, entries["expected"], needed, functions_of, out["expectations"])

    # Each role's needs: what the code of its functions did under the tests, what Lambda does
    # with it, what the allow-list says its code does that no test records.
    plans = {}
    for role_id in roles:
        functions = functions_of.get(role_id, [])
        owner = functions[0] if len(functions) == 1 else role_id
        needs = []
        for function in functions:
            needs += sorted(needed[function], key=lambda n: (n[0], n[1], n[2] is not None, n[2] or ()))
        for logical_id in stack.lambdas(role_id):
            needs += [(action, arn, (), why) for action, arn, why in stack.platform_needs(logical_id)]
        plans[role_id] = (owner, functions, stack.role_statements(role_id), needs,
                          expected.get(role_id, []))
    resources = {resource: set() for resource in stack.own_resources()}
    for _, _, _, needs, wanted in plans.values():
        for _, arn, _, _ in needs + [need for need, _ in wanted]:
            if arn != "*":
                resources.setdefault(widest(arn), set())
    for table, keys in prefixes.items():
        resources.setdefault(table, set()).update(keys)

    for role_id, (owner, functions, statements, needs, wanted) in plans.items():
        for statement in statements:
            for part in unevaluable(statement.get("Condition")):
                out["unevaluated"].append((owner, label(statement), part))
            if statement.get("Effect") == "Allow":
                for item, why in misnamed(statement):
                    out["misnamed"].append((owner, label(statement), item, why, role_id))
        all_needs = needs + [need for need, _ in wanted]
        for action, arn, keys, why in all_needs:
            ok, why_not = decide(statements, action, arn, keys)
            if not ok:
                out["denied"].append((owner, action, arn, keys, f"{why}; {' | '.join(why_not)}", role_id))
        # An expectation its role denies is found as that, never stale.
        for need, entry in wanted:
            if not decide(statements, need[0], need[1], need[2])[0]:
                out["expectations"][id(entry)] = (
                    entry, None, ("expected", (owner, need[0], need[1]), entry["reason"]))
        wanted = [(need, entry) for need, entry in wanted
                  if decide(statements, need[0], need[1], need[2])[0]]
        not_run = [function for function in functions if function not in ran]
        for function in not_run:
            out["not_run"].append((function,))
        if not_run:
            # Its role is not judged: nor are the allow-list's accesses of it.
            for need, entry in wanted:
                out["expectations"][id(entry)] = (
                    entry, None, ("expected", (owner, need[0], need[1]), entry["reason"]))
            continue
        found = over_grants(statements, all_needs, resources)
        for kind, items in found.items():
            for name, item, why, *statement in items:
                if kind == "unexercised":
                    out[kind].append((owner, name, statement[0], role_id))
                else:
                    out[kind].append((owner, name, item, why, role_id))
        # An expectation that changes nothing the role is found to allow is stale.
        keys_with = {kind: {_key(f) for f in items} for kind, items in found.items()}
        for need, entry in wanted:
            without = over_grants(statements, [n for n in all_needs if n is not need], resources)
            if {kind: {_key(f) for f in items} for kind, items in without.items()} == keys_with:
                out["expectations"][id(entry)] = (entry, "the role allows no more and no less with it", None)
            else:
                out["expectations"][id(entry)] = (
                    entry, None, ("expected", (owner, need[0], need[1]), entry["reason"]))
        for table, written_ever in sorted(prefixes.items()):
            for action in WRITE_ACTIONS:
                written = set()
                for need_action, arn, keys, _ in all_needs:
                    if need_action == action and arn == table and keys:
                        written.update(keys)
                for prefix in sorted(written_ever - written):
                    if decide(statements, action, table, (prefix,))[0]:
                        out["overbroad"].append((owner, action, table, prefix))
    return out


# ---------------------------------------------------------------------------- the allow-list

ENTRY_SHAPES = {
    frozenset({"function", "reason"}): "not_run",
    frozenset({"function", "action", "resource", "reason"}): "expected",
    frozenset({"role", "action", "resource", "reason"}): "expected",
    frozenset({"function", "action", "prefix", "reason"}): "overbroad",
}
SHAPES_TEXT = ("one of {function, reason}, {function, action, resource, reason}, {role, action,"
               " resource, reason}, {function, action, prefix, reason}, each a text; an action"
               " without wildcards, a resource other than *")


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
    if kind == "expected" and (any(c in entry["action"] for c in "*?") or entry["resource"].strip() == "*"):
        return None
    return kind


def _sorted_entries(allowlist, findings):
    entries = {kind: [] for kind in set(ENTRY_SHAPES.values())}
    for entry in allowlist:
        kind = _entry_kind(entry)
        if kind is None:
            findings.stale.append((entry, f"malformed: {SHAPES_TEXT}"))
        else:
            entries[kind].append(entry)
    return entries


def _expectations(stack, entries, needed, functions_of, verdicts):
    """The allow-list's accesses the tests cannot record, by role: [((action, arn, None, why),
    entry)]. An entry naming no function or role of the template, or an access the log records
    anyway, is stale: its verdict (entry, why, None) is set in `verdicts` by id(entry)."""
    expected = {}
    for entry in entries:
        def stale(why):
            verdicts[id(entry)] = (entry, why, None)

        if "function" in entry:
            if entry["function"] not in stack.functions:
                stale("no function of the template has that binary")
                continue
            role_id = stack.role_of(stack.functions[entry["function"]])
        else:
            role_id = entry["role"]
            if role_id not in functions_of:
                stale("no role of the template (with the check's parameters) has that logical id")
                continue
        try:
            arn = stack.resolver.sub(entry["resource"], {})
        except (CheckError, KeyError) as error:
            stale(f"its resource names nothing of the template: {error}")
            continue
        recorders = [entry["function"]] if "function" in entry else functions_of[role_id]
        if any(action.lower() == entry["action"].lower() and _within(arn, recorded)
               for function in recorders for action, recorded, _, _ in needed[function]):
            stale("the tests record it now")
            continue
        need = (entry["action"], arn, None, f"allow-listed ({entry['reason']})")
        expected.setdefault(role_id, []).append((need, entry))
        verdicts[id(entry)] = (entry, "the role allows no more and no less with it", None)
    return expected


def _excuses(entry, kind, finding):
    if entry["function"] != finding[0]:
        return False
    if kind == "not_run":
        return True
    if kind == "overbroad":
        return entry["action"].lower() == finding[1].lower() and entry["prefix"] == finding[3]
    return False


def _excuse(findings, entries):
    """Moves the NOT RUN and OVERBROAD findings an entry excuses to `excused`; an entry that
    excuses none is stale."""
    for kind in ("not_run", "overbroad"):
        for entry in entries[kind]:
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


def _who(owner, role):
    return owner if owner == role else f"{owner} (role {role})"


def report(findings):
    """The findings as the lines the check prints: (line, to stderr?)."""
    lines = [("iam_check: actions recorded per function: " + ", ".join(
        f"{function} {count}" for function, count in findings.counts.items()), False)]
    if findings.excused:
        lines.append(("iam_check: excused by the allow-list:", False))
        for kind, finding, reason in findings.excused:
            what = {
                "not_run": lambda f: f"{f[0]} (not run)",
                "overbroad": lambda f: f"{f[0]} {f[1]} {f[3]} (prefix never written)",
                "expected": lambda f: f"{f[0]} {f[1]} {f[2]} (no test records it)",
            }[kind](finding)
            lines.append((f"  {what}: {reason}", False))
    for function, action, resource, why in findings.unplaced:
        lines.append((f"iam_check: UNPLACED {function} {action} {resource}: {why}", False))
    for function, action, resource, keys, why, role in findings.denied:
        lines.append((f"iam_check: DENIED {function} {action} {resource}{_shown(keys)} ({why};"
                      f" role {role})", False))
    for function, name, part in findings.unevaluated:
        lines.append((f"iam_check: UNEVALUATED {function} {name}: {part} (the statement allows"
                      " nothing here)", False))
    for function, name, item, why, role in findings.misnamed:
        lines.append((f"iam_check: MISNAMED {_who(function, role)} {name}: {item} {why}", False))
    for (function,) in findings.not_run:
        lines.append((f"iam_check: NOT RUN {function}: no test ran its code (no line of the log)", False))
    for function, name, _, role in findings.unexercised:
        lines.append((f"iam_check: UNEXERCISED {_who(function, role)} {name}: allowed none of its"
                      " needs", False))
    for function, name, action, why, role in findings.extra:
        lines.append((f"iam_check: EXTRA {_who(function, role)} {name}: action {action} {why}", False))
    for function, name, resource, why, role in findings.wide:
        lines.append((f"iam_check: WIDE {_who(function, role)} {name}: resource {resource} {why}", False))
    for function, names, what, why, role in findings.read:
        lines.append((f"iam_check: READ {_who(function, role)} {names}: allows {what}; {why}", False))
    for function, names, what, why, role in findings.unused:
        lines.append((f"iam_check: UNUSED {_who(function, role)} {names}: allows {what}; {why}", False))
    for function, action, table, prefix in findings.overbroad:
        lines.append((f"iam_check: OVERBROAD {function} {action} {table} {prefix}: its role allows"
                      " it, its code never wrote that prefix", False))
    for entry, why in findings.stale:
        lines.append((f"iam_check: STALE allow-list entry {_entry_text(entry)}: {why}", False))
    if findings.failures():
        lines.append(("iam_check: " + ", ".join(
            f"{len(getattr(findings, kind))} {kind.replace('_', ' ')}" for kind in Findings.FAILING
        ), True))
    else:
        lines.append((f"iam_check: every action of {len(findings.counts)} functions is allowed by"
                      " its role, and each role of the stack allows no more than its code and"
                      " Lambda need but for the allow-list", False))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--template", default=str(root / "template.yaml"))
    parser.add_argument("--log", required=True, help="the action log (AWS_ACTION_LOG)")
    parser.add_argument("--allowlist", default=str(Path(__file__).resolve().parent / "iam_allowlist.yaml"),
                        help="what the roles' code does that no test records, with the reasons")
    args = parser.parse_args(argv)
    try:
        accesses, names = read_log(args.log)
        if not accesses:
            raise CheckError(f"{args.log} records no action: were the tests run with AWS_ACTION_LOG set?")
        findings = check(stacks(load_template(args.template)), accesses, names,
                         read_allowlist(args.allowlist))
    except CheckError as error:
        print(f"iam_check: {error}", file=sys.stderr)
        return 1
    for line, to_stderr in report(findings):
        print(line, file=sys.stderr if to_stderr else sys.stdout)
    return 1 if findings.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
