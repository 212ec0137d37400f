//! One call's life in types (D13): what became of it ([`Outcome`], [`CallReport`]), which
//! contacts a run may claim ([`Fresh`], [`Due`]), what the claim remembers for the outcome
//! ([`CallRef`]), and what an outcome makes of the contact's state ([`after_outcome`]). The
//! engine, the providers and the store all speak them; none of them owns them.

use super::telephony::{kept_results, Results, Voicemail};
use super::{Id, Tenant, Timestamp};
use crate::simulation::{planted, Bug};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The outcome classes of D13, stored and shown as the contact status codes of D7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(into = "u8", try_from = "u8")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    /// The called party answered (a person).
    Success = 1,
    /// Busy, invalid or unreachable number, network or provider error, or no outcome at all.
    Failed = 2,
    /// Rang out or timed out, or reached voicemail or an answering machine.
    NoAnswer = 3,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Success, Outcome::Failed, Outcome::NoAnswer];

    /// The outcome's code in the API and its exports (D13): 1, 2 or 3.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The outcome's name in events (D20), metrics and logs.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

impl From<Outcome> for u8 {
    fn from(outcome: Outcome) -> u8 {
        outcome.code()
    }
}

impl TryFrom<u8> for Outcome {
    type Error = String;
    fn try_from(code: u8) -> Result<Self, Self::Error> {
        Outcome::ALL
            .into_iter()
            .find(|outcome| outcome.code() == code)
            .ok_or_else(|| format!("{code} is not a call outcome"))
    }
}

/// Why an attempt ended as it did (D18): recorded per attempt, counted per task, matched by
/// retry rules. The outcome class of D13 follows from it.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum Reason {
    /// A person answered (success).
    Answered,
    /// Rang out, timed out or cancelled unanswered.
    NoAnswer,
    /// An answering machine or voicemail answered: no answer (D13).
    Voicemail,
    /// A person answered and no agent took the call within 2 s (D30): no answer, retried like
    /// one.
    Abandoned,
    Busy,
    /// The number can never be reached: final at once.
    InvalidNumber,
    /// A network, carrier or provider error.
    Error,
    /// The outcome never arrived (D13).
    NoOutcome,
}

impl Reason {
    pub const ALL: [Reason; 8] = [
        Reason::Answered,
        Reason::NoAnswer,
        Reason::Voicemail,
        Reason::Abandoned,
        Reason::Busy,
        Reason::InvalidNumber,
        Reason::Error,
        Reason::NoOutcome,
    ];

    /// The reason's name, as serde spells it (`NO_ANSWER`).
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn parse(raw: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.name() == raw.trim())
    }

    /// The reasons a retry rule may name (D18): those that leave attempts to make.
    pub fn retryable(self) -> bool {
        !matches!(self, Reason::Answered | Reason::InvalidNumber)
    }

    /// The names of the [retryable](Self::retryable) reasons, in order.
    pub fn retryable_names() -> Vec<&'static str> {
        Reason::ALL
            .into_iter()
            .filter(|reason| reason.retryable())
            .map(Reason::name)
            .collect()
    }

    /// The outcome a call that ended for this reason has (D13): a voicemail is no answer, a busy
    /// line, an unreachable number or an error is failed.
    pub fn outcome(self) -> Outcome {
        match self {
            Reason::Answered => Outcome::Success,
            Reason::NoAnswer | Reason::Voicemail | Reason::Abandoned => Outcome::NoAnswer,
            Reason::Busy | Reason::InvalidNumber | Reason::Error | Reason::NoOutcome => {
                Outcome::Failed
            }
        }
    }

    /// A report of a call that ended for this reason, lasting `duration` seconds if answered:
    /// what the simulated provider sends, its detail the reason's own name.
    pub fn report(self, duration: u64) -> CallReport {
        CallReport {
            reason: self,
            duration: if self == Reason::Answered {
                duration
            } else {
                0
            },
            detail: self.name().to_owned(),
            results: Results::new(),
        }
    }
}

