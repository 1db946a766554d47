//! The recorded edits of a file: which recorded paths a path on this disk names, the edits
//! made to them in ledger order, what each wrote, and the prompt each edit answered.
//!
//! Paths are recorded absolute, as the agent saw them. A path names its exact recording and
//! the same relative path under the root of every recorded session (another checkout of the
//! repository, another machine); failing both, its relative path matched as a suffix (a prefix
//! scan of the reversed paths), which finds edits of a session begun in a subdirectory. A
//! path not here may have been a directory in the record, so what lies under it counts too.
//! Renames are followed by [`under_names`], one rule for every read.
//!
//! Everything here reads the views alone: each edit's row and the change it wrote are
//! materialised by the fold, so a lookup never opens the ledger.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

use crate::reads::vcs::EarlierName;
use crate::views::rows::{TextKind, TextRow};
use crate::views::tables::Table;
use crate::views::{ViewError, Views};
use crate::vocab::change::{BlobId, Change};
use crate::vocab::event::{EventId, Seq, SessionId, TouchOp};

/// What a path given on the command line is, relative to the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Wanted {
    /// The absolute path (canonical where it exists).
    pub(crate) abs: String,
    /// The same path relative to the repository root when it lies inside it, else as typed
    /// when that was relative: what it is relative to each session's root.
    pub(crate) rel: Option<String>,
    /// Everything under it is wanted too: a directory here, or a path not here, which the
    /// record may hold as a directory.
    pub(crate) dir: bool,
}

/// One recorded edit of a file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct FileEdit {
    pub(crate) session: SessionId,
    pub(crate) seq: Seq,
    pub(crate) ts_ms: i64,
    pub(crate) op: TouchOp,
    /// The path as the agent recorded it.
    pub(crate) path: String,
    /// The tool reported an error: the edit was not applied.
    pub(crate) failed: bool,
    /// The model that made the edit, as the harness named it (`null` where it did not).
    pub(crate) model: Option<String>,
    /// What the edit wrote, in the blob store.
    #[serde(skip)]
    pub(crate) change: Option<BlobId>,
}

impl FileEdit {
    pub(crate) fn id(&self) -> EventId {
        EventId {
            session: self.session.clone(),
            seq: self.seq,
        }
    }
}

/// The recorded paths `wanted` names under its name now: its exact recording and its relative
/// path under every session's root (each with what lies under it, for a directory), else those
/// whose tail is its relative path.
pub(crate) fn recorded_paths(
    views: &Views,
    wanted: &Wanted,
) -> Result<BTreeSet<String>, ViewError> {
    Sessions::of(views)?.paths(views, wanted)
}

/// The recorded paths of a file under `names`, the names it had before its renames (as
/// [`crate::reads::vcs::earlier_names`] or a file's history give them), each found as
/// [`recorded_paths`] finds a name.
pub(crate) fn under_names(
    views: &Views,
    names: Vec<EarlierName>,
) -> Result<BTreeSet<String>, ViewError> {
    Sessions::of(views)?.under(views, names)
}

/// Every recorded path of `wanted`: under its name now and under the names it had before.
pub(crate) fn recorded_history(
    views: &Views,
    wanted: &Wanted,
) -> Result<BTreeSet<String>, ViewError> {
    let sessions = Sessions::of(views)?;
    let mut found = sessions.paths(views, wanted)?;
    found.extend(sessions.earlier(views, wanted)?);
    Ok(found)
}

/// What the recorded sessions tell a path lookup: where they worked and when the record began.
struct Sessions {
    /// The directories sessions worked in, each once.
    roots: BTreeSet<String>,
    /// The first recorded moment (ms).
    first_ms: Option<i64>,
}

impl Sessions {
    fn of(views: &Views) -> Result<Sessions, ViewError> {
        let mut roots = BTreeSet::new();
        let mut first_ms: Option<i64> = None;
        for place in views.tables.session_places()? {
            if let Some(cwd) = place.cwd.as_deref().map(|c| c.trim_end_matches('/'))
                && !cwd.is_empty()
            {
                roots.insert(cwd.to_string());
            }
            if let Some(ms) = place.start_ms {
                first_ms = Some(first_ms.map_or(ms, |f| f.min(ms)));
            }
        }
        Ok(Sessions { roots, first_ms })
    }

