//! Calls people may legally receive (D14-D19) over HTTP with the simulated provider: tenant
//! settings and E.164, the called party's local time, the do-not-call list, the frequency cap,
//! retry rules by reason, and the diagnostics that say why a task is or is not dialling. Windows
//! are set against the engine's clock, moved to a fixed time of day, so they hold at any hour.

use crate::dialing_support::*;
use crate::rig::{rig, rig_with, Rig};
use crate::support::{id, tenant, unique, TestApi};
use chrono::{TimeZone, Timelike};
use chrono_tz::America::{Los_Angeles, New_York};
use chrono_tz::Tz;
use outbound_adapters::store::dialing::{ClaimRefused, Gate, Skipped};
use outbound_adapters::telephony::{Busy, CallRequest, CallStatus, PlaceError, Provider};
use outbound_model::call::{Reason, Skip};
use outbound_model::error::Error;
use outbound_model::plan::Clock;
use outbound_model::task::Due;
use outbound_model::{TaskStatus, Timestamp};
use serde_json::{json, Value};
use std::time::Duration;

const OWNER: &str = "acme";

/// The rows of a task's CSV export with `query`, each as (column, value) pairs by column name.
pub(crate) async fn export_rows(
    api: &TestApi,
    task: &str,
    query: &str,
) -> Vec<std::collections::BTreeMap<String, String>> {
    let (status, _, body) = api
        .download(OWNER, &format!("/api/task/{task}/export?format=csv{query}"))
        .await;
    assert_eq!(status, 200);
    let text = String::from_utf8(body).unwrap();
    let mut reader = csv::Reader::from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let titles = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|record| {
            titles
                .iter()
                .zip(record.unwrap().iter())
                .map(|(title, value)| (title.to_owned(), value.to_owned()))
                .collect()
        })
        .collect()
}

/// The values of three columns of each row.
fn columns<'r>(
    rows: &'r [std::collections::BTreeMap<String, String>],
    names: [&str; 3],
) -> Vec<(&'r str, &'r str, &'r str)> {
    rows.iter()
        .map(|row| {
            let cell = |name: &str| row[name].as_str();
            (cell(names[0]), cell(names[1]), cell(names[2]))
        })
        .collect()
}

/// Milliseconds of `hour:00` local time in `zone` on the clock's local date there.
fn local_hour(clock: &ManualClock, zone: Tz, hour: u32) -> i64 {
    let now = zone.timestamp_millis_opt(clock.now().0).unwrap();
    let at = now.date_naive().and_hms_opt(hour, 0, 0).unwrap();
    zone.from_local_datetime(&at).unwrap().timestamp_millis()
}

#[tokio::test]
async fn settings_are_null_until_set_and_null_clears_one() {
    let rig = rig().await;
    let empty = json!({"defaultCountry": null, "callingHours": null, "frequencyCap": null,
        "updateTime": null, "callerIds": [], "contactFlows": [], "queues": [],
        "defaultCallerId": null, "defaultContactFlowId": null});
    assert_eq!(rig.api.get(OWNER, "/api/settings").await.ok(), &empty);
    let set = rig
        .settings(
            json!({"defaultCountry": "US", "callingHours": {"start": "08:00", "end": "21:00"},
            "frequencyCap": {"maxCalls": 3, "periodHours": 24}}),
        )
        .await;
    assert_eq!(set["defaultCountry"], "US");
    assert_eq!(
        set["callingHours"],
        json!({"start": "08:00", "end": "21:00"})
    );
    assert_eq!(
        set["frequencyCap"],
        json!({"maxCalls": 3, "periodHours": 24})
    );
    assert!(set["updateTime"].is_string());
    assert_eq!(rig.api.get(OWNER, "/api/settings").await.ok(), &set);

    let cleared = rig.settings(json!({"callingHours": null})).await;
    assert_eq!(cleared["callingHours"], Value::Null);
    assert_eq!(
        cleared["defaultCountry"], "US",
        "fields not sent keep their value"
    );
    assert_eq!(cleared["frequencyCap"], set["frequencyCap"]);

    let refusals = [
        (
            json!({"defaultCountry": "usa"}),
            "defaultCountry must be an ISO 3166-1 alpha-2 country code in capitals, e.g. US",
        ),
        (
            json!({"defaultCountry": 1}),
            "defaultCountry must be a string",
        ),
        (
            json!({"callingHours": {"start": "21:00", "end": "08:00"}}),
            "callingHours.start must be before callingHours.end",
        ),
        (
            json!({"callingHours": {"start": "8am", "end": "21:00"}}),
            "callingHours.start must be HH:MM from 00:00 to 23:59",
        ),
        (
            json!({"frequencyCap": {"maxCalls": 0, "periodHours": 24}}),
            "frequencyCap.maxCalls must be an integer from 1 to 100",
        ),
        (
            json!({"frequencyCap": {"maxCalls": 1, "periodHours": 721}}),
            "frequencyCap.periodHours must be an integer from 1 to 720",
        ),
    ];
    for (body, message) in refusals {
        rig.api
            .post(OWNER, "/api/settings/update", body)
            .await
            .err(400, message);
    }
    assert_eq!(
        rig.api.get(OWNER, "/api/settings").await.ok(),
        &cleared,
        "a refused update changes nothing"
    );
    // Another tenant's settings are its own.
    assert_eq!(rig.api.get("other", "/api/settings").await.ok(), &empty);
}

