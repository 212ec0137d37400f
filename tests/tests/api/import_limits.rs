//! What a bulk import refuses as a whole, and what it costs (D8): the row and size limits, file
//! types decided by content, damaged and hostile archives, files without a phone column or not in
//! UTF-8. Every refused file leaves the data source as it was. Also the 10,000-row maximum and
//! the DynamoDB requests an import of 1,000 rows makes.

use crate::files::{
    csv, handmade_xlsx, nth_phone, numbered_csv, sheet_xml, xlsx, zip, zip_bomb_xlsx, Cell,
    ONE_CONTACT_ROWS,
};
use crate::support::TestApi;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Imports `file` into `source` and asserts the refusal `code` with exactly `message`, and that
/// nothing was stored: the same `contactCount` and contacts, not one table item or S3 object
/// written (no import record, no copy of the file).
async fn assert_refused(
    api: &TestApi,
    source: &str,
    name: &str,
    file: Vec<u8>,
    code: u16,
    message: &str,
) {
    let before = (
        api.contact_count("acme", source).await,
        api.all_contacts("acme", source).await,
    );
    let stored = (api.snapshot().await, api.object_keys().await);
    api.batch_import("acme", source, name, file)
        .await
        .err(code, message);
    let after = (
        api.contact_count("acme", source).await,
        api.all_contacts("acme", source).await,
    );
    assert_eq!(after, before, "{name} changed the data source");
    assert!(
        (api.snapshot().await, api.object_keys().await) == stored,
        "{name} stored something"
    );
}

/// A data source holding one contact, 13900139000.
async fn source_with_one_contact(api: &TestApi) -> String {
    let source = api.data_source("acme", "Limits").await;
    api.contact("acme", &source, "13900139000").await;
    source
}

#[tokio::test]
async fn ten_thousand_rows_are_accepted() {
    // D8: at most 10,000 data rows; blank rows do not count towards them.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Ten thousand").await;
    let mut file = numbered_csv(10_000);
    file.extend_from_slice(b",\n \n,,\n");
    let started = Instant::now();
    let answer = api.batch_import("acme", &source, "big.csv", file).await;
    let elapsed = started.elapsed();
    eprintln!("10,000-row import against moto took {elapsed:?}");
    let data = answer.ok();
    assert_eq!(data["importCount"], 10_000);
    assert_eq!(data["successCount"], 10_000);
    assert_eq!(data["failCount"], 0);
    assert_eq!(data["details"], serde_json::json!([]));
    assert_eq!(api.contact_count("acme", &source).await, 10_000);
    let last = api
        .contacts(
            "acme",
            &source,
            &format!("phoneNumber={}", nth_phone(9_999)),
        )
        .await;
    assert_eq!(last.ok()["total"], 1);
    assert_eq!(last.ok()["rows"][0]["customerName"], "Customer 9999");
}

#[tokio::test]
async fn more_than_ten_thousand_rows_is_413_and_stores_nothing() {
    // D8: more than 10,000 data rows: 413 and nothing stored, in either format.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Too many").await;
    let message = "file has more than 10000 rows";
    assert_refused(&api, &source, "big.csv", numbered_csv(10_001), 413, message).await;
    let phones: Vec<String> = (0..10_001).map(nth_phone).collect();
    let mut rows: Vec<Vec<Cell>> = vec![vec![Cell::Text("phone")]];
    rows.extend(phones.iter().map(|phone| vec![Cell::Text(phone)]));
    let rows: Vec<&[Cell]> = rows.iter().map(Vec::as_slice).collect();
    assert_refused(&api, &source, "big.xlsx", xlsx(&rows), 413, message).await;
    assert_eq!(api.contact_count("acme", &source).await, 0);
    assert_eq!(api.all_contacts("acme", &source).await, Vec::<Value>::new());
}

