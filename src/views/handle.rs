//! Session handles: the shortest prefix of a session's id, eight characters at least, that
//! names it among the recorded sessions, the way jj and git abbreviate change and commit ids.
//!
//! The views hand them out as a value, [`Handles`], made from their sessions table
//! ([`Handles::new`]) and passed to whatever prints one. Each handle costs two key seeks in
//! that table (the sessions before and after the id, in id order), never a scan, and is
//! remembered by the value for as long as it lives. A command that closes its views before it
//! prints (so a pager never holds the store) works its handles out first and keeps them
//! ([`Handles::keep`]); one that holds every recorded id makes them from the list
//! ([`Handles::listed`]). With no views at all (a hook's few words) a handle is the first
//! eight characters, or what a process that had them wrote down ([`read_back`]). [`pick`]
//! goes the other way: the session a handle (or any prefix) names.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Bound;

use fjall::Keyspace;

use crate::views::tables::{Table, Tables, tkey};
use crate::vocab::event::SessionId;

/// The fewest characters a handle shows, however few sessions there are.
pub(crate) const MIN_LEN: usize = 8;

/// The handles of the recorded sessions, worked out as they are asked for. It borrows the
/// views it was made from, so it cannot outlive them: [`Handles::keep`] turns it into one
/// that holds only the handles already worked out.
pub(crate) struct Handles<'v> {
    /// Where a handle not worked out yet is sought: the open views' sessions table. `None`:
    /// the views are closed (or were never open), and such a handle is [`MIN_LEN`] long.
    table: Option<&'v Keyspace>,
    /// The handle length of every id (or subagent's parent) worked out so far.
    lens: RefCell<HashMap<String, usize>>,
}

impl<'v> Handles<'v> {
    /// The handles of the sessions `tables` (an open views' tables) record.
    pub(crate) fn new(tables: &'v Tables) -> Handles<'v> {
        Handles {
            table: Some(&tables.ks),
            lens: RefCell::default(),
        }
    }

    /// `id`'s handle: the shortest prefix, eight characters at least, that no other recorded
    /// session shares, and for a Claude subagent (`<parent>/agent-<id>`) its parent's handle,
    /// a slash and the agent's id (`3f6c2a9e/a7c19e2`), which is unique where the parent's
    /// alone would name the parent. See the module and [`pick`].
    pub(crate) fn of(&self, id: &SessionId) -> String {
        match id.subagent() {
            Some((parent, agent)) => {
                format!("{}/{agent}", first_chars(parent, self.len_of(parent)))
            }
            None => first_chars(id.as_str(), self.len_of(id.as_str())).to_string(),
        }
    }

    /// Work out the handles of `ids` now, while the views are open, and keep them (and every
    /// one worked out before) for printing after the views close.
    pub(crate) fn keep<'a>(self, ids: impl IntoIterator<Item = &'a SessionId>) -> Handles<'static> {
        for id in ids {
            self.len_of(top_of(id));
        }
        Handles {
            table: None,
            lens: self.lens,
        }
    }

    /// How many characters of `top` (a session's id, or a subagent's parent's) tell it apart
    /// from every other recorded session.
    fn len_of(&self, top: &str) -> usize {
        if let Some(n) = self.lens.borrow().get(top).copied() {
            return n;
        }
        // A table that cannot be read leaves the handle at its least: it still reads, as the
        // first eight characters always did.
        let Some(Ok((before, after))) = self
            .table
            .map(|table| neighbours(&SessionsTable(table), top))
        else {
            return MIN_LEN;
        };
        let n = handle_len(top, before.as_deref(), after.as_deref());
        self.lens.borrow_mut().insert(top.to_string(), n);
        n
    }
}

