//! Tasks (D9, D10): dialing settings that cannot hold invalid values, the state machine as a
//! pure table, and the statistics derived from the task's counters.

use super::call::{Reason, RetryRule, Skip};
use super::callback::PendingCallback;
use super::datasource::DataSource;
use super::filter::ContactFilter;
use super::in_range;
use super::pacing::{AgentPacing, DialingMode, ABANDONMENT_TARGET, CALLS_PER_AGENT};
use super::schedule::Schedule;
use super::settings::TenantSettings;
use super::telephony::{CallerIdChoice, Results, Voicemail};
use super::time_of_day::DailyWindow;
use super::{Description, Id, Name, Timestamp};
use crate::error::Error;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The states of a task (D10), stored and shown as their codes 0-6; each one's name
/// (`DRAFT`, ...) is its variant's, in messages and in the contract's `x-enum-varnames`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(into = "u8", try_from = "u8")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskStatus {
    Draft = 0,
    Running = 1,
    Paused = 2,
    Stopped = 3,
    Completed = 4,
    Failed = 5,
    Closed = 6,
}

/// The schema of a status: its code, each named (`0 DRAFT, 1 RUNNING, ...`, D10).
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for TaskStatus {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let codes = TaskStatus::ALL.map(|status| (status.code(), status.name()));
        let description = format!("{} (D10)", crate::schema::code_list(&codes));
        crate::schema::coded(description, &codes)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for TaskStatus {}

impl TaskStatus {
    pub const ALL: [TaskStatus; 7] = [
        TaskStatus::Draft,
        TaskStatus::Running,
        TaskStatus::Paused,
        TaskStatus::Stopped,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Closed,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    /// The state's name (`DRAFT`), from its variant.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Whether a task in this state holds its data source (D11: it cannot be deleted then).
    pub fn holds_data_source(self) -> bool {
        matches!(self, TaskStatus::Running | TaskStatus::Paused)
    }
}

impl From<TaskStatus> for u8 {
    fn from(status: TaskStatus) -> u8 {
        status.code()
    }
}

impl TryFrom<u8> for TaskStatus {
    type Error = String;
    fn try_from(code: u8) -> Result<Self, Self::Error> {
        TaskStatus::ALL
            .get(usize::from(code))
            .copied()
            .ok_or_else(|| format!("{code} is not a task status"))
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that can be done to a task, for the transition table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskOperation {
    Update,
    Publish,
    Pause,
    Resume,
    Stop,
    Complete,
    Fail,
    Close,
    Recall,
    /// Set or cancel a callback (D31).
    Callback,
    Delete,
}

impl fmt::Display for TaskOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            TaskOperation::Update => "update",
            TaskOperation::Publish => "publish",
            TaskOperation::Pause => "pause",
            TaskOperation::Resume => "resume",
            TaskOperation::Stop => "stop",
            TaskOperation::Complete => "complete",
            TaskOperation::Fail => "fail",
            TaskOperation::Close => "close",
            TaskOperation::Recall => "recall",
            TaskOperation::Callback => "schedule a callback for",
            TaskOperation::Delete => "delete",
        };
        f.write_str(name)
    }
}

impl TaskOperation {
    /// The states this operation is allowed from (D10). Every other state answers 405.
    pub fn allowed_from(self) -> &'static [TaskStatus] {
        use TaskStatus::*;
        match self {
            TaskOperation::Update | TaskOperation::Publish => &[Draft],
            TaskOperation::Pause | TaskOperation::Complete => &[Running],
            TaskOperation::Resume => &[Paused],
            TaskOperation::Stop | TaskOperation::Fail => &[Running, Paused],
            TaskOperation::Close => &[Stopped, Completed, Failed],
            TaskOperation::Recall | TaskOperation::Callback => &[Running, Paused, Completed],
            TaskOperation::Delete => &[Draft, Stopped, Completed, Failed, Closed],
        }
    }

    /// The state after the operation; `None` for operations that keep the state (update, recall)
    /// or remove the task (delete). Recall's COMPLETED -> RUNNING is [`TaskOperation::requeue`].
    pub fn target(self) -> Option<TaskStatus> {
        match self {
            TaskOperation::Publish | TaskOperation::Resume => Some(TaskStatus::Running),
            TaskOperation::Pause => Some(TaskStatus::Paused),
            TaskOperation::Stop => Some(TaskStatus::Stopped),
            TaskOperation::Complete => Some(TaskStatus::Completed),
            TaskOperation::Fail => Some(TaskStatus::Failed),
            TaskOperation::Close => Some(TaskStatus::Closed),
            TaskOperation::Update
            | TaskOperation::Recall
            | TaskOperation::Callback
            | TaskOperation::Delete => None,
        }
    }

    /// The state after this operation from `from`, or 405 naming both.
    pub fn apply(self, from: TaskStatus) -> Result<TaskStatus, Error> {
        if !self.allowed_from().contains(&from) {
            return Err(not_allowed(self, from));
        }
        Ok(self.target().unwrap_or(from))
    }

    /// A recall that queued something makes a COMPLETED task RUNNING again (D10).
    pub fn requeue(from: TaskStatus) -> TaskStatus {
        match from {
            TaskStatus::Completed => TaskStatus::Running,
            other => other,
        }
    }
}