#[tokio::test]
async fn contacts_show_e164_in_the_data_sources_else_the_tenants_country() {
    let rig = rig().await;
    let (source, _) = rig
        .source(&[
            ("(212) 555-0101", json!({})),
            ("+44 20 7946 0000", json!({"timeZone": "Europe/London"})),
        ])
        .await;
    let e164s = |page: &Value| -> Vec<Value> {
        let mut rows: Vec<Value> = page["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| json!([row["phoneNumber"], row["e164"], row["timeZone"]]))
            .collect();
        rows.sort_by_key(|row| row.to_string());
        rows
    };
    let page = rig.api.contacts(OWNER, &source, "").await;
    assert_eq!(
        e164s(page.ok()),
        [
            json!(["+442079460000", "+442079460000", "Europe/London"]),
            json!(["2125550101", null, null])
        ],
        "without a country only numbers written with + have one"
    );
    rig.settings(json!({"defaultCountry": "US"})).await;
    let page = rig.api.contacts(OWNER, &source, "").await;
    assert_eq!(
        e164s(page.ok())[1],
        json!(["2125550101", "+12125550101", null])
    );
    // The data source's own country wins over the tenant's.
    let updated = rig
        .api
        .post(
            OWNER,
            "/api/dataSource/update",
            json!({"id": source, "defaultCountry": "GB"}),
        )
        .await;
    assert_eq!(updated.ok()["defaultCountry"], "GB");
    let page = rig.api.contacts(OWNER, &source, "").await;
    assert_eq!(
        e164s(page.ok())[1],
        json!(["2125550101", null, null]),
        "not a valid GB number"
    );
    let cleared = rig
        .api
        .post(
            OWNER,
            "/api/dataSource/update",
            json!({"id": source, "defaultCountry": null}),
        )
        .await;
    assert_eq!(cleared.ok()["defaultCountry"], Value::Null);

    let cn = rig
        .api
        .post(
            OWNER,
            "/api/dataSource/add",
            json!({"dataSourceName": unique("CN"), "defaultCountry": "CN"}),
        )
        .await;
    let cn = cn.ok()["id"].as_str().unwrap().to_owned();
    let added = rig
        .api
        .post(
            OWNER,
            &format!("/api/dataSource/{cn}/contact/add"),
            json!({"phoneNumber": "138 0013 8000"}),
        )
        .await;
    assert_eq!(added.ok()["e164"], "+8613800138000");
    rig.api
        .post(
            OWNER,
            &format!("/api/dataSource/{cn}/contact/add"),
            json!({"phoneNumber": "13800138001", "timeZone": "Mars/Olympus"}),
        )
        .await
        .err(
            400,
            "timeZone must be an IANA time zone name, e.g. America/New_York",
        );
    rig.api
        .post(
            OWNER,
            "/api/dataSource/add",
            json!({"dataSourceName": unique("X"), "defaultCountry": "XX"}),
        )
        .await
        .err(
            400,
            "defaultCountry must be an ISO 3166-1 alpha-2 country code in capitals, e.g. US",
        );
    assert_eq!(rig.api.contact_count(OWNER, &cn).await, 1);
}

#[tokio::test]
async fn the_do_not_call_list_matches_the_e164_form_and_reports_bad_rows() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let added = rig
        .api
        .post(
            OWNER,
            "/api/dnc/add",
            json!({"phoneNumber": "(212) 555-0100", "reason": "asked"}),
        )
        .await;
    let entry = added.ok();
    assert_eq!(
        (&entry["phoneNumber"], &entry["e164"], &entry["reason"]),
        (
            &json!("2125550100"),
            &json!("+12125550100"),
            &json!("asked")
        )
    );
    assert_eq!(entry["country"], "US", "read in the tenant's country");
    assert!(entry["createTime"].is_string());
    rig.api
        .post(
            OWNER,
            "/api/dnc/add",
            json!({"phoneNumber": "+1 212 555 0100"}),
        )
        .await
        .err(
            409,
            "phoneNumber +12125550100 is already on the do-not-call list",
        );
    rig.api
        .post(OWNER, "/api/dnc/add", json!({"phoneNumber": "12"}))
        .await
        .err(400, "invalid phoneNumber");
    rig.api
        .post(OWNER, "/api/dnc/add", json!({}))
        .await
        .err(400, "phoneNumber is required");

    let csv = format!(
        "phoneNumber,reason\n2125550111,moved\nnot a number,x\n2125550111,again\n+12125550100,dup\n\
         2125550112,\n2125550113,{}\n",
        "x".repeat(501)
    );
    let answer = rig.api.import_dnc(OWNER, &csv).await;
    assert_eq!(
        answer.ok(),
        &json!({"importCount": 6, "successCount": 2, "failCount": 4, "details": [
            {"row": 3, "phoneNumber": "not a number", "reason": "invalid phoneNumber"},
            {"row": 4, "phoneNumber": "2125550111", "reason": "duplicate in file"},
            {"row": 5, "phoneNumber": "+12125550100", "reason": "already exists"},
            {"row": 7, "phoneNumber": "2125550113", "reason": "field too long"},
        ]})
    );
    let list = rig.api.get(OWNER, "/api/dnc/list?pageSize=10").await;
    assert_eq!(list.ok()["total"], 3);
    let found = rig
        .api
        .get(OWNER, "/api/dnc/list?phoneNumber=555-0111")
        .await;
    let rows = found.ok()["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (&rows[0]["phoneNumber"], &rows[0]["reason"]),
        (&json!("2125550111"), &json!("moved"))
    );

    // Deleted by its E.164 form, once.
    rig.api
        .post(
            OWNER,
            "/api/dnc/delete",
            json!({"phoneNumber": "+12125550100"}),
        )
        .await
        .ok();
    rig.api
        .post(
            OWNER,
            "/api/dnc/delete",
            json!({"phoneNumber": "2125550100"}),
        )
        .await
        .err(404, "phoneNumber 2125550100 is not on the do-not-call list");
    assert_eq!(rig.api.get(OWNER, "/api/dnc/list").await.ok()["total"], 2);
    assert_eq!(rig.api.get("other", "/api/dnc/list").await.ok()["total"], 0);
}

/// Five contacts: three in New York, two in Los Angeles.
fn national() -> Vec<(&'static str, Value)> {
    [
        "+12125550101",
        "+12125550102",
        "+12125550103",
        "+12135550101",
        "+12135550102",
    ]
    .into_iter()
    .map(|phone| (phone, json!({})))
    .collect()
}

#[tokio::test]
async fn a_national_list_is_dialled_in_each_called_partys_local_time() {
    let rig = rig().await;
    let (source, contacts) = rig.source(&national()).await;
    // 10:00-20:00: open now in New York (11:00 or 12:00), not yet in Los Angeles (08:00/09:00).
    let task = rig
        .published(
            &source,
            json!({"dailyStartTime": "10:00", "dailyEndTime": "20:00"}),
        )
        .await;
    rig.api.dial_round(&rig.engine).await;
    let mut placed = rig.placed();
    placed.sort();
    let mut new_york: Vec<String> = contacts[..3]
        .iter()
        .map(|c| format!("{task}-{c}-1"))
        .collect();
    new_york.sort();
    assert_eq!(placed, new_york, "only the New York contacts are called");
    for contact in &contacts[3..] {
        assert_eq!(
            rig.state(&task, contact).await,
            (0, None, Some(Skip::OutsideWindow), false)
        );
    }
    let opens = local_hour(&rig.clock, Los_Angeles, 10);
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["blockedBy"], "OUTSIDE_WINDOW");
    assert_eq!(
        diagnostics["nextDialTime"],
        json!(Timestamp(opens).display(rig.api.app.zone()))
    );
    assert_eq!(
        diagnostics["contacts"],
        json!({"total": 5, "notDialled": 0, "waiting": 2, "inFlight": 0, "final": 3})
    );
    assert_eq!(diagnostics["skips"]["OUTSIDE_WINDOW"], 2);
    assert_eq!(diagnostics["reasons"]["ANSWERED"], 3);
    assert_eq!(diagnostics["dialing"], false);

    // Nothing more before the opening; the Los Angeles contacts once it comes.
    rig.api.dial_round(&rig.engine).await;
    assert_eq!(rig.placed().len(), 3);
    rig.clock
        .advance(Duration::from_millis((opens - rig.clock.now().0) as u64));
    rig.complete(&task).await;
    assert_eq!(rig.placed().len(), 5);
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["blockedBy"], "NOT_RUNNING");
    assert_eq!(
        diagnostics["contacts"],
        json!({"total": 5, "notDialled": 0, "waiting": 0, "inFlight": 0, "final": 5})
    );
    assert_eq!(
        diagnostics["skips"]["OUTSIDE_WINDOW"], 0,
        "the skip left with the call"
    );
}

#[tokio::test]
async fn a_window_read_in_the_task_zone_dials_every_zone() {
    let rig = rig().await;
    let (source, _) = rig.source(&national()).await;
    let task = rig
        .published(
            &source,
            json!({"dailyStartTime": "10:00", "dailyEndTime": "20:00",
                "timeZone": "America/New_York", "windowTimeZone": "TASK"}),
        )
        .await;
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await;
    assert_eq!(detail.ok()["windowTimeZone"], "TASK");
    rig.complete(&task).await;
    assert_eq!(rig.placed().len(), 5);
}

