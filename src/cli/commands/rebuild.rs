use clap::Args;
use std::time::Instant;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::ledger::Mode;
use crate::views::{Views, stamp};

/// Rebuild every view from the ledger
///
/// Views are disposable: this folds the whole ledger into a new generation and drops the
/// old one only once the new one is complete. peat does this by itself when the view
/// schema, the embedding model or the time zone changes.
#[derive(Args, Debug)]
pub(crate) struct RebuildArgs {}

pub(crate) fn run(ctx: &Ctx, _args: &RebuildArgs) -> Result<u8, CliError> {
    let started = Instant::now();
    let ledger = ctx.open(Mode::Existing)?;
    let mut model = ctx.model_slot()?;
    let views = match Views::rebuild_now(&ledger, &mut model, ctx.tz.clone()) {
        Err(e) if stamp::is_damage(&e, ledger.path()) => {
            ctx.ui.note(&format!(
                "peat: the views are damaged ({e}): discarding them and rebuilding from the ledger"
            ));
            stamp::discard(ledger.path())?;
            Views::rebuild_now(&ledger, &mut model, ctx.tz.clone())?
        }
        other => other?,
    };
    ctx.ui.note(&format!(
        "rebuilt the views (generation {}) from {} events in {:.1}s; semantic lane {}",
        views.generation(),
        ledger.len()?,
        started.elapsed().as_secs_f64(),
        views.model().unwrap_or("off")
    ));
    crate::cli::embed_pass::start_pass_after_write(ctx, views.vectors.queued()?);
    Ok(0)
}