/// The schema of the reasons a retry rule may name (D18), the [retryable](Reason::retryable)
/// ones: a [`Reason`] in Rust, a schema of its own in the contract.
#[cfg(feature = "openapi")]
pub struct RetryableReason;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for RetryableReason {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::schema::named(
            "A reason a retry rule may name (D18): one after which attempts are left to make.",
            Reason::retryable_names(),
        )
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for RetryableReason {}

/// Why a contact was not called when its turn came (D18): never an attempt.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum Skip {
    /// Its number is on the tenant's do-not-call list (D16): final.
    Dnc,
    /// Its number has no E.164 form (not a valid number, or written without `+` with no
    /// country to read it in, D14): no provider is ever given it. Final.
    InvalidNumber,
    /// Its daily window is closed in its local time (D15): it waits for the opening.
    OutsideWindow,
    /// The tenant's calling hours are closed in its local time (D15): it waits.
    CallingHours,
    /// Its number reached the tenant's frequency cap (D17): it waits.
    FrequencyCap,
    /// Without a `timeZone` of its own, the zones of its number never share an open minute of
    /// the task's window and the calling hours (D24): final.
    NoCommonWindow,
    /// The fields the task sends its flow do not fit the provider's bound on a call's
    /// attributes (Amazon Connect: 32,768 UTF-8 bytes in all, D22): final.
    AttributesTooLarge,
    /// It does not match the task's filter (D31): final, never dialled.
    Filtered,
}

impl Skip {
    pub const ALL: [Skip; 8] = [
        Skip::Dnc,
        Skip::InvalidNumber,
        Skip::OutsideWindow,
        Skip::CallingHours,
        Skip::FrequencyCap,
        Skip::NoCommonWindow,
        Skip::AttributesTooLarge,
        Skip::Filtered,
    ];

    /// The skip's name, as serde spells it (`FREQUENCY_CAP`).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Final for the task (D18): the contact is never called by it, and counts as final for
    /// completion (D13).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Skip::Dnc
                | Skip::InvalidNumber
                | Skip::NoCommonWindow
                | Skip::AttributesTooLarge
                | Skip::Filtered
        )
    }
}

/// What became of one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallReport {
    /// Why the call ended, in the service's words (D18): each provider maps its own codes to
    /// one (Amazon Connect's in its adapter); the outcome follows from it ([`Reason::outcome`]).
    pub reason: Reason,
    /// Seconds from answer to hang-up; 0 for a call never answered (D13).
    pub duration: u64,
    /// The provider's own words for it (`TELECOM_NUMBER_INVALID`, `no outcome`, ...), for the
    /// log only: nothing is decided by it.
    #[serde(default)]
    pub detail: String,
    /// What the call's flow reported, as the provider told it (the simulated provider's
    /// `simulatedResults`); the flow's results in Amazon Connect come on the call record
    /// instead ([`CallRef::results`]). Only the task's `resultAttributes` are kept (D22).
    #[serde(default, skip_serializing_if = "Results::is_empty")]
    pub results: Results,
}

impl CallReport {
    /// A call whose outcome never arrived (D13: failed, "no outcome").
    pub fn no_outcome() -> Self {
        CallReport {
            detail: "no outcome".into(),
            ..Reason::NoOutcome.report(0)
        }
    }

    /// The call's outcome (D13), from its reason.
    pub fn outcome(&self) -> Outcome {
        self.reason.outcome()
    }

    /// Whether the number can never be reached: the outcome is final at once, not retried
    /// (D13).
    pub fn invalid_number(&self) -> bool {
        self.reason == Reason::InvalidNumber
    }
}

/// What a dial run reads of a contact it may call: its number, the fields that steer its call
/// (D15's `timeZone`, D18's `simulatedOutcomes`, D22's `simulatedResults`), and its values of
/// the fields its task sends the call's flow (D22).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub phone: super::Phone,
    pub time_zone: Option<String>,
    pub script: Option<String>,
    /// The task's `callAttributes` the contact has (known and custom fields), by name; empty
    /// for a task that sends none.
    pub fields: BTreeMap<String, String>,
    pub simulated_results: Option<String>,
}

/// The contact field that scripts the simulated provider's reasons, one per attempt (D18).
pub const SCRIPT_FIELD: &str = "simulatedOutcomes";

/// Which attempt a call is, as the call itself carries it (Amazon Connect's contact attributes,
/// the simulated provider's outcome): enough to find the call's claim when its provider id was
/// never saved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallAttempt {
    pub tenant: Tenant,
    pub task_id: Id,
    pub contact_id: Id,
    pub attempt: u32,
}

