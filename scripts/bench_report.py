#!/usr/bin/env python3
"""Turns the benchmark samples of `make bench` into `bench/results.json` and `BENCHMARKS.md`.

With `--keep`, the figures of the existing `bench/results.json` that the new samples do not
measure stay as they are, so one group can be measured again alone (`make bench-cold-start`).

Reads `$BENCH_DIR/samples.jsonl` (or the file given as the first argument): one JSON object a
line, `{"key": "dotted.path", "value": number}`, one line per figure per run, written by
`outbound_tests::bench::record` and scripts/bench_files.py. Samples are grouped by key; each
key's median, min and max over its runs go to `bench/results.json` as nested objects (one level
per dotted segment) and to one table per group in `BENCHMARKS.md`, with the goal the issue sets
for it. Beside each median stands the figure measured with moto as the DynamoDB of the stack
(`bench/moto.json`, the last results before dynoxide, kept as they were). Plain Python 3, no
dependencies.
"""

import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The goals the issue states: key pattern (`*` stands for one or more dotted segments' text),
# comparison and bound. Figures without one show "—".
GOALS = [
    ("cold_start_ms.*", "<=", 20),
    ("cold_start_ratio_vs_hello", "<=", 1.5),
    ("dialing.requests_per_call.total", "<=", 4),
    ("import.partition_wcu_share.*", "<=", 1),
    ("dialing.concurrent_*_runs.claims_tried_per_call", "<=", 1.2),
    ("dialing.resting_*_tasks.dial_runs_per_hour", "<=", 0),
    ("grown_stack.contact_add_ms.grown.c1.p50", "<=", 300),
    ("pacing.predictive.occupancy_pct", ">=", 80),
    ("pacing.predictive.abandonment_pct", "<=", 3),
    ("pacing.predictive_over_progressive_contacts", ">=", 1.5),
]

# The tables, in this order: key prefixes (a key belongs to the first group with a prefix equal
# to it or to its start up to a dot), title, and what is measured against what. Keys of no group
# get a table of their own, named after their first segment.
GROUPS = [
    (
        ["grown_stack"],
        "The local stack as data grows",
        "A stack run as `make run` runs it (API, queue pollers, the tick every 2 s, the reclaim "
        "sweep, the stream pump; DynamoDB from dynoxide in the process, S3, SQS and EventBridge from "
        "moto), fresh and again after it holds 100,000 contacts "
        "(ten CSV files imported the presigned way) and 100 finished tasks: `POST "
        ".../contact/add` p50/p99 at concurrency 1 and 16 (200 each), moto's CPU share while the "
        "stack is left alone (`moto_busy_pct`), and how long the loading took "
        "(`tests/benches/grown_stack.rs`, debug or release as run).",
    ),
    (
        ["pacing"],
        "Pacing (D30)",
        "A simulated day of one task on a queue of 20 agents, paced second by second by "
        "`outbound_model::pacing::calls_to_place`: 25 % of calls answered, 120 s handle time "
        "(Erlang-4), 5-20 s ring answered and 15-25 s not, abandoned after 2 s without an agent, "
        "10,000 contacts called once, 5 seeds; progressive at 1.0 call per free agent and "
        "predictive at a 3 % target (`tests/benches/pacing.rs`).",
    ),
    (
        ["cold_start_ms", "cold_start_ratio_vs_hello"],
        "Cold start",
        "Each function binary from exec to its first request for an event "
        "(`GET /2018-06-01/runtime/invocation/next`, what Lambda reports as Init Duration), "
        "against a local Runtime API stand-in, with the deployed environment: configuration read "
        "and SDK clients built. Median of 20 spawns per run; the ratio is the slowest function "
        "over a hello-world `lambda_runtime` binary (`bench/hello-lambda`) built the same way: "
        "bench profile, linked at a fixed address (`functions/link.rs`). Where the rest of "
        "the start goes: `docs/scaling.md` §7.3.",
    ),
    (
        ["api_latency_ms", "api_own_ms", "api_store_calls"],
        "API latency",
        "The main endpoints through the local API (in process, real HTTP) against dynoxide "
        "(DynamoDB, in the process) and moto (S3, SQS), 200 "
        "requests each at concurrency 1 (`c1`) and 16 (`c16`): wall latency p50/p99 "
        "(`api_latency_ms`), the service's own time (`api_own_ms`: the handler's time minus the "
        "time waiting on AWS, from the SDK's own attempt timings, as the `Server-Timing` header "
        "answers it) and the DynamoDB calls each request made (`api_store_calls`). With moto as "
        "DynamoDB (single-threaded Python) the wall time at c16 was mostly its queue.",
    ),
    (
        ["package_zip_bytes"],
        "Packages",
        "Each function's arm64 Lambda zip from `make package` (fat LTO, one codegen unit, "
        "stripped), in bytes.",
    ),
    (
        ["parse_ms", "parse_fastest_ms", "file_bytes", "export_ms", "export_peak_rss_mib"],
        "Files",
        "The file module in a release build, no network: parse and validate a 10,000-row "
        "contact file as CSV and as .xlsx (`parse_ms`: the median of 51 parses in one run, "
        "`parse_fastest_ms` the fastest; `naive_records_loop` is the csv crate's bare loop, the "
        "floor), beside pandas.read_csv and openpyxl read-only on the same files (parse only, "
        "no validation); and writing a 100,000-contact export: time and the peak resident "
        "memory of the process that writes it (MiB).",
    ),
    (
        ["import"],
        "Import",
        "The 10,000-row files imported end to end through the HTTP API into a new data source, "
        "posted as multipart and the presigned way (upload URL, PUT to S3, upload event to the "
        "import handler), against dynoxide (DynamoDB) and moto (S3, SQS): the times are the "
        "stand-ins', not AWS's; the requests and write capacity units (WCU: 1 per KB per item "
        "written, 2 in a transaction; index writes not included) are what DynamoDB would see. "
        "A data source's rows are spread over its contact shards (`keys` partition keys, 8 by "
        "default), each taking 1,000 WCU/s: `busiest_key_wcu` is what the busiest key took "
        "for the whole file, `modelled_s_at_partition_limit` that ÷ 1,000 (the least time "
        "DynamoDB needs) and `modelled_s_at_pace` ÷ 800 (the import's pace per key); "
        "`partition_wcu_per_s` is what the busiest key was asked for at the rate measured "
        "here, `partition_wcu_share` that ÷ 1,000 (above 1 means throttled on DynamoDB), and "
        "`wcu_per_transaction` the largest transaction.",
    ),
    (
        ["dialing"],
        "Dialing",
        "The dialing engine against dynoxide with the simulated provider. A 1,000-contact task "
        "from publish to COMPLETED (`campaign_*`, outcomes at once, the clock moved past each "
        "retry): per placed call, the DynamoDB requests, items written and WCUs, split into "
        "the claim transaction, the placing transaction (provider call id and call record), "
        "the outcome (call record read and outcome transaction) and the run (the tick and each "
        "dial run's reads and cursor); `total` is their sum; `tenant_partition`, "
        "`busiest_task_key` and `busiest_guard_key`: the write units a placed call costs the "
        "tenant's own partition, its busiest task key and its busiest do-not-call guard key "
        "(docs/scaling.md 5.2g). One tick with 1, 100 and 10,000 "
        "RUNNING tasks (and as many DRAFT ones): its requests, dial jobs and time. "
        "`national_list*`: 2,000 contacts over four US zones, two of them outside a window read "
        "in each contact's local time, with a frequency cap and a do-not-call list set (D15-D17): "
        "items read per placed call and per dial run until the open zones are called; "
        "`*.claim_checked`: the claim's cost with the do-not-call check and the cap in it. "
        "Times are the stand-in's; counts are what AWS would see.",
    ),
    (
        ["console"],
        "Console",
        "The built console (`console/dist/assets`): its JavaScript and CSS, raw and gzipped at "
        "level 9 (`*_bytes`); and its first load against the local API (`first_load_ms.*`): five "
        "cold loads of the sign-in address per run, each in a fresh headless Chromium profile, "
        "until DOMContentLoaded, load, and the data sources page's heading shown "
        "(`scripts/console.sh bench`, `console/e2e/bench.ts`).",
    ),
]


def goal_of(key):
    for pattern, op, bound in GOALS:
        regex = "^" + re.escape(pattern).replace(r"\*", ".+") + "$"
        if re.match(regex, key):
            return op, bound
    return None


def group_of(key):
    for index, (prefixes, _, _) in enumerate(GROUPS):
        if any(key == p or key.startswith(p + ".") for p in prefixes):
            return index
    return key.split(".")[0]


def read_samples(path):
    """The values of each key, keys in the order they first appear."""
    samples = {}
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                sample = json.loads(line)
                key, value = sample["key"], float(sample["value"])
            except (ValueError, KeyError, TypeError) as error:
                sys.exit(f"{path}:{number}: not a sample ({error}): {line.strip()}")
            samples.setdefault(key, []).append(value)
    return samples


def summary(values):
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "runs": len(values),
    }


