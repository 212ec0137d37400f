"""Tests of the console's part of template.yaml (D21, D29), run by `make test`:

    .venv/bin/python -m unittest discover -s scripts -p 'test_*.py'

The console speaks to its own origin (D29): its distribution serves the API (/api/*) and
Cognito's token endpoint (/oauth2/token), its CSP lets the page connect to nothing else but the
stack's uploads bucket, and its config.json names no other host. The template is read as
CloudFormation will have it (SAM's transform, resolved in a made-up account, as
scripts/iam_check.py does), with and without a Cognito sign-in.
"""

import copy
import json
import sys
import types
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

import iam_check  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REGION = iam_check.REGION
COGNITO = {
    "CognitoUserPoolId": "us-east-1_EXAMPLE",
    "CognitoDomain": "https://signin.auth.us-east-1.amazoncognito.com",
}
# The API's own domain, which only the distribution calls (D32): a parameter without a default.
ORIGIN = {"ApiOriginDomainName": "api-origin.example.com"}
ALL_METHODS = {"GET", "HEAD", "OPTIONS", "PUT", "POST", "PATCH", "DELETE"}


def load():
    return iam_check.load_template(ROOT / "template.yaml")


class Console:
    """The translated template with `overrides`, and its console's resolved parts."""

    def __init__(self, template, overrides=None):
        self.stack = iam_check.Stack(template, {**ORIGIN, **(overrides or {})})
        self.resolver = self.stack.resolver
        self.resources = self.stack.resources
        self.template = template

    def resolve(self, value):
        return self.resolver.resolve(value)

    def distribution(self):
        return self.resolve(self.resources["ConsoleDistribution"]["Properties"]["DistributionConfig"])

    def behaviour(self, pattern):
        found = [b for b in self.distribution().get("CacheBehaviors", []) if b["PathPattern"] == pattern]
        return found[0] if found else None

    def origin(self, origin_id):
        return next(o for o in self.distribution()["Origins"] if o["Id"] == origin_id)

    def csp(self):
        config = self.resources["ConsoleResponseHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]
        policy = self.resolve(config["SecurityHeadersConfig"]["ContentSecurityPolicy"])
        return {
            directive.split()[0]: directive.split()[1:]
            for directive in (d.strip() for d in policy["ContentSecurityPolicy"].split(";"))
            if directive
        }

    def cors(self):
        body = self.resources["HttpApi"]["Properties"]["Body"]
        resolved = self.resolve({"cors": body.get("x-amazon-apigateway-cors", {"Ref": "AWS::NoValue"})})
        return resolved.get("cors")

    def uploads_host(self):
        return f"https://{self.resolver.name('Bucket')}.s3.{REGION}.amazonaws.com"


def references(value):
    """The logical ids `value` names (Ref, GetAtt, Sub), intrinsic or not."""
    found = set()
    if isinstance(value, list):
        for item in value:
            found |= references(item)
    elif isinstance(value, dict):
        for key, argument in value.items():
            if key == "Ref" and isinstance(argument, str):
                found.add(argument)
            elif key == "Fn::GetAtt":
                found.add(argument[0] if isinstance(argument, list) else argument.split(".")[0])
            elif key == "Fn::Sub":
                text = argument[0] if isinstance(argument, list) else argument
                for name in iam_check.re.findall(r"\$\{([^}!][^}]*)\}", text):
                    found.add(name.split(".")[0])
                if isinstance(argument, list):
                    found |= references(argument[1])
            else:
                found |= references(argument)
    return found


def cycle(resources):
    """A dependency circle among `resources` (a list of logical ids), or None."""
    edges = {}
    for logical_id, resource in resources.items():
        depends = resource.get("DependsOn", [])
        depends = {depends} if isinstance(depends, str) else set(depends)
        edges[logical_id] = (references(resource.get("Properties", {})) | depends) & set(resources)
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def naming_the_api(template):
    """The distribution's /api/* origin named by the API itself, as its execute-api endpoint
    would be: a reference the circle check must follow."""
    origins = template["Resources"]["ConsoleDistribution"]["Properties"]["DistributionConfig"]["Origins"]
    api = next(o for o in origins if isinstance(o, dict) and o.get("Id") == "HttpApi")
    api["DomainName"] = {"Fn::Sub": "${HttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}"}


class OwnOrigin(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.template = load()
        cls.plain = Console(cls.template)
        cls.signed = Console(cls.template, COGNITO)

    def test_connect_src_is_the_own_origin_and_the_uploads_bucket_only(self):
        for console in (self.plain, self.signed):
            csp = console.csp()
            self.assertEqual(csp["connect-src"], ["'self'", console.uploads_host()])
            self.assertFalse(any("*" in source for source in csp["connect-src"]), csp["connect-src"])
            self.assertEqual(csp["default-src"], ["'self'"])
            self.assertEqual(csp["script-src"], ["'self'"])
            self.assertEqual(csp["form-action"], ["'self'"])

    def test_the_api_is_served_on_the_consoles_origin(self):
        for console in (self.plain, self.signed):
            api = console.behaviour("/api/*")
            self.assertIsNotNone(api, "a /api/* behaviour")
            origin = console.origin(api["TargetOriginId"])
            self.assertEqual(origin["DomainName"], ORIGIN["ApiOriginDomainName"])
            self.assertEqual(origin["CustomOriginConfig"]["OriginProtocolPolicy"], "https-only")
            self.assertEqual(origin["CustomOriginConfig"]["OriginSSLProtocols"], ["TLSv1.2"])
            self.assertEqual(api["ViewerProtocolPolicy"], "https-only")
            self.assertEqual(set(api["AllowedMethods"]), ALL_METHODS)
            mappings = self.template["Mappings"]
            self.assertEqual(api["CachePolicyId"], mappings["ManagedCachePolicy"]["Ids"]["CachingDisabled"])
            self.assertEqual(api["OriginRequestPolicyId"], "b689b0a8-53d0-40ab-baf2-68738e2966ac")

    def test_cognitos_token_endpoint_is_served_on_the_consoles_origin(self):
        token = self.signed.behaviour("/oauth2/token")
        self.assertIsNotNone(token, "a /oauth2/token behaviour with CognitoDomain")
        origin = self.signed.origin(token["TargetOriginId"])
        self.assertEqual(origin["DomainName"], "signin.auth.us-east-1.amazoncognito.com")
        self.assertEqual(origin["CustomOriginConfig"]["OriginProtocolPolicy"], "https-only")
        self.assertIn("POST", token["AllowedMethods"])
        self.assertEqual(token["OriginRequestPolicyId"], "b689b0a8-53d0-40ab-baf2-68738e2966ac")
        # Only the token endpoint: the sign-in pages (and their cookies) stay on CognitoDomain.
        self.assertEqual(
            [b["PathPattern"] for b in self.signed.distribution()["CacheBehaviors"] if "oauth2" in b["PathPattern"]],
            ["/oauth2/token"],
        )
        self.assertIsNone(self.plain.behaviour("/oauth2/token"))
        self.assertEqual([o["Id"] for o in self.plain.distribution()["Origins"]], ["ConsoleBucket", "HttpApi"])

    def test_the_api_answers_cors_only_to_api_allowed_origins(self):
        self.assertIsNone(self.plain.cors())
        self.assertIsNone(self.signed.cors())
        others = ["https://app.example.com", "http://localhost:5173"]
        cors = Console(self.template, {"ApiAllowedOrigins": others}).cors()
        self.assertEqual(cors["allowOrigins"], others)
        body = self.plain.resources["HttpApi"]["Properties"]["Body"]
        self.assertNotIn("ConsoleDistribution", references(body))

    def test_only_https_or_loopback_origins_are_taken(self):
        import re
        for name in ("UploadAllowedOrigins", "ApiAllowedOrigins"):
            pattern = re.compile(self.template["Parameters"][name]["AllowedPattern"])
            for taken in ("", "https://app.example.com", "https://app.example.com:8443",
                          "http://localhost:5173", "http://127.0.0.1:3000"):
                self.assertTrue(pattern.fullmatch(taken), f"{name}: {taken!r}")
            for refused in ("null", "*", "http://app.example.com", "https://*.example.com",
                            "https://app.example.com/", "http://localhost.evil.example"):
                self.assertFalse(pattern.fullmatch(refused), f"{name}: {refused!r}")

    def test_the_deployed_config_names_no_other_host(self):
        output = self.signed.stack.cfn["Outputs"]["ConsoleConfig"]
        config = json.loads(self.signed.resolve(output["Value"]))
        self.assertEqual(config["apiBase"], "")
        self.assertEqual(config["auth"]["tokenEndpoint"], "/oauth2/token")
        self.assertEqual(config["auth"]["domain"], COGNITO["CognitoDomain"])
        self.assertNotIn("execute-api", json.dumps(config))

    def test_no_resource_waits_on_itself(self):
        for console in (self.plain, self.signed):
            self.assertIsNone(cycle(console.resources))

    def test_the_circle_check_finds_one(self):
        template = copy.deepcopy(self.template)
        client = template["Resources"]["ConsoleUserPoolClient"]["Properties"]
        client["CallbackURLs"] = [{"Fn::Sub": "https://${ConsoleDistribution.DomainName}/"}]
        naming_the_api(template)
        found = cycle(Console(template, COGNITO).resources)
        self.assertIsNotNone(found)
        self.assertTrue({"ConsoleDistribution", "HttpApi", "ConsoleUserPoolClient"} <= set(found), found)
        # The uploads' CORS on the bucket: the API's functions name the bucket.
        template = copy.deepcopy(self.template)
        template["Resources"]["Bucket"]["Properties"]["CorsConfiguration"] = {"CorsRules": [{
            "AllowedMethods": ["PUT"],
            "AllowedOrigins": [{"Fn::Sub": "https://${ConsoleDistribution.DomainName}"}],
        }]}
        naming_the_api(template)
        found = cycle(Console(template).resources)
        self.assertIsNotNone(found)
        self.assertTrue({"ConsoleDistribution", "HttpApi", "Bucket"} <= set(found), found)

    def test_the_settings_that_name_the_consoles_origins(self):
        own_domain = {"ConsoleDomainName": "console.example.com",
                      "ConsoleCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/x"}
        with_domain = Console(self.template, {**COGNITO, **own_domain,
                                              "UploadAllowedOrigins": ["https://app.example.com"]})
        settings = with_domain.resolve(with_domain.resources["ConsoleClientSettings"]["Properties"])
        urls = ["https://ConsoleDistribution.DomainName/", "https://console.example.com/"]
        self.assertEqual(settings["CallbackURLs"], urls)
        self.assertEqual(settings["LogoutURLs"], urls)
        self.assertEqual(settings["ClientId"], "ConsoleUserPoolClient")
        # The client itself holds nothing that could change, so CloudFormation never resets it.
        client = self.template["Resources"]["ConsoleUserPoolClient"]["Properties"]
        self.assertEqual(set(client), {"UserPoolId", "ClientName", "GenerateSecret"})

        def upload_origins(console):
            cors = console.resolve(console.resources["UploadsCors"]["Properties"])
            self.assertEqual(cors["Bucket"], console.resolver.name("Bucket"))
            [rule] = cors["CORSRules"]
            self.assertEqual(rule["AllowedMethods"], ["PUT"])
            return [origin for origin in rule["AllowedOrigins"] if origin]  # the function drops ""

        self.assertEqual(upload_origins(with_domain), [
            "https://ConsoleDistribution.DomainName", "https://console.example.com", "https://app.example.com",
        ])
        self.assertEqual(upload_origins(self.plain), ["https://ConsoleDistribution.DomainName"])
        self.assertNotIn("CorsConfiguration", self.template["Resources"]["Bucket"]["Properties"])


class OriginSettingsFunction(unittest.TestCase):
    """The inline code of ConsoleOriginSettingsFunction, run here with fake Cognito and S3."""

    @classmethod
    def setUpClass(cls):
        code = load()["Resources"]["ConsoleOriginSettingsFunction"]["Properties"]["Code"]["ZipFile"]
        cls.calls = []
        fake_boto3 = types.SimpleNamespace(client=lambda service, region_name=None: cls.Fake(cls.calls, service, region_name))
        with mock.patch.dict(sys.modules, {"boto3": fake_boto3}):
            cls.module = types.ModuleType("console_origin_settings")
            exec(compile(code, "ConsoleOriginSettingsFunction", "exec"), cls.module.__dict__)

    class Fake:
        """A boto3 client that records its calls; `refuse` makes them raise."""

        refuse = None

        class NoSuchBucket(Exception):
            pass

        def __init__(self, calls, service, region):
            self.calls, self.service, self.region = calls, service, region

        def __getattr__(self, operation):
            def call(**arguments):
                if self.refuse:
                    raise self.refuse
                self.calls.append((self.service, self.region, operation, arguments))

            return call

    def event(self, resource_type, request_type, properties, physical_id=None):
        event = {
            "RequestType": request_type,
            "ResourceType": resource_type,
            "ResponseURL": "https://cloudformation-custom-resource-response.example/x",
            "StackId": "stack",
            "RequestId": "r1",
            "LogicalResourceId": "Settings",
            "ResourceProperties": {"ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:f", **properties},
        }
        if physical_id:
            event["PhysicalResourceId"] = physical_id
        return event

    def client_event(self, request_type, physical_id=None):
        return self.event("Custom::UserPoolClientSettings", request_type, {
            "UserPoolId": "eu-west-1_EXAMPLE",
            "ClientId": "client1",
            "AllowedOAuthFlowsUserPoolClient": "true",
            "EnableTokenRevocation": "false",
            "AccessTokenValidity": "15",
            "RefreshTokenValidity": "8",
            "AllowedOAuthFlows": ["code"],
            "CallbackURLs": ["https://d1.cloudfront.net/"],
            "TokenValidityUnits": {"AccessToken": "minutes"},
        }, physical_id)

    def cors_event(self, request_type, physical_id=None):
        return self.event("Custom::BucketCors", request_type, {
            "Bucket": "outbound-files",
            "CORSRules": [{
                "ID": "PresignedUploads",
                "AllowedMethods": ["PUT"],
                "AllowedOrigins": ["https://d1.cloudfront.net", "", ""],
                "AllowedHeaders": ["*"],
                "ExposeHeaders": ["ETag"],
                "MaxAgeSeconds": "3000",
            }],
        }, physical_id)

    def run_handler(self, event, refuse=None):
        self.calls.clear()
        sent = []
        with mock.patch.object(self.module.urllib.request, "urlopen",
                               lambda request, timeout: sent.append(request) or mock.MagicMock()), \
                mock.patch.object(self.Fake, "refuse", refuse), \
                mock.patch.object(self.module, "print", lambda *args: None, create=True):
            self.module.handler(event, None)
        self.assertEqual(len(sent), 1)
        self.assertEqual(sent[0].get_method(), "PUT")
        self.assertEqual(sent[0].full_url, event["ResponseURL"])
        return json.loads(sent[0].data)

    def test_applies_the_client_settings_typed_in_the_pools_region(self):
        answer = self.run_handler(self.client_event("Create"))
        self.assertEqual((answer["Status"], answer["PhysicalResourceId"]), ("SUCCESS", "client1"))
        [(service, region, operation, arguments)] = self.calls
        self.assertEqual((service, region, operation), ("cognito-idp", "eu-west-1", "update_user_pool_client"))
        self.assertNotIn("ServiceToken", arguments)
        self.assertIs(arguments["AllowedOAuthFlowsUserPoolClient"], True)
        self.assertIs(arguments["EnableTokenRevocation"], False)
        self.assertEqual((arguments["AccessTokenValidity"], arguments["RefreshTokenValidity"]), (15, 8))
        self.assertEqual(arguments["CallbackURLs"], ["https://d1.cloudfront.net/"])
        self.assertEqual(arguments["TokenValidityUnits"], {"AccessToken": "minutes"})
        self.assertEqual(arguments["ClientId"], "client1")

    def test_deleting_the_client_settings_changes_nothing(self):
        answer = self.run_handler(self.client_event("Delete", "client0"))
        self.assertEqual((answer["Status"], answer["PhysicalResourceId"]), ("SUCCESS", "client0"))
        self.assertEqual(self.calls, [])

    def test_puts_the_buckets_whole_cors_without_empty_origins(self):
        answer = self.run_handler(self.cors_event("Update", "outbound-files"))
        self.assertEqual((answer["Status"], answer["PhysicalResourceId"]), ("SUCCESS", "outbound-files"))
        [(service, _, operation, arguments)] = self.calls
        self.assertEqual((service, operation), ("s3", "put_bucket_cors"))
        self.assertEqual(arguments, {"Bucket": "outbound-files", "CORSConfiguration": {"CORSRules": [{
            "ID": "PresignedUploads",
            "AllowedMethods": ["PUT"],
            "AllowedOrigins": ["https://d1.cloudfront.net"],
            "AllowedHeaders": ["*"],
            "ExposeHeaders": ["ETag"],
            "MaxAgeSeconds": 3000,
        }]}})

    def test_deleting_the_cors_removes_it_from_the_bucket_it_was_put_on(self):
        answer = self.run_handler(self.cors_event("Delete", "outbound-files"))
        self.assertEqual((answer["Status"], answer["PhysicalResourceId"]), ("SUCCESS", "outbound-files"))
        self.assertEqual(self.calls, [("s3", None, "delete_bucket_cors", {"Bucket": "outbound-files"})])
        # Its bucket gone already: nothing left to remove, and the stack's deletion goes on.
        answer = self.run_handler(self.cors_event("Delete", "outbound-files"), refuse=self.Fake.NoSuchBucket())
        self.assertEqual(answer["Status"], "SUCCESS")
        # A create that failed named no bucket of its own: its delete touches none.
        answer = self.run_handler(self.cors_event("Delete", "Settings"))
        self.assertEqual((answer["Status"], self.calls), ("SUCCESS", []))

    def test_a_new_bucket_or_client_is_a_new_id(self):
        event = self.cors_event("Update", "outbound-old")
        answer = self.run_handler(event)
        self.assertEqual(answer["PhysicalResourceId"], "outbound-files")
        answer = self.run_handler(self.client_event("Update", "client0"))
        self.assertEqual(answer["PhysicalResourceId"], "client1")

    def test_a_refusal_fails_the_resource_and_keeps_its_id(self):
        refusal = RuntimeError("ScopeDoesNotExistException")
        answer = self.run_handler(self.client_event("Update", "client0"), refuse=refusal)
        self.assertEqual((answer["Status"], answer["PhysicalResourceId"]), ("FAILED", "client0"))
        self.assertIn("ScopeDoesNotExistException", answer["Reason"])
        answer = self.run_handler(self.cors_event("Create"), refuse=refusal)
        self.assertEqual((answer["Status"], answer["PhysicalResourceId"]), ("FAILED", "outbound-files"))


if __name__ == "__main__":
    unittest.main()
