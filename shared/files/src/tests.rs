//! Whole-file tests of [`super::read_contacts`] and the export writer: real CSV and `.xlsx`
//! bytes, hostile archives, and export-then-import round trips.

use super::*;
use outbound_model::export::ExportFormat;
use outbound_model::{Contact, ContactFields, Id, Phone, Timestamp};
use rust_xlsxwriter::Workbook;
use std::io::{Cursor, Write};
use std::time::{Duration, Instant};
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;
use zip::ZipWriter;

fn read(bytes: &[u8]) -> Result<ParsedFile, Error> {
    read_contacts(bytes, None)
}

fn refusal(bytes: &[u8]) -> (u16, String) {
    let error = read(bytes).expect_err("the file should be refused");
    (error.status_code(), error.to_string())
}

fn phones(file: &ParsedFile) -> Vec<&str> {
    file.rows.iter().map(|row| row.phone.as_str()).collect()
}

/// `(row, phone as given, reason)` of every refused row.
pub(super) fn reasons(file: &ParsedFile) -> Vec<(u64, &str, &str)> {
    file.failures
        .iter()
        .map(|f| (f.row, f.phone_number.as_str(), &*f.reason))
        .collect()
}

// ---------------------------------------------------------------- CSV

#[test]
fn csv_with_and_without_bom_reads_the_same() {
    let body = "phoneNumber,customerName,address,orderAmount,vip_level\n\
                13800138000,Li,\"Road 1, Block 2\",12.5,gold\n\
                +86 138-0013-8001,\"Wang\nJr\",,,\n";
    let plain = read(body.as_bytes()).unwrap();
    let with_bom = read(format!("\u{feff}{body}").as_bytes()).unwrap();
    for file in [&plain, &with_bom] {
        assert_eq!(file.kind, FileKind::Csv);
        assert_eq!(file.import_count, 2);
        assert_eq!(phones(file), ["13800138000", "+8613800138001"]);
        assert_eq!(file.rows[0].fields.get("vip_level"), Some("gold"));
        assert_eq!(file.rows[0].fields.get("address"), Some("Road 1, Block 2"));
        assert_eq!(file.rows[1].fields.get("customerName"), Some("Wang\nJr"));
    }
    assert_eq!(plain.rows, with_bom.rows);
}

#[test]
fn csv_chinese_aliases_blank_rows_and_failures() {
    let long_name = "名".repeat(101);
    let csv = format!(
        "手机号码,姓名,地址,订单金额,ID,Status,createTime\n\
         13800138000,张三,北京,100,x,1,2024-01-01 00:00:00\n\
         ,,,,,,\n\
         \n\
         138 0013 8000,李四,,,,,\n\
         abc,王五,,,,,\n\
         13900139000,{long_name},,,,,\n\
         13900139000,赵六,,,,,\n"
    );
    let file = read(csv.as_bytes()).unwrap();
    assert_eq!(file.import_count, 5);
    assert_eq!(phones(&file), ["13800138000", "13900139000"]);
    assert_eq!(file.rows[0].row, 2);
    assert_eq!(file.rows[1].row, 8);
    assert_eq!(file.rows[1].fields.get("customerName"), Some("赵六"));
    // Read-only columns are ignored, never stored as fields.
    assert_eq!(file.rows[0].fields.iter().count(), 3);
    assert_eq!(
        reasons(&file),
        [
            (5, "138 0013 8000", "duplicate in file"),
            (6, "abc", "invalid phoneNumber"),
            (7, "13900139000", "field too long"),
        ]
    );
    assert_eq!(file.import_count, file.rows.len() + file.failures.len());
}

#[test]
fn csv_file_level_refusals() {
    assert_eq!(
        refusal(b"name,address\nLi,Road\n"),
        (400, "file has no phoneNumber column".into())
    );
    assert_eq!(
        refusal(b"phone,name\n12345,ok\n12346,\xB9\xFE\n"),
        (
            400,
            "file is not valid UTF-8 at line 3: save the CSV as UTF-8".into()
        )
    );
    assert_eq!(
        refusal(b"phone,phoneNumber\n"),
        (400, "column 2 repeats the title of column 1".into())
    );
    let (status, message) = refusal("phone,备注\n12345,x\n".as_bytes());
    assert_eq!(status, 400);
    assert!(
        message.starts_with("column 2 title is not a field name: "),
        "{message}"
    );
    let big = vec![b'a'; MAX_UPLOAD_BYTES + 1];
    assert_eq!(refusal(&big), (413, "file is larger than 20 MiB".into()));
}

