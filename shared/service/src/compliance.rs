//! Tenant settings (D14) and the do-not-call list (D16): what a tenant's tasks obey on top of
//! their own rules. Every change of either is an audit event (D25) naming its [`Actor`]: written
//! by the change's own transaction, except a file's import, whose one event follows its rows.

use futures::stream::{self, StreamExt};
use outbound_adapters::store::slots::JobKind;
use outbound_adapters::store::Store;
use outbound_files as files;
use outbound_model::contact::FieldError;
use outbound_model::dnc::{listed_e164, DncEntry};
use outbound_model::error::Error;
use outbound_model::event::{DncAction, Event};
use outbound_model::import::{ImportReport, RowFailure};
use outbound_model::numbers::{e164, Country};
use outbound_model::page::PageQuery;
use outbound_model::settings::{Change, SettingsChange, TenantSettings};
use outbound_model::{Actor, ContactFields, Description, Id, Page, Phone, Tenant, Timestamp};

pub async fn settings(store: &Store, tenant: &Tenant) -> Result<TenantSettings, Error> {
    store.settings(tenant).await
}

/// Changes the settings, `actor`'s change telling the bus which fields it set or cleared (D25).
/// A default country set gives the entries stored before D24 without an E.164 form the one they
/// have in it.
pub async fn update_settings(
    store: &Store,
    tenant: &Tenant,
    actor: &Actor,
    change: &SettingsChange,
) -> Result<TenantSettings, Error> {
    let now = Timestamp::now();
    let event = Event::settings_changed(tenant, now, actor, change.changed());
    let settings = store.update_settings(tenant, change, now, &event).await?;
    if let (Change::Set(_), Some(country)) = (&change.default_country, settings.default_country) {
        complete_dnc_entries(store, tenant, country).await?;
    }
    Ok(settings)
}

/// Entries listed before D24 without an E.164 form gain the one they have in `country`.
async fn complete_dnc_entries(
    store: &Store,
    tenant: &Tenant,
    country: Country,
) -> Result<(), Error> {
    let mut completed = 0;
    for mut entry in store.dnc_entries_without_e164(tenant).await? {
        let Some(e164) = e164(&entry.phone, Some(country)) else {
            continue;
        };
        entry.e164 = Some(e164);
        entry.country = Some(country);
        completed += usize::from(store.complete_dnc_entry(tenant, &entry).await?);
    }
    if completed > 0 {
        tracing::info!(completed, "do-not-call entries read in the default country");
    }
    Ok(())
}

/// Lists `phone` (D16), read as D24 says, with `actor`'s audit event (D25).
pub async fn add_dnc(
    store: &Store,
    tenant: &Tenant,
    actor: &Actor,
    phone: Phone,
    country: Option<Country>,
    reason: Description,
) -> Result<DncEntry, Error> {
    let default_country = store.settings(tenant).await?.default_country;
    let entry = DncEntry::new(phone, country, default_country, reason)?;
    let event = Event::dnc_changed(tenant, entry.created_at, actor, DncAction::Add);
    store.add_dnc(tenant, &entry, Some(&event)).await?;
    Ok(entry)
}

/// Removes the entry that lists `phone`, read as an entry would be (D24), with `actor`'s audit
/// event (D25); an entry stored before D24 without an E.164 form is found by its normal form.
pub async fn delete_dnc(
    store: &Store,
    tenant: &Tenant,
    actor: &Actor,
    phone: Phone,
    country: Option<Country>,
) -> Result<(), Error> {
    let default_country = store.settings(tenant).await?.default_country;
    let mut keys = vec![phone.as_str().to_owned()];
    if let Ok((e164, _)) = listed_e164(&phone, country, default_country) {
        keys.insert(0, e164);
    }
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    match store.dnc_entry_of(tenant, &keys).await? {
        Some(entry) => {
            let event = Event::dnc_changed(tenant, Timestamp::now(), actor, DncAction::Delete);
            store.delete_dnc(tenant, &entry, &event).await
        }
        None => Err(Error::NotFound(format!(
            "phoneNumber {phone} is not on the do-not-call list"
        ))),
    }
}

