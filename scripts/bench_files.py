"""Comparison for `make bench`: pandas.read_csv and openpyxl (read-only) on the files the Rust
benchmark generated. Prints `name value` lines like the Rust side; parse only, no validation."""

import statistics
import sys
import time
from pathlib import Path

RUNS = 11


def median_ms(action):
    action()
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main():
    folder = Path(sys.argv[1])
    csv_path, xlsx_path = folder / "contacts.csv", folder / "contacts.xlsx"
    try:
        import openpyxl
        import pandas
    except ImportError as missing:
        print(f"python comparison skipped: {missing}")
        return

    print(f"pandas_read_csv_ms_median {median_ms(lambda: pandas.read_csv(csv_path, dtype=str)):.2f}")

    def read_xlsx():
        workbook = openpyxl.load_workbook(xlsx_path, read_only=True)
        rows = sum(1 for _ in workbook.worksheets[0].iter_rows(values_only=True))
        workbook.close()
        return rows

    print(f"openpyxl_read_only_ms_median {median_ms(read_xlsx):.2f}")


if __name__ == "__main__":
    main()
