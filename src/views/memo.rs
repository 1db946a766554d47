//! Answers a read worked out from the views and something outside them (a repository), kept
//! in a small file beside the views (`<store>/<name>.memo.json`) so the next read that asks
//! the same question of the same views answers without working it out again.
//!
//! An answer is filed under the views it was read from (the ledger they were folded from,
//! their generation and the change they reach) and the key its read gives, which names
//! everything else the answer depends on. It is served only when both are the same, so it
//! is never stale; one filed under other views is dropped at the next write. Keeping is
//! best-effort: a read that cannot write (a full disk, a read-only store) still answers, and
//! nothing is written when the disk is too short of room for the ledger's own writes.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use super::Views;
use crate::ledger::space;

/// How many answers one file keeps (each read of another set of sessions is one).
const KEEP: usize = 8;

/// One file's answers, newest first.
#[derive(Default, Serialize, Deserialize)]
struct Kept {
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    views: String,
    key: String,
    value: serde_json::Value,
}

/// The views `views` are: which ledger they were folded from, which generation, how far.
fn position(views: &Views) -> Option<String> {
    let ledger = views.meta.get(super::stamp::STAMP).ok()??;
    Some(format!(
        "{}/{}/{}/{}",
        String::from_utf8_lossy(&ledger),
        views.current.generation,
        views.current.schema,
        views.tables.applied().ok()?
    ))
}

fn path(views: &Views, name: &str) -> PathBuf {
    views.dir.join(format!("{name}.memo.json"))
}

fn read(views: &Views, name: &str) -> Kept {
    std::fs::read(path(views, name))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// The answer kept in `name` under `key` for these views, if any.
pub(crate) fn recall<T: DeserializeOwned>(views: &Views, name: &str, key: &str) -> Option<T> {
    let here = position(views)?;
    read(views, name)
        .entries
        .into_iter()
        .find(|e| e.views == here && e.key == key)
        .and_then(|e| serde_json::from_value(e.value).ok())
}

/// Keep `value` in `name` under `key` for these views, if the disk has room; failing
/// quietly (see the module documentation).
pub(crate) fn keep<T: Serialize>(views: &Views, name: &str, key: &str, value: &T) {
    let (Some(here), Ok(value)) = (position(views), serde_json::to_value(value)) else {
        return;
    };
    if space::short_of_room(&views.dir).is_some() {
        return;
    }
    let mut kept = read(views, name);
    kept.entries.retain(|e| e.views == here && e.key != key);
    kept.entries.insert(
        0,
        Entry {
            views: here,
            key: key.to_string(),
            value,
        },
    );
    kept.entries.truncate(KEEP);
    let path = path(views, name);
    let tmp = path.with_extension(format!("json.{}", std::process::id()));
    // Private from the start, as everything in the store is (its messages name commits).
    let written = crate::ledger::private::create_file(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &super::tables::encode_json(&kept)))
        .is_ok()
        && std::fs::rename(&tmp, &path).is_ok();
    if !written {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Remove every answer kept in the store at `store`: after a redaction no copy of an old
/// text may stay on disk, and the views it was read from are gone.
pub(crate) fn discard(store: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(store) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().contains(".memo.json") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Ledger, WriteSet, open_for_test};
    use crate::views::ModelSlot;
    use crate::vocab::event::{Envelope, Event, Seq, SessionId};

    fn said(ledger: &mut Ledger, seq: u32) -> Views {
        let mut set = WriteSet::default();
        let kind = Event::Said { text: "ok".into() };
        set.event(Seq(seq), Envelope::new(SessionId("s".into()), 10, kind));
        ledger.write(set).unwrap();
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        Views::open(ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap()
    }

    #[test]
    fn an_answer_is_served_for_the_same_key_and_views_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = open_for_test(dir.path());
        let views = said(&mut ledger, 1);
        keep(&views, "t", "k", &7u32);
        assert_eq!(recall::<u32>(&views, "t", "k"), Some(7));
        assert_eq!(recall::<u32>(&views, "t", "other"), None);
        drop(views);
        let views = said(&mut ledger, 2);
        assert_eq!(
            recall::<u32>(&views, "t", "k"),
            None,
            "served past a change"
        );
    }

    #[test]
    fn a_store_that_cannot_be_written_still_answers_without_keeping() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = open_for_test(dir.path());
        let views = said(&mut ledger, 1);
        // A directory where the file would go: the write fails, quietly.
        std::fs::create_dir(path(&views, "t")).unwrap();
        keep(&views, "t", "k", &7u32);
        assert_eq!(recall::<u32>(&views, "t", "k"), None);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("t.memo.json."))
            .collect();
        assert!(left.is_empty(), "a half-written file was left: {left:?}");
    }
}
