//! Bulk import end to end (D8): multipart and presigned uploads of real CSV and `.xlsx` files,
//! the row-level report, the S3-triggered import through moto's S3 -> SQS notification,
//! re-delivery and resumption after a crash, the import status endpoint, and tenant isolation of
//! every file endpoint (D3).
//! File-level refusals and volumes are in `import_limits`, exports in `exports`.

use crate::files::{csv, nth_phone, numbered_csv, with_bom, xlsx, Cell};
use crate::support::{assert_id, assert_recent, id, tenant, TestApi};
use outbound_adapters::store::import::{RowOutcome, STALE_CLAIM_MILLIS};
use outbound_model::Timestamp;
use serde_json::{json, Value};

const CSV: &str = "\u{feff}手机号,姓名,address,vip\n13800138000,Li Lei,\"Beijing, Haidian\",gold\n+86 139-0013-9000,Han Meimei,,\n,,,\nbad-phone,X,,\n13800138000,dup,,\n";

#[tokio::test]
async fn multipart_import_reports_rows_and_counts_contacts() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Imported").await;
    let answer = api
        .batch_import("acme", &source, "leads.csv", CSV.as_bytes().to_vec())
        .await;
    let data = answer.ok();
    assert_eq!(data["importCount"], 4);
    assert_eq!(data["successCount"], 2);
    assert_eq!(data["failCount"], 2);
    assert_eq!(
        data["details"],
        json!([
            {"row": 5, "phoneNumber": "bad-phone", "reason": "invalid phoneNumber"},
            {"row": 6, "phoneNumber": "13800138000", "reason": "duplicate in file"},
        ])
    );
    assert!(data["importId"].is_string());
    assert_eq!(api.contact_count("acme", &source).await, 2);
    let list = api
        .get(
            "acme",
            &format!("/api/dataSource/{source}/contacts?phoneNumber=138"),
        )
        .await;
    let row = &list.ok()["rows"][0];
    assert_eq!(row["customerName"], "Li Lei");
    assert_eq!(row["address"], "Beijing, Haidian");
    assert_eq!(row["vip"], "gold");
    // The same file again stores nothing twice.
    let again = api
        .batch_import("acme", &source, "leads.csv", CSV.as_bytes().to_vec())
        .await;
    assert_eq!(again.ok()["successCount"], 0);
    assert_eq!(again.ok()["failCount"], 4);
    assert_eq!(api.contact_count("acme", &source).await, 2);
}

#[tokio::test]
async fn presigned_upload_is_imported_once_however_often_delivered() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Async").await;
    let ticket = api
        .post(
            "acme",
            &format!("/api/dataSource/{source}/contact/importUrl"),
            json!({"fileName": "big list.csv", "fileSize": CSV.len()}),
        )
        .await;
    let ticket = ticket.ok().clone();
    assert_eq!(ticket["method"], "PUT");
    let import_id = ticket["importId"].as_str().unwrap();
    let status_path = format!("/api/dataSource/{source}/contact/import/{import_id}");
    let waiting = api.get("acme", &status_path).await;
    assert_eq!(waiting.ok()["status"], "WAITING_UPLOAD");
    assert_eq!(waiting.ok()["result"], json!(null));
    // S3 announces the notification set-up with a test event; the handler ignores it.
    assert_eq!(api.drain_imports().await, 1);
    let put = reqwest::Client::new()
        .put(ticket["uploadUrl"].as_str().unwrap())
        .body(CSV.as_bytes().to_vec())
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success(), "{}", put.text().await.unwrap());
    // The very same notification delivered twice (SQS is at-least-once).
    let sqs = aws_sdk_sqs::Client::new(&api.sdk);
    let received = sqs
        .receive_message()
        .queue_url(&api.resources.import_queue_url)
        .send()
        .await
        .unwrap();
    let body = received.messages.unwrap()[0].body.clone().unwrap();
    assert!(body.contains("ObjectCreated"), "{body}");
    for _ in 0..2 {
        outbound_workers::upload_message(&api.app, body.clone())
            .await
            .unwrap();
    }
    let done = api.get("acme", &status_path).await;
    let data = done.ok();
    assert_eq!(data["status"], "SUCCEEDED");
    assert_eq!(data["fileName"], "big list.csv");
    assert_eq!(data["result"]["successCount"], 2);
    assert_eq!(data["result"]["failCount"], 2);
    assert_eq!(data["error"], json!(null));
    assert_eq!(api.contact_count("acme", &source).await, 2);
}

