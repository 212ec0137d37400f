# The two set-up commands are `make run` and `make test`; everything else is a helper.
SHELL := /usr/bin/env bash
PORT ?= 3000
TENANT ?= acme
export MOTO_PORT ?= 5000
export MOTO_ENDPOINT ?= http://127.0.0.1:$(MOTO_PORT)

.PHONY: help check run test walkthrough function-trees conformance sim sim-mutants sim-http console openapi token lambda-env lint-template validate-template bench bench-run bench-once bench-venv bench-cold-start bench-functions package

# The local server is built as `make test` builds it: `cargo nextest run --workspace` (which builds
# with `cargo test --workspace --no-run`) unifies the
# features of every member and its dev-dependencies, and a plain `cargo build -p outbound-local`
# would unify them differently and rebuild the AWS SDK. One build serves both.
BUILD_LOCAL = cargo test --quiet --workspace --no-run

## help: this list of targets
help:
	@awk '/^## / { sub(/^## /, ""); print }' $(MAKEFILE_LIST)

## check: the fast inner loop, nothing started: formatting, lints, the unit tests of every crate
## and the scripts' own tests (make test runs all of it and everything against the stand-ins)
check:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test --workspace --lib --bins --quiet
	@test -x .venv/bin/python || scripts/stack.sh setup
	.venv/bin/python -m unittest discover -s scripts -p 'test_*.py'

## run: the whole service locally on http://127.0.0.1:$(PORT)/api/... and the console at
## http://127.0.0.1:$(PORT)/ (Ctrl-C stops what it started)
run:
	scripts/console.sh build
	@started=$$(test -f .local/moto.pid || { curl -fs -o /dev/null $(MOTO_ENDPOINT)/moto-api/ || echo yes; }); \
	scripts/stack.sh start; \
	trap '[ -n "$$started" ] && scripts/stack.sh stop' EXIT; \
	$(BUILD_LOCAL) && PORT=$(PORT) target/debug/local-api

## test: formatting, lints, the template, and every test (each with a DynamoDB database of its
## own, moto for S3, SQS and EventBridge; cargo-nextest runs them side by side), the store's
## conformance part on AWS's DynamoDB Local; then the least-privilege check: every AWS action the
## functions performed under those tests (written to AWS_ACTION_LOG) must be allowed by the
## function's role in template.yaml (scripts/iam_check.py)
test: export AWS_ACTION_LOG = $(CURDIR)/.local/aws-actions.jsonl
test:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	@$(MAKE) --no-print-directory function-trees
	@scripts/stack.sh setup
	.venv/bin/cfn-lint template.yaml
	.venv/bin/python -m unittest discover -s scripts -p 'test_*.py'
	@rm -f "$$AWS_ACTION_LOG"
	@started=$$(curl -fs -o /dev/null $(MOTO_ENDPOINT)/moto-api/ || echo yes); \
	scripts/stack.sh start; \
	trap '[ -n "$$started" ] && scripts/stack.sh stop' EXIT; \
	cargo nextest run --workspace && $(MAKE) --no-print-directory conformance CONFORMANCE=quick \
	  && scripts/contract_test.sh && $(MAKE) --no-print-directory walkthrough && scripts/console.sh test
	.venv/bin/python scripts/iam_check.py --log "$$AWS_ACTION_LOG"

## walkthrough: the README's walkthroughs run as written (scripts/walkthrough.py), each section on a
## fresh local stack of its own on a free port, every command's output compared with the `#   `
## lines the README shows under it; SECTION=<name> runs one (`scripts/walkthrough.py --list`)
SECTION ?=
walkthrough:
	@scripts/stack.sh setup
	@$(BUILD_LOCAL)
	.venv/bin/python scripts/walkthrough.py $(SECTION)

## function-trees: each function group's part of the edge builds alone, warning-free, and the
## dialing functions' dependency trees hold no router and no file format
DIALING_FUNCTIONS ?= dialer dialer-tick call-events flow-results
function-trees:
	@for group in http dialing background; do \
	  cargo clippy --quiet -p outbound-edge --no-default-features --features $$group -- -D warnings || exit 1; \
	done
	@for function in $(DIALING_FUNCTIONS); do \
	  found=$$(cargo tree --quiet -p $$function -e normal --prefix none | awk '{print $$1}' | sort -u \
	    | grep -E '^(axum|tower-http|utoipa|calamine|rust_xlsxwriter|zip|csv|outbound-files|outbound-api|outbound-service|outbound-workers)$$'); \
	  if [ -n "$$found" ]; then echo "$$function depends on:" $$found; exit 1; fi; \
	done; echo "function-trees: each group builds alone; the dialing functions name no router and no file format"

