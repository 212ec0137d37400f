//! The data source Lambda: every `/api/dataSource/...` route behind the HTTP API, and the
//! export jobs', settings', do-not-call list's and operator's routes.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    outbound_edge::serve_datasource_api().await
}
