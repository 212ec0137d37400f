//! A tenant's settings (D14): the country of numbers written without `+`, the calling hours
//! every task obeys in the called party's local time (D15), the frequency cap across tasks (D17),
//! and the caller ID and contact flow a task without its own uses, among the numbers and flows
//! the operator assigned the tenant (D22). Each is unset until set; `null` clears one.

use super::numbers::Country;
use super::telephony::{AgentQueue, ContactFlow};
use super::time_of_day::{ClockTime, DailyWindow};
use super::Timestamp;
use crate::error::Error;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// At most `max_calls` call attempts to one number within any `period_hours` (D17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FrequencyCap {
    /// 1-100.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 100))]
    pub max_calls: u32,
    /// 1-720.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 720))]
    pub period_hours: u32,
}

impl FrequencyCap {
    pub fn new(max_calls: i64, period_hours: i64) -> Result<Self, Error> {
        let max_calls = super::in_range("frequencyCap.maxCalls", max_calls, 1, 100)?;
        let period_hours = super::in_range(
            "frequencyCap.periodHours",
            period_hours,
            1,
            i64::from(Self::LONGEST_PERIOD_HOURS),
        )?;
        Ok(FrequencyCap {
            max_calls: max_calls as u32,
            period_hours: period_hours as u32,
        })
    }

    /// The longest period a cap may have (30 days).
    pub const LONGEST_PERIOD_HOURS: u32 = 720;

    /// The longest period, in milliseconds: how long a number's attempts must be kept, so a
    /// cap raised later still counts every attempt within its period.
    pub const fn longest_period_millis() -> i64 {
        Self::LONGEST_PERIOD_HOURS as i64 * 3_600_000
    }

    pub fn period_millis(&self) -> i64 {
        i64::from(self.period_hours) * 3_600_000
    }
}

/// A tenant's stored settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TenantSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_country: Option<Country>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calling_hours: Option<DailyWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_cap: Option<FrequencyCap>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Timestamp>,
    /// When a setting that moves a contact's window last changed: the calling hours or the
    /// default country (D24). Other changes (the cap, the defaults, the operator's assignment)
    /// leave parked contacts where they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_at: Option<Timestamp>,
    /// The numbers the operator assigned the tenant, in E.164 (D22).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caller_ids: Vec<String>,
    /// The contact flows the operator assigned the tenant (D22).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contact_flows: Vec<ContactFlow>,
    /// The agent queues the operator assigned the tenant (D30).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<AgentQueue>,
    /// One of `caller_ids`: what a task without its own calls from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_caller_id: Option<String>,
    /// One of `contact_flows`: what a task without its own plays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_contact_flow_id: Option<String>,
    /// Every listed number of the tenant has its claim's guard under a key of its own, apart
    /// from the tenant's partition (D16): claims check those. Set once the guards stored before
    /// are copied there; until then claims check the guards in the tenant's partition, which
    /// every add and delete keeps as well.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dial_guards: bool,
}

/// A change to one setting: absent keeps it, `null` clears it, a value sets it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Change<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

impl<T> Change<T> {
    pub fn apply(self, current: Option<T>) -> Option<T> {
        match self {
            Change::Keep => current,
            Change::Clear => None,
            Change::Set(value) => Some(value),
        }
    }
}

/// A settings update, every field checked but the defaults (D22), which must be among the
/// tenant's numbers and flows as stored when the update is written ([`SettingsChange::refused`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettingsChange {
    pub default_country: Change<Country>,
    pub calling_hours: Change<DailyWindow>,
    pub frequency_cap: Change<FrequencyCap>,
    /// One of the tenant's `caller_ids`.
    pub default_caller_id: Change<String>,
    /// The id of one of the tenant's `contact_flows`.
    pub default_contact_flow_id: Change<String>,
}

impl SettingsChange {
    pub fn is_empty(&self) -> bool {
        self == &SettingsChange::default()
    }

    /// Whether the change may move a contact's window (D24): its calling hours or the country
    /// its numbers are read in.
    pub fn moves_windows(&self) -> bool {
        !matches!(self.default_country, Change::Keep) || !matches!(self.calling_hours, Change::Keep)
    }

    /// Why the change cannot apply to `settings`: a default that is not one of the tenant's
    /// numbers or flows (400 naming it); `None` when it can.
    pub fn refused(&self, settings: &TenantSettings) -> Option<Error> {
        if let Change::Set(number) = &self.default_caller_id {
            if !settings.caller_ids.contains(number) {
                return Some(Error::invalid(format!(
                    "defaultCallerId {number} is not one of the tenant's callerIds"
                )));
            }
        }
        if let Change::Set(id) = &self.default_contact_flow_id {
            if !settings.holds_flow(id) {
                return Some(Error::invalid(format!(
                    "defaultContactFlowId {id} is not one of the tenant's contactFlows"
                )));
            }
        }
        None
    }

