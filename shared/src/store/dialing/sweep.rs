//! A task's completion check (D13): its cursor over the data source, the sweep that finds
//! contacts never dialled or not final, and queueing the never-dialled ones.

use crate::error::Error;
use crate::model::task::TaskContact;
use crate::model::Tenant;
use crate::model::{Id, Task, Timestamp};
use crate::store::keys::{self, PK, SK};
use crate::store::{s, string_attr, to_item, Expr, Store, WriteFailure};
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

    /// Reads every contact id of the data source and every state of the task, to tell whether
    /// the task is over (D13). Only run when cheaper signs say it may be: nothing in flight,
    /// nothing waiting, the cursor at the end.
    pub async fn sweep(&self, tenant: &Tenant, task: &Task) -> Result<Sweep, Error> {
        let source_pk = keys::data_source(tenant, &task.data_source_id);
        let mut contacts = HashSet::new();
        self.query_pages(
            |query| {
                query
                    .key_condition_expression("pk = :pk AND sk BETWEEN :first AND :last")
                    .expression_attribute_values(":pk", s(&source_pk))
                    .expression_attribute_values(":first", s(keys::CONTACT_PREFIX))
                    .expression_attribute_values(":last", s(format!("{}~", keys::CONTACT_PREFIX)))
                    .projection_expression("sk")
                    .consistent_read(true)
            },
            |page| {
                contacts.extend(page.iter().filter_map(|item| {
                    string_attr(item, SK)?
                        .strip_prefix(keys::CONTACT_PREFIX)
                        .and_then(Id::parse)
                }));
                Ok(true)
            },
        )
        .await?;
        let states_pk = keys::task_contacts(tenant, &task.id);
        let mut sweep = Sweep::default();
        let mut seen = HashSet::new();
        self.query_pages(
            |query| {
                query
                    .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                    .expression_attribute_values(":pk", s(&states_pk))
                    .expression_attribute_values(":prefix", s(keys::CONTACT_PREFIX))
                    .projection_expression("sk, done")
                    .consistent_read(true)
            },
            |page| {
                for item in page {
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
                contact_id: id.clone(),
                attempts: 0,
                allowance: u32::from(task.settings.max_dial_count),
                last_outcome: 0,
                last_duration: 0,
                next_attempt_at: Some(now),
                priority: task.settings.priority,
                updated_at: now,
                done: false,
                recalled: false,
                in_call: None,
                claimed_at: None,
                call_id: None,
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