impl Handles<'static> {
    /// Handles with no views to seek in: each is its id's first [`MIN_LEN`] characters.
    pub(crate) fn without_views() -> Handles<'static> {
        Handles {
            table: None,
            lens: RefCell::default(),
        }
    }

    /// The handles of `all`, every recorded session (as `peat sessions` holds them): worked
    /// out from the list itself, without a seek per session.
    pub(crate) fn listed<'a>(all: impl IntoIterator<Item = &'a SessionId>) -> Handles<'static> {
        let mut sorted: Vec<&str> = all.into_iter().map(SessionId::as_str).collect();
        sorted.sort_unstable();
        let list = SortedIds(&sorted);
        let mut lens = HashMap::new();
        for id in &sorted {
            let top = top_of_str(id);
            let Ok((before, after)) = neighbours(&list, top);
            lens.insert(top.to_string(), handle_len(top, before, after));
        }
        Handles {
            table: None,
            lens: RefCell::new(lens),
        }
    }
}

/// The handle of the session `id` (a top-level session, not a subagent) as `written` by a
/// process that had the views open (the closings file SessionStart reads): taken when it is
/// a prefix of the id as long as a handle is, else the id's first [`MIN_LEN`] characters.
pub(crate) fn read_back(id: &SessionId, written: &str) -> String {
    let handles = Handles::without_views();
    if id.as_str().starts_with(written) && written.len() >= MIN_LEN {
        handles
            .lens
            .borrow_mut()
            .insert(top_of(id).to_string(), written.len());
    }
    handles.of(id)
}

/// The part of `id` its handle abbreviates: its own id, or a subagent's parent's.
fn top_of(id: &SessionId) -> &str {
    top_of_str(id.as_str())
}

fn top_of_str(id: &str) -> &str {
    id.split_once('/').map_or(id, |(parent, _)| parent)
}

/// The recorded session ids in id order, wherever they are held.
trait Ids {
    type Id: AsRef<str>;
    type Error;
    /// The last id before `id`.
    fn before(&self, id: &str) -> Result<Option<Self::Id>, Self::Error>;
    /// The first id past `from`.
    fn after(&self, from: Bound<&str>) -> Result<Option<Self::Id>, Self::Error>;
}

/// The views' sessions table: a seek for each question.
struct SessionsTable<'a>(&'a Keyspace);

impl Ids for SessionsTable<'_> {
    type Id = String;
    type Error = fjall::Error;

    fn before(&self, id: &str) -> Result<Option<String>, fjall::Error> {
        let start = tkey(Table::Sessions, b"");
        let at = tkey(Table::Sessions, id.as_bytes());
        match self.0.range(start..at).next_back() {
            Some(kv) => Ok(Some(table_id(kv.key()?))),
            None => Ok(None),
        }
    }

    fn after(&self, from: Bound<&str>) -> Result<Option<String>, fjall::Error> {
        let key = |id: &str| tkey(Table::Sessions, id.as_bytes());
        let from = match from {
            Bound::Included(id) => Bound::Included(key(id)),
            Bound::Excluded(id) => Bound::Excluded(key(id)),
            Bound::Unbounded => Bound::Included(key("")),
        };
        let end = Bound::Excluded(vec![Table::Sessions as u8 + 1]);
        match self.0.range::<Vec<u8>, _>((from, end)).next() {
            Some(kv) => Ok(Some(table_id(kv.key()?))),
            None => Ok(None),
        }
    }
}

fn table_id(key: fjall::UserKey) -> String {
    String::from_utf8_lossy(&key[1..]).into_owned()
}

/// Every recorded id, sorted, in memory.
struct SortedIds<'a>(&'a [&'a str]);

impl<'a> Ids for SortedIds<'a> {
    type Id = &'a str;
    type Error = std::convert::Infallible;

    fn before(&self, id: &str) -> Result<Option<&'a str>, Self::Error> {
        let i = self.0.partition_point(|s| *s < id);
        Ok(i.checked_sub(1).map(|i| self.0[i]))
    }

    fn after(&self, from: Bound<&str>) -> Result<Option<&'a str>, Self::Error> {
        let i = match from {
            Bound::Included(id) => self.0.partition_point(|s| *s < id),
            Bound::Excluded(id) => self.0.partition_point(|s| *s <= id),
            Bound::Unbounded => 0,
        };
        Ok(self.0.get(i).copied())
    }
}

/// The ids just before and just after one.
type Around<Id> = (Option<Id>, Option<Id>);

