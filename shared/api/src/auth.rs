//! Who a request acts for (D2, D3, D25, D29): its tenant, the `sub` of its token, the scopes
//! it grants and the groups its person is in. The claims are read once per request, by the
//! [`identify`] layer, into an [`Identity`] in the request's extensions, which the request rate,
//! the log line and the extractors read. They come from the HTTP API's JWT authorizer (the
//! request context) in AWS, or from the bearer token verified in process locally
//! ([`AuthConfig`]). Either way a token whose `token_use` is there and is not `access` (an ID
//! token) is refused 401 (D25).
//!
//! Roles are people, in every deployment (D29, D32): the tenant's settings updates and
//! do-not-call deletes need the token's `cognito:groups` claim to list `admins`, the operator's
//! routes `operators`, whether or not scopes are required; a scope (`outbound/admin`,
//! `outbound/operator`) is an extra check, for machine clients: Cognito grants custom scopes per
//! app client, so the scope alone says only which client asked. The claim is a list, and a
//! group's name is never split.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::request::Parts;
use outbound_app::App;
use outbound_auth::{check_token_use, tenant_from, AuthConfig, RequiredScopes, Scope};
use outbound_model::error::Error;
use outbound_model::{Actor, Tenant};
use serde_json::Value;
use std::collections::HashMap;

/// The claim holding the groups a Cognito user is in.
pub const GROUPS_CLAIM: &str = "cognito:groups";

/// Who a request acts for: its tenant (D3) and the token's `sub` (D25), `None` when the token
/// has none that can name an actor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub tenant: Tenant,
    pub actor: Option<Actor>,
}

/// The tenant of a request and who made it: what a change the audit records is made by (D25).
/// Its extractor refuses a token without a valid `sub` with 403, before anything is changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    pub tenant: Tenant,
    pub actor: Actor,
}

/// Who makes a request of the operator's routes (D22, D25, D29): the token's `sub`, whatever
/// tenant the token names, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operator {
    pub actor: Actor,
}

impl Caller {
    /// The [`Principal`] of an audited change: 403 without a `sub`.
    pub fn principal(self) -> Result<Principal, Error> {
        Ok(Principal {
            tenant: self.tenant,
            actor: self.actor.ok_or_else(no_sub)?,
        })
    }
}

fn no_sub() -> Error {
    Error::Forbidden("token has no valid sub claim, which names who made an audited change".into())
}

/// What a request's token says, verified once: the request extension [`identify`] puts there.
#[derive(Clone, Debug)]
pub struct Identity {
    claims: Result<Claims, String>,
    /// Whether the token's signature was verified (by the authorizer or here), even if its
    /// claims are then refused: such a request is counted in a bucket (D32).
    verified: bool,
}

/// Why a request's claims are refused: before its token was verified, or after.
enum Refused {
    Unverified(Error),
    Verified(Error),
}

/// The verified claims that matter to the service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claims {
    /// The tenant the tenant claim names, or why it names none (403).
    tenant: Result<Tenant, String>,
    actor: Option<Actor>,
    /// The `scope` claim, as the token spells it (space separated).
    scope: Option<String>,
    /// The `cognito:groups` claim's groups.
    groups: Vec<String>,
}

/// The layer that reads a request's claims once into its [`Identity`]
/// (`axum::middleware::from_fn_with_state`).
pub async fn identify(State(app): State<App>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let identity = Identity::read(&app.config.auth, &parts);
    parts.extensions.insert(identity);
    next.run(Request::from_parts(parts, body)).await
}

impl Identity {
    /// The identity [`identify`] put in `request`, or read from it now.
    pub fn of(auth: &AuthConfig, request: &Parts) -> Identity {
        match request.extensions.get::<Identity>() {
            Some(identity) => identity.clone(),
            None => Identity::read(auth, request),
        }
    }

    /// Verifies and reads the claims of `request`.
    pub fn read(auth: &AuthConfig, request: &Parts) -> Identity {
        match claims_of(auth, request) {
            Ok(claims) => Identity {
                claims: Ok(claims),
                verified: true,
            },
            Err(Refused::Verified(error)) => Identity {
                claims: Err(error.to_string()),
                verified: true,
            },
            Err(Refused::Unverified(error)) => Identity {
                claims: Err(error.to_string()),
                verified: false,
            },
        }
    }

    /// Whether the request's token was verified, whatever its claims say.
    pub fn verified(&self) -> bool {
        self.verified
    }

    fn claims(&self) -> Result<&Claims, Error> {
        self.claims
            .as_ref()
            .map_err(|reason| Error::Unauthenticated(reason.clone()))
    }

    /// The tenant the token names: 401 / 403 without one (D2, D3).
    pub fn tenant(&self) -> Result<Tenant, Error> {
        self.claims()?.tenant.clone().map_err(Error::Forbidden)
    }

    /// The token's `sub`, if it can name an actor.
    pub fn actor(&self) -> Option<&Actor> {
        self.claims.as_ref().ok()?.actor.as_ref()
    }

