//! A tenant's share of the service's heavy work: at most N imports, N export jobs and N recalls
//! applied by jobs of a tenant run at once (`TENANT_RUNNING_IMPORTS`, `TENANT_RUNNING_EXPORTS`,
//! `TENANT_RUNNING_RECALLS`, D32), one export job a subject (D8), and at most N direct exports
//! built within requests at once (`TENANT_MAX_DIRECT_EXPORTS`, D26). Each running job holds a slot item in the tenant's
//! partition (`JOBSLOT#{kind}#{n}`, `n` below the cap), taken by a conditional put and given back
//! when the job ends. A slot also lapses a while after it was taken (`held_until`: an hour for
//! background work, two minutes for work done within a request), so a job whose end was never
//! recorded (a worker or function that died, an upload URL never used) cannot hold it for ever.

use super::keys::{self, PK, SK};
use super::{n, s, string_attr, Expr, Item, Store, WriteFailure};
use crate::store::SendTo;
use outbound_model::error::Error;
use outbound_model::limits::Limited;
use outbound_model::{Id, Tenant, Timestamp};

/// How long a slot is held at most: past any import's or export's run (15 minutes, retried).
pub const SLOT_LEASE_MILLIS: i64 = 60 * 60 * 1000;

/// How long a slot taken within a request is held at most: four times the longest request
/// (API Gateway gives up after 30 s), so only a function that died leaves it that long.
pub const REQUEST_SLOT_LEASE_MILLIS: i64 = 2 * 60 * 1000;

/// The kinds of work a tenant's slots are counted for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// Imports of contacts (uploaded or posted) and of do-not-call entries.
    Import,
    /// Export jobs (D8).
    Export,
    /// Direct exports, built within the request (D26).
    DirectExport,
    /// Large recalls, applied apart from the request by the dialer's jobs (D12, D32).
    Recall,
}

impl JobKind {
    fn name(self) -> &'static str {
        match self {
            JobKind::Import => "IMPORT",
            JobKind::Export => "EXPORT",
            JobKind::DirectExport => "DIRECT_EXPORT",
            JobKind::Recall => "RECALL",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            JobKind::Import => "imports",
            JobKind::Export => "export jobs",
            JobKind::DirectExport => "direct exports",
            JobKind::Recall => "recalls",
        }
    }
}

pub(crate) fn slot_key(kind: JobKind, slot: u32) -> String {
    keys::job_slot(kind.name(), slot)
}

/// The item that holds a key for job `job` until `until`.
pub(crate) fn held(pk: String, sk: String, job: &Id, until: i64) -> Item {
    [
        (PK.to_owned(), s(pk)),
        (SK.to_owned(), s(sk)),
        ("job_id".to_owned(), s(job.as_str())),
        ("held_until".to_owned(), n(until)),
    ]
    .into()
}

/// When the lease of a held key ends (`held_until`, epoch milliseconds).
fn lease_end(item: &Item) -> Option<i64> {
    item.get("held_until")?.as_n().ok()?.parse().ok()
}

/// What [`Store::hold`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Hold {
    /// The key is now held by the job asking.
    Taken,
    /// Another job holds it: its id, when the stored item names one.
    HeldBy(Option<Id>),
}

/// Free, or held past its lease.
pub(crate) const FREE: &str = "attribute_not_exists(pk) OR held_until < :now";

/// The 409 of a tenant whose `cap` slots of `kind` are all held (D8; direct exports: the
/// tenant's limit, D26).
pub fn slots_full(kind: JobKind, cap: u32) -> Error {
    if kind == JobKind::DirectExport {
        return Limited::DirectExports.reached(u64::from(cap));
    }
    Error::Conflict(format!(
        "this tenant already has {cap} {} running, the most it may; try again when one has finished",
        kind.plural()
    ))
}

impl Store {
    /// Takes one of the tenant's `cap` slots of `kind` for job `job`, for at most an hour; 409
    /// naming the cap when every one is held (the job is not started).
    pub async fn take_job_slot(
        &self,
        tenant: &Tenant,
        kind: JobKind,
        job: &Id,
        cap: u32,
        now: Timestamp,
    ) -> Result<u32, Error> {
        self.take_slot(tenant, kind, job, cap, now, SLOT_LEASE_MILLIS)
            .await
    }

    /// Takes one of the tenant's `cap` slots of `kind` for work done within one request (`job`
    /// names it), for at most [`REQUEST_SLOT_LEASE_MILLIS`]: answers the slot, to be given back
    /// with [`Store::release_slot`]; 409 when every one is held.
    pub async fn take_request_slot(
        &self,
        tenant: &Tenant,
        kind: JobKind,
        job: &Id,
        cap: u32,
        now: Timestamp,
    ) -> Result<u32, Error> {
        self.take_slot(tenant, kind, job, cap, now, REQUEST_SLOT_LEASE_MILLIS)
            .await
    }

    /// The first free (or lapsed) of the tenant's `cap` slots of `kind`, taken for `job` until
    /// `lease_millis` after `now`: one conditional put a slot tried, none read first.
    async fn take_slot(
        &self,
        tenant: &Tenant,
        kind: JobKind,
        job: &Id,
        cap: u32,
        now: Timestamp,
        lease_millis: i64,
    ) -> Result<u32, Error> {
        for slot in 0..cap {
            let key = (keys::tenant(tenant), slot_key(kind, slot));
            if self.hold_for(key, job, None, now, lease_millis).await? == Hold::Taken {
                return Ok(slot);
            }
        }
        Err(slots_full(kind, cap))
    }

