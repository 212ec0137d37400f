//! Domain events (D20): what other systems may subscribe to on the service's EventBridge bus.
//! An event is written into the table by the transaction that commits the change it tells of
//! (the outbox, `store::outbox`), and published from there; so it exists exactly when the change
//! does. Its detail carries the tenant, so a rule can route a tenant's events; `events.schema.json`
//! beside `openapi.yaml` documents every field, and a test holds the two together.
//!
//! The audit events (D25) tell who changed what the tenant's calls obey: `SettingsChanged`,
//! `DncChanged` and `TelephonyChanged`, each with the `sub` of the token that made the change and
//! never a phone number.

use crate::call::{CallRef, CallReport, Learnt, Reason};
use crate::export::{ExportJob, ExportSubject};
use crate::import::{Import, ImportReport, ImportStatus};
use crate::settings::ChangedSettings;
use crate::task::TaskOperation;
use crate::telephony::{Assignment, AssignmentChange, Results};
use crate::{Actor, Id, TaskStatus, Tenant, Timestamp};
use serde::Serialize;
use std::collections::BTreeMap;

/// The `source` of every entry the service puts on its bus.
pub const SOURCE: &str = "outbound";

/// One event: its id (for consumers to drop a second delivery), its tenant and time, and what
/// happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub id: Id,
    pub tenant: Tenant,
    pub at: Timestamp,
    pub body: EventBody,
}

/// What happened; each variant is one `detail-type`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EventBody {
    TaskStateChanged(TaskStateChanged),
    CallCompleted(CallCompleted),
    ImportFinished(ImportFinished),
    ExportFinished(ExportFinished),
    SettingsChanged(SettingsChanged),
    DncChanged(DncChanged),
    TelephonyChanged(TelephonyChanged),
}

/// A task moved from one state to another (D10).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStateChanged {
    pub task_id: Id,
    /// The state's name (`RUNNING`), and its code as the API shows it (1).
    pub from: String,
    pub from_code: u8,
    pub to: String,
    pub to_code: u8,
    /// What moved it: `publish`, `pause`, `resume`, `stop`, `close`, `recall` (a COMPLETED
    /// task requeued), `complete` or `fail` (the dialing engine).
    pub cause: String,
    /// The stop's reason as given, or why the engine failed the task; else null.
    pub reason: Option<String>,
}

/// A call's outcome was recorded (D13, D18).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallCompleted {
    pub task_id: Id,
    pub contact_id: Id,
    /// The attempt's number for this contact in this task, from 1.
    pub attempt: u32,
    /// `SUCCESS`, `FAILED` or `NO_ANSWER`, and the contact status code the API shows (1-3).
    pub outcome: &'static str,
    pub outcome_code: u8,
    /// The reason of D18 (`ANSWERED`, `BUSY`, `VOICEMAIL`, ...).
    pub reason: Reason,
    /// Seconds from answer to hang-up; 0 for a call never answered.
    pub duration_seconds: u64,
    /// No further attempt will be made for this contact (until a recall).
    #[serde(rename = "final")]
    pub done: bool,
    /// What the call's flow reported of the task's `resultAttributes` on an answered call
    /// (D22); empty otherwise.
    pub results: Results,
    /// The call reached voicemail and left the task's message (D22).
    pub message_left: bool,
    /// The number the call was placed from (D22), when known.
    pub caller_id: Option<String>,
    /// The call was a callback promised to the contact (D31).
    pub callback: bool,
}

/// An import of a file into a data source ended (D8).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportFinished {
    pub data_source_id: Id,
    pub import_id: Id,
    pub file_name: String,
    /// `SUCCEEDED` or `FAILED`.
    pub status: ImportStatus,
    /// The report's counts; all 0 when the file was refused as a whole.
    pub import_count: usize,
    pub success_count: usize,
    pub fail_count: usize,
    /// Why the file was refused, for `FAILED`.
    pub error: Option<String>,
}

