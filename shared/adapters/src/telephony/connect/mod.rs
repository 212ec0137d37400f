//! The Amazon Connect telephony provider (D13). This module owns everything Connect-specific:
//! placing calls with `StartOutboundVoiceContact` and reading them back with `DescribeContact`
//! ([`ConnectProvider`], in `calls`), including which API errors refuse the task, the number,
//! or only this moment; reading the contact events EventBridge delivers to the call-events
//! queue ([`parse_event`], in `events`); and the one mapping from Connect's disconnect reasons
//! and answering-machine statuses to the outcomes of D13 ([`report`], in `reasons`), shared by
//! events and `DescribeContact`; and the instance's claimed numbers and flows, which an
//! operator's assignment may name (D22: [`ConnectCatalog`], in `catalog`). This file holds what
//! they share: the SDK client ([`client`], its requests recorded for `AWS_ACTION_LOG`) and the
//! bounds Connect sets on a contact's attributes ([`attributes_fit`]).

mod calls;
mod catalog;
mod events;
mod reasons;

pub use super::settings::{CallerSource, ConnectSettings};
pub use calls::ConnectProvider;
pub use catalog::ConnectCatalog;
pub use events::{parse_event, ContactEvent, Disconnect};
pub use reasons::{abandoned_in_queue, report};

use crate::aws::actions;
use aws_sdk_connect::operation::start_outbound_voice_contact::StartOutboundVoiceContactInput;
use std::collections::BTreeMap;

/// The most UTF-8 bytes a contact's user-defined attributes may hold, keys and values together
/// (StartOutboundVoiceContact's `Attributes`, and the instance's quota of 32 KB of attributes
/// per contact): past it, Connect sends the contact down its flow's Error branch.
pub const ATTRIBUTES_MAX_BYTES: usize = 32_768;