#[tokio::test]
async fn posted_files_over_what_a_request_carries_are_413() {
    // D8: a posted file larger than a Lambda request carries (4 MiB, base64-encoded into its
    // 6 MB): 413 naming the presigned upload, refused before it is read; 20 MiB files go there.
    let api = TestApi::start().await;
    let source = source_with_one_contact(&api).await;
    let message = format!(
        "file is larger than 4 MiB, the most a request to the API can carry; upload files of up \
         to 20 MiB with POST /api/dataSource/{source}/contact/importUrl"
    );
    let just_over = vec![b'1'; 4 * 1024 * 1024 + 1];
    assert_refused(&api, &source, "over.csv", just_over, 413, &message).await;
    // Far over: refused while the multipart body is still arriving.
    let far_over = vec![b'1'; 30 * 1024 * 1024];
    assert_refused(&api, &source, "far.csv", far_over, 413, &message).await;
}

/// Bytes no text file holds, from a fixed seed.
fn random_binary() -> Vec<u8> {
    let mut state: u32 = 0x9E37_79B9;
    (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        })
        .collect()
}

#[tokio::test]
async fn other_file_types_are_415() {
    // D8: the type is decided by content, not only by the name; anything but CSV and .xlsx: 415.
    let api = TestApi::start().await;
    let source = source_with_one_contact(&api).await;
    let generic =
        |what: &str| format!("unsupported file type ({what}): upload a UTF-8 CSV or an .xlsx file");
    let legacy = "legacy .xls and password-protected workbooks are not supported: \
                  save the sheet as .xlsx (without a password) or as CSV";
    let cases: [(&str, Vec<u8>, String); 7] = [
        (
            "report.pdf",
            b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj\n<<>>".to_vec(),
            generic("PDF document"),
        ),
        (
            "old.xls",
            b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\0\0\0\0\0\0\0\0>\0\x03\0".to_vec(),
            legacy.to_owned(),
        ),
        ("data.bin", random_binary(), generic(".bin")),
        (
            "photo.png",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec(),
            generic("PNG image"),
        ),
        (
            "photo.jpg",
            b"\xFF\xD8\xFF\xE0\0\x10JFIF\0\x01\x01\0".to_vec(),
            generic("JPEG image"),
        ),
        (
            "utf16.csv",
            b"\xFF\xFEp\0h\0o\0n\0e\0\n\x001\x002\x003\x004\x005\0".to_vec(),
            "file is UTF-16 text: save the CSV as UTF-8".to_owned(),
        ),
        (
            "letter.docx",
            zip(&[
                ("word/document.xml", b"<document/>"),
                ("[Content_Types].xml", b"<Types/>"),
            ]),
            "zip archive is not an Excel workbook: upload a UTF-8 CSV or an .xlsx file".to_owned(),
        ),
    ];
    for (name, file, message) in cases {
        assert_refused(&api, &source, name, file, 415, &message).await;
    }
    // Named .csv, but a PDF all the same: the message names what the content is.
    let pdf = b"%PDF-1.4\n".to_vec();
    assert_refused(
        &api,
        &source,
        "leads.csv",
        pdf,
        415,
        &generic("PDF document"),
    )
    .await;
    let binary = random_binary();
    let not_text = generic("binary content, not text");
    assert_refused(&api, &source, "leads.csv", binary, 415, &not_text).await;
}

#[tokio::test]
async fn a_truncated_workbook_is_400_saying_it_is_damaged() {
    // D8: a zip that cannot be read is not a workbook this service can import.
    let api = TestApi::start().await;
    let source = source_with_one_contact(&api).await;
    let whole = xlsx(&[&[Cell::Text("phone")], &[Cell::Number(13800138000.0)]]);
    let cut = whole[..whole.len() / 2].to_vec();
    let message = "file is not a readable .xlsx workbook: the zip archive is damaged";
    assert_refused(&api, &source, "cut.xlsx", cut, 400, message).await;
}

