//! Exports (D8): export job records in the tenant partition (`T#{tenant}` / `EXPORT#{id}`),
//! stored with their subject's key and their tenant slot in one transaction, and
//! the ordered, page-at-a-time reads an export is built from: a data source's contacts and a
//! task's per-contact states, both ascending by contact id, so a task export is a merge join
//! that never holds either partition in memory.

use super::keys::{self, HEAD, PK, SK};
use super::shards::Merged;
use super::slots::{held, slot_key, JobKind, FREE, SLOT_LEASE_MILLIS};
use super::{
    flag_attr, from_item, n, s, string_attr, to_item, Actions, Expr, Item, QueryBuilder, Store,
    WriteFailure,
};
use crate::aws::Dependency;
use crate::store::SendTo;
use outbound_model::contact::status;
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::export::ExportJob;
use outbound_model::telephony::Results;
use outbound_model::Tenant;
use outbound_model::{Contact, DataSource, Id, Timestamp};

use std::collections::VecDeque;

/// A build claim older than this may be taken over: the worker that held it is gone (the
/// exporter's timeout is 15 minutes).
pub const STALE_EXPORT_CLAIM_MILLIS: i64 = 20 * 60 * 1000;

/// A job no worker holds. Stored jobs leave `claimed_at` out while unclaimed; a NULL one counts
/// as unclaimed too (DynamoDB compares NULL with nothing, so `claimed_at < :stale` is false).
const UNCLAIMED: &str = "(attribute_not_exists(claimed_at) OR attribute_type(claimed_at, :null))";

fn export_not_found(id: &Id) -> Error {
    Error::NotFound(format!("export {id} not found"))
}

/// What [`Store::start_export`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum ExportStart {
    /// The job is stored, holding its subject's key and its slot.
    Started,
    /// Another job holds the subject's key: its id, when the stored key names one. Nothing was
    /// written.
    SubjectHeld(Option<Id>),
    /// Another job took the slot meanwhile. Nothing was written.
    SlotTaken,
}

/// How a claimed (or, for `claim = None`, a not yet claimed) export job ends.
#[derive(Debug)]
pub enum ExportSettlement {
    /// The file is stored.
    Succeeded {
        file_name: String,
        row_count: u64,
        object_key: String,
    },
    /// Refused, or not built in its attempts: the message is shown as `error`.
    Failed(String),
    /// Still PROCESSING, but free to be claimed again at once (a retryable failure).
    Released,
}

impl Store {
    /// Stores a new export job (D8) with what it holds while it runs, in one transaction: the
    /// key of its subject and format (`EXPORTING#...`, free, lapsed, or held by `replace`, a job
    /// the caller found ended), the tenant's job slot `slot` (free or lapsed), and its record. So
    /// a key that names a job names a stored one, and of concurrent starts of one subject one
    /// is stored and the others find it.
    pub async fn start_export(
        &self,
        tenant: &Tenant,
        job: &ExportJob,
        slot: u32,
        replace: Option<&Id>,
    ) -> Result<ExportStart, Error> {
        #[derive(Clone, Copy, Debug, PartialEq)]
        enum Part {
            Subject,
            Slot,
            Record,
        }
        let now = job.created_at;
        let until = now.0 + SLOT_LEASE_MILLIS;
        let pk = keys::tenant(tenant);
        let subject = keys::exporting(&job.subject, &job.format);
        let (subject_free, subject_expr) = match replace {
            Some(old) => (
                format!("{FREE} OR job_id = :old"),
                Expr::default()
                    .value(":now", n(now.0))
                    .value(":old", s(old.as_str())),
            ),
            None => (FREE.to_owned(), Expr::default().value(":now", n(now.0))),
        };
        let record = to_item(job, [(PK, pk.clone()), (SK, keys::export(&job.id))])?;
        let actions = Actions::new(&self.table)
            .put(
                Part::Subject,
                held(pk.clone(), subject, &job.id, until),
                Some((&subject_free, subject_expr)),
            )?
            .put(
                Part::Slot,
                held(pk, slot_key(JobKind::Export, slot), &job.id, until),
                Some((FREE, Expr::default().value(":now", n(now.0)))),
            )?
            .put(
                Part::Record,
                record,
                Some(("attribute_not_exists(pk)", Expr::default())),
            )?;
        let failure = match self.transact("start export", actions).await {
            Ok(()) => return Ok(ExportStart::Started),
            Err(failure) => failure.condition()?,
        };
        if failure.failed(Part::Subject) {
            let holder = failure
                .stored(Part::Subject)
                .and_then(|item| string_attr(item, "job_id"))
                .and_then(Id::parse);
            Ok(ExportStart::SubjectHeld(holder))
        } else if failure.failed(Part::Slot) {
            Ok(ExportStart::SlotTaken)
        } else {
            Err(Error::internal(
                "start export",
                format!("export {} is stored already", job.id),
            ))
        }
    }

