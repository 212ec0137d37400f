//! Caller IDs, contact flows and what a call carries and learns (D22): a tenant's numbers and
//! flows as the operator assigns them, a task's choice among them, the attributes a call sends
//! its flow and the results the flow sends back, and local presence (the tenant's number nearest
//! the called party).

use crate::error::Error;
use crate::settings::TenantSettings;
use crate::task::DialSettings;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// At most this many caller IDs per tenant.
pub const MAX_CALLER_IDS: usize = 100;
/// At most this many contact flows per tenant.
pub const MAX_CONTACT_FLOWS: usize = 50;
/// At most this many agent queues per tenant (D30).
pub const MAX_QUEUES: usize = 50;
/// At most this many contact fields a task sends its flow.
pub const MAX_CALL_ATTRIBUTES: usize = 20;
/// At most this many results a task records.
pub const MAX_RESULT_ATTRIBUTES: usize = 10;
/// A result's value is cut at this many characters.
pub const RESULT_VALUE_CHARS: usize = 256;
/// The attributes every call of the service carries (what its outcome is matched by): no task
/// may send or record a field of these names.
pub const OWN_ATTRIBUTES: [&str; 4] = ["tenant", "taskId", "contactId", "attempt"];
/// The call attribute that sends the called number in E.164 (D22), beside the contact's fields.
pub const E164_ATTRIBUTE: &str = "e164";
/// A task's `callerId` that picks a number per call (D22).
pub const LOCAL_PRESENCE: &str = "LOCAL_PRESENCE";
/// The contact field whose `name=value;name=value` is what the simulated provider's flow sets on
/// an answered call.
pub const SIMULATED_RESULTS_FIELD: &str = "simulatedResults";

/// What a call's flow reported, by result name: only the task's `resultAttributes`, each value
/// at most [`RESULT_VALUE_CHARS`] characters.
pub type Results = BTreeMap<String, String>;

/// A contact flow the operator assigned to a tenant: the provider's id and a name to show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContactFlow {
    /// The provider's id of the flow (Amazon Connect: the flow's id in the instance), 1-128
    /// characters of letters, digits, `-` and `_`.
    #[cfg_attr(
        feature = "openapi",
        schema(example = "8c2f1a9e-1b7d-4c3e-9f7a-2d4e6b8c0a1f")
    )]
    pub id: String,
    /// 1-100 characters.
    #[cfg_attr(feature = "openapi", schema(example = "Order reminder"))]
    pub name: String,
}

impl ContactFlow {
    /// A flow as sent, checked; `field` names it in the refusal.
    pub fn new(field: &str, id: &str, name: &str) -> Result<Self, Error> {
        let (id, name) = provider_entry(field, id, name)?;
        Ok(ContactFlow { id, name })
    }
}

/// An agent queue the operator assigned to a tenant (D30): the provider's id and a name to show.
/// An agent-paced task's flow transfers its answered calls there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentQueue {
    /// The provider's id of the queue (Amazon Connect: the queue's id in the instance), 1-128
    /// characters of letters, digits, `-` and `_`.
    #[cfg_attr(
        feature = "openapi",
        schema(example = "5f1c2b7a-3e4d-4a9b-8c6d-1e2f3a4b5c6d")
    )]
    pub id: String,
    /// 1-100 characters.
    #[cfg_attr(feature = "openapi", schema(example = "Renewals team"))]
    pub name: String,
}

impl AgentQueue {
    /// A queue as sent, checked; `field` names it in the refusal.
    pub fn new(field: &str, id: &str, name: &str) -> Result<Self, Error> {
        let (id, name) = provider_entry(field, id, name)?;
        Ok(AgentQueue { id, name })
    }
}

/// A provider's resource as the operator names it: an id (1-128 letters, digits, `-`, `_`) and
/// a name to show (1-100 characters), both trimmed.
fn provider_entry(field: &str, id: &str, name: &str) -> Result<(String, String), Error> {
    let id = id.trim();
    let name = name.trim();
    if !is_flow_id(id) {
        return Err(Error::invalid(format!(
            "{field}.id must be 1-128 letters, digits, '-' or '_'"
        )));
    }
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Error::invalid(format!(
            "{field}.name must be 1-100 characters"
        )));
    }
    Ok((id.to_owned(), name.to_owned()))
}

/// A caller ID as the operator assigns it (D22): E.164 exactly (`+`, the country code and the
/// national number, nothing else) and valid in libphonenumber's metadata. `field` names the entry
/// in the refusal.
pub fn caller_id(field: &str, raw: &str) -> Result<String, Error> {
    crate::Phone::parse(raw)
        .ok()
        .and_then(|phone| crate::numbers::e164(&phone, None))
        .filter(|e164| e164 == raw)
        .ok_or_else(|| {
            Error::invalid(format!(
                "{field} must be a valid phone number in E.164, e.g. +12125550100"
            ))
        })
}

