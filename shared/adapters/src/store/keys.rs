//! The key layout of the single table (see `docs/data-model.md`). Every key of a tenant's
//! records starts with the tenant, so no read can reach another tenant's records; the service's
//! own items (dialing counters, call ids, reclaim intents, caller ID guards) have keys of their
//! own.

use outbound_model::Tenant;
use outbound_model::{Id, Phone};

/// The prefix of every key of a tenant's records.
const TENANT_PREFIX: &str = "T#";

/// Partition of a tenant's own records: data source and task names, tasks.
pub fn tenant(tenant: &Tenant) -> String {
    format!("{TENANT_PREFIX}{}", tenant.as_str())
}

/// The tenant of the tenant partition `pk` ([`tenant`]); `None` for any other key.
pub fn tenant_of(pk: &str) -> Option<Tenant> {
    Tenant::parse(pk.strip_prefix(TENANT_PREFIX)?).ok()
}

/// `T#{tenant}#TASK#{id}` ([`task_contacts`]) -> (tenant, task id); `None` for any other key.
pub fn parse_task_contacts(pk: &str) -> Option<(Tenant, Id)> {
    let rest = pk.strip_prefix(TENANT_PREFIX)?;
    let (tenant, id) = rest.rsplit_once("#TASK#")?;
    Some((Tenant::parse(tenant).ok()?, Id::parse(id)?))
}

/// Sort key of job slot `slot` of a kind of job (`JOBSLOT#{kind}#{slot}`, D8, D26), in the
/// tenant partition.
pub fn job_slot(kind: &str, slot: u32) -> String {
    format!("{}{slot:03}", job_slots(kind))
}

/// The prefix of the sort keys of every job slot of a kind.
pub fn job_slots(kind: &str) -> String {
    format!("JOBSLOT#{kind}#")
}

/// Sort key of a tenant's settings (D14), in the tenant partition.
pub const SETTINGS: &str = "SETTINGS";

/// Sort key of a do-not-call entry in the tenant partition (D16), newest last.
pub fn dnc_entry(id: &Id) -> String {
    format!("{DNC_PREFIX}{id}")
}
pub const DNC_PREFIX: &str = "DNC#";

/// Sort key of the guard of one listed number (its normal form or its E.164) in the tenant
/// partition: the claim's transaction checks it is absent (D16).
pub fn dnc_number(number: &str) -> String {
    format!("{GUARD_PREFIX}{number}")
}
pub const GUARD_PREFIX: &str = "DNCN#";

/// Partition and sort key of the claim's copy of the guard of one listed number (D16): spread
/// over [`DIAL_GUARD_SHARDS`] partitions of the tenant by the number, so the check every claim
/// makes is not on the tenant's partition, which its tasks, settings and entries share. The
/// guard in the tenant partition ([`dnc_number`]) stays what makes a number listed once and
/// what lookups read; each add and delete writes both.
pub fn dial_guard(tenant: &Tenant, number: &str) -> (String, String) {
    (
        format!(
            "T#{}#DNCN#{:02}",
            tenant.as_str(),
            fnv1a(number) % DIAL_GUARD_SHARDS
        ),
        dnc_number(number),
    )
}
pub const DIAL_GUARD_SHARDS: u32 = 16;

/// Partition and sort key of one number's recent attempts across the tenant's tasks (D17).
pub fn frequency(tenant: &Tenant, number: &str) -> (String, String) {
    (
        format!("T#{}#FREQ#{number}", tenant.as_str()),
        "FREQ".to_owned(),
    )
}

/// Partition and sort key of the guard of one caller ID (D22), in E.164: the one tenant the
/// operator assigned the number to. Service-wide, since a number belongs to one tenant at a time.
pub fn caller_id(e164: &str) -> (String, String) {
    (format!("CID#{e164}"), CALLER_ID.to_owned())
}
pub const CALLER_ID: &str = "CID";

/// Partition and sort key of a tenant's request rate (D26): its own partition, apart from the
/// tenant's records, since every request of the tenant writes it.
pub fn request_rate(tenant: &Tenant) -> (String, String) {
    (format!("T#{}#RATE", tenant.as_str()), "RATE".to_owned())
}