/// The 405 of an operation refused in a state.
pub fn not_allowed(operation: TaskOperation, from: TaskStatus) -> Error {
    Error::NotAllowed(format!("cannot {operation} a task in state {from}"))
}

/// An IANA time zone name, checked against the zone database.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct ZoneName(String);

impl ZoneName {
    pub fn parse(raw: &str) -> Result<Self, Error> {
        raw.trim()
            .parse::<Tz>()
            .map(|zone| ZoneName(zone.name().to_owned()))
            .map_err(|_| {
                Error::invalid("timeZone must be an IANA time zone name, e.g. Asia/Shanghai")
            })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where a task's daily window is read (D15).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WindowZone {
    /// In each contact's local time; a number with several zones only while it is open in all.
    #[default]
    CalledParty,
    /// In the task's `timeZone` (else the service zone), as D13 reads it.
    Task,
}

impl WindowZone {
    pub fn parse(raw: &str) -> Result<Self, Error> {
        match raw.trim() {
            "CALLED_PARTY" => Ok(WindowZone::CalledParty),
            "TASK" => Ok(WindowZone::Task),
            _ => Err(Error::invalid(
                "windowTimeZone must be CALLED_PARTY or TASK",
            )),
        }
    }
}

/// The most retry rules a task holds (D18).
pub const MAX_RETRY_RULES: usize = 6;

/// A task's retry rules, checked against D18: at most six, one per reason, each reason one that
/// can be retried, each delay 10-604800 s and each `maxAttempts` 1 to `maxDialCount`.
pub fn check_retry_rules(rules: &[RetryRule], max_dial_count: u8) -> Result<(), Error> {
    if rules.len() > MAX_RETRY_RULES {
        return Err(Error::invalid(format!(
            "retryRules holds at most {MAX_RETRY_RULES} rules"
        )));
    }
    for (at, rule) in rules.iter().enumerate() {
        if !rule.reason.retryable() {
            return Err(Error::invalid(format!(
                "retryRules[{at}].reason must be one of {}",
                Reason::retryable_names().join(", ")
            )));
        }
        if rules[..at].iter().any(|other| other.reason == rule.reason) {
            return Err(Error::invalid(format!(
                "retryRules[{at}].reason {} has a rule already",
                rule.reason.name()
            )));
        }
        if let Some(delay) = rule.delay_seconds {
            in_range(
                &format!("retryRules[{at}].delaySeconds"),
                i64::from(delay),
                10,
                604_800,
            )?;
        }
        if let Some(most) = rule.max_attempts {
            in_range(
                &format!("retryRules[{at}].maxAttempts"),
                i64::from(most),
                1,
                i64::from(max_dial_count),
            )?;
        }
    }
    Ok(())
}

/// How a task dials (D9, D15, D18).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DialSettings {
    pub priority: u8,
    pub max_dial_count: u8,
    pub call_interval: u32,
    pub window: Option<DailyWindow>,
    pub time_zone: Option<ZoneName>,
    #[serde(default)]
    pub window_zone: WindowZone,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry_rules: Vec<RetryRule>,
    /// One of the tenant's numbers or local presence; unset: the tenant's default (D22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller_id: Option<CallerIdChoice>,
    /// One of the tenant's flows; unset: the tenant's default (D22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_flow_id: Option<String>,
    /// The contact fields (known, custom, `e164`) whose values each call sends its flow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_attributes: Vec<String>,
    /// The names the flow may set, recorded at the call's end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub result_attributes: Vec<String>,
    #[serde(default, skip_serializing_if = "Voicemail::is_default")]
    pub voicemail: Voicemail,
    /// Calls paced to a queue's agents (D30); `None`: agentless, calls go to the flow alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<AgentPacing>,
    /// When its calls may start and when the engine stops it (D31).
    #[serde(default, skip_serializing_if = "Schedule::is_empty")]
    pub schedule: Schedule,
    /// The contacts it dials, of its data source's (D31).
    #[serde(default, skip_serializing_if = "ContactFilter::is_empty")]
    pub filter: ContactFilter,
}

impl DialSettings {
    /// The contact fields a run reads of each contact beside its number: those its calls send
    /// (`callAttributes`) and those its filter tests (D31).
    pub fn contact_fields(&self) -> Vec<String> {
        let mut fields = self.call_attributes.clone();
        for name in self.filter.fields() {
            if !fields.iter().any(|held| held == name) {
                fields.push(name.to_owned());
            }
        }
        fields
    }
}

