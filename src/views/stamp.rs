//! Which ledger, and how far into it, the views were folded from.
//!
//! Views are derived: served from the wrong ledger they would answer with events that are
//! not recorded. A generation is stamped with the identity of the ledger it was folded
//! from; views stamped with another ledger, or ahead of this ledger's last change (an older
//! ledger restored under newer views), are rebuilt, never served.

use super::{ViewError, Views};
use crate::ledger::Ledger;

/// The key in the views' meta keyspace holding the ledger's identity.
const STAMP: &str = "ledger";

/// Stamp `views` as folded from `ledger`.
pub fn record(views: &Views, ledger: &Ledger) -> Result<(), ViewError> {
    views
        .meta
        .insert(STAMP, ledger.identity()?.as_bytes())
        .map_err(ViewError::store)
}

/// Why `views` must not be served over `ledger`, or `None` when they fit. Views from before
/// stamps existed are adopted when their position fits.
pub fn misfit(views: &Views, ledger: &Ledger) -> Result<Option<String>, ViewError> {
    let id = ledger.identity()?;
    let stamped = views.meta.get(STAMP).map_err(ViewError::store)?;
    if let Some(s) = &stamped
        && s.as_ref() != id.as_bytes()
    {
        return Ok(Some(
            "peat: the views were folded from another ledger: rebuilding them from this one".into(),
        ));
    }
    let last = ledger.last_lsn()?;
    let ahead = views.tables.applied()?.max(views.keyword.applied_lsn());
    if ahead > last {
        return Ok(Some(format!(
            "peat: the views reach change {ahead} but the ledger ends at {last} (an older ledger restored?): rebuilding them from the ledger"
        )));
    }
    if stamped.is_none() {
        record(views, ledger)?;
    }
    Ok(None)
}
