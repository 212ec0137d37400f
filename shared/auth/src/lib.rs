//! Authentication (D2) and tenants (D3): where a request's verified claims come from
//! ([`AuthConfig`]: the HTTP API's JWT authorizer in AWS, an HS256 secret verified in process
//! locally), the scopes a route needs, and the tenant a claim names. Reading them from a request
//! is the API's (`outbound_api::auth`).

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use outbound_model::error::{ConfigError, Error};
use outbound_model::Tenant;
use serde_json::{Map, Value};

/// Where the verified claims of a request come from.
#[derive(Clone, Debug)]
pub enum AuthConfig {
    /// Deployed behind the HTTP API JWT authorizer: claims are read from the request context.
    ApiGateway { tenant_claim: String },
    /// Local server and tests: the bearer token is verified in process.
    Local(LocalJwt),
}

/// Settings for verifying (and, for development, issuing) HS256 tokens in process.
#[derive(Clone)]
pub struct LocalJwt {
    pub secret: String,
    pub issuer: String,
    pub audience: String,
    pub tenant_claim: String,
}

impl std::fmt::Debug for LocalJwt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalJwt")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("tenant_claim", &self.tenant_claim)
            .finish_non_exhaustive()
    }
}

/// The signing secret of development tokens when `JWT_SECRET` is not set (development stacks only).
const DEV_SECRET: &str = "outbound-development-token-signing-key";
/// Fewest bytes a `JWT_SECRET` may have: an HMAC-SHA256 key shorter than its hash is guessable.
const MIN_SECRET_BYTES: usize = 32;

impl AuthConfig {
    /// `AUTH_MODE` = `apigateway` (default) or `local`; `TENANT_CLAIM` (default `tenant_id`);
    /// locally `JWT_SECRET`, `JWT_ISSUER`, `JWT_AUDIENCE` with development defaults.
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let tenant_claim = lookup("TENANT_CLAIM").unwrap_or_else(|| "tenant_id".into());
        match lookup("AUTH_MODE").as_deref().unwrap_or("apigateway") {
            "apigateway" => Ok(AuthConfig::ApiGateway { tenant_claim }),
            // Local mode trusts any token signed with the secret: never inside Lambda, where
            // the HTTP API's JWT authorizer is the one gate (D2), and never with the built-in
            // secret outside a development stack.
            "local" if lookup("AWS_LAMBDA_FUNCTION_NAME").is_some() => Err(ConfigError {
                name: "AUTH_MODE",
                problem: "local verifies tokens in process and is refused inside Lambda; use apigateway"
                    .into(),
            }),
            "local"
                if lookup("JWT_SECRET").is_none()
                    && lookup("OUTBOUND_DEV_STACK").as_deref() != Some("true") =>
            {
                Err(ConfigError {
                    name: "JWT_SECRET",
                    problem: "is not set: the built-in development secret is only for a development stack (OUTBOUND_DEV_STACK=true)"
                        .into(),
                })
            }
            "local"
                if lookup("JWT_SECRET")
                    .is_some_and(|secret| secret.len() < MIN_SECRET_BYTES) =>
            {
                Err(ConfigError {
                    name: "JWT_SECRET",
                    problem: format!("must be at least {MIN_SECRET_BYTES} bytes"),
                })
            }
            "local" => Ok(AuthConfig::Local(LocalJwt {
                secret: lookup("JWT_SECRET").unwrap_or_else(|| DEV_SECRET.into()),
                issuer: lookup("JWT_ISSUER").unwrap_or_else(|| "outbound-local".into()),
                audience: lookup("JWT_AUDIENCE").unwrap_or_else(|| "outbound".into()),
                tenant_claim,
            })),
            other => Err(ConfigError {
                name: "AUTH_MODE",
                problem: format!("{other:?} is neither apigateway nor local"),
            }),
        }
    }
}

