//! Authentication (D2, D25) and tenants (D3): where a request's verified claims come from
//! ([`AuthConfig`]: the HTTP API's JWT authorizer in AWS, an HS256 secret verified in process
//! locally), that a token is an access token, the scope a route needs, and the tenant a claim
//! names. Reading them from a request
//! is the API's (`outbound_api::auth`).

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use outbound_model::error::{ConfigError, Error};
use outbound_model::Tenant;
use serde_json::{Map, Value};

/// Where the verified claims of a request come from.
#[derive(Clone, Debug)]
pub enum AuthConfig {
    /// Deployed behind the HTTP API JWT authorizer: claims are read from the request context.
    /// `token_use_required` when the authorizer's issuer is a Cognito user pool (`JWT_ISSUER`
    /// on `cognito-idp.`), whose access tokens always say `token_use` (D32): one without it
    /// is not Cognito's access token. Other issuers' access tokens need not carry it.
    ApiGateway {
        tenant_claim: String,
        token_use_required: bool,
    },
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
            "apigateway" => Ok(AuthConfig::ApiGateway {
                tenant_claim,
                token_use_required: lookup("JWT_ISSUER")
                    .is_some_and(|issuer| is_cognito_issuer(&issuer)),
            }),
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

/// Whether `issuer` is a Cognito user pool's (`https://cognito-idp.{region}.amazonaws.com/{pool}`).
fn is_cognito_issuer(issuer: &str) -> bool {
    issuer
        .strip_prefix("https://")
        .is_some_and(|rest| rest.starts_with("cognito-idp."))
}

/// The group of a tenant's administrators (D32).
pub const ADMINS: &str = "admins";
/// The group of the service's operators (D29).
pub const OPERATORS: &str = "operators";

/// The OAuth scopes of D25, each `{prefix}{name}` in a token's `scope` claim (space separated,
/// as in Cognito access tokens), with `SCOPE_PREFIX` (default `outbound/`, a Cognito resource
/// server's identifier and `/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Reads: every `GET`.
    Read,
    /// Every change that is not an administrator's.
    Write,
    /// The tenant's settings (`POST /api/settings/update`) and do-not-call deletes.
    Admin,
    /// The operator's routes (`/api/operator/...`), whatever the token's tenant.
    Operator,
}

impl Scope {
    /// The group whose members alone may make the requests of a role (D29, D32), whether or
    /// not scopes are required: Cognito grants scopes per app client, not per person.
    pub const fn group(self) -> Option<&'static str> {
        match self {
            Scope::Admin => Some(ADMINS),
            Scope::Operator => Some(OPERATORS),
            Scope::Read | Scope::Write => None,
        }
    }

    /// The groups of the roles `scopes` name (`.../admin` gives `admins`, `.../operator`
    /// `operators`), as Cognito gives a member of those groups a token with those scopes.
    pub fn role_groups(scopes: &[&str]) -> Vec<&'static str> {
        [Scope::Admin, Scope::Operator]
            .into_iter()
            .filter(|role| {
                let suffix = format!("/{}", role.name());
                scopes.iter().any(|scope| scope.ends_with(&suffix))
            })
            .filter_map(Scope::group)
            .collect()
    }

    /// The scope's name after the prefix.
    pub const fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
            Scope::Operator => "operator",
        }
    }

    /// The scope a route needs (D25): `/api/operator/...` the operator's, settings updates and
    /// do-not-call deletes the administrator's, other reads `read`, other changes `write`.
    pub fn of_route(method: &http::Method, path: &str) -> Scope {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        match (method, segments.as_slice()) {
            (_, ["api", "operator", ..]) => Scope::Operator,
            (&http::Method::GET | &http::Method::HEAD, _) => Scope::Read,
            (_, ["api", "settings", "update"] | ["api", "dnc", "delete"]) => Scope::Admin,
            _ => Scope::Write,
        }
    }
}

/// Optional scopes per route (`REQUIRE_SCOPES=true`; off by default): each route needs its
/// [`Scope`], with `SCOPE_PREFIX` before its name. The token's `scope` claim must hold it, else
/// 403.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequiredScopes {
    prefix: String,
}