#[tokio::test]
async fn csv_export_imports_back_unchanged() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Round trip").await;
    api.batch_import("acme", &source, "leads.csv", CSV.as_bytes().to_vec())
        .await
        .ok();
    let (status, headers, bytes) = api
        .download(
            "acme",
            &format!("/api/dataSource/{source}/contact/batchExport?format=csv"),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/csv; charset=utf-8");
    let disposition = headers["content-disposition"].to_str().unwrap();
    assert!(
        disposition.starts_with("attachment; filename=\"contacts_"),
        "{disposition}"
    );
    assert!(disposition.ends_with(".csv\""), "{disposition}");
    assert!(bytes.starts_with(b"\xEF\xBB\xBF"));
    let text = String::from_utf8(bytes.clone()).unwrap();
    // D27: the number as it is, no guard.
    assert!(text.contains(",+8613900139000,"), "{text}");
    assert!(!text.contains("'+8613900139000"), "{text}");
    let copy = api.data_source("acme", "Copy").await;
    let again = api.batch_import("acme", &copy, "back.csv", bytes).await;
    assert_eq!(again.ok()["successCount"], 2, "{}", again.body);
    let phones = |id: String| {
        let api = &api;
        async move {
            let list = api
                .get("acme", &format!("/api/dataSource/{id}/contacts"))
                .await;
            let mut rows: Vec<(String, String)> = list.ok()["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        r["phoneNumber"].as_str().unwrap().to_owned(),
                        r["customerName"].to_string(),
                    )
                })
                .collect();
            rows.sort();
            rows
        }
    };
    assert_eq!(phones(source).await, phones(copy).await);
}

/// 31 custom column titles, one more than a contact may fill (D7).
fn custom_titles() -> Vec<String> {
    (1..=31).map(|i| format!("c{i}")).collect()
}

#[tokio::test]
async fn report_lists_every_refused_row_with_its_line_and_reason() {
    // D8: row = line in the file (title row = 1); blank rows skipped and not counted;
    // importCount = successCount + failCount; the five reasons.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Rows").await;
    api.contact("acme", &source, "13900139000").await;
    let custom = custom_titles();
    let mut titles = vec!["phoneNumber", "customerName", "address", "orderAmount"];
    titles.extend(custom.iter().map(String::as_str));
    let mut crowded = vec!["13800000004", "", "", ""];
    crowded.extend(["v"; 31]);
    let long_name = "x".repeat(101);
    let file = csv(&[
        &titles,                                                  // line 1
        &["13800000001", "Li Lei", "Road 1, Block 2", "99.50"],   // 2
        &["12", "Too short"],                                     // 3
        &["138-0000-0001", "Same number"],                        // 4
        &["(139) 0013 9000", "Added by hand"],                    // 5
        &["13800000002", &long_name],                             // 6
        &["", "", "  ", ""],                                      // 7 blank
        &["13800000003", "Han Meimei", "line one\nline two", ""], // 8-9
        &crowded,                                                 // 10
        &[" ", "\t"],                                             // 11 blank
        &["+86 138 0000 0005", "Wei", "", "", "gold"],            // 12
        &["13800000002", "Second try"], // 13: row 6 failed, so did not claim the number
    ]);
    let answer = api.batch_import("acme", &source, "rows.csv", file).await;
    let data = answer.ok();
    assert_id(&data["importId"]);
    assert_eq!(
        data,
        &json!({
            "importId": data["importId"],
            "importCount": 9,
            "successCount": 4,
            "failCount": 5,
            "details": [
                {"row": 3, "phoneNumber": "12", "reason": "invalid phoneNumber"},
                {"row": 4, "phoneNumber": "138-0000-0001", "reason": "duplicate in file"},
                {"row": 5, "phoneNumber": "(139) 0013 9000", "reason": "already exists"},
                {"row": 6, "phoneNumber": "13800000002", "reason": "field too long"},
                {"row": 10, "phoneNumber": "13800000004", "reason": "too many fields"},
            ],
        })
    );
    assert_eq!(api.contact_count("acme", &source).await, 5);
    assert_eq!(
        api.contact_fields("acme", &source).await,
        [
            json!({"phoneNumber": "+8613800000005", "customerName": "Wei", "c1": "gold"}),
            json!({"phoneNumber": "13800000001", "customerName": "Li Lei",
                   "address": "Road 1, Block 2", "orderAmount": "99.50"}),
            json!({"phoneNumber": "13800000002", "customerName": "Second try"}),
            json!({"phoneNumber": "13800000003", "customerName": "Han Meimei",
                   "address": "line one\nline two"}),
            json!({"phoneNumber": "13900139000"}),
        ]
    );
}