#[tokio::test]
async fn calling_hours_narrower_than_the_window_win() {
    let rig = rig().await;
    // New York is at 11:00 (12:00 in summer): calling hours from an hour later.
    let hour = New_York
        .timestamp_millis_opt(rig.clock.now().0)
        .unwrap()
        .hour();
    let start = format!("{:02}:00", hour + 1);
    rig.settings(json!({"callingHours": {"start": start, "end": "21:00"}}))
        .await;
    let (source, contacts) = rig.source(&national()[..3]).await;
    let task = rig
        .published(
            &source,
            json!({"dailyStartTime": "08:00", "dailyEndTime": "20:00"}),
        )
        .await;
    rig.api.dial_round(&rig.engine).await;
    assert!(rig.placed().is_empty());
    for contact in &contacts {
        assert_eq!(rig.state(&task, contact).await.2, Some(Skip::CallingHours));
    }
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["blockedBy"], "OUTSIDE_WINDOW");
    assert_eq!(
        diagnostics["nextDialTime"],
        json!(Timestamp(local_hour(&rig.clock, New_York, hour + 1)).display(rig.api.app.zone()))
    );
    assert_eq!(diagnostics["skips"]["CALLING_HOURS"], 3);
}

#[tokio::test]
async fn numbers_on_the_do_not_call_list_are_never_called() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let (source, contacts) = rig
        .source(&[
            ("2125550101", json!({})),
            ("2125550102", json!({})),
            ("2125550103", json!({})),
        ])
        .await;
    // One written in the tenant's country, one with `+`: both listed by their E.164 form.
    rig.api
        .post(OWNER, "/api/dnc/add", json!({"phoneNumber": "2125550101"}))
        .await
        .ok();
    rig.api
        .post(
            OWNER,
            "/api/dnc/add",
            json!({"phoneNumber": "+12125550102"}),
        )
        .await
        .ok();
    let task = rig.published(&source, json!({})).await;
    rig.complete(&task).await;
    assert_eq!(rig.placed(), [format!("{task}-{}-1", contacts[2])]);
    for contact in &contacts[..2] {
        assert_eq!(
            rig.state(&task, contact).await,
            (0, None, Some(Skip::Dnc), true)
        );
    }
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["skips"]["DNC"], 2);
    assert_eq!(diagnostics["contacts"]["final"], 3);
    // The export shows the skips, and "not dialled" (status 3) holds the skipped contacts.
    let rows = export_rows(&rig.api, &task, "").await;
    let shown = columns(&rows, ["phoneNumber", "lastReason", "skipReason"]);
    assert_eq!(
        shown,
        [
            ("2125550101", "", "DNC"),
            ("2125550102", "", "DNC"),
            ("2125550103", "ANSWERED", "")
        ]
    );
    let not_dialled = export_rows(&rig.api, &task, "&status=3").await;
    assert_eq!(not_dialled.len(), 2);
    assert_eq!(
        diagnostics["contacts"]["final"].as_u64().unwrap(),
        rows.len() as u64,
        "the counts are the export's"
    );
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await;
    assert_eq!(detail.ok()["callCount"], 1, "a skip is not an attempt");
}

/// A data source in `country` with contacts of these numbers: its id and contact ids.
async fn source_in(rig: &Rig, country: &str, numbers: &[&str]) -> (String, Vec<String>) {
    let contacts: Vec<(&str, Value)> = numbers.iter().map(|n| (*n, json!({}))).collect();
    let (source, ids) = rig.source(&contacts).await;
    rig.api
        .post(
            OWNER,
            "/api/dataSource/update",
            json!({"id": source, "defaultCountry": country}),
        )
        .await
        .ok();
    (source, ids)
}

#[tokio::test]
async fn a_do_not_call_entry_matches_its_own_countrys_number_and_no_other() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    // Read in the entry's own country, not the tenant's; the same digits in France differ.
    let added = rig
        .api
        .post(
            OWNER,
            "/api/dnc/add",
            json!({"phoneNumber": "06 12 34 56 78", "country": "NL"}),
        )
        .await;
    let entry = added.ok();
    assert_eq!(
        (&entry["phoneNumber"], &entry["e164"], &entry["country"]),
        (&json!("0612345678"), &json!("+31612345678"), &json!("NL"))
    );
    rig.api
        .post(
            OWNER,
            "/api/dnc/add",
            json!({"phoneNumber": "07400 123456", "country": "GB"}),
        )
        .await
        .ok();
    // Not a US number, and no country sent: refused, nothing listed.
    rig.api
        .post(OWNER, "/api/dnc/add", json!({"phoneNumber": "0612345679"}))
        .await
        .err(400, "phoneNumber 0612345679 is not a valid number in US");
    rig.api
        .post(
            OWNER,
            "/api/dnc/add",
            json!({"phoneNumber": "0612345679", "country": "nl"}),
        )
        .await
        .err(
            400,
            "country must be an ISO 3166-1 alpha-2 country code in capitals, e.g. US",
        );
    assert_eq!(rig.api.get(OWNER, "/api/dnc/list").await.ok()["total"], 2);

    let (dutch, dutch_ids) = source_in(&rig, "NL", &["0612345678"]).await;
    let (french, french_ids) = source_in(&rig, "FR", &["0612345678"]).await;
    let (british, british_ids) = source_in(&rig, "GB", &["07400123456"]).await;
    for (source, ids, listed) in [
        (&dutch, &dutch_ids, true),
        (&french, &french_ids, false),
        (&british, &british_ids, true),
    ] {
        let task = rig.published(source, json!({})).await;
        rig.complete(&task).await;
        let skip = rig.state(&task, &ids[0]).await.2;
        assert_eq!(skip, listed.then_some(Skip::Dnc), "{source}");
    }

    // Deleted in the country it was listed in; the French digits find nothing.
    rig.api
        .post(
            OWNER,
            "/api/dnc/delete",
            json!({"phoneNumber": "0612345678", "country": "FR"}),
        )
        .await
        .err(404, "phoneNumber 0612345678 is not on the do-not-call list");
    rig.api
        .post(
            OWNER,
            "/api/dnc/delete",
            json!({"phoneNumber": "+31612345678"}),
        )
        .await
        .ok();
    assert_eq!(rig.api.get(OWNER, "/api/dnc/list").await.ok()["total"], 1);
}

#[tokio::test]
async fn a_do_not_call_file_reads_each_row_in_its_country_column() {
    let rig = rig().await;
    let csv = "phoneNumber,Country\n0612345678,NL\n0612345678,FR\n0612345679,FR\n0612345670,\n\
               0612345671,ZZ\n+12125550100,\n";
    let answer = rig.api.import_dnc(OWNER, csv).await;
    // No tenant country: a national number needs its row's. A file lists each number as
    // written once (D8), whatever its country column says.
    assert_eq!(
        answer.ok(),
        &json!({"importCount": 6, "successCount": 3, "failCount": 3, "details": [
            {"row": 3, "phoneNumber": "0612345678", "reason": "duplicate in file"},
            {"row": 5, "phoneNumber": "0612345670", "reason": "invalid phoneNumber"},
            {"row": 6, "phoneNumber": "0612345671", "reason": "invalid phoneNumber"},
        ]})
    );
    let list = rig.api.get(OWNER, "/api/dnc/list?pageSize=10").await;
    let mut e164s: Vec<String> = list.ok()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["e164"].as_str().unwrap().to_owned())
        .collect();
    e164s.sort();
    assert_eq!(e164s, ["+12125550100", "+31612345678", "+33612345679"]);
}

