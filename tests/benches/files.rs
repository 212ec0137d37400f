//! Benchmark of the file module (`make bench`, release build): parse + validate of a 10,000-row
//! contact file as CSV and as `.xlsx`, and the time and peak memory of writing a 100,000-contact
//! export. Each figure is recorded with [`record`] (`parse_ms.*`, `export_*`, `file_bytes.*`).
//! The generated files are left in the output directory (`BENCH_DIR`, default the system temp
//! dir) for the Python comparison (scripts/bench_files.py) and the import benchmark.
//!
//! The export is measured in a child process (this binary run again with `--export-child`), so
//! its VmHWM holds nothing but the export.

use outbound_files::{read_contacts, ContactSheetWriter, ExportColumns, ExportRow, ParsedFile};
use outbound_model::export::ExportFormat;
use outbound_model::ContactFields;
use outbound_tests::bench::record;
use rust_xlsxwriter::Workbook;
use std::error::Error;
use std::fmt::Write as _;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const ROWS: usize = 10_000;
const EXPORT_ROWS: usize = 100_000;
const RUNS: usize = 51;
const TITLES: [&str; 5] = [
    "phoneNumber",
    "customerName",
    "address",
    "orderAmount",
    "remark",
];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--export-child") {
        let format = args.get(at + 1).ok_or("missing format")?;
        let path = args.get(at + 2).ok_or("missing path")?;
        return export_child(format, Path::new(path));
    }
    // `--repeat-csv N` / `--repeat-xlsx N`: only parse that file N times, for a profiler.
    for (flag, make) in [
        ("--repeat-csv", csv_file as fn() -> Result<Vec<u8>>),
        ("--repeat-xlsx", xlsx_file),
    ] {
        if let Some(at) = args.iter().position(|a| a == flag) {
            let times: usize = args.get(at + 1).ok_or("missing count")?.parse()?;
            let bytes = make()?;
            for _ in 0..times {
                check(read_contacts(&bytes, None)?)?;
            }
            return Ok(());
        }
    }
    let dir = std::env::var_os("BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("outbound-bench"));
    std::fs::create_dir_all(&dir)?;

    let csv = csv_file()?;
    let xlsx = xlsx_file()?;
    std::fs::write(dir.join("contacts.csv"), &csv)?;
    std::fs::write(dir.join("contacts.xlsx"), &xlsx)?;
    record("file_bytes.csv_10k", csv.len() as f64);
    record("file_bytes.xlsx_10k", xlsx.len() as f64);
    for (name, bytes) in [("csv", &csv), ("xlsx", &xlsx)] {
        let times = timed(|| Ok(read_contacts(bytes, None)?), check)?;
        times.record(&format!("{name}_10k.rust"));
    }
    // The floor on this machine: the csv crate's records loop alone, no checks, nothing kept.
    timed(|| naive_csv_loop(&csv), |()| Ok(()))?.record("csv_10k.naive_records_loop");

    for (arg, format) in [("excel", ExportFormat::Excel), ("csv", ExportFormat::Csv)] {
        let path = dir.join(format!("export.{}", format.extension()));
        let output = Command::new(std::env::current_exe()?)
            .args(["--export-child", arg])
            .arg(&path)
            .output()?;
        if !output.status.success() {
            return Err(format!(
                "export child failed: {}",
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        print!("{}", String::from_utf8_lossy(&output.stdout));
        record(
            &format!("file_bytes.{}_100k_export", format.extension()),
            std::fs::metadata(&path)?.len() as f64,
        );
    }
    Ok(())
}

/// Median and fastest of the runs of one parse, in milliseconds.
struct Times {
    median: f64,
    fastest: f64,
}

impl Times {
    /// Records both, as `parse_ms.<what>` and `parse_fastest_ms.<what>`.
    fn record(&self, what: &str) {
        record(&format!("parse_ms.{what}"), self.median);
        record(&format!("parse_fastest_ms.{what}"), self.fastest);
    }
}

/// Median and fastest wall time of `run` over [`RUNS`] runs, after one warm-up. The fastest run
/// shows the cost without interference from whatever else the machine is doing. What `run`
/// made is checked and dropped after its time is taken.
fn timed<T>(mut run: impl FnMut() -> Result<T>, check: impl Fn(T) -> Result<()>) -> Result<Times> {
    check(run()?)?;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let made = run()?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        check(made)?;
    }
    times.sort_by(f64::total_cmp);
    Ok(Times {
        median: times[RUNS / 2],
        fastest: times[0],
    })
}

fn naive_csv_loop(bytes: &[u8]) -> Result<()> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut record = csv::ByteRecord::new();
    let mut records = 0;
    while reader.read_byte_record(&mut record)? {
        records += 1;
    }
    if records != ROWS + 1 {
        return Err(format!("expected {} records, read {records}", ROWS + 1).into());
    }
    Ok(())
}

fn check(file: ParsedFile) -> Result<()> {
    if file.rows.len() != ROWS || !file.failures.is_empty() {
        return Err(format!(
            "expected {ROWS} valid rows, got {} and {} failures",
            file.rows.len(),
            file.failures.len()
        )
        .into());
    }
    Ok(())
}

/// The cells of data row `index`: a phone, a name, an address, an amount, a remark.
fn row(index: usize, cells: &mut [String; 5]) {
    for cell in cells.iter_mut() {
        cell.clear();
    }
    let _ = write!(cells[0], "138{index:08}");
    let _ = write!(cells[1], "客户{index:05}");
    let _ = write!(cells[2], "北京市朝阳区建国路{}号", index % 200 + 1);
    let _ = write!(cells[3], "{}.{:02}", index % 9000 + 100, index % 100);
    let _ = write!(cells[4], "VIP{}", index % 5);
}

fn csv_file() -> Result<Vec<u8>> {
    let mut text = TITLES.join(",");
    text.push('\n');
    let mut cells = <[String; 5]>::default();
    for index in 0..ROWS {
        row(index, &mut cells);
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    Ok(text.into_bytes())
}

/// A workbook as a person would make it: phones typed as numbers, text in shared strings.
fn xlsx_file() -> Result<Vec<u8>> {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    for (column, title) in (0u16..).zip(TITLES) {
        sheet.write_string(0, column, title)?;
    }
    let mut cells = <[String; 5]>::default();
    for index in 0..ROWS {
        row(index, &mut cells);
        let line = u32::try_from(index)? + 1;
        sheet.write_number(line, 0, cells[0].parse::<f64>()?)?;
        sheet.write_string(line, 1, &cells[1])?;
        sheet.write_string(line, 2, &cells[2])?;
        sheet.write_number(line, 3, cells[3].parse::<f64>()?)?;
        sheet.write_string(line, 4, &cells[4])?;
    }
    Ok(workbook.save_to_buffer()?)
}

/// Writes [`EXPORT_ROWS`] contacts to `path`, made one at a time as a paged store read would
/// hand them over, then records the elapsed time and the peak resident memory of this process.
fn export_child(format: &str, path: &Path) -> Result<()> {
    let format = ExportFormat::parse(Some(format))?;
    let started = Instant::now();
    let out = BufWriter::new(File::create(path)?);
    let mut writer = ContactSheetWriter::new(format, ExportColumns::new(["remark"]), out)?;
    let mut cells = <[String; 5]>::default();
    let mut id = String::new();
    for index in 0..EXPORT_ROWS {
        row(index, &mut cells);
        let mut fields = ContactFields::default();
        for (name, value) in TITLES.iter().zip(&cells).skip(1) {
            fields.set(name, value)?;
        }
        id.clear();
        let _ = write!(id, "01HF{index:022}");
        writer.write(&ExportRow {
            id: &id,
            phone: &cells[0],
            fields: &fields,
            status: (index % 4) as u8,
            call_count: (index % 3) as u32,
            create_time: "2024-05-01 09:30:00",
            update_time: "2024-05-02 18:00:00",
            last_reason: None,
            skip: None,
            caller_id: None,
            message_left: None,
            results: None,
            callback_at: None,
        })?;
    }
    writer.finish()?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    let ext = format.extension();
    record(&format!("export_ms.{ext}_100k"), elapsed.round());
    record(&format!("export_peak_rss_mib.{ext}_100k"), peak_rss_mib()?);
    Ok(())
}

/// VmHWM of this process, in MiB.
fn peak_rss_mib() -> Result<f64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .ok_or("no VmHWM in /proc/self/status")?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()?;
    Ok(kib / 1024.0)
}