/// A page of the do-not-call list (D5, D16), filtered by a fragment of a number: any part of
/// one on a list of at most `scan_most` entries, only a whole number on a longer one (D5).
pub async fn list_dnc(
    store: &Store,
    tenant: &Tenant,
    page: &PageQuery,
    phone: Option<&str>,
    scan_most: u64,
) -> Result<Page<DncEntry>, Error> {
    let fragment = phone.map(Phone::filter_fragment).filter(|f| !f.is_empty());
    let filter = fragment.as_deref().map(|fragment| (fragment, scan_most));
    store.dnc_page(tenant, page, filter).await
}

/// The reason of a file's row refused because the tenant holds as many entries as it may.
pub const TENANT_LIMIT_REACHED: &str = "tenant limit reached";

/// Lists every number of a CSV or XLSX file (the D8 readers, titles and limits; a `reason`
/// column is kept as the entry's reason). Rows refused by the reader, and numbers listed
/// already, are reported; the others are listed. The listing holds one of the tenant's
/// `import_slots` import slots (D8, D26), given back when it ends (a function that dies leaves
/// it to lapse in minutes); 409 when every one is held, and nothing is listed. Each row is its
/// own transaction, so the import's one audit event (D25), with its counts, is put after the
/// last of them: an import that fails midway (503) has none, and the same file sent again
/// lists the rest and has it.
pub async fn import_dnc(
    store: &Store,
    tenant: &Tenant,
    actor: &Actor,
    bytes: &[u8],
    file_name: Option<&str>,
    import_slots: u32,
) -> Result<ImportReport, Error> {
    let parsed = files::read_contacts(bytes, file_name)?;
    let holder = Id::new();
    let slot = store
        .take_request_slot(
            tenant,
            JobKind::Import,
            &holder,
            import_slots,
            Timestamp::now(),
        )
        .await?;
    let listed = list_parsed(store, tenant, actor, parsed).await;
    if let Err(error) = store
        .release_slot(tenant, JobKind::Import, slot, &holder)
        .await
    {
        tracing::warn!(%error, slot, "do-not-call import's slot not given back; it lapses");
    }
    listed
}

/// Lists the rows of a do-not-call file read by [`import_dnc`].
async fn list_parsed(
    store: &Store,
    tenant: &Tenant,
    actor: &Actor,
    parsed: files::ParsedFile,
) -> Result<ImportReport, Error> {
    let country = store.settings(tenant).await?.default_country;
    let mut details = parsed.failures;
    let mut entries = Vec::with_capacity(parsed.rows.len());
    for row in parsed.rows {
        // A reason longer than an entry holds refuses the row, as a long field refuses a contact.
        let Ok(reason) = Description::parse("reason", column(&row.fields, "reason").unwrap_or(""))
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
        // A `country` column reads the row's number (D24); a country the row cannot be read in
        // refuses the row as a number would be.
        let own_country = match column(&row.fields, "country").map(str::trim) {
            None | Some("") => Ok(None),
            Some(code) => Country::parse("country", code).map(Some),
        };
        let entry = own_country.and_then(|own| DncEntry::new(row.phone, own, country, reason));
        let Ok(entry) = entry else {
            details.push(RowFailure {
                row: row.row,
                phone_number: row.phone_as_given.to_string(),
                reason: files::reason::INVALID_PHONE.into(),
            });
            continue;
        };
        entries.push((row.row, row.phone_as_given.to_string(), entry));
    }
    let results: Vec<(u64, String, Result<(), Error>)> = stream::iter(entries)
        .map(|(row, phone, entry)| async move {
            let added = store.add_dnc(tenant, &entry, None).await;
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
            // The tenant's limit (D26): the rows past it are reported, the others listed.
            Err(Error::LimitReached(_)) => details.push(RowFailure {
                row,
                phone_number: phone,
                reason: TENANT_LIMIT_REACHED.into(),
            }),
            Err(error) => return Err(error),
        }
    }
    details.sort_by_key(|failure| failure.row);
    let report = ImportReport {
        import_count: parsed.import_count,
        success_count: success,
        fail_count: details.len(),
        details,
    };
    store
        .put_event(&Event::dnc_imported(
            tenant,
            Timestamp::now(),
            actor,
            &report,
        ))
        .await?;
    Ok(report)
}

/// The value of a do-not-call file's column `name`, whatever the case of its title.
fn column<'a>(fields: &'a ContactFields, name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(title, _)| title.eq_ignore_ascii_case(name))
        .map(|(_, value)| value)
}