/// 400 when `list` holds more than `most` entries (`what`: how they are called).
fn at_most(list: &str, len: usize, most: usize, what: &str) -> Result<(), Error> {
    if len > most {
        return Err(Error::invalid(format!(
            "{list} may hold at most {most} {what}"
        )));
    }
    Ok(())
}

/// The provider's resources of `list` as sent, `(id, name)` pairs each made by `make` (which
/// names `list[at]` in its refusal), no id twice.
fn provider_entries<T>(
    list: &str,
    pairs: &[(String, String)],
    make: impl Fn(&str, &str, &str) -> Result<T, Error>,
    id: impl Fn(&T) -> &String,
) -> Result<Vec<T>, Error> {
    let mut entries: Vec<T> = Vec::with_capacity(pairs.len());
    for (at, (raw_id, name)) in pairs.iter().enumerate() {
        let entry = make(&format!("{list}[{at}]"), raw_id, name)?;
        if entries.iter().any(|seen| id(seen) == id(&entry)) {
            return Err(Error::invalid(format!(
                "{list}[{at}].id {} is listed twice",
                id(&entry)
            )));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// The numbers, flows and agent queues the operator assigns a tenant (D22, D30), every entry
/// checked: at most [`MAX_CALLER_IDS`] numbers, [`MAX_CONTACT_FLOWS`] flows and [`MAX_QUEUES`]
/// queues, none twice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    pub caller_ids: Vec<String>,
    pub contact_flows: Vec<ContactFlow>,
    /// `None`: the tenant keeps the queues it has.
    pub queues: Option<Vec<AgentQueue>>,
}

impl Assignment {
    /// The lists as sent (`contactFlows` as `(id, name)` pairs); a refusal names the entry.
    pub fn new(caller_ids: &[String], contact_flows: &[(String, String)]) -> Result<Self, Error> {
        Assignment::numbers_and_flows(caller_ids, contact_flows)
    }

    /// The lists as sent, with the agent queues (`(id, name)` pairs, D30).
    pub fn with_queues(
        caller_ids: &[String],
        contact_flows: &[(String, String)],
        queues: &[(String, String)],
    ) -> Result<Self, Error> {
        at_most("queues", queues.len(), MAX_QUEUES, "queues")?;
        let queues = provider_entries("queues", queues, AgentQueue::new, |q| &q.id)?;
        let mut assignment = Assignment::numbers_and_flows(caller_ids, contact_flows)?;
        assignment.queues = Some(queues);
        Ok(assignment)
    }

    fn numbers_and_flows(
        caller_ids: &[String],
        contact_flows: &[(String, String)],
    ) -> Result<Self, Error> {
        at_most("callerIds", caller_ids.len(), MAX_CALLER_IDS, "numbers")?;
        at_most(
            "contactFlows",
            contact_flows.len(),
            MAX_CONTACT_FLOWS,
            "flows",
        )?;
        let mut numbers: Vec<String> = Vec::with_capacity(caller_ids.len());
        for (at, raw) in caller_ids.iter().enumerate() {
            let number = caller_id(&format!("callerIds[{at}]"), raw)?;
            if numbers.contains(&number) {
                return Err(Error::invalid(format!(
                    "callerIds[{at}] {number} is listed twice"
                )));
            }
            numbers.push(number);
        }
        let flows = provider_entries("contactFlows", contact_flows, ContactFlow::new, |f| &f.id)?;
        Ok(Assignment {
            caller_ids: numbers,
            contact_flows: flows,
            queues: None,
        })
    }

    /// What replacing `before` (the tenant's settings as stored) with this assignment changes.
    pub fn change_from(&self, before: &TenantSettings) -> AssignmentChange {
        let new_flow = |id: &String| self.contact_flows.iter().any(|flow| &flow.id == id);
        let old_flow = |id: &String| before.contact_flows.iter().any(|flow| &flow.id == id);
        let numbers_added = (self.caller_ids.iter())
            .filter(|number| !before.caller_ids.contains(number))
            .cloned()
            .collect();
        let numbers_removed = (before.caller_ids.iter())
            .filter(|number| !self.caller_ids.contains(number))
            .cloned()
            .collect();
        let flows_added = (self.contact_flows.iter().map(|flow| &flow.id))
            .filter(|id| !old_flow(id))
            .cloned()
            .collect();
        let flows_removed = (before.contact_flows.iter().map(|flow| &flow.id))
            .filter(|id| !new_flow(id))
            .cloned()
            .collect();
        let queues_removed = match &self.queues {
            Some(queues) => (before.queues.iter())
                .filter(|queue| !queues.iter().any(|new| new.id == queue.id))
                .map(|queue| queue.id.clone())
                .collect(),
            None => Vec::new(),
        };
        AssignmentChange {
            numbers_added,
            numbers_removed,
            flows_added,
            flows_removed,
            queues_removed,
            clears_default_caller_id: (before.default_caller_id.as_ref())
                .is_some_and(|number| !self.caller_ids.contains(number)),
            clears_default_contact_flow_id: (before.default_contact_flow_id.as_ref())
                .is_some_and(|id| !new_flow(id)),
        }
    }
}

/// What an assignment changes of the tenant's: the numbers and flow ids it adds and removes, and
/// the defaults it clears because they are no longer the tenant's (D22).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssignmentChange {
    pub numbers_added: Vec<String>,
    pub numbers_removed: Vec<String>,
    pub flows_added: Vec<String>,
    pub flows_removed: Vec<String>,
    /// Agent queues no longer the tenant's (D30).
    pub queues_removed: Vec<String>,
    pub clears_default_caller_id: bool,
    pub clears_default_contact_flow_id: bool,
}

impl AssignmentChange {
    /// The settings fields the change clears, as the API names them.
    pub fn cleared_defaults(&self) -> Vec<&'static str> {
        [
            (self.clears_default_caller_id, "defaultCallerId"),
            (self.clears_default_contact_flow_id, "defaultContactFlowId"),
        ]
        .into_iter()
        .filter_map(|(cleared, name)| cleared.then_some(name))
        .collect()
    }
}

