//! The instance's claimed numbers, flows and queues, which an operator's assignment may name
//! (D22, D30): [`ConnectCatalog`].

use super::ConnectSettings;
use crate::aws::Dependency;
use crate::aws::Lazy;
use outbound_model::error::Error;
use outbound_model::settings::TenantSettings;
use outbound_model::telephony::Assignment;

/// The numbers claimed to the instance and its flows: what an operator's assignment may name
/// (D22). Every caller ID must be a number the instance has claimed (`ListPhoneNumbersV2` by the
/// instance's ARN, every page) and every flow one of its published, active contact flows
/// (`DescribeContactFlow`); only the entries the tenant does not hold already are asked about.
#[derive(Clone, Debug)]
pub struct ConnectCatalog {
    client: Lazy<aws_sdk_connect::Client>,
    settings: ConnectSettings,
}

impl ConnectCatalog {
    pub fn new(client: Lazy<aws_sdk_connect::Client>, settings: ConnectSettings) -> Self {
        ConnectCatalog { client, settings }
    }

    /// Every number claimed to the instance, in E.164.
    async fn claimed_numbers(&self) -> Result<std::collections::HashSet<String>, Error> {
        let request = self.client.get().list_phone_numbers_v2().max_results(1000);
        let request = match &self.settings.instance_arn {
            Some(arn) => request.target_arn(arn),
            None => request.instance_id(&self.settings.instance_id),
        };
        let mut pages = request.into_paginator().send();
        let mut claimed = std::collections::HashSet::new();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|error| Error::dependency("list claimed numbers", error))?;
            claimed.extend(
                page.list_phone_numbers_summary_list()
                    .iter()
                    .filter_map(|number| number.phone_number())
                    .map(str::to_owned),
            );
        }
        Ok(claimed)
    }

    /// Why the instance's queue `id` cannot be a tenant's (missing or disabled, D30); `None`
    /// when it can.
    async fn queue_refusal(&self, id: &str) -> Result<Option<&'static str>, Error> {
        use aws_sdk_connect::types::QueueStatus;
        let answer = self
            .client
            .get()
            .describe_queue()
            .instance_id(&self.settings.instance_id)
            .queue_id(id)
            .send()
            .await;
        let queue = match answer {
            Ok(output) => output.queue,
            Err(error) => {
                if (error.as_service_error()).is_some_and(|e| e.is_resource_not_found_exception()) {
                    return Ok(Some("is not a queue of the Amazon Connect instance"));
                }
                return Err(Error::dependency("describe queue", error));
            }
        };
        Ok(match queue {
            None => Some("is not a queue of the Amazon Connect instance"),
            Some(queue) if queue.status() == Some(&QueueStatus::Disabled) => {
                Some("is disabled in the Amazon Connect instance")
            }
            Some(_) => None,
        })
    }

    /// Why the instance's flow `id` cannot be a tenant's (missing, not published, archived, or
    /// not a contact flow); `None` when it can.
    async fn flow_refusal(&self, id: &str) -> Result<Option<&'static str>, Error> {
        use aws_sdk_connect::types::{ContactFlowState, ContactFlowType};
        let answer = self
            .client
            .get()
            .describe_contact_flow()
            .instance_id(&self.settings.instance_id)
            .contact_flow_id(id)
            .send()
            .await;
        let flow = match answer {
            Ok(output) => output.contact_flow,
            Err(error) => {
                let service = error.as_service_error();
                if service.is_some_and(|e| e.is_resource_not_found_exception()) {
                    return Ok(Some("is not a flow of the Amazon Connect instance"));
                }
                if service.is_some_and(|e| e.is_contact_flow_not_published_exception()) {
                    return Ok(Some("is not published in the Amazon Connect instance"));
                }
                return Err(Error::dependency("describe contact flow", error));
            }
        };
        Ok(match flow {
            None => Some("is not a flow of the Amazon Connect instance"),
            Some(flow) if flow.state() == Some(&ContactFlowState::Archived) => {
                Some("is archived in the Amazon Connect instance")
            }
            Some(flow) if flow.r#type() != Some(&ContactFlowType::ContactFlow) => {
                Some("is not a contact flow (its type is not CONTACT_FLOW)")
            }
            Some(_) => None,
        })
    }
}

impl crate::telephony::provider::Catalog for ConnectCatalog {
    async fn check(&self, assignment: &Assignment, held: &TenantSettings) -> Result<(), Error> {
        let new_numbers: Vec<(usize, &String)> = (assignment.caller_ids.iter().enumerate())
            .filter(|(_, number)| !held.caller_ids.contains(number))
            .collect();
        if !new_numbers.is_empty() {
            let claimed = self.claimed_numbers().await?;
            if let Some((at, number)) = new_numbers.iter().find(|(_, n)| !claimed.contains(*n)) {
                return Err(Error::invalid(format!(
                    "callerIds[{at}] {number} is not a number the Amazon Connect instance has claimed"
                )));
            }
        }
        for (at, flow) in assignment.contact_flows.iter().enumerate() {
            if held.holds_flow(&flow.id) {
                continue;
            }
            if let Some(why) = self.flow_refusal(&flow.id).await? {
                return Err(Error::invalid(format!(
                    "contactFlows[{at}].id {} {why}",
                    flow.id
                )));
            }
        }
        for (at, queue) in assignment.queues.iter().flatten().enumerate() {
            if held.holds_queue(&queue.id) {
                continue;
            }
            if let Some(why) = self.queue_refusal(&queue.id).await? {
                return Err(Error::invalid(format!(
                    "queues[{at}].id {} {why}",
                    queue.id
                )));
            }
        }
        Ok(())
    }
}
