use clap::Args;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::ledger::{LedgerError, Mode};

/// Fold the store's journal into its tables now
///
/// Every write lands in the journal first and is folded into the tables as memory fills.
/// This folds everything at once (after a large import, or before copying the store), so
/// fully folded journal files are dropped and the next open has little to replay.
#[derive(Args, Debug, Default)]
pub(crate) struct CompactArgs {}

pub(crate) fn run(ctx: &Ctx, _args: &CompactArgs) -> Result<u8, CliError> {
    let ledger = ctx.open(Mode::Existing)?;
    let store = |e: fjall::Error| -> CliError {
        LedgerError::Store {
            path: ledger.path().to_path_buf(),
            detail: crate::ledger::storage_sentence(&e),
        }
        .into()
    };
    let db = ledger.database()?;
    let before = db.journal_disk_space().map_err(store)?;
    for name in db.list_keyspace_names() {
        let keyspace = db
            .keyspace(&name, crate::ledger::keyspace_options)
            .map_err(store)?;
        keyspace.rotate_memtable_and_wait().map_err(store)?;
    }
    db.persist(fjall::PersistMode::SyncAll).map_err(store)?;
    let after = db.journal_disk_space().map_err(store)?;
    if ctx.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(
            &mut out,
            &serde_json::json!({"journal_bytes_before": before, "journal_bytes_after": after}),
        )
        .map_err(std::io::Error::from)?;
        writeln!(out)?;
    }
    ctx.ui.note(&format!(
        "compacted — journal {} → {}",
        megabytes(before),
        megabytes(after)
    ));
    Ok(0)
}

fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / (1u64 << 20) as f64;
    if mb < 10.0 {
        format!("{mb:.1} MB")
    } else {
        format!("{mb:.0} MB")
    }
}