/// The same two contacts under every accepted spelling of the titles (D8 aliases).
fn alias_files() -> Vec<(&'static str, Vec<u8>)> {
    let rows = |titles: &[&str]| {
        csv(&[
            titles,
            &[
                "13800138000",
                "张三",
                "北京市海淀区, 中关村",
                "99.5",
                "gold",
            ],
            &["139 0013 9000", "李四", "", "", ""],
        ])
    };
    vec![
        (
            "bom-chinese.csv",
            with_bom(rows(&["手机号", "姓名", "地址", "订单金额", "vip"])),
        ),
        (
            "chinese.csv",
            rows(&["手机号码", "客户姓名", "地址", "订单金额", "vip"]),
        ),
        (
            "bom-phone.csv",
            with_bom(rows(&["电话", "name", "address", "amount", "vip"])),
        ),
        (
            "english.csv",
            rows(&["phone", "Name", "ADDRESS", "Amount", "vip"]),
        ),
        (
            "mobile.csv",
            rows(&["Mobile", "customername", "Address", "orderamount", "vip"]),
        ),
        (
            "aliases.xlsx",
            xlsx(&[
                &[
                    Cell::Text("手机号"),
                    Cell::Text("姓名"),
                    Cell::Text("地址"),
                    Cell::Text("订单金额"),
                    Cell::Text("vip"),
                ],
                &[
                    Cell::Number(13800138000.0),
                    Cell::Text("张三"),
                    Cell::Text("北京市海淀区, 中关村"),
                    Cell::Number(99.5),
                    Cell::Text("gold"),
                ],
                &[Cell::Text("139 0013 9000"), Cell::Text("李四")],
            ]),
        ),
    ]
}

#[tokio::test]
async fn titles_match_names_and_aliases_with_or_without_bom() {
    // D8: titles match field names case-insensitively, and the Chinese and English aliases.
    let api = TestApi::start().await;
    let expected = [
        json!({"phoneNumber": "13800138000", "customerName": "张三",
               "address": "北京市海淀区, 中关村", "orderAmount": "99.5", "vip": "gold"}),
        json!({"phoneNumber": "13900139000", "customerName": "李四"}),
    ];
    for (name, file) in alias_files() {
        let source = api.data_source("acme", name).await;
        let answer = api.batch_import("acme", &source, name, file).await;
        assert_eq!(answer.ok()["successCount"], 2, "{name}: {}", answer.body);
        assert_eq!(answer.ok()["details"], json!([]), "{name}");
        assert_eq!(
            api.contact_fields("acme", &source).await,
            expected,
            "{name}"
        );
        assert_eq!(api.contact_count("acme", &source).await, 2, "{name}");
    }
}

