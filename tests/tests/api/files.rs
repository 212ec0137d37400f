//! Contact files for the import and export tests (D8), made in the test: CSV and `.xlsx` builders
//! taking rows of cells, workbooks shaped by hand for the archive and sheet defences, and a reader
//! that turns an exported CSV or `.xlsx` back into rows of text.

use rust_xlsxwriter::Workbook;
use std::io::{Cursor, Write};
use zip::write::SimpleFileOptions;
use zip::ZipWriter;

/// A CSV file (RFC 4180): cells with a comma, quote or line break are quoted; lines end in LF.
pub fn csv(rows: &[&[&str]]) -> Vec<u8> {
    let quote = |cell: &str| {
        if cell.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", cell.replace('"', "\"\""))
        } else {
            cell.to_owned()
        }
    };
    let mut text = String::new();
    for row in rows {
        let cells: Vec<String> = row.iter().map(|cell| quote(cell)).collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    text.into_bytes()
}

/// `bytes` after a UTF-8 byte order mark, as Excel saves "CSV UTF-8".
pub fn with_bom(bytes: Vec<u8>) -> Vec<u8> {
    [b"\xEF\xBB\xBF".as_slice(), &bytes].concat()
}

/// The `index`-th phone number of a generated list: `13000000000 + index`.
pub fn nth_phone(index: usize) -> String {
    (13_000_000_000 + index as u64).to_string()
}

/// A CSV of `count` valid data rows with distinct numbers ([`nth_phone`]) and a name each.
pub fn numbered_csv(count: usize) -> Vec<u8> {
    let mut text = String::from("phoneNumber,customerName\n");
    for index in 0..count {
        text.push_str(&format!("{},Customer {index}\n", nth_phone(index)));
    }
    text.into_bytes()
}

/// One cell of an `.xlsx` built by [`xlsx`].
#[derive(Clone, Copy, Debug)]
pub enum Cell<'a> {
    Text(&'a str),
    /// Stored as a number, as Excel does with a phone number typed into a General cell.
    Number(f64),
    Empty,
}

/// A workbook whose first sheet holds `rows` from A1, written by rust_xlsxwriter as Excel would.
pub fn xlsx(rows: &[&[Cell]]) -> Vec<u8> {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    for (row, cells) in (0u32..).zip(rows) {
        for (column, cell) in (0u16..).zip(cells.iter()) {
            match *cell {
                Cell::Text(text) => sheet.write_string(row, column, text).map(drop),
                Cell::Number(number) => sheet.write_number(row, column, number).map(drop),
                Cell::Empty => Ok(()),
            }
            .unwrap();
        }
    }
    // A second sheet: only the first one is read.
    workbook
        .add_worksheet()
        .write_string(0, 0, "ignored")
        .unwrap();
    workbook.save_to_buffer().unwrap()
}

/// A zip archive of `parts` (name, content), deflated.
pub fn zip(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, body) in parts {
        zip.start_file(*name, SimpleFileOptions::default()).unwrap();
        zip.write_all(body).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// The parts every workbook needs besides its sheet.
const WORKBOOK_PARTS: [(&str, &str); 4] = [
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
];

/// A minimal workbook made by hand around `sheet` (the XML of its only worksheet).
pub fn handmade_xlsx(sheet: &[u8]) -> Vec<u8> {
    let mut parts: Vec<(&str, &[u8])> = WORKBOOK_PARTS
        .iter()
        .map(|(name, body)| (*name, body.as_bytes()))
        .collect();
    parts.push(("xl/worksheets/sheet1.xml", sheet));
    zip(&parts)
}

/// A worksheet declaring `<dimension ref="{dimension}"/>` around `rows`.
pub fn sheet_xml(dimension: &str, rows: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="{dimension}"/><sheetData>{rows}</sheetData></worksheet>"#
    )
}

/// A title row `phone` and one number, in sheet XML.
pub const ONE_CONTACT_ROWS: &str = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>phone</t></is></c></row><row r="2"><c r="A2"><v>13800138000</v></c></row>"#;

