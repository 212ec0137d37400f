//! The caller IDs and contact flows the operator assigns a tenant (D22): the lists on the
//! tenant's settings record, and one guard item per number holding the tenant it belongs to, so
//! a number belongs to one tenant at a time.
//!
//! A tenant listing a number always holds its guard; a guard may be held without its number
//! being listed (an assignment that died between its two writes), and such a guard gives way
//! to another tenant that wants the number. An assignment takes the guards of the numbers it
//! adds (one transaction, each absent or already the tenant's), then writes the lists, the
//! defaults they leave and its event on condition that the settings are at the revision read,
//! then releases the guards of the numbers it removed. A release, like that commit, moves the
//! settings' revision on condition that it is as read, so an assignment that took a guard which
//! a release then gave back never commits: it reads again and takes it again. No transaction
//! holds more than 100 actions: the guards taken (at most 100 numbers), the commit (two), a
//! release (at most 99 guards and the settings).

use super::keys;
use super::{from_item, n, s, string_attr, Actions, Expr, Store};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::settings::TenantSettings;
use outbound_model::telephony::{Assignment, AssignmentChange, CallerIdChoice};
use outbound_model::{Id, TaskStatus, Tenant, Timestamp};
use serde::Deserialize;

/// The attribute of a caller ID guard naming its tenant.
const HOLDER: &str = "tenant";
/// Reads and tries of one assignment (or release) whose tenant's settings keep changing under it.
const TRIES: u32 = 5;
/// Guards released by one transaction, beside the tenant's settings.
const RELEASE_CHUNK: usize = 99;

/// What taking the guards of the numbers an assignment adds came to.
enum Taking {
    /// Every guard is the tenant's now.
    Done,
    /// A number's guard was held by a tenant that no longer lists it, and was given back on its
    /// behalf: take them again.
    Again,
}

impl Store {
    /// Replaces the tenant's caller IDs and contact flows with `assignment`, clearing a default
    /// it no longer holds, with the event `event` makes of what changed (D22, D25). 409 naming a
    /// number another tenant holds, or a task (DRAFT, RUNNING or PAUSED) that names a number or
    /// flow it removes; nothing changes then, and the guards this request took are given back.
    /// Answers the settings it leaves.
    pub async fn assign_telephony(
        &self,
        tenant: &Tenant,
        assignment: &Assignment,
        now: Timestamp,
        event: impl Fn(&AssignmentChange) -> Event,
    ) -> Result<TenantSettings, Error> {
        let mut taken = Vec::new();
        match self
            .try_assign(tenant, assignment, now, &event, &mut taken)
            .await
        {
            Ok((settings, change)) => {
                // The assignment stands whatever this does: a guard left held gives way to the
                // next tenant that wants its number.
                if let Err(error) = self
                    .release_caller_ids(tenant, &change.numbers_removed)
                    .await
                {
                    tracing::warn!(%error, "caller ID guards of removed numbers left held");
                }
                Ok(settings)
            }
            Err(refused) => {
                if let Err(error) = self.release_caller_ids(tenant, &taken).await {
                    tracing::warn!(%error, "caller ID guards of a refused assignment left held");
                }
                Err(refused)
            }
        }
    }

    async fn try_assign(
        &self,
        tenant: &Tenant,
        assignment: &Assignment,
        now: Timestamp,
        event: &impl Fn(&AssignmentChange) -> Event,
        taken: &mut Vec<String>,
    ) -> Result<(TenantSettings, AssignmentChange), Error> {
        #[derive(Clone, Copy, PartialEq)]
        enum Part {
            Settings,
            Event,
        }
        let mut lists = Expr::default()
            .value(":caller_ids", encode(&assignment.caller_ids)?)
            .value(":contact_flows", encode(&assignment.contact_flows)?)
            .value(":now", n(now.0));
        if let Some(queues) = &assignment.queues {
            lists = lists.value(":queues", encode(queues)?);
        }
        for attempt in 0..TRIES {
            let (before, revision) = self.settings_revised(tenant).await?;
            let change = assignment.change_from(&before);
            self.refuse_removing_what_tasks_name(tenant, &change)
                .await?;
            if let Taking::Again = self
                .take_caller_ids(tenant, &change.numbers_added, taken)
                .await?
            {
                continue;
            }
            let mut set = vec![
                "caller_ids = :caller_ids".to_owned(),
                "contact_flows = :contact_flows".to_owned(),
                "updated_at = :now".to_owned(),
            ];
            if assignment.queues.is_some() {
                set.push("queues = :queues".to_owned());
            }
            let mut remove = Vec::new();
            if change.clears_default_caller_id {
                remove.push("default_caller_id".to_owned());
            }
            if change.clears_default_contact_flow_id {
                remove.push("default_contact_flow_id".to_owned());
            }
            let actions = Actions::new(&self.table)
                .settings_at(
                    Part::Settings,
                    tenant,
                    revision,
                    &set,
                    &remove,
                    lists.clone(),
                )?
                .event(Part::Event, &event(&change))?;
            match self.transact("assign caller IDs and flows", actions).await {
                Ok(()) => {
                    let settings = TenantSettings {
                        caller_ids: assignment.caller_ids.clone(),
                        contact_flows: assignment.contact_flows.clone(),
                        queues: assignment.queues.clone().unwrap_or(before.queues),
                        default_caller_id: before
                            .default_caller_id
                            .filter(|_| !change.clears_default_caller_id),
                        default_contact_flow_id: before
                            .default_contact_flow_id
                            .filter(|_| !change.clears_default_contact_flow_id),
                        updated_at: Some(now),
                        ..before
                    };
                    return Ok((settings, change));
                }
                // The settings changed since they were read: read again.
                Err(failure) => {
                    failure.condition()?;
                    tokio::time::sleep(super::backoff(attempt)).await;
                }
            }
        }
        Err(Error::unavailable(
            "assign caller IDs and flows",
            "the tenant's settings kept changing while they were assigned",
        ))
    }

