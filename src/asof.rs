//! Time travel: the record as it stood at the end of a past day.
//!
//! The past is, for every event, its newest version at or before the cutoff: the version
//! the ledger holds today when that version's time is at or before the cutoff and nothing
//! replaced it, otherwise the newest of its earlier versions (kept as the old halves of the
//! feed's revisions) whose time is. A revision made later never leaks into the past, and an
//! event revised after the cutoff still shows the version it had then. Those versions are
//! folded through the same pipeline into a scratch store; the fold reads no clock. Vectors
//! come from the real store's cache: nothing is embedded again.
//!
//! A version's time is its envelope's (the transcript's) time: the ledger keeps no capture
//! clock. Versions of equal time are told apart by the order they were written in.

use std::collections::HashMap;
use std::path::Path;

use crate::event::{Envelope, EventId};
use crate::ledger::{Ledger, LedgerError};
use crate::views::fault::{self, Fault};
use crate::views::{ModelSlot, ViewError, Views};

/// The record as of a cutoff: views folded from the ledger's past versions.
pub struct Past {
    pub views: Views,
    pub events: usize,
}

/// Fold, for every event of `real`, its newest version at or before `cutoff_ms` into fresh
/// views in the scratch folder `scratch`, reusing the vectors `real_views` already computed.
pub fn fold_until(
    real: &Ledger,
    real_views: &Views,
    cutoff_ms: i64,
    scratch: &Path,
    model: &mut ModelSlot,
    tz: jiff::tz::TimeZone,
) -> Result<Past, ViewError> {
    let mut revised = if fault::active(Fault::AsofReadsToday) {
        HashMap::new()
    } else {
        revised_as_of(real, cutoff_ms)?
    };
    let mut events = 0;
    let past = real
        .events()
        .filter_map(|item| match item {
            Err(e) => Some(Err(e)),
            Ok((id, today)) => match revised.remove(&id) {
                Some(then) => then.map(|env| Ok((id, env))),
                None => (today.ts_ms <= cutoff_ms).then_some(Ok((id, today))),
            },
        })
        .inspect(|item| {
            if item.is_ok() {
                events += 1;
            }
        });
    let views = Views::fold_scratch(scratch, real, past, model, tz, real_views)?;
    Ok(Past { views, events })
}

/// For every event that was ever revised, its newest version at or before `cutoff_ms`
/// (`None`: it had no version by then). Only revised events are held in memory.
fn revised_as_of(
    real: &Ledger,
    cutoff_ms: i64,
) -> Result<HashMap<EventId, Option<Envelope>>, LedgerError> {
    let mut then: HashMap<EventId, Option<Envelope>> = HashMap::new();
    for change in real.revisions() {
        let c = change?;
        let at = |env: Envelope| (env.ts_ms <= cutoff_ms).then_some(env);
        // The first revision of an event carries its first version as `old`.
        let slot = then.entry(c.id).or_insert_with(|| c.old.and_then(at));
        if let Some(new) = at(c.new) {
            *slot = Some(new);
        }
    }
    Ok(then)
}
