//! What bare `peat THING` means: the reading chosen by the shape of the words.
//!
//! The readings are tried in this order; the first that answers wins. A shape that matches
//! but whose lookup finds nothing falls through to the next reading (and says so), so a
//! word is never refused when another reading would answer. A word whose shape leaves no
//! doubt (a path here, `FILE:LINE`, a full commit hash) is never searched for: when no
//! reading answers it, the answer is that nothing was found ([`Reading::Missed`]). Only a
//! word of no such shape is searched, and the search says what was tried first.
//!
//! 1. **file**: one word naming a file or directory here, or one shaped like a path
//!    (optionally `path:LINE`), that a recorded session touched, under its name now or an
//!    earlier one → the sessions that edited it.
//! 2. **window**: one word the window grammar accepts (`2026-08-14`, `w33`, `2026-07`,
//!    `q3`, `2026`, `a..b`) ending in 1970 or later → the zoom of that span.
//!    Windows win over session prefixes: `2026-08-14` is hex and dashes too.
//! 3. **session**: a session id prefix (4+ characters of `0-9a-f-` with a digit, or 8+
//!    without) optionally followed by a seq, that names one session → that session, or that
//!    one event. A prefix several sessions share is read as a commit if it is one, else it
//!    lists the sessions it matches.
//! 4. **commit**: one word of 7-40 hex digits (or, in a jj repository, an 8+ letter change
//!    id) that the repository resolves or a recorded commit starts with → the sessions that
//!    made it.
//! 5. **subject**: the words, joined by spaces, are exactly a subject's name → its evidence
//!    trail. (Before beads: an observation filed under a bead id reads as its trail.)
//! 6. **missed**: a path here, a `FILE:LINE` or a full commit hash nothing above answered →
//!    nothing was found (exit 1), with what to try.
//! 7. **bead**: one word shaped like a bead id (`peat-8nj`, `word-123`, `word-12.3`) →
//!    every text that mentions it.
//! 8. **search**: anything else → hybrid keyword and semantic search.

use serde::Serialize;
use std::path::PathBuf;

use crate::views::handle::Handles;
use crate::vocab::event::{Seq, SessionId};
use crate::vocab::window::Window;

/// The reading the words were given.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Reading {
    /// An existing file or directory; `shown` is the word as typed (without `:LINE`).
    File {
        path: PathBuf,
        shown: String,
        line: Option<u32>,
    },
    Window(Window),
    /// One session (and perhaps one event of it).
    Session {
        id: SessionId,
        prefix: String,
        seq: Option<Seq>,
    },
    /// A prefix several sessions share, when nothing else answered.
    Sessions {
        prefix: String,
        seq: Option<Seq>,
        ids: Vec<SessionId>,
    },
    Commit(CommitFound),
    Subject(String),
    /// A shape that leaves no doubt, whose lookup found nothing.
    Missed(Miss),
    Bead(String),
    Search(String),
}

/// A commit a word named: by the repository, by the record, or both.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct CommitFound {
    /// The word as typed.
    pub(crate) rev: String,
    /// The full hash, when the repository resolved it.
    pub(crate) hash: Option<String>,
    /// Its message's first line, when the repository resolved it.
    pub(crate) subject: Option<String>,
    /// When it was committed (ms), when the repository said.
    pub(crate) ts_ms: Option<i64>,
    /// Recorded sessions made a commit this word (or its full hash) names.
    pub(crate) recorded: bool,
}

/// What a session prefix matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SessionMatch {
    None,
    One(SessionId),
    Many(Vec<SessionId>),
}

/// A shape that matched but whose lookup found nothing: said on stderr, kept in `--json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub(crate) enum Passed {
    /// A path no recorded session touched: one here (`here`), or one only shaped like a path.
    File {
        path: String,
        here: bool,
        line: Option<u32>,
    },
    /// A session-shaped prefix that matches no session.
    Session { prefix: String },
    /// A commit-shaped word neither the repository nor the record knows; `full`: a whole
    /// hash, not a prefix.
    Commit { rev: String, full: bool },
    /// Words that are no subject's name.
    Subject { name: String },
}

