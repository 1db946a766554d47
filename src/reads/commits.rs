//! Which session made a commit, by every route the record offers, in order of certainty:
//!
//! 1. **trailer**: the commit message carries `Peat-Session: <session id>` (see
//!    [`TRAILER`]; `peat trailer` prints it for the session an agent runs in);
//! 2. **recorded**: an agent's commit command was captured with the hash it printed;
//! 3. **workspace**: a session ran in this repository's workspace while the commit was made;
//! 4. **content**: the session whose recorded edits wrote the most of the lines the commit
//!    added (a share of them), which survives amends, rebases and squashes.
//!
//! The first route that names a session answers; the others are kept as corroboration. A
//! commit no route explains says so, with the nearest candidates. Every route reads the
//! views alone (the sessions, commits, files and changes views), never the ledger.
//!
//! [`explain`] answers for one commit; [`made_by`] answers the other way, the commits some
//! sessions made, by asking `explain` about each commit of their repositories that any route
//! could tie to them. Every view that counts or lists a session's commits (`peat COMMIT`,
//! `show`, `log`, `zoom`, the brief, `sessions`) reads one of the two, so each names the same
//! session for a commit. The repository is read, never written (see [`crate::reads::vcs`]);
//! where a session's repository is not on this machine, only the commits its own commit
//! commands printed are known, and [`Made::without_repo`] says which sessions that was.
//!
//! [`made_by`]'s answer is kept beside the views (see [`crate::views::memo`]) under the
//! commit each repository's HEAD names: a read asking again of the same views and
//! repositories runs no git at all.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::reads::files::{applied_changes, paths_for_relative};
use crate::reads::vcs::{CommitContent, Logged, Repo};
use crate::views::session::SessionRollup;
use crate::views::{ViewError, Views, memo};
use crate::vocab::change::Change;
use crate::vocab::event::{Seq, SessionId};

/// The commit trailer that names the session which made a commit.
pub(crate) const TRAILER: &str = "Peat-Session";

/// A content share at or above this explains a commit.
pub(crate) const CONTENT_SHARE: f64 = 0.5;

/// A commit's own facts, as the repository gave them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Commit {
    pub(crate) hash: String,
    pub(crate) ts_ms: Option<i64>,
    pub(crate) content: CommitContent,
}

/// How a session was tied to the commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Route {
    Trailer,
    Recorded,
    Workspace,
    Content,
}

impl Route {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Route::Trailer => "its Peat-Session trailer",
            Route::Recorded => "the commit command the session ran",
            Route::Workspace => "the session that ran in this workspace when it was made",
            Route::Content => "the recorded edits that wrote its lines",
        }
    }
}

/// One session a route tied to the commit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Tie {
    pub(crate) session: SessionId,
    pub(crate) route: Route,
    /// The event that shows it (the commit command, or the session's last edit of its lines).
    pub(crate) seq: Option<Seq>,
    pub(crate) ts_ms: Option<i64>,
    /// For the content route: the share of the commit's added lines the session wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) share: Option<f64>,
}

/// Everything the record says about a commit.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Explained {
    /// The route that answered, and the sessions it named (best first).
    pub(crate) answer: Vec<Tie>,
    /// Other routes' sessions, or the nearest candidates when nothing answered.
    pub(crate) others: Vec<Tie>,
}

/// The sessions that made `commit`, by every route (see the module documentation). `root` is
/// the repository's root, for the workspace route and for matching the commit's paths.
pub(crate) fn explain(
    views: &Views,
    root: Option<&str>,
    commit: &Commit,
) -> Result<Explained, ViewError> {
    let sessions = views.tables.all_sessions()?;
    let mut ties = surer(views, &sessions, root, commit, Depth::Whole)?;
    ties.extend(by_content(
        views,
        &commit.content,
        commit.ts_ms,
        &mut Written::default(),
    )?);
    Ok(decide(ties))
}

/// How much of the record route's evidence is wanted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// The event that shows each tie, for a whole explanation.
    Whole,
    /// Only the ties, from the sessions view: what an answer needs.
    Answer,
}

/// The ties of the routes surer than content, which need no lines of the commit.
fn surer(
    views: &Views,
    sessions: &[(SessionId, SessionRollup)],
    root: Option<&str>,
    commit: &Commit,
    depth: Depth,
) -> Result<Vec<Tie>, ViewError> {
    let mut ties: Vec<Tie> = Vec::new();
    ties.extend(by_trailer(sessions, &commit.content.message));
    ties.extend(by_record(views, sessions, &commit.hash, depth)?);
    if let (Some(root), Some(ts)) = (root, commit.ts_ms) {
        ties.extend(by_workspace(sessions, root, ts));
    }
    Ok(ties)
}

