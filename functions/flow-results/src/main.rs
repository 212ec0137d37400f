//! The flow-results Lambda (invoked by an Amazon Connect flow's "Invoke AWS Lambda function"
//! block during a call): writes what the flow found onto the call's record, where the call's
//! outcome reads it (D22).

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound_edge::serve_flow_results().await
}
