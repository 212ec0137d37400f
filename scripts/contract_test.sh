#!/usr/bin/env bash
# The contract check of `make test`: schemathesis (scripts/requirements-contract.txt, in
# .local/venv-contract) generates requests from openapi.yaml and sends them to the local API,
# with a valid token, against moto. It fails on any 5xx and on any response the document does
# not describe (status code, content type, headers, body). Needs moto up and
# target/debug/local-api and target/debug/dev-token built (all done by `make test` before it).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.local/venv-contract
if [ ! -x "$venv/bin/st" ] || ! cmp -s scripts/requirements-contract.txt "$venv/requirements.installed"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/requirements-contract.txt
  cp scripts/requirements-contract.txt "$venv/requirements.installed"
fi

port="${CONTRACT_PORT:-3107}"
log=.local/contract-api.log
rm -f "$log"
# One tenant sends every generated request as fast as the API answers: its request rate (D26,
# 50 a second by default) and the edge's limits per token and at the stage (D32) are raised so
# that each answer is the route's own, not a 429.
LOCAL_STACK="contract-$(date +%s)" PORT="$port" DIAL_TICK_MS=3600000 \
  TENANT_REQUESTS_PER_SECOND=100000 TENANT_REQUEST_BURST=100000 \
  EDGE_REQUESTS_PER_TOKEN=60000000 EDGE_REQUESTS_PER_ADDRESS=60000000 \
  API_THROTTLING_RATE_LIMIT=1000000 API_THROTTLING_BURST_LIMIT=1000000 \
  target/debug/local-api >"$log" 2>&1 &
api=$!
trap 'kill $api 2>/dev/null || true; wait $api 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
  grep -q '^development token' "$log" 2>/dev/null && curl -s -o /dev/null "http://127.0.0.1:$port/api/openapi.yaml" && break
  kill -0 $api 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
token=$(grep -A1 '^development token' "$log" | tail -1)

# Records for the path ids, so the generated requests reach the handlers' own rules rather
# than a 404: a data source with contacts and a task over it.
base="http://127.0.0.1:$port/api"
post() { curl -fsS -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "$2" "$base/$1"; }
id_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'; }
source_id=$(post dataSource/add '{"dataSourceName":"contract"}' | id_of)
for phone in 13800000001 13800000002 13800000003; do
  post "dataSource/$source_id/contact/add" "{\"phoneNumber\":\"$phone\",\"customerName\":\"c$phone\"}" >/dev/null
done
task_id=$(post task/add "{\"taskName\":\"contract\",\"dataSourceId\":\"$source_id\"}" | id_of)
config=.local/contract.toml
# A refused request may also be 413 (a fileSize over 20 MiB, D8) or 415 (not CSV or .xlsx).
cat >"$config" <<TOML
[checks.negative_data_rejection]
expected-statuses = [400, 401, 403, 404, 406, 413, 415, 422]

[[operations]]
include-path-regex = "^/api/dataSource/"
parameters = { "path.id" = "$source_id" }

[[operations]]
include-path-regex = "^/api/task/"
parameters = { "path.id" = "$task_id" }

[[operations]]
include-path-regex = "^/api/operator/"
parameters = { "path.tenant" = "acme" }
TOML
# The operator's routes (D22) need the operator's scope, whatever the token's tenant: they are
# sent with a token of their own; the tenant's token is refused there (403, as documented).
operator_token=$(target/debug/dev-token ops outbound/operator)

# positive_data_acceptance is left out: schema-valid requests are refused by rules JSON Schema
# cannot state (pageNum * pageSize <= 10,000, signed nextTokens, names unique per tenant, phone
# digits after normalising, IANA zones, a task's state), each with its documented 400/405/409.
contract() {
  local bearer=$1
  shift
  "$venv/bin/st" --config-file "$config" run openapi.yaml \
    --url "http://127.0.0.1:$port" \
    --header "Authorization: Bearer $bearer" \
    --checks all \
    --exclude-checks positive_data_acceptance \
    --max-examples "${CONTRACT_EXAMPLES:-30}" \
    --seed "${CONTRACT_SEED:-20261126}" \
    --workers 1 \
    --no-color \
    "$@"
}
contract "$token" --exclude-path-regex '^/api/operator/' "$@"
contract "$operator_token" --include-path-regex '^/api/operator/' "$@"