/// The answer among `ties`: the surest route's sessions, the others kept beside it.
fn decide(ties: Vec<Tie>) -> Explained {
    let answers = |t: &Tie| t.route != Route::Content || t.share.unwrap_or(0.0) >= CONTENT_SHARE;
    let best = ties.iter().filter(|t| answers(t)).map(|t| t.route).min();
    // A share below the bar never answers, even beside one above it.
    let (mut answer, others): (Vec<Tie>, Vec<Tie>) = ties
        .into_iter()
        .partition(|t| Some(t.route) == best && answers(t));
    answer.sort_by(|a, b| {
        b.share
            .partial_cmp(&a.share)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.session.cmp(&b.session))
    });
    Explained { answer, others }
}

/// A commit the resolution tied to a session, and the route it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct MadeCommit {
    pub(crate) hash: String,
    /// When it was committed; `None` for a recorded commit its repository could not show.
    pub(crate) ts_ms: Option<i64>,
    /// The first line of its message (empty when the repository could not show it).
    pub(crate) subject: String,
    pub(crate) route: Route,
    /// For the content route: the share of its added lines the session wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) share: Option<f64>,
}

/// The commits some sessions made: see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Made {
    /// Per session, its commits, oldest first.
    pub(crate) by_session: BTreeMap<SessionId, Vec<MadeCommit>>,
    /// The sessions whose repository is not on this machine: only their recorded commits, and
    /// those of the repository the person asks in, are known.
    pub(crate) without_repo: BTreeSet<SessionId>,
}

impl Made {
    /// The commits `session` made, oldest first.
    pub(crate) fn of(&self, session: &SessionId) -> &[MadeCommit] {
        self.by_session.get(session).map_or(&[], Vec::as_slice)
    }

