//! The dialer Lambda (dial queue): claims and calls one task's due contacts, or reconciles one
//! call whose outcome never came (D13).

use outbound::dialing::lambda::{serve_queue, DialQueue};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    serve_queue(DialQueue::Jobs).await
}