/// Partition and sort key of one operator's request rate on the operator's routes (D29): apart
/// from every tenant's, whatever tenant the operator's token names.
pub fn operator_rate(actor: &outbound_model::Actor) -> (String, String) {
    (
        format!("OPERATOR#{}#RATE", actor.as_str()),
        "RATE".to_owned(),
    )
}

/// Partition and sort key of the request rate of every verified token that names no tenant
/// (D32): one bucket, so such requests are bounded too.
pub fn unattributed_rate() -> (String, String) {
    ("UNATTRIBUTED#RATE".to_owned(), "RATE".to_owned())
}

/// Partition of one data source: its head record, its imports, and shard 0 of its contacts and
/// phone guards ([`super::shards::ContactShards`]).
pub fn data_source(tenant: &Tenant, id: &Id) -> String {
    format!("T#{}#DS#{}", tenant.as_str(), id)
}

/// Partition of one task's per-contact dialing state.
pub fn task_contacts(tenant: &Tenant, id: &Id) -> String {
    format!("T#{}#TASK#{}", tenant.as_str(), id)
}

/// Partition and sort key of the item a task's calls move at their rate (`in_flight`, the
/// call and diagnostics counters, the idle and held-back marks, a copy of its status): its own
/// key, apart from the task item in the tenant's partition and from the states in
/// [`task_contacts`], so neither a tenant's many tasks nor one task's contacts share its heat.
pub fn task_counters(tenant: &Tenant, id: &Id) -> (String, String) {
    (
        format!("T#{}#TASK#{}#COUNTERS", tenant.as_str(), id),
        TASK_COUNTERS.to_owned(),
    )
}
pub const TASK_COUNTERS: &str = "COUNTERS";

/// Partition of a task's history (D31): the snapshots of its counters ([`history_snapshot`])
/// and its changes of state ([`history_state`]).
pub fn task_history(tenant: &Tenant, id: &Id) -> String {
    format!("T#{}#TASK#{}#HISTORY", tenant.as_str(), id)
}

/// Sort key of the snapshot of a task's counters kept for minute `minute` (of the Unix epoch).
pub fn history_snapshot(minute: i64) -> String {
    format!("{HISTORY_SNAPSHOT_PREFIX}{minute:012}")
}
pub const HISTORY_SNAPSHOT_PREFIX: &str = "N#";

/// Sort key of a change of a task's state at `at` (milliseconds).
pub fn history_state(at: outbound_model::Timestamp) -> String {
    format!("{HISTORY_STATE_PREFIX}{:015}", at.0)
}
pub const HISTORY_STATE_PREFIX: &str = "S#";

/// Sort key, in a task's partition ([`task_contacts`]), of the mark of a contact whose latest
/// outcome in the task is failed or no answer: a sparse list of what an implicit recall
/// recalls (D12), kept by the outcome's own transaction, in contact order and apart from the
/// states (`C#`), so reading it costs the marks, not the task's contacts.
pub fn recallable(id: &Id) -> String {
    format!("{RECALLABLE_PREFIX}{id}")
}
pub const RECALLABLE_PREFIX: &str = "F#";

/// Sort key of a callback's record in its task's contact partition (D31): by its id, so the
/// list is in the order callbacks were set. `K#`, not under `C#`, so no range of contact
/// states ever holds one.
pub fn callback(id: &Id) -> String {
    format!("{CALLBACK_PREFIX}{id}")
}
pub const CALLBACK_PREFIX: &str = "K#";

/// Sort key, in a task's partition ([`task_contacts`]), of the task's counters of one result
/// name (D22): apart from the states (`C#`) and the recall marks (`F#`).
pub fn result_counts(name: &str) -> String {
    format!("R#{name}")
}

/// Sort key of a contact in its data source partition.
pub fn contact(id: &Id) -> String {
    format!("{CONTACT_PREFIX}{id}")
}

/// Contacts sort as `C#<ulid>`; the head sorts as `C~`, after every contact (`~` is above every
/// ULID character), so one descending Query over `C#`..`C~` meets the head first and then the
/// newest contacts: existence, `contactCount` and a page in a single call.
pub const CONTACT_PREFIX: &str = "C#";
pub const HEAD: &str = "C~";
/// A sort key after every contact's and before the head's: the end of a range of contacts only.
pub const CONTACTS_END: &str = "C#~";

