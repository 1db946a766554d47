//! The views after a redaction: what `peat redact` does once the ledger's current versions
//! hold no secret, and what the oracles check it did, through this one function.
//!
//! The order matters: the views catch up on the redacted versions (retracting the old
//! texts) before the ledger forgets the old ones, the vectors cached for the old texts are
//! forgotten, and only then is every version in the ledger scrubbed, the past table
//! refilled from the scrubbed feed and the views' files rewritten, so no old byte survives
//! on disk in either database.

use crate::ledger::Ledger;
use crate::views::{ModelSlot, ViewError, Views};
use crate::vocab::event::Envelope;

/// How the ledger is scrubbed (see [`Ledger::scrub`]): each version's redacted copy (`None`:
/// unchanged), each capture cursor's, and whether a blob goes.
pub(crate) struct Scrub<'a> {
    pub(crate) envelope: &'a dyn Fn(&Envelope) -> Option<Envelope>,
    pub(crate) cursor: &'a dyn Fn(&[u8]) -> Option<Vec<u8>>,
    pub(crate) drop_blob: &'a dyn Fn(&[u8]) -> bool,
}

/// Bring the views and the ledger's past in line with a redaction whose current versions
/// `ledger` already holds: `old_texts` are the texts the vector lane embedded that the
/// redaction changed (current and replaced versions'). Returns how many cached vectors
/// were forgotten.
pub(crate) fn after_redaction(
    ledger: &mut Ledger,
    model: &mut ModelSlot,
    tz: jiff::tz::TimeZone,
    note: &mut dyn FnMut(&str),
    old_texts: &[String],
    scrub: Scrub<'_>,
) -> Result<usize, ViewError> {
    let mut views = Views::open(ledger, model, tz.clone(), note)?;
    let forgotten = match views.model().map(str::to_string) {
        Some(m) => views
            .vectors
            .forget(&m, old_texts.iter().map(String::as_str))?,
        None => 0,
    };
    // The lane's file holds the old texts' vectors until it is written again.
    views.vectors.rewrite_file()?;
    views.keyword.merge_all()?;
    drop(views);

    ledger.scrub(scrub.envelope, scrub.cursor, scrub.drop_blob)?;
    let views_dir = ledger.path().join("views");
    if views_dir.exists() {
        // The views keep the versions revisions replaced (for `asof`), the unredacted ones
        // among them: they are put back from the scrubbed feed before the rewrite.
        let mut views = Views::open(ledger, model, tz, note)?;
        views.refill_past(ledger)?;
        drop(views);
        // Not under a reader that has them open (readers do not wait for this command).
        let _lock = crate::views::lock(ledger.path(), "rewriting the views")?;
        crate::ledger::scrub::rewrite(&views_dir, &mut |_, _, v| Some(v.to_vec()))
            .map_err(ViewError::store)?;
    }
    // Answers reads kept beside the views may quote the old texts (a commit's subject).
    crate::views::memo::discard(ledger.path());
    Ok(forgotten)
}
