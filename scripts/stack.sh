#!/usr/bin/env bash
# The local stand-ins: `setup` makes .venv with the pinned packages, `start` starts moto
# single-threaded on 127.0.0.1:$MOTO_PORT unless one already answers there, `stop` stops the
# one `start` started (and only that one).
set -euo pipefail
cd "$(dirname "$0")/.."
MOTO_PORT="${MOTO_PORT:-5000}"
STATE=.local
mkdir -p "$STATE"

moto_up() { curl -fs -o /dev/null "http://127.0.0.1:$MOTO_PORT/moto-api/" 2>/dev/null; }

setup() {
  if [ ! -x .venv/bin/python ] || ! cmp -s scripts/requirements.txt "$STATE/requirements.installed"; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements.txt
    cp scripts/requirements.txt "$STATE/requirements.installed"
  fi
}

start() {
  if moto_up; then
    echo "moto already answers on 127.0.0.1:$MOTO_PORT; using it"
    return
  fi
  setup
  .venv/bin/python scripts/moto_server.py 127.0.0.1 "$MOTO_PORT" >"$STATE/moto.log" 2>&1 &
  echo $! >"$STATE/moto.pid"
  for _ in $(seq 1 100); do
    moto_up && { echo "moto started on 127.0.0.1:$MOTO_PORT (pid $(cat "$STATE/moto.pid"))"; return; }
    sleep 0.1
  done
  echo "moto did not start; see $STATE/moto.log" >&2
  exit 1
}

stop() {
  if [ -f "$STATE/moto.pid" ]; then
    kill "$(cat "$STATE/moto.pid")" 2>/dev/null || true
    rm -f "$STATE/moto.pid"
    echo "moto stopped"
  fi
}

"${1:?usage: stack.sh setup|start|stop}"
