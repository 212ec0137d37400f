//! Contact operations (D7): phone numbers unique per data source, `contactCount` exact.

use outbound_adapters::store::Store;
use outbound_model::contact::ContactPatch;
use outbound_model::error::Error;
use outbound_model::numbers::Country;
use outbound_model::page::PageQuery;
use outbound_model::Tenant;
use outbound_model::{Contact, ContactFields, Id, Page, Phone, Timestamp};

/// A page of contacts (D5); `phone` filters on a fragment of the normalised number.
pub async fn list(
    store: &Store,
    tenant: &Tenant,
    source: &Id,
    page: &PageQuery,
    phone: Option<(&str, u64)>,
) -> Result<Page<Contact>, Error> {
    let filter = phone.and_then(|(raw, scan_most)| {
        let fragment = Phone::filter_fragment(raw);
        (!fragment.is_empty()).then_some((fragment, scan_most))
    });
    store
        .contacts_page(
            tenant,
            source,
            page,
            filter
                .as_ref()
                .map(|(fragment, most)| (fragment.as_str(), *most)),
        )
        .await
}

/// The country a data source's numbers written without `+` are read in (D14): its own, else
/// the tenant's. Read before a write, so a busy table fails the request before it changes
/// anything (D1).
pub async fn country(
    store: &Store,
    tenant: &Tenant,
    source: &Id,
) -> Result<Option<Country>, Error> {
    store.numbering_country(tenant, source).await
}

pub async fn add(
    store: &Store,
    tenant: &Tenant,
    source: &Id,
    patch: ContactPatch,
) -> Result<Contact, Error> {
    let phone = patch
        .phone
        .clone()
        .ok_or_else(|| Error::invalid("phoneNumber is required"))?;
    let fields = patch.apply_to(ContactFields::default())?;
    let now = Timestamp::now();
    let contact = Contact {
        id: Id::new(),
        data_source_id: source.clone(),
        phone,
        fields,
        status: 0,
        call_count: 0,
        created_at: now,
        updated_at: now,
    };
    store.add_contact(tenant, &contact).await?;
    Ok(contact)
}

pub async fn update(
    store: &Store,
    tenant: &Tenant,
    source: &Id,
    id: &Id,
    patch: ContactPatch,
) -> Result<Contact, Error> {
    let current = store.contact(tenant, source, id).await?;
    let next = Contact {
        phone: patch.phone.clone().unwrap_or_else(|| current.phone.clone()),
        fields: patch.apply_to(current.fields.clone())?,
        updated_at: Timestamp::now(),
        ..current.clone()
    };
    let sent: Vec<&str> = patch.fields.iter().map(|(name, _)| name.as_str()).collect();
    store.update_contact(tenant, &current, &next, &sent).await?;
    Ok(next)
}

pub async fn delete(store: &Store, tenant: &Tenant, source: &Id, id: &Id) -> Result<(), Error> {
    let current = store.contact(tenant, source, id).await?;
    store.delete_contact(tenant, &current).await
}