fn csv_with_rows(count: usize, blank_every: usize) -> Vec<u8> {
    let mut csv = String::from("phoneNumber,customerName\n");
    for index in 0..count {
        if blank_every > 0 && index % blank_every == 0 {
            csv.push_str(",\n");
        }
        csv.push_str(&format!("1380000{index:05},name {index}\n"));
    }
    csv.into_bytes()
}

#[test]
fn csv_ten_thousand_rows_is_the_limit() {
    let file = read(&csv_with_rows(MAX_DATA_ROWS, 100)).unwrap();
    assert_eq!(file.import_count, MAX_DATA_ROWS);
    assert_eq!(file.rows.len(), MAX_DATA_ROWS);
    assert!(file.failures.is_empty());
    assert_eq!(
        refusal(&csv_with_rows(MAX_DATA_ROWS + 1, 0)),
        (413, "file has more than 10000 rows".into())
    );
}

// ---------------------------------------------------------------- XLSX

#[test]
fn xlsx_numbers_as_phones_aliases_and_blank_rows() {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    for (column, title) in ["手机号", "Name", " amount ", "note", "callCount"]
        .into_iter()
        .enumerate()
    {
        sheet.write_string(0, column as u16, title).unwrap();
    }
    sheet.write_number(1, 0, 13800138000.0).unwrap();
    sheet.write_string(1, 1, "张三").unwrap();
    sheet.write_number(1, 2, 99.5).unwrap();
    sheet.write_boolean(1, 3, true).unwrap();
    sheet.write_number(1, 4, 7).unwrap();
    // Row 3 is blank: one cell of spaces only.
    sheet.write_string(2, 1, "   ").unwrap();
    sheet.write_string(3, 0, "+86 139 0013 9000").unwrap();
    sheet.write_number(3, 2, 100).unwrap();
    // Row 5 has text only right of the titled columns: not blank, so it counts and fails.
    sheet.write_string(4, 7, "stray").unwrap();
    sheet.write_number(5, 0, 12.0).unwrap();
    let bytes = workbook.save_to_buffer().unwrap();

    let file = read_contacts(&bytes, Some("contacts.xlsx")).unwrap();
    assert_eq!(file.kind, FileKind::Xlsx);
    assert_eq!(file.import_count, 4);
    assert_eq!(phones(&file), ["13800138000", "+8613900139000"]);
    let first = &file.rows[0];
    assert_eq!(first.row, 2);
    assert_eq!(first.fields.get("customerName"), Some("张三"));
    assert_eq!(first.fields.get("orderAmount"), Some("99.5"));
    assert_eq!(first.fields.get("note"), Some("TRUE"));
    assert_eq!(first.fields.get("callCount"), None);
    assert_eq!(file.rows[1].row, 4);
    assert_eq!(file.rows[1].fields.get("orderAmount"), Some("100"));
    assert_eq!(
        reasons(&file),
        [
            (5, "", "invalid phoneNumber"),
            (6, "12", "invalid phoneNumber")
        ]
    );
}

#[test]
fn xlsx_without_phone_column_is_refused() {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    sheet.write_string(0, 0, "name").unwrap();
    sheet.write_string(1, 0, "Li").unwrap();
    let bytes = workbook.save_to_buffer().unwrap();
    assert_eq!(
        refusal(&bytes),
        (400, "file has no phoneNumber column".into())
    );
}