## conformance: the store's own tests (the DynamoDB semantics it relies on, the races, the edges
## of transaction, item and batch sizes) against AWS's DynamoDB Local, the second judge of what
## dynoxide answers (docs/emulators.md); CONFORMANCE=quick runs the part `make test` runs
CONFORMANCE ?= full
CONFORMANCE_TESTS_quick = test(/^emulator::/)
CONFORMANCE_TESTS_full = test(/^(emulator|races|task_races|import_limits|partitions|shards)::/)
conformance:
	@scripts/dynamodb_local.sh setup
	@started=$$(scripts/dynamodb_local.sh running || echo yes); \
	scripts/dynamodb_local.sh start >/dev/null; \
	trap '[ -n "$$started" ] && scripts/dynamodb_local.sh stop >/dev/null' EXIT; \
	DYNAMODB_ENDPOINT=http://127.0.0.1:$${DYNAMODB_LOCAL_PORT:-8001} \
	  cargo nextest run --workspace -E 'binary(api) and $(CONFORMANCE_TESTS_$(CONFORMANCE))'

## sim: the deterministic simulation (sim/): SEEDS seeds (default 5,000) of the engine, the store
## and the API in one process over an embedded DynamoDB, faults and interleavings from each seed;
## SIM_SEED=n replays one seed and prints its outcome and trace hash (SIM_TRACE=1: every line of
## its trace; SIM_LOG=<filter>: the service's log). `make test` plays 2,000. The twenty parts run
## side by side (nextest's --no-capture would run them one at a time), each printing its tally
## when it ends. They run under nextest's `sim` profile, which never ends a part for its time.
SEEDS ?= 5000
SIM_CARGO = cargo nextest run --profile sim --workspace
sim:
	SIM_SEEDS=$(SEEDS) $(if $(SIM_SEED),SIM_SEED=$(SIM_SEED)) $(SIM_CARGO) $(if $(SIM_SEED),--no-capture,--success-output final) -E 'binary(seeds) and test(/^seeds_part_/)'

## sim-mutants: the mutation table: each bug planted in the engine (outbound_model::simulation::Bug)
## in turn, seeds played until one breaks a promise (at most SIM_MUTANT_SEEDS, default 1000);
## SIM_MUTANT=<name> plants that one alone
sim-mutants:
	$(if $(SIM_MUTANT_SEEDS),SIM_MUTANT_SEEDS=$(SIM_MUTANT_SEEDS)) $(if $(SIM_MUTANT),SIM_MUTANT=$(SIM_MUTANT)) $(SIM_CARGO) --no-capture --run-ignored only -E 'binary(seeds) and test(every_planted_bug_is_found)'

## sim-http: the seeded simulation over HTTP, moto's queues and the fault proxy (D28), SEEDS
## seeds; SIM_SEED=n replays one
sim-http:
	@started=$$(curl -fs -o /dev/null $(MOTO_ENDPOINT)/moto-api/ || echo yes); \
	scripts/stack.sh start; \
	trap '[ -n "$$started" ] && scripts/stack.sh stop' EXIT; \
	SIM_SEEDS=$(SEEDS) $(if $(SIM_SEED),SIM_SEED=$(SIM_SEED)) cargo test --workspace --test api simulation -- --nocapture --test-threads 3

## console: the console's static files into console/dist (npm ci and vite build, when changed)
console:
	scripts/console.sh build

## openapi: rewrite openapi.yaml from the code (a unit test fails while they differ)
openapi:
	OPENAPI_UPDATE=1 cargo test --quiet -p outbound-api --lib contract::tests

## token: a development access token of an administrator of TENANT (a member of admins, D32),
## valid 24 hours; MEMBER=1 makes it a member's of no group; SCOPES="outbound/read
## outbound/write" (space or comma separated, any scopes) puts them in its scope claim (D25);
## ROLE=admin or ROLE=operator adds that role's scope and its group (admins, operators: D29)
SCOPES ?=
ROLE ?=
MEMBER ?=
token:
	@$(BUILD_LOCAL) && target/debug/dev-token $(if $(MEMBER),--member) $(TENANT) $(SCOPES) $(if $(ROLE),outbound/$(ROLE))

## lambda-env: .local/lambda.env, the functions' environment for `cargo lambda watch --env-file`, on
## the stack `make run` serves (provisioned if missing); starts moto if none answers and leaves it
## running for the functions (`scripts/stack.sh stop` stops it). `make run` writes the file too.
lambda-env:
	@scripts/stack.sh start >/dev/null
	@$(BUILD_LOCAL) && target/debug/local-api --lambda-env

## lint-template: cfn-lint on template.yaml
lint-template:
	@scripts/stack.sh setup
	.venv/bin/cfn-lint template.yaml

