//! `make run`: provisions the stand-ins, serves the API on 127.0.0.1:$PORT (default 3000) and
//! prints a development token. `LOCAL_STACK` (default `outbound`) names the table, and the
//! bucket and queues after it, so a second server (the contract check) keeps its own data.

use outbound::app::App;
use outbound_local::{local_config, local_jwt, provision, sdk_config, serve};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    outbound::telemetry::init();
    let sdk = sdk_config().await;
    let stack = std::env::var("LOCAL_STACK").unwrap_or_else(|_| "outbound".into());
    let resources = provision::ensure(&sdk, &stack, &format!("{stack}-files")).await?;
    let config = local_config(&resources);
    let token = local_jwt(&config).issue("acme", 24 * 3600);
    let app = App::with_sdk(config, &sdk);
    let engine = app.engine()?;
    let tick = std::time::Duration::from_millis(
        std::env::var("DIAL_TICK_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(2000),
    );
    outbound_local::spawn_workers(&app, std::sync::Arc::new(engine), &resources, &sdk, tick);
    let port = std::env::var("PORT").unwrap_or_else(|_| "3000".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    println!("outbound API on http://127.0.0.1:{port}/api/...");
    println!("development token for tenant acme (24 h):\n{token}\n");
    println!(
        "try: curl -s -H \"Authorization: Bearer {token}\" -H 'Content-Type: application/json' \\\n  -d '{{\"dataSourceName\":\"First list\"}}' http://127.0.0.1:{port}/api/dataSource/add"
    );
    serve(listener, app).await?;
    Ok(())
}
