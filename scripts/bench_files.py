"""Comparison for `make bench`: pandas.read_csv and openpyxl (read-only) on the files the Rust
file benchmark generated, parse only, no validation. Each figure is printed as `key value` and,
like the Rust side's `outbound_tests::bench::record`, appended to `$BENCH_DIR/samples.jsonl`
(`parse_ms.csv_10k.pandas`, `parse_fastest_ms.xlsx_10k.openpyxl`, ...).

Usage: bench_files.py <folder with contacts.csv and contacts.xlsx>"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

RUNS = 11


def record(key, value):
    """One sample of `key`: printed, and appended to $BENCH_DIR/samples.jsonl when it is set."""
    print(f"{key} {value}")
    folder = os.environ.get("BENCH_DIR")
    if folder:
        with open(Path(folder) / "samples.jsonl", "a", encoding="utf-8") as samples:
            samples.write(json.dumps({"key": key, "value": value}) + "\n")


def times_ms(action):
    """Median and fastest of RUNS runs after one warm-up, like the Rust side."""
    action()
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), min(times)


def report(what, action):
    median, fastest = times_ms(action)
    record(f"parse_ms.{what}", round(median, 2))
    record(f"parse_fastest_ms.{what}", round(fastest, 2))


def main():
    folder = Path(sys.argv[1])
    csv_path, xlsx_path = folder / "contacts.csv", folder / "contacts.xlsx"
    try:
        import openpyxl
        import pandas
    except ImportError as missing:
        print(f"python comparison skipped: {missing}")
        return

    report("csv_10k.pandas", lambda: pandas.read_csv(csv_path, dtype=str))

    def read_xlsx():
        workbook = openpyxl.load_workbook(xlsx_path, read_only=True)
        rows = sum(1 for _ in workbook.worksheets[0].iter_rows(values_only=True))
        workbook.close()
        return rows

    report("xlsx_10k.openpyxl", read_xlsx)


if __name__ == "__main__":
    main()