/// The recorded ids just before and just after `top` in id order, leaving out `top` itself
/// and its own subagents (`top/…`), which a handle never has to be told apart from (a
/// prefix names the parent before its subagents: see [`pick`]).
fn neighbours<I: Ids>(ids: &I, top: &str) -> Result<Around<I::Id>, I::Error> {
    let before = ids.before(top)?;
    let mut after = ids.after(Bound::Excluded(top))?;
    let own = |a: &I::Id| {
        a.as_ref()
            .strip_prefix(top)
            .is_some_and(|r| r.starts_with('/'))
    };
    if after.as_ref().is_some_and(own) {
        // Past the subagents: '0' is the byte after '/'.
        after = ids.after(Bound::Included(&format!("{top}0")))?;
    }
    Ok((before, after))
}

/// The characters of `top` its handle shows: one more than it shares with either
/// neighbour, [`MIN_LEN`] at least, the whole id at most.
pub(crate) fn handle_len(top: &str, before: Option<&str>, after: Option<&str>) -> usize {
    let shared = |other: Option<&str>| {
        other.map_or(0, |o| {
            top.chars()
                .zip(o.chars())
                .take_while(|(a, b)| a == b)
                .count()
        })
    };
    (shared(before).max(shared(after)) + 1)
        .max(MIN_LEN)
        .min(top.chars().count().max(MIN_LEN))
}

/// The first `n` characters of `s`.
fn first_chars(s: &str, n: usize) -> &str {
    let end = s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
    &s[..end]
}

/// Why a session prefix did not name one session.
#[derive(Debug, PartialEq)]
pub(crate) enum NoSession {
    None,
    Ambiguous(Vec<SessionId>),
}

/// The session `prefix` names: an exact id, else the one id that starts with it. A parent
/// session wins over its own subagents (`<parent>/agent-…`).
pub(crate) fn resolve_prefix(
    ledger: &crate::ledger::Ledger,
    prefix: &str,
) -> Result<Result<SessionId, NoSession>, crate::ledger::LedgerError> {
    let all = ledger.sessions()?;
    Ok(pick(all, prefix))
}

/// The session `prefix` names among `all` (the sessions view's ids), by the same rules.
/// A prefix with a slash names subagents: `3f6c2a9e/a7c` is every subagent whose parent
/// starts with `3f6c2a9e` and whose agent id (with or without `agent-`) starts with `a7c`,
/// which is how [`Handles::of`] writes a subagent's handle.
pub(crate) fn pick(all: Vec<SessionId>, prefix: &str) -> Result<SessionId, NoSession> {
    if let Some(exact) = all.iter().find(|s| s.as_str() == prefix) {
        return Ok(exact.clone());
    }
    let matching: Vec<SessionId> = all
        .into_iter()
        .filter(|s| matches_prefix(s, prefix))
        .collect();
    let top: Vec<&SessionId> = matching
        .iter()
        .filter(|s| !s.as_str().contains('/'))
        .collect();
    match (top.as_slice(), matching.as_slice()) {
        ([one], _) => Ok((*one).clone()),
        ([], [one]) => Ok(one.clone()),
        (_, []) => Err(NoSession::None),
        _ => Err(NoSession::Ambiguous(matching)),
    }
}

