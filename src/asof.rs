//! Time travel: the record as it stood at the end of a past day.
//!
//! Every ledger event up to the cutoff is folded through the same pipeline into a scratch
//! store. The fold reads no clock, so this is the truth of that day, not a filter over
//! today's views. Vectors come from the real store's cache: nothing is embedded again.

use std::path::Path;

use crate::ledger::Ledger;
use crate::views::{ModelSlot, ViewError, Views};

/// The record as of a cutoff: views folded from the ledger's prefix.
pub struct Past {
    pub views: Views,
    pub events: usize,
}

/// Fold every event of `real` with a timestamp at or before `cutoff_ms` into fresh views in
/// the scratch folder `scratch`, reusing the vectors `real_views` already computed.
pub fn fold_until(
    real: &Ledger,
    real_views: &Views,
    cutoff_ms: i64,
    scratch: &Path,
    model: &mut ModelSlot,
    tz: jiff::tz::TimeZone,
) -> Result<Past, ViewError> {
    let mut events = 0;
    let prefix = real
        .events()
        .filter(|item| {
            item.as_ref()
                .map_or(true, |(_, env)| env.ts_ms <= cutoff_ms)
        })
        .inspect(|item| {
            if item.is_ok() {
                events += 1;
            }
        });
    let views = Views::fold_scratch(scratch, prefix, model, tz, real_views)?;
    Ok(Past { views, events })
}
