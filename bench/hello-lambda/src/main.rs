//! The cold-start baseline (`tests/benches/cold_start.rs`): a `lambda_runtime` function that only
//! echoes its event, built with the same profile as the functions, so their start-up
//! can be compared with what the runtime alone costs.

use lambda_runtime::{service_fn, Error, LambdaEvent};

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_runtime::run(service_fn(
        |event: LambdaEvent<serde_json::Value>| async move { Ok::<_, Error>(event.payload) },
    ))
    .await
}