/// Optional OAuth scopes per route group (`REQUIRE_SCOPES=true`; off by default): reads
/// (`GET`) need `{prefix}read`, the dialing operations (publish, pause, resume, stop, recall)
/// `{prefix}dial`, every other change `{prefix}write`, with `SCOPE_PREFIX` (default
/// `outbound/`, a Cognito resource server's identifier and `/`). The token's `scope` claim
/// (space separated, as in Cognito access tokens) must hold it, else 403.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequiredScopes {
    prefix: String,
}

/// The task operations that start, stop or steer calls.
const DIAL_OPERATIONS: [&str; 4] = ["publish", "pause", "resume", "stop"];

impl RequiredScopes {
    /// `REQUIRE_SCOPES` (`true` or `false`, default `false`) and `SCOPE_PREFIX`.
    pub fn from_lookup(
        lookup: &impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ConfigError> {
        match lookup("REQUIRE_SCOPES").as_deref().map(str::trim) {
            None | Some("") | Some("false") => Ok(None),
            Some("true") => Ok(Some(RequiredScopes {
                prefix: lookup("SCOPE_PREFIX").unwrap_or_else(|| "outbound/".into()),
            })),
            Some(other) => Err(ConfigError {
                name: "REQUIRE_SCOPES",
                problem: format!("{other:?} is neither true nor false"),
            }),
        }
    }

    /// The scope a request's route needs.
    pub fn needed(&self, method: &http::Method, path: &str) -> String {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let group = match (method, segments.as_slice()) {
            (&http::Method::GET | &http::Method::HEAD, _) => "read",
            (_, ["api", "task", operation]) if DIAL_OPERATIONS.contains(operation) => "dial",
            (_, ["api", "task", _, "recall"]) => "dial",
            _ => "write",
        };
        format!("{}{group}", self.prefix)
    }

    /// 403 unless `granted` (the token's `scope` claim) holds the scope the route needs.
    pub fn check(
        &self,
        method: &http::Method,
        path: &str,
        granted: Option<&str>,
    ) -> Result<(), Error> {
        let needed = self.needed(method, path);
        if granted.is_some_and(|scopes| scopes.split_whitespace().any(|s| s == needed)) {
            Ok(())
        } else {
            Err(Error::Forbidden(format!(
                "this token lacks the scope {needed}"
            )))
        }
    }
}

/// The tenant a verified `claim` names, or 403.
pub fn tenant_from(value: Option<&str>, claim: &str) -> Result<Tenant, Error> {
    match value {
        Some(value) => Tenant::parse(value)
            .map_err(|_| Error::Forbidden("token tenant is not a valid tenant id".into())),
        None => Err(Error::Forbidden(format!("token has no {claim} claim"))),
    }
}

impl LocalJwt {
    fn validation(&self) -> Validation {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = 0;
        validation
    }

    /// Verifies signature, algorithm, `exp`, `nbf`, issuer and audience.
    pub fn verify(&self, token: &str) -> Result<Map<String, Value>, Error> {
        let key = DecodingKey::from_secret(self.secret.as_bytes());
        jsonwebtoken::decode::<Map<String, Value>>(token, &key, &self.validation())
            .map(|data| data.claims)
            .map_err(|error| {
                use jsonwebtoken::errors::ErrorKind;
                let reason = match error.kind() {
                    ErrorKind::ExpiredSignature => "token has expired",
                    ErrorKind::ImmatureSignature => "token is not valid yet",
                    ErrorKind::InvalidIssuer => "token has the wrong issuer",
                    ErrorKind::InvalidAudience => "token has the wrong audience",
                    ErrorKind::InvalidSignature => "token signature is invalid",
                    ErrorKind::InvalidAlgorithm => "token algorithm is not accepted",
                    _ => "token is malformed",
                };
                Error::Unauthenticated(reason.into())
            })
    }

    /// Signs a development token for `tenant`, valid for `ttl_seconds`.
    pub fn issue(&self, tenant: &str, ttl_seconds: i64) -> String {
        let now = chrono::Utc::now().timestamp();
        let mut claims = Map::new();
        claims.insert("sub".into(), Value::from(format!("dev-{tenant}")));
        claims.insert(self.tenant_claim.clone(), Value::from(tenant));
        claims.insert("iss".into(), Value::from(self.issuer.clone()));
        claims.insert("aud".into(), Value::from(self.audience.clone()));
        claims.insert("iat".into(), Value::from(now));
        claims.insert("exp".into(), Value::from(now + ttl_seconds));
        self.sign(&Value::Object(claims))
    }

