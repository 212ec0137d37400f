//! Creates, idempotently, the table, bucket and queues that `template.yaml` declares, on the
//! local stand-ins.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType,
};
use outbound::store::keys;

/// Names of the provisioned resources.
#[derive(Clone, Debug)]
pub struct Resources {
    pub table: String,
    pub bucket: String,
    pub reclaim_queue_url: String,
    /// Receives the bucket's notifications of new objects under `uploads/`.
    pub import_queue_url: String,
    /// Dial and reconcile jobs: the tick sends, the dialer consumes (D13).
    pub dial_queue_url: String,
    /// Call outcomes: the simulated provider sends, call-events consumes (D13).
    pub call_events_queue_url: String,
    /// Export jobs: the API sends, the exporter consumes (D8).
    pub export_queue_url: String,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Provisions every resource under the given names and answers their addresses.
/// Queues are named after the bucket: `{bucket}-imports`, `{bucket}-reclaim`, `{bucket}-exports`, ...
pub async fn ensure(
    sdk: &aws_config::SdkConfig,
    table: &str,
    bucket: &str,
) -> Result<Resources, BoxError> {
    ensure_table(&aws_sdk_dynamodb::Client::new(sdk), table).await?;
    let sqs = aws_sdk_sqs::Client::new(sdk);
    let reclaim_queue_url = ensure_queue(&sqs, &format!("{bucket}-reclaim")).await?;
    let import_queue_url = ensure_queue(&sqs, &format!("{bucket}-imports")).await?;
    let dial_queue_url = ensure_queue(&sqs, &format!("{bucket}-dial")).await?;
    let call_events_queue_url = ensure_queue(&sqs, &format!("{bucket}-call-events")).await?;
    let export_queue_url = ensure_queue(&sqs, &format!("{bucket}-exports")).await?;
    let import_queue_arn = sqs
        .get_queue_attributes()
        .queue_url(&import_queue_url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
        .send()
        .await
        .map_err(aws_sdk_sqs::Error::from)?
        .attributes
        .and_then(|mut a| a.remove(&aws_sdk_sqs::types::QueueAttributeName::QueueArn))
        .ok_or("import queue has no ARN")?;
    ensure_bucket(sdk, bucket, &import_queue_arn).await?;
    Ok(Resources {
        table: table.to_owned(),
        bucket: bucket.to_owned(),
        reclaim_queue_url,
        import_queue_url,
        dial_queue_url,
        call_events_queue_url,
        export_queue_url,
    })
}

/// The single table with its two GSIs, as in `template.yaml`.
pub async fn ensure_table(client: &aws_sdk_dynamodb::Client, name: &str) -> Result<(), BoxError> {
    let key = |attribute: &str, kind: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(attribute)
            .key_type(kind)
            .build()
    };
    let string = |attribute: &str| {
        AttributeDefinition::builder()
            .attribute_name(attribute)
            .attribute_type(ScalarAttributeType::S)
            .build()
    };
    let gsi = |name: &str, pk: &str, sk: &str| {
        GlobalSecondaryIndex::builder()
            .index_name(name)
            .key_schema(key(pk, KeyType::Hash)?)
            .key_schema(key(sk, KeyType::Range)?)
            .projection(
                Projection::builder()
                    .projection_type(ProjectionType::All)
                    .build(),
            )
            .build()
    };
    let result = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key(keys::PK, KeyType::Hash)?)
        .key_schema(key(keys::SK, KeyType::Range)?)
        .attribute_definitions(string(keys::PK)?)
        .attribute_definitions(string(keys::SK)?)
        .attribute_definitions(string(keys::GSI1_PK)?)
        .attribute_definitions(string(keys::GSI1_SK)?)
        .attribute_definitions(string(keys::GSI2_PK)?)
        .attribute_definitions(string(keys::GSI2_SK)?)
        .global_secondary_indexes(gsi(keys::GSI1, keys::GSI1_PK, keys::GSI1_SK)?)
        .global_secondary_indexes(gsi(keys::GSI2, keys::GSI2_PK, keys::GSI2_SK)?)
        .send()
        .await;
    match result {
        Ok(_) => Ok(()),
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_resource_in_use_exception()) =>
        {
            Ok(())
        }
        Err(error) => Err(aws_sdk_dynamodb::Error::from(error).into()),
    }
}

/// The bucket, notifying `import_queue_arn` of objects created under `uploads/`.
async fn ensure_bucket(
    sdk: &aws_config::SdkConfig,
    name: &str,
    import_queue_arn: &str,
) -> Result<(), BoxError> {
    use aws_sdk_s3::types::{
        Event, FilterRule, FilterRuleName, NotificationConfiguration,
        NotificationConfigurationFilter, QueueConfiguration, S3KeyFilter,
    };
    let s3 = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(sdk)
            .force_path_style(true)
            .build(),
    );
    match s3.create_bucket().bucket(name).send().await {
        Ok(_) => {}
        Err(error)
            if error.as_service_error().is_some_and(|e| {
                e.is_bucket_already_owned_by_you() || e.is_bucket_already_exists()
            }) => {}
        Err(error) => return Err(aws_sdk_s3::Error::from(error).into()),
    }
    let uploads = NotificationConfigurationFilter::builder()
        .key(
            S3KeyFilter::builder()
                .filter_rules(
                    FilterRule::builder()
                        .name(FilterRuleName::Prefix)
                        .value(outbound::blob::UPLOADS)
                        .build(),
                )
                .build(),
        )
        .build();
    let queue = QueueConfiguration::builder()
        .queue_arn(import_queue_arn)
        .events(Event::from("s3:ObjectCreated:*"))
        .filter(uploads)
        .build()?;
    s3.put_bucket_notification_configuration()
        .bucket(name)
        .notification_configuration(
            NotificationConfiguration::builder()
                .queue_configurations(queue)
                .build(),
        )
        .send()
        .await
        .map_err(aws_sdk_s3::Error::from)?;
    Ok(())
}

/// A queue whose failed messages come back after two seconds (SQS's default is 30), so a call
/// outcome that arrives before its call is marked placed is recorded moments later.
async fn ensure_queue(sqs: &aws_sdk_sqs::Client, name: &str) -> Result<String, BoxError> {
    let output = sqs
        .create_queue()
        .queue_name(name)
        .attributes(
            aws_sdk_sqs::types::QueueAttributeName::VisibilityTimeout,
            "2",
        )
        .send()
        .await
        .map_err(aws_sdk_sqs::Error::from)?;
    output.queue_url.ok_or_else(|| "queue has no url".into())
}
