//! Placing and reading calls: [`ConnectProvider`] (`StartOutboundVoiceContact`,
//! `DescribeContact`, `GetContactAttributes`, the queues' agents), which API errors refuse the
//! task, the number, or only this moment, and what a described contact says of its call.

use super::reasons::{abandoned_in_queue, report, utc};
use super::{attributes_fit, CallerSource, ConnectSettings};
use crate::aws::Dependency;
use crate::aws::Lazy;
use crate::telephony::provider::{
    Busy, CallRequest, CallStatus, PlaceError, Provider, ServiceRefusal,
};
use aws_sdk_connect::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_connect::operation::describe_contact::DescribeContactError;
use aws_sdk_connect::operation::start_outbound_voice_contact::builders::StartOutboundVoiceContactInputBuilder;
use aws_sdk_connect::operation::start_outbound_voice_contact::{
    StartOutboundVoiceContactError, StartOutboundVoiceContactInput,
};
use aws_sdk_connect::types::{AnswerMachineDetectionConfig, Contact, TrafficType};
use outbound_model::error::Error;
use outbound_model::pacing::QueueAgents;
use outbound_model::signature::Carried;
use outbound_model::telephony::Voicemail;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// starts carries (`start_request`): `GetContactAttributes`. A contact Connect does not know,
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
        .destination_phone_number(&call.to)
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

#[cfg(test)]
mod tests {
    use super::super::tests::call;
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
    use outbound_model::call::{CallReport, Reason};
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
}
