#!/usr/bin/env bash
# The web console (console/, Vite + Preact):
#   setup  Debian's chromium (for the browser test) when /usr/bin/chromium is missing, and
#          `npm ci` in console/ when node_modules is missing or older than package-lock.json
#   build  setup's npm part, then `npm run build` unless console/dist is newer than its sources
#   test   build, the check that the generated types are what their sources make
#          (src/api/schema.ts of openapi.yaml, e2e/generated/events.d.ts of events.schema.json,
#          e2e/generated/local.d.ts of e2e/local.openapi.yaml), the unit tests (`npm test`,
#          vitest), then the end-to-end browser test (console/e2e/campaign.e2e.ts:
#          target/debug/local-api + headless chromium)
#   bench  build, then the console's sizes and first-load times (console/e2e/bench.ts), each
#          figure appended to $BENCH_DIR/samples.jsonl (default .local/bench)
# The e2e files are TypeScript: `npm run build` type-checks them (tsc -p e2e) and tsx (pinned
# in console/package.json) runs them.
# `test` and `bench` need target/debug/local-api built (`make test` or `make run` builds it; `test`
# also target/debug/dev-token, which mints the browser test's operator token) and
# moto on MOTO_ENDPOINT (default http://127.0.0.1:$MOTO_PORT, port 5000): started with
# scripts/stack.sh (and stopped again) when none answers there.
# Nothing is repeated when nothing changed; UPDATE_SCREENSHOTS=1 rewrites docs/console/*.png.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CONSOLE=console
TSX="$CONSOLE/node_modules/.bin/tsx"
MOTO_PORT="${MOTO_PORT:-5000}"
export MOTO_ENDPOINT="${MOTO_ENDPOINT:-http://127.0.0.1:$MOTO_PORT}"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

setup_chromium() {
  if [ ! -x /usr/bin/chromium ]; then
    echo "installing Debian's chromium (for the console's browser test)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  fi
}

setup_npm() {
  # npm ci writes node_modules/.package-lock.json: older than package-lock.json means stale.
  if [ ! -f "$CONSOLE/node_modules/.package-lock.json" ] \
    || [ "$CONSOLE/package-lock.json" -nt "$CONSOLE/node_modules/.package-lock.json" ] \
    || [ "$CONSOLE/package.json" -nt "$CONSOLE/node_modules/.package-lock.json" ]; then
    (cd "$CONSOLE" && npm ci --no-audit --no-fund --loglevel=error)
    touch "$CONSOLE/node_modules/.package-lock.json"
  fi
}

setup() {
  setup_chromium
  setup_npm
}

# True when console/dist/index.html is missing or older than any of the build's inputs.
dist_stale() {
  local stamp="$CONSOLE/dist/index.html"
  [ -f "$stamp" ] || return 0
  local inputs=()
  local path
  for path in src public e2e index.html package.json package-lock.json tsconfig.json \
    vite.config.ts vite.config.js vite.config.mjs vite.config.mts; do
    [ -e "$CONSOLE/$path" ] && inputs+=("$CONSOLE/$path")
  done
  [ -n "$(find "${inputs[@]}" -newer "$stamp" -print -quit 2>/dev/null)" ]
}

build() {
  setup_npm
  if dist_stale; then
    (cd "$CONSOLE" && npm run build --silent)
  else
    echo "console/dist is up to date"
  fi
}

moto_up() { curl -fs -o /dev/null "$MOTO_ENDPOINT/moto-api/" 2>/dev/null; }

# Starts moto (scripts/stack.sh) when none answers on MOTO_ENDPOINT; stops it on exit.
with_moto() {
  if ! moto_up; then
    if [ "$MOTO_ENDPOINT" != "http://127.0.0.1:$MOTO_PORT" ]; then
      echo "nothing answers on MOTO_ENDPOINT=$MOTO_ENDPOINT" >&2
      exit 1
    fi
    MOTO_PORT=$MOTO_PORT scripts/stack.sh start >/dev/null
    trap 'MOTO_PORT=$MOTO_PORT scripts/stack.sh stop >/dev/null' EXIT
  fi
}

need_local_api() {
  local binary
  for binary in "${LOCAL_API:-target/debug/local-api}" "$@"; do
    if [ ! -x "$binary" ]; then
      echo "$binary is missing: \`make test\` or \`make run\` builds it" >&2
      exit 1
    fi
  done
}

# Fails when console/$1 is not what `npm run $2` writes: the rest of the arguments are that
# script's generator and its arguments, run here with a scratch file to write appended.
check_generated() {
  local file=$1 script=$2 fresh
  shift 2
  fresh=$(mktemp --suffix=.d.ts)
  "$@" "$fresh" >/dev/null 2>&1
  if ! diff -q "$fresh" "$CONSOLE/$file" >/dev/null; then
    echo "console/$file is not what its source generates; run: (cd console && npm run $script)" >&2
    diff -u "$CONSOLE/$file" "$fresh" | head -40 >&2
    rm -f "$fresh"
    return 1
  fi
  rm -f "$fresh"
}

# Fails when a generated file of the console is not what its source makes now, naming each that
# is not: src/api/schema.ts of openapi.yaml (which a unit test keeps equal to the code), and the
# browser test's e2e/generated/events.d.ts of events.schema.json and e2e/generated/local.d.ts of
# e2e/local.openapi.yaml. The console's and its browser test's types follow the contracts.
check_schemas() {
  local bin="$CONSOLE/node_modules/.bin" stale=0
  # gen:api's options: the contract's enums as values too (integer-coded ones as TypeScript enums
  # named by their x-enum-varnames, the others as arrays).
  check_generated src/api/schema.ts gen:api "$bin/openapi-typescript" openapi.yaml \
    --enum --conditional-enums --enum-values -o || stale=1
  check_generated e2e/generated/events.d.ts gen:events "$bin/json2ts" -i events.schema.json -o || stale=1
  check_generated e2e/generated/local.d.ts gen:local \
    "$bin/openapi-typescript" "$CONSOLE/e2e/local.openapi.yaml" -o || stale=1
  return "$stale"
}

test_console() {
  setup_chromium
  build
  check_schemas
  (cd "$CONSOLE" && npm test --silent)
  need_local_api "${DEV_TOKEN:-target/debug/dev-token}"
  with_moto
  "$TSX" --test --test-reporter=spec "$CONSOLE/e2e/campaign.e2e.ts"
}

bench() {
  setup_chromium
  build
  need_local_api
  with_moto
  export BENCH_DIR="${BENCH_DIR:-$ROOT/.local/bench}"
  mkdir -p "$BENCH_DIR"
  "$TSX" "$CONSOLE/e2e/bench.ts"
}

case "${1:-}" in
  setup) setup ;;
  build) build ;;
  test) test_console ;;
  bench) bench ;;
  *)
    echo "usage: scripts/console.sh setup|build|test|bench" >&2
    exit 2
    ;;
esac