    /// One export job of the tenant, read consistently; another tenant's is not found (D3).
    pub async fn export_job(&self, tenant: &Tenant, id: &Id) -> Result<ExportJob, Error> {
        let item = self
            .get_item(keys::tenant(tenant), keys::export(id))
            .await?
            .ok_or_else(|| export_not_found(id))?;
        from_item(item)
    }

    /// Takes a PROCESSING job for building: only one worker gets it, however often its message
    /// is delivered, unless the claim has gone stale. Counts the attempt. `None` when there is
    /// nothing to do now (settled, missing, or claimed by another worker).
    pub async fn claim_export(
        &self,
        tenant: &Tenant,
        id: &Id,
        now: Timestamp,
    ) -> Result<Option<ExportJob>, Error> {
        let condition = format!(
            "attribute_exists(pk) AND #status = :processing AND ({UNCLAIMED} OR claimed_at < :stale)"
        );
        let written = self
            .update_one(
                "claim export",
                (keys::tenant(tenant), keys::export(id)),
                "SET claimed_at = :now, updated_at = :now ADD attempts :one",
                Some(&condition),
                Expr::default()
                    .name("#status", "status")
                    .value(":processing", s("PROCESSING"))
                    .value(":null", s("NULL"))
                    .value(":now", n(now.0))
                    .value(":one", n(1))
                    .value(":stale", n(now.0 - STALE_EXPORT_CLAIM_MILLIS)),
            )
            .await;
        WriteFailure::updated(written)
    }

    /// Ends a PROCESSING job as `settlement` says, if it is still held by `claim` (the worker's
    /// claim time), or, with `claim = None`, if no worker has claimed it. Answers whether it
    /// did: `false` means the job was settled or taken over meanwhile, and nothing changed.
    pub async fn settle_export(
        &self,
        tenant: &Tenant,
        job: &ExportJob,
        claim: Option<Timestamp>,
        settlement: ExportSettlement,
        at: Timestamp,
    ) -> Result<bool, Error> {
        let held = match claim {
            Some(_) => "claimed_at = :claim",
            None => UNCLAIMED,
        };
        let expr = Expr::default()
            .name("#status", "status")
            .value(":processing", s("PROCESSING"))
            .value(":at", n(at.0));
        let expr = match claim {
            Some(claim) => expr.value(":claim", n(claim.0)),
            None => expr.value(":null", s("NULL")),
        };
        // An end carries its event (D20); a release, none.
        let (update, expr, event) = match settlement {
            ExportSettlement::Succeeded {
                file_name,
                row_count,
                object_key,
            } => (
                "SET #status = :succeeded, file_name = :file, row_count = :rows, \
                 object_key = :key, updated_at = :at REMOVE claimed_at, #error",
                expr.name("#error", "error")
                    .value(":succeeded", s("SUCCEEDED"))
                    .value(":file", s(&file_name))
                    .value(":rows", n(row_count))
                    .value(":key", s(object_key)),
                Some(Event::export_finished(
                    tenant,
                    at,
                    job,
                    Some((&file_name, row_count)),
                    None,
                )),
            ),
            ExportSettlement::Failed(message) => (
                "SET #status = :failed, #error = :error, updated_at = :at REMOVE claimed_at",
                expr.name("#error", "error")
                    .value(":failed", s("FAILED"))
                    .value(":error", s(&message)),
                Some(Event::export_finished(
                    tenant,
                    at,
                    job,
                    None,
                    Some(&message),
                )),
            ),
            ExportSettlement::Released => ("SET updated_at = :at REMOVE claimed_at", expr, None),
        };
        let condition = format!("attribute_exists(pk) AND #status = :processing AND {held}");
        let key = (keys::tenant(tenant), keys::export(&job.id));
        let Some(event) = event else {
            let written = self
                .update_one("settle export", key, update, Some(&condition), expr)
                .await;
            return WriteFailure::took_effect(written);
        };
        #[derive(PartialEq)]
        enum Part {
            Job,
            Event,
        }
        let actions = Actions::new(&self.table)
            .update(Part::Job, key.0, key.1, update, Some(&condition), expr)?
            .event(Part::Event, &event)?;
        match self.transact("settle export", actions).await {
            Ok(()) => Ok(true),
            Err(failure) => failure.condition().map(|_| false),
        }
    }

