//! A task's completion check (D13): its cursor over the data source, the sweep that finds
//! contacts never dialled or not final, and queueing the never-dialled ones.

use crate::store::keys::{self, PK, SK};
use crate::store::{n, s, string_attr, to_item, Expr, Store, WriteFailure};
use outbound_model::error::Error;
use outbound_model::task::{SweepMark, TaskContact};
use outbound_model::Tenant;
use outbound_model::{Id, Task, TaskStatus, Timestamp};
use std::collections::HashSet;

use super::Sweep;

impl Store {
    /// Moves a task's cursor forward to `sk` (never back).
    pub async fn advance_cursor(&self, tenant: &Tenant, task: &Id, sk: &str) -> Result<(), Error> {
        let written = self
            .update_one(
                "advance cursor",
                (keys::tenant(tenant), keys::task(task)),
                "SET #cursor = :sk",
                Some("attribute_exists(pk) AND (attribute_not_exists(#cursor) OR #cursor < :sk)"),
                Expr::default()
                    .name("#cursor", "cursor")
                    .value(":sk", s(sk)),
            )
            .await;
        WriteFailure::took_effect(written).map(drop)
    }

    /// One bounded step of the completion check (D13): up to `page` contacts of the data
    /// source after `after` (a contact's sort key; `None`: from the first), and the task's states
    /// of those contacts, each read once, consistently. Answers what the step found and where
    /// the next one starts (`None`: the data source is read to its end).
    pub async fn sweep_step(
        &self,
        tenant: &Tenant,
        task: &Task,
        after: Option<&str>,
        page: usize,
    ) -> Result<Sweep, Error> {
        // A data source gone meanwhile has nothing left to dial: the step finds nothing.
        let items = self
            .contacts_after_key(tenant, &task.data_source_id, after, page, "sk")
            .await?;
        let mut sweep = Sweep::default();
        let sorts: Vec<&str> = items
            .iter()
            .filter_map(|item| string_attr(item, SK))
            .collect();
        let (Some(&from), Some(&to)) = (sorts.first(), sorts.last()) else {
            return Ok(sweep);
        };
        if sorts.len() == page {
            sweep.next = Some(to.to_owned());
        }
        let contacts: HashSet<Id> = sorts
            .iter()
            .filter_map(|sk| sk.strip_prefix(keys::CONTACT_PREFIX).and_then(Id::parse))
            .collect();
        let states_pk = keys::task_contacts(tenant, &task.id);
        let mut seen = HashSet::new();
        self.query_pages(
            |query| {
                query
                    .key_condition_expression("pk = :pk AND sk BETWEEN :from AND :to")
                    .expression_attribute_values(":pk", s(&states_pk))
                    .expression_attribute_values(":from", s(from))
                    .expression_attribute_values(":to", s(to))
                    .projection_expression("sk, done")
                    .consistent_read(true)
            },
            |states| {
                for item in states {
                    let Some(id) = string_attr(&item, SK)
                        .and_then(|sk| sk.strip_prefix(keys::CONTACT_PREFIX))
                        .and_then(Id::parse)
                    else {
                        continue;
                    };
                    let done = item.get("done").and_then(|v| v.as_bool().ok()) == Some(&true);
                    if !done && contacts.contains(&id) {
                        sweep.unfinished += 1;
                    }
                    seen.insert(id);
                }
                Ok(true)
            },
        )
        .await?;
        sweep.never_dialled = contacts
            .into_iter()
            .filter(|id| !seen.contains(id))
            .collect();
        sweep.never_dialled.sort();
        Ok(sweep)
    }

    /// Records how far the completion check has read, while the task is RUNNING at the
    /// revision the mark names; a mark that no longer applies is simply not written.
    pub async fn save_sweep(
        &self,
        tenant: &Tenant,
        task: &Id,
        mark: &SweepMark,
    ) -> Result<(), Error> {
        let value = serde_dynamo::to_attribute_value(mark)
            .map_err(|e| Error::internal("encode sweep mark", e))?;
        let written = self
            .update_one(
                "save sweep mark",
                (keys::tenant(tenant), keys::task(task)),
                "SET sweep = :mark",
                Some("#status = :running AND (attribute_not_exists(revision) OR revision = :revision)"),
                Expr::default()
                    .name("#status", "status")
                    .value(":running", n(TaskStatus::Running.code()))
                    .value(":revision", n(mark.revision))
                    .value(":mark", value),
            )
            .await;
        WriteFailure::took_effect(written).map(drop)
    }

    /// Queues never-dialled contacts the cursor passed by (their ids were made before contacts
    /// stored earlier) as due now, unless they have a state already.
    pub async fn queue_never_dialled(
        &self,
        tenant: &Tenant,
        task: &Task,
        ids: &[Id],
        now: Timestamp,
    ) -> Result<(), Error> {
        let pk = keys::task_contacts(tenant, &task.id);
        for id in ids {
            let state = TaskContact {
                next_attempt_at: Some(now),
                ..TaskContact::undialled(
                    id.clone(),
                    u32::from(task.settings.max_dial_count),
                    task.settings.priority,
                    now,
                )
            };
            let item = to_item(
                &state,
                [
                    (PK, pk.clone()),
                    (SK, keys::contact(id)),
                    (keys::GSI1_PK, keys::waiting(tenant, &task.id)),
                    (keys::GSI1_SK, keys::waiting_order(None, now.0)),
                ],
            )?;
            let result = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(pk)")
                .send()
                .await;
            WriteFailure::applied("queue never-dialled contact", result)?;
        }
        Ok(())
    }
}
