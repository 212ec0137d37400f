//! `make run`: provisions the stand-ins, serves the API on 127.0.0.1:$PORT (default 3000) and the
//! console at `/`, publishes the domain events and logs what the bus delivers, keeps the calls
//! the dialer places (`/local/calls`), and prints a
//! development token and the console's sign-in address. `LOCAL_STACK` (default `outbound`)
//! names the table, and the bucket, queues and bus after it, so a second server (the contract
//! check, the browser test) keeps its own data.
//!
//! DynamoDB is served in this process (`outbound_local::dynamodb`, dynoxide) on
//! `DYNAMODB_PORT` (default: any free port). `LOCAL_DYNAMODB=file` keeps it in
//! `.local/dynamodb/<stack>.sqlite`, so a restart keeps the data, and is the default of the
//! default stack; `LOCAL_DYNAMODB=memory`, the default of every other stack, keeps it in memory.
//! `DYNAMODB_ENDPOINT` uses that server instead (AWS's DynamoDB Local, say).
//!
//! It writes `.local/lambda.env`, the environment of the functions under `cargo lambda` on this
//! stack (`outbound_local::lambda_env`), for the default stack, or to `LAMBDA_ENV_FILE` when
//! that is set, and stores the stack's keys on moto as the secrets the file names by ARN (D32).
//! Requests pass the edge's limits first, the web ACL's and the stage's as the template sets them
//! (`outbound_local::edge`; `EDGE_REQUESTS_PER_TOKEN` and the other parameters' names tune them).
//! With `--lambda-env` (`make lambda-env`) it provisions, writes the file and ends.

use outbound_app::App;
use outbound_local::dynamodb::{StackDynamoDb, Storage};
use outbound_local::{
    events, lambda_env, local_config, local_jwt, provision, serve_local, stack_sdk_config,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    outbound_telemetry::init();
    let stack = std::env::var("LOCAL_STACK").unwrap_or_else(|_| "outbound".into());
    let storage = storage(&stack)?;
    let dynamodb = StackDynamoDb::start(storage.clone(), dynamodb_address()?).await?;
    let sdk = stack_sdk_config(dynamodb.url()).await;
    let resources = provision::ensure(&sdk, &stack, &format!("{stack}-files")).await?;
    let event_resources =
        provision::ensure_events(&sdk, &resources.table, &format!("{stack}-events")).await?;
    let lambda_env = match std::env::var_os("LAMBDA_ENV_FILE") {
        Some(path) => Some(std::path::PathBuf::from(path)),
        None if stack == "outbound" => Some(lambda_env::default_path()),
        None => None,
    };
    if let Some(path) = &lambda_env {
        let secrets = provision::ensure_secrets(&sdk, &stack).await?;
        lambda_env::write(
            path,
            &lambda_env::variables(&resources, &event_resources, &secrets, dynamodb.url()),
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if std::env::args().any(|arg| arg == "--lambda-env") {
        match &lambda_env {
            Some(path) => println!("{}", path.display()),
            None => return Err("--lambda-env: set LAMBDA_ENV_FILE for another stack".into()),
        }
        return Ok(());
    }
    let edge = outbound_local::edge::EdgeLimits::from_lookup(|name| std::env::var(name).ok())?;
    let config = local_config(&resources);
    let token = local_jwt(&config).issue_admin("acme", 24 * 3600);
    let app = App::with_sdk(config, &sdk);
    let calls = outbound_local::calls::CallLog::default();
    let engine = outbound_dialing::engine::Engine::from_app(&app)?
        .with_provider(|inner| inner.on_placed(calls.hook()).with_agents(calls.agents()));
    let tick = std::time::Duration::from_millis(
        std::env::var("DIAL_TICK_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(2000),
    );
    outbound_local::spawn_workers(&app, std::sync::Arc::new(engine), &resources, &sdk, tick);
    let log = events::EventLog::default();
    events::spawn(&sdk, &event_resources, log.clone());
    let port = std::env::var("PORT").unwrap_or_else(|_| "3000".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    match &dynamodb {
        StackDynamoDb::Local(_) => println!(
            "DynamoDB (dynoxide, {}) on {}",
            match &storage {
                Storage::Memory => "in memory".to_owned(),
                Storage::File(path) => path.display().to_string(),
            },
            dynamodb.url()
        ),
        StackDynamoDb::Shared(url) => println!("DynamoDB at {url} (DYNAMODB_ENDPOINT)"),
    }
    println!("outbound API on http://127.0.0.1:{port}/api/...");
    if !std::path::Path::new(outbound_local::CONSOLE_DIR)
        .join("index.html")
        .exists()
    {
        println!("(the console is not built: `make console` builds it)");
    }
    println!("console, signed in as tenant acme (24 h):\n  http://127.0.0.1:{port}/#/signin?token={token}\n");
    println!("development token for tenant acme (24 h):\n{token}\n");
    println!("events the bus delivered: http://127.0.0.1:{port}/local/events");
    println!("calls the dialer placed: http://127.0.0.1:{port}/local/calls");
    println!("agents of the simulated queues (D30): http://127.0.0.1:{port}/local/agents\n");
    if let Some(path) = &lambda_env {
        println!(
            "the functions' environment on this stack, for cargo lambda watch --env-file:\n  {}\n",
            path.display()
        );
    }
    println!(
        "try: curl -s -H \"Authorization: Bearer {token}\" -H 'Content-Type: application/json' \\\n  -d '{{\"dataSourceName\":\"First list\"}}' http://127.0.0.1:{port}/api/dataSource/add"
    );
    serve_local(
        listener,
        app,
        outbound_local::edge::Edge::new(edge),
        log,
        &calls,
    )
    .await?;
    Ok(())
}

/// Where this stack's DynamoDB keeps its items (see the module documentation).
fn storage(stack: &str) -> Result<Storage, String> {
    let default = if stack == "outbound" {
        "file"
    } else {
        "memory"
    };
    match std::env::var("LOCAL_DYNAMODB")
        .unwrap_or_else(|_| default.into())
        .as_str()
    {
        "memory" => Ok(Storage::Memory),
        "file" => {
            let local = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
            let dir = local.parent().unwrap_or(local).join(".local/dynamodb");
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            Ok(Storage::File(dir.join(format!("{stack}.sqlite"))))
        }
        other => Err(format!("LOCAL_DYNAMODB={other}: expected file or memory")),
    }
}

/// Where this stack's DynamoDB listens: `DYNAMODB_PORT` on loopback, or any free port.
fn dynamodb_address() -> Result<std::net::SocketAddr, String> {
    let port = match std::env::var("DYNAMODB_PORT") {
        Ok(port) => port
            .parse()
            .map_err(|_| format!("DYNAMODB_PORT={port}: expected a port number"))?,
        Err(_) => return Ok(outbound_local::dynamodb::ANY_LOOPBACK_PORT),
    };
    Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
}
