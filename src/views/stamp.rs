//! Which ledger, and how far into it, the views were folded from.
//!
//! Views are derived: served from the wrong ledger they would answer with events that are
//! not recorded. A generation is stamped with the identity of the ledger it was folded
//! from; views stamped with another ledger, or ahead of this ledger's last change (an older
//! ledger restored under newer views), are rebuilt, never served. Views too damaged to
//! open at all (a truncated table, a zeroed version file) are discarded and rebuilt.

use std::path::Path;

use super::{ModelSlot, ViewError, Views};
use crate::ledger::{Ledger, space};

/// The key in the views' meta keyspace holding the ledger's identity.
pub(crate) const STAMP: &str = "ledger";

/// Stamp `views` as folded from `ledger`.
pub(crate) fn record(views: &Views, ledger: &Ledger) -> Result<(), ViewError> {
    views
        .meta
        .insert(STAMP, ledger.identity()?.as_bytes())
        .map_err(ViewError::store)
}

/// Why `views` must not be served over `ledger`, or `None` when they fit. Views from before
/// stamps existed are adopted (stamped) when their position fits.
pub(crate) fn misfit(views: &Views, ledger: &Ledger) -> Result<Option<String>, ViewError> {
    let why = unfit(views, ledger)?;
    if why.is_none() && views.meta.get(STAMP).map_err(ViewError::store)?.is_none() {
        record(views, ledger)?;
    }
    Ok(why)
}

/// [`misfit`] without writing anything: for a reader beside a writer.
pub(crate) fn unfit(views: &Views, ledger: &Ledger) -> Result<Option<String>, ViewError> {
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
    Ok(None)
}

/// [`Views::open`], but views that fail to open or catch up for damage are discarded and
/// rebuilt from the ledger (saying so through `note`). A failure of the ledger, the model
/// or a full disk is returned as it is: rebuilding cannot mend those.
pub(crate) fn open_recovering(
    ledger: &Ledger,
    model: &mut ModelSlot,
    tz: jiff::tz::TimeZone,
    note: &mut dyn FnMut(&str),
) -> Result<Views, ViewError> {
    match Views::open(ledger, model, tz.clone(), note) {
        Err(e) if is_damage(&e, ledger.path()) => {
            note(&format!(
                "peat: the views are damaged ({e}): discarding them and rebuilding from the ledger"
            ));
            discard(ledger.path())?;
            Views::open(ledger, model, tz, note)
        }
        other => other,
    }
}

/// Whether `e` is damage to the views themselves (not the ledger, the model or the disk).
pub(crate) fn is_damage(e: &ViewError, store: &Path) -> bool {
    let views_failed = matches!(
        e,
        ViewError::Store(_) | ViewError::Corrupt(_) | ViewError::Keyword(_) | ViewError::Io { .. }
    );
    views_failed && space::short_of_room(store).is_none()
}

/// Remove every view of the store at `store` (they are derived: the ledger holds all).
pub(crate) fn discard(store: &Path) -> Result<(), ViewError> {
    // Not from under a reader that has them open.
    let _lock = super::lock(store, "discarding the views")?;
    super::closings::discard(store);
    let entries = std::fs::read_dir(store).map_err(|source| ViewError::Io {
        path: store.to_path_buf(),
        source,
    })?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name == "views" || name.starts_with("keyword.v") {
            std::fs::remove_dir_all(&path).map_err(|source| ViewError::Io { path, source })?;
        } else if name.starts_with("vectors.v") {
            std::fs::remove_file(&path).map_err(|source| ViewError::Io { path, source })?;
        }
    }
    Ok(())
}
