//! Unique names (D3): a data source's or task's name is held by a guard item in the tenant's
//! partition (`NAME#...` / `TASKNAME#...`), written in the same transaction as the record it
//! names. Creating takes the name, renaming moves it, deleting frees it; a name already held
//! fails the guard's condition, never the record's.

use super::keys::{self, PK, SK};
use super::paging::Counted;
use super::{s, Actions, Expr, Item};
use outbound_model::error::Error;
use outbound_model::reclaim::ReclaimJob;
use outbound_model::{Id, Tenant, Timestamp};

/// The guard of one name: its sort key (`keys::data_source_name`, `keys::task_name`) and the
/// record that holds it.
pub(crate) struct NameGuard<'a> {
    pub tenant: &'a Tenant,
    pub name_key: String,
    /// The attribute naming the holder (`data_source_id`, `task_id`) and its id.
    pub holder: (&'static str, &'a Id),
}

impl NameGuard<'_> {
    fn item(&self) -> Item {
        [
            (PK.to_owned(), s(keys::tenant(self.tenant))),
            (SK.to_owned(), s(&self.name_key)),
            (self.holder.0.to_owned(), s(self.holder.1.as_str())),
        ]
        .into()
    }
}

impl<L> Actions<'_, L> {
    /// Takes a free name: the guard is put only where none is.
    pub(crate) fn take_name(self, label: L, guard: &NameGuard) -> Result<Self, Error> {
        self.put(
            label,
            guard.item(),
            Some(("attribute_not_exists(pk)", Expr::default())),
        )
    }

    /// Frees the name whose guard has sort key `name_key`.
    pub(crate) fn free_name(
        self,
        label: L,
        tenant: &Tenant,
        name_key: String,
    ) -> Result<Self, Error> {
        self.delete(label, keys::tenant(tenant), name_key, None)
    }

    /// A rename: the old name freed and the new one taken, as the actions labelled
    /// `free` and `take`.
    pub(crate) fn move_name(
        self,
        (free, take): (L, L),
        old_key: String,
        guard: &NameGuard,
    ) -> Result<Self, Error> {
        let tenant = guard.tenant;
        self.free_name(free, tenant, old_key)?
            .take_name(take, guard)
    }

    /// What deleting a named record does besides the delete itself (D11): its name freed, the
    /// reclaim of its partition recorded (the intent the sweep queues again should the job be
    /// lost), and the tenant's count of such records lowered; labelled `name`, `intent`, `count`.
    pub(crate) fn retire(
        self,
        (name, intent, count): (L, L, L),
        tenant: &Tenant,
        name_key: String,
        reclaim: &ReclaimJob,
        counted: Counted,
    ) -> Result<Self, Error> {
        self.free_name(name, tenant, name_key)?
            .put(
                intent,
                super::reclaim::intent_item(reclaim, Timestamp::now())?,
                None,
            )?
            .count_change(count, tenant, counted, -1)
    }
}
