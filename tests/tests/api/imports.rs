//! Bulk import and export end to end (D8): multipart and presigned uploads, the S3-triggered
//! import through moto's S3 -> SQS notification, re-delivery, and export round trips.

use crate::support::TestApi;
use serde_json::json;

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
    let detail = api
        .get("acme", &format!("/api/dataSource/detail/{source}"))
        .await;
    assert_eq!(detail.ok()["contactCount"], 2);
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
    let detail = api
        .get("acme", &format!("/api/dataSource/detail/{source}"))
        .await;
    assert_eq!(detail.ok()["contactCount"], 2);
}

#[tokio::test]
async fn presigned_upload_is_imported_once_however_often_delivered() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Async").await;
    let ticket = api
        .post(
            "acme",
            &format!("/api/dataSource/{source}/contact/importUrl"),
            json!({"fileName": "big list.csv"}),
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
        outbound::worker::upload_message(&api.app, body.clone())
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
    let detail = api
        .get("acme", &format!("/api/dataSource/detail/{source}"))
        .await;
    assert_eq!(detail.ok()["contactCount"], 2);
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
    assert!(text.contains("'+8613900139000"), "{text}");
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