    /// The distinct commits made between `from_ms` and `to_ms` (inclusive) by any session.
    pub(crate) fn count_between(&self, from_ms: i64, to_ms: i64) -> usize {
        self.by_session
            .values()
            .flatten()
            .filter(|c| c.ts_ms.is_some_and(|t| from_ms <= t && t <= to_ms))
            .map(|c| c.hash.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }
}

/// The repository holding `cwd`, and its root as the workspace route compares it (resolved
/// through symbolic links, as a session's recorded working directory is).
pub(crate) fn repo_at(cwd: &std::path::Path) -> Option<(Repo, String)> {
    let repo = Repo::resolved(cwd)?;
    let root = repo.root.to_string_lossy().into_owned();
    Some((repo, root))
}

/// The commits each of `sessions` made, each by the answer [`explain`] gives for it. The
/// repositories read are each session's own (where it ran) and the one holding `here` (where
/// the person asks, which may hold commits of a session that ran in another checkout).
pub(crate) fn made_by(
    views: &Views,
    sessions: &[SessionId],
    here: Option<&std::path::Path>,
) -> Result<Made, ViewError> {
    let all = views.tables.all_sessions()?;
    let rollups: BTreeMap<&SessionId, &SessionRollup> = all.iter().map(|(s, r)| (s, r)).collect();
    let wanted: BTreeMap<&SessionId, &SessionRollup> = sessions
        .iter()
        .filter_map(|s| rollups.get_key_value(s).map(|(k, r)| (*k, *r)))
        .collect();
    // The sessions of each repository, by its root.
    let mut repos: BTreeMap<String, (Repo, Vec<&SessionId>)> = BTreeMap::new();
    let mut made = Made::default();
    // Sessions share working directories: each is looked up once.
    let mut found: HashMap<&str, Option<(Repo, String)>> = HashMap::new();
    for (&session, rollup) in &wanted {
        let repo = rollup.cwd.as_deref().and_then(|c| {
            found
                .entry(c)
                .or_insert_with(|| repo_at(std::path::Path::new(c)))
                .clone()
        });
        match repo {
            Some((repo, root)) => {
                let members = &mut repos.entry(root).or_insert((repo, Vec::new())).1;
                if !members.contains(&session) {
                    members.push(session);
                }
            }
            None => {
                made.without_repo.insert(session.clone());
            }
        }
    }
    // A session whose own repository is gone may have committed to the one the person asks
    // in (another checkout of it). Those with their own are read there: the one here is not
    // listed over their spans too.
    let here = here.and_then(|h| {
        let key = h.to_str()?;
        found.entry(key).or_insert_with(|| repo_at(h)).clone()
    });
    if let Some((repo, root)) = here {
        let homeless = wanted
            .keys()
            .copied()
            .filter(|s| made.without_repo.contains(*s));
        let members = &mut repos.entry(root).or_insert((repo, Vec::new())).1;
        for session in homeless {
            if !members.contains(&session) {
                members.push(session);
            }
        }
    }
    // What the repositories hold is known by their heads: with those, the views' position
    // and the same question, the answer read before is the answer.
    let key = memo_key(&wanted, &repos, &made.without_repo);
    if let Some(known) = key.as_deref().and_then(|k| memo::recall(views, MEMO, k)) {
        return Ok(known);
    }
    let mut seen: BTreeMap<&SessionId, Vec<String>> = BTreeMap::new();
    let mut written = Written::default();
    for (root, (repo, members)) in &repos {
        let since = members
            .iter()
            .filter_map(|s| wanted[s].start_ms)
            .min()
            .unwrap_or(0)
            - LISTING_MARGIN_MS;
        let Some(logged) = crate::reads::vcs::commits_since(repo, since) else {
            continue;
        };
        let reach = Reach::new(members, &wanted, root);
        let mut candidates: Vec<Logged> = logged
            .into_iter()
            .rev()
            .filter(|l| reach.could_tie(l))
            .collect();
        for s in members {
            let hashes = candidates.iter().map(|l| l.hash.clone());
            seen.entry(s).or_default().extend(hashes);
        }
        // The surer routes need no lines: only the commits they leave unanswered, among
        // those touching a file a session here wrote, have their lines read (in one run),
        // and only the content route is then asked about them.
        let mut answers = Vec::with_capacity(candidates.len());
        let mut unanswered = Vec::new();
        for (i, l) in candidates.iter().enumerate() {
            let ties = surer(views, &all, Some(root), &commit_of(l), Depth::Answer)?;
            if ties.is_empty() && reach.wrote_to(&l.files) {
                unanswered.push(i);
            }
            answers.push(decide(ties).answer);
        }
        if !unanswered.is_empty() {
            let mut lacking: Vec<Logged> =
                unanswered.iter().map(|&i| candidates[i].clone()).collect();
            crate::reads::vcs::with_lines(repo, &mut lacking);
            for (&i, l) in unanswered.iter().zip(lacking) {
                let commit = commit_of(&l);
                answers[i] = decide(by_content(
                    views,
                    &commit.content,
                    commit.ts_ms,
                    &mut written,
                )?)
                .answer;
                candidates[i] = l;
            }
        }
        for (l, answer) in candidates.iter().zip(answers) {
            for tie in answer {
                if wanted.contains_key(&tie.session) {
                    made.by_session
                        .entry(tie.session)
                        .or_default()
                        .push(MadeCommit {
                            hash: l.hash.clone(),
                            ts_ms: l.ts_ms,
                            subject: l.message.lines().next().unwrap_or("").into(),
                            route: tie.route,
                            share: tie.share,
                        });
                }
            }
        }
    }
    // What a session's commit commands printed that its repository did not show (it is gone,
    // or the commit was rewritten away): the record's own word, by the same answer.
    for (&session, rollup) in &wanted {
        let shown = seen.get(session).map_or(&[][..], Vec::as_slice);
        let unseen: Vec<&String> = rollup
            .commits
            .keys()
            .filter(|hash| !shown.iter().any(|h| same_commit(h, hash)))
            .collect();
        if unseen.is_empty() {
            continue;
        }
        // Their own record, from the commits view: when the commands printed them, and the
        // messages they gave (with no repository, `explain`'s answer for a bare hash is
        // exactly these, by the recorded route).
        let recorded = views.tables.commits_of(session)?;
        for hash in unseen {
            let Some((_, row)) = recorded.iter().find(|(_, r)| same_commit(&r.hash, hash)) else {
                continue;
            };
            made.by_session
                .entry(session.clone())
                .or_default()
                .push(MadeCommit {
                    hash: hash.clone(),
                    ts_ms: Some(row.ts_ms),
                    subject: row.subject.clone(),
                    route: Route::Recorded,
                    share: None,
                });
        }
    }
    for commits in made.by_session.values_mut() {
        commits.sort_by_key(|c| c.ts_ms);
    }
    if let Some(key) = key {
        memo::keep(views, MEMO, &key, &made);
    }
    Ok(made)
}

/// The name [`made_by`]'s answers are kept under (see [`crate::views::memo`]).
const MEMO: &str = "commits";

/// Everything [`made_by`]'s answer depends on beyond the views: the sessions asked about,
/// which repositories hold them and the commit each repository's HEAD names (its listing
/// is what HEAD reaches), and which have none; and this binary's version. `None` when no
/// repository is read (the views alone answer as fast as the memo would) or when one's state
/// cannot be named so (jj alone, whose listing is every visible commit): nothing is kept.
fn memo_key(
    wanted: &BTreeMap<&SessionId, &SessionRollup>,
    repos: &BTreeMap<String, (Repo, Vec<&SessionId>)>,
    without_repo: &BTreeSet<SessionId>,
) -> Option<String> {
    use sha2::Digest;
    if repos.is_empty() {
        return None;
    }
    let mut key = sha2::Sha256::new();
    let mut add = |s: &str| {
        key.update(s.as_bytes());
        key.update([0]);
    };
    add(env!("CARGO_PKG_VERSION"));
    wanted.keys().for_each(|s| add(s.as_str()));
    add("");
    without_repo.iter().for_each(|s| add(s.as_str()));
    for (root, (repo, members)) in repos {
        add("");
        add(root);
        add(&repo.head_commit()?);
        members.iter().for_each(|s| add(s.as_str()));
    }
    Some(hex::encode(key.finalize()))
}

/// What could tie a commit to any of a repository's sessions, indexed once: the commits no
/// route can tie to them are never explained, which keeps [`made_by`] to the few that can,
/// however many sessions it is asked about.
struct Reach<'a> {
    ids: Vec<&'a SessionId>,
    /// The first seven digits of each hash their commit commands printed.
    recorded: HashSet<String>,
    /// The spans (with the grace) of those that ran in this workspace.
    spans: Vec<(i64, i64)>,
    /// The tails of the paths they edited (see [`tails`]): a commit's file at one of them
    /// may hold their lines.
    tails: HashSet<&'a str>,
}

