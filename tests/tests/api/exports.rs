//! Exports (D8): a data source's contacts and a task's contacts as CSV or `.xlsx` downloads —
//! file names, content types, titles, formula-safe cells, re-import of an exported file, the
//! `format` and `status` parameters, and the redirect to a presigned download for large files.

use crate::files::{csv, read_export};
use crate::support::TestApi;
use reqwest::header::{HeaderMap, CONTENT_DISPOSITION, CONTENT_TYPE, LOCATION};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const CSV_TYPE: &str = "text/csv; charset=utf-8";
const XLSX_TYPE: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/// Three contacts whose cells a spreadsheet could take for formulas, with two custom fields.
fn tricky_file() -> Vec<u8> {
    csv(&[
        &[
            "phoneNumber",
            "customerName",
            "address",
            "orderAmount",
            "vip",
            "note",
        ],
        &[
            "+8613800138000",
            "=SUM(A1)",
            "Road 1, Block 2",
            "99.5",
            "gold",
            "-5 units",
        ],
        &["13900139000", "李四", "line one\nline two", "", "", "@home"],
        &["13700137000", "Plain", "", "", "", ""],
    ])
}

/// A data source of acme holding [`tricky_file`]'s contacts.
async fn tricky_source(api: &TestApi, name: &str) -> String {
    let source = api.data_source("acme", name).await;
    let answer = api
        .batch_import("acme", &source, "tricky.csv", tricky_file())
        .await;
    assert_eq!(answer.ok()["successCount"], 3, "{}", answer.body);
    source
}

/// Asserts the response's `Content-Disposition` is an attachment named as [`assert_disposition`] checks.
fn assert_attachment(headers: &HeaderMap, prefix: &str, extension: &str) {
    assert_disposition(
        headers[CONTENT_DISPOSITION].to_str().unwrap(),
        prefix,
        extension,
    );
}

/// Asserts `attachment; filename="{prefix}YYYYMMDDHHMMSS.{extension}"` with a time within a
/// minute of now (UTC, D4).
fn assert_disposition(disposition: &str, prefix: &str, extension: &str) {
    let name = disposition
        .strip_prefix("attachment; filename=\"")
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{disposition}"));
    let stamp = name
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(&format!(".{extension}")))
        .unwrap_or_else(|| panic!("{name} is not {prefix}<time>.{extension}"));
    let at = chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%d%H%M%S")
        .unwrap_or_else(|_| panic!("{stamp} is not YYYYMMDDHHMMSS"))
        .and_utc();
    let skew = (chrono::Utc::now() - at).num_seconds().abs();
    assert!(skew <= 60, "{name} is {skew} s away from now");
}

/// The kind of file an export is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Csv,
    Xlsx,
}

/// A cell as an export writes it (D27): in CSV, `'` before what a spreadsheet could take for a
/// formula unless it is a number or a phone number; in `.xlsx`, text as it is.
fn guarded(text: &str, kind: Kind) -> String {
    let rest = text.strip_prefix(['+', '-']).unwrap_or(text);
    let number = rest.chars().any(|c| c.is_ascii_digit())
        && rest
            .chars()
            .all(|c| c.is_ascii_digit() || " .-()".contains(c));
    if kind == Kind::Csv && text.starts_with(['=', '+', '-', '@', '\t', '\r']) && !number {
        format!("'{text}")
    } else {
        text.to_owned()
    }
}

/// The rows an export of `contacts` holds (title row first, then by id), each contact's own
/// status and call count unless `outcomes` gives the task's (by contact id); a task's export
/// (`task`) ends with its reason and skip columns (D18), empty for the states seeded here.
fn expected_rows(
    contacts: &[Value],
    custom: &[&str],
    outcomes: &BTreeMap<String, (u8, u32)>,
    task: bool,
    kind: Kind,
) -> Vec<Vec<String>> {
    let fixed = ["customerName", "address", "orderAmount"];
    let mut titles = vec!["id", "phoneNumber"];
    titles.extend(fixed);
    titles.extend(custom);
    titles.extend(["status", "callCount", "createTime", "updateTime"]);
    if task {
        // D18's reasons, and D22's caller ID and message left (`false` once attempted).
        titles.extend([
            "lastReason",
            "skipReason",
            "callerId",
            "messageLeft",
            "callbackAt",
        ]);
    }
    let mut rows: Vec<Vec<String>> = contacts
        .iter()
        .map(|contact| {
            let text = |name: &str| {
                contact[name]
                    .as_str()
                    .map(|text| guarded(text, kind))
                    .unwrap_or_default()
            };
            let id = contact["id"].as_str().unwrap().to_owned();
            let (status, calls) = outcomes.get(&id).copied().unwrap_or((
                contact["status"].as_u64().unwrap() as u8,
                contact["callCount"].as_u64().unwrap() as u32,
            ));
            let mut row = vec![id, text("phoneNumber")];
            row.extend(fixed.iter().chain(custom).map(|name| text(name)));
            row.extend([status.to_string(), calls.to_string()]);
            row.extend([text("createTime"), text("updateTime")]);
            if task {
                let left = if calls > 0 { "false" } else { "" };
                row.extend(["", "", "", left, ""].map(str::to_owned));
            }
            row
        })
        .collect();
    rows.sort();
    rows.insert(0, titles.iter().map(|t| t.to_string()).collect());
    rows
}