    fn paths(&self, views: &Views, wanted: &Wanted) -> Result<BTreeSet<String>, ViewError> {
        let mut found = recorded_at(views, &wanted.abs, wanted.dir)?;
        let Some(rel) = &wanted.rel else {
            return Ok(found);
        };
        for root in &self.roots {
            found.extend(recorded_at(views, &format!("{root}/{rel}"), wanted.dir)?);
        }
        if !found.is_empty() {
            return Ok(found);
        }
        let t = &views.tables;
        let tail = format!("/{rel}");
        let mut suffix = t.paths_ending(&tail)?;
        if wanted.dir {
            // Its relative path is somewhere inside the recorded path, which no prefix finds;
            // every distinct path is looked at once.
            let inside = format!("{tail}/");
            suffix.extend(
                t.paths_starting("")?
                    .into_iter()
                    .filter(|p| p.contains(&inside)),
            );
        }
        Ok(suffix)
    }

    /// Asking the repository costs a process or two, so its history is walked only from the
    /// record's beginning (less a day for the committers' clocks): a rename before it carries
    /// no recorded edit. A directory here has no renames to follow.
    fn earlier(&self, views: &Views, wanted: &Wanted) -> Result<BTreeSet<String>, ViewError> {
        let abs = std::path::Path::new(&wanted.abs);
        if abs.is_dir() {
            return Ok(BTreeSet::new());
        }
        let since = self.first_ms.map(|ms| ms - 86_400_000);
        self.under(views, crate::reads::vcs::earlier_names(abs, since))
    }

    /// The recorded paths under each of `names`.
    fn under(&self, views: &Views, names: Vec<EarlierName>) -> Result<BTreeSet<String>, ViewError> {
        let mut found = BTreeSet::new();
        for name in names {
            let earlier = Wanted {
                abs: name.abs.to_string_lossy().into_owned(),
                rel: Some(name.rel),
                dir: false,
            };
            found.extend(self.paths(views, &earlier)?);
        }
        Ok(found)
    }
}

/// `path` as recorded, and (`dir`) the recorded paths under it.
fn recorded_at(views: &Views, path: &str, dir: bool) -> Result<BTreeSet<String>, ViewError> {
    let t = &views.tables;
    let path = path.trim_end_matches('/');
    let mut found = match dir {
        true => t.paths_starting(&format!("{path}/"))?,
        false => BTreeSet::new(),
    };
    if !t.touches_of(path)?.is_empty() {
        found.insert(path.to_string());
    }
    Ok(found)
}

/// The recorded paths that are `rel` itself or end in `/rel`: where a repository-relative
/// path was recorded, in any checkout.
pub(crate) fn paths_for_relative(views: &Views, rel: &str) -> Result<BTreeSet<String>, ViewError> {
    let mut out = views.tables.paths_ending(&format!("/{rel}"))?;
    if !views.tables.touches_of(rel)?.is_empty() {
        out.insert(rel.to_string());
    }
    Ok(out)
}

/// Every recorded edit of `paths`, in ledger order (by time, then session and seq).
pub(crate) fn edits_of(
    views: &Views,
    paths: &BTreeSet<String>,
) -> Result<Vec<FileEdit>, ViewError> {
    let mut out = Vec::new();
    for p in paths {
        for (id, row) in views.tables.file_rows(p)? {
            out.push(FileEdit {
                session: id.session,
                seq: id.seq,
                ts_ms: row.ts_ms,
                op: row.op,
                path: p.clone(),
                failed: row.failed,
                model: row.model,
                change: row.change,
            });
        }
    }
    out.sort_by(|a, b| (a.ts_ms, &a.session, a.seq).cmp(&(b.ts_ms, &b.session, b.seq)));
    Ok(out)
}

/// What an edit wrote, from the changes view. `None` when it recorded no change or the blob
/// does not parse (an edit from before changes were kept).
pub(crate) fn change_of(views: &Views, edit: &FileEdit) -> Result<Option<Change>, ViewError> {
    if edit.change.is_none() {
        return Ok(None);
    }
    Ok(views
        .tables
        .change_bytes(&edit.path, &edit.id())?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
}

/// The applied edits of `paths` (failed ones left out) that recorded what they wrote, with
/// that change, in ledger order: what blame replays and commit content is matched against.
pub(crate) fn applied_changes(
    views: &Views,
    paths: &BTreeSet<String>,
) -> Result<Vec<(FileEdit, Change)>, ViewError> {
    let mut out = Vec::new();
    for e in edits_of(views, paths)?.into_iter().filter(|e| !e.failed) {
        if let Some(c) = change_of(views, &e)? {
            out.push((e, c));
        }
    }
    Ok(out)
}

/// A prompt, as an edit's reason.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Prompt {
    pub(crate) seq: Seq,
    pub(crate) ts_ms: i64,
    pub(crate) text: String,
}

/// The person's prompts of each session asked about, read once from the texts view.
#[derive(Default)]
pub(crate) struct Prompts {
    by_session: BTreeMap<SessionId, Vec<Prompt>>,
}

