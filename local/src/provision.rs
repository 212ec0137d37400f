//! Creates, idempotently, the table, bucket and queues that `template.yaml` declares, on the
//! local stand-ins; and, for the functions under `cargo lambda`, its two secrets.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType,
};
use outbound_adapters::store::keys;

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
    let import_queue_arn = queue_arn(&sqs, &import_queue_url).await?;
    ensure_bucket(sdk, bucket, &import_queue_arn).await?;
    // The variables the functions read these names from, for the least-privilege check.
    outbound_adapters::aws::actions::name_resources(&[
        ("TABLE_NAME", table),
        ("BUCKET_NAME", bucket),
        ("RECLAIM_QUEUE_URL", &reclaim_queue_url),
        ("IMPORT_QUEUE_URL", &import_queue_url),
        ("DIAL_QUEUE_URL", &dial_queue_url),
        ("CALL_EVENTS_QUEUE_URL", &call_events_queue_url),
        ("EXPORT_QUEUE_URL", &export_queue_url),
    ]);
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

/// The ARN of the queue at `url` (what a notification or a rule targets).
async fn queue_arn(sqs: &aws_sdk_sqs::Client, url: &str) -> Result<String, BoxError> {
    use aws_sdk_sqs::types::QueueAttributeName;
    sqs.get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .map_err(aws_sdk_sqs::Error::from)?
        .attributes
        .and_then(|mut a| a.remove(&QueueAttributeName::QueueArn))
        .ok_or_else(|| format!("queue {url} has no ARN").into())
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
                        .value(outbound_adapters::blob::UPLOADS)
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
pub async fn ensure_queue(sqs: &aws_sdk_sqs::Client, name: &str) -> Result<String, BoxError> {
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

/// The stack's two secrets in moto's Secrets Manager (D32), holding the local stack's keys
/// ([`crate::local_secret`]): the functions under `cargo lambda` run as in Lambda, where a key
/// is read by its secret's ARN and a plain value is refused.
#[derive(Clone, Debug)]
pub struct SecretResources {
    /// The page-token key's (`PAGE_TOKEN_SECRET_ARN`).
    pub page_token_arn: String,
    /// The call-signing key's (`CALL_SIGNING_SECRET_ARN`).
    pub call_signing_arn: String,
}

/// Stores the local stack's keys as the secrets `{stack}-page-token-secret` and
/// `{stack}-call-signing-secret`, created or given the key as their value, and answers their
/// ARNs.
pub async fn ensure_secrets(
    sdk: &aws_config::SdkConfig,
    stack: &str,
) -> Result<SecretResources, BoxError> {
    use outbound_app::config::secrets::{CALL_SIGNING_SECRET_ARN, PAGE_TOKEN_SECRET_ARN};
    use outbound_app::config::{CALL_SIGNING_KEY, PAGE_TOKEN_SECRET};
    let key = |name: &str| crate::local_secret(name).ok_or(format!("no local value of {name}"));
    let page_token_arn = ensure_secret(
        sdk,
        &format!("{stack}-page-token-secret"),
        &key(PAGE_TOKEN_SECRET)?,
    )
    .await?;
    let call_signing_arn = ensure_secret(
        sdk,
        &format!("{stack}-call-signing-secret"),
        &key(CALL_SIGNING_KEY)?,
    )
    .await?;
    outbound_adapters::aws::actions::name_resources(&[
        (PAGE_TOKEN_SECRET_ARN, &page_token_arn),
        (CALL_SIGNING_SECRET_ARN, &call_signing_arn),
    ]);
    Ok(SecretResources {
        page_token_arn,
        call_signing_arn,
    })
}

/// The secret `name` holding `value`: created, or its value replaced when it exists; answers its
/// ARN.
pub async fn ensure_secret(
    sdk: &aws_config::SdkConfig,
    name: &str,
    value: &str,
) -> Result<String, BoxError> {
    let client = aws_sdk_secretsmanager::Client::new(sdk);
    let created = client
        .create_secret()
        .name(name)
        .secret_string(value)
        .send()
        .await;
    let arn = match created {
        Ok(created) => created.arn,
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_resource_exists_exception()) =>
        {
            client
                .put_secret_value()
                .secret_id(name)
                .secret_string(value)
                .send()
                .await
                .map_err(aws_sdk_secretsmanager::Error::from)?
                .arn
        }
        Err(error) => return Err(aws_sdk_secretsmanager::Error::from(error).into()),
    };
    arn.ok_or_else(|| format!("secret {name} has no ARN").into())
}

/// What the domain events (D20) need locally: the table's stream, the bus, a queue every event
/// on the bus is copied to by a rule, as a subscriber would read them, and the publisher's
/// dead-letter queue (`EventDeadLetterQueue` in `template.yaml`).
#[derive(Clone, Debug)]
pub struct EventResources {
    pub stream_arn: String,
    pub bus: String,
    pub log_queue_url: String,
    /// The entries the bus refused for good, sent there by the publisher.
    pub dead_letter_queue_url: String,
}

/// Turns on `table`'s stream (new images, as in `template.yaml`) and creates the bus `{name}`
/// with a rule that copies every event of the service to the queue `{name}-log`, and the
/// publisher's dead-letter queue `{name}-dead-letters`.
pub async fn ensure_events(
    sdk: &aws_config::SdkConfig,
    table: &str,
    name: &str,
) -> Result<EventResources, BoxError> {
    use aws_sdk_dynamodb::types::{StreamSpecification, StreamViewType};
    let dynamodb = aws_sdk_dynamodb::Client::new(sdk);
    let described = dynamodb
        .describe_table()
        .table_name(table)
        .send()
        .await
        .map_err(aws_sdk_dynamodb::Error::from)?;
    let stream_arn = match described.table().and_then(|t| t.latest_stream_arn()) {
        Some(arn) => arn.to_owned(),
        None => dynamodb
            .update_table()
            .table_name(table)
            .stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(StreamViewType::NewImage)
                    .build()?,
            )
            .send()
            .await
            .map_err(aws_sdk_dynamodb::Error::from)?
            .table_description()
            .and_then(|t| t.latest_stream_arn())
            .ok_or("the table's stream has no ARN")?
            .to_owned(),
    };
    let events = aws_sdk_eventbridge::Client::new(sdk);
    match events.create_event_bus().name(name).send().await {
        Ok(_) => {}
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_resource_already_exists_exception()) => {}
        Err(error) => return Err(aws_sdk_eventbridge::Error::from(error).into()),
    }
    let sqs = aws_sdk_sqs::Client::new(sdk);
    let log_queue_url = ensure_queue(&sqs, &format!("{name}-log")).await?;
    subscribe(sdk, name, &format!("{name}-log"), &log_queue_url, None).await?;
    let dead_letter_queue_url = ensure_queue(&sqs, &format!("{name}-dead-letters")).await?;
    outbound_adapters::aws::actions::name_resources(&[
        ("TABLE_NAME", table),
        ("EVENT_BUS_NAME", name),
        ("EVENT_DEAD_LETTER_QUEUE_URL", &dead_letter_queue_url),
    ]);
    Ok(EventResources {
        stream_arn,
        bus: name.to_owned(),
        log_queue_url,
        dead_letter_queue_url,
    })
}