/// The rows of an exported file, title row first, data rows sorted (exports follow no order).
fn sorted_rows(bytes: &[u8]) -> Vec<Vec<String>> {
    let mut rows = read_export(bytes);
    rows[1..].sort();
    rows
}

#[tokio::test]
async fn contacts_export_as_csv_and_excel_with_formula_safe_cells() {
    // D8: format csv or excel (default excel), named contacts_<time>, attachment, right type,
    // CSV with a BOM, titles the field names. D27: a CSV cell beginning with = + - @ that is no
    // number or phone number is prefixed with '; .xlsx text cells are written as they are.
    let api = TestApi::start().await;
    let source = tricky_source(&api, "Export").await;
    let contacts = api.all_contacts("acme", &source).await;
    let expected = |kind| expected_rows(&contacts, &["note", "vip"], &BTreeMap::new(), false, kind);
    assert_eq!(expected(Kind::Csv)[1..].len(), 3);
    let base = format!("/api/dataSource/{source}/contact/batchExport");
    for (query, content_type, extension, kind) in [
        ("", XLSX_TYPE, "xlsx", Kind::Xlsx),
        ("?format=excel", XLSX_TYPE, "xlsx", Kind::Xlsx),
        ("?format=csv", CSV_TYPE, "csv", Kind::Csv),
    ] {
        let (status, headers, bytes) = api.download("acme", &format!("{base}{query}")).await;
        assert_eq!(status, StatusCode::OK, "{query}");
        assert_eq!(headers[CONTENT_TYPE], content_type, "{query}");
        assert_attachment(&headers, "contacts_", extension);
        if extension == "csv" {
            assert!(bytes.starts_with(b"\xEF\xBB\xBF"), "CSV starts with a BOM");
        } else {
            assert!(bytes.starts_with(b"PK\x03\x04"), "an .xlsx is a zip");
        }
        assert_eq!(sorted_rows(&bytes), expected(kind), "{query}");
    }
    // The CSV cells, spelled out once: the phone number as it is, the formulas guarded.
    let (_, _, bytes) = api.download("acme", &format!("{base}?format=csv")).await;
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.contains(",+8613800138000,'=SUM(A1),\"Road 1, Block 2\",99.5,"),
        "{text}"
    );
    assert!(text.contains(",'@home,"), "{text}");
    assert!(text.contains(",'-5 units,gold,"), "{text}");
    // And the .xlsx ones: every text as it is.
    let (_, _, bytes) = api.download("acme", &format!("{base}?format=excel")).await;
    let rows = sorted_rows(&bytes);
    let row = rows
        .iter()
        .find(|row| row[1] == "+8613800138000")
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(row[2], "=SUM(A1)");
}

#[tokio::test]
async fn exported_files_import_back_unchanged() {
    // D8: read-only columns are ignored and the ' guard dropped, so an export imports unchanged.
    let api = TestApi::start().await;
    let source = tricky_source(&api, "Original").await;
    let original = api.contact_fields("acme", &source).await;
    assert_eq!(original[0]["phoneNumber"], "+8613800138000");
    assert_eq!(original[0]["customerName"], "=SUM(A1)");
    for format in ["csv", "excel"] {
        let path = format!("/api/dataSource/{source}/contact/batchExport?format={format}");
        let (status, _, bytes) = api.download("acme", &path).await;
        assert_eq!(status, StatusCode::OK);
        let copy = api.data_source("acme", &format!("Copy {format}")).await;
        let answer = api.batch_import("acme", &copy, "export", bytes).await;
        let data = answer.ok();
        assert_eq!(
            (
                &data["importCount"],
                &data["successCount"],
                &data["details"]
            ),
            (&json!(3), &json!(3), &json!([])),
            "{format}"
        );
        assert_eq!(
            api.contact_fields("acme", &copy).await,
            original,
            "{format}"
        );
    }
}