impl RequiredScopes {
    /// `REQUIRE_SCOPES` (`true` or `false`, default `false`) and `SCOPE_PREFIX`.
    pub fn from_lookup(
        lookup: &impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ConfigError> {
        match lookup("REQUIRE_SCOPES").as_deref().map(str::trim) {
            None | Some("") | Some("false") => Ok(None),
            Some("true") => Ok(Some(RequiredScopes::always(lookup))),
            Some(other) => Err(ConfigError {
                name: "REQUIRE_SCOPES",
                problem: format!("{other:?} is neither true nor false"),
            }),
        }
    }

    /// Every route's scope whatever `REQUIRE_SCOPES` says, with `SCOPE_PREFIX`: what the
    /// operator's routes check always (D25).
    pub fn always(lookup: &impl Fn(&str) -> Option<String>) -> Self {
        RequiredScopes {
            prefix: lookup("SCOPE_PREFIX").unwrap_or_else(|| "outbound/".into()),
        }
    }

    /// `scope` as a token carries it.
    pub fn spelled(&self, scope: Scope) -> String {
        format!("{}{}", self.prefix, scope.name())
    }

    /// The scope a request's route needs, as a token carries it.
    pub fn needed(&self, method: &http::Method, path: &str) -> String {
        self.spelled(Scope::of_route(method, path))
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

/// 401 unless a token's `token_use` claim is `access`, or absent where it is not `required`
/// (D25, D32): an ID token (`id`) or any other kind is not an access token, whatever else it
/// says. `token_use` is the claim as text; a claim that is not text is passed as `Some("")`.
pub fn check_token_use(token_use: Option<&str>, required: bool) -> Result<(), Error> {
    match token_use {
        Some("access") => Ok(()),
        None if !required => Ok(()),
        None => Err(Error::Unauthenticated(
            "token has no token_use claim, which every access token of its issuer has".into(),
        )),
        Some(_) => Err(Error::Unauthenticated(
            "token is not an access token".into(),
        )),
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

    /// Signs a development token for `tenant`, valid for `ttl_seconds`: an access token
    /// (`token_use`) of a member of no group, without scopes.
    pub fn issue(&self, tenant: &str, ttl_seconds: i64) -> String {
        self.issue_with(tenant, ttl_seconds, &[], &[])
    }

    /// Signs a development access token of an administrator of `tenant` (a member of
    /// `admins`, D32), without scopes: `make run`'s token.
    pub fn issue_admin(&self, tenant: &str, ttl_seconds: i64) -> String {
        self.issue_with(tenant, ttl_seconds, &[], &[ADMINS])
    }

    /// Signs a development access token for `tenant`, valid for `ttl_seconds`, whose `scope`
    /// claim holds `scopes` (space separated; no claim when there are none), and whose
    /// `cognito:groups` holds the group of each scope that makes a role (`.../admin` puts
    /// `admins`, `.../operator` `operators`: D29), as a user of those groups gets them.
    pub fn issue_scoped(&self, tenant: &str, ttl_seconds: i64, scopes: &[&str]) -> String {
        self.issue_with(tenant, ttl_seconds, scopes, &Scope::role_groups(scopes))
    }

    /// Signs a development access token for `tenant`, valid for `ttl_seconds`, granting
    /// `scopes`, of a member of `groups` (no `cognito:groups` claim when there are none).
    pub fn issue_with(
        &self,
        tenant: &str,
        ttl_seconds: i64,
        scopes: &[&str],
        groups: &[&str],
    ) -> String {
        let now = chrono::Utc::now().timestamp();
        let mut claims = Map::new();
        claims.insert("sub".into(), Value::from(format!("dev-{tenant}")));
        claims.insert(self.tenant_claim.clone(), Value::from(tenant));
        claims.insert("iss".into(), Value::from(self.issuer.clone()));
        claims.insert("aud".into(), Value::from(self.audience.clone()));
        claims.insert("iat".into(), Value::from(now));
        claims.insert("exp".into(), Value::from(now + ttl_seconds));
        claims.insert("token_use".into(), Value::from("access"));
        if !scopes.is_empty() {
            claims.insert("scope".into(), Value::from(scopes.join(" ")));
        }
        if !groups.is_empty() {
            let groups = groups.iter().copied().map(Value::from).collect();
            claims.insert("cognito:groups".into(), Value::Array(groups));
        }
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
    fn each_route_needs_its_scope() {
        let scopes = RequiredScopes::from_lookup(&|name: &str| match name {
            "REQUIRE_SCOPES" => Some("true".into()),
            "SCOPE_PREFIX" => Some("api.example/".into()),
            _ => None,
        })
        .unwrap()
        .unwrap();
        use http::Method;
        for (method, path, needed) in [
            (Method::GET, "/api/task/list", "api.example/read"),
            (
                Method::GET,
                "/api/dataSource/x/contacts",
                "api.example/read",
            ),
            (Method::GET, "/api/settings", "api.example/read"),
            (Method::GET, "/api/dnc/list", "api.example/read"),
            (Method::POST, "/api/dataSource/add", "api.example/write"),
            (Method::POST, "/api/task/update", "api.example/write"),
            (Method::POST, "/api/task/close", "api.example/write"),
            (Method::POST, "/api/task/publish", "api.example/write"),
            (Method::POST, "/api/task/stop", "api.example/write"),
            (Method::POST, "/api/task/x/recall", "api.example/write"),
            (Method::POST, "/api/task/x/exportJob", "api.example/write"),
            (Method::POST, "/api/dnc/add", "api.example/write"),
            (Method::POST, "/api/dnc/batchImport", "api.example/write"),
            (Method::POST, "/api/settings/update", "api.example/admin"),
            (Method::POST, "/api/dnc/delete", "api.example/admin"),
            (
                Method::GET,
                "/api/operator/telephony/acme",
                "api.example/operator",
            ),
            (
                Method::POST,
                "/api/operator/telephony/update",
                "api.example/operator",
            ),
        ] {
            assert_eq!(scopes.needed(&method, path), needed, "{method} {path}");
        }
        assert_eq!(scopes.spelled(Scope::Operator), "api.example/operator");
        let check = |path: &str, granted: Option<&str>| {
            scopes
                .check(&Method::POST, path, granted)
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            check("/api/settings/update", Some("api.example/write")),
            Err("this token lacks the scope api.example/admin".into())
        );
        assert_eq!(
            check(
                "/api/settings/update",
                Some("api.example/write api.example/admin")
            ),
            Ok(())
        );
        assert_eq!(
            check("/api/dataSource/add", Some("api.example/writer")),
            Err("this token lacks the scope api.example/write".into()),
            "a scope is matched whole"
        );
        assert_eq!(
            check("/api/dataSource/add", None),
            Err("this token lacks the scope api.example/write".into())
        );
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
    fn only_access_tokens_pass() {
        assert!(check_token_use(None, false).is_ok());
        assert!(check_token_use(Some("access"), true).is_ok());
        assert_eq!(
            check_token_use(None, true).unwrap_err().status_code(),
            401,
            "a Cognito token without token_use"
        );
        for other in ["id", "ACCESS", "", "refresh"] {
            let error = check_token_use(Some(other), true).unwrap_err();
            assert_eq!(error.status_code(), 401, "{other}");
            assert_eq!(error.to_string(), "token is not an access token");
        }
    }

    #[test]
    fn development_tokens_are_access_tokens_with_the_scopes_asked_for() {
        let jwt = LocalJwt {
            secret: "s".into(),
            issuer: "i".into(),
            audience: "a".into(),
            tenant_claim: "tenant_id".into(),
        };
        let claims = jwt
            .verify(&jwt.issue_scoped("acme", 60, &["outbound/read", "outbound/operator"]))
            .unwrap();
        assert_eq!(claims["token_use"], "access");
        assert_eq!(claims["scope"], "outbound/read outbound/operator");
        assert_eq!(claims["tenant_id"], "acme");
        assert_eq!(claims["sub"], "dev-acme");
        assert_eq!(claims["cognito:groups"], serde_json::json!(["operators"]));
        let plain = jwt.verify(&jwt.issue("acme", 60)).unwrap();
        assert_eq!(plain["token_use"], "access");
        assert!(!plain.contains_key("scope"));
        assert!(!plain.contains_key("cognito:groups"));
        let administrator = jwt.verify(&jwt.issue_admin("acme", 60)).unwrap();
        assert_eq!(
            administrator["cognito:groups"],
            serde_json::json!(["admins"])
        );
        assert!(!administrator.contains_key("scope"));
        let admin = jwt
            .verify(&jwt.issue_scoped("acme", 60, &["outbound/admin", "outbound/operator"]))
            .unwrap();
        assert_eq!(
            admin["cognito:groups"],
            serde_json::json!(["admins", "operators"])
        );
    }

    /// D32: behind a Cognito issuer a token must say it is an access token; behind another
    /// issuer, whose access tokens need not carry `token_use`, its absence is no refusal.
    #[test]
    fn token_use_is_required_of_a_cognito_issuers_tokens() {
        let required = |issuer: Option<&str>| {
            let mut pairs = vec![("AUTH_MODE", "apigateway")];
            pairs.extend(issuer.map(|issuer| ("JWT_ISSUER", issuer)));
            match config(&pairs).unwrap() {
                AuthConfig::ApiGateway {
                    token_use_required, ..
                } => token_use_required,
                AuthConfig::Local(_) => unreachable!("apigateway mode"),
            }
        };
        assert!(required(Some(
            "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC"
        )));
        assert!(!required(Some("https://example.auth0.com/")));
        assert!(!required(Some("https://evil.example/cognito-idp.x")));
        assert!(!required(None));
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