/// A tenant's numbers and flows as the operator's routes show them (D22).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TelephonyView {
    #[cfg_attr(feature = "openapi", schema(example = "acme"))]
    pub tenant: String,
    /// E.164.
    #[cfg_attr(feature = "openapi", schema(example = json!(["+12125550100"])))]
    pub caller_ids: Vec<String>,
    pub contact_flows: Vec<ContactFlow>,
    /// The agent queues agent-paced tasks may name (D30).
    pub queues: Vec<AgentQueue>,
}

impl TelephonyView {
    pub fn of(tenant: &crate::Tenant, settings: TenantSettings) -> Self {
        TelephonyView {
            tenant: tenant.as_str().to_owned(),
            caller_ids: settings.caller_ids,
            contact_flows: settings.contact_flows,
            queues: settings.queues,
        }
    }
}

/// Whether `id` can be a flow's id: 1-128 letters, digits, `-` and `_`.
pub fn is_flow_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The caller ID a task calls from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum CallerIdChoice {
    /// One of the tenant's numbers, in E.164.
    Number(String),
    /// Per call, the tenant's number nearest the called party (D22).
    LocalPresence,
}

impl CallerIdChoice {
    pub fn as_str(&self) -> &str {
        match self {
            CallerIdChoice::Number(number) => number,
            CallerIdChoice::LocalPresence => LOCAL_PRESENCE,
        }
    }
}

impl From<String> for CallerIdChoice {
    fn from(raw: String) -> Self {
        if raw == LOCAL_PRESENCE {
            CallerIdChoice::LocalPresence
        } else {
            CallerIdChoice::Number(raw)
        }
    }
}

impl From<CallerIdChoice> for String {
    fn from(choice: CallerIdChoice) -> Self {
        choice.as_str().to_owned()
    }
}

/// What a call that reaches voicemail does (D22).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Voicemail {
    /// Hangs up (the default).
    #[default]
    HangUp,
    /// Waits for the beep and plays the flow's message (Amazon Connect:
    /// `AwaitAnswerMachinePrompt`).
    LeaveMessage,
}

impl Voicemail {
    pub fn name(self) -> &'static str {
        match self {
            Voicemail::HangUp => "HANG_UP",
            Voicemail::LeaveMessage => "LEAVE_MESSAGE",
        }
    }

    pub fn parse(field: &str, raw: &str) -> Result<Self, Error> {
        match raw.trim() {
            "HANG_UP" => Ok(Voicemail::HangUp),
            "LEAVE_MESSAGE" => Ok(Voicemail::LeaveMessage),
            _ => Err(Error::invalid(format!(
                "{field} must be HANG_UP or LEAVE_MESSAGE"
            ))),
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Voicemail::HangUp
    }
}

/// A result name a flow may set: `[A-Za-z0-9_]{1,32}`, not one of the service's own.
pub fn check_result_name(field: &str, name: &str) -> Result<(), Error> {
    let well_formed = (1..=32).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !well_formed {
        return Err(Error::invalid(format!(
            "{field} must be 1-32 letters, digits or '_'"
        )));
    }
    refuse_own(field, name)
}

/// Refuses one of the service's own attribute names (`tenant`, `taskId`, `contactId`,
/// `attempt`, and their `signature`: D29).
pub fn refuse_own(field: &str, name: &str) -> Result<(), Error> {
    if OWN_ATTRIBUTES.contains(&name) || name == crate::signature::SIGNATURE_ATTRIBUTE {
        return Err(Error::invalid(format!(
            "{field} '{name}' is one of the service's own attributes (tenant, taskId, contactId, attempt, signature)"
        )));
    }
    Ok(())
}

