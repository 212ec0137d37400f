//! The reclaim Lambda: deletes the items left behind by a deleted data source or task.

use outbound::worker::{serve, Queue};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    serve(Queue::Reclaim).await
}