impl Passed {
    /// One line for stderr: what the shape was and why it did not answer (a subject is
    /// named in the search's header alone: every search tried it).
    pub(crate) fn note(&self) -> Option<String> {
        Some(match self {
            Passed::File { path, .. } => format!("{path}: no recorded session touched it"),
            Passed::Session { prefix } => format!("{prefix}: no session id starts with it"),
            Passed::Commit { rev, .. } => {
                format!("{rev}: not a commit of this repository nor one a session made")
            }
            Passed::Subject { .. } => return None,
        })
    }

    /// The miss, when the shape leaves no doubt what was meant: then finding nothing is the
    /// answer, never a search for the word.
    fn decisive(&self) -> Option<Miss> {
        match self {
            Passed::File { path, here, line } if *here || line.is_some() => Some(Miss::File {
                path: path.clone(),
                here: *here,
            }),
            Passed::Commit { rev, full: true } => Some(Miss::Commit { rev: rev.clone() }),
            _ => None,
        }
    }

    /// What was tried, in a word or two, for the search's header.
    fn tried(&self) -> &'static str {
        match self {
            Passed::File { .. } => "recorded path",
            Passed::Session { .. } => "session id",
            Passed::Commit { .. } => "commit",
            Passed::Subject { .. } => "subject",
        }
    }
}

/// A word whose shape leaves no doubt, that names nothing recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub(crate) enum Miss {
    /// A path here no recorded session touched, or a `FILE:LINE` of a file neither here nor
    /// recorded (`here` false).
    File { path: String, here: bool },
    /// A full commit hash neither the repository nor the record knows.
    Commit { rev: String },
}

impl Miss {
    /// What was not found, and what to try instead.
    pub(crate) fn said(&self) -> (String, String) {
        match self {
            Miss::File { path, here: true } => (
                format!("no recorded session touched {path}"),
                format!(
                    "`peat recall {path}` searches what was said about it; `peat import` captures transcripts not recorded yet."
                ),
            ),
            Miss::File { path, here: false } => (
                format!("no file {path} here, and no recorded session touched one by that name"),
                format!(
                    "Name a file of this checkout, or one a session edited; `peat recall {path}` searches for the words."
                ),
            ),
            Miss::Commit { rev } => (
                format!("{rev} is not a commit of this repository nor one a recorded session made"),
                format!("`peat recall {rev}` searches for the hash in what was recorded."),
            ),
        }
    }
}

/// The reading chosen, and the shapes passed over on the way.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Classified {
    pub(crate) reading: Reading,
    pub(crate) passed: Vec<Passed>,
}

/// The cheap lookups classification needs. Implemented over the real store and repository
/// by the dispatch command, and over tables in tests.
pub(crate) trait Probes {
    type Error;
    /// The file or directory `word` names (relative to the working directory): one here, or
    /// one shaped like a path, which the record may hold.
    fn path(&mut self, word: &str) -> Option<PathBuf>;
    /// Whether `path` (from [`Probes::path`]) is here.
    fn here(&mut self, path: &std::path::Path) -> bool;
    /// Whether a recorded session touched the path `word` names (or, for a directory, a file
    /// under it), under its name now or one it had before a rename. The word as typed: a
    /// relative path is matched under every session's root.
    fn touched(&mut self, word: &str) -> Result<bool, Self::Error>;
    /// `word` read as a window, relative to today.
    fn window(&mut self, word: &str) -> Option<Window>;
    /// The sessions whose id starts with `prefix`.
    fn sessions(&mut self, prefix: &str) -> Result<SessionMatch, Self::Error>;
    /// The commit `word` names in the repository or the record.
    fn commit(&mut self, word: &str) -> Result<Option<CommitFound>, Self::Error>;
    /// Whether `name` is exactly a subject's name.
    fn subject(&mut self, name: &str) -> Result<bool, Self::Error>;
}