impl CallAttempt {
    /// The attributes every call of the service carries, named by
    /// [`crate::telephony::OWN_ATTRIBUTES`]: what [`CallAttempt::from_attributes`] reads back.
    pub fn attributes(&self) -> [(String, String); 4] {
        let [tenant, task, contact, attempt] = crate::telephony::OWN_ATTRIBUTES;
        [
            (tenant.to_owned(), self.tenant.as_str().to_owned()),
            (task.to_owned(), self.task_id.as_str().to_owned()),
            (contact.to_owned(), self.contact_id.as_str().to_owned()),
            (attempt.to_owned(), self.attempt.to_string()),
        ]
    }

    /// The attempt named by a call's attributes (`tenant`, `taskId`, `contactId`, `attempt`);
    /// `None` when any is missing or malformed: not a call of this service.
    pub fn from_attributes(get: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let [tenant, task, contact, attempt] = crate::telephony::OWN_ATTRIBUTES;
        Some(CallAttempt {
            tenant: Tenant::parse(&get(tenant)?).ok()?,
            task_id: Id::parse(&get(task)?)?,
            contact_id: Id::parse(&get(contact)?)?,
            attempt: get(attempt)?.parse().ok().filter(|attempt| *attempt > 0)?,
        })
    }
}

/// Everything the outcome of one call needs, written when the call is placed (the call record)
/// and read back through the provider's call id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRef {
    pub tenant: Tenant,
    pub task_id: Id,
    pub data_source_id: Id,
    pub contact_id: Id,
    pub attempt: u32,
    pub call_interval: u32,
    /// The contact's state as the claim left it, so the outcome needs no read of it; the
    /// outcome's condition on `updated_at` notices a recall in between.
    pub allowance: u32,
    pub recalled: bool,
    pub priority: u8,
    pub claimed_at: Timestamp,
    /// The capacity shard the claim took its place in, where the outcome gives it back.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub shard: u32,
    /// The task's retry rules and `maxDialCount` when the call was claimed (D18).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RetryRule>,
    #[serde(default)]
    pub max_dial_count: u32,
    /// The number the call was placed from (D22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller_id: Option<String>,
    /// The task's `resultAttributes` when the call was claimed (D22).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub result_attributes: Vec<String>,
    /// The task's voicemail choice when the call was claimed (D22).
    #[serde(default, skip_serializing_if = "Voicemail::is_default")]
    pub voicemail: Voicemail,
    /// What the call's flow reported to the service during the call (Amazon Connect's flow
    /// invokes the flow-results function, which writes them here), read with the record when
    /// the call ends (D22).
    #[serde(default, skip_serializing_if = "Results::is_empty")]
    pub results: Results,
    /// The results of the contact's answered attempt before this call, when it had one (a
    /// recall may name an answered contact, D12), as the claim found them: an answer now
    /// replaces them in the task's result counters, so each contact counts once (D22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_results: Option<Results>,
    /// The attempt was in doubt and gave back its places in flight already (D28): its outcome
    /// gives none back. Read from the contact's state, never stored on the call record.
    #[serde(default, skip_serializing)]
    pub released: bool,
    /// Where the task keeps its counters ([`crate::Task::counters_apart`]), so the outcome
    /// writes them there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counters_apart: bool,
    /// The call reached an agent and is counted in its task's `talking` until its outcome
    /// (D30). Read from the contact's state, never stored on the call record.
    #[serde(default, skip_serializing)]
    pub with_agent: bool,
    /// The call record this was read from, and how many flow reports it held then (D29): the
    /// outcome marks the record recorded on the condition that no report came since, so a
    /// value the flow sets is counted or refused, never dropped. `None`: no record was read.
    #[serde(skip)]
    pub record: Option<RecordRead>,
    /// The callback this call makes (D31), its record's id: the task's retry rules do not hold
    /// for it, and its outcome settles the callback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback: Option<Id>,
    /// Callbacks set for the contact in the task when the call was claimed (D31): its flow may
    /// ask for another only below the most.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub callbacks: u8,
}

/// A call record as the outcome read it (D29).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordRead {
    /// The provider's id of the call, the record's key.
    pub call_id: String,
    /// The flow reports written on it (`flow_writes`).
    pub flow_writes: u64,
}