#[test]
fn xlsx_row_limit_counts_data_rows() {
    let rows = |count: u32| {
        let mut workbook = Workbook::new();
        let sheet = workbook.add_worksheet();
        sheet.write_string(0, 0, "phone").unwrap();
        for row in 1..=count {
            sheet
                .write_number(row, 0, 13_800_000_000.0 + f64::from(row))
                .unwrap();
        }
        workbook.save_to_buffer().unwrap()
    };
    let file = read(&rows(MAX_DATA_ROWS as u32)).unwrap();
    assert_eq!(file.rows.len(), MAX_DATA_ROWS);
    assert_eq!(
        refusal(&rows(MAX_DATA_ROWS as u32 + 1)),
        (413, "file has more than 10000 rows".into())
    );
}

/// A workbook made by hand, so each part can be shaped freely.
fn handmade_workbook(sheet_xml: &str) -> ZipWriter<Cursor<Vec<u8>>> {
    let parts = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#,
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        ),
        ("xl/worksheets/sheet1.xml", sheet_xml),
    ];
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, body) in parts {
        zip.start_file(name, SimpleFileOptions::default()).unwrap();
        zip.write_all(body.as_bytes()).unwrap();
    }
    zip
}

fn sheet_xml(dimension: &str, rows: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="{dimension}"/><sheetData>{rows}</sheetData></worksheet>"#
    )
}

const TWO_ROWS: &str = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>phone</t></is></c></row><row r="2"><c r="A2"><v>13800138000</v></c></row>"#;

fn finish(zip: ZipWriter<Cursor<Vec<u8>>>) -> Vec<u8> {
    zip.finish().unwrap().into_inner()
}

#[test]
fn handmade_workbook_reads() {
    let file = read(&finish(handmade_workbook(&sheet_xml("A1:A2", TWO_ROWS)))).unwrap();
    assert_eq!(phones(&file), ["13800138000"]);
}

#[test]
fn declared_dimensions_refuse_before_reading() {
    let million_rows = finish(handmade_workbook(&sheet_xml("A1:E1048576", TWO_ROWS)));
    assert_eq!(
        refusal(&million_rows),
        (413, "file has more than 10000 rows".into())
    );
    let wide = finish(handmade_workbook(&sheet_xml("A1:XFD2", TWO_ROWS)));
    assert_eq!(
        refusal(&wide),
        (413, "file has more than 256 columns".into())
    );
}

#[test]
fn title_cells_far_right_without_a_dimension_are_refused() {
    let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>phone</t></is></c><c r="XFD1" t="inlineStr"><is><t>far</t></is></c></row>"#;
    let xml = sheet_xml("A1", rows).replace(r#"<dimension ref="A1"/>"#, "");
    assert_eq!(
        refusal(&finish(handmade_workbook(&xml))),
        (413, "file has more than 256 columns".into())
    );
}

#[test]
fn broken_zip_and_other_zips() {
    let (status, message) = refusal(b"PK\x03\x04 this is not really a zip archive");
    assert_eq!(status, 400);
    assert!(message.contains("damaged"), "{message}");

    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    zip.start_file("word/document.xml", SimpleFileOptions::default())
        .unwrap();
    zip.write_all(b"<document/>").unwrap();
    let (status, message) = refusal(&finish(zip));
    assert_eq!(status, 415);
    assert!(message.contains("not an Excel workbook"), "{message}");

    assert_eq!(
        refusal(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\0\0\0\0").0,
        415,
        "legacy .xls"
    );
}

fn assert_refused_quickly_as_bomb(bytes: &[u8]) {
    let started = Instant::now();
    let (status, message) = refusal(bytes);
    let elapsed = started.elapsed();
    assert_eq!(status, 413, "{message}");
    assert!(message.contains("zip bomb"), "{message}");
    // Inflating 300 MiB takes seconds; reading the central directory takes microseconds.
    assert!(elapsed < Duration::from_millis(500), "took {elapsed:?}");
}

#[test]
fn zip_bomb_of_real_parts_is_refused_without_inflating() {
    // 300 parts of 1 MiB of zeros each: honest sizes, 300 MiB in total, ~300 KiB on the wire.
    let mut zip = handmade_workbook(&sheet_xml("A1:A2", TWO_ROWS));
    zip.start_file("xl/media/pad0.bin", SimpleFileOptions::default())
        .unwrap();
    zip.write_all(&vec![0u8; 1024 * 1024]).unwrap();
    for copy in 1..300 {
        zip.deep_copy_file("xl/media/pad0.bin", &format!("xl/media/pad{copy}.bin"))
            .unwrap();
    }
    let bytes = finish(zip);
    assert!(bytes.len() < MAX_UPLOAD_BYTES);
    assert_refused_quickly_as_bomb(&bytes);
}

/// Rewrites the sizes the central directory declares for the part `name`.
fn patch_declared_size(bytes: &mut [u8], name: &str, size: u32) {
    let at = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, window)| *window == b"PK\x01\x02")
        .map(|(offset, _)| offset)
        .find(|&offset| {
            let name_len = u16::from_le_bytes([bytes[offset + 28], bytes[offset + 29]]) as usize;
            bytes.get(offset + 46..offset + 46 + name_len) == Some(name.as_bytes())
        })
        .expect("central directory entry");
    bytes[at + 24..at + 28].copy_from_slice(&size.to_le_bytes());
}