#[tokio::test]
async fn export_format_must_be_csv_or_excel() {
    // D8: anything but csv or excel is 400.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Formats").await;
    let task = api
        .post(
            "acme",
            "/api/task/add",
            json!({"taskName": "T", "dataSourceId": source}),
        )
        .await;
    let task = task.ok()["id"].as_str().unwrap().to_owned();
    for format in ["pdf", "xlsx", "CSV", "", "csv,excel"] {
        for path in [
            format!("/api/dataSource/{source}/contact/batchExport?format={format}"),
            format!("/api/task/{task}/export?format={format}"),
        ] {
            api.get("acme", &path)
                .await
                .err(400, "format must be csv or excel");
        }
    }
    // An empty data source exports its title row alone.
    let path = format!("/api/dataSource/{source}/contact/batchExport?format=csv");
    let (status, _, bytes) = api.download("acme", &path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        "\u{feff}id,phoneNumber,customerName,address,orderAmount,status,callCount,createTime,updateTime\r\n"
    );
    let missing = ulid::Ulid::new().to_string();
    api.get(
        "acme",
        &format!("/api/dataSource/{missing}/contact/batchExport"),
    )
    .await
    .err(404, &format!("dataSource {missing} not found"));
    api.get("acme", &format!("/api/task/{missing}/export"))
        .await
        .err(404, &format!("task {missing} not found"));
}