#[tokio::test]
async fn an_entry_stored_without_e164_gains_it_when_a_default_country_is_set() {
    let rig = rig().await;
    // As entries were stored before D24: a national number, no country to read it in.
    let legacy = outbound_model::dnc::DncEntry {
        id: outbound_model::Id::new(),
        phone: outbound_model::Phone::parse("2125550101").unwrap(),
        e164: None,
        country: None,
        reason: Default::default(),
        created_at: Timestamp::now(),
    };
    rig.engine
        .store
        .add_dnc(&tenant(OWNER), &legacy, None)
        .await
        .unwrap();
    let (source, contacts) = source_in(&rig, "US", &["2125550101", "2125550102"]).await;
    let before = rig.published(&source, json!({})).await;
    rig.complete(&before).await;
    assert_eq!(
        rig.state(&before, &contacts[0]).await.2,
        None,
        "no E.164 form to match"
    );

    rig.settings(json!({"defaultCountry": "US"})).await;
    let list = rig.api.get(OWNER, "/api/dnc/list").await;
    let row = &list.ok()["rows"][0];
    assert_eq!(
        (&row["phoneNumber"], &row["e164"], &row["country"]),
        (&json!("2125550101"), &json!("+12125550101"), &json!("US"))
    );
    let after = rig.published(&source, json!({})).await;
    rig.complete(&after).await;
    assert_eq!(rig.state(&after, &contacts[0]).await.2, Some(Skip::Dnc));
    assert_eq!(rig.state(&after, &contacts[1]).await.2, None);
    // Deleted by either form: both guards go.
    rig.api
        .post(
            OWNER,
            "/api/dnc/delete",
            json!({"phoneNumber": "2125550101"}),
        )
        .await
        .ok();
    assert_eq!(rig.api.get(OWNER, "/api/dnc/list").await.ok()["total"], 0);
    rig.api
        .post(
            OWNER,
            "/api/dnc/add",
            json!({"phoneNumber": "+12125550101"}),
        )
        .await
        .ok();
}

#[tokio::test]
async fn a_number_listed_after_a_run_read_it_is_not_called() {
    let rig = rig().await;
    let (source, contacts) = rig.source(&[("+12125550101", json!({}))]).await;
    let task = rig.published(&source, json!({})).await;
    let stored = rig.api.stored_task(OWNER, &task).await;
    // The run has read the contact; the number is listed before its claim.
    let due = Due {
        contact_id: id(&contacts[0]),
        attempt: 1,
        state: None,
    };
    rig.api
        .post(
            OWNER,
            "/api/dnc/add",
            json!({"phoneNumber": "+12125550101"}),
        )
        .await
        .ok();
    let caps = outbound_adapters::store::dialing::Caps {
        per_task: 10,
        total: 10,
        rate_per_second: 10,
    };
    // The add wrote the guard in the tenant's partition and the claim's copy under its own
    // key: a claim checking either is refused.
    for guards_apart in [false, true] {
        let gate = Gate {
            listed_as: Some("+12125550101".into()),
            guards_apart,
            frequency: None,
            calling_from: None,
        };
        let claimed = rig
            .engine
            .store
            .claim_call(&tenant(OWNER), &stored, &due, &gate, caps, rig.clock.now())
            .await;
        assert!(
            matches!(claimed, Err(ClaimRefused::DoNotCall)),
            "guards apart {guards_apart}: {claimed:?}"
        );
    }
    assert_eq!(
        rig.api.stored_task(OWNER, &task).await.in_flight,
        0,
        "nothing was taken"
    );
    assert!(rig.api.stored_task_contacts(OWNER, &task).await.is_empty());
}

#[tokio::test]
async fn the_frequency_cap_holds_across_tasks_under_concurrent_runs() {
    // Room for both tasks' calls at once, so the tick gives each its share.
    let rig = rig_with(|dialing| dialing.max_in_flight = 100).await;
    rig.settings(json!({"frequencyCap": {"maxCalls": 1, "periodHours": 24}}))
        .await;
    let (first, _) = rig.source(&[("+12125550199", json!({}))]).await;
    let (second, _) = rig.source(&[("+12125550199", json!({}))]).await;
    let tasks = [
        rig.published(&first, json!({})).await,
        rig.published(&second, json!({})).await,
    ];
    let owner = tenant(OWNER);
    let ids = [id(&tasks[0]), id(&tasks[1])];
    let (a, b) = tokio::join!(
        rig.engine.dial(&owner, &ids[0], 5),
        rig.engine.dial(&owner, &ids[1], 5)
    );
    let placed = a.unwrap().placed + b.unwrap().placed;
    rig.api.dial_round(&rig.engine).await;
    rig.api.dial_round(&rig.engine).await;

    assert_eq!(placed, 1, "one call in all");
    assert_eq!(rig.placed().len(), 1);
    let mut skipped = 0;
    for task in &tasks {
        let diagnostics = rig.diagnostics(task).await;
        if diagnostics["skips"]["FREQUENCY_CAP"] == 1 {
            skipped += 1;
            assert_eq!(diagnostics["blockedBy"], "ALL_WAITING");
            assert!(diagnostics["nextDialTime"].is_string());
            assert_eq!(
                rig.api.stored_task(OWNER, task).await.status,
                TaskStatus::Running
            );
        }
    }
    assert_eq!(skipped, 1, "the other contact waits for the cap");
}

/// D17: attempts are counted whether or not a cap is set, so a cap set mid-campaign counts the
/// calls already made (found by the deterministic simulation: counted only under a cap, a number
/// called just before the cap was set was called again at once).
#[tokio::test]
async fn a_cap_set_mid_campaign_counts_the_calls_already_made() {
    let rig = rig_with(|dialing| dialing.max_in_flight = 100).await;
    let owner = tenant(OWNER);
    let (first, _) = rig.source(&[("+12125550198", json!({}))]).await;
    let before = rig.published(&first, json!({})).await;
    let report = rig.engine.dial(&owner, &id(&before), 5).await.unwrap();
    assert_eq!(report.placed, 1, "called while no cap is set");

    rig.settings(json!({"frequencyCap": {"maxCalls": 1, "periodHours": 24}}))
        .await;
    let (second, _) = rig.source(&[("+12125550198", json!({}))]).await;
    let after = rig.published(&second, json!({})).await;
    let report = rig.engine.dial(&owner, &id(&after), 5).await.unwrap();

    assert_eq!(report.placed, 0, "the call before the cap counts toward it");
    assert_eq!(rig.placed().len(), 1);
    let diagnostics = rig.diagnostics(&after).await;
    assert_eq!(diagnostics["skips"]["FREQUENCY_CAP"], 1, "{diagnostics}");
    assert_eq!(diagnostics["blockedBy"], "ALL_WAITING", "{diagnostics}");
}