    /// Who a request of `method` `path` acts for, whose token must be in the route's role's
    /// group, if it has one, and also grant the route's scope when `scopes` are required; 401 /
    /// 403 otherwise (D2, D3, D25, D29, D32).
    pub fn caller(
        &self,
        scopes: Option<&RequiredScopes>,
        method: &http::Method,
        path: &str,
    ) -> Result<Caller, Error> {
        let claims = self.claims()?;
        let tenant = self.tenant()?;
        if let Some(scopes) = scopes {
            scopes.check(method, path, claims.scope.as_deref())?;
        }
        claims.in_role(method, path)?;
        Ok(Caller {
            tenant,
            actor: claims.actor.clone(),
        })
    }

    /// The [`Operator`] of a request of the operator's routes, whose token must grant their
    /// scope as `scopes` spells it and be a member of `operators`, whatever `REQUIRE_SCOPES` says
    /// and whatever tenant it names: 401 without a valid access token, 403 without the scope,
    /// the group or a `sub` (D22, D25, D29).
    pub fn operator(
        &self,
        scopes: &RequiredScopes,
        method: &http::Method,
        path: &str,
    ) -> Result<Operator, Error> {
        let claims = self.claims()?;
        scopes.check(method, path, claims.scope.as_deref())?;
        claims.in_role(method, path)?;
        Ok(Operator {
            actor: claims.actor.clone().ok_or_else(no_sub)?,
        })
    }
}