    /// A data source's contacts, oldest first, a page at a time, its shards merged (404 when
    /// it is gone).
    pub async fn contact_pages(&self, tenant: &Tenant, source: &Id) -> Result<ContactPages, Error> {
        let shards = self.shards(tenant, source).await?;
        let read = Merged::new(
            self,
            &shards,
            |query| {
                query
                    .key_condition_expression("pk = :pk AND sk BETWEEN :first AND :head")
                    .expression_attribute_values(":first", s(keys::CONTACT_PREFIX))
                    .expression_attribute_values(":head", s(HEAD))
            },
            true,
            None,
            Some(super::shards::shard_page(CONTACT_PAGE, shards.count())),
        );
        Ok(ContactPages {
            read,
            done: false,
            head: None,
        })
    }

    /// A task's per-contact states (outcome and attempts only), in contact id order, read a
    /// page at a time as [`TaskStates::read_through`] asks.
    pub fn task_states(&self, tenant: &Tenant, task: &Id) -> TaskStates {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
            .expression_attribute_values(":pk", s(keys::task_contacts(tenant, task)))
            .expression_attribute_values(":prefix", s(keys::CONTACT_PREFIX))
            .projection_expression(
                "sk, #outcome, #attempts, #reason, #skip, caller_id, message_left, results, \
                 callback_at",
            )
            .expression_attribute_names("#outcome", "last_outcome")
            .expression_attribute_names("#attempts", "attempts")
            .expression_attribute_names("#reason", "last_reason")
            .expression_attribute_names("#skip", "skip");
        TaskStates {
            pages: Pages::new(query, self.backend.clone()),
            buffered: VecDeque::new(),
        }
    }
}

/// One ascending Query, followed a page at a time on demand.
struct Pages {
    query: QueryBuilder,
    backend: super::Backend,
    start: Option<Item>,
    done: bool,
}

impl Pages {
    fn new(query: QueryBuilder, backend: super::Backend) -> Self {
        Pages {
            query,
            backend,
            start: None,
            done: false,
        }
    }

    /// The next page, or `None` once the Query has no more.
    async fn next(&mut self) -> Result<Option<Vec<Item>>, Error> {
        if self.done {
            return Ok(None);
        }
        let output = self
            .query
            .clone()
            .set_exclusive_start_key(self.start.take())
            .send_to(&self.backend)
            .await
            .map_err(|e| Error::dependency("query", e))?;
        self.start = output.last_evaluated_key;
        self.done = self.start.is_none();
        Ok(Some(output.items.unwrap_or_default()))
    }
}

/// Contacts a page of [`ContactPages`] holds.
const CONTACT_PAGE: usize = 1_000;

/// See [`Store::contact_pages`].
pub struct ContactPages {
    read: Merged,
    done: bool,
    head: Option<DataSource>,
}

