//! The dialing engine (D13), over the rules of which contacts a running task calls and when
//! (`outbound_model::plan`, and called-party local time in `outbound_model::local_time`) and the
//! telephony providers that place the calls (`outbound_adapters::telephony`): the three entry
//! points the functions run ([`engine`]): the tick that finds running tasks, the dialer that
//! claims and places calls for one task, and the recorder of call outcomes ([`call_event`]),
//! whose queues' messages [`inbox`] decodes; and what an Amazon Connect flow reports during a
//! call ([`flow_results`], D22).

pub mod call_event;
pub mod engine;
pub mod flow_results;
pub mod inbox;