## validate-template: `sam validate --lint` with the pinned SAM CLI (scripts/requirements-deploy.txt,
## installed into .local/venv-deploy); reads samconfig.toml, needs no AWS credentials or network
validate-template:
	@if [ ! -x .local/venv-deploy/bin/sam ] || ! cmp -s scripts/requirements-deploy.txt .local/venv-deploy/requirements.installed; then \
	  python3 -m venv .local/venv-deploy \
	  && .local/venv-deploy/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements-deploy.txt \
	  && cp scripts/requirements-deploy.txt .local/venv-deploy/requirements.installed; \
	fi
	SAM_CLI_TELEMETRY=0 .local/venv-deploy/bin/sam validate --lint --template template.yaml --region us-east-1

## package: every function built for arm64 with the release profile (cargo-lambda and zig from
## .venv, as `sam build` does) and zipped: target/lambda/<name>/bootstrap.zip (CARGO_TARGET_DIR honoured);
## prints each zip's and binary's size (samples `package_zip_bytes.<name>` when BENCH_DIR is set)
package:
	scripts/package.sh

## bench: every benchmark BENCH_RUNS times (default 3), the expensive ones (the 1,000-contact
## campaign, the 10,000-task tick) once, against dynoxide (DynamoDB, a database of each bench's
## own) and moto on MOTO_PORT (S3, SQS, EventBridge; started if none answers); each figure is a
## sample in .local/bench/samples.jsonl (fresh each time), summarised at the end into
## bench/results.json and BENCHMARKS.md (median, min, max; beside the medians measured on moto,
## bench/moto.json) by scripts/bench_report.py
BENCH_RUNS ?= 3
FUNCTIONS := datasource-api task-api contact-import reclaim dialer-tick dialer call-events exporter event-publisher flow-results
bench bench-run bench-once bench-cold-start: export BENCH_DIR ?= $(CURDIR)/.local/bench

# The ten functions and the hello baseline the cold-start bench spawns, built with the bench
# profile; each links at a fixed address (functions/link.rs), as `make package` builds them.
bench-functions:
	cargo build --quiet --profile bench $(addprefix -p ,$(FUNCTIONS)) -p hello-lambda

bench:
	@mkdir -p $(BENCH_DIR) && rm -f $(BENCH_DIR)/samples.jsonl
	@$(MAKE) --no-print-directory bench-venv
	@$(MAKE) --no-print-directory bench-functions
	@started=$$(curl -fs -o /dev/null $(MOTO_ENDPOINT)/moto-api/ || echo yes); \
	scripts/stack.sh start >/dev/null; \
	trap '[ -n "$$started" ] && scripts/stack.sh stop' EXIT; \
	for run in $$(seq $(BENCH_RUNS)); do \
	  echo "== bench run $$run of $(BENCH_RUNS)"; \
	  $(MAKE) --no-print-directory bench-run || exit 1; \
	done; \
	echo "== expensive benches, once"; \
	$(MAKE) --no-print-directory bench-once
	python3 scripts/bench_report.py

## bench-cold-start: only the cold-start figures, BENCH_RUNS times, into bench/results.json and
## BENCHMARKS.md beside the figures kept from the last `make bench` (bench_report.py --keep)
bench-cold-start:
	@mkdir -p $(BENCH_DIR) && rm -f $(BENCH_DIR)/samples.jsonl
	@$(MAKE) --no-print-directory bench-functions
	for run in $$(seq $(BENCH_RUNS)); do cargo bench --quiet -p outbound-tests --bench cold_start || exit 1; done
	python3 scripts/bench_report.py --keep

# One run of every benchmark that `make bench` repeats: one line each, each recording samples.
bench-run:
	cargo bench --quiet -p outbound-tests --bench files
	@if [ -x .local/venv-bench/bin/python ]; then .local/venv-bench/bin/python scripts/bench_files.py $(BENCH_DIR); fi
	cargo bench --quiet -p outbound-tests --bench import
	cargo bench --quiet -p outbound-tests --bench api_latency
	cargo bench --quiet -p outbound-tests --bench cold_start
	BENCH_DIALING=cheap cargo bench --quiet -p outbound-tests --bench dialing
	cargo bench --quiet -p outbound-tests --bench pacing
	scripts/console.sh bench

# The benchmarks too slow to repeat: run once per `make bench` (the report says runs: 1).
bench-once:
	BENCH_DIALING=expensive cargo bench --quiet -p outbound-tests --bench dialing
	BENCH_IMPORT=100k cargo bench --quiet -p outbound-tests --bench import
	cargo bench --quiet -p outbound-tests --bench grown_stack

# pandas/openpyxl for the Python comparison, in .local/venv-bench (skipped when not installable)
bench-venv:
	@if [ ! -x .local/venv-bench/bin/python ] || ! cmp -s scripts/requirements-bench.txt .local/venv-bench/requirements.installed; then \
	  { python3 -m venv .local/venv-bench \
	    && .local/venv-bench/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements-bench.txt \
	    && cp scripts/requirements-bench.txt .local/venv-bench/requirements.installed; } >/dev/null 2>&1 \
	  || echo "python comparison skipped: pandas/openpyxl could not be installed"; \
	fi
