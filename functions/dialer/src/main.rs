//! The dialer Lambda (dial queue): claims and calls one task's due contacts, or reconciles one
//! call whose outcome never came (D13).

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound_edge::serve_dialer().await
}