#[tokio::test]
async fn xlsx_phone_numbers_stored_as_numbers_keep_their_digits() {
    // D8: the first worksheet; numeric cells come back as the digits a person sees.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Workbook").await;
    let file = xlsx(&[
        &[
            Cell::Text("phoneNumber"),
            Cell::Text("orderAmount"),
            Cell::Text("score"),
        ],
        &[
            Cell::Number(13800138000.0),
            Cell::Number(1250.0),
            Cell::Number(0.75),
        ],
        &[Cell::Text(" "), Cell::Empty, Cell::Text("")],
        &[Cell::Text("'+8613900139000"), Cell::Text("=1+1")],
        &[Cell::Number(12.0), Cell::Number(3.0)],
        &[Cell::Number(13800138000.0), Cell::Number(7.0)],
    ]);
    let answer = api.batch_import("acme", &source, "book.xlsx", file).await;
    let data = answer.ok();
    assert_eq!(data["importCount"], 4);
    assert_eq!(data["successCount"], 2);
    assert_eq!(data["failCount"], 2);
    assert_eq!(
        data["details"],
        json!([
            {"row": 5, "phoneNumber": "12", "reason": "invalid phoneNumber"},
            {"row": 6, "phoneNumber": "13800138000", "reason": "duplicate in file"},
        ])
    );
    assert_eq!(
        api.contact_fields("acme", &source).await,
        [
            json!({"phoneNumber": "+8613900139000", "orderAmount": "=1+1"}),
            json!({"phoneNumber": "13800138000", "orderAmount": "1250", "score": "0.75"}),
        ]
    );
}

#[tokio::test]
async fn import_url_hands_out_a_presigned_put_valid_for_15_minutes() {
    // D8: large files go straight to S3; the upload triggers the import; status reports it.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Async").await;
    let answer = api
        .import_url(
            "acme",
            &source,
            json!({"fileName": " leads.xlsx ", "fileSize": 1234}),
        )
        .await;
    let ticket = answer.ok();
    let import = assert_id(&ticket["importId"]).to_owned();
    assert_eq!(ticket["method"], "PUT");
    assert_eq!(ticket["headers"], json!({"Content-Length": "1234"}));
    let url = ticket["uploadUrl"].as_str().unwrap();
    assert!(
        url.contains(&format!(
            "/{}/uploads/acme/{source}/{import}?",
            api.resources.bucket
        )),
        "{url}"
    );
    assert!(url.contains("X-Amz-Expires=900"), "{url}");
    let expires = chrono::NaiveDateTime::parse_from_str(
        ticket["expiresAt"].as_str().unwrap(),
        "%Y-%m-%d %H:%M:%S",
    )
    .unwrap()
    .and_utc();
    let ahead = (expires - chrono::Utc::now()).num_seconds();
    assert!((14 * 60..=15 * 60 + 5).contains(&ahead), "{ahead} s ahead");

    let waiting = api.import_status("acme", &source, &import).await;
    assert_eq!(waiting.ok()["status"], "WAITING_UPLOAD");
    assert_eq!(waiting.ok()["fileName"], "leads.xlsx");
    assert_eq!(waiting.ok()["result"], Value::Null);
    assert_eq!(waiting.ok()["error"], Value::Null);

    let file = xlsx(&[
        &[Cell::Text("mobile"), Cell::Text("name")],
        &[Cell::Number(13800138000.0), Cell::Text("Li Lei")],
        &[Cell::Text("not a number"), Cell::Text("X")],
    ]);
    let put = reqwest::Client::new()
        .put(url)
        .body(file)
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success(), "{}", put.text().await.unwrap());
    // The set-up test event and the upload's notification.
    assert_eq!(api.drain_imports().await, 2);

    let done = api.import_status("acme", &source, &import).await;
    let data = done.ok();
    assert_recent(&data["createTime"]);
    assert_recent(&data["updateTime"]);
    assert_eq!(
        data,
        &json!({
            "importId": import,
            "status": "SUCCEEDED",
            "fileName": "leads.xlsx",
            "createTime": data["createTime"],
            "updateTime": data["updateTime"],
            "result": {
                "importCount": 2,
                "successCount": 1,
                "failCount": 1,
                "details": [{"row": 3, "phoneNumber": "not a number", "reason": "invalid phoneNumber"}],
            },
            "error": null,
        })
    );
    assert_eq!(
        api.contact_fields("acme", &source).await,
        [json!({"phoneNumber": "13800138000", "customerName": "Li Lei"})]
    );
}