/// Sort key of the item that makes a phone number unique within a data source.
pub fn phone(phone: &Phone) -> String {
    format!("P#{phone}")
}

/// Sort key (in a data source's partition) of the import write units spent in one second by
/// every import of that data source together (D8).
pub fn import_pace(epoch_second: i64) -> String {
    format!("IMPORTPACE#{epoch_second}")
}

/// Sort key of an import record in its data source partition.
pub fn import(id: &Id) -> String {
    format!("I#{id}")
}

/// Sort key (GSI1) of a data source within its tenant, and of a task in the tenant partition.
pub fn data_source_in_tenant(id: &Id) -> String {
    format!("{DATA_SOURCE_PREFIX}{id}")
}
pub const DATA_SOURCE_PREFIX: &str = "DS#";

pub fn task(id: &Id) -> String {
    format!("{TASK_PREFIX}{id}")
}
pub const TASK_PREFIX: &str = "TASK#";

/// Sort key, in the tenant partition, of the agents of one of the tenant's queues as the tick
/// last read them (D30).
pub fn queue_agents(queue: &str) -> String {
    format!("QUEUE#{queue}")
}

/// Sort key (in the tenant partition) of the key held by the running export job of one subject
/// and format (D8): a second request for it answers that job.
pub fn exporting(subject: &outbound_model::export::ExportSubject, format: &str) -> String {
    use outbound_model::export::ExportSubject;
    match subject {
        ExportSubject::DataSource { data_source_id } => {
            format!("EXPORTING#DS#{data_source_id}#{format}")
        }
        ExportSubject::Task {
            task_id,
            outcome_filter,
        } => format!("EXPORTING#TASK#{task_id}#{outcome_filter}#{format}"),
    }
}

/// Partition and sort key of an outbox item (D20): the event's own partition, so outbox writes
/// spread over the table; the sort key alone tells the publisher's stream filter it is one.
pub fn event(tenant: &Tenant, id: &Id) -> (String, String) {
    (format!("T#{}#EVT#{id}", tenant.as_str()), EVENT.to_owned())
}
pub const EVENT: &str = "EVENT";

/// The event id in the partition key of an outbox item ([`event`]).
pub fn event_id(pk: &str) -> Option<&str> {
    pk.rsplit_once("#EVT#").map(|(_, id)| id)
}

/// Sort key of an export job in the tenant partition (D8).
pub fn export(id: &Id) -> String {
    format!("EXPORT#{id}")
}

/// Sort keys of the items that make names unique within a tenant.
pub fn data_source_name(name: &str) -> String {
    format!("{DATA_SOURCE_NAME_PREFIX}{name}")
}
pub const DATA_SOURCE_NAME_PREFIX: &str = "DSNAME#";

/// Sort key (in the tenant partition) of the tenant's counts of tasks and data sources (D5).
pub const COUNTS: &str = "COUNTS";
pub fn task_name(name: &str) -> String {
    format!("TASKNAME#{name}")
}

/// Attribute names of the keys.
pub const PK: &str = "pk";
pub const SK: &str = "sk";
pub const GSI1: &str = "gsi1";
pub const GSI1_PK: &str = "gsi1pk";
pub const GSI1_SK: &str = "gsi1sk";

/// Partition of the service-wide dialing items: calls in flight, and the per-second rate slots.
pub const DIALER: &str = "DIALER";
/// Partition of shard `shard` of the service's dialing counters (calls in flight, the provider
/// rate): `DIALER` for shard 0, so a one-shard deployment keeps its keys; `DIALER#{n}` after.
pub fn dialer(shard: u32) -> String {
    match shard {
        0 => DIALER.to_owned(),
        n => format!("{DIALER}#{n}"),
    }
}

/// The part of `total` that shard `shard` of `shards` holds: `total / shards`, the remainder
/// one each to the first shards, so the parts add up to `total`.
pub fn shard_part(total: u32, shards: u32, shard: u32) -> u32 {
    let shards = shards.max(1);
    total / shards + u32::from(shard < total % shards)
}