/// An export job ended (D8).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportFinished {
    pub export_id: Id,
    /// `dataSource` or `task`, and the id of the one exported.
    pub subject: &'static str,
    pub subject_id: Id,
    /// `csv` or `excel`.
    pub format: String,
    /// `SUCCEEDED` or `FAILED`.
    pub status: &'static str,
    pub file_name: Option<String>,
    pub row_count: Option<u64>,
    pub error: Option<String>,
}

/// The tenant's settings were changed (D14, D25).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsChanged {
    /// Who changed them: the token's `sub`.
    pub sub: Actor,
    /// Each field the change set or cleared, with its new value (`null`: cleared).
    pub changes: ChangedSettings,
}

/// How the do-not-call list changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DncAction {
    Add,
    Delete,
    Import,
}

/// The do-not-call list changed (D16, D25): who changed it, how and by how many entries; never
/// which numbers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DncChanged {
    /// Who changed it: the token's `sub`.
    pub sub: Actor,
    pub action: DncAction,
    /// Entries added (`add`, `import`) or removed (`delete`).
    pub count: usize,
    /// An import's data rows read from its file; null otherwise.
    pub row_count: Option<usize>,
    /// An import's rows refused; null otherwise.
    pub refused_count: Option<usize>,
    /// An import's rows refused, by the reason its report gives them (`already exists`,
    /// `invalid phoneNumber`, ...); null otherwise.
    pub refused_reasons: Option<BTreeMap<String, usize>>,
}

/// The operator assigned a tenant its caller IDs and contact flows (D22, D25): who, and how many
/// of each the tenant holds, gained and lost; never which numbers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TelephonyChanged {
    /// Who assigned them: the operator token's `sub`.
    pub sub: Actor,
    /// The tenant's caller IDs and contact flows after the assignment.
    pub caller_id_count: usize,
    pub contact_flow_count: usize,
    pub numbers_added: usize,
    pub numbers_removed: usize,
    pub flows_added: usize,
    pub flows_removed: usize,
    /// The tenant's defaults the assignment cleared, no longer being the tenant's
    /// (`defaultCallerId`, `defaultContactFlowId`).
    pub cleared_defaults: Vec<&'static str>,
}

/// An event as it is put on the bus: read back from its outbox item by the publisher.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct EventEntry {
    /// The event's id (its `eventId`), from the outbox item's key: what a log line names it by,
    /// since its `detail` may hold what a person wrote (names, file names).
    #[serde(skip)]
    pub event_id: String,
    pub event_type: String,
    pub tenant: String,
    pub detail: String,
}

/// The `detail` of an entry: the event's own fields first, then what happened.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Detail<'a> {
    event_id: &'a Id,
    tenant: &'a str,
    time: String,
    #[serde(flatten)]
    body: &'a EventBody,
}

impl Event {
    pub fn new(tenant: &Tenant, at: Timestamp, body: EventBody) -> Event {
        Event {
            id: Id::new(),
            tenant: tenant.clone(),
            at,
            body,
        }
    }