impl Default for DialSettings {
    fn default() -> Self {
        DialSettings {
            priority: 3,
            max_dial_count: 3,
            call_interval: 60,
            window: None,
            time_zone: None,
            window_zone: WindowZone::CalledParty,
            retry_rules: Vec::new(),
            caller_id: None,
            contact_flow_id: None,
            call_attributes: Vec::new(),
            result_attributes: Vec::new(),
            voicemail: Voicemail::HangUp,
            agents: None,
            schedule: Schedule::default(),
            filter: ContactFilter::default(),
        }
    }
}

/// Counters of a task's calls, filled by the dialing engine.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallCounters {
    pub calls: u64,
    pub success: u64,
    pub failed: u64,
    pub no_answer: u64,
    /// Seconds (D9).
    pub duration: u64,
    /// Calls a person answered and no agent took (D30): counted in `no_answer` too.
    #[serde(default)]
    pub abandoned: u64,
    /// Calls placed for callbacks (D31), counted in `calls` too.
    #[serde(default)]
    pub callbacks: u64,
}

impl CallCounters {
    /// The counter of abandoned calls, as stored (D30).
    pub const ABANDONED: &'static str = "abandoned";
    /// The counter of callbacks' calls, as stored (D31).
    pub const CALLBACKS: &'static str = "callbacks";

    /// Calls a person answered (D30): those an agent or the flow took, and those abandoned.
    pub fn answered_by_people(&self) -> u64 {
        self.success + self.abandoned
    }

    /// `abandonRate` (D30): abandoned of the calls a person answered.
    pub fn abandon_rate(&self) -> f64 {
        rate(self.abandoned, self.answered_by_people())
    }

    /// The counter of calls that ended with `outcome`, as stored (its field's name).
    pub fn field(outcome: crate::call::Outcome) -> &'static str {
        use crate::call::Outcome;
        match outcome {
            Outcome::Success => "success",
            Outcome::Failed => "failed",
            Outcome::NoAnswer => "no_answer",
        }
    }
}

/// A fraction rounded to 4 decimals; 0 when the denominator is 0 (D9).
pub fn rate(numerator: u64, denominator: u64) -> f64 {
    if denominator == 0 {
        return 0.0;
    }
    (numerator as f64 / denominator as f64 * 10_000.0).round() / 10_000.0
}

/// Why a running task with work placed no call, as its item remembers it for its diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldBack {
    /// No room in its share of the calls in flight (D23, D29): `CAPACITY`.
    Capacity,
    /// Its queue had no agent for it (D30): `NO_AGENTS`.
    NoAgents,
}

/// A stored task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: Id,
    pub name: Name,
    #[serde(default)]
    pub description: Description,
    pub status: TaskStatus,
    pub data_source_id: Id,
    pub contact_count: u64,
    #[serde(default)]
    pub counters: CallCounters,
    pub settings: DialSettings,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub ended_at: Option<Timestamp>,
    pub stop_reason: Option<String>,
    pub fail_reason: Option<String>,
    /// Calls of this task in flight now (D13: capped per task).
    #[serde(default)]
    pub in_flight: u32,
    /// Of those, calls an agent of the task's queue has taken (D30): counted when the provider
    /// says the call reached the agent, until its outcome. The rest of `in_flight` are ringing.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub talking: u32,
    /// Sort key of the newest data source contact a dial run has taken for a first attempt:
    /// contacts sort by creation, so the never-dialled ones, added ones included, come after it.
    /// A run moves it past its slice before calling (D23), so concurrent runs take different
    /// contacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// The slices the runs of this task now going have taken (D23, D28), by run: the room each
    /// has beyond `in_flight`, so runs that overlap share the task's room instead of each
    /// claiming all of it (advisory: the claim's cap holds the share). Each lapses at its own
    /// time, so a run that died frees its room whatever other runs do, and the next run queues
    /// the never-dialled contacts it left.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slices: BTreeMap<String, RunSlice>,
    /// Moves with every slice taken, so two runs never take room from the same reading.
    #[serde(default)]
    pub slice_revision: u64,
    /// Moves with every recall, so a completion that raced a recall is refused.
    #[serde(default)]
    pub revision: u64,
    /// A recall too large for one transaction, committed but not yet applied to every contact
    /// by the dialer's recall job (D12); the task cannot complete meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_recall: Option<Id>,
    /// When that recall was committed, so the tick can queue its job again if it was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_recall_at: Option<Timestamp>,
    /// How many contacts of that recall's list its jobs have applied, in list order: a lost or
    /// failed job resumes there, never from the start.
    #[serde(default)]
    pub pending_recall_applied: u64,
    /// How far the completion check has read the task's contacts (D13), across runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepMark>,
    /// Until when a dial run found nothing due (D23): its contacts all wait, are parked outside
    /// their window or capped. The tick gives the task neither a share nor a dial run before
    /// then; an outcome, a recall or a resume clears it, and it is never more than
    /// [`IDLE_AT_MOST`] ahead, so a contact added meanwhile waits that long at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_until: Option<Timestamp>,
    /// The rules time ([`rules_time`]) the run that marked the task idle judged it under: a
    /// later change of the rules wakes it at the next tick (D24).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_rules_at: Option<Timestamp>,
    /// The data source's `contacts_added` that run read: a contact added since wakes the task
    /// at the next tick (D23).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_contacts_added: Option<u64>,
    /// When a dial run last had contacts due and no room in its share (D23): the task is held
    /// back by capacity, which diagnostics say (D19). A claim clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_back_at: Option<Timestamp>,
    /// When the tick last found an agent-paced task's queue with no agent for its due contacts
    /// (D30): diagnostics say `NO_AGENTS`. A claim clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_agents_at: Option<Timestamp>,
    /// When its latest call outcome was recorded: the tick keeps a snapshot of its counters
    /// for its history only when one came since (D31).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_outcome_at: Option<Timestamp>,
    /// Every outcome of this task has kept its failed and unanswered contacts marked since the
    /// task was created, so an implicit recall reads the marks alone (D12); false for tasks
    /// created before the marks, whose recall reads every contact state.
    #[serde(default)]
    pub recall_marks: bool,
    /// What its calls move at their rate (`in_flight`, the call and diagnostics counters, the
    /// idle and held-back marks) is kept on an item of its own, apart from the tenant's
    /// partition, so a tenant's calls are not bounded by one key; false for tasks created before,
    /// which keep them on the task item.
    #[serde(default)]
    pub counters_apart: bool,
    /// Moves with every write that can make work due (an outcome, a release, a recall, a change
    /// of state), so a run marks the task idle only if none came since it read it (D23).
    #[serde(default)]
    pub awake: u64,
}

