//! Tenant settings (D14) and the do-not-call list (D16): what a tenant's tasks obey on top of
//! their own rules.

use futures::stream::{self, StreamExt};
use outbound_adapters::store::Store;
use outbound_files as files;
use outbound_model::contact::FieldError;
use outbound_model::dnc::{listed_forms, DncEntry};
use outbound_model::error::Error;
use outbound_model::import::{ImportReport, RowFailure};
use outbound_model::numbers::e164;
use outbound_model::page::PageQuery;
use outbound_model::settings::{SettingsChange, TenantSettings};
use outbound_model::{Description, Id, Page, Phone, Tenant, Timestamp};

pub async fn settings(store: &Store, tenant: &Tenant) -> Result<TenantSettings, Error> {
    store.settings(tenant).await
}

pub async fn update_settings(
    store: &Store,
    tenant: &Tenant,
    change: &SettingsChange,
) -> Result<TenantSettings, Error> {
    store
        .update_settings(tenant, change, Timestamp::now())
        .await
}

/// An entry for `phone` with its E.164 form in the tenant's default country (D14).
async fn entry(
    store: &Store,
    tenant: &Tenant,
    phone: Phone,
    reason: Description,
) -> Result<DncEntry, Error> {
    let country = store.settings(tenant).await?.default_country;
    Ok(DncEntry {
        id: Id::new(),
        e164: e164(&phone, country),
        phone,
        reason,
        created_at: Timestamp::now(),
    })
}

pub async fn add_dnc(
    store: &Store,
    tenant: &Tenant,
    phone: Phone,
    reason: Description,
) -> Result<DncEntry, Error> {
    let entry = entry(store, tenant, phone, reason).await?;
    store.add_dnc(tenant, &entry).await?;
    Ok(entry)
}

/// Removes the entry that lists `phone` by its normal form or its E.164 form.
pub async fn delete_dnc(store: &Store, tenant: &Tenant, phone: Phone) -> Result<(), Error> {
    let country = store.settings(tenant).await?.default_country;
    let e164 = e164(&phone, country);
    let forms = listed_forms(&phone, e164.as_deref());
    match store.dnc_entry_of(tenant, &forms).await? {
        Some(entry) => store.delete_dnc(tenant, &entry).await,
        None => Err(Error::NotFound(format!(
            "phoneNumber {phone} is not on the do-not-call list"
        ))),
    }
}

pub async fn list_dnc(
    store: &Store,
    tenant: &Tenant,
    page: &PageQuery,
    phone: Option<&str>,
) -> Result<Page<DncEntry>, Error> {
    let fragment = phone.map(Phone::filter_fragment).filter(|f| !f.is_empty());
    store.dnc_page(tenant, page, fragment.as_deref()).await
}

/// Lists every number of a CSV or XLSX file (the D8 readers, titles and limits; a `reason`
/// column is kept as the entry's reason). Rows refused by the reader, and numbers listed
/// already, are reported; the others are listed.
pub async fn import_dnc(
    store: &Store,
    tenant: &Tenant,
    bytes: &[u8],
    file_name: Option<&str>,
) -> Result<ImportReport, Error> {
    let parsed = files::read_contacts(bytes, file_name)?;
    let country = store.settings(tenant).await?.default_country;
    let mut details = parsed.failures;
    let mut entries = Vec::with_capacity(parsed.rows.len());
    for row in parsed.rows {
        // A reason longer than an entry holds refuses the row, as a long field refuses a contact.
        let Ok(reason) = Description::parse("reason", row.fields.get("reason").unwrap_or(""))
        else {
            details.push(RowFailure {
                row: row.row,
                phone_number: row.phone_as_given.to_string(),
                reason: FieldError::TooLong {
                    field: "reason".into(),
                    max: Description::MAX_CHARS,
                }
                .reason()
                .into(),
            });
            continue;
        };
        let entry = DncEntry {
            id: Id::new(),
            e164: e164(&row.phone, country),
            phone: row.phone,
            reason,
            created_at: Timestamp::now(),
        };
        entries.push((row.row, row.phone_as_given.to_string(), entry));
    }
    let results: Vec<(u64, String, Result<(), Error>)> = stream::iter(entries)
        .map(|(row, phone, entry)| async move {
            let added = store.add_dnc(tenant, &entry).await;
            (row, phone, added)
        })
        .buffer_unordered(8)
        .collect()
        .await;
    let mut success = 0;
    for (row, phone, added) in results {
        match added {
            Ok(()) => success += 1,
            Err(Error::Conflict(_)) => details.push(RowFailure {
                row,
                phone_number: phone,
                reason: files::reason::ALREADY_EXISTS.into(),
            }),
            Err(error) => return Err(error),
        }
    }
    details.sort_by_key(|failure| failure.row);
    Ok(ImportReport {
        import_count: parsed.import_count,
        success_count: success,
        fail_count: details.len(),
        details,
    })
}
