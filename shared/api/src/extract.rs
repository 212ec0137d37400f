//! Request extractors: the authenticated [`Tenant`] (or [`Principal`], the tenant and who made
//! an audited change; or the [`Operator`] of the operator's routes), JSON object bodies and
//! query strings, each failing with the precise error
//! of D1, D5, D6 and D25.

use super::auth::{Identity, Operator, Principal};
use super::{ApiState, Refusal};
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use outbound_model::error::Error;
use outbound_model::page::{ListScope, PageQuery, PageTokens, Start};
use outbound_model::Tenant;
use outbound_model::{Id, PageRequest};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::IntoParams;

/// Largest JSON body accepted (D6).
pub const MAX_JSON_BODY: usize = 1024 * 1024;

impl FromRequestParts<ApiState> for Tenant {
    type Rejection = Refusal;

    async fn from_request_parts(
        parts: &mut Parts,
        ApiState { app, .. }: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        let identity = Identity::of(&app.config.auth, parts);
        let caller = identity.caller(app.config.scopes.as_ref(), &parts.method, parts.uri.path());
        Ok(caller?.tenant)
    }
}

impl FromRequestParts<ApiState> for Principal {
    type Rejection = Refusal;

    async fn from_request_parts(
        parts: &mut Parts,
        ApiState { app, .. }: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        let identity = Identity::of(&app.config.auth, parts);
        let caller = identity.caller(app.config.scopes.as_ref(), &parts.method, parts.uri.path());
        Ok(caller?.principal()?)
    }
}

impl FromRequestParts<ApiState> for Operator {
    type Rejection = Refusal;

    async fn from_request_parts(
        parts: &mut Parts,
        ApiState { app, .. }: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        let identity = Identity::of(&app.config.auth, parts);
        let scopes = &app.config.operator_scopes;
        Ok(identity.operator(scopes, &parts.method, parts.uri.path())?)
    }
}

/// A request body that is a JSON object.
#[derive(Debug)]
pub struct Body(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = Refusal;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        Ok(Body::parse(&body_bytes(request, state).await?)?)
    }
}

/// The bytes of a request body, within the route's body limit (413 past it).
pub async fn body_bytes<S: Send + Sync>(request: Request, state: &S) -> Result<Bytes, Error> {
    Bytes::from_request(request, state)
        .await
        .map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                Error::TooLarge(format!("request body is larger than {MAX_JSON_BODY} bytes"))
            } else {
                Error::invalid("request body could not be read")
            }
        })
}

/// A JSON object body read into the request type `T` (see [`super::fields`]).
#[derive(Debug)]
pub struct Payload<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Payload<T> {
    type Rejection = Refusal;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Body(object) = Body::from_request(request, state).await?;
        Ok(super::fields::from_object(object).map(Payload)?)
    }
}

impl Body {
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.len() > MAX_JSON_BODY {
            return Err(Error::TooLarge(format!(
                "request body is larger than {MAX_JSON_BODY} bytes"
            )));
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(map)) => Ok(Body(map)),
            Ok(_) => Err(Error::invalid("request body must be a JSON object")),
            Err(error) => Err(Error::invalid(format!(
                "request body is not valid JSON: {error}"
            ))),
        }
    }
}

/// A typed query string (the last of repeated names wins); each field a string, read by the
/// domain's own parsers so their messages stay exact.
#[derive(Debug, Default)]
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
            .map_err(|_| Error::invalid("query string is malformed"))?;
        let object: Map<String, Value> = pairs
            .into_iter()
            .map(|(name, value)| (name, Value::String(value)))
            .collect();
        Ok(super::fields::from_object(object).map(Query)?)
    }
}

/// The paging of every list (D5).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// Page number, from 1 (default 1); `pageNum * pageSize` may be at most 10,000.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 10000)]
    page_num: Option<String>,
    /// Rows per page, 1-100 (default 20).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    page_size: Option<String>,
    /// The `nextToken` of the previous page: the page right after it, however deep (`pageNum` is
    /// then ignored). Only valid with the same list and filters.
    next_token: Option<String>,
}

impl Paging {
    /// `pageNum` and `pageSize` (D5).
    pub fn page(&self) -> Result<PageRequest, Error> {
        PageRequest::parse(self.page_num.as_deref(), self.page_size.as_deref())
    }

    /// The page a list request asks for (D5): `pageSize` rows after the row a `nextToken` of
    /// the list `scope` names (`pageNum` is then ignored), else the `pageNum` page within the
    /// offset cap. A token of another tenant, list or filters is 400, before anything is read.
    pub fn page_query(&self, tokens: &PageTokens, scope: &ListScope) -> Result<PageQuery, Error> {
        let page = self.page()?;
        match self.next_token.as_deref().filter(|token| !token.is_empty()) {
            Some(token) => Ok(PageQuery {
                size: page.size as usize,
                start: Start::After(tokens.open(scope, token)?),
            }),
            None => page.within_cap(),
        }
    }
}

/// A fuzzy text filter; blank means no filter.
pub fn filter(value: &Option<String>) -> Option<&str> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|value| !value.is_empty())
}

/// Parses the id of an existing record: a string that cannot be an id names no record (404).
pub fn existing_id(kind: &str, raw: &str) -> Result<Id, Error> {
    Id::parse(raw).ok_or_else(|| {
        let shown: String = raw.chars().take(64).collect();
        Error::NotFound(format!("{kind} {shown} not found"))
    })
}
