//! Session handles: the shortest prefix of a session's id, eight characters at least, that
//! names it among the recorded sessions, the way jj and git abbreviate change and commit ids.
//!
//! Handles are printed from deep inside every renderer (listings, the brief, search hits,
//! logs), none of which holds the views. So the open views register their sessions table
//! here for the thread that opened them (see [`install`]), and [`SessionId::short`] asks it.
//! Each handle costs two key seeks in that table (the sessions before and after the id, in
//! id order), never a scan, and is remembered for the rest of the process. A command that
//! closes its views before it prints (so a pager never holds the store) works its handles
//! out first with [`learn`]. With no views open (a hook's few words), a handle is the first
//! eight characters.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ops::Bound;

use fjall::Keyspace;

use crate::event::SessionId;
use crate::views::tables::{Table, tkey};

/// The fewest characters a handle shows, however few sessions there are.
pub const MIN_LEN: usize = 8;

thread_local! {
    /// The sessions table of every views open on this thread, oldest first, by token. The
    /// oldest answers: a scratch copy folded for `asof` is opened after the store's own
    /// views, and a handle must resolve against the store.
    static TABLES: RefCell<Vec<(u64, Keyspace)>> = const { RefCell::new(Vec::new()) };
    static NEXT_TOKEN: Cell<u64> = const { Cell::new(0) };
    /// The handle length of every id (or subagent's parent) worked out so far: it outlives
    /// the views, so a handle learnt before they closed still prints.
    static LENS: RefCell<HashMap<String, usize>> = RefCell::new(HashMap::new());
}

/// Registered while it lives: dropping it (with the views holding it) unregisters the table.
#[derive(Debug)]
pub struct Installed {
    token: u64,
}

/// Register `tables` (a views generation's keyspace) as where this thread's handles are
/// worked out, until the returned guard is dropped.
pub fn install(tables: &Keyspace) -> Installed {
    let token = NEXT_TOKEN.with(|n| {
        let t = n.get();
        n.set(t + 1);
        t
    });
    TABLES.with(|t| t.borrow_mut().push((token, tables.clone())));
    Installed { token }
}

impl Drop for Installed {
    fn drop(&mut self) {
        let token = self.token;
        // A thread being torn down has no books left to keep.
        let _ = TABLES.try_with(|t| t.borrow_mut().retain(|(own, _)| *own != token));
    }
}

/// `id`'s handle: see the module. A subagent (`<parent>/agent-<id>`) shows its parent's
/// handle, a slash and the agent's id (`3f6c2a9e/a7c19e2`).
pub fn of(id: &SessionId) -> String {
    match id.subagent() {
        Some((parent, agent)) => format!("{}/{agent}", first_chars(parent, len_of(parent))),
        None => first_chars(id.as_str(), len_of(id.as_str())).to_string(),
    }
}

/// Work out the handles of `ids` now, while the views are open, for printing after they
/// close.
pub fn learn<'a>(ids: impl IntoIterator<Item = &'a SessionId>) {
    for id in ids {
        let top = id.subagent().map_or(id.as_str(), |(parent, _)| parent);
        len_of(top);
    }
}

/// How many characters of `top` (a session's id, or a subagent's parent's) tell it apart
/// from every other recorded session.
fn len_of(top: &str) -> usize {
    if let Some(n) = LENS.with(|l| l.borrow().get(top).copied()) {
        return n;
    }
    // A table that cannot be read leaves the handle at its least: it still reads, as the
    // first eight characters always did.
    let Some(Ok((before, after))) = TABLES.with(|t| {
        t.borrow()
            .first()
            .map(|(_, tables)| neighbours(tables, top))
    }) else {
        return MIN_LEN;
    };
    let n = handle_len(top, before.as_deref(), after.as_deref());
    LENS.with(|l| l.borrow_mut().insert(top.to_string(), n));
    n
}

/// The recorded ids just before and just after `top` in id order, leaving out `top` itself
/// and its own subagents (`top/…`), which a handle never has to be told apart from (a
/// prefix names the parent before its subagents: see [`crate::session::pick`]).
fn neighbours(
    tables: &Keyspace,
    top: &str,
) -> Result<(Option<String>, Option<String>), fjall::Error> {
    let start = tkey(Table::Sessions, b"");
    let end = vec![Table::Sessions as u8 + 1];
    let at = tkey(Table::Sessions, top.as_bytes());
    let id_of = |key: fjall::UserKey| String::from_utf8_lossy(&key[1..]).into_owned();
    let before = match tables.range(start..at.clone()).next_back() {
        Some(kv) => Some(id_of(kv.key()?)),
        None => None,
    };
    let mut after = match tables
        .range::<Vec<u8>, _>((Bound::Excluded(at), Bound::Excluded(end.clone())))
        .next()
    {
        Some(kv) => Some(id_of(kv.key()?)),
        None => None,
    };
    if after
        .as_deref()
        .is_some_and(|a| a.strip_prefix(top).is_some_and(|r| r.starts_with('/')))
    {
        // Past the subagents: '0' is the byte after '/'.
        let past = tkey(Table::Sessions, format!("{top}0").as_bytes());
        after = match tables.range(past..end).next() {
            Some(kv) => Some(id_of(kv.key()?)),
            None => None,
        };
    }
    Ok((before, after))
}

/// The characters of `top` its handle shows: one more than it shares with either
/// neighbour, [`MIN_LEN`] at least, the whole id at most.
pub fn handle_len(top: &str, before: Option<&str>, after: Option<&str>) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
