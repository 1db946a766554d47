//! Retroactive redaction: the current rules applied to everything already recorded.
//!
//! 1. Every event whose text (or blob) the rules change is written again, redacted,
//!    through the normal feed: the views retract the old text and apply the new, as for
//!    any revision (so the retraction oracle covers it). A redacted blob is a new blob; the
//!    `FileTouch` and `ToolOutput` events are pointed at it.
//! 2. The views catch up; the embedding cache forgets the vectors of the old texts; the
//!    keyword index merges all its segments and deletes the files no commit needs.
//! 3. The old bytes leave the disk: the ledger database is rewritten whole (events, both
//!    versions of every feed entry, and the capture cursors redacted, the old blobs
//!    dropped); the views' past table (the versions `asof` folds, and their blobs) is
//!    refilled from the scrubbed feed; then the views database is rewritten too. Both
//!    rewrites go straight into tables, so no journal keeps the old text. The answers reads
//!    kept beside the views (`views::memo`) are removed.
//! 4. The rule-set version is recorded in the store (`redact.version`): a newer binary
//!    with improved rules re-applies them when a writer opens the store.

use std::collections::HashMap;
use std::path::Path;

use super::{Redactor, apply};
use crate::ledger::{Ledger, LedgerError, WriteSet};
use crate::views::rows::TextRow;
use crate::views::scrubbed::{Scrub, after_redaction};
use crate::views::{ModelSlot, ViewError};
use crate::vocab::change::BlobId;
use crate::vocab::event::Envelope;

/// The file in the store naming the rule-set version last applied to all of it.
pub(crate) const VERSION_FILE: &str = "redact.version";

/// Events rewritten per ledger write.
const CHUNK: usize = 5_000;

/// What one retroactive pass did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub(crate) struct Report {
    /// Events examined.
    pub(crate) events: usize,
    /// Events written again, redacted.
    pub(crate) revised: usize,
    /// Change blobs replaced by their redacted copies.
    pub(crate) blobs: usize,
    /// Cached embeddings of old texts dropped.
    pub(crate) vectors_forgotten: usize,
    pub(crate) rules_version: u32,
}