impl<'a> Reach<'a> {
    fn new(
        members: &[&'a SessionId],
        wanted: &BTreeMap<&'a SessionId, &'a SessionRollup>,
        root: &str,
    ) -> Reach<'a> {
        let rollups = || members.iter().map(|s| wanted[s]);
        Reach {
            ids: members.to_vec(),
            recorded: rollups()
                .flat_map(|r| r.commits.keys())
                .filter_map(|h| h.get(..7))
                .map(str::to_lowercase)
                .collect(),
            spans: rollups()
                .filter(|r| inside(r, root))
                .filter_map(|r| Some((r.start_ms? - SPAN_GRACE_MS, r.end_ms? + SPAN_GRACE_MS)))
                .collect(),
            tails: rollups()
                .flat_map(|r| r.files.keys().flat_map(|f| tails(f, r.cwd.as_deref())))
                .collect(),
        }
    }

    /// Whether any route could tie `commit` to one of the sessions.
    fn could_tie(&self, commit: &Logged) -> bool {
        let named = trailers(&commit.message)
            .iter()
            .any(|v| self.ids.iter().any(|s| s.as_str().starts_with(v)));
        let recorded = commit
            .hash
            .get(..7)
            .is_some_and(|h| self.recorded.contains(h));
        let during = commit
            .ts_ms
            .is_some_and(|ts| self.spans.iter().any(|(a, b)| *a <= ts && ts <= *b));
        named || recorded || during || self.wrote_to(&commit.files)
    }

    /// Whether one of the sessions edited a file at one of `files` (relative paths), which the
    /// content route needs to tie a commit of them to it.
    fn wrote_to(&self, files: &[String]) -> bool {
        files.iter().any(|rel| self.tails.contains(rel.as_str()))
    }
}

/// The tails of `path` a commit's repository-relative file could be (`src/a.rs` and
/// `r/src/a.rs` of `/r/src/a.rs`). Its bare name counts only where its folder holds the
/// working directory `cwd` (the folder itself or one above it: where a repository's root can
/// be): a name alone (`mod.rs`, `README.md`) would otherwise match every file of that name.
fn tails<'a>(path: &'a str, cwd: Option<&str>) -> Vec<&'a str> {
    let Some((dir, name)) = path.rsplit_once('/') else {
        return (!path.is_empty()).then_some(path).into_iter().collect();
    };
    let at_top = cwd.is_some_and(|c| {
        c == dir
            || c.strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
    });
    let mut out: Vec<&str> = path
        .match_indices('/')
        .map(|(i, _)| &path[i + 1..])
        .filter(|t| t.contains('/'))
        .chain(std::iter::once(path))
        .collect();
    if at_top {
        out.push(name);
    }
    out.retain(|t| !t.is_empty());
    out
}

/// A listed commit as [`explain`] reads it (without lines until they are read).
fn commit_of(l: &Logged) -> Commit {
    Commit {
        hash: l.hash.clone(),
        ts_ms: l.ts_ms,
        content: CommitContent {
            message: l.message.clone(),
            added: l.added.clone().unwrap_or_default(),
        },
    }
}

/// Sessions named by a `Peat-Session:` trailer (an id or a unique prefix of one).
fn by_trailer(sessions: &[(SessionId, SessionRollup)], message: &str) -> Vec<Tie> {
    let mut out = Vec::new();
    for value in trailers(message) {
        let matching: Vec<&SessionId> = sessions
            .iter()
            .map(|(s, _)| s)
            .filter(|s| s.as_str().starts_with(value))
            .collect();
        if let [one] = matching[..] {
            out.push(Tie {
                session: one.clone(),
                route: Route::Trailer,
                seq: None,
                ts_ms: None,
                share: None,
            });
        }
    }
    out
}