    /// Signs arbitrary claims (tests use it to make tokens that must be refused).
    pub fn sign(&self, claims: &Value) -> String {
        let key = EncodingKey::from_secret(self.secret.as_bytes());
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &key)
            .expect("HS256 signing of a JSON object cannot fail")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Result<AuthConfig, ConfigError> {
        let map: std::collections::HashMap<&str, &str> = pairs.iter().copied().collect();
        AuthConfig::from_lookup(&|name: &str| map.get(name).map(|v| v.to_string()))
    }

    /// D2: in-process verification never runs inside Lambda, and the built-in secret only on a
    /// development stack.
    #[test]
    fn local_mode_is_refused_where_it_would_be_a_hole() {
        let inside_lambda = config(&[
            ("AUTH_MODE", "local"),
            ("JWT_SECRET", "0123456789abcdef0123456789abcdef"),
            ("AWS_LAMBDA_FUNCTION_NAME", "outbound-TaskApiFunction"),
        ]);
        assert_eq!(inside_lambda.unwrap_err().name, "AUTH_MODE");
        let built_in_secret = config(&[("AUTH_MODE", "local")]);
        assert_eq!(built_in_secret.unwrap_err().name, "JWT_SECRET");
        let short = config(&[("AUTH_MODE", "local"), ("JWT_SECRET", "s3cret")]);
        assert_eq!(short.unwrap_err().name, "JWT_SECRET", "under 32 bytes");
        let long = "0123456789abcdef0123456789abcdef";
        assert!(config(&[("AUTH_MODE", "local"), ("JWT_SECRET", long)]).is_ok());
        assert!(config(&[("AUTH_MODE", "local"), ("OUTBOUND_DEV_STACK", "true")]).is_ok());
        assert!(
            config(&[("AWS_LAMBDA_FUNCTION_NAME", "f")]).is_ok(),
            "apigateway mode"
        );
    }

    #[test]
    fn each_route_group_needs_its_scope() {
        let scopes = RequiredScopes::from_lookup(&|name: &str| match name {
            "REQUIRE_SCOPES" => Some("true".into()),
            "SCOPE_PREFIX" => Some("api.example/".into()),
            _ => None,
        })
        .unwrap()
        .unwrap();
        for (method, path, needed) in [
            (http::Method::GET, "/api/task/list", "api.example/read"),
            (
                http::Method::GET,
                "/api/dataSource/x/contacts",
                "api.example/read",
            ),
            (
                http::Method::POST,
                "/api/dataSource/add",
                "api.example/write",
            ),
            (http::Method::POST, "/api/task/update", "api.example/write"),
            (http::Method::POST, "/api/task/close", "api.example/write"),
            (http::Method::POST, "/api/task/publish", "api.example/dial"),
            (http::Method::POST, "/api/task/stop", "api.example/dial"),
            (http::Method::POST, "/api/task/x/recall", "api.example/dial"),
            (
                http::Method::POST,
                "/api/task/x/exportJob",
                "api.example/write",
            ),
        ] {
            assert_eq!(scopes.needed(&method, path), needed, "{method} {path}");
        }
        let off = |value: &str| {
            RequiredScopes::from_lookup(&|name: &str| {
                (name == "REQUIRE_SCOPES").then(|| value.to_owned())
            })
        };
        assert_eq!(off("false").unwrap(), None);
        assert_eq!(RequiredScopes::from_lookup(&|_: &str| None).unwrap(), None);
        assert_eq!(off("yes").unwrap_err().name, "REQUIRE_SCOPES");
    }

    #[test]
    fn tenant_with_key_separator_is_refused() {
        assert_eq!(
            tenant_from(Some("a#b"), "t").unwrap_err().status_code(),
            403
        );
        assert_eq!(tenant_from(Some(""), "t").unwrap_err().status_code(), 403);
    }
}
