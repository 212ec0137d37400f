//! The one mapping from Connect's disconnect reasons and answering-machine statuses to the
//! outcomes of D13 and the service's reasons (D18): [`report`], and [`abandoned_in_queue`] for
//! an answered call no agent took (D30). Contact events and `DescribeContact` both read calls
//! through it.

use chrono::{DateTime, Utc};
use outbound_model::call::{CallReport, Outcome, Reason};

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

pub(super) fn utc(time: &aws_sdk_connect::primitives::DateTime) -> Option<DateTime<Utc>> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