/// The values of the message's `Peat-Session:` trailers (its last paragraph's lines).
pub(crate) fn trailers(message: &str) -> Vec<&str> {
    let last = message.trim_end().rsplit("\n\n").next().unwrap_or("");
    last.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim().eq_ignore_ascii_case(TRAILER)).then(|| v.trim())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// Whether a recorded session's commit command printed `hash` (from the sessions view alone:
/// no event is read).
pub(crate) fn recorded(sessions: &[(SessionId, SessionRollup)], hash: &str) -> bool {
    sessions
        .iter()
        .any(|(_, r)| r.commits.keys().any(|h| same_commit(h, hash)))
}

/// Whether two spellings of a hash (either may be a prefix, at least 7 long) name one commit.
pub(crate) fn same_commit(a: &str, b: &str) -> bool {
    // Compared in place: a read asks this of every pair of a session's commits.
    let n = a.len().min(b.len());
    n >= 7 && a.as_bytes()[..n].eq_ignore_ascii_case(&b.as_bytes()[..n])
}

/// Sessions that ran a commit command which printed this hash. For the answer alone, from
/// the sessions view (a tie without its event); in whole, with the event that shows it.
fn by_record(
    views: &Views,
    sessions: &[(SessionId, SessionRollup)],
    hash: &str,
    depth: Depth,
) -> Result<Vec<Tie>, ViewError> {
    let mut out = Vec::new();
    for (session, rollup) in sessions {
        if !rollup.commits.keys().any(|h| same_commit(h, hash)) {
            continue;
        }
        if depth == Depth::Answer {
            out.push(Tie {
                session: session.clone(),
                route: Route::Recorded,
                seq: None,
                ts_ms: None,
                share: None,
            });
            continue;
        }
        for (seq, row) in views.tables.commits_of(session)? {
            if same_commit(&row.hash, hash) {
                out.push(Tie {
                    session: session.clone(),
                    route: Route::Recorded,
                    seq: Some(seq),
                    ts_ms: Some(row.ts_ms),
                    share: None,
                });
            }
        }
    }
    Ok(out)
}

/// How far after a session's last event a commit still counts as made in it: a commit
/// time has whole seconds, and an agent's last event may be written just before it.
const SPAN_GRACE_MS: i64 = 60_000;

/// How long before a session began [`made_by`] still looks for its commits: a commit's time
/// is the repository's clock (and a rewrite's), a transcript's the harness's, and a trailer
/// or a recorded command ties a commit whatever the two clocks say.
const LISTING_MARGIN_MS: i64 = 3_600_000;

/// Sessions whose working directory is this repository's workspace (or inside it) and whose
/// active span contains the commit's time.
fn by_workspace(sessions: &[(SessionId, SessionRollup)], root: &str, ts_ms: i64) -> Vec<Tie> {
    sessions
        .iter()
        .filter(|(_, r)| in_workspace(r, root, ts_ms))
        .map(|(s, r)| Tie {
            session: s.clone(),
            route: Route::Workspace,
            seq: None,
            ts_ms: r.end_ms,
            share: None,
        })
        .collect()
}

/// Whether the session ran in the workspace at `root` (or inside it) at `ts_ms`.
fn in_workspace(r: &SessionRollup, root: &str, ts_ms: i64) -> bool {
    inside(r, root)
        && match (r.start_ms, r.end_ms) {
            (Some(a), Some(b)) => a - SPAN_GRACE_MS <= ts_ms && ts_ms <= b + SPAN_GRACE_MS,
            _ => false,
        }
}