#[tokio::test]
async fn retry_rules_wait_and_end_by_reason() {
    let rig = rig().await;
    let (source, contacts) = rig
        .source(&[
            (
                "+12125550101",
                json!({"simulatedOutcomes": "BUSY,BUSY,ANSWERED"}),
            ),
            (
                "+12125550102",
                json!({"simulatedOutcomes": "VOICEMAIL,ANSWERED"}),
            ),
        ])
        .await;
    let rules =
        json!([{"reason": "BUSY", "delaySeconds": 600}, {"reason": "VOICEMAIL", "maxAttempts": 1}]);
    let task = rig
        .published(
            &source,
            json!({"callInterval": 60, "maxDialCount": 3, "retryRules": rules}),
        )
        .await;
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await;
    assert_eq!(detail.ok()["retryRules"], rules);
    rig.api.dial_round(&rig.engine).await;
    assert_eq!(
        rig.state(&task, &contacts[1]).await,
        (1, Some(Reason::Voicemail), None, true)
    );
    assert_eq!(
        rig.state(&task, &contacts[0]).await,
        (1, Some(Reason::Busy), None, false)
    );
    // The call interval is not the BUSY delay.
    rig.clock.advance(Duration::from_secs(120));
    rig.api.dial_round(&rig.engine).await;
    assert_eq!(rig.placed().len(), 2);
    rig.clock.advance(Duration::from_secs(481));
    rig.api.dial_round(&rig.engine).await;
    assert_eq!(rig.state(&task, &contacts[0]).await.0, 2);
    rig.api
        .dial_until(
            &rig.engine,
            &rig.clock,
            Duration::from_secs(601),
            (OWNER, &task),
            TaskStatus::Completed,
            4,
        )
        .await;
    assert_eq!(
        rig.state(&task, &contacts[0]).await,
        (3, Some(Reason::Answered), None, true)
    );
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(
        diagnostics["reasons"],
        json!({"ANSWERED": 1, "NO_ANSWER": 0, "VOICEMAIL": 1, "ABANDONED": 0, "BUSY": 2,
            "INVALID_NUMBER": 0, "ERROR": 0, "NO_OUTCOME": 0})
    );
    assert_eq!(diagnostics["contacts"]["final"], 2);
    let rows = export_rows(&rig.api, &task, "").await;
    let shown = columns(&rows, ["phoneNumber", "callCount", "lastReason"]);
    assert_eq!(
        shown,
        // A phone number is written as it is (D27), never behind a '.
        [
            ("+12125550101", "3", "ANSWERED"),
            ("+12125550102", "1", "VOICEMAIL")
        ]
    );
}

#[tokio::test]
async fn retry_rules_are_checked_and_change_only_in_draft() {
    let rig = rig().await;
    let (source, _) = rig.source(&[("+12125550101", json!({}))]).await;
    let add = |extra: Value| {
        let mut body = json!({"taskName": unique("T"), "dataSourceId": source});
        for (field, value) in extra.as_object().cloned().unwrap() {
            body[field] = value;
        }
        body
    };
    let seven: Vec<Value> = (0..7).map(|_| json!({"reason": "BUSY"})).collect();
    let refusals = [
        (
            json!({"retryRules": seven}),
            "retryRules holds at most 6 rules",
        ),
        (
            json!({"retryRules": [{"reason": "ANSWERED"}]}),
            "retryRules[0].reason must be one of NO_ANSWER, VOICEMAIL, ABANDONED, BUSY, ERROR, NO_OUTCOME",
        ),
        (
            json!({"retryRules": [{"reason": "BUSY"}, {"reason": "BUSY"}]}),
            "retryRules[1].reason BUSY has a rule already",
        ),
        (
            json!({"retryRules": [{"reason": "BUSY", "delaySeconds": 5}]}),
            "retryRules[0].delaySeconds must be an integer from 10 to 604800",
        ),
        (
            json!({"maxDialCount": 2, "retryRules": [{"reason": "BUSY", "maxAttempts": 3}]}),
            "retryRules[0].maxAttempts must be an integer from 1 to 2",
        ),
        (
            json!({"windowTimeZone": "LOCAL"}),
            "windowTimeZone must be CALLED_PARTY or TASK",
        ),
    ];
    for (extra, message) in refusals {
        rig.api
            .post(OWNER, "/api/task/add", add(extra))
            .await
            .err(400, message);
    }
    let task = rig.api.task(OWNER, &unique("T"), &source, json!({})).await;
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await;
    assert_eq!(
        (&detail.ok()["retryRules"], &detail.ok()["windowTimeZone"]),
        (&json!([]), &json!("CALLED_PARTY"))
    );
    let updated = rig
        .api
        .post(
            OWNER,
            "/api/task/update",
            json!({"id": task, "retryRules": [{"reason": "NO_ANSWER", "delaySeconds": 3600}]}),
        )
        .await;
    assert_eq!(
        updated.ok()["retryRules"],
        json!([{"reason": "NO_ANSWER", "delaySeconds": 3600}])
    );
    rig.api
        .post(OWNER, "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    rig.api
        .post(
            OWNER,
            "/api/task/update",
            json!({"id": task, "retryRules": []}),
        )
        .await
        .err(405, "cannot update a task in state RUNNING");
}

/// A provider that refuses every call for rate.
struct AlwaysBusy;

impl Provider for AlwaysBusy {
    async fn place(&self, _call: &CallRequest) -> Result<String, PlaceError> {
        Err(PlaceError::Busy {
            kind: Busy::Rate,
            detail: "TooManyRequests".into(),
        })
    }

    async fn describe(&self, _call_id: &str) -> Result<CallStatus, Error> {
        Ok(CallStatus::Unknown)
    }
}

#[tokio::test]
async fn diagnostics_name_each_block() {
    let rig = rig_with(|dialing| dialing.max_in_flight_per_task = 1).await;
    let (source, _) = rig
        .source(&[("+12125550101", json!({})), ("+12125550102", json!({}))])
        .await;
    let draft = rig.api.task(OWNER, &unique("T"), &source, json!({})).await;
    assert_eq!(rig.diagnostics(&draft).await["blockedBy"], "NOT_RUNNING");

    // A window read in the task's zone (UTC) that opens an hour or more from now.
    let hour = chrono::Utc::now().hour();
    let start = if hour <= 20 { hour + 2 } else { hour - 3 };
    let closed = rig
        .published(
            &source,
            json!({"dailyStartTime": format!("{start:02}:00"), "dailyEndTime": format!("{:02}:00", start + 1),
                "windowTimeZone": "TASK", "timeZone": "UTC"}),
        )
        .await;
    let diagnostics = rig.diagnostics(&closed).await;
    assert_eq!(diagnostics["blockedBy"], "OUTSIDE_WINDOW");
    let today = chrono::Utc::now()
        .date_naive()
        .and_hms_opt(start, 0, 0)
        .unwrap()
        .and_utc();
    let opens = if start > hour {
        today
    } else {
        today + chrono::Duration::days(1)
    };
    assert_eq!(
        diagnostics["nextDialTime"],
        json!(Timestamp(opens.timestamp_millis()).display(rig.api.app.zone()))
    );
    assert_eq!(diagnostics["dialing"], false);

    let open = rig.published(&source, json!({})).await;
    let before = rig.diagnostics(&open).await;
    assert_eq!(before["blockedBy"], Value::Null, "a contact is due");
    assert_eq!(before["dialing"], true);
    assert_eq!(before["contacts"]["notDialled"], 2);
    // One call in flight, the most a task may have: the other contact waits for capacity.
    let placed = rig
        .engine
        .dial(&tenant(OWNER), &id(&open), 5)
        .await
        .unwrap();
    assert_eq!(placed.placed, 1);
    let full = rig.diagnostics(&open).await;
    assert_eq!(full["blockedBy"], "CAPACITY");
    assert_eq!(
        full["contacts"],
        json!({"total": 2, "notDialled": 1, "waiting": 0, "inFlight": 1, "final": 0})
    );
    rig.complete(&open).await;
    let after = rig.diagnostics(&open).await;
    assert_eq!(after["blockedBy"], "NOT_RUNNING");
    assert!(after["lastCallTime"].is_string() && after["lastOutcomeTime"].is_string());

    // The provider refuses for rate: not an attempt, and said.
    let busy_engine = rig
        .api
        .engine(fast_settings(&rig.api, ALL_SUCCESS), rig.clock.clone())
        .with_provider(|_| AlwaysBusy);
    let refused = rig.published(&source, json!({})).await;
    busy_engine
        .dial(&tenant(OWNER), &id(&refused), 5)
        .await
        .unwrap();
    let busy = rig.diagnostics(&refused).await;
    assert_eq!(busy["blockedBy"], "PROVIDER_BUSY");
    assert_eq!(
        busy["contacts"]["notDialled"], 2,
        "a refused call is no attempt"
    );

    rig.api
        .get(OWNER, "/api/task/01J0000000000000000000000Z/diagnostics")
        .await
        .err(404, "task 01J0000000000000000000000Z not found");
}

/// D24: only a change that can move a window (calling hours, default country) moves the rules
/// time that wakes parked contacts; a cap or a default caller ID leaves them parked, so fresh
/// contacts are not held back behind a re-judging of every parked one.
#[tokio::test]
async fn only_changes_that_move_a_window_wake_parked_contacts() {
    let rig = rig().await;
    let owner = tenant(OWNER);
    rig.settings(json!({"callingHours": {"start": "08:00", "end": "21:00"}}))
        .await;
    let first = rig.api.store.settings(&owner).await.unwrap();
    assert!(first.rules_at.is_some());
    // Apart by more than the clock's millisecond.
    tokio::time::sleep(Duration::from_millis(5)).await;
    rig.settings(json!({"frequencyCap": {"maxCalls": 3, "periodHours": 24}}))
        .await;
    let capped = rig.api.store.settings(&owner).await.unwrap();
    assert_eq!(capped.rules_at, first.rules_at, "a cap moves no window");
    assert!(capped.updated_at > first.updated_at);
    tokio::time::sleep(Duration::from_millis(5)).await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let country = rig.api.store.settings(&owner).await.unwrap();
    assert!(
        country.rules_at > first.rules_at,
        "a country reads numbers anew"
    );
}

/// D15, D19: the calling hours are read in each called party's zone, never in the task's: a
/// task whose window is read in its own zone, where the calling hours are closed now, is not
/// OUTSIDE_WINDOW while its contacts' hours are open.
#[tokio::test]
async fn diagnostics_read_the_calling_hours_in_the_called_partys_zone() {
    let rig = rig().await;
    // Open now in UTC; closed now twelve hours east (Etc/GMT-12 is UTC+12).
    let start = chrono::Utc::now().hour().min(21);
    rig.settings(json!({"callingHours": {"start": format!("{start:02}:00"),
                                          "end": format!("{:02}:59", start + 2)}}))
        .await;
    let (task, _) = rig
        .running(
            &[("+12125550101", json!({"timeZone": "UTC"}))],
            json!({"windowTimeZone": "TASK", "timeZone": "Etc/GMT-12"}),
        )
        .await;
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["blockedBy"], Value::Null, "{diagnostics}");
    assert_eq!(diagnostics["dialing"], true);
}