    /// The fields this change sets or clears, with their new values as the API shows them: what
    /// its `SettingsChanged` event says (D25).
    pub fn changed(&self) -> ChangedSettings {
        fn shown<T, V>(change: &Change<T>, show: impl Fn(&T) -> V) -> Option<Option<V>> {
            match change {
                Change::Keep => None,
                Change::Clear => Some(None),
                Change::Set(value) => Some(Some(show(value))),
            }
        }
        ChangedSettings {
            default_country: shown(&self.default_country, |c| c.as_str().to_owned()),
            calling_hours: shown(&self.calling_hours, HoursView::of),
            frequency_cap: shown(&self.frequency_cap, |cap| *cap),
            default_caller_id: shown(&self.default_caller_id, |_| true),
            default_contact_flow_id: shown(&self.default_contact_flow_id, String::clone),
        }
    }
}

impl TenantSettings {
    /// Whether flow `id` is one the operator assigned the tenant (D22).
    pub fn holds_flow(&self, id: &str) -> bool {
        self.contact_flows.iter().any(|flow| flow.id == id)
    }

    /// Whether `id` is one of the tenant's agent queues (D30).
    pub fn holds_queue(&self, id: &str) -> bool {
        self.queues.iter().any(|queue| queue.id == id)
    }

    /// The settings `change` leaves, written `at`.
    pub fn changed_by(self, change: &SettingsChange, at: Timestamp) -> TenantSettings {
        TenantSettings {
            default_country: change.default_country.clone().apply(self.default_country),
            calling_hours: change.calling_hours.clone().apply(self.calling_hours),
            frequency_cap: change.frequency_cap.clone().apply(self.frequency_cap),
            default_caller_id: change
                .default_caller_id
                .clone()
                .apply(self.default_caller_id),
            default_contact_flow_id: (change.default_contact_flow_id.clone())
                .apply(self.default_contact_flow_id),
            updated_at: Some(at),
            rules_at: if change.moves_windows() {
                Some(at)
            } else {
                self.rules_at
            },
            ..self
        }
    }
}

/// The settings fields a change set or cleared, each with its new value (`null`: cleared); the
/// fields it left alone are absent. The settings hold no personal data, so their values may be
/// told to every subscriber of the bus (D25).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangedSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_country: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calling_hours: Option<Option<HoursView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_cap: Option<Option<FrequencyCap>>,
    /// `true` when set: which number is not told, as no audit event names a number (D25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_caller_id: Option<Option<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_contact_flow_id: Option<Option<String>>,
}

/// Calling hours from `{"start":"HH:MM","end":"HH:MM"}`, start before end.
pub fn calling_hours(start: &str, end: &str) -> Result<DailyWindow, Error> {
    let start = ClockTime::parse("callingHours.start", start)?;
    let end = ClockTime::parse("callingHours.end", end)?;
    if start >= end {
        return Err(Error::invalid(
            "callingHours.start must be before callingHours.end",
        ));
    }
    Ok(DailyWindow { start, end })
}

impl TenantSettings {
    pub fn view(&self, zone: Tz) -> SettingsView {
        SettingsView {
            default_country: self.default_country.map(|c| c.as_str().to_owned()),
            calling_hours: self.calling_hours.as_ref().map(HoursView::of),
            frequency_cap: self.frequency_cap,
            update_time: self.updated_at.map(|at| at.display(zone)),
            caller_ids: self.caller_ids.clone(),
            contact_flows: self.contact_flows.clone(),
            queues: self.queues.clone(),
            default_caller_id: self.default_caller_id.clone(),
            default_contact_flow_id: self.default_contact_flow_id.clone(),
        }
    }
}

/// `{"start":"HH:MM","end":"HH:MM"}`: calls from `start` up to, not at, `end` (D24).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HoursView {
    #[cfg_attr(feature = "openapi", schema(example = "08:00"))]
    pub start: String,
    #[cfg_attr(feature = "openapi", schema(example = "21:00"))]
    pub end: String,
}

impl HoursView {
    pub fn of(hours: &DailyWindow) -> HoursView {
        HoursView {
            start: hours.start.to_string(),
            end: hours.end.to_string(),
        }
    }
}

/// The settings as the API shows them: unset fields are `null` (D14).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    /// ISO 3166-1 alpha-2: the country of numbers written without `+`.
    #[cfg_attr(feature = "openapi", schema(example = "US"))]
    pub default_country: Option<String>,
    /// A legal floor in the called party's local time that every task obeys (D15).
    pub calling_hours: Option<HoursView>,
    /// At most `maxCalls` attempts to one number within `periodHours`, across tasks (D17).
    pub frequency_cap: Option<FrequencyCap>,
    pub update_time: Option<String>,
    /// The numbers the operator assigned the tenant, in E.164 (D22); read-only here.
    #[cfg_attr(feature = "openapi", schema(example = json!(["+12125550100"])))]
    pub caller_ids: Vec<String>,
    /// The contact flows the operator assigned the tenant (D22); read-only here.
    pub contact_flows: Vec<ContactFlow>,
    /// The agent queues the operator assigned the tenant (D30); read-only here.
    pub queues: Vec<AgentQueue>,
    /// One of `callerIds`: what a task without its own calls from (D22).
    #[cfg_attr(feature = "openapi", schema(example = "+12125550100"))]
    pub default_caller_id: Option<String>,
    /// The id of one of `contactFlows`: what a task without its own plays (D22).
    pub default_contact_flow_id: Option<String>,
}
