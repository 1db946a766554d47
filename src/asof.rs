//! Time travel: the record as it stood at the end of a past day.
//!
//! Every ledger event up to the cutoff is folded through the same pipeline into a scratch
//! store. The fold reads no clock, so this is the truth of that day, not a filter over
//! today's views. Vectors come from the real store's cache: nothing is embedded again.

use std::path::Path;
use std::time::Duration;

use crate::ledger::{Access, Ledger, Mode, WriteSet};
use crate::views::{ModelSlot, ViewError, Views};

/// Events copied per batch into the scratch ledger.
const CHUNK: usize = 20_000;

/// The record as of a cutoff: a scratch ledger and its views.
pub struct Past {
    pub ledger: Ledger,
    pub views: Views,
    pub events: usize,
}

/// Fold every event of `real` with a timestamp at or before `cutoff_ms` into a new store at
/// `scratch`, reusing the vectors `real_views` already computed.
pub fn fold_until(
    real: &Ledger,
    real_views: &Views,
    cutoff_ms: i64,
    scratch: &Path,
    model: &mut ModelSlot,
    tz: jiff::tz::TimeZone,
) -> Result<Past, ViewError> {
    let ledger = Ledger::open(
        scratch,
        Access {
            mode: Mode::Create,
            wait: Duration::ZERO,
            who: "peat asof (scratch)",
            on_wait: &mut || {},
        },
    )?;
    let mut ledger = ledger;
    let mut set = WriteSet::default();
    let mut events = 0;
    for item in real.events() {
        let (id, env) = item?;
        if env.ts_ms > cutoff_ms {
            continue;
        }
        set.event(id.seq, env);
        events += 1;
        if set.events.len() >= CHUNK {
            ledger.write(std::mem::take(&mut set))?;
        }
    }
    ledger.write(set)?;
    let views = Views::open_borrowing(&ledger, model, tz, real_views)?;
    Ok(Past {
        ledger,
        views,
        events,
    })
}