#[tokio::test]
async fn a_task_waiting_only_for_its_interval_is_all_waiting_and_then_nothing_left() {
    let rig = rig_with(|dialing| dialing.simulated.mix = ALL_NO_ANSWER).await;
    let (source, _) = rig.source(&[("+12125550101", json!({}))]).await;
    let task = rig
        .published(&source, json!({"callInterval": 3600, "maxDialCount": 2}))
        .await;
    rig.api.dial_round(&rig.engine).await;
    let waiting = rig.diagnostics(&task).await;
    assert_eq!(waiting["blockedBy"], "ALL_WAITING");
    assert!(waiting["nextDialTime"].is_string());
    assert_eq!(
        waiting["reasons"]["NO_ANSWER"].as_u64().unwrap()
            + waiting["reasons"]["VOICEMAIL"].as_u64().unwrap(),
        1
    );
    // The second attempt is the last: final, and nothing is left until the run completes it.
    rig.clock.advance(Duration::from_secs(3601));
    rig.api.dial_round(&rig.engine).await;
    let left = rig.diagnostics(&task).await;
    assert_eq!(left["contacts"]["final"], 1);
    assert_eq!(left["blockedBy"], "NOTHING_LEFT");
}

/// A provider that keeps what it was asked, as a stand-in for any provider besides the
/// simulated one.
struct Keeping {
    asked: std::sync::Mutex<Vec<CallRequest>>,
}

impl Provider for Keeping {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        self.asked.lock().unwrap().push(call.clone());
        Ok(format!("kept-{}", call.token()))
    }

    async fn describe(&self, _call_id: &str) -> Result<CallStatus, Error> {
        Ok(CallStatus::InProgress)
    }
}

/// D14: a number without an E.164 form is handed to no provider, the simulated one included
/// (it used to be given the national digits as written when the tenant had no country): the
/// contact is skipped `INVALID_NUMBER`, final, not an attempt, counted by the diagnostics and
/// shown in the task export's `skipReason`. Once the tenant names its country, a new task calls
/// it, in E.164, and any provider is given that form alone.
#[tokio::test]
async fn a_number_without_e164_is_handed_to_no_provider() {
    let rig = rig().await;
    let (source, contacts) = rig
        .source(&[
            ("(212) 555-0101", json!({})),
            ("+1 212 555 0102", json!({})),
        ])
        .await;
    let task = rig.published(&source, json!({})).await;
    rig.complete(&task).await;
    let to: Vec<Value> = (rig.local_calls(&task).await.iter())
        .map(|call| json!([call["contactId"], call["to"]]))
        .collect();
    assert_eq!(to, [json!([contacts[1], "+12125550102"])]);
    assert_eq!(
        rig.state(&task, &contacts[0]).await,
        (0, None, Some(Skip::InvalidNumber), true)
    );
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(
        (
            &diagnostics["skips"]["INVALID_NUMBER"],
            &diagnostics["reasons"]["ANSWERED"],
            &diagnostics["reasons"]["INVALID_NUMBER"],
            &diagnostics["contacts"]
        ),
        (
            &json!(1),
            &json!(1),
            &json!(0),
            &json!({"total": 2, "notDialled": 0, "waiting": 0, "inFlight": 0, "final": 2})
        )
    );
    let rows = export_rows(&rig.api, &task, "").await;
    assert_eq!(
        columns(&rows, ["phoneNumber", "lastReason", "skipReason"]),
        [
            ("2125550101", "", "INVALID_NUMBER"),
            ("+12125550102", "ANSWERED", "")
        ]
    );
    let stat = rig
        .api
        .get(OWNER, &format!("/api/task/{task}/stat"))
        .await
        .ok()
        .clone();
    assert_eq!(
        (&stat["status"], &stat["callCount"]),
        (&json!(4), &json!(1))
    );

    // Read in the tenant's country now, both are called: each in E.164, and nothing else is
    // handed to any provider.
    rig.settings(json!({"defaultCountry": "US"})).await;
    let again = rig.published(&source, json!({})).await;
    let keeping = rig
        .api
        .engine(fast_settings(&rig.api, ALL_SUCCESS), rig.clock.clone())
        .with_provider(|_| Keeping {
            asked: std::sync::Mutex::new(Vec::new()),
        });
    keeping.dial(&tenant(OWNER), &id(&again), 10).await.unwrap();
    let mut asked: Vec<(String, String)> = (keeping.provider.asked.lock().unwrap().iter())
        .map(|call| (call.contact_id.to_string(), call.to.clone()))
        .collect();
    asked.sort();
    let mut want = vec![
        (contacts[0].clone(), "+12125550101".to_owned()),
        (contacts[1].clone(), "+12125550102".to_owned()),
    ];
    want.sort();
    assert_eq!(asked, want);
}