fn matches_prefix(id: &SessionId, prefix: &str) -> bool {
    match (prefix.split_once('/'), id.as_str().split_once('/')) {
        (Some((want_parent, want_child)), Some((parent, child))) => {
            parent.starts_with(want_parent)
                && (child.starts_with(want_child)
                    || child
                        .strip_prefix("agent-")
                        .is_some_and(|c| c.starts_with(want_child)))
        }
        (Some(_), None) => false,
        (None, _) => id.as_str().starts_with(prefix),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subagent_handle_names_its_parent_and_its_agent() {
        let handles = Handles::without_views();
        let top = SessionId("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b".into());
        assert_eq!(handles.of(&top), "3f6c2a9e");
        assert_eq!(top.subagent(), None);
        let sub = SessionId("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/agent-a7c19e2".into());
        assert_eq!(handles.of(&sub), "3f6c2a9e/a7c19e2");
        let compactor =
            SessionId("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/agent-acompact-5d1e0f".into());
        assert_eq!(handles.of(&compactor), "3f6c2a9e/acompact-5d1e0f");
        assert_eq!(handles.of(&SessionId("abc".into())), "abc");
    }

    #[test]
    fn a_handle_written_down_is_read_back_only_when_it_is_one() {
        let id = SessionId("3f6c2a9e8d-41".into());
        assert_eq!(read_back(&id, "3f6c2a9e8d"), "3f6c2a9e8d");
        assert_eq!(read_back(&id, "3f6c2a9e"), "3f6c2a9e");
        // Not a prefix of the id, or shorter than any handle: its first eight characters.
        assert_eq!(read_back(&id, "40000000"), "3f6c2a9e");
        assert_eq!(read_back(&id, "3f6c"), "3f6c2a9e");
        assert_eq!(read_back(&SessionId("abc".into()), "abc"), "abc");
    }

    #[test]
    fn a_handle_grows_past_what_its_neighbours_share() {
        let id = "3f6c2a9e8d-41";
        assert_eq!(handle_len(id, None, None), 8);
        assert_eq!(handle_len(id, Some("0000"), Some("3f6c2b")), 8);
        assert_eq!(handle_len(id, Some("3f6c2a9e8c"), None), 10);
        assert_eq!(handle_len(id, None, Some("3f6c2a9e8d-5")), 12);
        // An id another id begins with is shown whole.
        assert_eq!(handle_len("3f6c2a9e8d", None, Some("3f6c2a9e8d-5")), 10);
        assert_eq!(
            handle_len("abc", None, Some("abd")),
            8,
            "short ids stay whole"
        );
    }

    #[test]
    fn a_parent_is_told_apart_from_other_sessions_not_from_its_subagents() {
        let ids = ["3f6c2a9e00", "3f6c2a9e00/agent-x", "3f6c2a9e01", "3f6c2a9f"];
        let list = SortedIds(&ids);
        assert_eq!(
            neighbours(&list, "3f6c2a9e00"),
            Ok((None, Some("3f6c2a9e01")))
        );
        assert_eq!(
            neighbours(&list, "3f6c2a9e01"),
            Ok((Some("3f6c2a9e00/agent-x"), Some("3f6c2a9f")))
        );
    }

    const RECORDED: [&str; 7] = [
        "3f6c2a9e00",
        "3f6c2a9e00/agent-x",
        "3f6c2a9e01",
        "3f6c2a9e01-x",
        "3f6c2a9f",
        "3f6c2a9f0/agent-y",
        "40",
    ];

    /// Views over a ledger holding a few events of each session `ids` names.
    fn views_of(dir: &std::path::Path, ids: &[&str]) -> crate::views::Views {
        use crate::vocab::event::{Envelope, Event, Seq};
        let mut ledger = crate::ledger::open_for_test(dir);
        let mut set = crate::ledger::WriteSet::default();
        for id in ids {
            for seq in [0, 7] {
                let said = Event::Said { text: "x".into() };
                set.event(Seq(seq), Envelope::new(SessionId(id.to_string()), 1, said));
            }
        }
        ledger.write(set).unwrap();
        let mut model = crate::views::ModelSlot::new(None, || unreachable!("no model"));
        crate::views::Views::open(&ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {})
            .unwrap()
    }

    #[test]
    fn handles_kept_from_the_views_still_print_once_they_close() {
        let dir = tempfile::tempdir().unwrap();
        let views = views_of(dir.path(), &RECORDED);
        let ids: Vec<SessionId> = RECORDED.iter().map(|s| SessionId(s.to_string())).collect();
        let open = Handles::new(&views.tables);
        let seen: Vec<String> = ids.iter().map(|id| open.of(id)).collect();
        assert_eq!(
            seen,
            [
                "3f6c2a9e00",
                "3f6c2a9e00/x",
                "3f6c2a9e01",
                "3f6c2a9e01-",
                "3f6c2a9f",
                "3f6c2a9f0/y",
                "40"
            ]
        );
        let kept = Handles::new(&views.tables).keep(&ids[..2]);
        drop(views);
        assert_eq!(kept.of(&ids[0]), "3f6c2a9e00");
        assert_eq!(kept.of(&ids[1]), "3f6c2a9e00/x");
        assert_eq!(
            kept.of(&ids[2]),
            "3f6c2a9e",
            "not kept: its first eight characters"
        );
        let listed = Handles::listed(&ids);
        let from_list: Vec<String> = ids.iter().map(|id| listed.of(id)).collect();
        assert_eq!(from_list, seen, "the list and the views agree");
    }

    #[test]
    fn the_views_sessions_table_and_the_list_agree_on_every_neighbour() {
        let ids = RECORDED;
        let dir = tempfile::tempdir().unwrap();
        let views = views_of(dir.path(), &ids);
        let list = SortedIds(&ids);
        for top in [
            "3f6c2a9e00",
            "3f6c2a9e01",
            "3f6c2a9f",
            "3f6c2a9f0",
            "40",
            "0",
            "z",
        ] {
            let (b, a) = neighbours(&SessionsTable(&views.tables.ks), top).unwrap();
            let want = neighbours(&list, top).unwrap();
            assert_eq!((b.as_deref(), a.as_deref()), want, "{top}");
        }
    }

    proptest::proptest! {
        /// Ids of one length (as uuids and Codex thread ids are) over two letters, so many
        /// share long prefixes; some with subagents.
        #[test]
        fn every_handle_names_its_session_back(
            tops in proptest::collection::btree_set("[ab]{12}", 1..40),
            agents in proptest::collection::vec(0usize..40, 0..10),
        ) {
            let tops: Vec<String> = tops.into_iter().collect();
            let mut all: Vec<SessionId> = tops.iter().map(|t| SessionId(t.clone())).collect();
            for (n, i) in agents.iter().enumerate() {
                all.push(SessionId(format!("{}/agent-a{n:05}", tops[i % tops.len()])));
            }
            all.sort();
            all.dedup();
            let handles = Handles::listed(&all);
            for id in &all {
                let handle = handles.of(id);
                proptest::prop_assert!(top_of(id).len() <= MIN_LEN
                    || handle.split('/').next().unwrap().len() >= MIN_LEN);
                proptest::prop_assert_eq!(
                    pick(all.clone(), &handle),
                    Ok(id.clone()),
                    "{} ({})", handle, id
                );
            }
        }
    }
}

#[cfg(test)]
mod resolve_tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<SessionId> {
        v.iter().map(|s| SessionId(s.to_string())).collect()
    }

    #[test]
    fn a_prefix_names_one_session_or_says_why_not() {
        let all = ids(&["2d98aa", "2d98aa/agent-1", "3f00", "3f01"]);
        assert_eq!(pick(all.clone(), "2d98"), Ok(SessionId("2d98aa".into())));
        assert_eq!(
            pick(all.clone(), "2d98aa/agent-1"),
            Ok(SessionId("2d98aa/agent-1".into()))
        );
        assert!(matches!(pick(all.clone(), "3f0"), Err(NoSession::Ambiguous(v)) if v.len() == 2));
        assert_eq!(pick(all, "zz"), Err(NoSession::None));
    }

    #[test]
    fn a_subagent_is_named_by_its_short_handle() {
        let parent = "3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b";
        let all = ids(&[
            parent,
            &format!("{parent}/agent-a7c19e2"),
            &format!("{parent}/agent-acompact-5d1e0f"),
            "3f6c2a9f-0000-4000-8000-000000000000/agent-a7c19e2",
        ]);
        let handles = Handles::without_views();
        for id in &all {
            assert_eq!(pick(all.clone(), &handles.of(id)), Ok(id.clone()), "{id}");
        }
        assert_eq!(
            pick(all.clone(), "3f6c2a9e/agent-a7c"),
            Ok(all[1].clone()),
            "the agent- prefix may be typed"
        );
        assert_eq!(
            pick(all.clone(), &format!("{parent}/agent-acompact")),
            Ok(all[2].clone())
        );
        assert!(
            matches!(pick(all.clone(), "3f6c2a9/a7c"), Err(NoSession::Ambiguous(v)) if v.len() == 2)
        );
        assert_eq!(pick(all, "3f6c2a9e/zz"), Err(NoSession::None));
    }
}