/// When the rules that judge a task's contacts' windows last changed (D24): the tenant's
/// calling hours or default country, or its data source's country or a contact's number or
/// `timeZone`. Contacts parked outside their window under earlier rules are judged again; 0
/// when nothing was ever set.
pub fn rules_time(settings: &TenantSettings, source: Option<&DataSource>) -> Timestamp {
    let settings = settings.rules_at.map_or(0, |at| at.0);
    let source = source
        .and_then(|source| source.rules_at)
        .map_or(0, |at| at.0);
    Timestamp(settings.max(source))
}

/// The longest a running task is left without a dial run for having nothing due (D23): the
/// events that make work due wake it sooner (an outcome, a recall, a resume at once; a contact
/// added or a change of the rules at the next tick), so this only bounds a wake-up missed.
pub const IDLE_AT_MOST: std::time::Duration = std::time::Duration::from_secs(3600);

/// What a dial run judged a task's contacts under (D23, D24): the rules time and how many
/// contacts its data source had ever had added. A resting task whose either moved since is
/// woken by the tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Judged {
    pub rules_at: Timestamp,
    pub contacts_added: u64,
}

impl Judged {
    /// Whether `now` says more than `self`: the rules changed or contacts were added since.
    pub fn moved_since(&self, then: &Judged) -> bool {
        self.rules_at.0 > then.rules_at.0 || self.contacts_added > then.contacts_added
    }
}

/// One run's slice of a task (D23, D28).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSlice {
    /// The calls it may place beyond the task's calls in flight.
    pub room: u32,
    /// When it lapses: past it the run is over, ended or dead.
    pub until: Timestamp,
    /// The cursor the slice took its never-dialled contacts after, and the last of them (`to`
    /// `None`: it took none): a run that dies leaves them to the next run, which queues each
    /// one that has no state yet. Two sort keys, not the contacts, so the task item every
    /// claim and outcome writes stays small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

impl Task {
    /// The room runs still going have taken (D23): the room of every slice not lapsed.
    pub fn reserved_at(&self, now: Timestamp) -> u32 {
        self.slices
            .values()
            .filter(|slice| slice.until.0 > now.0)
            .map(|slice| slice.room)
            .sum()
    }

    /// The slices of runs that are over without having ended them (D28): lapsed at `now`.
    pub fn lapsed_slices(&self, now: Timestamp) -> impl Iterator<Item = (&String, &RunSlice)> {
        self.slices
            .iter()
            .filter(move |(_, slice)| slice.until.0 <= now.0)
    }

    /// Whether the task asks for nothing at `now` (D23): a run found nothing due before then,
    /// and no outcome, recall or resume has come since (its calls in flight end by an outcome).
    pub fn idle_at(&self, now: Timestamp) -> bool {
        self.idle_until.is_some_and(|until| until.0 > now.0)
    }

    /// What the run that marked the task idle judged it under.
    pub fn idle_judged(&self) -> Judged {
        Judged {
            rules_at: self.idle_rules_at.unwrap_or(Timestamp(0)),
            contacts_added: self.idle_contacts_added.unwrap_or(0),
        }
    }
}

