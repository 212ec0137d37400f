"""Comparison for `make bench`: pandas.read_csv and openpyxl (read-only) on the files the Rust
benchmark generated. Prints `name value` lines like the Rust side; parse only, no validation."""

import statistics
import sys
import time
from pathlib import Path

RUNS = 11


def times_ms(action):
    """Median and fastest of RUNS runs after one warm-up, like the Rust side."""
    action()
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), min(times)


def report(name, action):
    median, fastest = times_ms(action)
    print(f"{name}_ms_median {median:.2f}")
    print(f"{name}_ms_min {fastest:.2f}")


def main():
    folder = Path(sys.argv[1])
    csv_path, xlsx_path = folder / "contacts.csv", folder / "contacts.xlsx"
    try:
        import openpyxl
        import pandas
    except ImportError as missing:
        print(f"python comparison skipped: {missing}")
        return

    report("pandas_read_csv", lambda: pandas.read_csv(csv_path, dtype=str))

    def read_xlsx():
        workbook = openpyxl.load_workbook(xlsx_path, read_only=True)
        rows = sum(1 for _ in workbook.worksheets[0].iter_rows(values_only=True))
        workbook.close()
        return rows

    report("openpyxl_read_only", read_xlsx)


if __name__ == "__main__":
    main()