/// Choose the reading of `words` (non-empty; the empty case is the brief).
pub(crate) fn classify<P: Probes>(
    words: &[String],
    probes: &mut P,
) -> Result<Classified, P::Error> {
    let mut passed = Vec::new();
    let done = |reading, passed| Ok(Classified { reading, passed });
    let one = match words {
        [w] => Some(w.as_str()),
        _ => None,
    };

    if let Some(word) = one
        && let Some((shown, line)) = file_shape(word, probes)
    {
        let path = probes.path(shown).unwrap_or_default();
        if probes.touched(shown)? {
            let shown = shown.to_string();
            return done(Reading::File { path, shown, line }, passed);
        }
        passed.push(Passed::File {
            here: probes.here(&path),
            path: shown.to_string(),
            line,
        });
    }

    if let Some(word) = one
        && let Some(w) = probes.window(word)
        && plausible(&w)
    {
        return done(Reading::Window(w), passed);
    }

    let mut ambiguous: Option<(String, Option<Seq>, Vec<SessionId>)> = None;
    if let Some((prefix, seq)) = session_shape(words) {
        match probes.sessions(prefix)? {
            SessionMatch::One(id) => {
                let prefix = prefix.to_string();
                return done(Reading::Session { id, prefix, seq }, passed);
            }
            SessionMatch::Many(ids) => ambiguous = Some((prefix.to_string(), seq, ids)),
            SessionMatch::None => passed.push(Passed::Session {
                prefix: prefix.to_string(),
            }),
        }
    }

    if let Some(word) = one
        && (crate::reads::vcs::is_commit_shape(word) || crate::reads::vcs::is_change_shape(word))
    {
        match probes.commit(word)? {
            Some(found) => return done(Reading::Commit(found), passed),
            None => passed.push(Passed::Commit {
                rev: word.to_string(),
                full: word.len() == FULL_HASH,
            }),
        }
    }

    if let Some((prefix, seq, ids)) = ambiguous {
        return done(Reading::Sessions { prefix, seq, ids }, passed);
    }

    let joined = words.join(" ");
    if !joined.trim().is_empty() {
        if probes.subject(&joined)? {
            return done(Reading::Subject(joined), passed);
        }
        passed.push(Passed::Subject {
            name: joined.clone(),
        });
    }

    if let Some(miss) = passed.iter().find_map(Passed::decisive) {
        return done(Reading::Missed(miss), passed);
    }

    if let Some(word) = one
        && is_bead_shape(word)
    {
        return done(Reading::Bead(word.to_string()), passed);
    }

    done(Reading::Search(joined), passed)
}

/// The length of a whole commit hash (SHA-1, as git and jj write it).
const FULL_HASH: usize = 40;

/// `word`, or `path:LINE`, naming a file or directory (one that exists, or one shaped like a
/// path: see [`is_path_shape`]): the path part and the line.
fn file_shape<'a, P: Probes>(word: &'a str, probes: &mut P) -> Option<(&'a str, Option<u32>)> {
    if probes.path(word).is_some() {
        return Some((word, None));
    }
    let (path, line) = word.rsplit_once(':')?;
    let line: u32 = line.parse().ok()?;
    probes.path(path).map(|_| (path, Some(line)))
}