/// Where a task's completion check stands: it reads the data source's contacts a bounded page
/// per dial run, and resumes here. Valid only while the task's `revision` and the data source's
/// `contacts_added` are the ones it started with; otherwise it starts over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepMark {
    /// Sort key of the last contact checked.
    pub after: String,
    pub revision: u64,
    pub contacts_added: u64,
}

impl Task {
    /// When it was last marked held back `by` that, if it was.
    pub fn held_back(&self, by: HeldBack) -> Option<Timestamp> {
        match by {
            HeldBack::Capacity => self.held_back_at,
            HeldBack::NoAgents => self.no_agents_at,
        }
    }

    /// A new DRAFT task over `source` (its id and contact count), created `now`: no calls, no
    /// recall, nothing dialled yet.
    pub fn draft(
        name: Name,
        description: Description,
        source: (Id, u64),
        settings: DialSettings,
        now: Timestamp,
    ) -> Task {
        let (data_source_id, contact_count) = source;
        Task {
            id: Id::new(),
            name,
            description,
            status: TaskStatus::Draft,
            data_source_id,
            contact_count,
            counters: CallCounters::default(),
            settings,
            created_at: now,
            updated_at: now,
            started_at: None,
            ended_at: None,
            stop_reason: None,
            fail_reason: None,
            in_flight: 0,
            talking: 0,
            cursor: None,
            revision: 0,
            pending_recall: None,
            pending_recall_at: None,
            pending_recall_applied: 0,
            sweep: None,
            idle_until: None,
            idle_rules_at: None,
            idle_contacts_added: None,
            slices: BTreeMap::new(),
            slice_revision: 0,
            held_back_at: None,
            no_agents_at: None,
            last_outcome_at: None,
            recall_marks: true,
            counters_apart: true,
            awake: 0,
        }
    }

    fn time(value: Option<Timestamp>, zone: Tz) -> Option<String> {
        value.map(|t| t.display(zone))
    }

    /// A row of the task list.
    pub fn list_view(&self, zone: Tz) -> TaskRow {
        TaskRow {
            id: self.id.clone(),
            task_name: self.name.clone(),
            task_desc: self.description.clone(),
            status: self.status,
            data_source_id: self.data_source_id.clone(),
            contact_count: self.contact_count,
            call_count: self.counters.calls,
            success_count: self.counters.success,
            create_time: self.created_at.display(zone),
            start_time: Self::time(self.started_at, zone),
            end_time: Self::time(self.ended_at, zone),
        }
    }

    /// The whole task, for detail, add and update.
    pub fn detail_view(&self, zone: Tz) -> TaskView {
        let c = &self.counters;
        let s = &self.settings;
        TaskView {
            row: self.list_view(zone),
            fail_count: c.failed,
            no_answer_count: c.no_answer,
            dial_rate: rate(c.calls, self.contact_count),
            success_rate: rate(c.success, c.calls),
            call_duration: c.duration,
            avg_call_duration: rate(c.duration, c.calls),
            priority: s.priority,
            max_dial_count: s.max_dial_count,
            call_interval: s.call_interval,
            daily_start_time: s.window.map(|w| w.start.to_string()),
            daily_end_time: s.window.map(|w| w.end.to_string()),
            time_zone: s.time_zone.clone(),
            window_time_zone: s.window_zone,
            retry_rules: s.retry_rules.clone(),
            caller_id: s.caller_id.as_ref().map(|c| c.as_str().to_owned()),
            contact_flow_id: s.contact_flow_id.clone(),
            call_attributes: s.call_attributes.clone(),
            result_attributes: s.result_attributes.clone(),
            voicemail: s.voicemail,
            dialing_mode: s.agents.as_ref().map_or(DialingMode::Agentless, |a| a.mode),
            queue_id: s.agents.as_ref().map(|a| a.queue_id.clone()),
            calls_per_agent: s
                .agents
                .as_ref()
                .map_or(CALLS_PER_AGENT.default, |a| a.calls_per_agent)
                .value(),
            abandonment_target: s
                .agents
                .as_ref()
                .map_or(ABANDONMENT_TARGET.default, |a| a.abandonment_target)
                .value(),
            abandon_count: c.abandoned,
            abandon_rate: c.abandon_rate(),
            callback_count: c.callbacks,
            start_at: s.schedule.start_at().map(Timestamp::rfc3339),
            end_at: s.schedule.end_at().map(Timestamp::rfc3339),
            filter: s.filter.view(),
            update_time: self.updated_at.display(zone),
            stop_reason: self.stop_reason.clone(),
            fail_reason: self.fail_reason.clone(),
        }
    }

