//! The Amazon Connect telephony provider (D13). This module owns everything Connect-specific:
//! placing calls with `StartOutboundVoiceContact` and reading
//! them back with `DescribeContact` ([`ConnectProvider`]), including which API errors refuse the
//! task, the number, or only this moment; reading the contact events EventBridge delivers to the
//! call-events queue ([`parse_event`]); and the one mapping from Connect's disconnect reasons and
//! answering-machine statuses to the outcomes of D13 ([`report`]), shared by events and
//! `DescribeContact`; and the instance's claimed numbers and flows, which an operator's
//! assignment may name (D22: [`ConnectCatalog`]).

use super::provider::{Busy, CallRequest, CallStatus, PlaceError, Provider, ServiceRefusal};
pub use super::settings::{CallerSource, ConnectSettings};
use crate::aws::actions;
use crate::aws::Dependency;
use crate::aws::Lazy;
use aws_sdk_connect::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_connect::operation::describe_contact::DescribeContactError;
use aws_sdk_connect::operation::start_outbound_voice_contact::builders::StartOutboundVoiceContactInputBuilder;
use aws_sdk_connect::operation::start_outbound_voice_contact::{
    StartOutboundVoiceContactError, StartOutboundVoiceContactInput,
};
use aws_sdk_connect::types::{AnswerMachineDetectionConfig, Contact, TrafficType};
use chrono::{DateTime, Utc};
use outbound_model::call::{CallReport, Outcome, Reason};
use outbound_model::error::Error;
use outbound_model::pacing::QueueAgents;
use outbound_model::settings::TenantSettings;
use outbound_model::signature::Carried;
use outbound_model::telephony::Assignment;
use outbound_model::telephony::Voicemail;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// Places and describes calls through one Connect instance.
#[derive(Clone, Debug)]
pub struct ConnectProvider {
    /// Built on first use: a run that places no call never needs it.
    client: Lazy<aws_sdk_connect::Client>,
    settings: ConnectSettings,
    /// Calls go as GENERAL traffic, without detection, since the instance refused campaign
    /// calls for quota ([`Provider::fall_back`]).
    general: Arc<AtomicBool>,
}

impl ConnectProvider {
    pub fn new(client: Lazy<aws_sdk_connect::Client>, settings: ConnectSettings) -> Self {
        ConnectProvider {
            client,
            settings,
            general: Arc::default(),
        }
    }
}

impl Provider for ConnectProvider {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        if call.e164.is_none() {
            return Err(PlaceError::NumberRefused("no E.164 number".into()));
        }
        let campaign = !self.general.load(Ordering::Relaxed);
        let output = start_request(&self.settings, call, campaign)
            .send_with(self.client.get())
            .await
            .map_err(place_error)?;
        match output.contact_id() {
            Some(id) if !id.is_empty() => Ok(id.to_owned()),
            // Connect took the request, so a call may be ringing that we cannot name.
            _ => Err(PlaceError::Unknown(
                "StartOutboundVoiceContact answered no ContactId".into(),
            )),
        }
    }

    async fn describe(&self, call_id: &str) -> Result<CallStatus, Error> {
        let answer = self
            .client
            .get()
            .describe_contact()
            .instance_id(&self.settings.instance_id)
            .contact_id(call_id)
            .send()
            .await;
        match answer {
            Ok(output) => Ok(output.contact().map_or(CallStatus::Unknown, contact_status)),
            Err(error) => describe_error(error),
        }
    }

    /// The queues' agents from GetCurrentMetricData (D30): one request for up to 100 queues
    /// (every page of it), voice only, grouped by queue; a queue Connect reports nothing for has
    /// no agent. Agents in after-contact work are the ones soon free.
    async fn queue_agents(
        &self,
        queues: &[String],
    ) -> Result<BTreeMap<String, QueueAgents>, Error> {
        use aws_sdk_connect::types::{
            Channel, CurrentMetric, CurrentMetricName as Name, Filters, Grouping, Unit,
        };
        let mut agents: BTreeMap<String, QueueAgents> = (queues.iter())
            .map(|queue| (queue.clone(), QueueAgents::default()))
            .collect();
        let metric = |name: Name| {
            CurrentMetric::builder()
                .name(name)
                .unit(Unit::Count)
                .build()
        };
        for some in queues.chunks(100) {
            let filters = Filters::builder()
                .set_queues(Some(some.to_vec()))
                .channels(Channel::Voice)
                .build();
            let mut pages = self
                .client
                .get()
                .get_current_metric_data()
                .instance_id(&self.settings.instance_id)
                .filters(filters)
                .groupings(Grouping::Queue)
                .current_metrics(metric(Name::AgentsAvailable))
                .current_metrics(metric(Name::AgentsOnContact))
                .current_metrics(metric(Name::AgentsAfterContactWork))
                .into_paginator()
                .send();
            while let Some(page) = pages.next().await {
                let page =
                    page.map_err(|error| Error::dependency("read the queues' agents", error))?;
                for result in page.metric_results() {
                    let queue = (result.dimensions())
                        .and_then(|dimensions| dimensions.queue())
                        .and_then(|queue| queue.id());
                    let Some(state) = queue.and_then(|queue| agents.get_mut(queue)) else {
                        continue;
                    };
                    for data in result.collections() {
                        let count = data.value().unwrap_or(0.0).clamp(0.0, f64::from(u32::MAX));
                        let count = count as u32;
                        match data.metric().and_then(|metric| metric.name()) {
                            Some(Name::AgentsAvailable) => state.available = count,
                            Some(Name::AgentsOnContact) => state.on_contact = count,
                            Some(Name::AgentsAfterContactWork) => state.soon_free = count,
                            _ => {}
                        }
                    }
                }
            }
        }
        Ok(agents)
    }

    fn needs_e164(&self) -> bool {
        true
    }

    fn attributes_fit(&self, attributes: &BTreeMap<String, String>, reserved: usize) -> bool {
        attributes_fit(attributes, reserved)
    }

    fn per_call_caller_id(&self) -> bool {
        self.settings.per_call_caller_id()
    }

    fn fall_back(&self) -> bool {
        if self.settings.general_fallback {
            self.general.store(true, Ordering::Relaxed);
        }
        self.settings.general_fallback
    }

    /// The attempt a contact of the instance is, from the attributes every call this service
    /// starts carries ([`start_request`]): `GetContactAttributes`. A contact Connect does not know,
    /// or one without them (an inbound call, another application's), is not ours.
    async fn attempt_of(&self, call_id: &str) -> Result<Option<Carried>, Error> {
        let answer = self
            .client
            .get()
            .get_contact_attributes()
            .instance_id(&self.settings.instance_id)
            .initial_contact_id(call_id)
            .send()
            .await;
        match answer {
            Ok(output) => {
                let attributes = output.attributes();
                Ok(Carried::read(|name| {
                    attributes.and_then(|map| map.get(name)).cloned()
                }))
            }
            Err(error)
                if error
                    .as_service_error()
                    .is_some_and(|e| e.is_resource_not_found_exception()) =>
            {
                Ok(None)
            }
            Err(error) => Err(Error::dependency("get contact attributes", error)),
        }
    }
}

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