/// Refuses a result name that is something the service sends rather than what the flow sets
/// (D29): a name of the task's `call_attributes`, or the called number (`e164`,
/// `phoneNumber`). Their values are on the contact already; recorded as results they would
/// show the called number as something the flow found.
pub fn check_results_are_the_flows(
    call_attributes: &[String],
    result_attributes: &[String],
) -> Result<(), Error> {
    for (at, name) in result_attributes.iter().enumerate() {
        let sent = call_attributes.contains(name);
        if sent || [E164_ATTRIBUTE, "phoneNumber"].contains(&name.as_str()) {
            let why = if sent {
                "is one of the task's callAttributes"
            } else {
                "is the called number"
            };
            return Err(Error::invalid(format!(
                "resultAttributes[{at}] '{name}' {why}: a result is only what the flow sets"
            )));
        }
    }
    Ok(())
}

/// The results a flow reported that the task records: the names in `wanted` only, values cut at
/// [`RESULT_VALUE_CHARS`] characters. Empty values count as not set.
pub fn kept_results<'a>(
    reported: impl IntoIterator<Item = (&'a str, &'a str)>,
    wanted: &[String],
) -> Results {
    reported
        .into_iter()
        .filter(|(name, value)| !value.is_empty() && wanted.iter().any(|w| w == name))
        .map(|(name, value)| (name.to_owned(), cut_result_value(value).to_owned()))
        .collect()
}

/// A result's value as recorded: its first [`RESULT_VALUE_CHARS`] characters.
pub fn cut_result_value(value: &str) -> &str {
    match value.char_indices().nth(RESULT_VALUE_CHARS) {
        Some((at, _)) => &value[..at],
        None => value,
    }
}

/// How many of a result's most common values `GET /api/task/{id}/results` names (D22).
pub const SHOWN_RESULT_VALUES: usize = 50;

/// One result name's counters in a task, as stored (D22): the values kept with their counts,
/// the answered contacts whose value was not kept (past the store's cap of distinct values),
/// and the answered contacts that set the name at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResultTally {
    pub kept: Vec<(String, u64)>,
    pub other: u64,
    pub set: u64,
}

impl ResultTally {
    /// The name's view among `answered` answered contacts: its [`SHOWN_RESULT_VALUES`] most
    /// common values (ties in value order), the rest counted in `otherCount`, and the answered
    /// contacts that did not set it in `missingCount`.
    pub fn view(mut self, name: &str, answered: u64) -> ResultAttribute {
        self.kept.retain(|(_, count)| *count > 0);
        self.kept
            .sort_by(|(a, a_count), (b, b_count)| b_count.cmp(a_count).then_with(|| a.cmp(b)));
        let rest: u64 = self
            .kept
            .iter()
            .skip(SHOWN_RESULT_VALUES)
            .map(|(_, count)| count)
            .sum();
        self.kept.truncate(SHOWN_RESULT_VALUES);
        ResultAttribute {
            name: name.to_owned(),
            values: self
                .kept
                .into_iter()
                .map(|(value, count)| ResultValue { value, count })
                .collect(),
            other_count: rest + self.other,
            missing_count: answered.saturating_sub(self.set),
        }
    }
}

/// `GET /api/task/{id}/results` (D22): what the flows of the task's answered calls reported,
/// over each contact's latest answered attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskResults {
    /// One entry per result attribute of the task, in the task's order.
    pub attributes: Vec<ResultAttribute>,
}

/// One result attribute's values among the task's answered contacts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResultAttribute {
    #[cfg_attr(feature = "openapi", schema(example = "outcome"))]
    pub name: String,
    /// The 50 most common values, most common first (ties in value order).
    pub values: Vec<ResultValue>,
    /// Answered contacts that set a value not listed in `values`.
    pub other_count: u64,
    /// Answered contacts that did not set it.
    pub missing_count: u64,
}

/// A value and the answered contacts that set it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResultValue {
    #[cfg_attr(feature = "openapi", schema(example = "confirmed"))]
    pub value: String,
    pub count: u64,
}

/// `name=value;name=value` (the contact field `simulatedResults`): the pairs in order, blank
/// entries and entries without `=` left out.
pub fn parse_simulated_results(raw: &str) -> Vec<(&str, &str)> {
    raw.split(';')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, value)| (name.trim(), value.trim()))
        .filter(|(name, _)| !name.is_empty())
        .collect()
}

