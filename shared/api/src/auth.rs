//! Who a request acts for (D2, D3, D25): its tenant, the `sub` of its token, and the scope its
//! route needs when scopes are required; on the operator's routes (D22), the operator, whose
//! scope is needed always. The claims come from the HTTP API's JWT authorizer (the
//! request context) in AWS, or from the bearer token verified in process locally
//! ([`AuthConfig`]). Either way a token whose `token_use` is there and is not `access` (an ID
//! token) is refused 401 (D25).

use http::request::Parts;
use outbound_auth::{check_token_use, tenant_from, AuthConfig, RequiredScopes};
use outbound_model::error::Error;
use outbound_model::{Actor, Tenant};
use serde_json::Value;

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

/// Who makes a request of the operator's routes (D22, D25): the token's `sub`, whatever tenant
/// the token names, if any.
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

/// The tenant of a request, or 401 / 403 (D2, D3, D25).
pub fn tenant_of(auth: &AuthConfig, request: &Parts) -> Result<Tenant, Error> {
    caller_of(auth, request, None).map(|caller| caller.tenant)
}

/// Who a request acts for, whose token must also grant the scope `scopes` asks of its route,
/// when scopes are required; 401 / 403 otherwise (D2, D3, D25).
pub fn caller_of(
    auth: &AuthConfig,
    request: &Parts,
    scopes: Option<&RequiredScopes>,
) -> Result<Caller, Error> {
    let (tenant_claim, claim) = claims_of(auth, request)?;
    let tenant = tenant_from(claim(tenant_claim).as_deref(), tenant_claim)?;
    if let Some(scopes) = scopes {
        granted(scopes, request, &claim)?;
    }
    Ok(Caller {
        tenant,
        actor: actor_of(&claim),
    })
}

/// The [`Operator`] of a request of the operator's routes, whose token must grant their scope as
/// `scopes` spells it, whatever `REQUIRE_SCOPES` says and whatever tenant it names: 401 without
/// a valid access token, 403 without the scope or a `sub` (D22, D25).
pub fn operator_of(
    auth: &AuthConfig,
    request: &Parts,
    scopes: &RequiredScopes,
) -> Result<Operator, Error> {
    let (_, claim) = claims_of(auth, request)?;
    granted(scopes, request, &claim)?;
    Ok(Operator {
        actor: actor_of(&claim).ok_or_else(no_sub)?,
    })
}

/// 403 unless the token's `scope` claim grants what `scopes` asks of the request's route.
fn granted(scopes: &RequiredScopes, request: &Parts, claim: &ClaimOf) -> Result<(), Error> {
    scopes.check(
        &request.method,
        request.uri.path(),
        claim("scope").as_deref(),
    )
}

/// The actor the `sub` claim names, if it can name one.
fn actor_of(claim: &ClaimOf) -> Option<Actor> {
    claim("sub").and_then(|sub| Actor::parse(&sub).ok())
}

/// The name of the tenant claim and the verified claims of a request: 401 without a valid
/// access token.
fn claims_of<'a>(
    auth: &'a AuthConfig,
    request: &'a Parts,
) -> Result<(&'a str, ClaimOf<'a>), Error> {
    Ok(match auth {
        AuthConfig::ApiGateway { tenant_claim } => {
            let claims = authorizer_claims(request)
                .ok_or_else(|| Error::Unauthenticated("missing or invalid bearer token".into()))?;
            check_token_use(claims.get("token_use").map(String::as_str))?;
            (tenant_claim, Box::new(|name| claims.get(name).cloned()))
        }
        AuthConfig::Local(jwt) => {
            let claims = jwt.verify(bearer_token(request)?)?;
            // A `token_use` that is not text is there, and is not `access`.
            check_token_use(
                claims
                    .get("token_use")
                    .map(|value| value.as_str().unwrap_or_default()),
            )?;
            (
                &jwt.tenant_claim,
                Box::new(move |name| claims.get(name).and_then(Value::as_str).map(str::to_owned)),
            )
        }
    })
}

/// One verified claim of a request, by name.
type ClaimOf<'a> = Box<dyn Fn(&str) -> Option<String> + 'a>;

fn authorizer_claims(request: &Parts) -> Option<&std::collections::HashMap<String, String>> {
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

    #[test]
    fn issued_token_yields_its_tenant() {
        let config = AuthConfig::Local(jwt());
        let token = jwt().issue("acme", 60);
        let tenant = tenant_of(&config, &parts(Some(&format!("Bearer {token}")))).unwrap();
        assert_eq!(tenant.as_str(), "acme");
    }

    #[test]
    fn the_caller_is_the_tokens_tenant_and_sub() {
        let config = AuthConfig::Local(jwt());
        let token = jwt().issue("acme", 60);
        let caller = caller_of(&config, &parts(Some(&format!("Bearer {token}"))), None).unwrap();
        assert_eq!(caller.tenant.as_str(), "acme");
        assert_eq!(caller.actor.as_ref().map(Actor::as_str), Some("dev-acme"));
        assert_eq!(caller.principal().unwrap().actor.as_str(), "dev-acme");

        let claims = serde_json::json!({"tenant_id": "acme", "iss": "i", "aud": "a",
            "exp": chrono::Utc::now().timestamp() + 60});
        let no_sub = jwt().sign(&claims);
        let caller = caller_of(&config, &parts(Some(&format!("Bearer {no_sub}"))), None).unwrap();
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
        let error = tenant_of(
            &AuthConfig::Local(jwt()),
            &parts(Some(&format!("Bearer {token}"))),
        )
        .unwrap_err();
        assert_eq!(error.status_code(), 401);
    }
}