impl Prompts {
    /// The prompt the event at `seq` of `session` answered: the person's last prompt before it
    /// in that session.
    pub(crate) fn answered_by(
        &mut self,
        views: &Views,
        session: &SessionId,
        seq: Seq,
    ) -> Result<Option<Prompt>, ViewError> {
        if !self.by_session.contains_key(session) {
            let mut prefix = session.as_str().as_bytes().to_vec();
            prefix.push(0);
            let mut prompts = Vec::new();
            for row in views.tables.scan(Table::Texts, &prefix) {
                let (key, value) = row?;
                let Some(id) = crate::ledger::decode_event_key(&key) else {
                    continue;
                };
                let Ok(text) = serde_json::from_slice::<TextRow>(&value) else {
                    continue;
                };
                if text.kind == TextKind::User {
                    prompts.push(Prompt {
                        seq: id.seq,
                        ts_ms: text.ts_ms,
                        text: text.text,
                    });
                }
            }
            self.by_session.insert(session.clone(), prompts);
        }
        let prompts = &self.by_session[session];
        let before = prompts.partition_point(|p| p.seq < seq);
        Ok(before.checked_sub(1).map(|i| prompts[i].clone()))
    }
}

/// A store written for the tests of the lookups: events and their change blobs, with the
/// views caught up, reopened as a one-shot read would open them.
#[cfg(test)]
pub(crate) mod fixture {
    use std::time::Duration;

    use crate::ledger::{Access, Ledger, Mode, WriteSet};
    use crate::views::{ModelSlot, Views};
    use crate::vocab::change::Change;
    use crate::vocab::event::{Envelope, Event, Seq, SessionId, TouchOp};

    pub(crate) struct Store {
        pub(crate) dir: tempfile::TempDir,
    }

    fn ledger(dir: &std::path::Path, mode: Mode) -> Ledger {
        let access = Access {
            mode,
            wait: Duration::from_secs(5),
            who: "test",
            on_wait: &mut || {},
        };
        Ledger::open(dir, access).unwrap()
    }