impl super::provider::Catalog for ConnectCatalog {
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

/// The `StartOutboundVoiceContact` request of one attempt: the call's own flow and number when
/// it names them (D22), else the deployment's; its attributes. Answering-machine detection is
/// on so that a voicemail is told from a person (D13), and with `LEAVE_MESSAGE` the flow waits
/// for the machine's prompt to play its message (D22); Connect accepts detection only on
/// `CAMPAIGN` traffic, which has its own quota. Without `campaign`, GENERAL traffic without
/// detection. In queue mode the queue's caller ID is used, whatever the call names.
fn start_request(
    settings: &ConnectSettings,
    call: &CallRequest,
    campaign: bool,
) -> StartOutboundVoiceContactInputBuilder {
    let request = StartOutboundVoiceContactInput::builder()
        .instance_id(&settings.instance_id)
        .contact_flow_id(
            call.contact_flow_id
                .as_deref()
                .unwrap_or(&settings.contact_flow_id),
        )
        .set_destination_phone_number(call.e164.clone())
        .client_token(call.token())
        .set_attributes(Some(
            call.attributes
                .iter()
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        ));
    let request = if campaign {
        request
            .answer_machine_detection_config(
                AnswerMachineDetectionConfig::builder()
                    .enable_answer_machine_detection(true)
                    .await_answer_machine_prompt(call.voicemail == Voicemail::LeaveMessage)
                    .build(),
            )
            .traffic_type(TrafficType::Campaign)
    } else {
        request.traffic_type(TrafficType::General)
    };
    match &settings.source {
        CallerSource::Number(number) => {
            request.source_phone_number(call.caller_id.as_deref().unwrap_or(number))
        }
        CallerSource::Queue(queue) => request.queue_id(queue),
    }
}

/// A stored phone (digits with an optional leading `+`) in E.164, as Connect takes it.
/// Why a `StartOutboundVoiceContact` failed, in the terms of [`PlaceError`].
fn place_error(error: SdkError<StartOutboundVoiceContactError>) -> PlaceError {
    let verdict = match &error {
        SdkError::ServiceError(context) => refusal(context.err(), context.raw().status().as_u16()),
        // Never sent: no call started, and sending the same request again cannot help.
        SdkError::ConstructionFailure(_) => Some(PlaceError::ServiceRefused {
            refusal: ServiceRefusal::Configuration,
            detail: format!(
                "the Amazon Connect request could not be built: {}",
                DisplayErrorContext(&error)
            ),
        }),
        // Timeouts, dispatch and response failures: the call may or may not have started.
        _ => None,
    };
    verdict.unwrap_or_else(|| PlaceError::Unknown(Box::new(error)))
}

/// What an error answered by Connect means; `None` when it leaves open whether a call started.
fn refusal(error: &StartOutboundVoiceContactError, status: u16) -> Option<PlaceError> {
    use StartOutboundVoiceContactError as E;
    let message = error.message().unwrap_or("no message");
    let code = error.code().unwrap_or("no error code");
    let service = |refusal: ServiceRefusal, what: &str| {
        Some(PlaceError::ServiceRefused {
            refusal,
            detail: format!("Amazon Connect refused the call: {what}: {code}: {message}"),
        })
    };
    let task = |what: &str| service(ServiceRefusal::Configuration, what);
    let number = |what: &str| Some(PlaceError::NumberRefused(format!("{what}: {message}")));
    let busy = |kind: Busy| {
        Some(PlaceError::Busy {
            kind,
            detail: format!("{code}: {message}"),
        })
    };
    match error {
        E::LimitExceededException(_) => busy(Busy::Quota),
        E::ResourceNotFoundException(_) => {
            task("instance, contact flow, queue or source number not found")
        }
        E::OutboundContactNotPermittedException(_) => service(
            ServiceRefusal::Permission,
            "outbound calls are not permitted on the instance",
        ),
        E::InvalidRequestException(_) => task("invalid request"),
        E::DestinationNotAllowedException(_) => {
            number("Amazon Connect does not allow calls to this number")
        }
        E::InvalidParameterException(_) if message.to_ascii_lowercase().contains("destination") => {
            number("Amazon Connect refused the destination number")
        }
        E::InvalidParameterException(_) => task("invalid parameter"),
        E::InternalServiceException(_) => None,
        // Errors the operation's model does not list arrive with only their code and status.
        _ => match code {
            "ThrottlingException" | "TooManyRequestsException" => busy(Busy::Rate),
            "LimitExceededException" | "ServiceQuotaExceededException" => busy(Busy::Quota),
            "AccessDeniedException" => service(ServiceRefusal::Permission, "access denied"),
            _ if status == 429 || status == 503 => busy(Busy::Rate),
            _ => None,
        },
    }
}

/// A failed `DescribeContact`: a contact Connect does not know is [`CallStatus::Unknown`].
fn describe_error(error: SdkError<DescribeContactError>) -> Result<CallStatus, Error> {
    if error
        .as_service_error()
        .is_some_and(DescribeContactError::is_resource_not_found_exception)
    {
        return Ok(CallStatus::Unknown);
    }
    Err(Error::internal("describe contact", error))
}

/// A described contact: in progress until it has a disconnect time.
fn contact_status(contact: &Contact) -> CallStatus {
    let Some(disconnected) = contact.disconnect_timestamp() else {
        return CallStatus::InProgress;
    };
    let answered = report(
        contact.disconnect_reason(),
        contact
            .answering_machine_detection_status()
            .map(|status| status.as_str()),
        contact.connected_to_system_timestamp().and_then(utc),
        utc(disconnected),
    );
    let enqueued = contact
        .queue_info()
        .is_some_and(|queue| queue.enqueue_timestamp().is_some());
    let with_agent = contact
        .agent_info()
        .is_some_and(|agent| agent.connected_to_agent_timestamp().is_some());
    CallStatus::Ended(abandoned_in_queue(answered, enqueued, with_agent))
}

/// A call a person answered that the flow put in a queue and no agent took is abandoned (D30):
/// the flow transfers an agent-paced task's answered calls to its queue and hangs up when no
/// agent takes one within 2 s. Calls never queued (agentless tasks) are as they were.
pub fn abandoned_in_queue(report: CallReport, enqueued: bool, with_agent: bool) -> CallReport {
    if report.reason != Reason::Answered || !enqueued || with_agent {
        return report;
    }
    CallReport {
        reason: Reason::Abandoned,
        duration: 0,
        detail: "QUEUE_ABANDONED".to_owned(),
        ..report
    }
}

fn utc(time: &aws_sdk_connect::primitives::DateTime) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(time.secs(), time.subsec_nanos())
}