/// What an outcome records of what its call learnt (D22), on the attempt, in its event and in
/// the task's result counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Learnt {
    /// The task's `resultAttributes` the flow set on an answered call (empty otherwise).
    pub results: Results,
    /// The number the call was placed from.
    pub caller_id: Option<String>,
    /// The call reached voicemail and the task leaves a message there.
    pub message_left: bool,
}

impl CallRef {
    /// Which attempt this call is.
    pub fn attempt_ref(&self) -> CallAttempt {
        CallAttempt {
            tenant: self.tenant.clone(),
            task_id: self.task_id.clone(),
            contact_id: self.contact_id.clone(),
            attempt: self.attempt,
        }
    }

    /// What the call that ended with `report` learnt: for an answered call, the task's result
    /// attributes among what the flow reported during the call and what the provider reported
    /// at its end (the latter wins a name both set), values cut at 256 characters.
    pub fn learnt(&self, report: &CallReport) -> Learnt {
        let results = if report.outcome() == Outcome::Success {
            let reported = self.results.iter().chain(&report.results);
            kept_results(
                reported.map(|(name, value)| (name.as_str(), value.as_str())),
                &self.result_attributes,
            )
        } else {
            Results::new()
        };
        Learnt {
            results,
            caller_id: self.caller_id.clone(),
            message_left: report.reason == Reason::Voicemail
                && self.voicemail == Voicemail::LeaveMessage,
        }
    }

    /// The callback the flow of this answered call asked for (D31), whether or not the task
    /// keeps `callbackAt` or `callbackInMinutes` among its results: `callbackAt` (RFC 3339) or
    /// `callbackInMinutes` (1-43,200) after `ended_at`, the provider's report winning a name
    /// both set, `callbackAt` winning over the minutes. A time not after the call's end (a flow
    /// repeating a time already past), one more than 30 days ahead, or a value that does not
    /// read, asks for nothing.
    pub fn asked_callback(&self, report: &CallReport, ended_at: Timestamp) -> Option<Timestamp> {
        use crate::callback::{
            CALLBACK_AT_RESULT, CALLBACK_IN_MINUTES_RESULT, MAX_AHEAD_MILLIS, MAX_FLOW_MINUTES,
        };
        if report.outcome() != Outcome::Success {
            return None;
        }
        let value = |name: &str| report.results.get(name).or_else(|| self.results.get(name));
        let at = match (value(CALLBACK_AT_RESULT), value(CALLBACK_IN_MINUTES_RESULT)) {
            (Some(at), _) => Timestamp::parse_rfc3339(CALLBACK_AT_RESULT, at).ok()?,
            (None, Some(minutes)) => {
                let minutes = minutes.trim().parse::<i64>().ok()?;
                if !(1..=MAX_FLOW_MINUTES).contains(&minutes) {
                    return None;
                }
                Timestamp(ended_at.0 + minutes * 60_000)
            }
            (None, None) => return None,
        };
        (at.0 > ended_at.0 && at.0 <= ended_at.0 + MAX_AHEAD_MILLIS).then_some(at)
    }

    /// What an outcome ended at `ended_at` makes of the contact's state (D13, D18).
    pub fn after(&self, report: &CallReport, ended_at: Timestamp) -> AfterOutcome {
        if let Some(at) = self
            .asked_callback(report, ended_at)
            .filter(|_| self.callbacks < crate::callback::MAX_CALLBACKS)
        {
            let early = crate::simulation::planted(crate::simulation::Bug::FlowCallbackEarly);
            return AfterOutcome {
                attempts: self.attempt,
                done: false,
                next_attempt_at: Some(if early { ended_at } else { at }),
                callback: true,
            };
        }
        if self.callback.is_some() {
            // A callback not answered is tried once more after the task's interval (its
            // allowance holds two tries, D31), whatever the retry rules say.
            return after_outcome(
                self.attempt,
                self.allowance,
                report,
                self.call_interval,
                ended_at,
            );
        }
        let reason = report.reason;
        let rule = self.rules.iter().find(|rule| rule.reason == reason);
        // A rule's `maxAttempts` counts the attempts of the contact's latest grant (D12: a
        // recall grants `maxDialCount` more from where it stood).
        let granted_from = self.allowance.saturating_sub(self.max_dial_count);
        let ends = rule
            .and_then(|rule| rule.max_attempts)
            .is_some_and(|most| self.attempt.saturating_sub(granted_from) >= u32::from(most));
        let delay = rule
            .and_then(|rule| rule.delay_seconds)
            .unwrap_or(self.call_interval);
        let mut next = after_outcome(self.attempt, self.allowance, report, delay, ended_at);
        if ends && !next.done {
            next.done = true;
            next.next_attempt_at = None;
        }
        next
    }
}