    /// Gives back slot `slot` of `kind` if job `job` still holds it: one conditional delete.
    pub async fn release_slot(
        &self,
        tenant: &Tenant,
        kind: JobKind,
        slot: u32,
        job: &Id,
    ) -> Result<(), Error> {
        self.release_held(keys::tenant(tenant), slot_key(kind, slot), job)
            .await
    }

    /// The first of the tenant's `cap` slots of `kind` that no job holds at `now`, read
    /// consistently; `None` when every one is held.
    pub async fn free_job_slot(
        &self,
        tenant: &Tenant,
        kind: JobKind,
        cap: u32,
        now: Timestamp,
    ) -> Result<Option<u32>, Error> {
        let prefix = keys::job_slots(kind.name());
        let slots = self
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                        .expression_attribute_values(":pk", s(keys::tenant(tenant)))
                        .expression_attribute_values(":prefix", s(&prefix))
                        .projection_expression("sk, held_until")
                        .consistent_read(true)
                },
                None,
            )
            .await?;
        let held: Vec<&str> = slots
            .iter()
            .filter(|slot| lease_end(slot).is_some_and(|until| until >= now.0))
            .filter_map(|slot| string_attr(slot, SK))
            .collect();
        Ok((0..cap).find(|&slot| !held.contains(&slot_key(kind, slot).as_str())))
    }

    /// The job that holds the key `(pk, sk)` at `now`, read consistently; `None` when the key is
    /// free or its lease has run out.
    pub async fn holder(
        &self,
        (pk, sk): (String, String),
        now: Timestamp,
    ) -> Result<Option<Id>, Error> {
        let Some(item) = self.get_item(pk, sk).await? else {
            return Ok(None);
        };
        if lease_end(&item).is_none_or(|until| until < now.0) {
            return Ok(None);
        }
        Ok(string_attr(&item, "job_id").and_then(Id::parse))
    }

    /// Gives back the slot job `job` holds, if it still holds one.
    pub async fn release_job_slot(
        &self,
        tenant: &Tenant,
        kind: JobKind,
        job: &Id,
    ) -> Result<(), Error> {
        let prefix = keys::job_slots(kind.name());
        let slots = self
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                        .filter_expression("job_id = :job")
                        .expression_attribute_values(":pk", s(keys::tenant(tenant)))
                        .expression_attribute_values(":prefix", s(&prefix))
                        .expression_attribute_values(":job", s(job.as_str()))
                        .projection_expression("sk")
                        .consistent_read(true)
                },
                None,
            )
            .await?;
        for slot in slots {
            if let Some(sk) = string_attr(&slot, SK) {
                self.release_held(keys::tenant(tenant), sk.to_owned(), job)
                    .await?;
            }
        }
        Ok(())
    }

    /// Takes the key `(pk, sk)` for job `job` unless another job holds it, and says which
    /// happened. A holder named in `replace` is replaced (the caller found that job ended).
    pub async fn hold(
        &self,
        key: (String, String),
        job: &Id,
        replace: Option<&Id>,
        now: Timestamp,
    ) -> Result<Hold, Error> {
        self.hold_for(key, job, replace, now, SLOT_LEASE_MILLIS)
            .await
    }

    /// [`Store::hold`] for at most `lease_millis`.
    async fn hold_for(
        &self,
        (pk, sk): (String, String),
        job: &Id,
        replace: Option<&Id>,
        now: Timestamp,
        lease_millis: i64,
    ) -> Result<Hold, Error> {
        let (condition, expr) = match replace {
            Some(old) => (
                format!("{FREE} OR job_id = :old"),
                Expr::default().value(":old", s(old.as_str())),
            ),
            None => (FREE.to_owned(), Expr::default()),
        };
        let expr = expr.value(":now", n(now.0));
        let written = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(held(pk, sk, job, now.0 + lease_millis)))
            .set_expression_attribute_values(expr.values(&[Some(&condition)]))
            .condition_expression(condition)
            .return_values_on_condition_check_failure(
                aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld,
            )
            .send_to(&self.backend)
            .await;
        match written.map_err(|error| WriteFailure::from_sdk("hold", error)) {
            Ok(_) => Ok(Hold::Taken),
            Err(WriteFailure::Condition(failure)) => Ok(Hold::HeldBy(
                failure
                    .stored(())
                    .and_then(|item| string_attr(item, "job_id"))
                    .and_then(Id::parse),
            )),
            Err(WriteFailure::Other(error)) => Err(error),
        }
    }

    /// Gives back the key `(pk, sk)` if job `job` still holds it.
    pub async fn release_held(&self, pk: String, sk: String, job: &Id) -> Result<(), Error> {
        let deleted = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(pk))
            .key(SK, s(sk))
            .condition_expression("job_id = :job")
            .expression_attribute_values(":job", s(job.as_str()))
            .send_to(&self.backend)
            .await;
        WriteFailure::applied("release held key", deleted).map(drop)
    }
}