/// A workbook whose sheet part inflates to `mib` MiB: a valid sheet padded with spaces (XML
/// whitespace). The part is deflated by hand, each run of 258 spaces one fixed-code copy of 13
/// bits, so a 300 MiB part takes a moment to build and about 2 MiB to send; its declared size
/// and CRC are honest, so a reader that trusted it would inflate all of it.
pub fn zip_bomb_xlsx(mib: usize) -> Vec<u8> {
    let sheet = sheet_xml("A1:A2", ONE_CONTACT_ROWS);
    let (head, tail) = sheet.split_at(sheet.find("<sheetData>").unwrap());
    let spaces = mib * 1024 * 1024;
    let mut deflate = FixedDeflate::new();
    deflate.literals(head.as_bytes());
    deflate.literals(b" ");
    for _ in 0..(spaces - 1) / 258 {
        deflate.repeat_last_258();
    }
    deflate.literals(&vec![b' '; (spaces - 1) % 258]);
    deflate.literals(tail.as_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(head.as_bytes());
    let mebibyte = vec![b' '; 1024 * 1024];
    for _ in 0..mib {
        crc.update(&mebibyte);
    }
    crc.update(tail.as_bytes());
    let mut parts: Vec<ZipPart> = WORKBOOK_PARTS
        .iter()
        .map(|(name, body)| ZipPart::stored(name, body.as_bytes()))
        .collect();
    parts.push(ZipPart {
        name: "xl/worksheets/sheet1.xml",
        deflated: true,
        crc: crc.finalize(),
        size: u32::try_from(head.len() + spaces + tail.len()).unwrap(),
        data: deflate.finish(),
    });
    hand_zip(&parts)
}

/// A raw deflate stream of one block with the fixed Huffman codes (RFC 1951, 3.2.6).
struct FixedDeflate {
    out: Vec<u8>,
    bits: u64,
    count: u32,
}

impl FixedDeflate {
    fn new() -> Self {
        let mut deflate = FixedDeflate {
            out: Vec::new(),
            bits: 0,
            count: 0,
        };
        deflate.put(0b1, 1); // BFINAL: the only block
        deflate.put(0b01, 2); // BTYPE: fixed codes
        deflate
    }

    /// `count` bits of `value`, least significant first.
    fn put(&mut self, value: u32, count: u32) {
        self.bits |= u64::from(value) << self.count;
        self.count += count;
        while self.count >= 8 {
            self.out.push(self.bits as u8);
            self.bits >>= 8;
            self.count -= 8;
        }
    }

    /// A Huffman code of `length` bits, most significant first.
    fn code(&mut self, code: u32, length: u32) {
        self.put(code.reverse_bits() >> (32 - length), length);
    }

    /// Bytes 0-143 as literals: 8-bit codes from 0x30.
    fn literals(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            assert!(byte < 144);
            self.code(0x30 + u32::from(byte), 8);
        }
    }

    /// Length 258 (symbol 285, code 0xC5) at distance 1 (distance code 0): the last byte 258 times.
    fn repeat_last_258(&mut self) {
        self.code(0xC5, 8);
        self.code(0, 5);
    }

    /// Ends the block (symbol 256) and pads the last byte.
    fn finish(mut self) -> Vec<u8> {
        self.code(0, 7);
        if self.count > 0 {
            self.out.push(self.bits as u8);
        }
        self.out
    }
}

/// One part of a zip archive written by [`hand_zip`].
struct ZipPart<'a> {
    name: &'a str,
    deflated: bool,
    crc: u32,
    /// Uncompressed size.
    size: u32,
    data: Vec<u8>,
}

impl<'a> ZipPart<'a> {
    fn stored(name: &'a str, body: &[u8]) -> Self {
        ZipPart {
            name,
            deflated: false,
            crc: crc32fast::hash(body),
            size: body.len() as u32,
            data: body.to_vec(),
        }
    }
}

/// A zip archive of already compressed parts: local headers and data, the central directory,
/// and its end record (APPNOTE 4.3).
fn hand_zip(parts: &[ZipPart]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut directory = Vec::new();
    for part in parts {
        let offset = out.len() as u32;
        let mut common = Vec::new();
        common.extend(20u16.to_le_bytes()); // version needed: 2.0
        common.extend(0u16.to_le_bytes()); // flags
        let method: u16 = if part.deflated { 8 } else { 0 };
        common.extend(method.to_le_bytes());
        common.extend(0u16.to_le_bytes()); // time
        common.extend(0x21u16.to_le_bytes()); // date: 1980-01-01
        common.extend(part.crc.to_le_bytes());
        common.extend((part.data.len() as u32).to_le_bytes());
        common.extend(part.size.to_le_bytes());
        common.extend((part.name.len() as u16).to_le_bytes());
        common.extend(0u16.to_le_bytes()); // extra field length

        out.extend(b"PK\x03\x04");
        out.extend(&common);
        out.extend(part.name.as_bytes());
        out.extend(&part.data);

        directory.extend(b"PK\x01\x02");
        directory.extend(20u16.to_le_bytes()); // made by: 2.0
        directory.extend(&common);
        directory.extend([0u8; 10]); // comment length, disk, internal and external attributes
        directory.extend(offset.to_le_bytes());
        directory.extend(part.name.as_bytes());
    }
    let directory_offset = out.len() as u32;
    out.extend(&directory);
    out.extend(b"PK\x05\x06");
    out.extend([0u8; 4]); // disk numbers
    out.extend((parts.len() as u16).to_le_bytes());
    out.extend((parts.len() as u16).to_le_bytes());
    out.extend((directory.len() as u32).to_le_bytes());
    out.extend(directory_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes()); // comment length
    out
}

/// The rows of an exported file as text, title row first: CSV (after its BOM) or `.xlsx`
/// (first sheet; numbers written without a fraction, empty cells as "").
pub fn read_export(bytes: &[u8]) -> Vec<Vec<String>> {
    if bytes.starts_with(b"PK") {
        use calamine::{Data, Reader, Xlsx};
        let mut workbook: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).unwrap();
        let range = workbook.worksheet_range_at(0).unwrap().unwrap();
        return range
            .rows()
            .map(|row| {
                row.iter()
                    .map(|cell| match cell {
                        Data::Float(number) => format!("{number}"),
                        other => other.to_string(),
                    })
                    .collect()
            })
            .collect();
    }
    let body = bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .expect("CSV exports start with a UTF-8 BOM");
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(body)
        .records()
        .map(|record| record.unwrap().iter().map(str::to_owned).collect())
        .collect()
}