    /// The statistics record of `/api/task/{id}/stat`; `filtered`: the contacts its filter
    /// left out (D31), from its diagnostics' counters.
    pub fn stat_view(&self, zone: Tz, filtered: u64) -> TaskStat {
        let c = &self.counters;
        TaskStat {
            task_id: self.id.clone(),
            task_name: self.name.clone(),
            status: self.status,
            total_contacts: self.contact_count,
            call_count: c.calls,
            success_count: c.success,
            fail_count: c.failed,
            no_answer_count: c.no_answer,
            dial_rate: rate(c.calls, self.contact_count),
            success_rate: rate(c.success, c.calls),
            total_duration: c.duration,
            avg_duration: rate(c.duration, c.calls),
            abandon_count: c.abandoned,
            abandon_rate: c.abandon_rate(),
            filtered_count: filtered,
            callback_count: c.callbacks,
            last_update_time: self.updated_at.display(zone),
        }
    }
}

/// A row of `GET /api/task/list`. Times are `yyyy-MM-dd HH:mm:ss` in the service's zone (D4).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskRow {
    pub id: Id,
    pub task_name: Name,
    pub task_desc: Description,
    pub status: TaskStatus,
    pub data_source_id: Id,
    pub contact_count: u64,
    pub call_count: u64,
    pub success_count: u64,
    pub create_time: String,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
}

/// A whole task: detail, add and update: its list row and the rest. Rates are fractions
/// rounded to 4 places (D7).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    #[serde(flatten)]
    pub row: TaskRow,
    pub fail_count: u64,
    pub no_answer_count: u64,
    pub dial_rate: f64,
    pub success_rate: f64,
    /// Talk time of all answered calls, seconds.
    pub call_duration: u64,
    pub avg_call_duration: f64,
    pub priority: u8,
    pub max_dial_count: u8,
    /// Seconds between attempts at one contact.
    pub call_interval: u32,
    /// `HH:MM`, in `timeZone` (else the service's zone).
    pub daily_start_time: Option<String>,
    pub daily_end_time: Option<String>,
    pub time_zone: Option<ZoneName>,
    /// Where the daily window is read (D15).
    pub window_time_zone: WindowZone,
    /// Waits and attempt limits by the reason an attempt ended (D18).
    pub retry_rules: Vec<RetryRule>,
    /// One of the tenant's numbers, `LOCAL_PRESENCE`, or `null`: the tenant's default (D22).
    pub caller_id: Option<String>,
    /// One of the tenant's flows, or `null`: the tenant's default (D22).
    pub contact_flow_id: Option<String>,
    /// The contact fields each call sends its flow (D22).
    pub call_attributes: Vec<String>,
    /// The names the flow may set, recorded when an answered call ends (D22).
    pub result_attributes: Vec<String>,
    /// What a call that reaches voicemail does (D22).
    pub voicemail: Voicemail,
    /// `AGENTLESS`, `PROGRESSIVE` or `PREDICTIVE` (D30).
    pub dialing_mode: DialingMode,
    /// The queue whose agents an agent-paced task's answered calls go to; `null` when agentless.
    pub queue_id: Option<String>,
    /// Progressive: calls ringing per free agent, 1.0-3.0.
    pub calls_per_agent: f64,
    /// Predictive: the most abandoned calls, a percentage of the calls a person answered, 0-10.
    pub abandonment_target: f64,
    /// Calls a person answered and no agent took within 2 s (D30).
    pub abandon_count: u64,
    /// `abandonCount` of the calls a person answered, a fraction rounded to 4 places.
    pub abandon_rate: f64,
    /// Calls placed for callbacks (D31), counted in `callCount` too.
    pub callback_count: u64,
    /// No call before it (D31), RFC 3339 in UTC; `null`: from publish.
    pub start_at: Option<String>,
    /// The engine stops the task at it (D31), RFC 3339 in UTC; `null`: no end.
    pub end_at: Option<String>,
    /// The conditions a contact must all meet to be dialled (D31); `[]`: every contact.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::filter::FilterCondition>))]
    pub filter: Vec<serde_json::Value>,
    pub update_time: String,
    pub stop_reason: Option<String>,
    /// Why the provider refused the task (FAILED).
    pub fail_reason: Option<String>,
}

/// `GET /api/task/{id}/stat` (D7).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskStat {
    pub task_id: Id,
    pub task_name: Name,
    pub status: TaskStatus,
    pub total_contacts: u64,
    pub call_count: u64,
    pub success_count: u64,
    pub fail_count: u64,
    pub no_answer_count: u64,
    pub dial_rate: f64,
    pub success_rate: f64,
    pub total_duration: u64,
    pub avg_duration: f64,
    /// Calls a person answered and no agent took within 2 s (D30).
    pub abandon_count: u64,
    /// `abandonCount` of the calls a person answered, a fraction rounded to 4 places.
    pub abandon_rate: f64,
    /// Contacts the task's filter leaves out (D31): final, never dialled.
    pub filtered_count: u64,
    /// Calls placed for callbacks (D31), counted in `callCount` too.
    pub callback_count: u64,
    pub last_update_time: String,
}

