//! The reclaim Lambda: deletes the items left behind by a deleted data source or task, and on
//! its schedule queues again any reclaim whose job was lost.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound_edge::serve_reclaim().await
}