    /// 409 naming the first DRAFT, RUNNING or PAUSED task of the tenant whose caller ID or
    /// contact flow `change` removes. Reads the tenant's tasks (projected), at most its task
    /// limit of them, only when something is removed.
    async fn refuse_removing_what_tasks_name(
        &self,
        tenant: &Tenant,
        change: &AssignmentChange,
    ) -> Result<(), Error> {
        if change.numbers_removed.is_empty()
            && change.flows_removed.is_empty()
            && change.queues_removed.is_empty()
        {
            return Ok(());
        }
        #[derive(Deserialize)]
        struct Naming {
            id: Id,
            status: TaskStatus,
            #[serde(default)]
            settings: Named,
        }
        #[derive(Default, Deserialize)]
        struct Named {
            #[serde(default)]
            caller_id: Option<CallerIdChoice>,
            #[serde(default)]
            contact_flow_id: Option<String>,
            #[serde(default)]
            agents: Option<NamedQueue>,
        }
        #[derive(Deserialize)]
        struct NamedQueue {
            queue_id: String,
        }
        let pk = keys::tenant(tenant);
        let mut refusal = None;
        self.query_pages(
            |query| {
                query
                    .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                    .expression_attribute_values(":pk", s(&pk))
                    .expression_attribute_values(":prefix", s(keys::TASK_PREFIX))
                    .projection_expression(
                        "id, #status, #settings.caller_id, #settings.contact_flow_id, \
                         #settings.agents.queue_id",
                    )
                    .expression_attribute_names("#status", "status")
                    .expression_attribute_names("#settings", "settings")
                    .consistent_read(true)
            },
            |page| {
                for item in page {
                    let task: Naming = from_item(item)?;
                    if !matches!(
                        task.status,
                        TaskStatus::Draft | TaskStatus::Running | TaskStatus::Paused
                    ) {
                        continue;
                    }
                    let named = |what: &str, value: &str| {
                        Error::Conflict(format!(
                            "{what} {value} is named by task {}, which is {}",
                            task.id, task.status
                        ))
                    };
                    if let Some(CallerIdChoice::Number(number)) = &task.settings.caller_id {
                        if change.numbers_removed.contains(number) {
                            refusal = Some(named("callerId", number));
                            return Ok(false);
                        }
                    }
                    if let Some(flow) = &task.settings.contact_flow_id {
                        if change.flows_removed.contains(flow) {
                            refusal = Some(named("contactFlowId", flow));
                            return Ok(false);
                        }
                    }
                    if let Some(queue) = &task.settings.agents {
                        if change.queues_removed.contains(&queue.queue_id) {
                            refusal = Some(named("queueId", &queue.queue_id));
                            return Ok(false);
                        }
                    }
                }
                Ok(true)
            },
        )
        .await?;
        refusal.map_or(Ok(()), Err)
    }

    /// Whether caller ID `number` is `tenant`'s now (D22, D28): its guard names the tenant. A
    /// start sent again with its token presents the number the claim chose only while it is.
    pub async fn holds_caller_id(&self, tenant: &Tenant, number: &str) -> Result<bool, Error> {
        let (pk, sk) = keys::caller_id(number);
        let guard = self.get_item(pk, sk).await?;
        Ok(guard
            .as_ref()
            .and_then(|item| super::string_attr(item, HOLDER))
            == Some(tenant.as_str()))
    }

