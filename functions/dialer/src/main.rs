//! The dialer Lambda (dial queue): claims and calls one task's due contacts, or reconciles one
//! call whose outcome never came (D13).

use outbound_dialing::lambda::{serve_queue, DialInbox};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    serve_queue(DialInbox::Jobs).await
}