#[tokio::test]
async fn the_time_zone_column_of_an_import_is_checked_and_wins_over_the_number() {
    let rig = rig().await;
    let source = rig.api.data_source(OWNER, &unique("Zones")).await;
    let csv = "phoneNumber,customerName,timeZone\n\
               +12125550101,Travelling,Pacific/Honolulu\n\
               +12125550102,Wrong zone,Mars/Olympus\n\
               +12125550103,At home,\n";
    let answer = rig
        .api
        .batch_import(OWNER, &source, "zones.csv", csv.as_bytes().to_vec())
        .await;
    let report = answer.ok();
    assert_eq!(report["successCount"], 2);
    assert_eq!(
        report["details"],
        json!([{"row": 3, "phoneNumber": "+12125550102", "reason": "invalid timeZone"}])
    );
    // 16:00 UTC is 06:00 in Honolulu: a 09:00-17:00 window there is closed, New York's is open.
    let task = rig
        .published(
            &source,
            json!({"dailyStartTime": "09:00", "dailyEndTime": "17:00"}),
        )
        .await;
    rig.api.dial_round(&rig.engine).await;
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["skips"]["OUTSIDE_WINDOW"], 1);
    assert_eq!(diagnostics["reasons"]["ANSWERED"], 1);
    assert_eq!(
        diagnostics["nextDialTime"],
        json!(
            Timestamp(local_hour(&rig.clock, chrono_tz::Pacific::Honolulu, 9))
                .display(rig.api.app.zone())
        )
    );
}

#[tokio::test]
async fn a_runs_skips_are_written_together_or_each_alone_when_one_moved() {
    let rig = rig().await;
    let (source, contacts) = rig
        .source(&[("+12125550101", json!({})), ("+12125550102", json!({}))])
        .await;
    let task = rig.published(&source, json!({})).await;
    let stored = rig.api.stored_task(OWNER, &task).await;
    let skipped = |n: usize| Skipped {
        due: Due {
            contact_id: id(&contacts[n]),
            attempt: 1,
            state: None,
        },
        skip: Skip::Dnc,
        until: None,
        parked_under: None,
    };
    let (store, owner, now) = (&rig.engine.store, tenant(OWNER), rig.clock.now());
    // Another run skipped the second contact first: the two together fail on it, and the first
    // is still written alone; the counters move once for each.
    let (second, both) = ([skipped(1)], [skipped(0), skipped(1)]);
    let first = store.skip_contacts(&owner, &stored, &second, now);
    assert_eq!(first.await.unwrap(), 1);
    let together = store.skip_contacts(&owner, &stored, &both, now);
    assert_eq!(together.await.unwrap(), 1);
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["skips"]["DNC"], 2);
    assert_eq!(
        diagnostics["contacts"],
        json!({"total": 2, "notDialled": 0, "waiting": 0, "inFlight": 0, "final": 2})
    );
}

#[tokio::test]
async fn a_number_whose_zones_share_no_open_minute_is_skipped_and_the_task_completes() {
    // D24: a toll-free +1 800 number may ring anywhere from Guam to Newfoundland, where a
    // 09:00-17:00 window is never open everywhere at once: skipped NO_COMMON_WINDOW, final, not
    // an attempt. New York's number is dialled as ever (the rig's 16:00 UTC is 11:00 or 12:00
    // there), and so is a toll-free number with its own timeZone (10:00 or 11:00 in Chicago).
    let rig = rig().await;
    let (source, contacts) = rig
        .source(&[
            ("+18005550100", json!({})),
            ("+12125550101", json!({})),
            ("+18005550102", json!({"timeZone": "America/Chicago"})),
        ])
        .await;
    let task = rig
        .published(
            &source,
            json!({"dailyStartTime": "09:00", "dailyEndTime": "17:00"}),
        )
        .await;
    rig.complete(&task).await;
    let mut placed = rig.placed();
    placed.sort();
    let mut dialled: Vec<String> = contacts[1..]
        .iter()
        .map(|c| format!("{task}-{c}-1"))
        .collect();
    dialled.sort();
    assert_eq!(
        placed, dialled,
        "the toll-free number without a zone is not called"
    );
    let (attempts, reason, skip, done) = rig.state(&task, &contacts[0]).await;
    assert_eq!(
        (attempts, reason, skip.map(Skip::name), done),
        (0, None, Some("NO_COMMON_WINDOW"), true)
    );
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["status"], 4, "COMPLETED");
    assert_eq!(diagnostics["skips"]["NO_COMMON_WINDOW"], 1);
    assert_eq!(diagnostics["skips"]["OUTSIDE_WINDOW"], 0);
    assert_eq!(
        diagnostics["contacts"],
        json!({"total": 3, "notDialled": 0, "waiting": 0, "inFlight": 0, "final": 3})
    );
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await;
    assert_eq!(detail.ok()["callCount"], 2, "a skip is not an attempt");
    let rows = export_rows(&rig.api, &task, "&status=3").await;
    let skips: Vec<&str> = rows.iter().map(|row| row["skipReason"].as_str()).collect();
    assert_eq!(skips, ["NO_COMMON_WINDOW"], "not dialled, with its reason");
}

#[tokio::test]
async fn calling_hours_end_before_their_end_minute_and_a_tasks_window_at_it() {
    // D24: callingHours.end is the first minute not allowed ("before 21:00"); a task's own
    // window keeps D9's inclusive end minute. Karachi is UTC+5 all year: the rig's 16:00 UTC is
    // 21:00 there.
    let rig = rig().await;
    rig.settings(json!({"callingHours": {"start": "09:00", "end": "21:00"}}))
        .await;
    let karachi = || [("+12125550101", json!({"timeZone": "Asia/Karachi"}))];
    let (source, contacts) = rig.source(&karachi()).await;
    let task = rig.published(&source, json!({})).await;
    rig.api.dial_round(&rig.engine).await;
    assert!(rig.placed().is_empty(), "not called at 21:00");
    assert_eq!(
        rig.state(&task, &contacts[0]).await,
        (0, None, Some(Skip::CallingHours), false)
    );
    // 20:59 there the next day: called.
    rig.clock.advance_to_utc(15, 59, 0);
    rig.api.dial_round(&rig.engine).await;
    assert_eq!(rig.placed(), [format!("{task}-{}-1", contacts[0])]);
    rig.complete(&task).await;

    // Without calling hours, a task window ending at 21:00 still holds 21:00 itself.
    rig.settings(json!({"callingHours": null})).await;
    let (source, contacts) = rig.source(&karachi()).await;
    let window = rig
        .published(
            &source,
            json!({"dailyStartTime": "09:00", "dailyEndTime": "21:00"}),
        )
        .await;
    rig.clock.advance_to_utc(16, 0, 0);
    rig.api.dial_round(&rig.engine).await;
    assert!(
        rig.placed()
            .contains(&format!("{window}-{}-1", contacts[0])),
        "called at 21:00, the window's last minute"
    );
}