/// The outcome of a call that Connect disconnected (D13), from the contact's disconnect reason,
/// its answering-machine detection status, and when it was connected and disconnected.
///
/// An invalid number is decided first (final, never retried); then a detection verdict, because
/// Connect marks voicemail, fax and SIT tones connected too; then whether the call was
/// connected at all; and last the disconnect reason of a call that never was. `reason` is the
/// code that decided; for an answered call, the disconnect reason that ended it.
pub fn report(
    disconnect_reason: Option<&str>,
    amd_status: Option<&str>,
    connected: Option<DateTime<Utc>>,
    disconnected: Option<DateTime<Utc>>,
) -> CallReport {
    let reason = disconnect_reason
        .map(str::trim)
        .filter(|text| !text.is_empty());
    let amd = amd_status.map(str::trim).filter(|text| !text.is_empty());
    let ended = |outcome: Outcome, why: &str| CallReport {
        results: Default::default(),
        reason: service_reason(outcome, why),
        duration: 0,
        detail: why.to_owned(),
    };
    let answered = |why: &str| CallReport {
        duration: talk_seconds(connected, disconnected),
        ..ended(Outcome::Success, why)
    };
    let invalid = |why: &str| CallReport {
        reason: Reason::InvalidNumber,
        ..ended(Outcome::Failed, why)
    };

    if let Some(why @ "TELECOM_NUMBER_INVALID") = reason {
        return invalid(why);
    }
    match amd {
        Some(why @ "SIT_TONE_INVALID_NUMBER") => return invalid(why),
        // A person answered; `ANSWERED` is how DescribeContact reports an answered call that
        // detection did not find to be a machine: calling again would call that person again.
        Some(why @ ("HUMAN_ANSWERED" | "ANSWERED")) => return answered(reason.unwrap_or(why)),
        // Voicemail, rang out, or connected without anyone found to be there (detection
        // unresolved, or nothing detected): no person answered (D13).
        Some(
            why @ ("VOICEMAIL_BEEP"
            | "VOICEMAIL_NO_BEEP"
            | "AMD_UNANSWERED"
            | "AMD_UNRESOLVED"
            | "AMD_UNRESOLVED_SILENCE"
            | "UNDETECTED"),
        ) if why != "UNDETECTED" || connected.is_some() => return ended(Outcome::NoAnswer, why),
        // Busy, unreachable (another SIT tone, a fax line) or a detection error (D13: failed).
        Some(
            why @ ("SIT_TONE_BUSY"
            | "SIT_TONE_DETECTED"
            | "FAX_MACHINE_DETECTED"
            | "AMD_ERROR"
            | "ERROR"),
        ) => return ended(Outcome::Failed, why),
        // Never connected: nothing was detected, and the disconnect reason says why.
        Some("UNDETECTED") => {}
        // Disconnected before any media: detection has nothing to say.
        None | Some("AMD_NOT_APPLICABLE") => {}
        // A status this code does not know: whatever answered is not known to be a person.
        Some(why) if connected.is_some() => return ended(Outcome::NoAnswer, why),
        Some(_) => {}
    }
    if connected.is_some() {
        return answered(reason.unwrap_or("connected"));
    }
    match reason {
        Some(why @ ("TELECOM_UNANSWERED" | "TELECOM_TIMEOUT" | "TELECOM_ORIGINATOR_CANCEL")) => {
            ended(Outcome::NoAnswer, why)
        }
        // Busy, blocked, network or Connect errors, expired, and hang-ups of a call that never
        // connected.
        Some(why) => ended(Outcome::Failed, why),
        None => ended(Outcome::Failed, amd.unwrap_or("no disconnect reason")),
    }
}

/// The service's reason (D18) for a call Connect ended with `outcome`, its code `why`: Connect's
/// words stop here. A voicemail is told apart from other unanswered calls, and a busy line from
/// other failures, by the code that decided.
fn service_reason(outcome: Outcome, why: &str) -> Reason {
    match (outcome, why) {
        (Outcome::Success, _) => Reason::Answered,
        (_, "VOICEMAIL_BEEP" | "VOICEMAIL_NO_BEEP") => Reason::Voicemail,
        (_, "TELECOM_BUSY" | "SIT_TONE_BUSY") => Reason::Busy,
        (Outcome::NoAnswer, _) => Reason::NoAnswer,
        (Outcome::Failed, _) => Reason::Error,
    }
}

/// Whole seconds from answer to hang-up: rounded down, never negative, 0 without both times.
fn talk_seconds(connected: Option<DateTime<Utc>>, disconnected: Option<DateTime<Utc>>) -> u64 {
    match (connected, disconnected) {
        (Some(from), Some(to)) => u64::try_from((to - from).num_seconds()).unwrap_or(0),
        _ => 0,
    }
}

/// A voice call that ended, read from its `DISCONNECTED` contact event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disconnect {
    /// Connect's `ContactId`: what [`Provider::place`] answered for the call.
    pub contact_id: String,
    pub report: CallReport,
}

/// What a contact event of a call placed through the API tells the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContactEvent {
    /// `DISCONNECTED`: the call ended.
    Disconnected(Disconnect),
    /// `CONNECTED_TO_AGENT`: an agent of the queue took the call (D30).
    ConnectedToAgent { contact_id: String },
}

const EVENT_SOURCE: &str = "aws.connect";
const EVENT_DETAIL_TYPE: &str = "Amazon Connect Contact Event";

/// The EventBridge envelope; only what is needed is read, everything else is ignored.
#[derive(Deserialize)]
struct Event {
    source: Option<String>,
    #[serde(rename = "detail-type")]
    detail_type: Option<String>,
    detail: Detail,
}

