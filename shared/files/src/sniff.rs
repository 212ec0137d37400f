//! Deciding an upload's type from its first bytes (D8: content decides, not the name).
//!
//! A zip container goes to the `.xlsx` reader, which confirms it holds a workbook. Text goes to
//! the CSV reader even when it is not valid UTF-8, so that a file saved in another encoding gets a
//! 400 naming the line rather than a vague 415. Everything else is 415.

use outbound_model::error::Error;
use serde::Serialize;

/// The two file types an import reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    Csv,
    Xlsx,
}

const ZIP_LOCAL_HEADER: &[u8] = b"PK\x03\x04";
const ZIP_EMPTY_ARCHIVE: &[u8] = b"PK\x05\x06";
/// Compound File (OLE2): legacy `.xls`, and also password-protected `.xlsx`.
const OLE_HEADER: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
const UTF16_LE_BOM: &[u8] = b"\xFF\xFE";
const UTF16_BE_BOM: &[u8] = b"\xFE\xFF";
/// Types people upload by mistake, named in the refusal because the file name may not say it.
const KNOWN_OTHER_TYPES: [(&[u8], &str); 7] = [
    (b"%PDF-", "PDF document"),
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xFF\xD8\xFF", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"\x1F\x8B", "gzip archive"),
    (b"Rar!\x1A\x07", "RAR archive"),
    (b"7z\xBC\xAF\x27\x1C", "7z archive"),
];
/// How far to look for control bytes, the mark of binary content.
const TEXT_PROBE: usize = 8000;

/// The type of `bytes`. `file_name` only makes a refusal's message more helpful.
pub(crate) fn sniff(bytes: &[u8], file_name: Option<&str>) -> Result<FileKind, Error> {
    if bytes.starts_with(ZIP_LOCAL_HEADER) || bytes.starts_with(ZIP_EMPTY_ARCHIVE) {
        return Ok(FileKind::Xlsx);
    }
    if bytes.starts_with(OLE_HEADER) {
        return Err(Error::UnsupportedType(
            "legacy .xls and password-protected workbooks are not supported: \
             save the sheet as .xlsx (without a password) or as CSV"
                .into(),
        ));
    }
    if bytes.starts_with(UTF16_LE_BOM) || bytes.starts_with(UTF16_BE_BOM) {
        return Err(Error::UnsupportedType(
            "file is UTF-16 text: save the CSV as UTF-8".into(),
        ));
    }
    if let Some((_, kind)) = KNOWN_OTHER_TYPES
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
    {
        return Err(unsupported(kind));
    }
    let probe = &bytes[..bytes.len().min(TEXT_PROBE)];
    if probe.iter().copied().any(is_binary_byte) {
        return Err(unsupported(&binary_kind(file_name)));
    }
    Ok(FileKind::Csv)
}

/// C0 control bytes that text never holds: all but tab, line feed, vertical tab, form feed,
/// carriage return, and the end-of-file mark 0x1A some old tools append.
fn is_binary_byte(byte: u8) -> bool {
    matches!(byte, 0x00..=0x08 | 0x0E..=0x19 | 0x1B..=0x1F)
}

/// What to call binary content of no known type: its extension, unless that claims a type the
/// content is not.
fn binary_kind(file_name: Option<&str>) -> String {
    let extension = file_name
        .and_then(|name| name.rsplit_once('.'))
        .map(|(_, ext)| ext)
        .filter(|ext| !ext.is_empty() && ext.len() <= 10);
    match extension {
        Some(ext) if !["csv", "txt", "xlsx"].contains(&ext.to_ascii_lowercase().as_str()) => {
            format!(".{ext}")
        }
        _ => "binary content, not text".to_owned(),
    }
}

fn unsupported(what: &str) -> Error {
    Error::UnsupportedType(format!(
        "unsupported file type ({what}): upload a UTF-8 CSV or an .xlsx file"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(bytes: &[u8]) -> u16 {
        sniff(bytes, None).map_or_else(|e| e.status_code(), |_| 200)
    }

    #[test]
    fn content_decides() {
        assert_eq!(
            sniff(b"phone\n1\n", Some("a.xlsx")).ok(),
            Some(FileKind::Csv)
        );
        assert_eq!(
            sniff(b"PK\x03\x04rest", Some("a.csv")).ok(),
            Some(FileKind::Xlsx)
        );
        assert_eq!(sniff(b"\xEF\xBB\xBFphone", None).ok(), Some(FileKind::Csv));
        // Not UTF-8 but text: the CSV reader names the line.
        assert_eq!(sniff(b"\xCA\xD6\xBB\xFA", None).ok(), Some(FileKind::Csv));
        assert_eq!(sniff(b"", None).ok(), Some(FileKind::Csv));
    }

    #[test]
    fn refuses_other_types_with_415() {
        assert_eq!(status(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\0\0"), 415);
        assert_eq!(status(b"\xFF\xFEp\0h\0"), 415);
        assert_eq!(status(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), 415);
        assert_eq!(status(b"\x1F\x8B\x08\x00"), 415);
        let cases: [(&[u8], &str, &str); 5] = [
            // The content names the type, whatever the file is called.
            (b"%PDF-1.7\n%abc", "report.pdf", "PDF document"),
            (b"%PDF-1.7\n%abc", "leads.csv", "PDF document"),
            // Unknown binary: the extension, unless it claims CSV or .xlsx.
            (b"\0\x01\x02", "dump.bin", ".bin"),
            (b"\0\x01\x02", "leads.CSV", "binary content, not text"),
            (b"\0\x01\x02", "noext", "binary content, not text"),
        ];
        for (bytes, name, what) in cases {
            assert_eq!(
                sniff(bytes, Some(name)).unwrap_err().to_string(),
                format!("unsupported file type ({what}): upload a UTF-8 CSV or an .xlsx file"),
                "{name}"
            );
        }
    }
}