#[tokio::test]
async fn a_refused_upload_ends_failed_with_nothing_stored() {
    // D8: a refused file stores nothing; the import records why.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Refusals").await;
    // A file over 20 MiB never gets an upload URL (see import_url_and_status_refuse_...).
    let refusals: [(&str, Vec<u8>, &str); 2] = [
        (
            "report.pdf",
            b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj".to_vec(),
            "unsupported file type (PDF document): upload a UTF-8 CSV or an .xlsx file",
        ),
        (
            "names.csv",
            csv(&[&["name", "address"], &["Li Lei", "Beijing"]]),
            "file has no phoneNumber column",
        ),
    ];
    for (name, file, message) in refusals {
        let import = api.upload_and_import("acme", &source, name, file).await;
        let answer = api.import_status("acme", &source, &import).await;
        let data = answer.ok();
        assert_eq!(data["status"], "FAILED", "{name}");
        assert_eq!(data["error"], message, "{name}");
        assert_eq!(data["result"], Value::Null, "{name}");
        assert_eq!(api.contact_count("acme", &source).await, 0, "{name}");
        assert_eq!(api.all_contacts("acme", &source).await, Vec::<Value>::new());
    }
}

#[tokio::test]
async fn import_url_and_status_refuse_bad_input_and_unknown_records() {
    // D1: 400 names the field; 404 for what does not exist.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Checks").await;
    for (body, message) in [
        (json!({}), "fileName is required"),
        (json!({"fileName": null}), "fileName is required"),
        (json!({"fileName": ""}), "fileName must be 1-255 characters"),
        (
            json!({"fileName": "   "}),
            "fileName must be 1-255 characters",
        ),
        (
            json!({"fileName": "x".repeat(256)}),
            "fileName must be 1-255 characters",
        ),
        (json!({"fileName": 42}), "fileName must be a string"),
        (json!({"fileName": ["a.csv"]}), "fileName must be a string"),
        (
            json!({"fileName": "a.csv"}),
            "fileSize is required: the size of the file in bytes, which the upload URL is signed for",
        ),
        (
            json!({"fileName": "a.csv", "fileSize": 0}),
            "fileSize must be a positive number of bytes",
        ),
        (
            json!({"fileName": "a.csv", "fileSize": -5}),
            "fileSize must be a positive number of bytes",
        ),
    ] {
        api.import_url("acme", &source, body)
            .await
            .err(400, message);
    }
    // D8: more than 20 MiB is refused before any URL is handed out.
    api.import_url(
        "acme",
        &source,
        json!({"fileName": "a.csv", "fileSize": 20 * 1024 * 1024 + 1}),
    )
    .await
    .err(413, "file is larger than 20 MiB");
    let missing = ulid::Ulid::new().to_string();
    api.import_url(
        "acme",
        &missing,
        json!({"fileName": "a.csv", "fileSize": 10}),
    )
    .await
    .err(404, &format!("dataSource {missing} not found"));
    api.import_status("acme", &source, &missing)
        .await
        .err(404, &format!("import {missing} not found"));
    api.import_status("acme", &source, "nope")
        .await
        .err(404, "import nope not found");
    api.import_status("acme", &missing, &missing)
        .await
        .err(404, &format!("dataSource {missing} not found"));
    // An import is found only under its own data source.
    let posted = api
        .batch_import(
            "acme",
            &source,
            "a.csv",
            csv(&[&["phone"], &["13800138000"]]),
        )
        .await;
    let import = posted.ok()["importId"].as_str().unwrap().to_owned();
    assert_eq!(
        api.import_status("acme", &source, &import).await.ok()["status"],
        "SUCCEEDED"
    );
    let other = api.data_source("acme", "Other").await;
    api.import_status("acme", &other, &import)
        .await
        .err(404, &format!("import {import} not found"));
    api.batch_import(
        "acme",
        &missing,
        "a.csv",
        csv(&[&["phone"], &["13800138000"]]),
    )
    .await
    .err(404, &format!("dataSource {missing} not found"));
}