#[tokio::test]
async fn a_large_export_redirects_to_a_presigned_download() {
    // D8: a file too large for a Lambda response is answered 303 to a short-lived download.
    let api = TestApi::start_with(|config| config.export_inline_max_bytes = 64).await;
    let source = tricky_source(&api, "Large").await;
    let path = format!("/api/dataSource/{source}/contact/batchExport?format=csv");
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = no_redirects
        .get(format!("{}{path}", api.base))
        .bearer_auth(api.token("acme"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let location = response.headers()[LOCATION].to_str().unwrap().to_owned();
    assert!(location.contains("/exports/acme/"), "{location}");
    assert!(location.contains("X-Amz-Expires=600"), "{location}");
    assert!(response.bytes().await.unwrap().is_empty());
    // The URL asks S3 to name the download (moto ignores the override; S3 honours it).
    let url = reqwest::Url::parse(&location).unwrap();
    let (_, disposition) = url
        .query_pairs()
        .find(|(name, _)| name == "response-content-disposition")
        .unwrap_or_else(|| panic!("{location} names no download"));
    assert_disposition(&disposition, "contacts_", "csv");

    // A plain GET of the location, without the API's token, is the file.
    let download = reqwest::get(&location).await.unwrap();
    assert_eq!(download.status(), StatusCode::OK);
    let file = download.bytes().await.unwrap();
    let contacts = api.all_contacts("acme", &source).await;
    let expected = expected_rows(
        &contacts,
        &["note", "vip"],
        &BTreeMap::new(),
        false,
        Kind::Csv,
    );
    assert_eq!(sorted_rows(&file), expected);

    // A client that follows redirects, as most do, just gets the file.
    let (status, _, followed) = api.download("acme", &path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(sorted_rows(&followed), expected);
}

#[tokio::test]
async fn task_export_filters_contacts_by_their_outcome_in_the_task() {
    // D8: status absent or 0 all, 1 success, 2 failed or no answer, 3 not dialled; rows carry
    // the task's outcome and attempts; named task_contacts_<taskId>_<time>.
    let api = TestApi::start().await;
    let source = tricky_source(&api, "Dialled").await;
    api.contact("acme", &source, "13600136000").await;
    api.contact("acme", &source, "13500135000").await;
    let task = api
        .post(
            "acme",
            "/api/task/add",
            json!({"taskName": "Calls", "dataSourceId": source}),
        )
        .await;
    let task = task.ok()["id"].as_str().unwrap().to_owned();
    let contacts = api.all_contacts("acme", &source).await;
    let id_of = |phone: &str| {
        contacts
            .iter()
            .find(|c| c["phoneNumber"] == phone)
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .unwrap()
    };
    // 13500135000 has no state in the task: never dialled nor recalled.
    let outcomes: BTreeMap<String, (u8, u32)> = [
        ("+8613800138000", (1, 1)),
        ("13900139000", (2, 3)),
        ("13700137000", (3, 2)),
        ("13600136000", (0, 0)),
    ]
    .into_iter()
    .map(|(phone, outcome)| (id_of(phone), outcome))
    .collect();
    for (id, (outcome, attempts)) in &outcomes {
        api.seed_outcome("acme", &task, id, *outcome, *attempts)
            .await;
    }
    let every = |kind| expected_rows(&contacts, &["note", "vip"], &outcomes, true, kind);
    let all = every(Kind::Csv);
    let with_status_in = |all: &[Vec<String>], codes: &[&str]| -> Vec<Vec<String>> {
        let mut rows = vec![all[0].clone()];
        rows.extend(
            all[1..]
                .iter()
                .filter(|row| codes.contains(&row[7].as_str()))
                .cloned(),
        );
        rows
    };
    let with_status = |codes: &[&str]| with_status_in(&all, codes);
    for (query, expected) in [
        ("", all.clone()),
        ("&status=0", all.clone()),
        ("&status=1", with_status(&["1"])),
        ("&status=2", with_status(&["2", "3"])),
        ("&status=3", with_status(&["0"])),
    ] {
        let path = format!("/api/task/{task}/export?format=csv{query}");
        let (status, headers, bytes) = api.download("acme", &path).await;
        assert_eq!(status, StatusCode::OK, "{query}");
        assert_eq!(headers[CONTENT_TYPE], CSV_TYPE);
        assert_attachment(&headers, &format!("task_contacts_{task}_"), "csv");
        assert_eq!(sorted_rows(&bytes), expected, "{query}");
    }
    assert_eq!(
        with_status(&["0"]).len(),
        3,
        "two not dialled, after the title row"
    );
    let (status, headers, bytes) = api
        .download("acme", &format!("/api/task/{task}/export?status=2"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[CONTENT_TYPE], XLSX_TYPE);
    assert_attachment(&headers, &format!("task_contacts_{task}_"), "xlsx");
    assert_eq!(
        sorted_rows(&bytes),
        with_status_in(&every(Kind::Xlsx), &["2", "3"])
    );

    for bad in ["4", "x", "-1", "1.5", "01x"] {
        api.get("acme", &format!("/api/task/{task}/export?status={bad}"))
            .await
            .err(
                400,
                "status must be 0 (all), 1 (success), 2 (failed or no answer) or 3 (not dialled)",
            );
    }
}

/// D7, D8: a call's outcome moves its contact's `updateTime` with the `status` and `callCount`
/// it changes, in the data source's list and export alike: they used to keep the import's time
/// after every call. A contact the task's filter leaves out is skipped, never called, and keeps
/// the import's.
#[tokio::test]
async fn a_calls_outcome_moves_its_contacts_update_time() {
    use outbound_model::plan::Clock;
    let rig = crate::rig::rig().await;
    let source = rig.api.data_source("acme", "Called").await;
    let file = csv(&[
        &["phoneNumber", "customerName", "region"],
        &["+12125550171", "Called", "east"],
        &["+12125550172", "Left out", "west"],
    ]);
    let answer = rig
        .api
        .batch_import("acme", &source, "called.csv", file)
        .await;
    assert_eq!(answer.ok()["successCount"], 2, "{}", answer.body);
    let shown = |contacts: &[Value]| -> BTreeMap<String, Value> {
        contacts
            .iter()
            .map(|c| {
                let view = json!([
                    c["status"],
                    c["callCount"],
                    c["createTime"],
                    c["updateTime"]
                ]);
                (c["customerName"].as_str().unwrap().to_owned(), view)
            })
            .collect()
    };
    let imported = shown(&rig.api.all_contacts("acme", &source).await);
    let created = |name: &str| imported[name][2].as_str().unwrap().to_owned();
    for name in ["Called", "Left out"] {
        assert_eq!(
            imported[name],
            json!([0, 0, created(name), created(name)]),
            "{name}"
        );
    }

    // Called an hour after the import, by the dialer's clock.
    rig.clock.advance(std::time::Duration::from_secs(3600));
    let filter = json!([{"field": "region", "op": "eq", "value": "east"}]);
    let task = rig
        .published(&source, json!({"filter": filter, "maxDialCount": 1}))
        .await;
    let dialled_at = rig.clock.now().display(rig.api.app.zone());
    rig.complete(&task).await;
    let outcome_time = rig.diagnostics(&task).await["lastOutcomeTime"].clone();
    assert_eq!(
        outcome_time,
        json!(dialled_at),
        "recorded in the first round, at the dialer's time"
    );
    assert_ne!(outcome_time, json!(created("Called")));
    let after = shown(&rig.api.all_contacts("acme", &source).await);
    let want: BTreeMap<String, Value> = [
        (
            "Called".to_owned(),
            json!([1, 1, created("Called"), outcome_time]),
        ),
        (
            "Left out".to_owned(),
            json!([0, 0, created("Left out"), created("Left out")]),
        ),
    ]
    .into();
    assert_eq!(after, want);

    // The export shows the same.
    let (status, _, bytes) = rig
        .api
        .download(
            "acme",
            &format!("/api/dataSource/{source}/contact/batchExport?format=csv"),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let text = String::from_utf8(bytes).unwrap();
    let mut reader = ::csv::Reader::from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let titles = reader.headers().unwrap().clone();
    let column = |name: &str| titles.iter().position(|t| t == name).unwrap();
    let exported: BTreeMap<String, Value> = reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            let cell = |name: &str| row[column(name)].to_owned();
            let view = json!([
                cell("status").parse::<u8>().unwrap(),
                cell("callCount").parse::<u32>().unwrap(),
                cell("createTime"),
                cell("updateTime")
            ]);
            (cell("customerName"), view)
        })
        .collect();
    assert_eq!(exported, want);
}