/// A rule `rule` on `bus` sending the service's events to the queue at `queue_url`: all of
/// them, or one tenant's (the routing D20 promises).
pub async fn subscribe(
    sdk: &aws_config::SdkConfig,
    bus: &str,
    rule: &str,
    queue_url: &str,
    tenant: Option<&str>,
) -> Result<(), BoxError> {
    let queue_arn = queue_arn(&aws_sdk_sqs::Client::new(sdk), queue_url).await?;
    let pattern = match tenant {
        None => serde_json::json!({ "source": [outbound_model::event::SOURCE] }),
        Some(tenant) => serde_json::json!({
            "source": [outbound_model::event::SOURCE],
            "detail": { "tenant": [tenant] },
        }),
    };
    let events = aws_sdk_eventbridge::Client::new(sdk);
    events
        .put_rule()
        .name(rule)
        .event_bus_name(bus)
        .event_pattern(pattern.to_string())
        .send()
        .await
        .map_err(aws_sdk_eventbridge::Error::from)?;
    events
        .put_targets()
        .rule(rule)
        .event_bus_name(bus)
        .targets(
            aws_sdk_eventbridge::types::Target::builder()
                .id("queue")
                .arn(queue_arn)
                .build()?,
        )
        .send()
        .await
        .map_err(aws_sdk_eventbridge::Error::from)?;
    Ok(())
}