/// One contact's dialing state within one task. Absent until the contact is dialled or recalled:
/// publishing writes nothing per contact, whatever the size of the data source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskContact {
    pub contact_id: Id,
    /// Attempts made so far in this task.
    #[serde(default)]
    pub attempts: u32,
    /// Attempts allowed in total; a recall raises it to `attempts + maxDialCount` (D12).
    pub allowance: u32,
    /// Latest outcome in this task: 0 not dialled, 1 success, 2 failed, 3 no answer (D7 codes).
    #[serde(default)]
    pub last_outcome: u8,
    /// Talk time of the latest answered call, seconds.
    #[serde(default)]
    pub last_duration: u64,
    /// When the next attempt may start, if one is due.
    pub next_attempt_at: Option<Timestamp>,
    /// 1 highest - 5 lowest: the recall priority of a recalled contact (D12, D13).
    pub priority: u8,
    pub updated_at: Timestamp,
    /// Quota refusals of this contact's calls with nothing else in flight, since its last call
    /// was placed (D13: a missing campaign quota shows as a run of them).
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub quota_refusals: u32,
    /// The capacity shard the call in flight took its place in (D13), given back there.
    /// Stored under its first name.
    #[serde(rename = "slot_shard", default, skip_serializing_if = "crate::is_zero")]
    pub capacity_shard: u32,
    /// The outcome in this task is final (D13): success, an invalid number, the attempts reached
    /// the allowance, or the contact was deleted from the data source. Recall clears it.
    #[serde(default)]
    pub done: bool,
    /// Queued by a recall: due ahead of plain retries, in `priority` order (D13).
    #[serde(default)]
    pub recalled: bool,
    /// The attempt now in flight: claimed, and placed unless the provider refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_call: Option<u32>,
    /// When the attempt in flight was claimed; a call without an outcome long after is reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_at: Option<Timestamp>,
    /// When a start in doubt that had given back its places was last sent again with its token
    /// (D28): a call that start placed may be live until `DIAL_MAX_CALL_SECONDS` after it, however
    /// long ago the attempt was claimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_again_at: Option<Timestamp>,
    /// The provider's id of the call in flight, once placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The attempt in flight when the provider refused it and giving it back failed: never
    /// placed, so reconcile gives it back instead of spending it (D13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<u32>,
    /// The attempt in flight is in doubt (D28: whether its call started is unknown) and has
    /// given back its places among the task's and the service's calls in flight: it waits for
    /// its outcome, or `DIAL_MAX_CALL_SECONDS`, and its outcome gives nothing back again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub released: bool,
    /// The attempt in flight reached an agent of the task's queue (D30) and is counted in the
    /// task's `talking` until its outcome, which counts it out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub with_agent: bool,
    /// The number the attempt in flight calls from (D22), chosen when it was claimed: what its
    /// outcome records, whichever path records it (D28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calling_from: Option<String>,
    /// Why the latest attempt ended (D18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reason: Option<Reason>,
    /// Why the contact was not called when its turn last came, while that holds (D18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<Skip>,
    /// The number the latest attempt called from (D22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller_id: Option<String>,
    /// What the flow of the contact's latest answered attempt reported (D22).
    #[serde(default, skip_serializing_if = "Results::is_empty")]
    pub results: Results,
    /// The latest attempt reached voicemail and left the task's message (D22).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub message_left: bool,
    /// An attempt of the contact in this task was answered: it counts among the task's answered
    /// contacts, with `results` in its result counters (D22).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub answered: bool,
    /// The callback promised to the contact and not yet made (D31): while it is, the contact
    /// waits at the callback rank (`recalled` with priority 0) for its time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback: Option<PendingCallback>,
    /// Callbacks set for the contact in this task, at most [`crate::callback::MAX_CALLBACKS`].
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub callbacks: u8,
    /// The time of its latest callback (D31), shown by the export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_at: Option<Timestamp>,
}

impl TaskContact {
    /// A contact the task has not called yet, allowed `allowance` attempts at `priority`, as of
    /// `at`: nothing in flight, nothing recorded, not final.
    pub fn undialled(contact_id: Id, allowance: u32, priority: u8, at: Timestamp) -> Self {
        TaskContact {
            contact_id,
            attempts: 0,
            allowance,
            last_outcome: 0,
            last_duration: 0,
            next_attempt_at: None,
            priority,
            updated_at: at,
            quota_refusals: 0,
            capacity_shard: 0,
            done: false,
            recalled: false,
            in_call: None,
            claimed_at: None,
            sent_again_at: None,
            call_id: None,
            refused: None,
            released: false,
            with_agent: false,
            calling_from: None,
            last_reason: None,
            skip: None,
            caller_id: None,
            results: Results::new(),
            message_left: false,
            answered: false,
            callback: None,
            callbacks: 0,
            callback_at: None,
        }
    }

