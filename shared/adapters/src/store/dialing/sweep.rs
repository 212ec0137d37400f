//! A task's cursor over its data source and the slices runs take of it (D13, D23), and the
//! completion check: the sweep that finds contacts never dialled or not final, and queueing
//! the never-dialled ones.

use crate::store::keys::{self, PK, SK};
use crate::store::SendTo;
use crate::store::{n, s, string_attr, to_attribute, to_item, Expr, Store, WriteFailure};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::error::Error;
use outbound_model::task::{RunSlice, SweepMark, TaskContact};
use outbound_model::Tenant;
use outbound_model::{Id, Task, TaskStatus, Timestamp};
use std::collections::HashSet;

use super::Sweep;

impl Store {
    /// Takes the next slice of a task's never-dialled contacts for run `run` (D23): moves the
    /// cursor from where `task` (as read) had it to `to`, and keeps the run's `slice` (its room,
    /// its lapse, its contacts) beside those of other runs. Answers false, changing nothing,
    /// when another run moved the cursor or took a slice first (the run reads the task again and
    /// takes the slice after).
    pub async fn take_slice(
        &self,
        tenant: &Tenant,
        task: &Task,
        run: &str,
        to: Option<&str>,
        slice: &RunSlice,
    ) -> Result<bool, Error> {
        let value = to_attribute(slice)?;
        let mut expr = Expr::default()
            .name("#cursor", "cursor")
            .name("#status", "status")
            .value(":running", n(TaskStatus::Running.code()))
            .value(":revision", n(task.slice_revision + 1));
        let mut condition = vec!["#status = :running".to_owned()];
        match &task.cursor {
            Some(cursor) => {
                condition.push("#cursor = :from".to_owned());
                expr = expr.value(":from", s(cursor));
            }
            None => condition.push("attribute_not_exists(#cursor)".to_owned()),
        }
        // A task written before slices were kept has no revision: as good as 0.
        condition.push(if task.slice_revision == 0 {
            "(attribute_not_exists(slice_revision) OR slice_revision = :seen)".to_owned()
        } else {
            "slice_revision = :seen".to_owned()
        });
        expr = expr.value(":seen", n(task.slice_revision));
        // The map of slices is there once any run took one; only a slice taken (which this
        // condition excludes) could have made it since it was read without one.
        let mut update = if task.slices.is_empty() {
            expr = expr.value(
                ":slices",
                AttributeValue::M([(run.to_owned(), value)].into_iter().collect()),
            );
            "SET slices = :slices, slice_revision = :revision".to_owned()
        } else {
            expr = expr.name("#run", run).value(":slice", value);
            "SET slices.#run = :slice, slice_revision = :revision".to_owned()
        };
        if let Some(to) = to {
            update.push_str(", #cursor = :to");
            expr = expr.value(":to", s(to));
        }
        let written = self
            .update_one(
                "take a slice of contacts",
                (keys::tenant(tenant), keys::task(&task.id)),
                &update,
                Some(&condition.join(" AND ")),
                expr,
            )
            .await;
        WriteFailure::took_effect(written)
    }

    /// Ends run `run`'s slice and, when `back_to` is given, moves the cursor back there
    /// (`None`: before the first contact), on condition that it is still at `end`, where the
    /// run's slice left it. Answers false, changing nothing, when a later slice was taken
    /// meanwhile (or the task is gone): [`Store::give_back_room`] then ends the slice alone.
    pub async fn end_slice(
        &self,
        tenant: &Tenant,
        task: &Id,
        run: &str,
        end: Option<&str>,
        back_to: Option<Option<&str>>,
    ) -> Result<bool, Error> {
        let Some(back_to) = back_to else {
            self.give_back_room(tenant, task, run).await?;
            return Ok(true);
        };
        let mut expr = Expr::default().name("#cursor", "cursor").name("#run", run);
        let condition = match end {
            Some(end) => {
                expr = expr.value(":end", s(end));
                "#cursor = :end"
            }
            None => "attribute_not_exists(#cursor)",
        };
        let update = match back_to {
            None => "REMOVE #cursor, slices.#run".to_owned(),
            Some(back) => {
                expr = expr.value(":back", s(back));
                "SET #cursor = :back REMOVE slices.#run".to_owned()
            }
        };
        let written = self
            .update_one(
                "end a run's slice",
                (keys::tenant(tenant), keys::task(task)),
                &update,
                Some(condition),
                expr,
            )
            .await;
        WriteFailure::took_effect(written)
    }

    /// Ends run `run`'s slice: the room it took is free (idempotent: a slice ended or lapsed and
    /// cleared already changes nothing).
    pub async fn give_back_room(&self, tenant: &Tenant, task: &Id, run: &str) -> Result<(), Error> {
        let written = self
            .update_one(
                "give back a run's room",
                (keys::tenant(tenant), keys::task(task)),
                "REMOVE slices.#run",
                Some("attribute_exists(slices)"),
                Expr::default().name("#run", run),
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
                    let done = crate::store::flag_attr(&item, "done");
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
                .send_to(&self.backend)
                .await;
            WriteFailure::applied("queue never-dialled contact", result)?;
        }
        Ok(())
    }
}
