//! The task Lambda: every `/api/task/...` route behind the HTTP API.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    outbound_edge::serve_task_api().await
}
