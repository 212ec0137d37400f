//! S3: the key layout (every key carries the tenant), uploads, downloads and presigned URLs.
//!
//! - `uploads/{tenant}/{dataSourceId}/{importId}`: presigned uploads; their creation triggers the
//!   import function (the bucket notifies the import queue for this prefix only).
//! - `imports/{tenant}/{dataSourceId}/{importId}`: files posted to the API and imported at once.
//! - `results/{tenant}/{dataSourceId}/{importId}.json`: import reports.
//! - `exports/{tenant}/{exportId}/{fileName}`: export files.

use crate::aws::Dependency;
use crate::aws::Lazy;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;
use outbound_model::error::Error;
use outbound_model::Id;
use outbound_model::Tenant;
use std::path::Path;
use std::time::Duration;

/// The bucket and the client to reach it; cheap to clone.
#[derive(Clone, Debug)]
pub struct Blob {
    /// Built on first use: most API requests never reach S3.
    s3: Lazy<aws_sdk_s3::Client>,
    bucket: String,
}

/// Prefix of presigned uploads, the one the bucket notifies the import queue about.
pub const UPLOADS: &str = "uploads/";

pub fn upload_key(tenant: &Tenant, source: &Id, import: &Id) -> String {
    format!("{UPLOADS}{}/{source}/{import}", tenant.as_str())
}

pub fn posted_key(tenant: &Tenant, source: &Id, import: &Id) -> String {
    format!("imports/{}/{source}/{import}", tenant.as_str())
}

pub fn result_key(tenant: &Tenant, source: &Id, import: &Id) -> String {
    format!("results/{}/{source}/{import}.json", tenant.as_str())
}

/// Where a large recall's list of contacts waits for the dialer's recall job (D12).
pub fn recall_key(tenant: &Tenant, task: &Id, recall: &Id) -> String {
    format!("recalls/{}/{task}/{recall}.json", tenant.as_str())
}

pub fn export_key(tenant: &Tenant, export: &Id, file_name: &str) -> String {
    format!("exports/{}/{export}/{file_name}", tenant.as_str())
}

/// The parts of an upload key: `uploads/{tenant}/{dataSourceId}/{importId}`.
pub fn parse_upload_key(key: &str) -> Option<(Tenant, Id, Id)> {
    let mut parts = key.strip_prefix(UPLOADS)?.split('/');
    let tenant = Tenant::parse(parts.next()?).ok()?;
    let source = Id::parse(parts.next()?)?;
    let import = Id::parse(parts.next()?)?;
    parts.next().is_none().then_some((tenant, source, import))
}

fn s3_error<E>(
    context: &'static str,
) -> impl FnOnce(aws_sdk_s3::error::SdkError<E, aws_smithy_runtime_api::http::Response>) -> Error
where
    E: aws_sdk_s3::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    move |error| Error::dependency(context, error)
}

impl Blob {
    /// Builds the client, its calls timed per API request; local stand-ins need path-style
    /// addressing.
    pub fn from_config(
        sdk: &aws_config::SdkConfig,
        bucket: impl Into<String>,
        path_style: bool,
    ) -> Self {
        let sdk = sdk.clone();
        Blob {
            s3: Lazy::new(move || {
                let config = crate::aws::timing::s3(&sdk)
                    .force_path_style(path_style)
                    .build();
                aws_sdk_s3::Client::from_conf(config)
            }),
            bucket: bucket.into(),
        }
    }

    pub async fn put(
        &self,
        key: &str,
        body: impl Into<bytes::Bytes>,
        content_type: &str,
    ) -> Result<(), Error> {
        self.s3
            .get()
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .content_type(content_type)
            .body(ByteStream::from(body.into()))
            .send()
            .await
            .map_err(s3_error("put object"))?;
        Ok(())
    }

    /// Uploads a file from disk, streamed.
    pub async fn put_file(&self, key: &str, path: &Path, content_type: &str) -> Result<(), Error> {
        let body = ByteStream::from_path(path)
            .await
            .map_err(|e| Error::internal("read export file", e))?;
        self.s3
            .get()
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .content_type(content_type)
            .body(body)
            .send()
            .await
            .map_err(s3_error("put object"))?;
        Ok(())
    }

    /// The object's bytes; an object larger than `max_bytes` is 413 and is not read.
    pub async fn get(&self, key: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, Error> {
        let output = match self
            .s3
            .get()
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
        {
            Ok(output) => output,
            Err(error) if error.as_service_error().is_some_and(|e| e.is_no_such_key()) => {
                return Ok(None)
            }
            Err(error) => return Err(s3_error("get object")(error)),
        };
        let size = output.content_length.unwrap_or(0).max(0) as u64;
        if size > max_bytes {
            return Err(Error::TooLarge(format!(
                "file is larger than {} MiB",
                max_bytes / (1024 * 1024)
            )));
        }
        let bytes = output
            .body
            .collect()
            .await
            .map_err(|e| Error::internal("read object", e))?;
        Ok(Some(bytes.to_vec()))
    }

    /// A presigned PUT for `key` of exactly `size` bytes, valid for `ttl`.
    pub async fn presign_put(&self, key: &str, size: u64, ttl: Duration) -> Result<String, Error> {
        let config =
            PresigningConfig::expires_in(ttl).map_err(|e| Error::internal("presign", e))?;
        let length = i64::try_from(size).map_err(|e| Error::internal("presign", e))?;
        let request = self
            .s3
            .get()
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            // Content-Length is a signed header: an upload of any other length is refused.
            .content_length(length)
            .presigned(config)
            .await
            .map_err(s3_error("presign put"))?;
        Ok(request.uri().to_owned())
    }

    /// A presigned GET for `key`, valid for `ttl`, downloaded as `file_name`.
    pub async fn presign_get(
        &self,
        key: &str,
        file_name: &str,
        ttl: Duration,
    ) -> Result<String, Error> {
        let config =
            PresigningConfig::expires_in(ttl).map_err(|e| Error::internal("presign", e))?;
        let request = self
            .s3
            .get()
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .response_content_disposition(format!("attachment; filename=\"{file_name}\""))
            .presigned(config)
            .await
            .map_err(s3_error("presign get"))?;
        Ok(request.uri().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_keys_round_trip_and_refuse_strangers() {
        let tenant = Tenant::parse("acme").unwrap();
        let (source, import) = (Id::new(), Id::new());
        let key = upload_key(&tenant, &source, &import);
        assert_eq!(
            parse_upload_key(&key),
            Some((tenant, source.clone(), import.clone()))
        );
        assert_eq!(parse_upload_key(&format!("{key}/x")), None);
        assert_eq!(
            parse_upload_key(&format!("exports/acme/{source}/{import}")),
            None
        );
        assert_eq!(
            parse_upload_key(&format!("uploads/a#b/{source}/{import}")),
            None
        );
    }
}