    /// The results of the contact's latest answered attempt, if one was answered: what a
    /// later answer replaces in the task's result counters (D22).
    pub fn answered_results(&self) -> Option<Results> {
        self.answered.then(|| self.results.clone())
    }

    /// Where the task's diagnostics count this state (D19).
    pub fn class(&self) -> Standing {
        if self.in_call.is_some() && self.released {
            // In doubt, holding no place in flight (D28): waiting for its outcome.
            Standing::Waiting
        } else if self.in_call.is_some() {
            Standing::InFlight
        } else if self.done {
            Standing::Final
        } else if self.attempts > 0 || self.skip.is_some() {
            Standing::Waiting
        } else {
            // A claim given back, or a contact the completion check queued: never attempted.
            Standing::NotDialled
        }
    }
}

/// Where a contact stands in a task (D19): each contact of the data source in exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    NotDialled,
    /// Attempted or skipped, not final: waiting for its interval, its window or the cap.
    Waiting,
    InFlight,
    Final,
}

/// A contact of the data source that the task has never dialled, in creation order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fresh {
    pub contact_id: Id,
}

/// One call the dialer should claim: attempt `attempt` of `contact_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Due {
    pub contact_id: Id,
    pub attempt: u32,
    /// The state the claim expects to find (`None`: never dialled, no state yet).
    pub state: Option<TaskContact>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskOperation::*;
    use TaskStatus::*;

    /// D10, written out once more as the list of allowed (from, operation, to) triples.
    const ALLOWED: &[(TaskStatus, TaskOperation, TaskStatus)] = &[
        (Draft, Update, Draft),
        (Draft, Publish, Running),
        (Running, Pause, Paused),
        (Paused, Resume, Running),
        (Running, Stop, Stopped),
        (Paused, Stop, Stopped),
        (Running, Complete, Completed),
        (Running, Fail, Failed),
        (Paused, Fail, Failed),
        (Stopped, Close, Closed),
        (Completed, Close, Closed),
        (Failed, Close, Closed),
        (Running, Recall, Running),
        (Paused, Recall, Paused),
        (Completed, Recall, Completed),
        (Running, Callback, Running),
        (Paused, Callback, Paused),
        (Completed, Callback, Completed),
        (Draft, Delete, Draft),
        (Stopped, Delete, Stopped),
        (Completed, Delete, Completed),
        (Failed, Delete, Failed),
        (Closed, Delete, Closed),
    ];

    /// Each state's name is its variant's, the one messages and the contract give it, and its
    /// code is its place in `ALL`.
    #[test]
    fn states_are_named_by_their_variants() {
        let names = TaskStatus::ALL.map(TaskStatus::name);
        let expected = [
            "DRAFT",
            "RUNNING",
            "PAUSED",
            "STOPPED",
            "COMPLETED",
            "FAILED",
            "CLOSED",
        ];
        assert_eq!(names, expected);
        assert_eq!(TaskStatus::ALL.map(TaskStatus::code), [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(TaskStatus::Completed.to_string(), "COMPLETED");
    }

    #[test]
    fn every_state_and_operation_matches_d10() {
        let operations = [
            Update, Publish, Pause, Resume, Stop, Complete, Fail, Close, Recall, Callback, Delete,
        ];
        for from in TaskStatus::ALL {
            for operation in operations {
                let expected = ALLOWED
                    .iter()
                    .find(|(f, o, _)| *f == from && *o == operation)
                    .map(|(_, _, to)| *to);
                match (operation.apply(from), expected) {
                    (Ok(to), Some(expected)) => assert_eq!(to, expected, "{from} {operation}"),
                    (Err(error), None) => {
                        assert_eq!(error.status_code(), 405);
                        assert_eq!(
                            error.to_string(),
                            format!("cannot {operation} a task in state {from}")
                        );
                    }
                    (got, expected) => panic!("{from} {operation}: {got:?} vs {expected:?}"),
                }
            }
        }
    }

    #[test]
    fn nothing_leaves_closed_but_delete() {
        for operation in [
            Update, Publish, Pause, Resume, Stop, Complete, Fail, Close, Recall, Callback,
        ] {
            assert!(operation.apply(Closed).is_err());
        }
    }

    #[test]
    fn recall_requeues_only_completed() {
        assert_eq!(TaskOperation::requeue(Completed), Running);
        assert_eq!(TaskOperation::requeue(Paused), Paused);
    }

    #[test]
    fn rates_are_rounded_fractions_and_never_nan() {
        assert_eq!(rate(0, 0), 0.0);
        assert_eq!(rate(1, 3), 0.3333);
        assert_eq!(rate(2, 3), 0.6667);
        assert_eq!(rate(5, 0), 0.0);
    }

    #[test]
    fn zones_are_checked() {
        assert_eq!(
            ZoneName::parse("Asia/Shanghai").unwrap().as_str(),
            "Asia/Shanghai"
        );
        assert!(ZoneName::parse("Mars/Base").is_err());
    }
}