/// What a task's calls are placed with (D22, D28), resolved once per dial run from the task's
/// choices and the tenant's numbers and flows. Publish fixes a task's choices (its own, else the
/// tenant's defaults then), so a later change of a default never reaches a running task. A
/// number or flow the tenant no longer holds withholds the task's calls rather than falling
/// back; the deployment's own number and flow serve only a task that has none, and only where
/// the deployment allows it (`TELEPHONY_FALLBACK`).
#[derive(Clone, Debug)]
pub struct CallSetup {
    caller: Caller,
    flow: Result<Option<String>, Withheld>,
}

#[derive(Clone, Debug)]
enum Caller {
    /// One number for every call; `None`: the deployment's.
    Fixed(Result<Option<String>, Withheld>),
    /// Per call, the tenant's number nearest the called party, else `otherwise`.
    Local {
        numbers: NumberMap,
        otherwise: Result<Option<String>, Withheld>,
    },
}

/// Why a task's calls may not be placed (D28): the number or flow it was published with is no
/// longer its tenant's, or it has none and the deployment's own may not be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Withheld {
    CallerId,
    ContactFlow,
}

impl Withheld {
    /// The task's `failReason`: fixed text that names no number.
    pub fn fail_reason(self) -> &'static str {
        match self {
            Withheld::CallerId => {
                "The caller ID this task was published with is no longer assigned to its tenant \
                 (or it has none and the deployment's own may not be used): no call goes out \
                 from a number that is not the tenant's."
            }
            Withheld::ContactFlow => {
                "The contact flow this task was published with is no longer assigned to its \
                 tenant (or it has none and the deployment's own may not be used)."
            }
        }
    }
}

impl CallSetup {
    /// The caller ID: the task's number (fixed at publish), or local presence over the tenant's
    /// numbers; a task without one (published before defaults were fixed, or with none set) the
    /// tenant's `defaultCallerId`, else the deployment's where `fallback` allows it. The flow
    /// likewise.
    pub fn new(task: &DialSettings, tenant: &TenantSettings, fallback: bool) -> Self {
        let held = |number: &String| tenant.caller_ids.contains(number);
        let deployment = |withheld| if fallback { Ok(None) } else { Err(withheld) };
        let default = match tenant.default_caller_id.clone().filter(held) {
            Some(number) => Ok(Some(number)),
            None => deployment(Withheld::CallerId),
        };
        let caller = match &task.caller_id {
            Some(CallerIdChoice::Number(number)) if held(number) => {
                Caller::Fixed(Ok(Some(number.clone())))
            }
            Some(CallerIdChoice::Number(_)) => Caller::Fixed(Err(Withheld::CallerId)),
            Some(CallerIdChoice::LocalPresence) => Caller::Local {
                numbers: NumberMap::new(&tenant.caller_ids),
                otherwise: default,
            },
            None => Caller::Fixed(default),
        };
        let flow = match &task.contact_flow_id {
            Some(id) if tenant.holds_flow(id) => Ok(Some(id.clone())),
            Some(_) => Err(Withheld::ContactFlow),
            None => match tenant
                .default_contact_flow_id
                .clone()
                .filter(|id| tenant.holds_flow(id))
            {
                Some(id) => Ok(Some(id)),
                None => deployment(Withheld::ContactFlow),
            },
        };
        CallSetup { caller, flow }
    }

    /// The number a call to `to` (E.164, when it has one) goes out from; `None`: the
    /// deployment's.
    pub fn caller_id(&self, to: Option<&str>) -> Result<Option<&str>, Withheld> {
        match &self.caller {
            Caller::Fixed(number) => number.as_ref().map(Option::as_deref).map_err(|w| *w),
            Caller::Local { numbers, otherwise } => match to.and_then(|to| numbers.pick(to)) {
                Some(number) => Ok(Some(number)),
                None => otherwise.as_ref().map(Option::as_deref).map_err(|w| *w),
            },
        }
    }

    /// The flow every call of the task runs; `None`: the deployment's.
    pub fn contact_flow_id(&self) -> Result<Option<&str>, Withheld> {
        self.flow.as_ref().map(Option::as_deref).map_err(|w| *w)
    }
}

/// The caller ID and flow a task is published with (D28): its own, else the tenant's defaults
/// as they are now (each only while the tenant holds it); `None` where neither is set.
pub fn fixed_at_publish(
    task: &DialSettings,
    tenant: &TenantSettings,
) -> (Option<CallerIdChoice>, Option<String>) {
    let caller = task.caller_id.clone().or_else(|| {
        tenant
            .default_caller_id
            .clone()
            .filter(|number| tenant.caller_ids.contains(number))
            .map(CallerIdChoice::Number)
    });
    let flow = task.contact_flow_id.clone().or_else(|| {
        tenant
            .default_contact_flow_id
            .clone()
            .filter(|id| tenant.holds_flow(id))
    });
    (caller, flow)
}