/// Whether `attributes`, with `reserved` bytes more that the flow may set, fit what Connect
/// takes: every key 1-32,767 letters, digits, `-` and `_`, every value at most 32,767 bytes,
/// and all of them at most [`ATTRIBUTES_MAX_BYTES`].
pub fn attributes_fit(attributes: &BTreeMap<String, String>, reserved: usize) -> bool {
    const ONE_MOST: usize = 32_767;
    let key_ok = |key: &str| {
        (1..=ONE_MOST).contains(&key.len())
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let mut total = reserved;
    for (key, value) in attributes {
        if !key_ok(key) || value.len() > ONE_MOST {
            return false;
        }
        total += key.len() + value.len();
    }
    total <= ATTRIBUTES_MAX_BYTES
}

/// The Amazon Connect client of `sdk`, its calls recorded when `AWS_ACTION_LOG` is set
/// ([`crate::aws::actions`]).
pub fn client(sdk: &aws_config::SdkConfig) -> aws_sdk_connect::Client {
    let builder = aws_sdk_connect::config::Builder::from(sdk);
    let builder = match actions::interceptor(recorded_actions) {
        Some(log) => builder.interceptor(log),
        None => builder,
    };
    aws_sdk_connect::Client::from_conf(builder.build())
}

/// What a Connect request needs: its action on the contacts, flows or numbers of the instance it
/// names.
fn recorded_actions(operation: &str, input: &actions::Input) -> Vec<actions::Access> {
    use aws_sdk_connect::operation as op;
    // The operation's name is not known yet where the log reads the request: the input says.
    if let Some(input) = input.downcast_ref::<op::describe_contact_flow::DescribeContactFlowInput>()
    {
        return vec![actions::Access::new(
            "connect:DescribeContactFlow",
            format!(
                "connect/{}/contact-flow/{}",
                input.instance_id().unwrap_or_default(),
                input.contact_flow_id().unwrap_or_default()
            ),
        )];
    }
    if let Some(input) = input.downcast_ref::<op::describe_queue::DescribeQueueInput>() {
        return vec![actions::Access::new(
            "connect:DescribeQueue",
            format!(
                "connect/{}/queue/{}",
                input.instance_id().unwrap_or_default(),
                input.queue_id().unwrap_or_default()
            ),
        )];
    }
    if let Some(input) =
        input.downcast_ref::<op::get_current_metric_data::GetCurrentMetricDataInput>()
    {
        let instance = input.instance_id().unwrap_or_default();
        let queues = input.filters().map(|f| f.queues()).unwrap_or_default();
        return queues
            .iter()
            .map(|queue| {
                actions::Access::new(
                    "connect:GetCurrentMetricData",
                    format!("connect/{instance}/queue/{queue}"),
                )
            })
            .collect();
    }
    if let Some(input) = input.downcast_ref::<op::list_phone_numbers_v2::ListPhoneNumbersV2Input>()
    {
        let instance = (input.instance_id())
            .or_else(|| input.target_arn().and_then(|arn| arn.rsplit('/').next()));
        return vec![actions::Access::new(
            "connect:ListPhoneNumbersV2",
            format!("connect/{}/phone-number/*", instance.unwrap_or_default()),
        )];
    }
    let (action, instance) = if let Some(input) =
        input.downcast_ref::<StartOutboundVoiceContactInput>()
    {
        ("StartOutboundVoiceContact", input.instance_id())
    } else if let Some(input) = input.downcast_ref::<op::describe_contact::DescribeContactInput>() {
        ("DescribeContact", input.instance_id())
    } else if let Some(input) =
        input.downcast_ref::<op::get_contact_attributes::GetContactAttributesInput>()
    {
        ("GetContactAttributes", input.instance_id())
    } else {
        (operation, None)
    };
    vec![actions::Access::new(
        format!("connect:{action}"),
        format!("connect/{}/contact/*", instance.unwrap_or_default()),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telephony::provider::CallRequest;
    use outbound_model::telephony::Voicemail;
    use outbound_model::Id;

    /// The request of one attempt to `phone`, as the engine makes it; the tests of `calls` use
    /// it too.
    pub(super) fn call(phone: &str) -> CallRequest {
        let attempt = outbound_model::call::CallAttempt {
            tenant: outbound_model::Tenant::parse("acme").unwrap(),
            task_id: Id::parse("01HZX3K5Q8M2N4P6R8T0V2W4Y6").unwrap(),
            contact_id: Id::parse("01HZX3K9B7C5D3E1F0G2H4J6K8").unwrap(),
            attempt: 2,
        };
        CallRequest {
            attributes: attempt.attributes().into_iter().collect(),
            tenant: attempt.tenant,
            task_id: attempt.task_id,
            contact_id: attempt.contact_id,
            attempt: attempt.attempt,
            to: format!("+{}", phone.trim_start_matches('+')),
            script: None,
            caller_id: None,
            contact_flow_id: None,
            voicemail: Voicemail::HangUp,
            simulated_results: None,
            queue_id: None,
        }
    }

    #[test]
    fn attributes_fit_connects_bounds() {
        let own = call("+12125550199").attributes;
        let own_bytes: usize = own.iter().map(|(k, v)| k.len() + v.len()).sum();
        assert!(attributes_fit(&own, ATTRIBUTES_MAX_BYTES - own_bytes));
        assert!(!attributes_fit(&own, ATTRIBUTES_MAX_BYTES - own_bytes + 1));
        let mut big = own.clone();
        // Bytes, not characters: 8,192 four-byte characters are 32 KB.
        big.insert("note".into(), "😀".repeat(8_192));
        assert!(!attributes_fit(&big, 0));
        big.insert("note".into(), "😀".repeat(8_000));
        assert!(attributes_fit(&big, 0));
        let mut odd = own;
        odd.insert("has space".into(), "x".into());
        assert!(!attributes_fit(&odd, 0), "keys: letters, digits, - and _");
    }
}
