//! The edge of the local stack: what stands between a client and the functions in AWS (D32),
//! so that `make run` refuses a flood where AWS would, and a test can show one tenant's flood
//! leaving another's answers unchanged. Three limits, each checked before the next:
//! - the web ACL's rule per token (the `Authorization` header, on `/api/...` only);
//! - its rule per source address (every path);
//! - the API stage's throttle (`/api/...`, every caller together).
//!
//! AWS WAF counts a rule's requests over a window (`EdgeRateWindowSeconds`) and acts within
//! seconds of the count going over; the stand-in refuses at once, at the same average rate, with
//! one second's worth of requests as its burst. A refusal is what each answers in AWS: the web
//! ACL's 429 with `Retry-After` and its custom body ([`WAF_REFUSAL_BODY`], the template's), the
//! stage's 429 `{"message":"Too Many Requests"}`. Settings are the template's parameters by the
//! same names (`EDGE_REQUESTS_PER_TOKEN`, `EDGE_REQUESTS_PER_ADDRESS`,
//! `EDGE_RATE_WINDOW_SECONDS`, `API_THROTTLING_RATE_LIMIT`, `API_THROTTLING_BURST_LIMIT`), with
//! their defaults.

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;

/// The body of the web ACL's refusal (`EdgeWebAcl`'s `too-many-requests` in `template.yaml`,
/// which a template test holds equal to this).
pub const WAF_REFUSAL_BODY: &str = r#"{"code":429,"message":"too many requests from this token or address; try again later","data":null}"#;

/// The body of API Gateway's refusal when a stage's throttle is reached.
pub const STAGE_REFUSAL_BODY: &str = r#"{"message":"Too Many Requests"}"#;

/// The limits of the edge, as the template's parameters name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeLimits {
    /// `EdgeRequestsPerToken`: requests one token may send in a window.
    pub requests_per_token: u32,
    /// `EdgeRequestsPerAddress`: requests one source address may send in a window.
    pub requests_per_address: u32,
    /// `EdgeRateWindowSeconds`.
    pub window_seconds: u32,
    /// `ApiThrottlingRateLimit`: the stage's requests a second.
    pub stage_rate: u32,
    /// `ApiThrottlingBurstLimit`: the stage's burst.
    pub stage_burst: u32,
}

impl Default for EdgeLimits {
    /// The template's defaults.
    fn default() -> Self {
        EdgeLimits {
            requests_per_token: 6000,
            requests_per_address: 12000,
            window_seconds: 60,
            stage_rate: 1200,
            stage_burst: 2400,
        }
    }
}

/// A setting of the edge that is not a positive whole number.
#[derive(Debug, thiserror::Error)]
#[error("{name}={value}: expected a whole number from 1 to {}", u32::MAX)]
pub struct BadSetting {
    name: &'static str,
    value: String,
}

impl EdgeLimits {
    /// The limits from `lookup` (the environment, in `local-api`), each unset one the template's
    /// default.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, BadSetting> {
        let defaults = EdgeLimits::default();
        let read = |name: &'static str, default: u32| match lookup(name) {
            None => Ok(default),
            Some(value) => match value.trim().parse::<u32>() {
                Ok(number) if number > 0 => Ok(number),
                _ => Err(BadSetting { name, value }),
            },
        };
        Ok(EdgeLimits {
            requests_per_token: read("EDGE_REQUESTS_PER_TOKEN", defaults.requests_per_token)?,
            requests_per_address: read("EDGE_REQUESTS_PER_ADDRESS", defaults.requests_per_address)?,
            window_seconds: read("EDGE_RATE_WINDOW_SECONDS", defaults.window_seconds)?,
            stage_rate: read("API_THROTTLING_RATE_LIMIT", defaults.stage_rate)?,
            stage_burst: read("API_THROTTLING_BURST_LIMIT", defaults.stage_burst)?,
        })
    }

    /// A rule's quota: its window's requests spread evenly over the window, at least one a
    /// second, with a second's worth at once.
    fn per_window(self, requests: u32) -> Quota {
        let per_second = nonzero(requests / self.window_seconds);
        Quota::per_second(per_second).allow_burst(per_second)
    }
}

fn nonzero(value: u32) -> NonZeroU32 {
    NonZeroU32::new(value).unwrap_or(NonZeroU32::MIN)
}

/// The three limits' state, shared by every connection.
#[derive(Clone)]
pub struct Edge {
    limits: EdgeLimits,
    tokens: Arc<DefaultKeyedRateLimiter<HeaderValue>>,
    addresses: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    stage: Arc<DefaultDirectRateLimiter>,
}

/// Keys a rule has seen before it forgets those that have been quiet long enough to be full again.
const KEYS_KEPT: usize = 10_000;

impl Edge {
    pub fn new(limits: EdgeLimits) -> Self {
        Edge {
            limits,
            tokens: Arc::new(RateLimiter::keyed(
                limits.per_window(limits.requests_per_token),
            )),
            addresses: Arc::new(RateLimiter::keyed(
                limits.per_window(limits.requests_per_address),
            )),
            stage: Arc::new(RateLimiter::direct(
                Quota::per_second(nonzero(limits.stage_rate))
                    .allow_burst(nonzero(limits.stage_burst)),
            )),
        }
    }