    /// The entry's `detail-type`.
    pub fn detail_type(&self) -> &'static str {
        match self.body {
            EventBody::TaskStateChanged(_) => "TaskStateChanged",
            EventBody::CallCompleted(_) => "CallCompleted",
            EventBody::ImportFinished(_) => "ImportFinished",
            EventBody::ExportFinished(_) => "ExportFinished",
            EventBody::SettingsChanged(_) => "SettingsChanged",
            EventBody::DncChanged(_) => "DncChanged",
            EventBody::TelephonyChanged(_) => "TelephonyChanged",
        }
    }

    /// The entry's `detail`, a JSON object.
    pub fn detail(&self) -> String {
        let detail = Detail {
            event_id: &self.id,
            tenant: self.tenant.as_str(),
            time: self.at.rfc3339(),
            body: &self.body,
        };
        // Only strings, numbers and enums of our own: encoding cannot fail.
        serde_json::to_string(&detail).unwrap_or_else(|_| "{}".to_owned())
    }

    /// A task's move from `from` to `to` by `operation`.
    pub fn task_state_changed(
        tenant: &Tenant,
        at: Timestamp,
        task: &Id,
        from: TaskStatus,
        to: TaskStatus,
        operation: TaskOperation,
        reason: Option<String>,
    ) -> Event {
        Event::new(
            tenant,
            at,
            EventBody::TaskStateChanged(TaskStateChanged {
                task_id: task.clone(),
                from: from.to_string(),
                from_code: from.code(),
                to: to.to_string(),
                to_code: to.code(),
                cause: operation.to_string(),
                reason,
            }),
        )
    }

    /// The outcome of `call`, recorded `at` with what it `learnt`; `done` when no attempt
    /// follows it.
    pub fn call_completed(
        tenant: &Tenant,
        at: Timestamp,
        (call, report): (&CallRef, &CallReport),
        learnt: &Learnt,
        done: bool,
    ) -> Event {
        Event::new(
            tenant,
            at,
            EventBody::CallCompleted(CallCompleted {
                task_id: call.task_id.clone(),
                contact_id: call.contact_id.clone(),
                attempt: call.attempt,
                outcome: report.outcome().name(),
                outcome_code: report.outcome().code(),
                reason: report.reason,
                duration_seconds: report.duration,
                done,
                results: learnt.results.clone(),
                message_left: learnt.message_left,
                caller_id: learnt.caller_id.clone(),
                callback: call.callback.is_some(),
            }),
        )
    }

    /// An import's end, with its report's counts when it stored rows.
    pub fn import_finished(
        tenant: &Tenant,
        at: Timestamp,
        import: &Import,
        status: ImportStatus,
        report: Option<&ImportReport>,
        error: Option<&str>,
    ) -> Event {
        let counts = report.map_or((0, 0, 0), |report| {
            (report.import_count, report.success_count, report.fail_count)
        });
        Event::new(
            tenant,
            at,
            EventBody::ImportFinished(ImportFinished {
                data_source_id: import.data_source_id.clone(),
                import_id: import.id.clone(),
                file_name: import.file_name.clone(),
                status,
                import_count: counts.0,
                success_count: counts.1,
                fail_count: counts.2,
                error: error.map(str::to_owned),
            }),
        )
    }

    /// An export job's end: its file, or why there is none.
    pub fn export_finished(
        tenant: &Tenant,
        at: Timestamp,
        job: &ExportJob,
        file: Option<(&str, u64)>,
        error: Option<&str>,
    ) -> Event {
        let (subject, subject_id) = match &job.subject {
            ExportSubject::DataSource { data_source_id } => ("dataSource", data_source_id),
            ExportSubject::Task { task_id, .. } => ("task", task_id),
        };
        Event::new(
            tenant,
            at,
            EventBody::ExportFinished(ExportFinished {
                export_id: job.id.clone(),
                subject,
                subject_id: subject_id.clone(),
                format: job.format.clone(),
                status: if file.is_some() {
                    "SUCCEEDED"
                } else {
                    "FAILED"
                },
                file_name: file.map(|(name, _)| name.to_owned()),
                row_count: file.map(|(_, rows)| rows),
                error: error.map(str::to_owned),
            }),
        )
    }

    /// A change of the tenant's settings by `actor`: the fields it set or cleared.
    pub fn settings_changed(
        tenant: &Tenant,
        at: Timestamp,
        actor: &Actor,
        changes: ChangedSettings,
    ) -> Event {
        Event::new(
            tenant,
            at,
            EventBody::SettingsChanged(SettingsChanged {
                sub: actor.clone(),
                changes,
            }),
        )
    }

    /// One do-not-call entry added (`Add`) or removed (`Delete`) by `actor`.
    pub fn dnc_changed(tenant: &Tenant, at: Timestamp, actor: &Actor, action: DncAction) -> Event {
        Event::new(
            tenant,
            at,
            EventBody::DncChanged(DncChanged {
                sub: actor.clone(),
                action,
                count: 1,
                row_count: None,
                refused_count: None,
                refused_reasons: None,
            }),
        )
    }

    /// The operator `actor`'s assignment of `assignment` to the tenant, which made `change`.
    pub fn telephony_changed(
        tenant: &Tenant,
        at: Timestamp,
        actor: &Actor,
        assignment: &Assignment,
        change: &AssignmentChange,
    ) -> Event {
        Event::new(
            tenant,
            at,
            EventBody::TelephonyChanged(TelephonyChanged {
                sub: actor.clone(),
                caller_id_count: assignment.caller_ids.len(),
                contact_flow_count: assignment.contact_flows.len(),
                numbers_added: change.numbers_added.len(),
                numbers_removed: change.numbers_removed.len(),
                flows_added: change.flows_added.len(),
                flows_removed: change.flows_removed.len(),
                cleared_defaults: change.cleared_defaults(),
            }),
        )
    }

    /// A do-not-call file imported by `actor`: the entries it added and its rows refused, by
    /// reason; the report's numbers stay out of it.
    pub fn dnc_imported(
        tenant: &Tenant,
        at: Timestamp,
        actor: &Actor,
        report: &ImportReport,
    ) -> Event {
        let mut reasons = BTreeMap::new();
        for failure in &report.details {
            *reasons.entry(failure.reason.to_string()).or_insert(0) += 1;
        }
        Event::new(
            tenant,
            at,
            EventBody::DncChanged(DncChanged {
                sub: actor.clone(),
                action: DncAction::Import,
                count: report.success_count,
                row_count: Some(report.import_count),
                refused_count: Some(report.fail_count),
                refused_reasons: Some(reasons),
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::Outcome;
    use crate::numbers::Country;
    use crate::settings::{calling_hours, Change, FrequencyCap, SettingsChange};
    use serde_json::Value;

    /// The schema other systems read (`events.schema.json`).
    fn schema() -> Value {
        serde_json::from_str(include_str!("../../../events.schema.json")).unwrap()
    }

    /// `value` against one property's schema: its `$ref`, `const`, `enum` and `type`, and an
    /// object's own `properties` (each field documented, the required ones present) or
    /// `additionalProperties` (a map's values).
    fn check_value(defs: &Value, field: &str, property: &Value, value: &Value) {
        if let Some(reference) = property["$ref"].as_str() {
            let name = reference.trim_start_matches("#/$defs/");
            return check_value(defs, field, &defs[name], value);
        }
        if let Some(options) = property["oneOf"].as_array() {
            // The one that applies: `null`, or the other.
            let chosen = options
                .iter()
                .find(|option| (option["type"] == "null") == value.is_null())
                .unwrap_or_else(|| panic!("{field}: {value} fits none of {options:?}"));
            return check_value(defs, field, chosen, value);
        }
        if let Some(object) = value.as_object() {
            if let Some(properties) = property["properties"].as_object() {
                for required in property["required"].as_array().into_iter().flatten() {
                    let required = required.as_str().unwrap();
                    assert!(object.contains_key(required), "{field}.{required} missing");
                }
                for (name, inner) in object {
                    let schema = properties
                        .get(name)
                        .unwrap_or_else(|| panic!("{field}.{name} is not in events.schema.json"));
                    check_value(defs, &format!("{field}.{name}"), schema, inner);
                }
            } else if property["additionalProperties"].is_object() {
                for (name, inner) in object {
                    let schema = &property["additionalProperties"];
                    check_value(defs, &format!("{field}.{name}"), schema, inner);
                }
            }
        }
        if let (Some(items), Some(values)) = (property.get("items"), value.as_array()) {
            for (at, inner) in values.iter().enumerate() {
                check_value(defs, &format!("{field}[{at}]"), items, inner);
            }
        }
        if let Some(constant) = property.get("const") {
            assert_eq!(value, constant, "{field}");
        }
        if let Some(allowed) = property["enum"].as_array() {
            assert!(
                allowed.contains(value),
                "{field}: {value} is not one of {allowed:?}"
            );
        }
        let types: Vec<&str> = match &property["type"] {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => return,
        };
        let fits = |kind: &str| match kind {
            "string" => value.is_string(),
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            _ => false,
        };
        assert!(
            types.iter().any(|kind| fits(kind)),
            "{field}: {value} is not {types:?}"
        );
    }

    /// Checks `event` as the schema describes its detail-type: every required field present,
    /// every field documented and of its documented type.
    fn check(event: &Event) {
        let schema = schema();
        let defs = &schema["$defs"];
        let kind = event.detail_type();
        assert!(schema["properties"]["detail-type"]["enum"]
            .as_array()
            .unwrap()
            .contains(&Value::from(kind)));
        let detail: Value = serde_json::from_str(&event.detail()).unwrap();
        let detail = detail.as_object().unwrap();
        for part in [&defs["Common"], &defs[kind]] {
            for required in part["required"].as_array().unwrap() {
                assert!(
                    detail.contains_key(required.as_str().unwrap()),
                    "{kind}: {required} missing"
                );
            }
        }
        for (field, value) in detail {
            let property = [&defs["Common"], &defs[kind]]
                .iter()
                .find_map(|part| part["properties"].get(field))
                .unwrap_or_else(|| panic!("{kind}.{field} is not in events.schema.json"));
            check_value(defs, field, property, value);
        }
    }

    #[test]
    fn every_kind_of_event_is_as_events_schema_json_documents_it() {
        use crate::import::ImportStatus;
        let tenant = Tenant::parse("acme").unwrap();
        let at = Timestamp(1_764_000_000_123);
        let bodies = [
            EventBody::TaskStateChanged(TaskStateChanged {
                task_id: Id::new(),
                from: "RUNNING".into(),
                from_code: 1,
                to: "FAILED".into(),
                to_code: 5,
                cause: "fail".into(),
                reason: Some("the provider refused every call".into()),
            }),
            EventBody::CallCompleted(CallCompleted {
                task_id: Id::new(),
                contact_id: Id::new(),
                attempt: 2,
                outcome: Outcome::NoAnswer.name(),
                outcome_code: Outcome::NoAnswer.code(),
                reason: Reason::Voicemail,
                duration_seconds: 0,
                done: false,
                results: Results::new(),
                message_left: true,
                caller_id: None,
                callback: false,
            }),
            EventBody::CallCompleted(CallCompleted {
                task_id: Id::new(),
                contact_id: Id::new(),
                attempt: 1,
                outcome: Outcome::Success.name(),
                outcome_code: Outcome::Success.code(),
                reason: Reason::Answered,
                duration_seconds: 42,
                done: true,
                results: [("outcome".to_owned(), "confirmed".to_owned())].into(),
                message_left: false,
                caller_id: Some("+12125550100".into()),
                callback: true,
            }),
            EventBody::ImportFinished(ImportFinished {
                data_source_id: Id::new(),
                import_id: Id::new(),
                file_name: "list.xlsx".into(),
                status: ImportStatus::Failed,
                import_count: 0,
                success_count: 0,
                fail_count: 0,
                error: Some("no phoneNumber column".into()),
            }),
            EventBody::ImportFinished(ImportFinished {
                data_source_id: Id::new(),
                import_id: Id::new(),
                file_name: "list.csv".into(),
                status: ImportStatus::Succeeded,
                import_count: 3,
                success_count: 2,
                fail_count: 1,
                error: None,
            }),
            EventBody::ExportFinished(ExportFinished {
                export_id: Id::new(),
                subject: "dataSource",
                subject_id: Id::new(),
                format: "excel".into(),
                status: "SUCCEEDED",
                file_name: Some("contacts_20251124160000.xlsx".into()),
                row_count: Some(3),
                error: None,
            }),
        ];
        for body in bodies {
            check(&Event::new(&tenant, at, body));
        }
        let actor = Actor::parse("4f1c2e3a-9b8d-4c7e-a6f5-0123456789ab").unwrap();
        let set_all = SettingsChange {
            default_country: Change::Set(Country::parse("c", "US").unwrap()),
            calling_hours: Change::Set(calling_hours("09:00", "21:00").unwrap()),
            frequency_cap: Change::Set(FrequencyCap::new(3, 24).unwrap()),
            default_caller_id: Change::Set("+12125550100".into()),
            default_contact_flow_id: Change::Set("reminder".into()),
        };
        let clear_all = SettingsChange {
            default_country: Change::Clear,
            calling_hours: Change::Clear,
            frequency_cap: Change::Clear,
            default_caller_id: Change::Clear,
            default_contact_flow_id: Change::Clear,
        };
        for change in [set_all, clear_all, SettingsChange::default()] {
            check(&Event::settings_changed(
                &tenant,
                at,
                &actor,
                change.changed(),
            ));
        }
        for action in [DncAction::Add, DncAction::Delete] {
            check(&Event::dnc_changed(&tenant, at, &actor, action));
        }
        check(&Event::dnc_imported(&tenant, at, &actor, &import_report()));
        let (assignment, before) = telephony();
        check(&Event::telephony_changed(
            &tenant,
            at,
            &actor,
            &assignment,
            &assignment.change_from(&before),
        ));
        for reason in Reason::ALL {
            check_value(
                &schema()["$defs"],
                "reason",
                &schema()["$defs"]["CallCompleted"]["properties"]["reason"],
                &serde_json::to_value(reason).unwrap(),
            );
        }
        for status in 0..=6u8 {
            let status = TaskStatus::try_from(status).unwrap();
            check_value(
                &schema()["$defs"],
                "from",
                &schema()["$defs"]["TaskStatus"],
                &Value::from(status.to_string()),
            );
        }
    }

    /// A do-not-call file's report: 2 rows listed, 3 refused.
    fn import_report() -> ImportReport {
        let refused = |row: u64, phone: &str, reason: &'static str| crate::import::RowFailure {
            row,
            phone_number: phone.into(),
            reason: reason.into(),
        };
        ImportReport {
            import_count: 5,
            success_count: 2,
            fail_count: 3,
            details: vec![
                refused(3, "+14155550100", "already exists"),
                refused(4, "12", "invalid phoneNumber"),
                refused(6, "+14155550101", "already exists"),
            ],
        }
    }

    /// An assignment of two numbers and a flow over settings that held another number (the
    /// default) and the same flow.
    fn telephony() -> (Assignment, crate::settings::TenantSettings) {
        let flow = ("reminder".to_owned(), "Order reminder".to_owned());
        let assignment = Assignment::new(
            &["+12125550100".to_owned(), "+442071234567".to_owned()],
            std::slice::from_ref(&flow),
        )
        .unwrap();
        let before = crate::settings::TenantSettings {
            caller_ids: vec!["+13125550100".into()],
            contact_flows: Assignment::new(&[], &[flow]).unwrap().contact_flows,
            default_caller_id: Some("+13125550100".into()),
            default_contact_flow_id: Some("reminder".into()),
            ..Default::default()
        };
        (assignment, before)
    }

    /// D25: an audit event names who made the change and what changed, never a number.
    #[test]
    fn audit_events_carry_the_sub_and_counts_and_no_number() {
        let tenant = Tenant::parse("acme").unwrap();
        let at = Timestamp(1_764_000_000_123);
        let actor = Actor::parse("dev-acme").unwrap();
        let change = SettingsChange {
            calling_hours: Change::Set(calling_hours("09:00", "20:30").unwrap()),
            frequency_cap: Change::Clear,
            ..SettingsChange::default()
        };
        let event = Event::settings_changed(&tenant, at, &actor, change.changed());
        assert_eq!(event.detail_type(), "SettingsChanged");
        let detail: Value = serde_json::from_str(&event.detail()).unwrap();
        assert_eq!(
            detail,
            serde_json::json!({
                "eventId": event.id.as_str(),
                "tenant": "acme",
                "time": "2025-11-24T16:00:00.123Z",
                "sub": "dev-acme",
                "changes": {"callingHours": {"start": "09:00", "end": "20:30"}, "frequencyCap": null},
            })
        );

        let event = Event::dnc_imported(&tenant, at, &actor, &import_report());
        assert_eq!(event.detail_type(), "DncChanged");
        let detail: Value = serde_json::from_str(&event.detail()).unwrap();
        assert_eq!(
            detail,
            serde_json::json!({
                "eventId": event.id.as_str(),
                "tenant": "acme",
                "time": "2025-11-24T16:00:00.123Z",
                "sub": "dev-acme",
                "action": "import",
                "count": 2,
                "rowCount": 5,
                "refusedCount": 3,
                "refusedReasons": {"already exists": 2, "invalid phoneNumber": 1},
            })
        );
        assert!(!event.detail().contains("4155550"), "no number");

        let (assignment, before) = telephony();
        let event = Event::telephony_changed(
            &tenant,
            at,
            &actor,
            &assignment,
            &assignment.change_from(&before),
        );
        assert_eq!(event.detail_type(), "TelephonyChanged");
        let detail: Value = serde_json::from_str(&event.detail()).unwrap();
        assert_eq!(
            detail,
            serde_json::json!({
                "eventId": event.id.as_str(),
                "tenant": "acme",
                "time": "2025-11-24T16:00:00.123Z",
                "sub": "dev-acme",
                "callerIdCount": 2,
                "contactFlowCount": 1,
                "numbersAdded": 2,
                "numbersRemoved": 1,
                "flowsAdded": 0,
                "flowsRemoved": 0,
                "clearedDefaults": ["defaultCallerId"],
            })
        );
        let with_default = SettingsChange {
            default_caller_id: Change::Set("+12125550100".into()),
            ..SettingsChange::default()
        };
        let event = Event::settings_changed(&tenant, at, &actor, with_default.changed());
        assert!(!event.detail().contains("5550100"), "no number");
        let deleted = Event::dnc_changed(&tenant, at, &actor, DncAction::Delete);
        let detail: Value = serde_json::from_str(&deleted.detail()).unwrap();
        assert_eq!(
            (&detail["action"], &detail["count"], &detail["rowCount"]),
            (&Value::from("delete"), &Value::from(1), &Value::Null)
        );
    }

    #[test]
    fn a_detail_carries_the_event_id_tenant_and_time_before_what_happened() {
        let tenant = Tenant::parse("acme").unwrap();
        let task = Id::new();
        let event = Event::task_state_changed(
            &tenant,
            Timestamp(1_764_000_000_123),
            &task,
            TaskStatus::Running,
            TaskStatus::Stopped,
            TaskOperation::Stop,
            Some("list exhausted".into()),
        );
        assert_eq!(event.detail_type(), "TaskStateChanged");
        let detail: serde_json::Value = serde_json::from_str(&event.detail()).unwrap();
        assert_eq!(
            detail,
            serde_json::json!({
                "eventId": event.id.as_str(),
                "tenant": "acme",
                "time": "2025-11-24T16:00:00.123Z",
                "taskId": task.as_str(),
                "from": "RUNNING",
                "fromCode": 1,
                "to": "STOPPED",
                "toCode": 3,
                "cause": "stop",
                "reason": "list exhausted",
            })
        );
    }
}