/// The rule-set version last applied to the whole store, if any.
pub(crate) fn applied_version(store: &Path) -> Option<u32> {
    std::fs::read_to_string(store.join(VERSION_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Record that `version` of the rules covers the whole store.
pub(crate) fn record_version(store: &Path, version: u32) -> std::io::Result<()> {
    let tmp = store.join(format!("{VERSION_FILE}.tmp"));
    std::fs::write(&tmp, version.to_string())?;
    std::fs::rename(tmp, store.join(VERSION_FILE))
}

/// Whether a writer opening the store should re-apply the rules: it holds events and they
/// were last redacted under older rules (or never: a store from before redaction).
pub(crate) fn needs_upgrade(ledger: &Ledger) -> Result<bool, LedgerError> {
    match applied_version(ledger.path()) {
        Some(v) if v >= super::RULES_VERSION => Ok(false),
        Some(_) => Ok(true),
        None => {
            if ledger.is_empty()? {
                // A new store: everything in it will be redacted at capture. Unrecorded,
                // the first write would make it a store from before redaction, to be
                // redacted all over again; and a store that cannot take this small file
                // cannot take the write either.
                record_version(ledger.path(), super::RULES_VERSION).map_err(|source| {
                    LedgerError::Create {
                        path: ledger.path().join(VERSION_FILE),
                        source,
                    }
                })?;
                return Ok(false);
            }
            Ok(true)
        }
    }
}

/// What a writer opening the store says before it applies the store's current rules to all
/// of it, once, when [`needs_upgrade`] says so.
pub(crate) fn upgrade_note(ledger: &Ledger) -> String {
    let from = applied_version(ledger.path()).map_or("a peat without redaction".to_string(), |v| {
        format!("rules v{v}")
    });
    format!(
        "peat: this store was recorded under {from}: redacting it with rules v{} (once)…",
        super::RULES_VERSION
    )
}

/// Apply `r` to everything in `ledger` and its views, then remove the old bytes from disk.
pub(crate) fn run(
    ledger: &mut Ledger,
    r: &Redactor,
    model: &mut ModelSlot,
    tz: jiff::tz::TimeZone,
    note: &mut dyn FnMut(&str),
) -> Result<Report, ViewError> {
    let mut report = Report {
        rules_version: super::RULES_VERSION,
        ..Report::default()
    };
    // Old blob id → its redacted copy's id (None: the blob needed no change).
    let mut blobs: HashMap<BlobId, Option<BlobId>> = HashMap::new();
    let mut old_texts: Vec<String> = Vec::new();
    let mut set = WriteSet::default();
    let events: Vec<_> = ledger.events().collect();
    for item in events {
        let (id, env) = item?;
        report.events += 1;
        let mut new = env.clone();
        let mut changed = apply::envelope(r, &mut new);
        for blob in env.kind.blobs() {
            redact_blob(ledger, r, blob, (&mut blobs, &mut set), &mut report)?;
        }
        changed |= apply::repoint(&mut new, &|b| blobs.get(b).copied().flatten());
        if changed {
            // The vector lane embedded the text's window: that is what its cache holds.
            if let Some(row) = TextRow::of(env.ts_ms, &env.kind) {
                old_texts.push(row.embed_text().to_string());
            }
            set.event(id.seq, new);
            report.revised += 1;
        }
        if set.events.len() >= CHUNK {
            ledger.write(std::mem::take(&mut set))?;
        }
    }
    // Earlier versions (the old halves of the feed's revisions, what `asof` folds) name
    // blobs too: their redacted copies are kept, and the scrub points the versions at them.
    // Their texts were embedded too, while they were current: the cache forgets those the
    // rules change as well.
    let mut earlier = Vec::new();
    for entry in ledger.revisions() {
        if let Some(old) = entry?.old {
            earlier.extend(old.kind.blobs());
            if apply::envelope(r, &mut old.clone())
                && let Some(row) = TextRow::of(old.ts_ms, &old.kind)
            {
                old_texts.push(row.embed_text().to_string());
            }
        }
    }
    for blob in earlier {
        redact_blob(ledger, r, blob, (&mut blobs, &mut set), &mut report)?;
    }
    if !set.events.is_empty() || !set.blobs.is_empty() {
        ledger.write(set)?;
    }

    // The views retract the old texts and apply the new ones; then no view needs the old
    // versions, and both databases are rewritten without them.
    let redo = |env: &Envelope| -> Option<Envelope> {
        let mut e = env.clone();
        let a = apply::envelope(r, &mut e);
        let b = apply::repoint(&mut e, &|id| blobs.get(id).copied().flatten());
        (a || b).then_some(e)
    };
    let cursor = |bytes: &[u8]| apply::json_bytes(r, bytes);
    // A blob the rules would change holds a secret: its redacted copy (if any event needs
    // it) was written above, so the original goes, whether an event still named it or not.
    let drop_blob = |bytes: &[u8]| apply::blob(r, bytes).is_some();
    let scrub = Scrub {
        envelope: &redo,
        cursor: &cursor,
        drop_blob: &drop_blob,
    };
    report.vectors_forgotten = after_redaction(ledger, model, tz, note, &old_texts, scrub)?;
    record_version(ledger.path(), super::RULES_VERSION).map_err(|source| ViewError::Io {
        path: ledger.path().join(VERSION_FILE),
        source,
    })?;
    Ok(report)
}

/// Note in `blobs` where the blob `blob` (a change, an output) moves to: its redacted copy (put in `set`)
/// when the rules change it, else nowhere. Each blob is looked at once.
fn redact_blob(
    ledger: &Ledger,
    r: &Redactor,
    blob: BlobId,
    (blobs, set): (&mut HashMap<BlobId, Option<BlobId>>, &mut WriteSet),
    report: &mut Report,
) -> Result<(), LedgerError> {
    if blobs.contains_key(&blob) {
        return Ok(());
    }
    let moved = match ledger.blob(&blob)? {
        Some(bytes) => apply::blob(r, &bytes).map(|(nid, nbytes)| {
            set.blobs.push((nid, nbytes));
            nid
        }),
        None => None,
    };
    report.blobs += usize::from(moved.is_some());
    blobs.insert(blob, moved);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::open_for_test as open;
    use crate::testing::files_holding;
    use crate::views::Views;
    use crate::vocab::change::Change;
    use crate::vocab::event::{Event, EventId, Seq, SessionId, TouchOp};

    const AWS: &str = "AKIAZ7Q2XWJ4VHMK3PLN";

    fn session() -> SessionId {
        SessionId("s".into())
    }

    /// An edit of `.env` at `ts_ms` that wrote `content`, with the blob it names.
    fn edit(ts_ms: i64, content: &str) -> (Envelope, (BlobId, Vec<u8>)) {
        let (blob, bytes) = Change::write(content).to_blob();
        let kind = Event::FileTouch {
            path: "/r/.env".into(),
            op: TouchOp::Write,
            change: Some(blob),
            failed: false,
            more: Vec::new(),
            restores: None,
            model: None,
        };
        (Envelope::new(session(), ts_ms, kind), (blob, bytes))
    }

    /// Write a said text and an edit, both holding the secret, at `ts_ms`, revising them.
    fn write(ledger: &mut Ledger, ts_ms: i64, words: &str) {
        let mut set = WriteSet::default();
        let text = format!("{words}: the deploy key is {AWS}");
        set.event(
            Seq(1),
            Envelope::new(session(), ts_ms, Event::Said { text }),
        );
        let (env, blob) = edit(ts_ms, &format!("AWS_ACCESS_KEY_ID={AWS}\n# {words}\n"));
        set.event(Seq(2), env);
        set.blobs.push(blob);
        ledger.write(set).unwrap();
    }

    #[test]
    fn a_secret_in_a_revised_version_leaves_the_views_and_asof_shows_it_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let mut ledger = open(&store);
        let tz = jiff::tz::TimeZone::UTC;
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        // Recorded without redaction (as an older peat did), then revised later in time:
        // the views keep the first versions for `asof`, secret and all.
        write(&mut ledger, 100, "first");
        drop(Views::open(&ledger, &mut model, tz.clone(), &mut |_| {}).unwrap());
        write(&mut ledger, 300, "second");
        let views = Views::open(&ledger, &mut model, tz.clone(), &mut |_| {}).unwrap();
        assert_eq!(views.tables.past_versions().count(), 2);
        // A read kept an answer quoting it (as commit resolution keeps a commit's subject).
        crate::views::memo::keep(&views, "commits", "k", &format!("deploy key {AWS}"));
        drop(views);
        assert!(!files_holding(&store.join("views"), AWS).is_empty());

        let r = Redactor::for_store(&store).unwrap();
        run(&mut ledger, &r, &mut model, tz.clone(), &mut |_| {}).unwrap();
        for needle in [AWS.to_string(), AWS.to_ascii_lowercase()] {
            let left = files_holding(&store, &needle);
            assert!(left.is_empty(), "{needle} left in {left:?}");
        }

        // The record as it stood before the revision: the first versions, redacted.
        let views = Views::open(&ledger, &mut model, tz.clone(), &mut |_| {}).unwrap();
        let copied =
            crate::views::asof::copy_past(&views, 200, &dir.path().join("scratch"), true).unwrap();
        drop(views);
        let past = crate::views::asof::replay(copied, &mut model, tz).unwrap();
        let id = |seq| EventId {
            session: session(),
            seq: Seq(seq),
        };
        let said = past.views.tables.envelope(&id(1)).unwrap().unwrap();
        let Event::Said { text } = &said.kind else {
            panic!("{said:?}")
        };
        assert_eq!(said.ts_ms, 100);
        assert!(text.starts_with("first: the deploy key is [REDACTED:aws-access-key:"));
        let wrote = past.views.tables.change_bytes("/r/.env", &id(2)).unwrap();
        let wrote = String::from_utf8(wrote.expect("the edit's blob")).unwrap();
        assert!(wrote.contains("[REDACTED:aws-access-key:"), "{wrote}");
        assert!(wrote.contains("# first"), "{wrote}");
    }

    #[test]
    fn a_new_store_records_its_rules_version_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok");
        assert!(!needs_upgrade(&open(&ok)).unwrap());
        assert_eq!(applied_version(&ok), Some(super::super::RULES_VERSION));

        // The version cannot be written (its temporary name is taken by a folder).
        let stuck = dir.path().join("stuck");
        let ledger = open(&stuck);
        std::fs::create_dir(stuck.join(format!("{VERSION_FILE}.tmp"))).unwrap();
        let err = needs_upgrade(&ledger).unwrap_err();
        assert!(
            matches!(&err, LedgerError::Create { path, .. } if path.ends_with(VERSION_FILE)),
            "{err}"
        );
        assert_eq!(applied_version(&stuck), None);
    }
}