/// A retry rule of a task (D18): after an attempt that ended for `reason`, wait `delay_seconds`
/// instead of the task's `callInterval`, and make no more attempts once `max_attempts` are made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RetryRule {
    #[cfg_attr(feature = "openapi", schema(value_type = RetryableReason))]
    pub reason: Reason,
    /// 10-604800.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_seconds: Option<u32>,
    /// 1 to the task's `maxDialCount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u8>,
}

/// What an outcome makes of a contact's state in the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AfterOutcome {
    /// Attempts made, this one included.
    pub attempts: u32,
    /// Final (D13): success, an invalid number, or the attempts reached the allowance.
    pub done: bool,
    /// When the next attempt may start, if there is one.
    pub next_attempt_at: Option<Timestamp>,
    /// A callback the call's flow asked for (D31), at `next_attempt_at`: the contact waits for
    /// it instead of being final.
    pub callback: bool,
}

/// The state after attempt `attempt` ended with `report` at `ended_at`.
pub fn after_outcome(
    attempt: u32,
    allowance: u32,
    report: &CallReport,
    call_interval_secs: u32,
    ended_at: Timestamp,
) -> AfterOutcome {
    let done = report.outcome() == Outcome::Success
        || report.invalid_number()
        || (attempt >= allowance && !planted(Bug::MaxDialIgnored));
    AfterOutcome {
        attempts: attempt,
        done,
        next_attempt_at: (!done)
            .then(|| Timestamp(ended_at.0 + i64::from(call_interval_secs) * 1000)),
        callback: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each name is the one serde reads and writes: the enum spells it once.
    #[test]
    fn names_are_serdes_names() {
        for reason in Reason::ALL {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.name());
            assert_eq!(Reason::parse(reason.name()), Some(reason));
        }
        for skip in Skip::ALL {
            assert_eq!(serde_json::to_value(skip).unwrap(), skip.name());
        }
        let names: Vec<&str> = Outcome::ALL.into_iter().map(Outcome::name).collect();
        assert_eq!(names, ["SUCCESS", "FAILED", "NO_ANSWER"]);
        assert_eq!(
            Reason::retryable_names(),
            [
                "NO_ANSWER",
                "VOICEMAIL",
                "ABANDONED",
                "BUSY",
                "ERROR",
                "NO_OUTCOME"
            ]
        );
    }

    #[test]
    fn each_reason_reads_back_from_the_report_made_for_it() {
        for reason in Reason::ALL {
            let report = reason.report(42);
            assert_eq!(report.reason, reason, "{report:?}");
            assert_eq!(
                report.duration,
                if reason == Reason::Answered { 42 } else { 0 }
            );
            assert_eq!(Reason::parse(reason.name()), Some(reason));
        }
        assert_eq!(Reason::parse("busy"), None);
    }

    fn call(attempt: u32, allowance: u32, rules: Vec<RetryRule>) -> CallRef {
        CallRef {
            tenant: Tenant::parse("acme").unwrap(),
            task_id: Id::new(),
            data_source_id: Id::new(),
            contact_id: Id::new(),
            attempt,
            call_interval: 60,
            allowance,
            recalled: false,
            priority: 3,
            claimed_at: Timestamp(0),
            shard: 0,
            rules,
            max_dial_count: 3,
            caller_id: None,
            result_attributes: Vec::new(),
            voicemail: Voicemail::HangUp,
            results: Results::new(),
            earlier_results: None,
            released: false,
            counters_apart: true,
            with_agent: false,
            record: None,
            callback: None,
            callbacks: 0,
        }
    }

    /// D31: the flow's callback, by time or by minutes, heard only on an answered call, within
    /// 30 days and after the call's end.
    #[test]
    fn a_flow_asks_for_a_callback_by_time_or_minutes() {
        let ended = Timestamp(1_700_000_000_000);
        let answered = |results: &[(&str, &str)]| {
            let mut report = Reason::Answered.report(30);
            report.results = results
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect();
            report
        };
        let reference = call(1, 3, Vec::new());
        let asked = |results: &[(&str, &str)]| reference.asked_callback(&answered(results), ended);
        assert_eq!(
            asked(&[("callbackInMinutes", "90")]),
            Some(Timestamp(ended.0 + 90 * 60_000))
        );
        assert_eq!(
            asked(&[
                ("callbackAt", "2023-11-15T06:13:20+08:00"),
                ("callbackInMinutes", "5")
            ]),
            None,
            "a time not after the end asks for nothing, and wins over the minutes"
        );
        let later = Timestamp(ended.0 + 3_600_000);
        assert_eq!(asked(&[("callbackAt", &later.rfc3339())]), Some(later));
        for bad in ["0", "43201", "soon"] {
            assert_eq!(asked(&[("callbackInMinutes", bad)]), None, "{bad}");
        }
        let far = Timestamp(ended.0 + 31 * 86_400_000).rfc3339();
        assert_eq!(asked(&[("callbackAt", &far)]), None);
        let unanswered = Reason::NoAnswer.report(0);
        assert_eq!(reference.asked_callback(&unanswered, ended), None);
    }

    #[test]
    fn an_answered_call_learns_the_tasks_results_and_a_voicemail_the_message_left() {
        let mut call = call(1, 3, Vec::new());
        call.result_attributes = vec!["outcome".into(), "amount".into()];
        call.caller_id = Some("+12125550100".into());
        call.results = [
            ("outcome".to_owned(), "pending".to_owned()),
            ("amount".to_owned(), "12.50".to_owned()),
        ]
        .into();
        let mut answered = Reason::Answered.report(30);
        answered.results = [
            ("outcome".to_owned(), "confirmed".to_owned()),
            ("note".to_owned(), "not wanted".to_owned()),
        ]
        .into();
        let learnt = call.learnt(&answered);
        assert_eq!(
            learnt.results,
            Results::from([
                ("amount".to_owned(), "12.50".to_owned()),
                ("outcome".to_owned(), "confirmed".to_owned())
            ]),
            "the provider's word at the end wins the flow's during the call"
        );
        assert_eq!(learnt.caller_id.as_deref(), Some("+12125550100"));
        assert!(!learnt.message_left);
        assert!(call.learnt(&Reason::NoAnswer.report(0)).results.is_empty());
        assert!(!call.learnt(&Reason::Voicemail.report(0)).message_left);
        call.voicemail = Voicemail::LeaveMessage;
        assert!(call.learnt(&Reason::Voicemail.report(0)).message_left);
        assert!(!call.learnt(&Reason::NoAnswer.report(0)).message_left);
    }

    #[test]
    fn a_rule_replaces_the_interval_and_ends_attempts_for_its_reason() {
        let rules = vec![
            RetryRule {
                reason: Reason::Busy,
                delay_seconds: Some(600),
                max_attempts: None,
            },
            RetryRule {
                reason: Reason::Voicemail,
                delay_seconds: None,
                max_attempts: Some(1),
            },
        ];
        let at = Timestamp(1_000);
        let busy = call(1, 3, rules.clone()).after(&Reason::Busy.report(0), at);
        assert_eq!(busy.next_attempt_at, Some(Timestamp(601_000)));
        let no_answer = call(1, 3, rules.clone()).after(&Reason::NoAnswer.report(0), at);
        assert_eq!(
            no_answer.next_attempt_at,
            Some(Timestamp(61_000)),
            "no rule: the interval"
        );
        let voicemail = call(1, 3, rules.clone()).after(&Reason::Voicemail.report(0), at);
        assert!(voicemail.done && voicemail.next_attempt_at.is_none());
        // After a recall (allowance 3 + 3), `maxAttempts` counts from the grant.
        let recalled = call(4, 6, rules).after(&Reason::Voicemail.report(0), at);
        assert!(recalled.done);
        let answered = call(1, 3, Vec::new()).after(&Reason::Answered.report(5), at);
        assert!(answered.done);
        let invalid = call(1, 3, Vec::new()).after(&Reason::InvalidNumber.report(0), at);
        assert!(invalid.done, "an invalid number is not retried");
    }
}