impl ContactPages {
    /// The next page of contacts (possibly empty), or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<Vec<Contact>>, Error> {
        if self.done {
            return Ok(None);
        }
        let items = self.read.next(CONTACT_PAGE).await?;
        self.done = items.len() < CONTACT_PAGE;
        let mut contacts = Vec::with_capacity(items.len());
        for item in items {
            if string_attr(&item, SK) == Some(HEAD) {
                self.head = Some(from_item(item)?);
            } else {
                contacts.push(from_item(item)?);
            }
        }
        Ok(Some(contacts))
    }

    /// The data source, once its head (which sorts after every contact) has been read.
    pub fn head(&self) -> Option<&DataSource> {
        self.head.as_ref()
    }
}

/// See [`Store::task_states`]. Contacts without a state were never dialled in the task.
pub struct TaskStates {
    pages: Pages,
    /// (contact sort key, its state), ascending, not yet matched.
    buffered: VecDeque<(String, TaskCell)>,
}

/// What a task export shows of a contact's state in the task (D8, D18, D22).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskCell {
    pub outcome: u8,
    pub attempts: u32,
    /// Why its latest attempt ended.
    pub last_reason: Option<String>,
    /// Why it was last not called, while that holds.
    pub skip: Option<String>,
    /// The number its latest attempt called from.
    pub caller_id: Option<String>,
    /// Its latest attempt left the task's message on voicemail.
    pub message_left: bool,
    /// What the flow of its latest answered attempt reported.
    pub results: Results,
    /// The time of its latest callback (D31).
    pub callback_at: Option<Timestamp>,
}

impl TaskStates {
    /// Reads pages until every state up to the contact `id` is buffered.
    pub async fn read_through(&mut self, id: &Id) -> Result<(), Error> {
        let wanted = keys::contact(id);
        while self.buffered.back().is_none_or(|(sk, _)| *sk < wanted) {
            let Some(items) = self.pages.next().await? else {
                return Ok(());
            };
            for item in items {
                let number = |name: &str| {
                    item.get(name)
                        .and_then(|value| value.as_n().ok())
                        .and_then(|raw| raw.parse::<u32>().ok())
                        .unwrap_or(0)
                };
                let Some(sk) = string_attr(&item, SK) else {
                    continue;
                };
                let outcome = u8::try_from(number("last_outcome")).unwrap_or(status::NOT_DIALLED);
                let text = |name: &str| string_attr(&item, name).map(str::to_owned);
                let cell = TaskCell {
                    outcome,
                    attempts: number("attempts"),
                    last_reason: text("last_reason"),
                    skip: text("skip"),
                    caller_id: text("caller_id"),
                    message_left: flag_attr(&item, "message_left"),
                    results: item
                        .get("results")
                        .and_then(|value| value.as_m().ok())
                        .map(|results| {
                            results
                                .iter()
                                .filter_map(|(name, value)| {
                                    Some((name.clone(), value.as_s().ok()?.clone()))
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                    callback_at: item
                        .get("callback_at")
                        .and_then(|value| value.as_n().ok())
                        .and_then(|raw| raw.parse::<i64>().ok())
                        .map(Timestamp),
                };
                self.buffered.push_back((sk.to_owned(), cell));
            }
        }
        Ok(())
    }

    /// The outcome and attempts of contact `id` in the task, if it has a state. Contacts must be
    /// asked for in ascending order, each after [`Self::read_through`] reached it; states of
    /// smaller ids (contacts since deleted from the data source) are passed over.
    pub fn take(&mut self, id: &Id) -> Option<TaskCell> {
        let wanted = keys::contact(id);
        while let Some((sk, _)) = self.buffered.front() {
            match sk.as_str().cmp(wanted.as_str()) {
                std::cmp::Ordering::Less => {
                    self.buffered.pop_front();
                }
                std::cmp::Ordering::Equal => {
                    return self.buffered.pop_front().map(|(_, cell)| cell);
                }
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }

    /// States buffered and not yet matched (for tests of the bounded memory).
    pub fn buffered(&self) -> usize {
        self.buffered.len()
    }
}