def nested(summaries):
    """Dotted keys as nested objects."""
    tree = {}
    for key, leaf in summaries.items():
        *parents, last = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
            if "runs" in node and not isinstance(node["runs"], dict):
                sys.exit(f"{key}: a figure of its own is also a prefix of this key")
        if last in node:
            sys.exit(f"{key}: also a prefix of other keys")
        node[last] = leaf
    return tree


def number(value):
    if value == int(value) and abs(value) >= 100:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


def goal_cell(key, median):
    goal = goal_of(key)
    if goal is None:
        return "—"
    op, bound = goal
    met = median <= bound if op == "<=" else median >= bound
    sign = "≤" if op == "<=" else "≥"
    return f"{sign} {number(bound)} {'✓' if met else '✗ missed'}"


def command(*args):
    try:
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = "unknown"
    try:
        with open("/proc/meminfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("MemTotal:"):
                    memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except (OSError, ValueError):
        pass
    return [
        ("CPU", cpu),
        ("Cores", str(os.cpu_count())),
        ("Memory", memory),
        ("Kernel", f"{platform.system()} {platform.release()}"),
        ("Rust", command("rustc", "-V")),
        ("Date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ]


def moto_figures():
    """The medians measured when moto served DynamoDB, by dotted key (`bench/moto.json`)."""
    path = ROOT / "bench" / "moto.json"
    if not path.exists():
        return {}
    return {k: v["median"] for k, v in flatten(json.loads(path.read_text(encoding="utf-8"))).items()}


def markdown(summaries):
    moto = moto_figures()
    groups = {}
    for key, leaf in summaries.items():
        groups.setdefault(group_of(key), []).append((key, leaf))
    known = [g for g in range(len(GROUPS)) if g in groups]
    other = sorted(g for g in groups if isinstance(g, str))
    out = [
        "# Benchmarks",
        "",
        "Written by `make bench` (scripts/bench_report.py) from the samples of its runs; the "
        "numbers are also in `bench/results.json`. Each figure is the median, min and max over "
        "`runs` runs of `make bench` (`BENCH_RUNS`, default 3); the expensive ones (the "
        "1,000-contact campaign and the 10,000-task tick) run once. Goals are the issue's. "
        "`moto` is the median measured when moto served DynamoDB (`bench/moto.json`); "
        "dynoxide serves it now (docs/emulators.md).",
        "",
    ]
    for group in known + other:
        if isinstance(group, int):
            _, title, about = GROUPS[group]
        else:
            title, about = group, ""
        out += [f"## {title}", ""]
        if about:
            out += [about, ""]
        out += [
            "| figure | median | min | max | runs | moto | goal |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for key, leaf in sorted(groups[group]):
            out.append(
                f"| `{key}` | {number(leaf['median'])} | {number(leaf['min'])} "
                f"| {number(leaf['max'])} | {leaf['runs']} "
                f"| {number(moto[key]) if key in moto else '—'} | {goal_cell(key, leaf['median'])} |"
            )
        out.append("")
    out += ["## Machine", ""]
    out += [f"- {name}: {value}" for name, value in machine()]
    out.append("")
    return "\n".join(out)


def flatten(tree, prefix=""):
    """The figures of a `bench/results.json` tree, by dotted key (the inverse of `nested`)."""
    figures = {}
    for name, value in tree.items():
        key = f"{prefix}.{name}" if prefix else name
        if isinstance(value, dict) and "median" in value and "runs" in value:
            figures[key] = value
        elif isinstance(value, dict):
            figures.update(flatten(value, key))
    return figures


def kept():
    """`bench/kept.md`: figures measured outside `make bench` (the test suite's own run time, the
    DynamoDB emulators side by side), written by hand and carried into every BENCHMARKS.md."""
    path = ROOT / "bench" / "kept.md"
    return "\n" + path.read_text(encoding="utf-8") if path.exists() else ""


def main():
    args = sys.argv[1:]
    keep = "--keep" in args
    args = [arg for arg in args if arg != "--keep"]
    if args:
        path = Path(args[0])
    elif os.environ.get("BENCH_DIR"):
        path = Path(os.environ["BENCH_DIR"]) / "samples.jsonl"
    else:
        sys.exit("usage: bench_report.py [samples.jsonl] (or set BENCH_DIR)")
    if not path.exists():
        sys.exit(f"{path}: no samples (run make bench)")
    summaries = {key: summary(values) for key, values in read_samples(path).items()}
    existing = ROOT / "bench" / "results.json"
    if keep and existing.exists():
        earlier = flatten(json.loads(existing.read_text(encoding="utf-8")))
        summaries = {**{k: v for k, v in earlier.items() if k not in summaries}, **summaries}
    (ROOT / "bench").mkdir(exist_ok=True)
    results = json.dumps(nested(summaries), indent=2, sort_keys=True) + "\n"
    (ROOT / "bench" / "results.json").write_text(results, encoding="utf-8")
    (ROOT / "BENCHMARKS.md").write_text(markdown(summaries) + kept(), encoding="utf-8")
    print(f"{len(summaries)} figures from {path} -> bench/results.json, BENCHMARKS.md")


if __name__ == "__main__":
    main()