#[test]
fn declared_sizes_are_checked_both_ways() {
    let workbook = finish(handmade_workbook(&sheet_xml("A1:A2", TWO_ROWS)));

    let mut huge = workbook.clone();
    patch_declared_size(&mut huge, "xl/worksheets/sheet1.xml", 300 * 1024 * 1024);
    assert_refused_quickly_as_bomb(&huge);

    // A part inflating past its declared size is stopped by the zip reader, not trusted.
    let mut small = workbook;
    patch_declared_size(&mut small, "xl/worksheets/sheet1.xml", 10);
    let (status, message) = refusal(&small);
    assert_eq!(status, 400);
    assert!(
        message.starts_with("xlsx file could not be read"),
        "{message}"
    );
}

#[test]
fn shared_strings_over_64_mib_are_refused_before_loading() {
    // Stored, not deflated: 128 KiB on the wire, so a declared 64 MiB is an honest-looking ratio.
    let mut zip = handmade_workbook(&sheet_xml("A1:A2", TWO_ROWS));
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    zip.start_file("xl/sharedStrings.xml", stored).unwrap();
    zip.write_all(&vec![b' '; 128 * 1024]).unwrap();
    let workbook = finish(zip);
    let mut over = workbook.clone();
    patch_declared_size(&mut over, "xl/sharedStrings.xml", 64 * 1024 * 1024 + 1);
    assert_eq!(
        refusal(&over),
        (413, "xlsx shared strings are larger than 64 MiB".into())
    );
    let mut at_limit = workbook;
    patch_declared_size(&mut at_limit, "xl/sharedStrings.xml", 64 * 1024 * 1024);
    let message = read(&at_limit).err().map(|e| e.to_string());
    assert_ne!(
        message.as_deref(),
        Some("xlsx shared strings are larger than 64 MiB")
    );
}

// ---------------------------------------------------------------- round trips

fn tricky_contacts() -> Vec<Contact> {
    let rows: [(&str, &[(&str, &str)]); 5] = [
        (
            "+8613800138000",
            &[
                ("customerName", "=HYPERLINK(\"x\")"),
                ("note", "-5"),
                ("vip", "@home"),
            ],
        ),
        (
            "13800138001",
            &[
                ("address", "Road 1, \"Block\" 2\nFloor 3"),
                ("orderAmount", "+12.50"),
            ],
        ),
        ("+12345", &[("customerName", "张三"), ("note", "'quoted'")]),
        ("0101234567", &[]),
        (
            "+1 (212) 736-3100",
            &[("customerName", "+A1"), ("note", "-5 units")],
        ),
    ];
    rows.iter()
        .map(|(phone, fields)| {
            let mut set = ContactFields::default();
            for (name, value) in *fields {
                set.set(name, value).unwrap();
            }
            Contact {
                id: Id::new(),
                data_source_id: Id::new(),
                phone: Phone::parse(phone).unwrap(),
                fields: set,
                status: 2,
                call_count: 3,
                created_at: Timestamp(1_700_000_000_000),
                updated_at: Timestamp(1_700_000_000_000),
            }
        })
        .collect()
}