#[tokio::test]
async fn file_endpoints_hide_another_tenants_records() {
    // D3: another tenant's record answers 404 exactly as a missing one, file endpoints included.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Private").await;
    let file = || csv(&[&["phone"], &["13800138000"]]);
    let posted = api.batch_import("acme", &source, "a.csv", file()).await;
    let import = posted.ok()["importId"].as_str().unwrap().to_owned();
    let task = api
        .post(
            "acme",
            "/api/task/add",
            json!({"taskName": "Private task", "dataSourceId": source}),
        )
        .await;
    let task = task.ok()["id"].as_str().unwrap().to_owned();
    let before = api.snapshot().await;

    let not_found = format!("dataSource {source} not found");
    api.batch_import("globex", &source, "a.csv", file())
        .await
        .err(404, &not_found);
    api.import_url(
        "globex",
        &source,
        json!({"fileName": "a.csv", "fileSize": 10}),
    )
    .await
    .err(404, &not_found);
    api.import_status("globex", &source, &import)
        .await
        .err(404, &not_found);
    for format in ["csv", "excel"] {
        let path = format!("/api/dataSource/{source}/contact/batchExport?format={format}");
        api.get("globex", &path).await.err(404, &not_found);
        let path = format!("/api/task/{task}/export?format={format}");
        api.get("globex", &path)
            .await
            .err(404, &format!("task {task} not found"));
    }
    // Nothing of acme's changed: no contact, no import record, no counter.
    assert_eq!(api.snapshot().await, before);
    assert_eq!(api.contact_count("acme", &source).await, 1);
}

#[tokio::test]
async fn an_interrupted_import_resumes_without_storing_a_row_twice() {
    // D8: an import is idempotent when retried. A worker stored the first transaction's rows
    // (49) of a 120-row file and died holding its claim; once the claim is stale, the re-delivered
    // notification imports the rest, counting the rows it finds written by this same import as
    // stored and the one a contact already held as "already exists".
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Resumed").await;
    api.contact("acme", &source, &nth_phone(100)).await;
    let file = numbered_csv(120);
    let import = api
        .upload("acme", &source, "resume.csv", file.clone())
        .await;

    let (tenant, source_id, import_id) = (tenant("acme"), id(&source), id(&import));
    let long_ago = Timestamp(Timestamp::now().0 - STALE_CLAIM_MILLIS - 1_000);
    let claimed = api
        .store
        .claim_import(&tenant, &source_id, &import_id, long_ago)
        .await
        .unwrap();
    assert!(claimed.is_some());
    let rows = outbound_files::read_contacts(&file, None).unwrap().rows;
    let first = api
        .store
        .import_contacts(&tenant, &source_id, &import_id, &rows[..49], long_ago)
        .await
        .unwrap();
    assert_eq!(first, vec![RowOutcome::Stored; 49]);
    assert_eq!(api.contact_count("acme", &source).await, 50);

    api.drain_imports().await;
    let done = api.import_status("acme", &source, &import).await;
    let data = done.ok();
    assert_eq!(data["status"], "SUCCEEDED", "{data}");
    assert_eq!(
        data["result"],
        json!({"importCount": 120, "successCount": 119, "failCount": 1, "details": [
            {"row": 102, "phoneNumber": nth_phone(100), "reason": "already exists"}
        ]})
    );
    assert_eq!(api.contact_count("acme", &source).await, 120);
    let mut phones: Vec<String> = api
        .all_contacts("acme", &source)
        .await
        .iter()
        .map(|c| c["phoneNumber"].as_str().unwrap().to_owned())
        .collect();
    phones.sort();
    let expected: Vec<String> = (0..120).map(nth_phone).collect();
    assert_eq!(phones, expected);
}