    fn views(ledger: &Ledger) -> Views {
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        Views::open(ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap()
    }

    /// A file touch of `path` that wrote `change` (stored, unless `stored` is false).
    pub(crate) fn touch(path: &str, op: TouchOp, change: &Change) -> Event {
        Event::FileTouch {
            path: path.into(),
            op,
            change: Some(change.to_blob().0),
            failed: false,
            more: Vec::new(),
            restores: None,
            model: None,
        }
    }

    impl Store {
        pub(crate) fn new() -> Store {
            Store {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        /// Record `events` (session, seq, time, event) and the blobs of `changes`, then
        /// catch the views up.
        pub(crate) fn write(&self, events: Vec<(&str, u32, i64, Event)>, changes: &[&Change]) {
            let mut l = ledger(self.dir.path(), Mode::Create);
            let mut set = WriteSet::default();
            for (session, seq, ts, event) in events {
                set.event(
                    Seq(seq),
                    Envelope::new(SessionId(session.into()), ts, event),
                );
            }
            set.blobs.extend(changes.iter().map(|c| c.to_blob()));
            l.write(set).unwrap();
            drop(views(&l));
        }

        /// The store as a read opens it: the ledger locked but not opened, the views current.
        pub(crate) fn open(&self) -> (Ledger, Views) {
            let l = ledger(self.dir.path(), Mode::Existing);
            let v = views(&l);
            (l, v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::{Store, touch};
    use super::*;
    use crate::vocab::change::Replacement;

    fn edit(old: &str, new: &str) -> Change {
        Change::Edit(Replacement {
            old: old.into(),
            new: new.into(),
            replace_all: false,
        })
    }

    fn wanted(abs: &str, rel: Option<&str>, dir: bool) -> Wanted {
        Wanted {
            abs: abs.into(),
            rel: rel.map(str::to_string),
            dir,
        }
    }

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn a_file_is_found_by_its_exact_path_or_its_path_in_any_checkout_from_the_views_alone() {
        let store = Store::new();
        let (a, b, c) = (edit("a\n", "b\n"), edit("b\n", "c\n"), edit("x\n", "y\n"));
        let write = Change::write("one\n");
        store.write(
            vec![
                ("s2", 4, 300, touch("/a/repo/src/x.rs", TouchOp::Edit, &b)),
                ("s1", 2, 100, touch("/a/repo/src/x.rs", TouchOp::Edit, &a)),
                ("s3", 2, 200, touch("/b/other/src/x.rs", TouchOp::Edit, &c)),
                (
                    "s3",
                    3,
                    250,
                    touch("/a/repo/mysrc/x.rs", TouchOp::Write, &write),
                ),
                (
                    "s3",
                    4,
                    260,
                    touch("/a/repo/src/xx.rs", TouchOp::Write, &write),
                ),
            ],
            &[&a, &b, &c, &write],
        );
        let (ledger, views) = store.open();
        let here = wanted("/a/repo/src/x.rs", Some("src/x.rs"), false);
        assert_eq!(
            recorded_paths(&views, &here).unwrap(),
            set(&["/a/repo/src/x.rs"])
        );
        let elsewhere = wanted("/c/new/src/x.rs", Some("src/x.rs"), false);
        assert_eq!(
            recorded_paths(&views, &elsewhere).unwrap(),
            set(&["/a/repo/src/x.rs", "/b/other/src/x.rs"]),
            "a tail matches at a path boundary only: mysrc/x.rs is another file"
        );
        let dir = wanted("/a/repo/src", Some("src"), true);
        assert_eq!(
            recorded_paths(&views, &dir).unwrap(),
            set(&["/a/repo/src/x.rs", "/a/repo/src/xx.rs"])
        );
        let other_dir = wanted("/c/new/src", Some("src"), true);
        assert_eq!(
            recorded_paths(&views, &other_dir).unwrap(),
            set(&["/a/repo/src/x.rs", "/a/repo/src/xx.rs", "/b/other/src/x.rs"])
        );
        assert!(
            recorded_paths(&views, &wanted("/c/new/none.rs", None, false))
                .unwrap()
                .is_empty()
        );

        let edits = edits_of(&views, &set(&["/a/repo/src/x.rs", "/b/other/src/x.rs"])).unwrap();
        let order: Vec<(&str, u32, i64)> = edits
            .iter()
            .map(|e| (e.session.as_str(), e.seq.0, e.ts_ms))
            .collect();
        assert_eq!(
            order,
            vec![("s1", 2, 100), ("s3", 2, 200), ("s2", 4, 300)],
            "ledger order: by time"
        );
        let changes: Vec<Option<Change>> = edits
            .iter()
            .map(|e| change_of(&views, e).unwrap())
            .collect();
        assert_eq!(changes, vec![Some(a), Some(c), Some(b)]);
        assert!(!ledger.is_open(), "the lookups opened the ledger");
    }

    fn meta(cwd: &str) -> crate::vocab::event::Event {
        crate::vocab::event::Event::SessionMeta {
            cwd: cwd.into(),
            branch: None,
            agent: None,
            version: None,
            parent: None,
            subagent: None,
        }
    }

    #[test]
    fn a_relative_path_is_matched_under_each_sessions_root_directories_included() {
        let store = Store::new();
        let (a, b, c) = (edit("a\n", "b\n"), edit("b\n", "c\n"), edit("x\n", "y\n"));
        store.write(
            vec![
                ("s1", 1, 100, meta("/b/other/")),
                (
                    "s1",
                    2,
                    110,
                    touch("/b/other/lib/live/page.ex", TouchOp::Edit, &a),
                ),
                (
                    "s1",
                    3,
                    120,
                    touch("/b/other/lib/live/nav.ex", TouchOp::Edit, &b),
                ),
                // Another project with a `lib/live` of its own, deeper than its root.
                ("s2", 1, 200, meta("/x")),
                (
                    "s2",
                    2,
                    210,
                    touch("/x/deps/y/lib/live/z.ex", TouchOp::Edit, &c),
                ),
            ],
            &[&a, &b, &c],
        );
        let (_ledger, views) = store.open();
        // A directory not on this disk: what lies under it counts.
        let live = wanted("/c/new/lib/live", Some("lib/live"), true);
        assert_eq!(
            recorded_paths(&views, &live).unwrap(),
            set(&["/b/other/lib/live/nav.ex", "/b/other/lib/live/page.ex"]),
            "a session's root wins over a tail inside another project"
        );
        let page = wanted("/c/new/lib/live/page.ex", Some("lib/live/page.ex"), true);
        assert_eq!(
            recorded_paths(&views, &page).unwrap(),
            set(&["/b/other/lib/live/page.ex"])
        );
        // No root holds it: its tail, in any checkout, still finds it.
        let deep = wanted("/c/new/y/lib/live", Some("y/lib/live"), true);
        assert_eq!(
            recorded_paths(&views, &deep).unwrap(),
            set(&["/x/deps/y/lib/live/z.ex"])
        );
    }

    #[test]
    fn an_edit_whose_blob_the_store_lacks_has_no_change() {
        let store = Store::new();
        let lost = edit("p\n", "q\n");
        store.write(
            vec![("s1", 2, 100, touch("/r/f.rs", TouchOp::Edit, &lost))],
            &[],
        );
        let (_ledger, views) = store.open();
        let edits = edits_of(&views, &set(&["/r/f.rs"])).unwrap();
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].change, Some(lost.to_blob().0));
        assert_eq!(change_of(&views, &edits[0]).unwrap(), None);
    }
}
