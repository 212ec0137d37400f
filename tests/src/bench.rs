//! Benchmark figures: every `make bench` measurement is recorded here, one sample per run, so
//! `scripts/bench_report.py` can give the median, min and max of several runs in
//! `bench/results.json` and `BENCHMARKS.md`.
//!
//! A key is a dotted path of the results file (`cold_start_ms.datasource-api`); its value is a
//! plain number. Samples are appended to `$BENCH_DIR/samples.jsonl` and printed as `key value`.

use std::io::Write;

/// Records one sample of `key`.
pub fn record(key: &str, value: f64) {
    println!("{key} {value}");
    let Ok(dir) = std::env::var("BENCH_DIR") else {
        return;
    };
    let line = serde_json::json!({ "key": key, "value": value });
    let path = std::path::Path::new(&dir).join("samples.jsonl");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| writeln!(file, "{line}"));
    if let Err(error) = written {
        eprintln!("could not record {key} in {}: {error}", path.display());
    }
}

/// The nearest-rank `p`th percentile of `values` (0 for none), milliseconds rounded to
/// microseconds: the latency figures of the benches that send requests.
pub fn percentile_ms(values: &[f64], p: usize) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    let value = sorted.get(rank - 1).copied().unwrap_or(0.0);
    (value * 1000.0).round() / 1000.0
}
