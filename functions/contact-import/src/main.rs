//! The import Lambda: S3 upload notifications, through SQS, imported one file a message.

use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use outbound::{config::Config, http::App, telemetry, worker};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    telemetry::init();
    let app = App::from_config(Config::from_env()?).await;
    lambda_runtime::run(service_fn(|event: LambdaEvent<SqsEvent>| async {
        Ok::<_, lambda_runtime::Error>(
            worker::each_message(event.payload, |body| worker::upload_message(&app, body)).await,
        )
    }))
    .await
}
