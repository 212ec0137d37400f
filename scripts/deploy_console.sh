#!/usr/bin/env bash
# The web console (D21) onto a stack deployed from template.yaml: builds console/, writes its
# config.json from the stack's ConsoleConfig output, uploads the files to ConsoleBucket and has
# CloudFront drop what it must not serve stale.
#
#   scripts/deploy_console.sh                      the stack of samconfig.toml's default environment
#   scripts/deploy_console.sh --config-env dev     the stack of samconfig.toml's dev environment
#   scripts/deploy_console.sh my-stack             that stack
#
# Needs the AWS CLI (credentials and region as for `sam deploy`: AWS_PROFILE, AWS_REGION) and
# npm. The stack must have been deployed with CognitoUserPoolId and CognitoDomain: the console
# signs in through the pool's hosted pages, and without them the stack has no app client for it
# and no ConsoleConfig output.
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  echo "deploy_console: $*" >&2
  exit 1
}

# stack_name of a samconfig.toml environment: its deploy parameters, else its global ones.
samconfig_stack() {
  local env=$1
  awk -v deploy="[$env.deploy.parameters]" -v global="[$env.global.parameters]" '
    /^\[/ { section = $0; next }
    /^[[:space:]]*stack_name[[:space:]]*=/ {
      value = $0
      sub(/^[^=]*=[[:space:]]*"/, "", value)
      sub(/".*$/, "", value)
      if (section == deploy) from_deploy = value
      if (section == global) from_global = value
    }
    END { print (from_deploy != "" ? from_deploy : from_global) }
  ' samconfig.toml
}

config_env=default
stack=
case "${1:-}" in
  --config-env)
    [ -n "${2:-}" ] || die "--config-env needs an environment of samconfig.toml"
    config_env=$2
    ;;
  -h | --help)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  -*) die "unknown option $1 (see --help)" ;;
  "") ;;
  *) stack=$1 ;;
esac
if [ -z "$stack" ]; then
  stack=$(samconfig_stack "$config_env")
  [ -n "$stack" ] || die "no stack_name for environment $config_env in samconfig.toml"
fi

command -v aws >/dev/null || die "the AWS CLI (aws) is needed"
command -v npm >/dev/null || die "npm is needed to build the console"
[ -f console/package.json ] || die "console/package.json is missing: no console to build"

# The stack's outputs, one "key<TAB>value" line each (none holds a tab or a line break).
echo "reading the outputs of stack $stack"
outputs=$(aws cloudformation describe-stacks --stack-name "$stack" \
  --query 'Stacks[0].Outputs[].[OutputKey,OutputValue]' --output text)
output() {
  awk -F '\t' -v key="$1" '$1 == key { print $2; exit }' <<<"$outputs"
}
bucket=$(output ConsoleBucketName)
distribution=$(output ConsoleDistributionId)
url=$(output ConsoleUrl)
api=$(output ApiUrl)
config=$(output ConsoleConfig)
if [ -z "$bucket" ] || [ -z "$distribution" ]; then
  die "stack $stack has no ConsoleBucketName or ConsoleDistributionId output: deploy the current template.yaml first"
fi
if [ -z "$config" ]; then
  die "stack $stack has no ConsoleConfig output, so a deployed console could not sign anyone in.
  Deploy the stack with CognitoUserPoolId (the user pool whose issuer is JwtIssuer) and
  CognitoDomain (its hosted sign-in domain, e.g. https://myprefix.auth.<region>.amazoncognito.com);
  the stack then creates the console's app client and outputs its config.json. (API: ${api:-unknown})"
fi

echo "building the console"
(cd console && npm ci && npm run build)
[ -f console/dist/index.html ] || die "the build left no console/dist/index.html"

# The output is one line of JSON, written by the template's !Sub: make sure it parses. It names
# no API host: the console calls the API and Cognito's token endpoint on its own origin, through
# the distribution (D29: "apiBase":"", "tokenEndpoint":"/oauth2/token").
printf '%s\n' "$config" >console/dist/config.json
node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' console/dist/config.json \
  || die "the stack's ConsoleConfig is not JSON: $config"

# New files first, so a page being loaded meanwhile finds what it asks for; index.html last,
# since it names the new assets. Vite's assets/ names carry their content's hash: cached a year.
# Everything else (index.html, config.json, files from public/) is revalidated on every load.
echo "uploading to s3://$bucket"
if [ -d console/dist/assets ]; then
  aws s3 sync console/dist/assets "s3://$bucket/assets" --no-progress --size-only \
    --cache-control "public, max-age=31536000, immutable"
fi
aws s3 sync console/dist "s3://$bucket" --no-progress --cache-control no-cache \
  --exclude "assets/*" --exclude index.html --exclude config.json
aws s3 cp console/dist/config.json "s3://$bucket/config.json" --no-progress \
  --cache-control no-cache --content-type application/json
aws s3 cp console/dist/index.html "s3://$bucket/index.html" --no-progress \
  --cache-control no-cache --content-type "text/html; charset=utf-8"
# Then what the build no longer has goes (the last pass uploads nothing: every file is there).
aws s3 sync console/dist "s3://$bucket" --no-progress --delete --size-only

# "/" is index.html too (the distribution's default root object), cached under its own path.
invalidation=$(aws cloudfront create-invalidation --distribution-id "$distribution" \
  --paths / /index.html /config.json --query Invalidation.Id --output text)
echo "invalidation $invalidation of /, /index.html and /config.json under way (a minute or two)"
echo "console: ${url:-https://<ConsoleDistribution>/}"
