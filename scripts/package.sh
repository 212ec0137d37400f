#!/usr/bin/env bash
# `make package`: every function under functions/ built for arm64 with the release profile
# (cargo-lambda driving zig, as `sam build` does) and zipped as Lambda deploys it, into
# $CARGO_TARGET_DIR/lambda/<function>/bootstrap.zip (target/ when unset). Ends with a table of
# each zip's size and its binary's size; with BENCH_DIR set, each zip size is also a benchmark
# sample (`package_zip_bytes.<function>` in $BENCH_DIR/samples.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/stack.sh setup
.venv/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements-build.txt
rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1 \
  || rustup target list --installed | grep -qx aarch64-unknown-linux-gnu

functions=()
packages=()
for dir in functions/*/; do
  name=$(basename "$dir")
  functions+=("$name")
  packages+=(-p "$name")
done

PATH="$PWD/.venv/bin:$PATH" cargo lambda build --release --arm64 --output-format zip "${packages[@]}"

lambda_dir="${CARGO_TARGET_DIR:-target}/lambda"
if [ -n "${BENCH_DIR:-}" ]; then mkdir -p "$BENCH_DIR"; fi
printf '\n%-16s %12s %9s %12s %9s\n' function "zip bytes" "zip MiB" "binary bytes" "bin MiB"
for name in "${functions[@]}"; do
  zip="$lambda_dir/$name/bootstrap.zip"
  zip_bytes=$(stat -c %s "$zip")
  # The uncompressed size of `bootstrap` inside the zip: the binary Lambda runs.
  binary_bytes=$(unzip -Zl "$zip" bootstrap | awk '{ print $4 }')
  awk -v name="$name" -v zip="$zip_bytes" -v bin="$binary_bytes" \
    'BEGIN { printf "%-16s %12d %9.2f %12d %9.2f\n", name, zip, zip / 1048576, bin, bin / 1048576 }'
  if [ -n "${BENCH_DIR:-}" ]; then
    printf '{"key": "package_zip_bytes.%s", "value": %d}\n' "$name" "$zip_bytes" \
      >>"$BENCH_DIR/samples.jsonl"
  fi
done