#[tokio::test]
async fn a_zip_bomb_is_413_before_it_is_inflated() {
    // D8: an .xlsx whose parts decompress past 256 MiB: 413, refused before materialising them.
    let api = TestApi::start().await;
    let source = source_with_one_contact(&api).await;
    let built = Instant::now();
    let bomb = zip_bomb_xlsx(300);
    eprintln!(
        "zip bomb: 300 MiB sheet in {} KiB, built in {:?}",
        bomb.len() / 1024,
        built.elapsed()
    );
    assert!(bomb.len() < 3 * 1024 * 1024);
    let started = Instant::now();
    let answer = api.batch_import("acme", &source, "bomb.xlsx", bomb).await;
    let elapsed = started.elapsed();
    eprintln!("zip bomb refused in {elapsed:?}");
    answer.err(413, "xlsx decompresses to more than 256 MiB (zip bomb)");
    // The refusal reads the central directory only, far quicker than inflating 300 MiB;
    // the bound leaves room for the upload and its copy to S3.
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert_eq!(api.contact_count("acme", &source).await, 1);
    // The same workbook with a 2 MiB sheet is an honest one and imports.
    let small = api
        .batch_import("acme", &source, "small.xlsx", zip_bomb_xlsx(2))
        .await;
    assert_eq!(small.ok()["successCount"], 1, "{}", small.body);
}

#[tokio::test]
async fn a_sheet_declaring_too_many_rows_or_columns_is_413() {
    // D8 and the files module: the sheet's <dimension> is checked before any row is read.
    let api = TestApi::start().await;
    let source = source_with_one_contact(&api).await;
    for (dimension, message) in [
        ("A1:E1048576", "file has more than 10000 rows"),
        ("A1:A10002", "file has more than 10000 rows"),
        ("A1:XFD2", "file has more than 256 columns"),
        ("A1:XFD1048576", "file has more than 256 columns"),
    ] {
        let sheet = sheet_xml(dimension, ONE_CONTACT_ROWS);
        assert_refused(
            &api,
            &source,
            "wide.xlsx",
            handmade_xlsx(sheet.as_bytes()),
            413,
            message,
        )
        .await;
    }
    // The same hand-made workbook with an honest dimension imports.
    let sheet = sheet_xml("A1:A2", ONE_CONTACT_ROWS);
    let answer = api
        .batch_import("acme", &source, "ok.xlsx", handmade_xlsx(sheet.as_bytes()))
        .await;
    assert_eq!(answer.ok()["successCount"], 1);
}

#[tokio::test]
async fn a_file_without_a_phone_column_is_400() {
    // D8: no phone column: 400 and nothing stored.
    let api = TestApi::start().await;
    let source = source_with_one_contact(&api).await;
    let message = "file has no phoneNumber column";
    let rows = csv(&[
        &["name", "address"],
        &["Li Lei", "Beijing"],
        &["13800138000", "x"],
    ]);
    assert_refused(&api, &source, "names.csv", rows, 400, message).await;
    let book = xlsx(&[
        &[Cell::Text("姓名"), Cell::Text("地址")],
        &[Cell::Text("张三"), Cell::Text("北京")],
    ]);
    assert_refused(&api, &source, "names.xlsx", book, 400, message).await;
    assert_refused(&api, &source, "empty.csv", Vec::new(), 400, "file is empty").await;
    assert_refused(
        &api,
        &source,
        "blank.csv",
        b"\xEF\xBB\xBF\n , \n".to_vec(),
        400,
        "file is empty",
    )
    .await;
}

#[tokio::test]
async fn a_csv_that_is_not_utf8_is_400_naming_the_line() {
    // D8: CSV is UTF-8; another encoding is refused with the line it goes wrong on.
    let api = TestApi::start().await;
    let source = source_with_one_contact(&api).await;
    // "张三" in GBK on line 4, after a quoted value spanning lines 2 and 3.
    let file =
        b"phone,name,address\n13800138000,Li,\"Road 1\nBlock 2\"\n13800138001,\xD5\xC5\xC8\xFD,x\n"
            .to_vec();
    assert_refused(
        &api,
        &source,
        "gbk.csv",
        file,
        400,
        "file is not valid UTF-8 at line 4: save the CSV as UTF-8",
    )
    .await;
    // GBK titles: line 1.
    let file = b"\xCA\xD6\xBB\xFA\xBA\xC5,name\n13800138000,x\n".to_vec();
    assert_refused(
        &api,
        &source,
        "gbk-titles.csv",
        file,
        400,
        "file is not valid UTF-8 at line 1: save the CSV as UTF-8",
    )
    .await;
}