/// The most UTF-8 bytes the results named `names` can add to a call's attributes when its flow
/// sets them: each name and a value of [`RESULT_VALUE_CHARS`] characters of four bytes.
pub fn results_room(names: &[String]) -> usize {
    names
        .iter()
        .map(|name| name.len() + RESULT_VALUE_CHARS * 4)
        .sum()
}

/// The tenant's numbers by where they are, for local presence (D22): built once per dial run, a
/// lookup per call.
#[derive(Clone, Debug, Default)]
pub struct NumberMap {
    by_area: std::collections::HashMap<(String, u64), String>,
    by_country: std::collections::HashMap<String, String>,
}

impl NumberMap {
    /// The tenant's `numbers` (E.164), each under its country and, in the North American
    /// Numbering Plan, its area code; the first listed wins a place two share.
    pub fn new(numbers: &[String]) -> Self {
        let mut map = NumberMap::default();
        for number in numbers {
            let Some((country, area)) = place_of(number) else {
                continue;
            };
            if let Some(area) = area {
                map.by_area
                    .entry((country.clone(), area))
                    .or_insert_with(|| number.clone());
            }
            map.by_country
                .entry(country)
                .or_insert_with(|| number.clone());
        }
        map
    }

    /// The number that shares `to`'s country and area code, else its country; `None` when the
    /// tenant has no number in its country (the task's default applies).
    pub fn pick(&self, to: &str) -> Option<&str> {
        let (country, area) = place_of(to)?;
        area.and_then(|area| self.by_area.get(&(country.clone(), area)))
            .or_else(|| self.by_country.get(&country))
            .map(String::as_str)
    }
}

