//! Request extractors: the authenticated [`Tenant`], JSON object bodies and query strings, each
//! failing with the precise error of D1, D5 and D6.

use super::App;
use crate::auth::Tenant;
use crate::error::Error;
use crate::model::page::{ListScope, PageQuery, PageTokens, Start};
use crate::model::{Id, PageRequest};
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Largest JSON body accepted (D6).
pub const MAX_JSON_BODY: usize = 1024 * 1024;

impl FromRequestParts<App> for Tenant {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        app.config.auth.tenant_of(parts)
    }
}

/// A request body that is a JSON object.
#[derive(Debug)]
pub struct Body(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = Error;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                    Error::TooLarge(format!("request body is larger than {MAX_JSON_BODY} bytes"))
                } else {
                    Error::invalid("request body could not be read")
                }
            })?;
        Body::parse(&bytes)
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

    /// A string field; absent or null is `None`; any other type is 400.
    pub fn str(&self, field: &str) -> Result<Option<&str>, Error> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) => Ok(Some(value)),
            Some(_) => Err(Error::invalid(format!("{field} must be a string"))),
        }
    }

    /// A string field that must be present.
    pub fn required_str(&self, field: &str) -> Result<&str, Error> {
        self.str(field)?
            .ok_or_else(|| Error::invalid(format!("{field} is required")))
    }

    /// An integer field; absent or null is `None`; a fraction, string or other type is 400.
    pub fn int(&self, field: &str) -> Result<Option<i64>, Error> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => number
                .as_i64()
                .map(Some)
                .ok_or_else(|| Error::invalid(format!("{field} must be an integer"))),
            Some(_) => Err(Error::invalid(format!("{field} must be an integer"))),
        }
    }

    /// An array of strings; absent or null is empty.
    pub fn strings(&self, field: &str) -> Result<Vec<&str>, Error> {
        let invalid = || Error::invalid(format!("{field} must be an array of strings"));
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(values)) => values
                .iter()
                .map(|value| value.as_str().ok_or_else(invalid))
                .collect(),
            Some(_) => Err(invalid()),
        }
    }
}

/// The query string as name -> value (the last of repeated names wins).
#[derive(Debug, Default)]
pub struct QueryParams(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
            .map_err(|_| Error::invalid("query string is malformed"))?;
        Ok(QueryParams(pairs.into_iter().collect()))
    }
}

impl QueryParams {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// `pageNum` and `pageSize` (D5).
    pub fn page(&self) -> Result<PageRequest, Error> {
        PageRequest::parse(self.get("pageNum"), self.get("pageSize"))
    }

    /// The page a list request asks for (D5): `pageSize` rows after the row a `nextToken` of
    /// the list `scope` names (`pageNum` is then ignored), else the `pageNum` page within the
    /// offset cap. A token of another tenant, list or filters is 400, before anything is read.
    pub fn page_query(&self, tokens: &PageTokens, scope: &ListScope) -> Result<PageQuery, Error> {
        let page = self.page()?;
        match self.get("nextToken").filter(|token| !token.is_empty()) {
            Some(token) => Ok(PageQuery {
                size: page.size as usize,
                start: Start::After(tokens.open(scope, token)?),
            }),
            None => page.within_cap(),
        }
    }

    /// A fuzzy text filter; blank means no filter.
    pub fn filter(&self, name: &str) -> Option<&str> {
        self.get(name)
            .map(str::trim)
            .filter(|value| !value.is_empty())
    }
}

/// Parses the id of an existing record: a string that cannot be an id names no record (404).
pub fn existing_id(kind: &str, raw: &str) -> Result<Id, Error> {
    Id::parse(raw).ok_or_else(|| {
        let shown: String = raw.chars().take(64).collect();
        Error::NotFound(format!("{kind} {shown} not found"))
    })
}
