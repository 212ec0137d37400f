//! A group's routes, each declared once with [`route!`]: the router every function serves, and
//! their OpenAPI description only where it is read (the local server's `/api/openapi.yaml`,
//! `make openapi`, the contract's tests).
//!
//! A function never serves the description, and building it was most of an API function's own
//! start-up: each operation's responses and schemas are built, then cloned once per method
//! (about 2 ms of datasource-api's 6.0 ms cold start; docs/scaling.md §7.3). With
//! [`ApiDoc::Skipped`] a route costs its path, its methods and its handler.

use crate::ApiState;
use axum::extract::DefaultBodyLimit;
use axum::routing::MethodRouter;
use axum::Router;
use utoipa::openapi::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

/// Whether a router also builds the OpenAPI description of its routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiDoc {
    /// The description too: the contract ([`crate::contract::document`]).
    Built,
    /// The routes alone: the functions and the local server.
    Skipped,
}

/// One handler, as [`route!`] declares it: where it is served, and how to describe it.
pub struct Route {
    /// Its documented path (`#[utoipa::path(path = ...)]`).
    pub path: String,
    /// The handler on each of its documented methods.
    pub handler: MethodRouter<ApiState>,
    /// Its description, built only with [`ApiDoc::Built`].
    pub describe: fn() -> UtoipaMethodRouter<ApiState>,
    /// A body limit of its own, instead of the routers' JSON limit.
    pub body_limit: Option<usize>,
}

impl Route {
    /// Accepts bodies up to `bytes` on this route (the file uploads).
    pub fn body_limit(self, bytes: usize) -> Self {
        Self {
            body_limit: Some(bytes),
            ..self
        }
    }
}

/// `route!(handler)` (or `route!(module::submodule::handler)`): a [`Route`] of a handler
/// annotated with `#[utoipa::path]`, read from what that annotation generates.
macro_rules! route {
    ($handler:ident) => {
        utoipa_axum::paste! { $crate::routes::route!(@ [<__path_ $handler>], $handler) }
    };
    ($first:ident :: $second:ident :: $handler:ident) => {
        utoipa_axum::paste! {
            $crate::routes::route!(@ $first::$second::[<__path_ $handler>], $first::$second::$handler)
        }
    };
    (@ $described:path, $handler:path) => {{
        use utoipa::Path as _;
        use utoipa_axum::PathItemExt as _;
        $crate::routes::Route {
            path: <$described>::path(),
            handler: <$described>::methods()
                .iter()
                .fold(axum::routing::MethodRouter::new(), |router, method| {
                    router.on(method.to_method_filter(), $handler)
                }),
            describe: || utoipa_axum::routes!($handler),
            body_limit: None,
        }
    }};
}
pub(crate) use route;

/// The routes of one group or more, described or not.
pub struct Routes {
    router: OpenApiRouter<ApiState>,
    doc: ApiDoc,
    /// Every contract path served, in the order added.
    paths: Vec<String>,
}

impl Routes {
    pub fn new(doc: ApiDoc) -> Self {
        Self {
            router: OpenApiRouter::new(),
            doc,
            paths: Vec::new(),
        }
    }

    pub fn route(mut self, route: Route) -> Self {
        let handler = match route.body_limit {
            Some(bytes) => route.handler.layer(DefaultBodyLimit::max(bytes)),
            None => route.handler,
        };
        let router = match self.doc {
            ApiDoc::Built => {
                let (schemas, paths, _) = (route.describe)();
                self.router.routes((schemas, paths, handler))
            }
            ApiDoc::Skipped => self.router.route(&route.path, handler),
        };
        self.paths.push(route.path);
        Self { router, ..self }
    }

    pub fn merge(mut self, other: Routes) -> Self {
        self.paths.extend(other.paths);
        Self {
            router: self.router.merge(other.router),
            ..self
        }
    }

    /// The contract paths these routes serve.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Adds a route that is not part of the contract (the document itself).
    pub fn undescribed(self, path: &str, handler: MethodRouter<ApiState>) -> Self {
        Self {
            router: self.router.route(path, handler),
            ..self
        }
    }

    /// The router, and the description of its routes (empty with [`ApiDoc::Skipped`]).
    pub fn split(self) -> (Router<ApiState>, OpenApi) {
        self.router.split_for_parts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways serve the same paths, and the description describes each of them: it adds
    /// documentation, never a route.
    #[test]
    fn a_router_without_its_description_serves_the_same_paths() {
        use std::collections::BTreeSet;
        let described = crate::all_routes(ApiDoc::Built);
        let skipped = crate::all_routes(ApiDoc::Skipped);
        assert_eq!(described.paths(), skipped.paths());
        let served: BTreeSet<&String> = skipped.paths().iter().collect();
        let (_, document) = described.split();
        assert_eq!(served, document.paths.paths.keys().collect());
        assert_eq!(served.len(), 43, "the paths of openapi.yaml");
        let (_, nothing) = skipped.split();
        assert!(nothing.paths.paths.is_empty());
    }
}