    /// Which of the three refuses a request to `path` with `authorization` from `address`, if any.
    fn refusal(
        &self,
        path: &str,
        authorization: Option<&HeaderValue>,
        address: Option<IpAddr>,
    ) -> Option<Refusal> {
        let api = path.starts_with("/api/");
        if let (true, Some(token)) = (api, authorization) {
            forget_quiet(&self.tokens);
            if self.tokens.check_key(token).is_err() {
                return Some(Refusal::WebAcl);
            }
        }
        if let Some(address) = address {
            forget_quiet(&self.addresses);
            if self.addresses.check_key(&address).is_err() {
                return Some(Refusal::WebAcl);
            }
        }
        (api && self.stage.check().is_err()).then_some(Refusal::Stage)
    }

    /// The answer of a refused request, as AWS gives it.
    fn refused(&self, refusal: Refusal) -> Response {
        let json = HeaderValue::from_static("application/json");
        match refusal {
            Refusal::WebAcl => (
                StatusCode::TOO_MANY_REQUESTS,
                [
                    (header::CONTENT_TYPE, json),
                    (
                        header::RETRY_AFTER,
                        HeaderValue::from(self.limits.window_seconds),
                    ),
                ],
                WAF_REFUSAL_BODY,
            )
                .into_response(),
            Refusal::Stage => (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::CONTENT_TYPE, json)],
                STAGE_REFUSAL_BODY,
            )
                .into_response(),
        }
    }
}

fn forget_quiet<K: std::hash::Hash + Eq + Clone>(limiter: &DefaultKeyedRateLimiter<K>) {
    if limiter.len() > KEYS_KEPT {
        limiter.retain_recent();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    WebAcl,
    Stage,
}

/// The layer's function (`axum::middleware::from_fn_with_state`). The source address is the
/// connection's (`into_make_service_with_connect_info`); without it only the token and the stage
/// are limited.
pub async fn guard(State(edge): State<Edge>, request: Request, next: Next) -> Response {
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip());
    let authorization = request.headers().get(header::AUTHORIZATION);
    match edge.refusal(request.uri().path(), authorization, address) {
        Some(refusal) => edge.refused(refusal),
        None => next.run(request).await,
    }
}

/// `routes` behind `edge`; served with each connection's address
/// (`into_make_service_with_connect_info`), the rule per address applies too.
pub fn behind(edge: Edge, routes: axum::Router) -> axum::Router {
    routes.layer(axum::middleware::from_fn_with_state(edge, guard))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> EdgeLimits {
        EdgeLimits {
            requests_per_token: 60 * 3,
            requests_per_address: 60 * 5,
            window_seconds: 60,
            stage_rate: 4,
            stage_burst: 4,
        }
    }

    #[test]
    fn a_token_past_its_rate_is_refused_by_the_web_acl_and_another_token_is_not() {
        let edge = Edge::new(limits());
        let (flood, calm) = (
            HeaderValue::from_static("Bearer a"),
            HeaderValue::from_static("Bearer b"),
        );
        let answers: Vec<_> = (0..4)
            .map(|_| edge.refusal("/api/settings", Some(&flood), None))
            .collect();
        assert_eq!(answers, [None, None, None, Some(Refusal::WebAcl)]);
        assert_eq!(edge.refusal("/api/settings", Some(&calm), None), None);
    }

    #[test]
    fn the_stage_counts_every_caller_together_and_only_the_api() {
        let edge = Edge::new(limits());
        let answers: Vec<_> = ["a", "b", "c", "d", "e"]
            .map(|token| {
                let token = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
                edge.refusal("/api/settings", Some(&token), None)
            })
            .to_vec();
        assert_eq!(answers, [None, None, None, None, Some(Refusal::Stage)]);
        assert_eq!(edge.refusal("/index.html", None, None), None);
    }

    #[test]
    fn an_address_past_its_rate_is_refused_whatever_its_tokens_and_paths() {
        let edge = Edge::new(limits());
        let address = Some(IpAddr::from([127, 0, 0, 1]));
        let answers: Vec<_> = (0..6)
            .map(|n| edge.refusal(&format!("/asset-{n}.js"), None, address))
            .collect();
        assert_eq!(
            answers,
            [None, None, None, None, None, Some(Refusal::WebAcl)]
        );
        let other = Some(IpAddr::from([127, 0, 0, 2]));
        assert_eq!(edge.refusal("/index.html", None, other), None);
    }

    #[test]
    fn settings_are_the_templates_parameters_and_refuse_what_is_not_a_positive_number() {
        let set = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            }
        };
        assert_eq!(
            EdgeLimits::from_lookup(set(&[])).unwrap(),
            EdgeLimits::default()
        );
        let tuned = EdgeLimits::from_lookup(set(&[
            ("EDGE_REQUESTS_PER_TOKEN", "120"),
            ("API_THROTTLING_BURST_LIMIT", "7"),
        ]))
        .unwrap();
        assert_eq!((tuned.requests_per_token, tuned.stage_burst), (120, 7));
        for bad in ["0", "-1", "ten", "4294967296"] {
            let lookup = move |name: &str| (name == "EDGE_RATE_WINDOW_SECONDS").then(|| bad.into());
            let error = EdgeLimits::from_lookup(lookup).unwrap_err().to_string();
            assert_eq!(
                error,
                format!(
                    "EDGE_RATE_WINDOW_SECONDS={bad}: expected a whole number from 1 to 4294967295"
                )
            );
        }
    }
}