impl Claims {
    /// 403 unless the token is in the group of the role the route needs, if any (D29, D32).
    fn in_role(&self, method: &http::Method, path: &str) -> Result<(), Error> {
        match Scope::of_route(method, path).group() {
            Some(group) if !self.groups.iter().any(|member| member == group) => {
                Err(Error::Forbidden(format!(
                    "only members of the group {group} may make this request"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// The verified claims of a request: 401 without a valid access token.
fn claims_of(auth: &AuthConfig, request: &Parts) -> Result<Claims, Refused> {
    let (tenant_claim, claim, groups): (&str, ClaimOf, Vec<String>) = match auth {
        AuthConfig::ApiGateway {
            tenant_claim,
            token_use_required,
        } => {
            let claims = authorizer_claims(request).ok_or_else(|| {
                Refused::Unverified(Error::Unauthenticated(
                    "missing or invalid bearer token".into(),
                ))
            })?;
            check_token_use(
                claims.get("token_use").map(String::as_str),
                *token_use_required,
            )
            .map_err(Refused::Verified)?;
            let groups = claims
                .get(GROUPS_CLAIM)
                .map(|groups| groups_of_text(groups))
                .unwrap_or_default();
            (
                tenant_claim,
                Box::new(|name| claims.get(name).cloned()),
                groups,
            )
        }
        AuthConfig::Local(jwt) => {
            let claims = bearer_token(request)
                .and_then(|token| jwt.verify(token))
                .map_err(Refused::Unverified)?;
            // A `token_use` that is not text is there, and is not `access`.
            check_token_use(
                claims
                    .get("token_use")
                    .map(|value| value.as_str().unwrap_or_default()),
                false,
            )
            .map_err(Refused::Verified)?;
            let groups = match claims.get(GROUPS_CLAIM) {
                Some(Value::Array(groups)) => groups
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                // One group's name: a list is an array.
                Some(Value::String(group)) => vec![group.clone()],
                _ => Vec::new(),
            };
            (
                &jwt.tenant_claim,
                Box::new(move |name| claims.get(name).and_then(Value::as_str).map(str::to_owned)),
                groups,
            )
        }
    };
    Ok(Claims {
        tenant: tenant_from(claim(tenant_claim).as_deref(), tenant_claim)
            .map_err(|error| error.to_string()),
        actor: claim("sub").and_then(|sub| Actor::parse(&sub).ok()),
        scope: claim("scope"),
        groups,
    })
}

/// The groups of a `cognito:groups` claim the HTTP API's authorizer passes on as text: an
/// array claim arrives as `[a b]`, its members apart by spaces, which a Cognito group's name
/// cannot hold (anything else can, commas included, so nothing else parts them). Text that is
/// not in brackets is one group's name.
fn groups_of_text(text: &str) -> Vec<String> {
    match text
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    {
        Some(list) => list.split_whitespace().map(str::to_owned).collect(),
        None if text.is_empty() => Vec::new(),
        None => vec![text.to_owned()],
    }
}

/// One verified claim of a request, by name.
type ClaimOf<'a> = Box<dyn Fn(&str) -> Option<String> + 'a>;

fn authorizer_claims(request: &Parts) -> Option<&HashMap<String, String>> {
    use lambda_http::request::RequestContext;
    match request.extensions.get::<RequestContext>()? {
        RequestContext::ApiGatewayV2(context) => {
            Some(&context.authorizer.as_ref()?.jwt.as_ref()?.claims)
        }
        _ => None,
    }
}

fn bearer_token(request: &Parts) -> Result<&str, Error> {
    let header = request
        .headers
        .get(http::header::AUTHORIZATION)
        .ok_or_else(|| Error::Unauthenticated("missing Authorization header".into()))?;
    let value = header
        .to_str()
        .map_err(|_| Error::Unauthenticated("Authorization header is not text".into()))?;
    match value.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(token.trim())
        }
        _ => Err(Error::Unauthenticated(
            "Authorization header must be \"Bearer <token>\"".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_auth::LocalJwt;

    fn jwt() -> LocalJwt {
        LocalJwt {
            secret: "s".into(),
            issuer: "i".into(),
            audience: "a".into(),
            tenant_claim: "tenant_id".into(),
        }
    }

    fn parts(auth: Option<&str>) -> http::request::Parts {
        let mut builder = http::Request::builder();
        if let Some(value) = auth {
            builder = builder.header("authorization", value);
        }
        builder.body(()).unwrap().into_parts().0
    }

    fn caller_with(config: &AuthConfig, header: &str) -> Result<Caller, Error> {
        Identity::read(config, &parts(Some(header))).caller(None, &http::Method::GET, "/api/x")
    }

    /// D29, D32: a role's requests need the role's group whether or not scopes are required,
    /// from a token's JSON array or the authorizer's `[a b]` text; a group's name is never
    /// split.
    #[test]
    fn a_role_needs_its_group_in_every_deployment() {
        let config = AuthConfig::Local(jwt());
        let scopes = RequiredScopes::always(&|_: &str| None);
        let token = |groups: Value| {
            let claims = serde_json::json!({"tenant_id": "acme", "iss": "i", "aud": "a",
                "sub": "u-1", "exp": chrono::Utc::now().timestamp() + 60,
                "scope": "outbound/operator outbound/admin", "cognito:groups": groups});
            Identity::read(
                &config,
                &parts(Some(&format!("Bearer {}", jwt().sign(&claims)))),
            )
        };
        let path = "/api/operator/telephony/acme";
        let operator = |groups: Value| {
            token(groups)
                .operator(&scopes, &http::Method::GET, path)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let not_operator = Err("only members of the group operators may make this request".into());
        assert_eq!(operator(Value::Null), not_operator);
        assert_eq!(operator(serde_json::json!(["admins"])), not_operator);
        assert_eq!(operator(serde_json::json!("sales,operators")), not_operator);
        assert_eq!(
            operator(serde_json::json!(["sales,operators"])),
            not_operator
        );
        assert_eq!(operator(serde_json::json!(["admins", "operators"])), Ok(()));
        assert_eq!(operator(serde_json::json!("operators")), Ok(()));
        let not_admin = Err("only members of the group admins may make this request".into());
        for required in [None, Some(&scopes)] {
            let admin = |groups: Value| {
                token(groups)
                    .caller(required, &http::Method::POST, "/api/settings/update")
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            };
            assert_eq!(admin(serde_json::json!(["operators"])), not_admin);
            assert_eq!(admin(Value::Null), not_admin);
            assert_eq!(admin(serde_json::json!(["admins"])), Ok(()));
        }
        assert_eq!(groups_of_text("[a b]"), ["a", "b"]);
        assert_eq!(groups_of_text("[sales,operators]"), ["sales,operators"]);
        assert_eq!(groups_of_text("sales,operators"), ["sales,operators"]);
        assert!(groups_of_text("[]").is_empty());
        assert!(groups_of_text("").is_empty());
    }

    #[test]
    fn issued_token_yields_its_tenant() {
        let config = AuthConfig::Local(jwt());
        let token = jwt().issue("acme", 60);
        let identity = Identity::read(&config, &parts(Some(&format!("Bearer {token}"))));
        assert_eq!(identity.tenant().unwrap().as_str(), "acme");
    }

    #[test]
    fn the_caller_is_the_tokens_tenant_and_sub() {
        let config = AuthConfig::Local(jwt());
        let token = jwt().issue("acme", 60);
        let caller = caller_with(&config, &format!("Bearer {token}")).unwrap();
        assert_eq!(caller.tenant.as_str(), "acme");
        assert_eq!(caller.actor.as_ref().map(Actor::as_str), Some("dev-acme"));
        assert_eq!(caller.principal().unwrap().actor.as_str(), "dev-acme");

        let claims = serde_json::json!({"tenant_id": "acme", "iss": "i", "aud": "a",
            "exp": chrono::Utc::now().timestamp() + 60});
        let no_sub = jwt().sign(&claims);
        let caller = caller_with(&config, &format!("Bearer {no_sub}")).unwrap();
        assert_eq!(
            caller.actor, None,
            "any route but an audited change takes it"
        );
        let refused = caller.principal().unwrap_err();
        assert_eq!(refused.status_code(), 403);
        assert_eq!(
            refused.to_string(),
            "token has no valid sub claim, which names who made an audited change"
        );
    }

    #[test]
    fn alg_none_is_refused() {
        use base64::Engine;
        let encode = |json: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
        let header = encode(r#"{"alg":"none","typ":"JWT"}"#);
        let body = encode(r#"{"tenant_id":"acme","iss":"i","aud":"a","exp":9999999999}"#);
        let token = format!("{header}.{body}.");
        let error = Identity::read(
            &AuthConfig::Local(jwt()),
            &parts(Some(&format!("Bearer {token}"))),
        )
        .tenant()
        .unwrap_err();
        assert_eq!(error.status_code(), 401);
    }
}