/// The contact event. The documentation's samples spell its fields both camelCase and
/// PascalCase, so both are read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Detail {
    #[serde(alias = "EventType")]
    event_type: Option<String>,
    #[serde(alias = "ContactId")]
    contact_id: Option<String>,
    #[serde(alias = "Channel")]
    channel: Option<String>,
    #[serde(alias = "DisconnectReason")]
    disconnect_reason: Option<DisconnectReason>,
    #[serde(alias = "AnsweringMachineDetectionStatus")]
    answering_machine_detection_status: Option<String>,
    #[serde(alias = "ConnectedToSystemTimestamp")]
    connected_to_system_timestamp: Option<String>,
    #[serde(alias = "DisconnectTimestamp")]
    disconnect_timestamp: Option<String>,
    /// Set once the flow put the contact in a queue (D30).
    #[serde(alias = "QueueInfo")]
    queue_info: Option<QueueInfo>,
    /// Set once an agent took the contact.
    #[serde(alias = "AgentInfo")]
    agent_info: Option<AgentInfo>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueueInfo {
    #[serde(alias = "EnqueueTimestamp")]
    enqueue_timestamp: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AgentInfo {
    #[serde(alias = "ConnectedToAgentTimestamp")]
    connected_to_agent_timestamp: Option<String>,
}

/// The disconnect reason as a plain code, or as the API's `DisconnectReason` object (`{Code}`).
#[derive(Deserialize)]
#[serde(untagged)]
enum DisconnectReason {
    Code(String),
    Object {
        #[serde(alias = "Code")]
        code: Option<String>,
    },
}

impl DisconnectReason {
    fn code(&self) -> Option<&str> {
        match self {
            DisconnectReason::Code(code) => Some(code),
            DisconnectReason::Object { code } => code.as_deref(),
        }
    }
}

/// Reads one call-events message body: an EventBridge "Amazon Connect Contact Event". Answers
/// the ended call for a voice `DISCONNECTED` event, the call an agent took for a voice
/// `CONNECTED_TO_AGENT` event (D30), and `None` for every other event, which is acknowledged and
/// ignored; fails only for a body that is not such an event at all, or one of those two without
/// a contact id, or with an unreadable time.
pub fn parse_event(body: &str) -> Result<Option<ContactEvent>, Error> {
    let event: Event = serde_json::from_str(body)
        .map_err(|error| Error::invalid(format!("not an EventBridge event: {error}")))?;
    let other =
        |field: &Option<String>, expected: &str| field.as_deref().is_some_and(|v| v != expected);
    if other(&event.source, EVENT_SOURCE) || other(&event.detail_type, EVENT_DETAIL_TYPE) {
        return Ok(None);
    }
    let detail = event.detail;
    // The samples spell the channel both `VOICE` and `Voice`.
    let voice = detail
        .channel
        .as_deref()
        .is_none_or(|channel| channel.eq_ignore_ascii_case("VOICE"));
    let kind = detail.event_type.as_deref().unwrap_or_default();
    if !voice {
        return Ok(None);
    }
    let contact_id = |detail: &Detail| {
        (detail.contact_id.clone())
            .filter(|id| !id.is_empty())
            .ok_or_else(|| Error::invalid(format!("{kind} contact event without contactId")))
    };
    if kind.eq_ignore_ascii_case("CONNECTED_TO_AGENT") {
        let contact_id = contact_id(&detail)?;
        return Ok(Some(ContactEvent::ConnectedToAgent { contact_id }));
    }
    if !kind.eq_ignore_ascii_case("DISCONNECTED") {
        return Ok(None);
    }
    let contact_id = contact_id(&detail)?;
    let connected = timestamp(
        "connectedToSystemTimestamp",
        detail.connected_to_system_timestamp.as_deref(),
    )?;
    let ended = timestamp(
        "disconnectTimestamp",
        detail.disconnect_timestamp.as_deref(),
    )?;
    let report = report(
        detail
            .disconnect_reason
            .as_ref()
            .and_then(DisconnectReason::code),
        detail.answering_machine_detection_status.as_deref(),
        connected,
        ended,
    );
    let set = |time: Option<&String>| time.is_some_and(|time| !time.is_empty());
    let enqueued = (detail.queue_info.as_ref()).is_some_and(|q| set(q.enqueue_timestamp.as_ref()));
    let with_agent = (detail.agent_info.as_ref())
        .is_some_and(|agent| set(agent.connected_to_agent_timestamp.as_ref()));
    let report = abandoned_in_queue(report, enqueued, with_agent);
    Ok(Some(ContactEvent::Disconnected(Disconnect {
        contact_id,
        report,
    })))
}

/// An event time (`2021-08-04T17:47:35.000Z`); absent or empty is `None`.
fn timestamp(name: &str, text: Option<&str>) -> Result<Option<DateTime<Utc>>, Error> {
    text.filter(|text| !text.is_empty())
        .map(|text| {
            DateTime::parse_from_rfc3339(text)
                .map(|time| time.with_timezone(&Utc))
                .map_err(|error| Error::invalid(format!("{name} {text:?}: {error}")))
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_connect::config::http::HttpResponse;
    use aws_sdk_connect::error::{ConnectorError, ErrorMetadata};
    use aws_sdk_connect::types::error::{
        DestinationNotAllowedException, InternalServiceException, InvalidParameterException,
        InvalidRequestException, LimitExceededException, OutboundContactNotPermittedException,
        ResourceNotFoundException,
    };
    use aws_sdk_connect::types::AnsweringMachineDetectionStatus;
    use aws_smithy_types::body::SdkBody;
    use outbound_model::{Id, Phone};
    use std::collections::HashMap;

    fn settings(source: CallerSource) -> ConnectSettings {
        ConnectSettings {
            instance_id: "5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915".into(),
            instance_arn: None,
            contact_flow_id: "9e4a7c12-3b8d-4f60-a1e5-d27f0b6c8a34".into(),
            source,
            general_fallback: false,
        }
    }

    fn call(phone: &str) -> CallRequest {
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
            phone: Phone::parse(phone).unwrap(),
            e164: Some(format!("+{}", phone.trim_start_matches('+'))),
            script: None,
            caller_id: None,
            contact_flow_id: None,
            voicemail: Voicemail::HangUp,
            simulated_results: None,
            queue_id: None,
        }
    }

    #[test]
    fn start_request_carries_every_field() {
        let request = start_request(
            &settings(CallerSource::Number("+442038089410".into())),
            &call("+447700900123"),
            true,
        )
        .build()
        .unwrap();
        assert_eq!(
            request.instance_id(),
            Some("5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915")
        );
        assert_eq!(
            request.contact_flow_id(),
            Some("9e4a7c12-3b8d-4f60-a1e5-d27f0b6c8a34")
        );
        assert_eq!(request.destination_phone_number(), Some("+447700900123"));
        assert_eq!(request.source_phone_number(), Some("+442038089410"));
        assert_eq!(request.queue_id(), None);
        assert_eq!(
            request.client_token(),
            Some("01HZX3K5Q8M2N4P6R8T0V2W4Y6-01HZX3K9B7C5D3E1F0G2H4J6K8-2")
        );
        let attributes: HashMap<String, String> = [
            ("tenant", "acme"),
            ("taskId", "01HZX3K5Q8M2N4P6R8T0V2W4Y6"),
            ("contactId", "01HZX3K9B7C5D3E1F0G2H4J6K8"),
            ("attempt", "2"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(request.attributes(), Some(&attributes));
        let detection = request.answer_machine_detection_config().unwrap();
        assert!(detection.enable_answer_machine_detection());
        assert!(!detection.await_answer_machine_prompt());
        assert_eq!(request.traffic_type(), Some(&TrafficType::Campaign));
        assert_eq!(request.campaign_id(), None);
        assert_eq!(request.ring_timeout_in_seconds(), None);
    }

    #[test]
    fn start_request_names_the_queue_and_makes_the_destination_e164() {
        let request = start_request(
            &settings(CallerSource::Queue(
                "7b2e9f40-1c6d-4a83-b5e2-0f9d3c7a1e68".into(),
            )),
            &call("4915112345678"),
            false,
        )
        .build()
        .unwrap();
        assert_eq!(request.destination_phone_number(), Some("+4915112345678"));
        assert_eq!(
            request.queue_id(),
            Some("7b2e9f40-1c6d-4a83-b5e2-0f9d3c7a1e68")
        );
        assert_eq!(request.source_phone_number(), None);
        // General traffic, after the instance refused campaign calls for quota.
        assert_eq!(request.traffic_type(), Some(&TrafficType::General));
        assert_eq!(request.answer_machine_detection_config(), None);
    }

    #[test]
    fn start_request_takes_the_calls_number_flow_fields_and_voicemail() {
        let mut one = call("+12125550199");
        one.caller_id = Some("+12125550100".into());
        one.contact_flow_id = Some("3f6e1a2b-7c4d-4e8f-9a0b-1c2d3e4f5a6b".into());
        one.attributes
            .insert("customerName".into(), "Ada Lovelace".into());
        one.voicemail = Voicemail::LeaveMessage;
        let number = settings(CallerSource::Number("+442038089410".into()));
        let request = start_request(&number, &one, true).build().unwrap();
        assert_eq!(request.source_phone_number(), Some("+12125550100"));
        assert_eq!(
            request.contact_flow_id(),
            Some("3f6e1a2b-7c4d-4e8f-9a0b-1c2d3e4f5a6b")
        );
        let attributes = request.attributes().unwrap();
        assert_eq!(attributes.len(), 5);
        assert_eq!(attributes["customerName"], "Ada Lovelace");
        assert_eq!(attributes["attempt"], "2");
        let detection = request.answer_machine_detection_config().unwrap();
        assert!(detection.enable_answer_machine_detection());
        assert!(detection.await_answer_machine_prompt(), "LEAVE_MESSAGE");
        // In queue mode the queue's number is the caller ID: the call's own is not sent.
        let queue = settings(CallerSource::Queue("q".into()));
        assert!(number.per_call_caller_id());
        assert!(!queue.per_call_caller_id());
        let request = start_request(&queue, &one, true).build().unwrap();
        assert_eq!(
            (request.source_phone_number(), request.queue_id()),
            (None, Some("q"))
        );
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

    fn meta(code: &str, message: &str) -> ErrorMetadata {
        ErrorMetadata::builder().code(code).message(message).build()
    }

    fn answered(
        error: StartOutboundVoiceContactError,
        status: u16,
    ) -> SdkError<StartOutboundVoiceContactError> {
        let raw = HttpResponse::new(status.try_into().unwrap(), SdkBody::empty());
        SdkError::service_error(error, raw)
    }

    fn modeled(error: StartOutboundVoiceContactError, status: u16) -> PlaceError {
        place_error(answered(error, status))
    }

    fn unmodeled(code: &str, message: &str, status: u16) -> PlaceError {
        let error = StartOutboundVoiceContactError::generic(meta(code, message));
        place_error(answered(error, status))
    }

    #[test]
    fn throttling_and_quotas_are_busy() {
        use StartOutboundVoiceContactError as E;
        let limit = E::LimitExceededException(
            LimitExceededException::builder()
                .message("The allowed limit for the resource has been exceeded.")
                .meta(meta(
                    "LimitExceededException",
                    "The allowed limit for the resource has been exceeded.",
                ))
                .build(),
        );
        assert!(matches!(
            modeled(limit, 429),
            PlaceError::Busy {
                kind: Busy::Quota,
                ..
            }
        ));
        for (code, kind) in [
            ("ThrottlingException", Busy::Rate),
            ("ServiceQuotaExceededException", Busy::Quota),
        ] {
            let error = unmodeled(code, "Rate exceeded", 400);
            assert!(
                matches!(&error, PlaceError::Busy { kind: k, detail } if *k == kind && detail.contains(code)),
                "{error:?}"
            );
        }
        assert!(matches!(
            unmodeled("SlowDown", "Please slow down", 429),
            PlaceError::Busy {
                kind: Busy::Rate,
                ..
            }
        ));
        assert!(matches!(
            unmodeled("ServiceUnavailableException", "Service unavailable", 503),
            PlaceError::Busy {
                kind: Busy::Rate,
                ..
            }
        ));
    }

    #[test]
    fn flow_and_instance_problems_refuse_the_task() {
        use StartOutboundVoiceContactError as E;
        let not_found = E::ResourceNotFoundException(
            ResourceNotFoundException::builder()
                .message("Contact flow not found")
                .meta(meta("ResourceNotFoundException", "Contact flow not found"))
                .build(),
        );
        let PlaceError::ServiceRefused { refusal, detail } = modeled(not_found, 404) else {
            panic!("not a service refusal");
        };
        assert_eq!(refusal, ServiceRefusal::Configuration);
        assert_eq!(
            detail,
            "Amazon Connect refused the call: instance, contact flow, queue or source number \
             not found: ResourceNotFoundException: Contact flow not found"
        );
        let not_permitted = E::OutboundContactNotPermittedException(
            OutboundContactNotPermittedException::builder()
                .meta(meta(
                    "OutboundContactNotPermittedException",
                    "Outbound calls are disabled",
                ))
                .build(),
        );
        assert!(matches!(
            modeled(not_permitted, 403),
            PlaceError::ServiceRefused {
                refusal: ServiceRefusal::Permission,
                ..
            }
        ));
        let invalid = E::InvalidRequestException(
            InvalidRequestException::builder()
                .meta(meta("InvalidRequestException", "The flow is not published"))
                .build(),
        );
        assert!(matches!(
            modeled(invalid, 400),
            PlaceError::ServiceRefused {
                refusal: ServiceRefusal::Configuration,
                ..
            }
        ));
        let parameter = E::InvalidParameterException(
            InvalidParameterException::builder()
                .meta(meta("InvalidParameterException", "Invalid ContactFlowId"))
                .build(),
        );
        assert!(matches!(
            modeled(parameter, 400),
            PlaceError::ServiceRefused {
                refusal: ServiceRefusal::Configuration,
                ..
            }
        ));
        let denied = unmodeled(
            "AccessDeniedException",
            "not authorized to perform connect:StartOutboundVoiceContact",
            403,
        );
        assert!(
            matches!(
                &denied,
                PlaceError::ServiceRefused { refusal: ServiceRefusal::Permission, detail }
                    if detail.contains("access denied")
            ),
            "{denied:?}"
        );
    }

    #[test]
    fn destination_problems_refuse_the_number() {
        use StartOutboundVoiceContactError as E;
        let not_allowed = E::DestinationNotAllowedException(
            DestinationNotAllowedException::builder()
                .meta(meta(
                    "DestinationNotAllowedException",
                    "Outbound calls to the destination number are not allowed.",
                ))
                .build(),
        );
        assert!(matches!(
            modeled(not_allowed, 403),
            PlaceError::NumberRefused(_)
        ));
        let invalid = E::InvalidParameterException(
            InvalidParameterException::builder()
                .meta(meta(
                    "InvalidParameterException",
                    "DestinationPhoneNumber is not a valid E.164 number",
                ))
                .build(),
        );
        assert!(matches!(
            modeled(invalid, 400),
            PlaceError::NumberRefused(_)
        ));
    }

    #[test]
    fn everything_else_leaves_the_call_unknown() {
        let internal = StartOutboundVoiceContactError::InternalServiceException(
            InternalServiceException::builder()
                .meta(meta("InternalServiceException", "Internal error"))
                .build(),
        );
        assert!(matches!(modeled(internal, 500), PlaceError::Unknown(_)));
        assert!(matches!(
            unmodeled("SomethingNew", "?", 400),
            PlaceError::Unknown(_)
        ));
        assert!(matches!(
            place_error(SdkError::timeout_error("read timed out")),
            PlaceError::Unknown(_)
        ));
        assert!(matches!(
            place_error(SdkError::dispatch_failure(ConnectorError::io(
                "connection reset".into()
            ))),
            PlaceError::Unknown(_)
        ));
        assert!(matches!(
            place_error(SdkError::construction_failure("missing InstanceId")),
            PlaceError::ServiceRefused {
                refusal: ServiceRefusal::Configuration,
                ..
            }
        ));
    }

    fn at(text: &str) -> aws_sdk_connect::primitives::DateTime {
        aws_sdk_connect::primitives::DateTime::from_str(
            text,
            aws_sdk_connect::primitives::DateTimeFormat::DateTime,
        )
        .unwrap()
    }

    #[test]
    fn a_described_contact_is_in_progress_until_disconnected() {
        let ringing = Contact::builder()
            .id("3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83")
            .initiation_timestamp(at("2025-03-11T14:00:58.731Z"))
            .build();
        assert_eq!(contact_status(&ringing), CallStatus::InProgress);
        let talked = Contact::builder()
            .id("3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83")
            .connected_to_system_timestamp(at("2025-03-11T14:01:07.212Z"))
            .disconnect_timestamp(at("2025-03-11T14:02:49.874Z"))
            .disconnect_reason("CUSTOMER_DISCONNECT")
            .answering_machine_detection_status(AnsweringMachineDetectionStatus::HumanAnswered)
            .build();
        assert_eq!(
            contact_status(&talked),
            CallStatus::Ended(CallReport {
                results: Default::default(),
                reason: Reason::Answered,
                duration: 102,
                detail: "CUSTOMER_DISCONNECT".into(),
            })
        );
        let invalid = Contact::builder()
            .disconnect_timestamp(at("2025-03-11T11:20:03.288Z"))
            .disconnect_reason("TELECOM_NUMBER_INVALID")
            .build();
        let CallStatus::Ended(report) = contact_status(&invalid) else {
            panic!("not ended");
        };
        assert!(report.invalid_number());
    }

    #[test]
    fn a_contact_connect_does_not_know_is_unknown() {
        let missing = DescribeContactError::ResourceNotFoundException(
            ResourceNotFoundException::builder()
                .meta(meta("ResourceNotFoundException", "Contact not found"))
                .build(),
        );
        let raw = HttpResponse::new(404u16.try_into().unwrap(), SdkBody::empty());
        assert_eq!(
            describe_error(SdkError::service_error(missing, raw)).unwrap(),
            CallStatus::Unknown
        );
        let throttled = SdkError::<DescribeContactError>::timeout_error("read timed out");
        assert!(matches!(
            describe_error(throttled),
            Err(Error::Internal {
                context: "describe contact",
                ..
            })
        ));
    }

    fn utc_at(text: &str) -> Option<DateTime<Utc>> {
        Some(
            DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&Utc),
        )
    }

    fn success(why: &str) -> CallReport {
        CallReport {
            duration: 102,
            ..ended(Reason::Answered, why)
        }
    }

    fn ended(reason: Reason, why: &str) -> CallReport {
        CallReport {
            results: Default::default(),
            reason,
            duration: 0,
            detail: why.into(),
        }
    }

    fn no_answer(why: &str) -> CallReport {
        ended(Reason::NoAnswer, why)
    }

    fn voicemail(why: &str) -> CallReport {
        ended(Reason::Voicemail, why)
    }

    fn busy(why: &str) -> CallReport {
        ended(Reason::Busy, why)
    }

    fn failed(why: &str) -> CallReport {
        ended(Reason::Error, why)
    }

    fn invalid(why: &str) -> CallReport {
        ended(Reason::InvalidNumber, why)
    }

    #[test]
    fn the_outcome_mapping() {
        let connected = utc_at("2025-03-11T14:01:07.212Z");
        let disconnected = utc_at("2025-03-11T14:02:49.874Z");
        // (disconnect reason, answering-machine status, connected?, report)
        #[rustfmt::skip]
        let cases = [
            (Some("CUSTOMER_DISCONNECT"), Some("HUMAN_ANSWERED"), true, success("CUSTOMER_DISCONNECT")),
            (Some("AGENT_DISCONNECT"), None, true, success("AGENT_DISCONNECT")),
            (Some("THIRD_PARTY_DISCONNECT"), Some("AMD_NOT_APPLICABLE"), true, success("THIRD_PARTY_DISCONNECT")),
            (Some("CONTACT_FLOW_DISCONNECT"), None, true, success("CONTACT_FLOW_DISCONNECT")),
            (Some("TELECOM_PROBLEM"), None, true, success("TELECOM_PROBLEM")),
            (None, None, true, success("connected")),
            (None, Some("HUMAN_ANSWERED"), true, success("HUMAN_ANSWERED")),
            (Some("CONTACT_FLOW_DISCONNECT"), Some("VOICEMAIL_BEEP"), true, voicemail("VOICEMAIL_BEEP")),
            (Some("CUSTOMER_DISCONNECT"), Some("VOICEMAIL_NO_BEEP"), true, voicemail("VOICEMAIL_NO_BEEP")),
            (Some("CUSTOMER_DISCONNECT"), Some("AMD_UNRESOLVED"), true, no_answer("AMD_UNRESOLVED")),
            (Some("CUSTOMER_DISCONNECT"), Some("AMD_UNRESOLVED_SILENCE"), true, no_answer("AMD_UNRESOLVED_SILENCE")),
            (Some("CUSTOMER_DISCONNECT"), Some("SOME_FUTURE_STATUS"), true, no_answer("SOME_FUTURE_STATUS")),
            (Some("TELECOM_TIMEOUT"), Some("AMD_UNANSWERED"), false, no_answer("AMD_UNANSWERED")),
            (Some("TELECOM_UNANSWERED"), None, false, no_answer("TELECOM_UNANSWERED")),
            (Some("TELECOM_TIMEOUT"), None, false, no_answer("TELECOM_TIMEOUT")),
            (Some("TELECOM_ORIGINATOR_CANCEL"), Some("AMD_NOT_APPLICABLE"), false, no_answer("TELECOM_ORIGINATOR_CANCEL")),
            (Some("TELECOM_BUSY"), Some("AMD_NOT_APPLICABLE"), false, busy("TELECOM_BUSY")),
            (Some("CUSTOMER_DISCONNECT"), Some("SIT_TONE_BUSY"), true, busy("SIT_TONE_BUSY")),
            (Some("CUSTOMER_DISCONNECT"), Some("SIT_TONE_DETECTED"), true, failed("SIT_TONE_DETECTED")),
            (Some("CUSTOMER_DISCONNECT"), Some("FAX_MACHINE_DETECTED"), true, failed("FAX_MACHINE_DETECTED")),
            (Some("CUSTOMER_DISCONNECT"), Some("AMD_ERROR"), true, failed("AMD_ERROR")),
            (Some("TELECOM_PROBLEM"), None, false, failed("TELECOM_PROBLEM")),
            (Some("TELECOM_POTENTIAL_BLOCKING"), None, false, failed("TELECOM_POTENTIAL_BLOCKING")),
            (Some("OUTBOUND_DESTINATION_ENDPOINT_ERROR"), None, false, failed("OUTBOUND_DESTINATION_ENDPOINT_ERROR")),
            (Some("OUTBOUND_RESOURCE_ERROR"), None, false, failed("OUTBOUND_RESOURCE_ERROR")),
            (Some("OUTBOUND_ATTEMPT_FAILED"), None, false, failed("OUTBOUND_ATTEMPT_FAILED")),
            (Some("EXPIRED"), None, false, failed("EXPIRED")),
            (Some("CUSTOMER_DISCONNECT"), None, false, failed("CUSTOMER_DISCONNECT")),
            (Some("CUSTOMER_DISCONNECT"), Some("SOME_FUTURE_STATUS"), false, failed("CUSTOMER_DISCONNECT")),
            (None, Some("AMD_NOT_APPLICABLE"), false, failed("AMD_NOT_APPLICABLE")),
            (None, None, false, failed("no disconnect reason")),
            (Some(""), Some(" "), false, failed("no disconnect reason")),
            (Some("TELECOM_NUMBER_INVALID"), None, false, invalid("TELECOM_NUMBER_INVALID")),
            (Some("TELECOM_NUMBER_INVALID"), Some("SIT_TONE_INVALID_NUMBER"), true, invalid("TELECOM_NUMBER_INVALID")),
            (Some("CUSTOMER_DISCONNECT"), Some("SIT_TONE_INVALID_NUMBER"), true, invalid("SIT_TONE_INVALID_NUMBER")),
            // DescribeContact's own spellings.
            (Some("CUSTOMER_DISCONNECT"), Some("ANSWERED"), true, success("CUSTOMER_DISCONNECT")),
            (None, Some("ANSWERED"), true, success("ANSWERED")),
            (Some("CUSTOMER_DISCONNECT"), Some("UNDETECTED"), true, no_answer("UNDETECTED")),
            (Some("TELECOM_UNANSWERED"), Some("UNDETECTED"), false, no_answer("TELECOM_UNANSWERED")),
            (Some("TELECOM_BUSY"), Some("UNDETECTED"), false, busy("TELECOM_BUSY")),
            (Some("CUSTOMER_DISCONNECT"), Some("ERROR"), true, failed("ERROR")),
        ];
        for (reason, amd, was_connected, want) in cases {
            let got = report(
                reason,
                amd,
                connected.filter(|_| was_connected),
                disconnected,
            );
            assert_eq!(
                got, want,
                "{reason:?} / {amd:?} / connected: {was_connected}"
            );
        }
    }

    #[test]
    fn talk_time_is_whole_seconds_and_never_negative() {
        let at = |t| utc_at(t);
        assert_eq!(
            talk_seconds(
                at("2025-03-11T14:01:07.999Z"),
                at("2025-03-11T14:01:08.998Z")
            ),
            0
        );
        assert_eq!(
            talk_seconds(
                at("2025-03-11T14:01:07.000Z"),
                at("2025-03-11T14:01:09.999Z")
            ),
            2
        );
        assert_eq!(
            talk_seconds(
                at("2025-03-11T14:01:09.000Z"),
                at("2025-03-11T14:01:07.000Z")
            ),
            0
        );
        assert_eq!(talk_seconds(None, at("2025-03-11T14:01:07.000Z")), 0);
        assert_eq!(talk_seconds(at("2025-03-11T14:01:07.000Z"), None), 0);
    }

    /// The ended call a contact event tells, `None` for any other event.
    fn disconnect_of(body: &str) -> Option<Disconnect> {
        match parse_event(body).unwrap() {
            Some(ContactEvent::Disconnected(disconnect)) => Some(disconnect),
            Some(other) => panic!("not a DISCONNECTED event: {other:?}"),
            None => None,
        }
    }

    fn disconnect(body: &str) -> Disconnect {
        disconnect_of(body).expect("a DISCONNECTED voice event")
    }

    fn expect(contact_id: &str, reason: Reason, duration: u64, detail: &str) -> Disconnect {
        Disconnect {
            contact_id: contact_id.into(),
            report: CallReport {
                results: Default::default(),
                reason,
                duration,
                detail: detail.into(),
            },
        }
    }

    #[test]
    fn recorded_events_a_person_answered() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../tests/events/connect-disconnected-human.json"
            )),
            expect(
                "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83",
                Reason::Answered,
                102,
                "CUSTOMER_DISCONNECT"
            )
        );
    }

    /// D30: the same answered call, put in a queue by the flow: with an agent it is answered;
    /// without one it is abandoned, whatever it talked to the flow.
    #[test]
    fn an_answered_call_no_agent_took_is_abandoned() {
        let recorded: serde_json::Value = serde_json::from_str(include_str!(
            "../../../../tests/events/connect-disconnected-human.json"
        ))
        .unwrap();
        let with = |queue: bool, agent: bool| {
            let mut event = recorded.clone();
            if queue {
                event["detail"]["queueInfo"] = serde_json::json!({"queueArn": "arn:aws:connect:::queue/q", "enqueueTimestamp": "2025-03-11T14:00:05.000Z"});
            }
            if agent {
                event["detail"]["agentInfo"] = serde_json::json!({"agentArn": "arn:aws:connect:::agent/a", "connectedToAgentTimestamp": "2025-03-11T14:00:06.000Z"});
            }
            disconnect(&event.to_string()).report
        };
        assert_eq!(with(false, false).reason, Reason::Answered);
        assert_eq!(with(true, true).reason, Reason::Answered);
        let abandoned = with(true, false);
        assert_eq!(
            (
                abandoned.reason,
                abandoned.duration,
                abandoned.detail.as_str()
            ),
            (Reason::Abandoned, 0, "QUEUE_ABANDONED")
        );
        assert_eq!(abandoned.outcome(), Outcome::NoAnswer);
        // A call nobody answered stays what it was, queue or not.
        let unanswered = abandoned_in_queue(Reason::NoAnswer.report(0), true, false);
        assert_eq!(unanswered.reason, Reason::NoAnswer);
    }

    #[test]
    fn recorded_events_voicemail() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../tests/events/connect-disconnected-voicemail.json"
            )),
            expect(
                "a41c6e09-2b7d-4f38-8e5a-c9d0f1b27e64",
                Reason::Voicemail,
                0,
                "VOICEMAIL_BEEP"
            )
        );
    }

    #[test]
    fn recorded_events_unanswered() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../tests/events/connect-disconnected-unanswered.json"
            )),
            expect(
                "e7b3a920-5f1c-4d86-9a2e-6c04d8f1b359",
                Reason::NoAnswer,
                0,
                "AMD_UNANSWERED"
            )
        );
    }

    #[test]
    fn recorded_events_busy() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../tests/events/connect-disconnected-busy.json"
            )),
            expect(
                "52d09f3e-8a61-4b7c-a3e5-f2c8b1d94e06",
                Reason::Busy,
                0,
                "TELECOM_BUSY"
            )
        );
    }

    #[test]
    fn recorded_events_invalid_number() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../tests/events/connect-disconnected-invalid-number.json"
            )),
            expect(
                "8c1e4b75-3d92-4a0f-b6c8-e5a7f2d06b19",
                Reason::InvalidNumber,
                0,
                "TELECOM_NUMBER_INVALID"
            )
        );
    }

    /// D18: the reason each recorded contact event is counted under.
    #[test]
    fn recorded_events_give_their_reasons() {
        use outbound_model::call::Reason;
        let reason = |body: &str| disconnect(body).report.reason;
        assert_eq!(
            reason(include_str!(
                "../../../../tests/events/connect-disconnected-human.json"
            )),
            Reason::Answered
        );
        assert_eq!(
            reason(include_str!(
                "../../../../tests/events/connect-disconnected-voicemail.json"
            )),
            Reason::Voicemail
        );
        assert_eq!(
            reason(include_str!(
                "../../../../tests/events/connect-disconnected-unanswered.json"
            )),
            Reason::NoAnswer
        );
        assert_eq!(
            reason(include_str!(
                "../../../../tests/events/connect-disconnected-busy.json"
            )),
            Reason::Busy
        );
        assert_eq!(
            reason(include_str!(
                "../../../../tests/events/connect-disconnected-invalid-number.json"
            )),
            Reason::InvalidNumber
        );
    }

    /// D18: every disconnect reason and detection status of the mapping, as a reason.
    #[test]
    fn disconnect_reasons_and_detection_statuses_map_to_reasons() {
        use outbound_model::call::Reason;
        let connected = utc_at("2025-03-11T14:01:07.212Z");
        #[rustfmt::skip]
        let cases = [
            (Some("CUSTOMER_DISCONNECT"), Some("HUMAN_ANSWERED"), true, Reason::Answered),
            (Some("CONTACT_FLOW_DISCONNECT"), Some("VOICEMAIL_BEEP"), true, Reason::Voicemail),
            (Some("CUSTOMER_DISCONNECT"), Some("VOICEMAIL_NO_BEEP"), true, Reason::Voicemail),
            (Some("CUSTOMER_DISCONNECT"), Some("AMD_UNRESOLVED"), true, Reason::NoAnswer),
            (Some("TELECOM_TIMEOUT"), Some("AMD_UNANSWERED"), false, Reason::NoAnswer),
            (Some("TELECOM_UNANSWERED"), None, false, Reason::NoAnswer),
            (Some("TELECOM_BUSY"), Some("AMD_NOT_APPLICABLE"), false, Reason::Busy),
            (Some("CUSTOMER_DISCONNECT"), Some("SIT_TONE_BUSY"), true, Reason::Busy),
            (Some("CUSTOMER_DISCONNECT"), Some("FAX_MACHINE_DETECTED"), true, Reason::Error),
            (Some("TELECOM_PROBLEM"), None, false, Reason::Error),
            (Some("OUTBOUND_ATTEMPT_FAILED"), None, false, Reason::Error),
            (None, None, false, Reason::Error),
            (Some("TELECOM_NUMBER_INVALID"), None, false, Reason::InvalidNumber),
            (Some("CUSTOMER_DISCONNECT"), Some("SIT_TONE_INVALID_NUMBER"), true, Reason::InvalidNumber),
        ];
        for (disconnect, amd, was_connected, want) in cases {
            let got = report(disconnect, amd, connected.filter(|_| was_connected), None).reason;
            assert_eq!(got, want, "{disconnect:?} / {amd:?}");
        }
        assert_eq!(CallReport::no_outcome().reason, Reason::NoOutcome);
    }

    #[test]
    fn recorded_connected_to_agent_event_names_the_call_an_agent_took() {
        let body = include_str!("../../../../tests/events/connect-connected-to-agent.json");
        assert_eq!(
            parse_event(body).unwrap(),
            Some(ContactEvent::ConnectedToAgent {
                contact_id: "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83".into()
            })
        );
        let nameless = body.replace(
            "\"contactId\": \"3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83\",",
            "",
        );
        assert!(matches!(parse_event(&nameless), Err(Error::Invalid(_))));
    }

    #[test]
    fn recorded_events_other_event_types_are_ignored() {
        let body = include_str!("../../../../tests/events/connect-connected-to-system.json");
        assert_eq!(disconnect_of(body), None);
    }

    #[test]
    fn recorded_sqs_batch_of_the_call_events_function() {
        let batch: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_str(include_str!(
            "../../../../tests/events/connect-sqs-batch.json"
        ))
        .unwrap();
        let parsed: Vec<Option<Disconnect>> = batch
            .records
            .iter()
            .map(|record| disconnect_of(record.body.as_deref().unwrap()))
            .collect();
        assert_eq!(
            parsed,
            vec![
                None,
                Some(expect(
                    "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83",
                    Reason::Answered,
                    102,
                    "CUSTOMER_DISCONNECT"
                )),
            ]
        );
    }

    fn event(detail: serde_json::Value) -> String {
        serde_json::json!({
            "version": "0",
            "id": "6f0a2c4e-31b7-5d8e-a9c2-7e14b3f0d265",
            "detail-type": "Amazon Connect Contact Event",
            "source": "aws.connect",
            "account": "482915736204",
            "time": "2025-03-11T14:02:50Z",
            "region": "eu-west-1",
            "resources": [],
            "detail": detail,
        })
        .to_string()
    }

    #[test]
    fn other_channels_and_sources_are_ignored() {
        let chat = event(serde_json::json!({
            "eventType": "DISCONNECTED",
            "contactId": "c1",
            "channel": "CHAT",
            "disconnectReason": "CUSTOMER_DISCONNECT",
        }));
        assert_eq!(parse_event(&chat).unwrap(), None);
        let other_source = serde_json::json!({
            "version": "0",
            "detail-type": "Object Created",
            "source": "aws.s3",
            "detail": { "bucket": { "name": "uploads" } },
        })
        .to_string();
        assert_eq!(parse_event(&other_source).unwrap(), None);
    }

    #[test]
    fn pascal_case_fields_and_a_coded_reason_are_read() {
        let body = event(serde_json::json!({
            "EventType": "DISCONNECTED",
            "ContactId": "c1",
            "Channel": "Voice",
            "DisconnectReason": { "Code": "TELECOM_BUSY" },
            "DisconnectTimestamp": "2025-03-11T11:03:11.745Z",
        }));
        assert_eq!(
            disconnect(&body),
            expect("c1", Reason::Busy, 0, "TELECOM_BUSY")
        );
    }

    #[test]
    fn bodies_that_are_not_events_fail() {
        for body in [
            "",
            "not json",
            "[]",
            r#"{"Records": []}"#,
            r#"{"detail": 3}"#,
        ] {
            assert!(
                matches!(parse_event(body), Err(Error::Invalid(_))),
                "{body:?} was accepted"
            );
        }
        let no_contact =
            event(serde_json::json!({ "eventType": "DISCONNECTED", "channel": "VOICE" }));
        assert!(matches!(parse_event(&no_contact), Err(Error::Invalid(_))));
        let bad_time = event(serde_json::json!({
            "eventType": "DISCONNECTED",
            "contactId": "c1",
            "channel": "VOICE",
            "disconnectTimestamp": "yesterday",
        }));
        assert!(matches!(parse_event(&bad_time), Err(Error::Invalid(_))));
    }
}