/// Whether a word not on disk reads as a path worth looking up in the record: it has a
/// directory separator, or a name with a short alphabetic extension (`config.yaml`).
pub(crate) fn is_path_shape(word: &str) -> bool {
    // `path:LINE` is read as a path and a line, never as a path with a colon.
    if word.contains(':') || word.contains(char::is_whitespace) {
        return false;
    }
    if word.contains('/') {
        return true;
    }
    match word.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// A window the record could hold: `1042` is searched for, not read as a year.
fn plausible(w: &Window) -> bool {
    w.end.year() >= 1970
}

/// A session prefix (and seq) by shape: one word, or one word and a number.
pub(crate) fn session_shape(words: &[String]) -> Option<(&str, Option<Seq>)> {
    let (prefix, seq) = match words {
        [p] => (p.as_str(), None),
        [p, n] => (p.as_str(), Some(n.parse::<Seq>().ok()?)),
        _ => return None,
    };
    // A subagent's handle: the parent's prefix, a slash, the agent's id (`3f6c2a9e/a7c19e2`).
    let (parent, agent) = match prefix.split_once('/') {
        Some((parent, agent)) => (parent, Some(agent)),
        None => (prefix, None),
    };
    let agent_ok = agent.is_none_or(|a| {
        !a.is_empty()
            && a.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    let hexish = parent
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || b == b'-');
    // Short all-letter hex words are English ("cafe", "decade", "added"): searched for.
    let digit = parent.bytes().any(|b| b.is_ascii_digit());
    let long_enough = parent.len() >= 8 || (parent.len() >= 4 && digit);
    (hexish && long_enough && agent_ok && !parent.starts_with('-')).then_some((prefix, seq))
}

/// A bead (issue) id: `prefix-suffix[.N…]` where the suffix holds a digit, e.g. `peat-8nj`,
/// `word-123`, `word-12.3`.
pub(crate) fn is_bead_shape(word: &str) -> bool {
    let (base, children) = match word.split_once('.') {
        Some((b, rest)) => (b, Some(rest)),
        None => (word, None),
    };
    if let Some(rest) = children
        && !rest
            .split('.')
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        return false;
    }
    let Some((prefix, suffix)) = base.rsplit_once('-') else {
        return false;
    };
    let prefix_ok = prefix
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !prefix.ends_with('-');
    let suffix_ok = (1..=10).contains(&suffix.len())
        && suffix
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        && suffix.bytes().any(|b| b.is_ascii_digit());
    prefix_ok && suffix_ok
}

/// Other subject names close to `name`, the drift guard before a deposit: names that
/// contain it or are contained in it (3+ characters), or within two edits of it, ignoring
/// case. Closest first, at most four. `names` pairs each name with its support.
pub(crate) fn near_names<'a>(
    name: &str,
    names: impl IntoIterator<Item = (&'a str, i64)>,
) -> Vec<(&'a str, i64)> {
    let want = name.to_lowercase();
    let mut near: Vec<(usize, &'a str, i64)> = names
        .into_iter()
        .filter(|(other, _)| *other != name)
        .filter_map(|(other, support)| {
            let o = other.to_lowercase();
            let (short, long) = if o.len() <= want.len() {
                (&o, &want)
            } else {
                (&want, &o)
            };
            let distance = edit_distance(&want, &o);
            let contains = short.chars().count() >= 3 && long.contains(short.as_str());
            (contains || distance <= 2).then_some((distance, other, support))
        })
        .collect();
    near.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then(a.1.cmp(b.1)));
    near.into_iter().take(4).map(|(_, n, s)| (n, s)).collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Whether bare `peat NAME` reads the subject `name` whatever the store holds: a plain
/// word that no earlier reading claims by shape (files aside, which depend on the
/// directory). Otherwise its handle is the explicit `peat subjects "NAME"`.
pub(crate) fn bare_reads_subject(name: &str, today: jiff::civil::Date) -> bool {
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !name.starts_with('-');
    let words = [name.to_string()];
    plain
        && crate::vocab::window::parse(name, today).is_none_or(|w| !plausible(&w))
        && session_shape(&words).is_none()
        && !crate::reads::vcs::is_commit_shape(name)
        && !crate::reads::vcs::is_change_shape(name)
}

impl Reading {
    /// The first line of the answer: which reading was chosen (for a search, after what),
    /// a session named by its handle among `handles`.
    pub(crate) fn header(&self, passed: &[Passed], handles: &Handles) -> String {
        match self {
            Reading::File { shown, line, .. } => match line {
                Some(n) => format!("== file {shown} line {n} =="),
                None => format!("== file {shown} =="),
            },
            Reading::Window(w) => format!("== window {} ==", w.key),
            Reading::Session { id, prefix, seq } => {
                let mut h = format!("== session {}", handles.of(id));
                if let Some(s) = seq {
                    h.push_str(&format!(" event {s}"));
                }
                if prefix != id.as_str() {
                    h.push_str(&format!(" (matched prefix {prefix})"));
                }
                h + " =="
            }
            Reading::Sessions { prefix, ids, .. } => {
                format!("== sessions matching {prefix} ({}) ==", ids.len())
            }
            Reading::Commit(c) => format!("== commit {} ==", c.rev),
            Reading::Subject(s) => format!("== subject {s} =="),
            Reading::Missed(Miss::File { path, .. }) => {
                format!("== file {path}: nothing recorded ==")
            }
            Reading::Missed(Miss::Commit { rev }) => {
                format!("== commit {rev}: nothing recorded ==")
            }
            Reading::Bead(b) => format!("== bead {b} =="),
            Reading::Search(q) => {
                let tried: Vec<&str> = passed.iter().map(Passed::tried).collect();
                match tried.is_empty() {
                    true => format!("== search: {q:?} =="),
                    false => format!("== search: {q:?} (tried first: {}) ==", tried.join(", ")),
                }
            }
        }
    }

    /// The reading for `--json`: `{"kind": …, …}`.
    pub(crate) fn json(&self, passed: &[Passed]) -> serde_json::Value {
        use serde_json::json;
        let mut v = match self {
            Reading::File { path, shown, line } => {
                json!({"kind": "file", "path": path, "shown": shown, "line": line})
            }
            Reading::Window(w) => json!({
                "kind": "window", "key": w.key, "label": w.label,
                "start": w.start.to_string(), "end": w.end.to_string(),
            }),
            Reading::Session { id, prefix, seq } => {
                json!({"kind": "session", "session": id, "prefix": prefix, "seq": seq})
            }
            Reading::Sessions { prefix, seq, ids } => {
                json!({"kind": "sessions", "prefix": prefix, "seq": seq, "sessions": ids})
            }
            Reading::Commit(c) => {
                let mut v = serde_json::to_value(c).unwrap_or_default();
                v["kind"] = json!("commit");
                v
            }
            Reading::Subject(s) => json!({"kind": "subject", "subject": s}),
            Reading::Missed(miss) => {
                let mut v = serde_json::to_value(miss).unwrap_or_default();
                v["kind"] = json!("missed");
                v
            }
            Reading::Bead(b) => json!({"kind": "bead", "bead": b}),
            Reading::Search(q) => json!({"kind": "search", "words": q}),
        };
        v["passed"] = serde_json::to_value(passed).unwrap_or_default();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::event::{HOOK_FINAL_SEQ, OBS_SEQ_BASE};
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// A world of files, sessions, commits and subjects, held in tables.
    #[derive(Default)]
    struct World {
        /// Existing paths, and whether a session touched each.
        files: BTreeMap<String, bool>,
        /// Paths a session touched that are not here.
        gone: Vec<&'static str>,
        sessions: Vec<&'static str>,
        /// Revisions the repository resolves (word → full hash).
        repo: BTreeMap<String, String>,
        /// Hashes recorded sessions made.
        recorded: Vec<&'static str>,
        subjects: BTreeSet<String>,
    }

    impl Probes for World {
        type Error = std::convert::Infallible;
        fn path(&mut self, word: &str) -> Option<PathBuf> {
            (self.files.contains_key(word) || is_path_shape(word))
                .then(|| Path::new("/repo").join(word))
        }
        fn here(&mut self, path: &Path) -> bool {
            let rel = path.strip_prefix("/repo").unwrap().to_str().unwrap();
            self.files.contains_key(rel)
        }
        fn touched(&mut self, word: &str) -> Result<bool, Self::Error> {
            Ok(self.files.get(word).copied().unwrap_or(false) || self.gone.contains(&word))
        }
        fn window(&mut self, word: &str) -> Option<Window> {
            crate::vocab::window::parse(word, jiff::civil::date(2026, 8, 20))
        }
        fn sessions(&mut self, prefix: &str) -> Result<SessionMatch, Self::Error> {
            let all = self.sessions.iter().map(|s| SessionId(s.to_string()));
            Ok(match crate::views::handle::pick(all.collect(), prefix) {
                Ok(id) => SessionMatch::One(id),
                Err(crate::views::handle::NoSession::None) => SessionMatch::None,
                Err(crate::views::handle::NoSession::Ambiguous(m)) => SessionMatch::Many(m),
            })
        }
        fn commit(&mut self, word: &str) -> Result<Option<CommitFound>, Self::Error> {
            let hash = self.repo.get(word).cloned();
            let full = hash.as_deref().unwrap_or(word);
            let recorded = self
                .recorded
                .iter()
                .any(|r| r.starts_with(full) || full.starts_with(r));
            Ok((hash.is_some() || recorded).then(|| CommitFound {
                rev: word.to_string(),
                hash,
                subject: None,
                ts_ms: None,
                recorded,
            }))
        }
        fn subject(&mut self, name: &str) -> Result<bool, Self::Error> {
            Ok(self.subjects.contains(name))
        }
    }

    fn world() -> World {
        let mut w = World::default();
        w.files.insert("src/server.rs".into(), true);
        w.files.insert("src".into(), true);
        w.files.insert("README.md".into(), false);
        w.files.insert("2026-08-14".into(), false);
        w.gone = vec!["src/gone.rs"];
        w.sessions = vec![
            "3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b",
            "3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/agent-a7c19e2",
            "7a1b2c3d-0000-4b7e-9f0a-000000000002",
            "7a1b2c3d-1111-4b7e-9f0a-000000000003",
            "2026aaaa-0000-4000-8000-000000000004",
            "deadbeef-0000-4000-8000-000000000005",
        ];
        w.repo.insert(
            "4be1c0a".into(),
            "4be1c0a9d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7".into(),
        );
        w.repo.insert(
            "7a1b2c3d".into(),
            "7a1b2c3d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b".into(),
        );
        w.recorded = vec!["abc1234", "4be1c0a"];
        w.subjects.insert("staging".into());
        w.subjects.insert("rate limiter".into());
        w.subjects.insert("peat-8nj".into());
        w
    }

    fn read(words: &str) -> Classified {
        let words: Vec<String> = words.split_whitespace().map(String::from).collect();
        match classify(&words, &mut world()) {
            Ok(c) => c,
        }
    }

    /// The dispatch table: each input, the header of the reading chosen.
    #[test]
    fn the_dispatch_table() {
        let table = [
            // 1. files, touched ones only
            ("src/server.rs", "== file src/server.rs =="),
            ("src/server.rs:42", "== file src/server.rs line 42 =="),
            ("src", "== file src =="),
            ("src/gone.rs", "== file src/gone.rs =="),
            // a path here no one touched, or a line of a file: nothing, never a search
            ("README.md", "== file README.md: nothing recorded =="),
            ("README.md:1", "== file README.md: nothing recorded =="),
            ("nowhere.rs:3", "== file nowhere.rs: nothing recorded =="),
            // only shaped like a path: searched, after the record was asked
            (
                "src/nowhere.rs",
                "== search: \"src/nowhere.rs\" (tried first: recorded path, subject) ==",
            ),
            // 2. windows, before session prefixes; implausible years are searched
            ("2026-w33", "== window 2026-w33 =="),
            ("w33", "== window 2026-w33 =="),
            ("2026-07", "== window 2026-07 =="),
            ("q3", "== window 2026-q3 =="),
            ("2026", "== window 2026 =="),
            ("2026-08-14", "== window 2026-08-14 =="),
            (
                "1042",
                "== search: \"1042\" (tried first: session id, subject) ==",
            ),
            // 3. session prefixes, with a seq
            ("3f6c", "== session 3f6c2a9e (matched prefix 3f6c) =="),
            (
                "3f6c 1042",
                "== session 3f6c2a9e event 1042 (matched prefix 3f6c) ==",
            ),
            (
                "3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b",
                "== session 3f6c2a9e ==",
            ),
            (
                "deadbeef",
                "== session deadbeef (matched prefix deadbeef) ==",
            ),
            // a subagent, by the handle listings print for it
            (
                "3f6c2a9e/a7c19e2 12",
                "== session 3f6c2a9e/a7c19e2 event 12 (matched prefix 3f6c2a9e/a7c19e2) ==",
            ),
            (
                "3f6c2a9e/a7c",
                "== session 3f6c2a9e/a7c19e2 (matched prefix 3f6c2a9e/a7c) ==",
            ),
            ("7a1b", "== sessions matching 7a1b (2) =="),
            ("7a1b 5", "== sessions matching 7a1b (2) =="),
            // 4. commits: the repository's, or one a recorded session made
            ("4be1c0a", "== commit 4be1c0a =="),
            ("abc1234", "== commit abc1234 =="),
            ("abc12345", "== commit abc12345 =="),
            // An ambiguous session prefix that is a commit reads as the commit.
            ("7a1b2c3d", "== commit 7a1b2c3d =="),
            ("7a1b2c3d 3", "== sessions matching 7a1b2c3d (2) =="),
            (
                "0123456",
                "== search: \"0123456\" (tried first: session id, commit, subject) ==",
            ),
            // a whole hash nothing knows: nothing, never a search
            (
                "0123456789abcdef0123456789abcdef01234567",
                "== commit 0123456789abcdef0123456789abcdef01234567: nothing recorded ==",
            ),
            // 5. subjects, by exact name (several words too), before bead shapes
            ("staging", "== subject staging =="),
            ("rate limiter", "== subject rate limiter =="),
            ("peat-8nj", "== subject peat-8nj =="),
            // 6. beads
            ("peat-9xq", "== bead peat-9xq =="),
            ("word-123", "== bead word-123 =="),
            ("word-12.3", "== bead word-12.3 =="),
            // 7. everything else, saying what was tried first
            (
                "rate-limiter",
                "== search: \"rate-limiter\" (tried first: subject) ==",
            ),
            ("cafe", "== search: \"cafe\" (tried first: subject) =="),
            (
                "fold hnsw fix",
                "== search: \"fold hnsw fix\" (tried first: subject) ==",
            ),
            (
                "staging 12",
                "== search: \"staging 12\" (tried first: subject) ==",
            ),
        ];
        let mut wrong = Vec::new();
        // No views: a session's handle is its first eight characters.
        let handles = Handles::without_views();
        for (input, want) in table {
            let c = read(input);
            let got = c.reading.header(&c.passed, &handles);
            if got != want {
                wrong.push(format!("{input:?}: got {got:?}, want {want:?}"));
            }
        }
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }

    #[test]
    fn every_fall_through_is_said() {
        let readme = |line| Passed::File {
            path: "README.md".into(),
            here: true,
            line,
        };
        let subject = |name: &str| Passed::Subject { name: name.into() };
        assert_eq!(
            read("README.md").passed,
            vec![readme(None), subject("README.md")]
        );
        assert_eq!(
            read("README.md:1").passed,
            vec![readme(Some(1)), subject("README.md:1")]
        );
        // A file named like a window that no one touched is read as the window.
        let c = read("2026-08-14");
        assert!(matches!(c.reading, Reading::Window(_)));
        assert_eq!(c.passed.len(), 1);
        // Hex that is neither a session nor a commit: searched, with both shapes noted.
        assert_eq!(
            read("0123456").passed,
            vec![
                Passed::Session {
                    prefix: "0123456".into()
                },
                Passed::Commit {
                    rev: "0123456".into(),
                    full: false,
                },
                subject("0123456"),
            ]
        );
        assert_eq!(
            read("abc12345").passed,
            vec![Passed::Session {
                prefix: "abc12345".into()
            }]
        );
        assert_eq!(read("fold hnsw fix").passed, vec![subject("fold hnsw fix")]);
    }

    #[test]
    fn session_shapes() {
        let s = |w: &str| {
            let words: Vec<String> = w.split_whitespace().map(String::from).collect();
            session_shape(&words).map(|(p, n)| (p.to_string(), n))
        };
        assert_eq!(s("3f6c"), Some(("3f6c".into(), None)));
        assert_eq!(s("3f6c 12"), Some(("3f6c".into(), Some(Seq(12)))));
        assert_eq!(
            s("3f6c end"),
            Some(("3f6c".into(), Some(Seq(HOOK_FINAL_SEQ))))
        );
        assert_eq!(
            s("3f6c obs2"),
            Some(("3f6c".into(), Some(Seq(OBS_SEQ_BASE + 1))))
        );
        assert_eq!(s("3f6"), None, "too short");
        assert_eq!(s("3f6c x"), None, "a seq is a number");
        assert_eq!(s("3f6c 1 2"), None);
        assert_eq!(s("cafe"), None, "a short word without a digit");
        assert_eq!(s("deadbeef"), Some(("deadbeef".into(), None)));
        assert_eq!(s("3F6C"), None, "ids are lower case");
        assert_eq!(s("-3f6c"), None);
    }

    #[test]
    fn bead_shapes() {
        for yes in [
            "peat-8nj",
            "word-123",
            "word-12.3",
            "bd-a1b2",
            "my_proj-9.1.2",
        ] {
            assert!(is_bead_shape(yes), "{yes}");
        }
        for no in [
            "rate-limiter",
            "word",
            "-123",
            "word-",
            "word-12.",
            "word-12.x",
            "9lives-12",
            "a-b-",
        ] {
            assert!(!is_bead_shape(no), "{no}");
        }
    }

    #[test]
    fn the_json_reading_names_its_kind_and_what_was_passed() {
        let c = read("0123456");
        let v = c.reading.json(&c.passed);
        assert_eq!(v["kind"], "search");
        assert_eq!(v["passed"][0]["shape"], "session");
        assert_eq!(v["passed"][1]["shape"], "commit");
        let c = read("4be1c0a");
        let v = c.reading.json(&c.passed);
        assert_eq!(v["kind"], "commit");
        assert_eq!(v["hash"], "4be1c0a9d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7");
        assert_eq!(v["recorded"], true);
    }

    #[test]
    fn near_names_catch_drift() {
        let names = [
            ("fold-hnsw", 3),
            ("fold-hnsw-perf", 1),
            ("staging", 2),
            ("stagin", 1),
            ("hnsw", 5),
            ("a", 9),
            ("deploy", 1),
        ];
        let near = near_names("fold-hnsw", names.iter().map(|(n, c)| (*n, *c)));
        assert_eq!(near, vec![("hnsw", 5), ("fold-hnsw-perf", 1)]);
        let near = near_names("Staging", names.iter().map(|(n, c)| (*n, *c)));
        assert_eq!(near, vec![("staging", 2), ("stagin", 1)]);
        assert!(near_names("zzz", names.iter().map(|(n, c)| (*n, *c))).is_empty());
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }

    #[test]
    fn a_subject_handle_is_bare_only_when_no_other_reading_claims_it() {
        let today = jiff::civil::date(2026, 8, 20);
        assert!(bare_reads_subject("staging", today));
        assert!(bare_reads_subject("fold-hnsw", today));
        assert!(!bare_reads_subject("rate limiter", today));
        assert!(!bare_reads_subject("2026", today));
        assert!(!bare_reads_subject("w33", today));
        assert!(!bare_reads_subject("cafe1234", today));
        assert!(!bare_reads_subject("-x", today));
    }
}