/// Whether the session's working directory is the workspace at `root` or inside it.
fn inside(r: &SessionRollup, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    r.cwd.as_deref().is_some_and(|c| {
        c == root
            || c.strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// The lines a change wrote.
fn written_lines(change: &Change) -> Vec<String> {
    let mut out = Vec::new();
    let mut text = |s: &str| out.extend(s.lines().map(str::to_string));
    match change {
        Change::Edit(r) => text(&r.new),
        Change::MultiEdit { edits } => edits.iter().for_each(|r| text(&r.new)),
        // A write that says what it replaced wrote only the lines that differ from it.
        Change::Write {
            content,
            before: Some(before),
        } => before.written(content).into_iter().for_each(&mut text),
        Change::Write { content, .. } => text(content),
        Change::NotebookEdit { source, .. } => text(source),
        Change::Patch { hunks, .. } => {
            for h in hunks {
                for l in &h.lines {
                    if let Some(added) = l.strip_prefix('+') {
                        out.push(added.to_string());
                    }
                }
            }
        }
        Change::UnifiedDiff { diff, .. } => out.extend(
            crate::vocab::diff::added_by_file(diff)
                .into_iter()
                .flat_map(|(_, l)| l),
        ),
        Change::Delete => {}
    }
    out
}

/// A line worth matching: trimmed, and not so short or bare that any session could have
/// written it (`}`, blank lines, `} else {`, `return x;`).
fn meaningful(line: &str) -> Option<&str> {
    let t = line.trim();
    (t.len() >= 10 && t.chars().filter(|c| c.is_alphanumeric()).count() >= 3).then_some(t)
}

/// Per repository-relative path, the meaningful lines each session's recorded edits wrote to
/// a file at that path, and its last such edit (ts, seq): read once per path however many
/// commits touch it.
#[derive(Default)]
struct Written(HashMap<String, ByWriter>);

/// Per session, the meaningful lines it wrote to one file, its last such edit (ts, seq) and
/// when it first edited the file.
type ByWriter = BTreeMap<SessionId, (HashSet<String>, (i64, Seq), i64)>;

impl Written {
    fn of(&mut self, views: &Views, rel: &str) -> Result<&ByWriter, ViewError> {
        if !self.0.contains_key(rel) {
            // The recorded paths the commit's file can be: those ending in its path.
            let recorded = paths_for_relative(views, rel)?;
            let mut by_session = ByWriter::new();
            let mut cwds: HashMap<SessionId, Option<String>> = HashMap::new();
            for (e, change) in applied_changes(views, &recorded)? {
                // A bare name is the file's only where the session's repository can have it
                // at its top ([`tails`]), as the commits a session made are found.
                if !rel.contains('/') {
                    let cwd = match cwds.get(&e.session) {
                        Some(cwd) => cwd.clone(),
                        None => {
                            let cwd = views.tables.session(&e.session)?.and_then(|r| r.cwd);
                            cwds.insert(e.session.clone(), cwd.clone());
                            cwd
                        }
                    };
                    if !tails(&e.path, cwd.as_deref()).contains(&rel) {
                        continue;
                    }
                }
                let entry = by_session
                    .entry(e.session.clone())
                    .or_insert_with(|| (HashSet::new(), (e.ts_ms, e.seq), e.ts_ms));
                entry.1 = entry.1.max((e.ts_ms, e.seq));
                for l in written_lines(&change) {
                    if let Some(m) = meaningful(&l) {
                        entry.0.insert(m.to_string());
                    }
                }
            }
            self.0.insert(rel.to_string(), by_session);
        }
        Ok(&self.0[rel])
    }
}

/// Per session, the share of the commit's meaningful added lines its recorded edits wrote. A
/// session that first edited a file after the commit was made (at `ts_ms`, when known) wrote
/// none of it.
fn by_content(
    views: &Views,
    content: &CommitContent,
    ts_ms: Option<i64>,
    written: &mut Written,
) -> Result<Vec<Tie>, ViewError> {
    let wanted: Vec<(&str, Vec<&str>)> = content
        .added
        .iter()
        .map(|(p, lines)| {
            (
                p.as_str(),
                lines.iter().filter_map(|l| meaningful(l)).collect(),
            )
        })
        .filter(|(_, l): &(&str, Vec<&str>)| !l.is_empty())
        .collect();
    let total: usize = wanted.iter().map(|(_, l)| l.len()).sum();
    if total == 0 {
        return Ok(Vec::new());
    }
    let mut matched: BTreeMap<SessionId, (usize, Option<(i64, Seq)>)> = BTreeMap::new();
    for (rel, lines) in &wanted {
        for (session, (wrote, last, first)) in written.of(views, rel)? {
            if ts_ms.is_some_and(|t| t + SPAN_GRACE_MS < *first) {
                continue;
            }
            let n = lines.iter().filter(|l| wrote.contains(**l)).count();
            if n > 0 {
                let m = matched.entry(session.clone()).or_insert((0, None));
                m.0 += n;
                m.1 = m.1.max(Some(*last));
            }
        }
    }
    Ok(matched
        .into_iter()
        .map(|(session, (n, last))| Tie {
            session,
            route: Route::Content,
            seq: last.map(|(_, s)| s),
            ts_ms: last.map(|(t, _)| t),
            share: Some(n as f64 / total as f64),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reads::files::fixture::{Store, touch};
    use crate::vocab::event::{Event, TouchOp, Vcs};

    #[test]
    fn the_recorded_and_content_routes_read_the_views_alone() {
        let store = Store::new();
        let wrote = Change::write("fn limiter(rate: u32) -> u32 {\n    rate * 2\n}\n");
        store.write(
            vec![
                (
                    "maker",
                    3,
                    1_000,
                    touch("/old/checkout/src/lim.rs", TouchOp::Write, &wrote),
                ),
                (
                    "maker",
                    4,
                    2_000,
                    Event::Committed {
                        vcs: Vcs::Git,
                        hash: "abc1234def".into(),
                        message: "limit".into(),
                        branch: None,
                    },
                ),
            ],
            &[&wrote],
        );
        let (ledger, views) = store.open();
        let content = CommitContent {
            message: "limit".into(),
            added: vec![(
                "src/lim.rs".into(),
                vec![
                    "fn limiter(rate: u32) -> u32 {".into(),
                    "    rate * 2".into(),
                ],
            )],
        };
        let recorded = explain(
            &views,
            None,
            &Commit {
                hash: "abc1234def5678".into(),
                ts_ms: None,
                content: content.clone(),
            },
        )
        .unwrap();
        assert_eq!(recorded.answer.len(), 1);
        assert_eq!(recorded.answer[0].route, Route::Recorded);
        assert_eq!(recorded.answer[0].seq, Some(Seq(4)));
        assert_eq!(recorded.answer[0].ts_ms, Some(2_000));
        // Amended: another hash, the same lines.
        let amended = explain(
            &views,
            None,
            &Commit {
                hash: "fff0000aaa".into(),
                ts_ms: None,
                content,
            },
        )
        .unwrap();
        assert_eq!(amended.answer.len(), 1);
        assert_eq!(amended.answer[0].route, Route::Content);
        assert_eq!(amended.answer[0].share, Some(1.0));
        assert_eq!(amended.answer[0].seq, Some(Seq(3)));
        assert!(!ledger.is_open(), "explaining a commit opened the ledger");
    }

    #[test]
    fn a_share_below_the_bar_never_answers_beside_one_above_it() {
        let store = Store::new();
        let most = Change::write(
            "fn limiter(rate: u32) -> u32 {\n    let doubled = rate * 2;\n    doubled.min(MAX_RATE)\n}\n",
        );
        let one = Change::write("    doubled.min(MAX_RATE)\nfn unrelated_helper() {}\n");
        store.write(
            vec![
                (
                    "most",
                    1,
                    1_000,
                    touch("/r/src/lim.rs", TouchOp::Write, &most),
                ),
                (
                    "one",
                    1,
                    2_000,
                    touch("/r/src/lim.rs", TouchOp::Write, &one),
                ),
            ],
            &[&most, &one],
        );
        let (_ledger, views) = store.open();
        let content = CommitContent {
            message: "limit".into(),
            added: vec![(
                "src/lim.rs".into(),
                vec![
                    "fn limiter(rate: u32) -> u32 {".into(),
                    "    let doubled = rate * 2;".into(),
                    "    doubled.min(MAX_RATE)".into(),
                    "const PERSON_TYPED_THIS: u8 = 1;".into(),
                ],
            )],
        };
        let e = explain(
            &views,
            None,
            &Commit {
                hash: "abc1234abc".into(),
                ts_ms: None,
                content,
            },
        )
        .unwrap();
        let answer: Vec<(&str, Option<f64>)> = e
            .answer
            .iter()
            .map(|t| (t.session.as_str(), t.share))
            .collect();
        assert_eq!(answer, vec![("most", Some(0.75))]);
        let others: Vec<(&str, Option<f64>)> = e
            .others
            .iter()
            .map(|t| (t.session.as_str(), t.share))
            .collect();
        assert_eq!(others, vec![("one", Some(0.25))]);
    }

    #[test]
    fn content_credits_no_session_with_lines_its_write_kept_or_a_commit_made_before_it() {
        let store = Store::new();
        let kept = "fn limiter(rate: u32) -> u32 {\n    let doubled = rate * 2;\n}\n";
        let wrote = format!("{kept}fn refill_tokens(now: u64) {{}}\n");
        let told = Change::Write {
            content: wrote.clone(),
            before: Some(crate::vocab::change::Before::between(kept, &wrote)),
        };
        let blind = Change::write(wrote.clone());
        let at = 600_000;
        store.write(
            vec![
                ("told", 1, at, touch("/r/src/lim.rs", TouchOp::Write, &told)),
                (
                    "blind",
                    1,
                    at,
                    touch("/r/src/lim.rs", TouchOp::Write, &blind),
                ),
            ],
            &[&told, &blind],
        );
        let (_ledger, views) = store.open();
        let tied = |ts_ms: i64| {
            let content = CommitContent {
                message: "limit".into(),
                added: vec![(
                    "src/lim.rs".into(),
                    kept.lines().map(str::to_string).collect(),
                )],
            };
            let commit = Commit {
                hash: "abc1234abc".into(),
                ts_ms: Some(ts_ms),
                content,
            };
            let e = explain(&views, None, &commit).unwrap();
            let mut all: Vec<String> = e
                .answer
                .iter()
                .chain(&e.others)
                .map(|t| t.session.as_str().to_string())
                .collect();
            all.sort();
            all
        };
        // The write that said what it replaced wrote none of the commit's lines; the one that
        // did not is taken to have written them all.
        assert_eq!(tied(at + 60_000), vec!["blind".to_string()]);
        // Made ten minutes before either session edited the file: neither.
        assert_eq!(tied(at - 600_000), Vec::<String>::new());
    }

    #[test]
    fn content_reaches_a_commit_made_up_to_a_minute_before_the_sessions_first_write() {
        // The commit's clock and the transcript's may differ by the grace: a commit a minute
        // before the write may still hold its lines; a millisecond more and it cannot.
        let store = Store::new();
        let wrote = Change::write("fn limiter(rate: u32) -> u32 {\n    rate * 2\n}\n");
        let at = 600_000;
        store.write(
            vec![(
                "maker",
                1,
                at,
                touch("/r/src/lim.rs", TouchOp::Write, &wrote),
            )],
            &[&wrote],
        );
        let (_ledger, views) = store.open();
        let tied = |ts_ms: i64| {
            let content = CommitContent {
                message: "limit".into(),
                added: vec![(
                    "src/lim.rs".into(),
                    vec![
                        "fn limiter(rate: u32) -> u32 {".into(),
                        "    rate * 2".into(),
                    ],
                )],
            };
            by_content(&views, &content, Some(ts_ms), &mut Written::default())
                .unwrap()
                .len()
        };
        assert_eq!(tied(at - SPAN_GRACE_MS), 1);
        assert_eq!(tied(at - SPAN_GRACE_MS - 1), 0);
    }

    #[test]
    fn a_path_recorded_without_a_folder_is_its_own_tail_and_an_empty_one_has_none() {
        // A patch may name a file relative to the session's folder, with no folder at all.
        assert_eq!(tails("README.md", Some("/r")), vec!["README.md"]);
        assert!(tails("", Some("/r")).is_empty());
    }

    #[test]
    fn the_workspace_route_reaches_a_minute_either_side_of_the_session_and_no_further() {
        let r = SessionRollup {
            cwd: Some("/w".into()),
            start_ms: Some(600_000),
            end_ms: Some(900_000),
            ..SessionRollup::default()
        };
        assert!(in_workspace(&r, "/w", 600_000 - SPAN_GRACE_MS));
        assert!(!in_workspace(&r, "/w", 600_000 - SPAN_GRACE_MS - 1));
        assert!(in_workspace(&r, "/w", 900_000 + SPAN_GRACE_MS));
        assert!(!in_workspace(&r, "/w", 900_000 + SPAN_GRACE_MS + 1));
    }

    #[test]
    fn a_bare_file_name_reaches_only_a_file_at_the_top_of_the_working_directory() {
        let deep = tails("/r/src/views/mod.rs", Some("/r"));
        assert!(deep.contains(&"src/views/mod.rs") && deep.contains(&"views/mod.rs"));
        assert!(!deep.contains(&"mod.rs"), "{deep:?}");
        assert!(tails("/r/README.md", Some("/r")).contains(&"README.md"));
        assert!(tails("/r/README.md", Some("/r/sub")).contains(&"README.md"));
        assert!(!tails("/rx/README.md", Some("/r")).contains(&"README.md"));
        assert!(!tails("/r/README.md", None).contains(&"README.md"));
    }

    #[test]
    fn hashes_match_when_one_is_a_prefix_of_the_other() {
        assert!(same_commit("abc1234", "abc1234def567"));
        assert!(same_commit("ABC1234DEF", "abc1234"));
        assert!(!same_commit("abc1234", "abc1235"));
        assert!(!same_commit("abc123", "abc1234"), "too short to say");
    }

    #[test]
    fn trailers_are_read_from_the_last_paragraph_only() {
        let m = "fix the limiter\n\nPeat-Session: 3f6c2a9e mentioned in the body\n\nCo-Authored-By: x\npeat-session: 7a1b2c3d\n";
        assert_eq!(trailers(m), vec!["7a1b2c3d"]);
        assert!(trailers("no trailer here").is_empty());
    }

    #[test]
    fn short_punctuation_lines_never_match_by_content() {
        assert_eq!(meaningful("  }"), None);
        assert_eq!(meaningful("} else {"), None);
        assert_eq!(meaningful("  let rate = 5;"), Some("let rate = 5;"));
    }

    #[test]
    fn the_workspace_route_needs_the_repository_and_the_span() {
        let rollup = |cwd: &str, a: i64, b: i64| SessionRollup {
            cwd: Some(cwd.into()),
            start_ms: Some(a),
            end_ms: Some(b),
            ..SessionRollup::default()
        };
        let sessions = vec![
            (
                SessionId("in".into()),
                rollup("/r/sub", 1_000_000, 2_000_000),
            ),
            (
                SessionId("elsewhere".into()),
                rollup("/other", 1_000_000, 2_000_000),
            ),
            (SessionId("before".into()), rollup("/r", 0, 100_000)),
            (
                SessionId("prefix".into()),
                rollup("/rx", 1_000_000, 2_000_000),
            ),
        ];
        let hit: Vec<String> = by_workspace(&sessions, "/r", 1_500_000)
            .into_iter()
            .map(|t| t.session.0)
            .collect();
        assert_eq!(hit, vec!["in"]);
    }
}