fn export(format: ExportFormat, contacts: &[Contact]) -> Vec<u8> {
    let columns = ExportColumns::new(["note", "vip"]);
    let mut writer = ContactSheetWriter::new(format, columns, Vec::new()).unwrap();
    for contact in contacts {
        let time = contact.created_at.display(chrono_tz::Tz::UTC);
        writer
            .write(&ExportRow::of_contact(contact, &time, &time))
            .unwrap();
    }
    writer.finish().unwrap()
}

#[test]
fn exports_import_back_unchanged() {
    let contacts = tricky_contacts();
    for (format, kind) in [
        (ExportFormat::Csv, FileKind::Csv),
        (ExportFormat::Excel, FileKind::Xlsx),
    ] {
        let bytes = export(format, &contacts);
        let file = read(&bytes).unwrap();
        assert_eq!(file.kind, kind);
        assert!(file.failures.is_empty(), "{format:?}: {:?}", file.failures);
        let back: Vec<_> = file
            .rows
            .iter()
            .map(|row| (row.phone.clone(), row.fields.clone()))
            .collect();
        let sent: Vec<_> = contacts
            .iter()
            .map(|c| (c.phone.clone(), c.fields.clone()))
            .collect();
        assert_eq!(back, sent, "{format:?}");
    }
}

#[test]
fn csv_cells_keep_numbers_and_guard_formulas_and_xlsx_cells_are_never_prefixed() {
    // D27: a number or phone number is written as it is; a formula start that is neither gets
    // a ' in CSV; .xlsx text is a string cell, written as it is.
    let contacts = tricky_contacts();
    let csv = String::from_utf8(export(ExportFormat::Csv, &contacts)).unwrap();
    assert!(csv.starts_with('\u{feff}'));
    assert!(
        csv.contains(",+8613800138000,\"'=HYPERLINK(\"\"x\"\")\",,,-5,'@home,2,3,"),
        "{csv}"
    );
    assert!(
        csv.contains(",13800138001,,\"Road 1, \"\"Block\"\" 2\nFloor 3\",+12.50,,,2,3,"),
        "{csv}"
    );
    assert!(
        csv.contains(",+12127363100,'+A1,,,'-5 units,,2,3,"),
        "{csv}"
    );
    assert!(
        !csv.contains("'+8613800138000") && !csv.contains("'-5,"),
        "{csv}"
    );

    let xlsx = export(ExportFormat::Excel, &contacts);
    let mut archive = zip::ZipArchive::new(Cursor::new(xlsx)).unwrap();
    let mut sheet = String::new();
    std::io::Read::read_to_string(
        &mut archive.by_name("xl/worksheets/sheet1.xml").unwrap(),
        &mut sheet,
    )
    .unwrap();
    for text in [
        "<t>+8613800138000</t>",
        "<t>=HYPERLINK(\"x\")</t>",
        "<t>-5</t>",
        "<t>@home</t>",
        "<t>+A1</t>",
        "<t>+12.50</t>",
        "<t>phoneNumber</t>",
    ] {
        assert!(sheet.contains(text), "{text} in {sheet}");
    }
    for prefixed in ["<t>'+", "<t>'=", "<t>'-", "<t>'@"] {
        assert!(
            !sheet.contains(prefixed),
            "no text cell is prefixed: {sheet}"
        );
    }
    assert!(!sheet.contains("<f>"), "no cell is a formula: {sheet}");
}

#[test]
fn task_export_rows_take_the_tasks_values() {
    let fields = ContactFields::default();
    let mut writer =
        ContactSheetWriter::new(ExportFormat::Csv, ExportColumns::default(), Vec::new()).unwrap();
    writer
        .write(&ExportRow {
            id: "01HF0000000000000000000000",
            phone: "13800138000",
            fields: &fields,
            status: 3,
            call_count: 9,
            create_time: "2024-01-01 00:00:00",
            update_time: "2024-01-01 00:00:01",
            last_reason: None,
            skip: None,
            caller_id: None,
            message_left: None,
            results: None,
            callback_at: None,
        })
        .unwrap();
    let csv = String::from_utf8(writer.finish().unwrap()).unwrap();
    assert!(
        csv.ends_with(",3,9,2024-01-01 00:00:00,2024-01-01 00:00:01\r\n"),
        "{csv}"
    );
}