#[tokio::test]
async fn a_change_that_opens_a_window_reaches_parked_contacts_at_the_next_tick() {
    let rig = rig().await;
    // New York is at 11:00 (12:00 in summer): calling hours from an hour later park everyone.
    let hour = New_York
        .timestamp_millis_opt(rig.clock.now().0)
        .unwrap()
        .hour();
    let start = format!("{:02}:00", hour + 1);
    rig.settings(json!({"callingHours": {"start": start, "end": "21:00"}}))
        .await;
    let (source, contacts) = rig
        .source(&[
            ("+12125550101", json!({})),
            ("+12125550102", json!({})),
            ("+12125550103", json!({"timeZone": "Asia/Tokyo"})),
        ])
        .await;
    let task = rig.published(&source, json!({})).await;
    // The first run parks them; the next finds nothing due.
    rig.api.dial_round(&rig.engine).await;
    rig.clock.advance(Duration::from_secs(1));
    rig.api.dial_round(&rig.engine).await;
    assert!(rig.placed().is_empty());
    assert!(
        rig.api.stored_task(OWNER, &task).await.idle_until.is_some(),
        "nothing due for an hour: the task rests"
    );
    assert_eq!(rig.diagnostics(&task).await["blockedBy"], "OUTSIDE_WINDOW");

    // Open from 06:00: the next tick wakes the resting task and its run calls the New Yorkers;
    // diagnostics never says a closed window once it is open.
    rig.settings(json!({"callingHours": {"start": "06:00", "end": "23:59"}}))
        .await;
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["blockedBy"], Value::Null, "{diagnostics}");
    assert_eq!(diagnostics["dialing"], true);
    rig.clock.advance(Duration::from_secs(60));
    rig.api.dial_round(&rig.engine).await;
    let mut placed = rig.placed();
    placed.sort();
    let mut expected: Vec<String> = contacts[..2]
        .iter()
        .map(|contact| format!("{task}-{contact}-1"))
        .collect();
    expected.sort();
    assert_eq!(placed, expected);
    // 01:00 in Tokyo: still parked, under the new rules.
    assert_eq!(
        rig.state(&task, &contacts[2]).await.2,
        Some(Skip::CallingHours)
    );

    // Its own zone edited to New York: called at the next tick.
    rig.api
        .post(
            OWNER,
            &format!("/api/dataSource/{source}/contact/update"),
            json!({"contactId": contacts[2], "timeZone": "America/New_York"}),
        )
        .await
        .ok();
    rig.clock.advance(Duration::from_secs(60));
    rig.api.dial_round(&rig.engine).await;
    assert!(
        rig.placed().contains(&format!("{task}-{}-1", contacts[2])),
        "{:?}",
        rig.placed()
    );
}

/// A running task of twelve Los Angeles numbers whose 10:00-20:00 window has not opened there
/// yet: its first run parks them.
async fn before_its_window_in_los_angeles(rig: &Rig) -> String {
    let numbers: Vec<String> = (0..12).map(|n| format!("+1213555{n:04}")).collect();
    let contacts: Vec<(&str, Value)> = numbers.iter().map(|n| (n.as_str(), json!({}))).collect();
    let window = json!({"dailyStartTime": "10:00", "dailyEndTime": "20:00"});
    rig.running(&contacts, window).await.0
}

/// D24 (#34's engine read, item 2): after a change of the rules, contacts parked under the
/// older ones are judged again at most half a run's room at a time (at least one), so a change
/// that wakes a great many of them never takes a whole run from the fresh contacts.
#[tokio::test]
async fn judging_parked_contacts_again_takes_at_most_half_a_run() {
    let rig = rig().await;
    let task = before_its_window_in_los_angeles(&rig).await;
    rig.api.dial_round(&rig.engine).await;
    assert!(rig.placed().is_empty());
    let (owner, task_id) = (tenant(OWNER), id(&task));
    let store = &rig.engine.store;
    let rules_at = |settings: outbound_model::settings::TenantSettings| {
        settings.rules_at.unwrap_or(Timestamp(0))
    };
    let before = rules_at(store.settings(&owner).await.unwrap());
    let now = rig.clock.now();
    assert!(
        store
            .due_retries(&owner, &task_id, now, 10, before)
            .await
            .unwrap()
            .is_empty(),
        "parked under the rules of now: not due before their window opens"
    );

    // Calling hours change the rules (D24): every one of them is judged again, half a run at a
    // time.
    rig.settings(json!({"callingHours": {"start": "08:00", "end": "21:00"}}))
        .await;
    let after = rules_at(store.settings(&owner).await.unwrap());
    assert!(after > before);
    let due = |limit| store.due_retries(&owner, &task_id, now, limit, after);
    assert_eq!(due(10).await.unwrap().len(), 5);
    assert_eq!(due(9).await.unwrap().len(), 5);
    assert_eq!(due(1).await.unwrap().len(), 1, "at least one");
    let parked = rig.api.stored_task_contacts(OWNER, &task).await.len();
    assert_eq!(parked, 10, "the first run parked what its room reached");
    assert_eq!(
        due(100).await.unwrap().len(),
        parked,
        "half of 100 holds them all"
    );
}

/// D13: a task's waiting index is read from its first key. With nothing waiting, a run's read of
/// its due contacts and the tick's earliest-waiting read are one Query each (they were nine);
/// with contacts parked outside their window only the parked ranges at or after that key are
/// read, and what they answer is what every rank read would have answered.
#[tokio::test]
async fn the_waiting_index_is_read_from_its_first_key() {
    let rig = rig().await;
    let task = before_its_window_in_los_angeles(&rig).await;
    let (owner, task_id) = (tenant(OWNER), id(&task));
    let store = &rig.engine.store;
    let rules_at = store.settings(&owner).await.unwrap().rules_at;
    let rules_at = rules_at.unwrap_or(Timestamp(0));
    let now = rig.clock.now();

    rig.api.calls.take();
    let due = store.due_retries(&owner, &task_id, now, 10, rules_at).await;
    assert_eq!((due.unwrap().len(), rig.api.calls.take()), (0, 1));
    let earliest = store.earliest_waiting(&owner, &task_id, rules_at).await;
    assert_eq!((earliest.unwrap(), rig.api.calls.take()), (None, 1));
    assert!(!store.any_waiting(&owner, &task_id).await.unwrap());

    // The first run parks what its room reached, each until its window opens.
    rig.api.dial_round(&rig.engine).await;
    assert!(rig.placed().is_empty());
    assert_eq!(rig.api.stored_task_contacts(OWNER, &task).await.len(), 10);
    rig.api.calls.take();
    let due = store.due_retries(&owner, &task_id, now, 10, rules_at).await;
    assert_eq!(
        (due.unwrap().len(), rig.api.calls.take()),
        (0, 1),
        "the first key is a parked contact not due: no range before it, nor the one up to now, is read"
    );
    let earliest = store.earliest_waiting(&owner, &task_id, rules_at).await;
    let opens = earliest
        .unwrap()
        .expect("the parked contacts' window opens");
    assert!(opens > now, "{opens:?} after {now:?}");
    assert_eq!(
        rig.api.calls.take(),
        2,
        "the first key, then the parked range alone"
    );
    assert!(store.any_waiting(&owner, &task_id).await.unwrap());
    rig.api.calls.take();
    let later = Timestamp(opens.0);
    let due = store
        .due_retries(&owner, &task_id, later, 10, rules_at)
        .await;
    assert_eq!(
        (due.unwrap().len(), rig.api.calls.take()),
        (10, 2),
        "at their window's opening every parked contact is due: the first key and the parked range"
    );
}