    /// Takes the guards of `numbers` for the tenant in one transaction: each must be absent or
    /// the tenant's already. A number another tenant lists is 409 naming it, and nothing is
    /// taken; one whose holder no longer lists it is given back on its holder's behalf
    /// ([`Taking::Again`]). Every number taken is added to `taken`.
    async fn take_caller_ids(
        &self,
        tenant: &Tenant,
        numbers: &[String],
        taken: &mut Vec<String>,
    ) -> Result<Taking, Error> {
        if numbers.is_empty() {
            return Ok(Taking::Done);
        }
        let mut actions = Actions::new(&self.table);
        for (at, number) in numbers.iter().enumerate() {
            let (pk, sk) = keys::caller_id(number);
            let item = [
                (keys::PK.to_owned(), s(pk)),
                (keys::SK.to_owned(), s(sk)),
                (HOLDER.to_owned(), s(tenant.as_str())),
            ];
            let condition = Expr::default()
                .name("#holder", HOLDER)
                .value(":tenant", s(tenant.as_str()));
            actions = actions.put(
                at,
                item.into(),
                Some(("attribute_not_exists(pk) OR #holder = :tenant", condition)),
            )?;
        }
        let failure = match self.transact("take caller IDs", actions).await {
            Ok(()) => {
                for number in numbers {
                    if !taken.contains(number) {
                        taken.push(number.clone());
                    }
                }
                return Ok(Taking::Done);
            }
            Err(failure) => failure.condition()?,
        };
        let Some((number, stored)) = (0..numbers.len())
            .filter(|at| failure.failed(*at))
            .find_map(|at| failure.stored(at).map(|item| (&numbers[at], item)))
        else {
            // The guard that refused is gone already: try again.
            return Ok(Taking::Again);
        };
        let holder = string_attr(stored, HOLDER)
            .and_then(|holder| Tenant::parse(holder).ok())
            .ok_or_else(|| Error::internal("take caller IDs", "a guard without its tenant"))?;
        let (held, _) = self.settings_revised(&holder).await?;
        if held.caller_ids.contains(number) {
            // The number only: who holds it is another tenant's business (D29).
            return Err(Error::Conflict(format!(
                "callerIds {number} is assigned to another tenant"
            )));
        }
        self.release_caller_ids(&holder, std::slice::from_ref(number))
            .await?;
        Ok(Taking::Again)
    }

    /// Gives back the guards the tenant holds of those of `numbers` its settings do not list,
    /// each transaction moving the settings' revision on condition that it is as read (see the
    /// module). A guard another tenant holds is left to it.
    pub(crate) async fn release_caller_ids(
        &self,
        tenant: &Tenant,
        numbers: &[String],
    ) -> Result<(), Error> {
        #[derive(Clone, Copy, PartialEq)]
        enum Part {
            Settings,
            Guard(usize),
        }
        // Released already, or held by another tenant: not asked for again.
        let mut settled: Vec<&String> = Vec::new();
        let mut attempt = 0;
        loop {
            let (settings, revision) = self.settings_revised(tenant).await?;
            let Some(chunk) = numbers
                .iter()
                .filter(|number| !settings.caller_ids.contains(number) && !settled.contains(number))
                .collect::<Vec<_>>()
                .chunks(RELEASE_CHUNK)
                .next()
                .map(<[&String]>::to_vec)
            else {
                return Ok(());
            };
            if attempt == TRIES {
                return Err(Error::unavailable(
                    "release caller IDs",
                    "the tenant's settings kept changing while its numbers were released",
                ));
            }
            let mut actions = Actions::new(&self.table).settings_at(
                Part::Settings,
                tenant,
                revision,
                &[],
                &[],
                Expr::default(),
            )?;
            for (at, number) in chunk.iter().enumerate() {
                let (pk, sk) = keys::caller_id(number);
                let condition = Expr::default()
                    .name("#holder", HOLDER)
                    .value(":tenant", s(tenant.as_str()));
                actions = actions.delete(
                    Part::Guard(at),
                    pk,
                    sk,
                    Some(("attribute_not_exists(pk) OR #holder = :tenant", condition)),
                )?;
            }
            match self.transact("release caller IDs", actions).await {
                // Released: the settings moved on, so the rest is read again with them.
                Ok(()) => {
                    if chunk.len() < RELEASE_CHUNK {
                        return Ok(());
                    }
                    settled.extend(chunk);
                }
                Err(failure) => {
                    let failure = failure.condition()?;
                    let held_by_others: Vec<&String> = (0..chunk.len())
                        .filter(|at| failure.failed(Part::Guard(*at)))
                        .map(|at| chunk[at])
                        .collect();
                    if held_by_others.is_empty() {
                        attempt += 1;
                        tokio::time::sleep(super::backoff(attempt)).await;
                    }
                    settled.extend(held_by_others);
                }
            }
        }
    }
}

/// A list as its settings attribute holds it.
fn encode<T: serde::Serialize>(value: &T) -> Result<AttributeValue, Error> {
    serde_dynamo::to_attribute_value(value).map_err(|e| Error::internal("encode assignment", e))
}