/// A number's country (ISO alpha-2, from libphonenumber's metadata) and, for a number of the
/// North American Numbering Plan (calling code 1), its area code.
fn place_of(e164: &str) -> Option<(String, Option<u64>)> {
    let number = phonenumber::parse(None, e164).ok()?;
    let country = number.country().id()?;
    let national = number.national().value();
    let area =
        (number.code().value() == 1 && national >= 1_000_000_000).then_some(national / 10_000_000);
    Some((country.as_ref().to_owned(), area))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_only_the_wanted_names_and_cut_long_values() {
        let long = "é".repeat(300);
        let reported = [
            ("outcome", "confirmed"),
            ("note", long.as_str()),
            ("other", "x"),
            ("empty", ""),
        ];
        let wanted = ["outcome".to_owned(), "note".to_owned(), "empty".to_owned()];
        let kept = kept_results(reported, &wanted);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept["outcome"], "confirmed");
        assert_eq!(kept["note"].chars().count(), RESULT_VALUE_CHARS);
    }

    #[test]
    fn a_results_view_names_the_most_common_values_and_counts_the_rest() {
        let mut kept: Vec<(String, u64)> = (0..60).map(|n| (format!("v{n:02}"), 1)).collect();
        kept.push(("top".into(), 5));
        kept.push(("b".into(), 2));
        kept.push(("a".into(), 2));
        kept.push(("gone".into(), 0));
        let tally = ResultTally {
            kept,
            other: 3,
            set: 70,
        };
        let view = tally.view("outcome", 75);
        assert_eq!(view.values.len(), SHOWN_RESULT_VALUES);
        let first: Vec<(&str, u64)> = view.values[..4]
            .iter()
            .map(|v| (v.value.as_str(), v.count))
            .collect();
        assert_eq!(first, [("top", 5), ("a", 2), ("b", 2), ("v00", 1)]);
        assert_eq!(view.values[49].value, "v46");
        // v47..v59 (13 of 1 each) beyond the 50 shown, and 3 never kept.
        assert_eq!((view.other_count, view.missing_count), (16, 5));
    }

    #[test]
    fn result_names_are_short_words_and_never_the_services_own() {
        assert!(check_result_name("r", "wants_callback_2").is_ok());
        for bad in ["", "has space", "dash-ed", &"x".repeat(33)] {
            assert!(check_result_name("r", bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            check_result_name("resultAttributes[0]", "taskId")
                .unwrap_err()
                .to_string(),
            "resultAttributes[0] 'taskId' is one of the service's own attributes (tenant, taskId, contactId, attempt, signature)"
        );
    }

    #[test]
    fn simulated_results_read_as_pairs() {
        assert_eq!(
            parse_simulated_results("outcome=confirmed; amount = 12.50;;junk;=x"),
            [("outcome", "confirmed"), ("amount", "12.50")]
        );
    }

    fn refusal(numbers: &[&str], flows: &[(&str, &str)]) -> String {
        let numbers: Vec<String> = numbers.iter().map(|n| (*n).to_owned()).collect();
        let flows: Vec<(String, String)> = flows
            .iter()
            .map(|(id, name)| ((*id).to_owned(), (*name).to_owned()))
            .collect();
        Assignment::new(&numbers, &flows).unwrap_err().to_string()
    }

    #[test]
    fn an_assignment_holds_valid_e164_numbers_and_flows_each_once() {
        let assignment = Assignment::new(
            &["+12125550100".to_owned(), "+447400123456".to_owned()],
            &[("reminder".to_owned(), " Order reminder ".to_owned())],
        )
        .unwrap();
        assert_eq!(assignment.caller_ids, ["+12125550100", "+447400123456"]);
        assert_eq!(assignment.contact_flows[0].name, "Order reminder");
        for (bad, why) in [
            ("12125550100", "no +"),
            ("+1 212 555 0100", "separators"),
            ("+1212555010", "too short for the US"),
            ("+440207123456", "a trunk 0 inside"),
            ("tel:+12125550100", "not a number"),
        ] {
            assert_eq!(
                refusal(&["+12125550100", bad], &[]),
                "callerIds[1] must be a valid phone number in E.164, e.g. +12125550100",
                "{why}"
            );
        }
        assert_eq!(
            refusal(&["+12125550100", "+13125550100", "+12125550100"], &[]),
            "callerIds[2] +12125550100 is listed twice"
        );
        assert_eq!(
            refusal(&[], &[("a", "A"), ("b", "B"), ("a", "Again")]),
            "contactFlows[2].id a is listed twice"
        );
        assert_eq!(
            refusal(&[], &[("a", "A"), ("bad id", "B")]),
            "contactFlows[1].id must be 1-128 letters, digits, '-' or '_'"
        );
        let many: Vec<String> = (0..101).map(|n| format!("+1212555{n:04}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            refusal(&many, &[]),
            "callerIds may hold at most 100 numbers"
        );
        let flows: Vec<(String, String)> = (0..51).map(|n| (format!("f{n}"), "F".into())).collect();
        assert_eq!(
            Assignment::new(&[], &flows).unwrap_err().to_string(),
            "contactFlows may hold at most 50 flows"
        );
    }

    #[test]
    fn a_change_lists_what_is_gained_and_lost_and_the_defaults_it_clears() {
        let flow = |id: &str| ContactFlow::new("f", id, id).unwrap();
        let before = TenantSettings {
            caller_ids: vec!["+12125550100".into(), "+13125550100".into()],
            contact_flows: vec![flow("a"), flow("b")],
            default_caller_id: Some("+13125550100".into()),
            default_contact_flow_id: Some("a".into()),
            queues: vec![AgentQueue::new("q", "q1", "Sales").unwrap()],
            ..TenantSettings::default()
        };
        let next = Assignment {
            caller_ids: vec!["+12125550100".into(), "+14155550100".into()],
            contact_flows: vec![flow("a"), flow("c")],
            queues: Some(Vec::new()),
        };
        let change = next.change_from(&before);
        assert_eq!(
            change,
            AssignmentChange {
                numbers_added: vec!["+14155550100".into()],
                numbers_removed: vec!["+13125550100".into()],
                flows_added: vec!["c".into()],
                flows_removed: vec!["b".into()],
                queues_removed: vec!["q1".into()],
                clears_default_caller_id: true,
                clears_default_contact_flow_id: false,
            }
        );
        assert_eq!(change.cleared_defaults(), ["defaultCallerId"]);
        // Queues not sent are kept (D30).
        let keeping = Assignment {
            queues: None,
            ..next.clone()
        };
        assert!(keeping.change_from(&before).queues_removed.is_empty());
        assert_eq!(
            Assignment::with_queues(
                &[],
                &[],
                &[("q1".into(), "A".into()), ("q1".into(), "B".into())]
            )
            .unwrap_err()
            .to_string(),
            "queues[1].id q1 is listed twice"
        );
        assert_eq!(
            Assignment::default()
                .change_from(&before)
                .cleared_defaults(),
            ["defaultCallerId", "defaultContactFlowId"]
        );
    }

    #[test]
    fn caller_id_choice_reads_local_presence_and_numbers() {
        assert_eq!(
            CallerIdChoice::from("LOCAL_PRESENCE".to_owned()),
            CallerIdChoice::LocalPresence
        );
        assert_eq!(
            CallerIdChoice::from("+12125550100".to_owned()).as_str(),
            "+12125550100"
        );
        assert_eq!(
            Voicemail::parse("voicemail", "BEEP")
                .unwrap_err()
                .to_string(),
            "voicemail must be HANG_UP or LEAVE_MESSAGE"
        );
    }

    fn tenant(numbers: &[&str], default: Option<&str>, flows: &[&str]) -> TenantSettings {
        TenantSettings {
            caller_ids: numbers.iter().map(|n| (*n).to_owned()).collect(),
            default_caller_id: default.map(str::to_owned),
            contact_flows: flows
                .iter()
                .map(|id| ContactFlow::new("f", id, id).unwrap())
                .collect(),
            ..TenantSettings::default()
        }
    }

    fn task(caller: Option<&str>, flow: Option<&str>) -> DialSettings {
        DialSettings {
            caller_id: caller.map(|c| CallerIdChoice::from(c.to_owned())),
            contact_flow_id: flow.map(str::to_owned),
            ..DialSettings::default()
        }
    }

    #[test]
    fn a_call_uses_the_tasks_choice_then_the_tenants_default_then_the_deployments() {
        let acme = tenant(
            &["+12125550100", "+13125550100"],
            Some("+13125550100"),
            &["reminder", "survey"],
        );
        let fixed = CallSetup::new(&task(Some("+12125550100"), Some("survey")), &acme, true);
        assert_eq!(
            fixed.caller_id(Some("+33612345678")),
            Ok(Some("+12125550100"))
        );
        assert_eq!(fixed.contact_flow_id(), Ok(Some("survey")));
        let unset = CallSetup::new(&task(None, None), &acme, true);
        assert_eq!(unset.caller_id(None), Ok(Some("+13125550100")));
        assert_eq!(
            unset.contact_flow_id(),
            Ok(None),
            "no default flow: the deployment's"
        );
        // A number or flow the tenant no longer holds withholds the calls (D28), never falls back.
        let stale = CallSetup::new(&task(Some("+14155550100"), Some("gone")), &acme, true);
        assert_eq!(stale.caller_id(None), Err(Withheld::CallerId));
        assert_eq!(stale.contact_flow_id(), Err(Withheld::ContactFlow));
        let mut lost_default = acme.clone();
        lost_default.default_caller_id = Some("+14155550100".into());
        lost_default.default_contact_flow_id = Some("reminder".into());
        let unset = CallSetup::new(&task(None, None), &lost_default, true);
        assert_eq!(
            unset.caller_id(None),
            Ok(None),
            "never a number the tenant lacks"
        );
        assert_eq!(unset.contact_flow_id(), Ok(Some("reminder")));
        // With the fallback off, the deployment's own are never used.
        let strict = CallSetup::new(&task(None, None), &TenantSettings::default(), false);
        assert_eq!(strict.caller_id(None), Err(Withheld::CallerId));
        assert_eq!(strict.contact_flow_id(), Err(Withheld::ContactFlow));
        // Publish fixes the tenant's defaults onto a task that names none.
        assert_eq!(
            fixed_at_publish(&task(None, None), &acme),
            (Some(CallerIdChoice::Number("+13125550100".into())), None)
        );
        assert_eq!(
            fixed_at_publish(&task(Some(LOCAL_PRESENCE), Some("survey")), &acme),
            (Some(CallerIdChoice::LocalPresence), Some("survey".into()))
        );
    }

    #[test]
    fn local_presence_falls_back_to_the_tasks_default() {
        let acme = tenant(&["+12125550100"], Some("+12125550100"), &[]);
        let mut with_london = acme.clone();
        with_london.caller_ids.push("+442071234567".into());
        let local = CallSetup::new(&task(Some(LOCAL_PRESENCE), None), &with_london, true);
        assert_eq!(
            local.caller_id(Some("+447400123456")),
            Ok(Some("+442071234567"))
        );
        assert_eq!(
            local.caller_id(Some("+33612345678")),
            Ok(Some("+12125550100"))
        );
        assert_eq!(
            local.caller_id(None),
            Ok(Some("+12125550100")),
            "no E.164 form"
        );
        let no_default = tenant(&["+12125550100"], None, &[]);
        let local = CallSetup::new(&task(Some(LOCAL_PRESENCE), None), &no_default, true);
        assert_eq!(local.caller_id(Some("+33612345678")), Ok(None));
        assert_eq!(results_room(&["outcome".into()]), 7 + 1024);
    }

    #[test]
    fn local_presence_prefers_the_area_code_then_the_country() {
        let numbers = [
            "+12125550100".to_owned(),  // New York 212
            "+13125550100".to_owned(),  // Chicago 312
            "+14165550100".to_owned(),  // Toronto, CA
            "+442071234567".to_owned(), // London
        ];
        let map = NumberMap::new(&numbers);
        assert_eq!(map.pick("+12125550199"), Some("+12125550100"));
        assert_eq!(map.pick("+13125550199"), Some("+13125550100"));
        assert_eq!(
            map.pick("+16175550199"),
            Some("+12125550100"),
            "Boston: no 617 number, the first US one"
        );
        assert_eq!(
            map.pick("+16045550199"),
            Some("+14165550100"),
            "Vancouver: Canada"
        );
        assert_eq!(map.pick("+447400123456"), Some("+442071234567"));
        assert_eq!(map.pick("+33612345678"), None, "no French number");
        assert_eq!(map.pick("not a number"), None);
    }
}
