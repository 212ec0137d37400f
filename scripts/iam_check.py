"""The least-privilege check of `make test`: every AWS action a function performed under the
tests is one that its role in template.yaml allows, and so is everything Lambda does with that
role for it.

    .venv/bin/python scripts/iam_check.py --log .local/aws-actions.jsonl [--template template.yaml]

What it compares:

- Needed, by function. What its code asked of AWS under `cargo test`, the contract check and
  the console's test: the action log the functions' SDK clients write when AWS_ACTION_LOG names
  a file (shared/adapters/src/aws/actions.rs), one line per function, IAM action and resource
  (`table/t-01j...`, `bucket/b-01j.../exports/*`, `queue/b-01j...-dial`, ...), and lines naming
  which variable gave each local name (`{"names": {"TABLE_NAME": "t-01j...", ...}}`). A local
  name stands for the template's resource that the template sets that variable to
  (`TABLE_NAME: !Ref Table`), so it becomes that resource's ARN. And what Lambda itself does with
  the function's role, read from the template: receive and delete from the queues of its SQS
  event sources, read the streams of its DynamoDB ones, send to their on-failure destinations,
  write to its log group, and send traces when tracing is active.
- Allowed, by function. The statements of its role, as CloudFormation will have them: SAM's
  transform (samtranslator, the version `sam` deploys with) applied first, so the roles SAM
  generates, its policy templates (DynamoDBCrudPolicy, SQSSendMessagePolicy, ...) and the AWS
  managed policies it attaches for event sources are what is evaluated; then `!Ref`, `!GetAtt`,
  `!Sub`, `!If`, ... resolved to the ARNs of the stack's own resources in a made-up account and
  region, with the parameters' defaults and DialProvider=amazon-connect (the configuration that
  grants the most). A statement allows an action on a resource when both match its patterns
  (`*` and `?` as IAM reads them); an explicit Deny wins.

Fails (exit 1) listing `function action resource` for each needed action the role does not
allow, and any recorded name it cannot place. Prints, without failing, what each role allows
that nothing needed: candidates for removal, or actions no test exercises.
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
    """The log's accesses (function, action, resource) and its names (variable -> local names)."""
    accesses, names = set(), {}
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
        else:
            accesses.add((entry["function"], entry["action"], entry["resource"]))
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
                return f"arn:{PARTITION}:connect:{REGION}:{ACCOUNT}:instance/{value}/{tail}"
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


def _matches(patterns, value):
    return any(fnmatch.fnmatchcase(value.lower(), str(p).lower()) for p in as_list(patterns))


def _covers(statement, action, resource):
    if "Action" in statement:
        if not _matches(statement["Action"], action):
            return False
    elif _matches(statement.get("NotAction"), action):
        return False
    if "Resource" in statement:
        return _matches(statement["Resource"], resource)
    return not _matches(statement.get("NotResource"), resource)


def allowed(statements, action, resource):
    """IAM's answer for an identity policy: an explicit Deny wins, then any Allow."""
    covering = [s for s in statements if _covers(s, action, resource)]
    if any(s.get("Effect") == "Deny" for s in covering):
        return False
    return any(s.get("Effect") == "Allow" for s in covering)


def check(stack, accesses, names):
    """Answers (denied, unplaced, unexercised, counts): the needed accesses the roles refuse,
    the recorded ones whose name is not the template's, and what the roles allow that nothing
    needed."""
    needed = {function: set() for function in stack.functions}
    unplaced = []
    for function, action, resource in sorted(accesses):
        if function not in stack.functions:
            unplaced.append((function, action, resource, "no such function in the template"))
            continue
        arn = stack.arn(resource, names)
        if arn is None:
            unplaced.append((function, action, resource, "no variable of the template names it"))
            continue
        needed[function].add((action, arn, "its code, under the tests"))
    denied, unexercised, counts = [], [], {}
    for function, logical_id in sorted(stack.functions.items()):
        role_id, statements = stack.statements(logical_id)
        needs = sorted(needed[function]) + stack.platform_needs(logical_id)
        counts[function] = len(needed[function])
        for action, arn, why in needs:
            if not allowed(statements, action, arn):
                denied.append((function, action, arn, why, role_id))
        for statement in statements:
            if statement.get("Effect") != "Allow" or "Action" not in statement:
                continue
            for action in as_list(statement["Action"]):
                for pattern in as_list(statement.get("Resource", "*")):
                    single = {"Effect": "Allow", "Action": action, "Resource": pattern}
                    if not any(_covers(single, a, r) for a, r, _ in needs):
                        unexercised.append((function, action, pattern))
    return denied, unplaced, sorted(set(unexercised)), counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--template", default=str(root / "template.yaml"))
    parser.add_argument("--log", required=True, help="the action log (AWS_ACTION_LOG)")
    args = parser.parse_args(argv)
    try:
        accesses, names = read_log(args.log)
        if not accesses:
            raise CheckError(f"{args.log} records no action: were the tests run with AWS_ACTION_LOG set?")
        stack = Stack(load_template(args.template))
        denied, unplaced, unexercised, counts = check(stack, accesses, names)
    except CheckError as error:
        print(f"iam_check: {error}", file=sys.stderr)
        return 1
    print("iam_check: actions recorded per function: " + ", ".join(
        f"{function} {count}" for function, count in counts.items()))
    silent = [function for function, count in counts.items() if count == 0]
    if silent:
        print("iam_check: no test ran the code of " + ", ".join(silent))
    if unexercised:
        print("iam_check: allowed, but neither the tests nor Lambda needed it (function action resource):")
        for function, action, resource in unexercised:
            print(f"  {function} {action} {resource}")
    for function, action, resource, why in unplaced:
        print(f"iam_check: UNPLACED {function} {action} {resource}: {why}")
    for function, action, resource, why, role in denied:
        print(f"iam_check: DENIED {function} {action} {resource} ({why}; role {role})")
    if denied or unplaced:
        print(f"iam_check: {len(denied)} denied, {len(unplaced)} unplaced", file=sys.stderr)
        return 1
    print(f"iam_check: every action of {len(counts)} functions is allowed by its role")
    return 0


if __name__ == "__main__":
    sys.exit(main())