#[tokio::test]
async fn a_delivery_while_another_holds_a_fresh_claim_is_retried_later() {
    // The import function reports the message as failed (SQS delivers it again later) and
    // changes nothing while another worker's claim is fresh.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Busy").await;
    let ticket = api
        .import_url(
            "acme",
            &source,
            json!({"fileName": "busy.csv", "fileSize": 10}),
        )
        .await;
    let import = ticket.ok()["importId"].as_str().unwrap().to_owned();
    let claimed = api
        .store
        .claim_import(
            &tenant("acme"),
            &id(&source),
            &id(&import),
            Timestamp::now(),
        )
        .await
        .unwrap();
    assert!(claimed.is_some());
    let key = outbound_adapters::blob::upload_key(&tenant("acme"), &id(&source), &id(&import));
    let event = json!({"Records": [{"eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": api.resources.bucket}, "object": {"key": key, "size": 10}}}]});
    let before = api.snapshot().await;
    let outcome = outbound_workers::upload_message(&api.app, event.to_string()).await;
    assert!(outcome.is_err(), "a busy import must be retried later");
    assert_eq!(api.snapshot().await, before);
    let status = api.import_status("acme", &source, &import).await;
    assert_eq!(status.ok()["status"], "PROCESSING");
}

/// A tenant runs at most `TENANT_RUNNING_IMPORTS` imports at once (2 here), an upload waiting
/// for its file included: a third upload URL or posted file is 409 and stores nothing; once an
/// import has ended its slot is free again.
#[tokio::test]
async fn a_tenant_runs_at_most_its_cap_of_imports() {
    let api = TestApi::start_with(|config| config.tenant_running_imports = 2).await;
    let source = api.data_source("acme", "Capped").await;
    let file = b"phoneNumber\n13800000001\n".to_vec();
    let first = api.upload("acme", &source, "one.csv", file.clone()).await;
    api.import_url(
        "acme",
        &source,
        json!({"fileName": "two.csv", "fileSize": 30}),
    )
    .await
    .ok();
    let refused = "this tenant already has 2 imports running, the most it may; try again when one has finished";
    api.import_url(
        "acme",
        &source,
        json!({"fileName": "three.csv", "fileSize": 30}),
    )
    .await
    .err(409, refused);
    api.batch_import("acme", &source, "posted.csv", file.clone())
        .await
        .err(409, refused);
    assert_eq!(api.contact_count("acme", &source).await, 0);
    api.drain_imports().await;
    let done = api.import_status("acme", &source, &first).await;
    assert_eq!(done.ok()["status"], "SUCCEEDED");
    let posted = api
        .batch_import(
            "acme",
            &source,
            "posted.csv",
            b"phoneNumber\n13800000002\n".to_vec(),
        )
        .await;
    assert_eq!(posted.ok()["successCount"], 1, "a slot is free again");
}

#[tokio::test]
async fn a_time_zone_title_in_any_case_is_the_contacts_time_zone() {
    // D8's case-insensitive titles reach D15's `timeZone` too: `TimeZone` is that field, checked
    // as it is (an invalid zone refuses the row), never an unchecked custom field.
    let api = TestApi::start().await;
    for (at, title) in ["timeZone", "TimeZone", "TIMEZONE", " timezone "]
        .into_iter()
        .enumerate()
    {
        let source = api.data_source("acme", &format!("Zones {at}")).await;
        let file = csv(&[
            &["phoneNumber", title],
            &["+12125550101", "America/Los_Angeles"],
            &["+12125550102", "Pacific/Nowhere"],
            &["+12125550103", ""],
        ]);
        let answer = api.batch_import("acme", &source, "zones.csv", file).await;
        let data = answer.ok();
        assert_eq!(
            (&data["successCount"], &data["failCount"], &data["details"]),
            (
                &json!(2),
                &json!(1),
                &json!([{"row": 3, "phoneNumber": "+12125550102", "reason": "invalid timeZone"}])
            ),
            "{title:?}"
        );
        assert_eq!(
            api.contact_fields("acme", &source).await,
            [
                json!({"phoneNumber": "+12125550101", "timeZone": "America/Los_Angeles"}),
                json!({"phoneNumber": "+12125550103"}),
            ],
            "{title:?}"
        );
    }
}