/// Sort key, in the `DIALER` partition, of the service's verdict that the provider's campaign
/// quota is missing (D23).
pub const CAMPAIGN_QUOTA: &str = "CAMPAIGN_QUOTA";

/// Sort key of the count of calls in flight in the whole service (D13).
pub const CAPACITY: &str = "CAPACITY";

/// Sort key of the count of calls placed in one second (D13's provider rate).
pub fn rate_second(epoch_second: i64) -> String {
    format!("RATE#{epoch_second}")
}

/// How many partitions the reclaim index is spread over, and by default the running-task and
/// calls-in-flight indexes (`DIAL_INDEX_PARTITIONS`), so one tenant with thousands of running
/// tasks is not one hot key. (A "shard" is a record's own key spread over partitions: contact
/// shards, capacity shards.)
pub const INDEX_PARTITIONS: u32 = 16;

/// The partition of a record's entry in an index spread over `partitions`, from its key.
pub fn index_partition_of(key: &str, partitions: u32) -> u32 {
    fnv1a(key) % partitions.max(1)
}

/// FNV-1a of `key`: stable across processes and releases, so a shard chosen by it today is
/// found by it tomorrow.
pub fn fnv1a(key: &str) -> u32 {
    key.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// The 64-bit FNV-1a of `text`, as stable: where 32 bits would let distinct texts meet.
pub fn fnv1a_64(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// GSI1 partition `partition` of the running tasks: a task holds these keys only while RUNNING.
pub fn running_partition(partition: u32) -> String {
    format!("RUN#{partition:02}")
}

/// GSI1 partition of a task's contacts waiting for a retry or a recall call.
pub fn waiting(tenant: &Tenant, task: &Id) -> String {
    format!("T#{}#TASK#{}#WAIT", tenant.as_str(), task)
}

/// GSI1 sort key of a waiting contact: recalled ones by their recall priority (1-5), then the
/// plain retries (6), each by the time their next attempt is due.
pub fn waiting_order(recall_priority: Option<u8>, due_at_millis: i64) -> String {
    format!(
        "{}#{:013}",
        recall_priority.unwrap_or(6),
        due_at_millis.max(0)
    )
}

/// GSI1 sort key of a contact parked outside its window (D15, D24): after every other waiting
/// contact, first by the rules time it was judged under, then by when its window opens. A
/// change of the rules leaves the earlier ones as a prefix, read again whatever their time.
pub fn parked_order(rules_at_millis: i64, opens_at_millis: i64) -> String {
    format!(
        "{}#{:013}",
        parked_under(rules_at_millis),
        opens_at_millis.max(0)
    )
}

/// The start every [`parked_order`] of one rules time shares: those of earlier rules times sort
/// before it, its own after.
pub fn parked_under(rules_at_millis: i64) -> String {
    format!("{PARKED_RANK}{:013}", rules_at_millis.max(0))
}

/// The rank of [`parked_order`]: after the recall priorities (1-5) and plain retries (6).
pub const PARKED_RANK: &str = "7#";

/// GSI2 partition of the calls in flight of one shard, sorted by the time they were claimed,
/// so the tick finds the calls whose outcome never came without reading the others.
pub fn in_flight_partition(partition: u32) -> String {
    format!("FLY#{partition:02}")
}

/// GSI2 sort key of a call in flight: when it is next due a look (its claim, then each time the
/// provider said it was still live), then the contact.
pub fn in_flight_order(at: i64, contact: &Id) -> String {
    format!("{at:013}#{contact}")
}

/// Partition (and only key) of the record that maps a provider's call id to its attempt.
pub fn call(provider_call_id: &str) -> String {
    format!("CALL#{provider_call_id}")
}
pub const CALL: &str = "CALL";

pub const GSI2: &str = "gsi2";
pub const GSI2_PK: &str = "gsi2pk";
pub const GSI2_SK: &str = "gsi2sk";

/// Partition of the reclaim intents of one shard: written in the same transaction as the delete
/// of a data source or task, removed once its partition is empty, so no reclaim is ever lost.
pub fn reclaim_partition(partition: u32) -> String {
    format!("RECLAIM#{partition:02}")
}