#[tokio::test]
async fn importing_1000_rows_takes_few_dynamodb_requests() {
    // D8 / store::import: 49 contacts a transaction, so about 21 writes per 1,000 rows.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Thousand").await;
    let (answer, calls) = api
        .counting(api.batch_import("acme", &source, "k.csv", numbered_csv(1_000)))
        .await;
    eprintln!("importing 1,000 rows made {calls} DynamoDB requests");
    assert_eq!(answer.ok()["successCount"], 1_000);
    assert!((21..=50).contains(&calls), "{calls} DynamoDB requests");
    assert_eq!(api.contact_count("acme", &source).await, 1_000);
    assert_eq!(api.all_contacts("acme", &source).await.len(), 1_000);
}

/// D8: two imports into one data source at once share its pace: each transaction first takes
/// its busiest key's write units from the data source's budget of the second
/// (`IMPORT_WCU_PER_SECOND`, 300 here), so together they never ask a key for more than one
/// import may, where each pacing only itself would ask 200 %. Both store every row.
#[tokio::test]
async fn concurrent_imports_of_one_data_source_share_its_pace() {
    const PACE: u64 = 300;
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Shared pace").await;
    let store = api.store.clone().with_import_pace(PACE as u32);
    let (owner, source_id) = (crate::support::tenant("acme"), crate::support::id(&source));
    let half = |from: usize| {
        let mut text = String::from("phoneNumber\n");
        for index in from..from + 300 {
            text.push_str(&format!("{}\n", nth_phone(index)));
        }
        outbound_files::read_contacts(text.as_bytes(), Some("half.csv")).unwrap()
    };
    let (first, second) = (half(0), half(300));
    let now = outbound_model::Timestamp::now();
    api.calls.writes().take();
    let (one, two) = (outbound_model::Id::new(), outbound_model::Id::new());
    let (a, b) = tokio::join!(
        store.import_contacts(&owner, &source_id, &one, &first.rows, now),
        store.import_contacts(&owner, &source_id, &two, &second.rows, now),
    );
    assert_eq!((a.unwrap().len(), b.unwrap().len()), (300, 300));
    // What the two wrote on each key, from the writes themselves.
    let writes = api.calls.writes().take();
    let client = api.dynamodb();
    let stored = outbound_tests::capacity::sizes_for(&client, &api.resources.table, &writes)
        .await
        .unwrap();
    let rows_writes = writes.iter().filter(|w| !w.writes_sort_key("IMPORTPACE#"));
    let by_key = outbound_tests::capacity::wcus_by_partition(rows_writes, &stored);
    let (_, busiest) = by_key.first().cloned().unwrap();
    assert_eq!(api.contact_count("acme", &source).await, 600);
    let home = outbound_adapters::store::keys::data_source(&owner, &source_id);
    let spent: Vec<u64> = api
        .snapshot()
        .await
        .into_iter()
        .filter(|((pk, sk), _)| *pk == home && sk.starts_with("IMPORTPACE#"))
        .map(|(_, item)| item["units"].as_n().unwrap().parse().unwrap())
        .collect();
    let total: u64 = spent.iter().sum();
    assert!(
        total >= busiest,
        "every unit of the busiest key ({busiest}) was taken from some second: {total}"
    );
    assert!(
        spent.iter().all(|units| *units <= PACE),
        "a second's units within the pace: {spent:?}"
    );
    assert!(
        spent.len() as u64 >= total.div_ceil(PACE),
        "{total} units spread over {} seconds",
        spent.len()
    );
}
