//! Read-only questions to the repository a command runs in: which commit the working copy
//! sits on, and what a revision names.
//!
//! `git` and `jj` are run directly with fixed argument lists (never through a shell), with
//! stdin closed and their stderr discarded. Nothing here writes: git runs with
//! `--no-optional-locks` (so `status` does not refresh the index), jj with
//! `--ignore-working-copy` (so it does not snapshot). A missing tool, a directory outside any
//! repository, or a revision that does not resolve all read as `None`: every caller has a
//! reading that does without.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::vocab::event::{Basis, Vcs};

/// Which tools manage the repository at `root`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Repo {
    pub(crate) root: PathBuf,
    /// A `.git` directory or file: git can answer (a colocated jj repo has both).
    pub(crate) git: bool,
    /// A `.jj` directory.
    pub(crate) jj: bool,
}

impl Repo {
    /// The repository holding `cwd`, if any.
    pub(crate) fn find(cwd: &Path) -> Option<Repo> {
        let root = crate::ledger::locate::repo_root(cwd)?;
        Some(Repo {
            git: root.join(".git").exists(),
            jj: root.join(".jj").is_dir(),
            root,
        })
    }

    /// The repository holding `dir`, its root resolved through symbolic links, as recorded
    /// working directories and paths are.
    pub(crate) fn resolved(dir: &Path) -> Option<Repo> {
        Repo::find(dir).map(Repo::canonical)
    }

    fn canonical(self) -> Repo {
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        Repo { root, ..self }
    }

    /// The repository holding `file` (absolute; it may no longer exist), resolved, and the
    /// file's path relative to its root (the root as found, when the file's path does not
    /// go through the resolved one).
    pub(crate) fn of_file(file: &Path) -> Option<(Repo, String)> {
        let found = Repo::find(file.parent()?)?;
        let repo = found.clone().canonical();
        let rel = file
            .strip_prefix(&repo.root)
            .or_else(|_| file.strip_prefix(&found.root))
            .ok()?
            .to_str()
            .filter(|r| !r.is_empty())?
            .to_string();
        Some((repo, rel))
    }

    /// The commit git's HEAD names, read from the repository's files where they say it
    /// plainly (no process runs: a read asks this of every repository it lists), else asked
    /// of git. `None` without git.
    pub(crate) fn head_commit(&self) -> Option<String> {
        if !self.git {
            return None;
        }
        head_from_files(&self.root).or_else(|| {
            let out = git(&self.root, &["rev-parse", "--verify", "--quiet", "HEAD"])?;
            Some(out.trim().to_string()).filter(|h| is_hex(h))
        })
    }
}

/// HEAD's commit from the files of the git repository at `root`: its HEAD, and the branch
/// it names as a loose ref or in `packed-refs` (a worktree's own, or the main checkout's).
/// `None` where they do not say it plainly (a reftable, an unborn branch).
fn head_from_files(root: &Path) -> Option<String> {
    let read = |p: PathBuf| std::fs::read_to_string(p).ok();
    let dotgit = root.join(".git");
    let gitdir = if dotgit.is_dir() {
        dotgit
    } else {
        let text = read(dotgit)?;
        root.join(text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim())
    };
    let common =
        read(gitdir.join("commondir")).map_or_else(|| gitdir.clone(), |c| gitdir.join(c.trim()));
    let commit = |h: &str| Some(h.trim().to_string()).filter(|h| h.len() >= 40 && is_hex(h));
    let head = read(gitdir.join("HEAD"))?;
    let Some(name) = head.trim().strip_prefix("ref:").map(str::trim) else {
        return commit(&head);
    };
    if let Some(h) = [&gitdir, &common].iter().find_map(|d| read(d.join(name))) {
        return commit(&h);
    }
    read(common.join("packed-refs"))?.lines().find_map(|l| {
        let (h, r) = l.split_once(' ')?;
        if r.trim() == name { commit(h) } else { None }
    })
}

/// A revision the repository resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The full commit hash.
    pub(crate) hash: String,
    /// The first line of its message.
    pub(crate) subject: String,
    /// When it was committed (ms since the epoch), if the tool said.
    pub(crate) ts_ms: Option<i64>,
}

/// The commit the working copy of the repository at `cwd` sits on, and whether tracked
/// files differ from it. In a colocated jj repository git's HEAD is jj's `@-`, so git
/// answers for both; a jj-only repository asks jj for `@-`, and counts the working-copy
/// commit as dirty when it is not empty (as of jj's last snapshot).
pub(crate) fn head(cwd: &Path) -> Option<Basis> {
    let repo = Repo::find(cwd)?;
    if repo.git {
        let commit = repo.head_commit()?;
        let status = git(&repo.root, &["status", "--porcelain", "-uno"])?;
        return Some(Basis {
            commit,
            dirty: !status.trim().is_empty(),
        });
    }
    if repo.jj {
        let parents = jj(
            &repo.root,
            &[
                "log",
                "-r",
                "@-",
                "--no-graph",
                "-T",
                "commit_id ++ \"\\n\"",
            ],
        )?;
        let commit = parents.lines().next()?.trim();
        if !is_hex(commit) {
            return None;
        }
        let empty = jj(&repo.root, &["log", "-r", "@", "--no-graph", "-T", "empty"])?;
        return Some(Basis {
            commit: commit.to_string(),
            dirty: empty.trim() == "false",
        });
    }
    None
}

/// Whether `word` could be a commit hash (or a prefix of one git accepts): 7 to 40 hex digits.
pub(crate) fn is_commit_shape(word: &str) -> bool {
    (7..=40).contains(&word.len()) && is_hex(word)
}

/// Whether `word` could be a jj change id: 8 to 32 letters of jj's `k`..`z` alphabet.
pub(crate) fn is_change_shape(word: &str) -> bool {
    (8..=32).contains(&word.len()) && word.bytes().all(|b| (b'k'..=b'z').contains(&b))
}

/// The commit `rev` names in the repository at `cwd`: a commit hash (or unique prefix), or
/// in a jj repository a change id. Anything else is refused without running a tool.
pub(crate) fn resolve_commit(cwd: &Path, rev: &str) -> Option<Resolved> {
    let hex = is_commit_shape(rev);
    let change = is_change_shape(rev);
    if !hex && !change {
        return None;
    }
    let repo = Repo::find(cwd)?;
    if repo.git && hex {
        // One run resolves and describes: `^{commit}` refuses a prefix that is ambiguous or
        // names no commit, and the signature check a config may ask for stays off stdout.
        let spec = format!("{rev}^{{commit}}");
        let shown = git(
            &repo.root,
            &[
                "show",
                "-s",
                "--no-show-signature",
                "--format=%H%n%ct%n%s",
                "--end-of-options",
                &spec,
            ],
        )?;
        let mut lines = shown.lines();
        let full = lines.next()?.trim();
        if !is_hex(full) {
            return None;
        }
        let ts_ms = lines
            .next()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .map(|s| s * 1000);
        return Some(Resolved {
            hash: full.to_string(),
            subject: lines.next().unwrap_or("").to_string(),
            ts_ms,
        });
    }
    if repo.jj {
        let out = jj(
            &repo.root,
            &[
                "log",
                "-r",
                rev,
                "--no-graph",
                "--limit",
                "1",
                "-T",
                "commit_id ++ \"\\t\" ++ committer.timestamp().utc().format(\"%s\") ++ \"\\t\" ++ description.first_line() ++ \"\\n\"",
            ],
        )?;
        let line = out.lines().next()?;
        let mut parts = line.splitn(3, '\t');
        let hash = parts.next()?.trim();
        if !is_hex(hash) {
            return None;
        }
        let ts_ms = parts
            .next()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .map(|s| s * 1000);
        return Some(Resolved {
            hash: hash.to_string(),
            subject: parts.next().unwrap_or("").to_string(),
            ts_ms,
        });
    }
    None
}

/// What a commit wrote: its whole message and, per file (relative to the repository root),
/// the lines it added.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CommitContent {
    pub(crate) message: String,
    pub(crate) added: Vec<(String, Vec<String>)>,
}

/// The message and added lines of the commit `hash` (full, as [`resolve_commit`] gave it).
pub(crate) fn commit_content(cwd: &Path, hash: &str) -> Option<CommitContent> {
    let (repo, diff) = commit_diff(cwd, hash)?;
    let message = if repo.git {
        git(
            &repo.root,
            &["show", "-s", "--format=%B", "--end-of-options", hash],
        )?
    } else {
        jj(
            &repo.root,
            &["log", "-r", hash, "--no-graph", "-T", "description"],
        )?
    };
    Some(CommitContent {
        message,
        added: added_lines(&diff),
    })
}

/// The changes of the commit `hash` (full) against its first parent, as a unified diff with
/// no context lines, and the repository that answered (git where it can, else jj).
pub(crate) fn commit_diff(cwd: &Path, hash: &str) -> Option<(Repo, String)> {
    if !is_hex(hash) {
        return None;
    }
    let repo = Repo::find(cwd)?;
    let diff = if repo.git {
        git(
            &repo.root,
            &[
                "diff-tree",
                "-p",
                "--root",
                "--no-commit-id",
                "--no-ext-diff",
                "--no-color",
                "-U0",
                "--end-of-options",
                hash,
            ],
        )?
    } else if repo.jj {
        jj(&repo.root, &["diff", "-r", hash, "--git", "--context=0"])?
    } else {
        return None;
    };
    Some((repo, diff))
}

/// How an Agent Trace names the commit `hash` of the repository at `root`: by jj's change id
/// in a jj repository (stable across rewrites, as the spec asks), else by git's hash. A jj
/// repository whose jj cannot answer is named by the hash, as git.
pub(crate) fn revision_name(repo: &Repo, hash: &str) -> (Vcs, String) {
    let change = repo
        .jj
        .then(|| {
            jj(
                &repo.root,
                &[
                    "log",
                    "-r",
                    hash,
                    "--no-graph",
                    "-T",
                    "change_id ++ \"\\n\"",
                ],
            )
        })
        .flatten()
        .and_then(|out| out.lines().next().map(|l| l.trim().to_string()))
        .filter(|c| is_change_shape(c));
    match change {
        Some(change) => (Vcs::Jj, change),
        None => (Vcs::Git, hash.to_string()),
    }
}

/// The lines a commit added, per file (relative to the repository root).
pub(crate) type Added = Vec<(String, Vec<String>)>;

/// A commit as the repository's log gave it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Logged {
    /// The full commit hash.
    pub(crate) hash: String,
    /// When it was committed (ms since the epoch).
    pub(crate) ts_ms: Option<i64>,
    pub(crate) message: String,
    /// The files it changed, relative to the repository root.
    pub(crate) files: Vec<String>,
    /// The lines it added, per file, once read: jj's listing carries them, git's are asked
    /// for with [`with_lines`], only for the commits that need them.
    pub(crate) added: Option<Added>,
}

/// The format of a git listing: each commit opens with a record separator, its fields end in
/// unit separators, and the files or the patch follow (a message holds neither separator).
const GIT_RECORD: &str = "--format=%x1e%H%x1f%ct%x1f%B%x1f";

/// Every commit of `repo` committed since `since_ms`, newest first, with its message and the
/// files it changed, in one run of the tool (jj's working-copy commit, unfinished, is left
/// out). `None` when the tool cannot answer.
pub(crate) fn commits_since(repo: &Repo, since_ms: i64) -> Option<Vec<Logged>> {
    if repo.git {
        let out = git(
            &repo.root,
            &[
                "log",
                "--no-show-signature",
                "--no-color",
                "--name-only",
                // git reads `@<seconds>` as a moment, in no zone.
                &format!("--since=@{}", since_ms.div_euclid(1000)),
                GIT_RECORD,
            ],
        )?;
        return Some(parse_listing(&out, |rest| {
            let files = rest.lines().filter(|l| !l.is_empty()).map(str::to_string);
            (files.collect(), None)
        }));
    }
    if repo.jj {
        let since = crate::vocab::time::format_iso_ms(since_ms);
        let revset = format!("committer_date(after:\"{since}\") & ~root() & ~@");
        let out = jj(
            &repo.root,
            &[
                "log",
                "-r",
                &revset,
                "--no-graph",
                "--git",
                "--context=0",
                "-T",
                "\"\\x1e\" ++ commit_id ++ \"\\x1f\" ++ committer.timestamp().utc().format(\"%s\") ++ \"\\x1f\" ++ description ++ \"\\x1f\"",
            ],
        )?;
        return Some(parse_listing(&out, patched));
    }
    None
}

/// `commits` with the lines each added, read in one run of git for those that lack them.
pub(crate) fn with_lines(repo: &Repo, commits: &mut [Logged]) {
    let missing: Vec<&str> = commits
        .iter()
        .filter(|c| c.added.is_none())
        .map(|c| c.hash.as_str())
        .collect();
    if missing.is_empty() || !repo.git {
        return;
    }
    let mut args = vec![
        "log",
        "--no-walk=unsorted",
        "--no-show-signature",
        "--no-color",
        "--no-ext-diff",
        "-p",
        "-U0",
        GIT_RECORD,
        "--end-of-options",
    ];
    args.extend(missing);
    let Some(out) = git(&repo.root, &args) else {
        return;
    };
    let read: std::collections::HashMap<String, Option<Added>> = parse_listing(&out, patched)
        .into_iter()
        .map(|l| (l.hash, l.added))
        .collect();
    for c in commits.iter_mut().filter(|c| c.added.is_none()) {
        if let Some(added) = read.get(&c.hash) {
            c.added = added.clone();
        }
    }
}

/// A listing's commits, what follows each commit's fields read by `rest` (files, lines).
fn parse_listing(out: &str, rest: impl Fn(&str) -> (Vec<String>, Option<Added>)) -> Vec<Logged> {
    out.split('\x1e')
        .filter_map(|record| {
            let mut fields = record.splitn(4, '\x1f');
            let hash = fields.next()?.trim();
            if !is_hex(hash) {
                return None;
            }
            let ts_ms = fields.next()?.trim().parse::<i64>().ok().map(|s| s * 1000);
            let message = fields.next()?.to_string();
            let (files, added) = rest(fields.next().unwrap_or(""));
            Some(Logged {
                hash: hash.to_string(),
                ts_ms,
                message,
                files,
                added,
            })
        })
        .collect()
}

/// A patch's files and added lines.
fn patched(patch: &str) -> (Vec<String>, Option<Added>) {
    let added = added_lines(patch);
    (added.iter().map(|(p, _)| p.clone()).collect(), Some(added))
}

/// The added lines of a git-format patch, per destination file.
fn added_lines(diff: &str) -> Vec<(String, Vec<String>)> {
    crate::vocab::diff::added_by_file(diff)
        .into_iter()
        .filter_map(|(path, lines)| Some((path?, lines)))
        .filter(|(p, lines)| p != "/dev/null" && !lines.is_empty())
        .collect()
}

/// A name a file had before a rename.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EarlierName {
    pub(crate) abs: PathBuf,
    /// Relative to the repository's root: how a session working in another checkout of the
    /// repository recorded it.
    pub(crate) rel: String,
}

/// The names `file` (absolute) had before its renames, newest first; empty
/// when it was never renamed, or outside any repository. git follows the file through its
/// history (`git log --follow`) after a rename staged but not yet committed; jj has no
/// `--follow`, so its log is asked, rename by rename, for the commit that made the current
/// name from an older one (as of jj's last snapshot of the working copy). A rename nobody has
/// committed or staged (a plain `mv`) is unknown to both, and so to this.
///
/// Only commits since `since_ms` are walked, when given: a caller that wants the names
/// edits were recorded under passes the record's beginning, so the cost of the walk grows
/// with the recorded span, not with the repository's whole history.
pub(crate) fn earlier_names(file: &Path, since_ms: Option<i64>) -> Vec<EarlierName> {
    let Some((repo, rel)) = Repo::of_file(file) else {
        return Vec::new();
    };
    let root = &repo.root;
    let names = if repo.git {
        git_earlier_names(root, &rel, since_ms)
    } else if repo.jj {
        jj_renames(root, &rel, since_ms)
            .into_iter()
            .map(|(_, old)| old)
            .collect()
    } else {
        Vec::new()
    };
    names
        .into_iter()
        .map(|rel| EarlierName {
            abs: root.join(&rel),
            rel,
        })
        .collect()
}

/// How many renames are followed at most: a bound on the tool runs, not a real limit.
const MAX_RENAMES: usize = 64;

fn git_earlier_names(root: &Path, rel: &str, since_ms: Option<i64>) -> Vec<String> {
    let mut names = Vec::new();
    let mut current = rel.to_string();
    // A rename staged in the index: the history knows the file by its older name.
    if let Some(staged) = git(
        root,
        &[
            "diff",
            "--cached",
            "-M",
            "--name-status",
            "-z",
            "--no-ext-diff",
        ],
    ) {
        for (old, new) in renames(&staged) {
            if new == current {
                names.push(old.clone());
                current = old;
            }
        }
    }
    let since = since_ms.map(|ms| format!("--since=@{}", ms.div_euclid(1000)));
    let mut args = vec![
        "log",
        "--follow",
        "-M",
        "--name-status",
        "-z",
        "--no-ext-diff",
        "--format=%x01",
    ];
    args.extend(since.as_deref());
    args.extend(["--", &current]);
    let Some(log) = git(root, &args) else {
        return names;
    };
    // Newest first: each rename into the name followed so far is one step back.
    for (old, new) in renames(&log) {
        if new == current && !names.contains(&old) && old != rel {
            names.push(old.clone());
            current = old;
        }
    }
    names.truncate(MAX_RENAMES);
    names
}

/// The renames (old, new) in `git --name-status -z` output, in the order given. Commit
/// separators (`--format=%x01`) and the newlines after them are skipped.
fn renames(out: &str) -> Vec<(String, String)> {
    let mut tokens = out
        .split('\0')
        .map(|t| t.trim_start_matches(['\n', '\u{1}']))
        .filter(|t| !t.is_empty());
    let mut found = Vec::new();
    while let Some(status) = tokens.next() {
        match status.as_bytes()[0] {
            b'R' | b'C' => {
                let (Some(old), Some(new)) = (tokens.next(), tokens.next()) else {
                    break;
                };
                if status.starts_with('R') {
                    found.push((old.to_string(), new.to_string()));
                }
            }
            _ => {
                tokens.next();
            }
        }
    }
    found
}

/// The renames that led to `rel` in jj's history, newest first: the commit that made each and
/// the name before it.
fn jj_renames(root: &Path, rel: &str, since_ms: Option<i64>) -> Vec<(String, String)> {
    // Each commit that touched the current name, newest first, with its renames as
    // `old<TAB>new` lines; the revset narrows to the ancestors of the last rename found.
    const TEMPLATE: &str = "commit_id ++ \"\\n\" ++ diff.files().filter(|f| f.status() == \"renamed\").map(|f| f.source().path() ++ \"\\t\" ++ f.target().path() ++ \"\\n\").join(\"\")";
    let mut renames: Vec<(String, String)> = Vec::new();
    let mut current = rel.to_string();
    let mut heads = "@".to_string();
    let since = since_ms.map_or(String::new(), |ms| {
        format!(
            " & committer_date(after:\"{}\")",
            crate::vocab::time::format_iso_ms(ms)
        )
    });
    while renames.len() < MAX_RENAMES {
        let quoted = quoted(&current);
        // The cheap date filter first: `files()` diffs each commit it is asked about.
        let revset = format!("::({heads}){since} & files(root-file:\"{quoted}\")");
        let Some(out) = jj(root, &["log", "--no-graph", "-r", &revset, "-T", TEMPLATE]) else {
            break;
        };
        let mut commit = "";
        let mut step = None;
        for line in out.lines() {
            match line.split_once('\t') {
                Some((old, new)) if new == current => {
                    step = Some((commit.to_string(), old.to_string()));
                    break;
                }
                Some(_) => {}
                None => commit = line.trim(),
            }
        }
        let Some((commit, old)) = step else { break };
        if !is_hex(&commit) || renames.iter().any(|(_, o)| *o == old) || old == rel {
            break;
        }
        heads = format!("{commit}-");
        renames.push((commit, old.clone()));
        current = old;
    }
    renames
}

/// The commit that brought a line as it is: its hash, author and author date.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct LineCommit {
    pub(crate) hash: String,
    pub(crate) author: String,
    pub(crate) ts_ms: i64,
}

/// A file as a commit of the working copy's history held it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Committed {
    pub(crate) commit: String,
    /// When it was committed, to the second (ms since the epoch).
    pub(crate) ts_ms: i64,
    /// The file's text; empty when the commit does not hold it.
    pub(crate) text: String,
}

/// One file's history in the repository that holds it, read-only: what it was at a moment,
/// and which commit brought each of its lines.
#[derive(Debug)]
pub(crate) struct FileHistory {
    root: PathBuf,
    rel: String,
    /// git answers (a colocated jj repository too); else jj.
    git: bool,
    /// The names the file had before its renames, newest first, each with the commit that
    /// renamed it where the tool says (jj): asked for once, when needed.
    earlier: std::cell::OnceCell<Vec<(Option<String>, String)>>,
    /// [`FileHistory::changing_commits`], asked for once.
    commits: std::cell::OnceCell<Vec<(i64, String)>>,
    /// The file's text at each commit asked about.
    texts: std::cell::RefCell<std::collections::HashMap<String, String>>,
    /// The annotation of the working copy's commit, started early (see
    /// [`FileHistory::annotate_in_background`]).
    early: std::cell::RefCell<Option<std::thread::JoinHandle<Option<Annotation>>>>,
    /// The annotation of the working copy's commit, once read: blame may attribute twice
    /// (again under the file's earlier names), and the tool's run is most of its time.
    now_annotated: std::cell::OnceCell<Option<Annotation>>,
}

/// Each line of a file without its newline, with the commit that brought it.
type Annotation = Vec<(String, LineCommit)>;

impl FileHistory {
    /// The history of `file` (absolute; it may no longer exist), when a repository holds it.
    pub(crate) fn of(file: &Path) -> Option<FileHistory> {
        let (repo, rel) = Repo::of_file(file)?;
        (repo.git || repo.jj).then_some(FileHistory {
            root: repo.root,
            rel,
            git: repo.git,
            earlier: std::cell::OnceCell::new(),
            commits: std::cell::OnceCell::new(),
            texts: Default::default(),
            early: Default::default(),
            now_annotated: std::cell::OnceCell::new(),
        })
    }

    /// The last commit of the working copy's history that changed the file, made at or
    /// before `ms` (to the second), with the file as it held it (empty once deleted); `None`
    /// when there is none so early or the tool cannot say. The last commit to change the file
    /// holds it as every later one before the moment does, and a recorded edit made after it
    /// is in none of them.
    pub(crate) fn at(&self, ms: i64) -> Option<Committed> {
        let secs = ms.div_euclid(1000);
        let commits = self.commits.get_or_init(|| self.changing_commits());
        let before = commits.partition_point(|(t, _)| *t <= secs);
        let (ts, commit) = commits.get(before.checked_sub(1)?)?;
        Some(self.committed(commit, ts * 1000))
    }

    /// The file as the commit `commit` (full hash, committed at `ts_ms`) holds it, under the
    /// name it had then: empty when the commit does not hold it.
    pub(crate) fn committed(&self, commit: &str, ts_ms: i64) -> Committed {
        let text = self
            .texts
            .borrow_mut()
            .entry(commit.to_string())
            .or_insert_with(|| self.text_at(commit).unwrap_or_default())
            .clone();
        Committed {
            commit: commit.to_string(),
            ts_ms,
            text,
        }
    }

    /// The commit the working copy sits on (git's `HEAD`, jj's `@-`), with the file as it
    /// holds it; `None` when the tool cannot say (an unborn branch).
    pub(crate) fn sitting_on(&self) -> Option<Committed> {
        let out = if self.git {
            git(&self.root, &["log", "-1", "--format=%H%x09%ct", "HEAD"])
        } else {
            jj(
                &self.root,
                &[
                    "log",
                    "-r",
                    "@-",
                    "--no-graph",
                    "--limit",
                    "1",
                    "-T",
                    "commit_id ++ \"\\t\" ++ committer.timestamp().utc().format(\"%s\") ++ \"\\n\"",
                ],
            )
        }?;
        let (hash, secs) = out.lines().next()?.trim().split_once('\t')?;
        let secs: i64 = secs.parse().ok()?;
        is_hex(hash).then(|| self.committed(hash, secs * 1000))
    }

    /// The commits of the working copy's history that changed the file (across its renames,
    /// where the tool follows them), oldest first, each with its commit time in seconds.
    fn changing_commits(&self) -> Vec<(i64, String)> {
        let out = if self.git {
            git(
                &self.root,
                &[
                    "log",
                    "--follow",
                    "--format=%H%x09%ct",
                    "HEAD",
                    "--",
                    &self.rel,
                ],
            )
        } else {
            // jj's log does not follow a rename: every name the file had is asked for.
            let files: Vec<String> = self
                .names()
                .map(|n| format!("files(root-file:\"{}\")", quoted(n)))
                .collect();
            let revset = format!("::@- & ({})", files.join(" | "));
            jj(
                &self.root,
                &[
                    "log",
                    "-r",
                    &revset,
                    "--no-graph",
                    "-T",
                    "commit_id ++ \"\\t\" ++ committer.timestamp().utc().format(\"%s\") ++ \"\\n\"",
                ],
            )
        };
        let mut commits: Vec<(i64, String)> = out
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let (hash, secs) = l.trim().split_once('\t')?;
                is_hex(hash).then_some((secs.parse().ok()?, hash.to_string()))
            })
            .collect();
        // Both tools list a child before its parent. A rebase or a squash commits in the same
        // second, so among equal times that order (reversed) says which is later, never the
        // hashes.
        commits.reverse();
        commits.sort_by_key(|(secs, _)| *secs);
        commits
    }

    /// The file's text at `commit`, under the name it had then (its name now, or one it had
    /// before a rename).
    fn text_at(&self, commit: &str) -> Option<String> {
        self.names().find_map(|name| {
            if self.git {
                git(
                    &self.root,
                    &["cat-file", "blob", &format!("{commit}:{name}")],
                )
            } else {
                let file = format!("root-file:\"{}\"", quoted(name));
                jj(&self.root, &["file", "show", "-r", commit, &file])
            }
        })
    }

    /// The file's name now, then the names it had before its renames, newest first (asked
    /// for once, and only when the name now is not enough).
    fn names(&self) -> impl Iterator<Item = &str> {
        // The walk for earlier names runs only if the iteration gets past the name now.
        std::iter::once(self.rel.as_str()).chain(
            std::iter::once(())
                .flat_map(move |()| self.renames().iter())
                .map(|(_, name)| name.as_str()),
        )
    }

    /// The names the file had before its renames, newest first, as [`earlier_names`] gives
    /// them: from the one walk of its renames this history makes, which reading its past
    /// under those names needs too.
    pub(crate) fn earlier_names(&self) -> Vec<EarlierName> {
        self.renames()
            .iter()
            .map(|(_, rel)| EarlierName {
                abs: self.root.join(rel),
                rel: rel.clone(),
            })
            .collect()
    }

    /// The renames that led to the file's name now, newest first: the name before each, with
    /// the commit that made it where the tool says (jj; git's blame and log follow renames
    /// themselves).
    fn renames(&self) -> &[(Option<String>, String)] {
        self.earlier.get_or_init(|| match self.git {
            true => git_earlier_names(&self.root, &self.rel, None)
                .into_iter()
                .map(|old| (None, old))
                .collect(),
            false => jj_renames(&self.root, &self.rel, None)
                .into_iter()
                .map(|(commit, old)| (Some(commit), old))
                .collect(),
        })
    }

    /// Each line of the file as `commit` holds it (`None`: the commit the working copy sits
    /// on), without its newline, with the commit that brought it; `None` when the commit
    /// does not hold the file or the tool cannot say.
    pub(crate) fn annotate(&self, commit: Option<&str>) -> Option<Annotation> {
        match commit {
            None => self
                .now_annotated
                .get_or_init(|| {
                    let early = self.early.take().and_then(|run| run.join().ok()).flatten();
                    self.annotated_at(self.now(), early)
                })
                .clone(),
            Some(rev) => self.annotated_at(rev, None),
        }
    }

    /// The annotation at `rev` (`ran`: one already run), followed through the renames.
    fn annotated_at(&self, rev: &str, ran: Option<Annotation>) -> Option<Annotation> {
        let mut lines = match ran {
            Some(lines) => lines,
            None => self
                .names()
                .find_map(|name| annotate_as(&self.root, self.git, rev, name))?,
        };
        self.through_renames(&mut lines);
        Some(lines)
    }

    /// jj's annotation does not follow a rename: it gives the renaming commit every line the
    /// file had before. Those lines take their commit from the file under its earlier name,
    /// at the renaming commit's parent. (git's blame follows the rename itself.)
    fn through_renames(&self, lines: &mut [(String, LineCommit)]) {
        if self.git {
            return;
        }
        for (commit, old) in self.renames() {
            let Some(commit) = commit else { continue };
            if !lines.iter().any(|(_, c)| c.hash == *commit) {
                continue;
            }
            let Some(before) = annotate_as(&self.root, false, &format!("{commit}-"), old) else {
                continue;
            };
            let theirs: Vec<&str> = before.iter().map(|(t, _)| t.as_str()).collect();
            let ops = {
                let ours: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
                similar::capture_diff_slices(similar::Algorithm::Myers, &theirs, &ours)
            };
            for op in ops {
                if let similar::DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } = op
                {
                    for k in 0..len {
                        let line = &mut lines[new_index + k].1;
                        if line.hash == *commit {
                            *line = before[old_index + k].1.clone();
                        }
                    }
                }
            }
        }
    }

    /// The revision the working copy sits on.
    fn now(&self) -> &'static str {
        if self.git { "HEAD" } else { "@-" }
    }

    /// Start annotating the working copy's commit on a thread, for [`FileHistory::annotate`]
    /// of it to take: the tool's run (most of a blame's time in a long history) then overlaps
    /// reading the record.
    pub(crate) fn annotate_in_background(&self) {
        let (root, git, rev, name) = (self.root.clone(), self.git, self.now(), self.rel.clone());
        let run = std::thread::spawn(move || annotate_as(&root, git, rev, &name));
        self.early.replace(Some(run));
    }
}

/// The file's lines under `name` at `rev`, with the commit that brought each.
fn annotate_as(root: &Path, git_repo: bool, rev: &str, name: &str) -> Option<Annotation> {
    if git_repo {
        let out = git(root, &["blame", "--porcelain", rev, "--", name])?;
        return Some(git_blame_lines(&out));
    }
    const TEMPLATE: &str = "commit.commit_id() ++ \"\\t\" ++ commit.author().name() ++ \"\\t\" ++ commit.author().timestamp().utc().format(\"%s\") ++ \"\\t\" ++ content";
    // `file annotate` takes a path relative to the directory jj runs in: the root.
    let out = jj(root, &["file", "annotate", "-r", rev, "-T", TEMPLATE, name])?;
    Some(jj_annotate_lines(&out))
}

/// A jj string literal's body.
fn quoted(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `git blame --porcelain`: each line's text (after a tab) follows a header naming its
/// commit, whose author and date are given the first time the commit appears.
fn git_blame_lines(out: &str) -> Vec<(String, LineCommit)> {
    let mut known: std::collections::HashMap<String, LineCommit> = Default::default();
    let mut current = String::new();
    let mut lines = Vec::new();
    for line in out.split('\n') {
        if let Some(text) = line.strip_prefix('\t') {
            if let Some(c) = known.get(&current) {
                lines.push((text.to_string(), c.clone()));
            }
        } else if let Some(name) = line.strip_prefix("author ") {
            if let Some(c) = known.get_mut(&current) {
                c.author = name.to_string();
            }
        } else if let Some(secs) = line.strip_prefix("author-time ") {
            if let Some(c) = known.get_mut(&current) {
                c.ts_ms = secs.trim().parse::<i64>().unwrap_or(0) * 1000;
            }
        } else if let Some(hash) = line
            .split(' ')
            .next()
            .filter(|h| h.len() == 40 && is_hex(h))
        {
            current = hash.to_string();
            known.entry(current.clone()).or_insert_with(|| LineCommit {
                hash: current.clone(),
                author: String::new(),
                ts_ms: 0,
            });
        }
    }
    lines
}

/// `jj file annotate` with [`FileHistory::annotate`]'s template: `hash TAB author TAB
/// seconds TAB text`, one line each.
fn jj_annotate_lines(out: &str) -> Vec<(String, LineCommit)> {
    out.split_inclusive('\n')
        .filter_map(|line| {
            let mut parts = line.splitn(4, '\t');
            let hash = parts.next()?;
            let author = parts.next()?;
            let secs = parts.next()?.parse::<i64>().ok()?;
            let text = parts.next()?;
            Some((
                text.strip_suffix('\n').unwrap_or(text).to_string(),
                LineCommit {
                    hash: hash.to_string(),
                    author: author.to_string(),
                    ts_ms: secs * 1000,
                },
            ))
        })
        .collect()
}

/// `basis` as listings label it: `@` and eight hex digits, `+` when the tree was dirty.
pub(crate) fn basis_label(basis: &Basis) -> String {
    let short: String = basis.commit.chars().take(8).collect();
    format!("@{short}{}", if basis.dirty { "+" } else { "" })
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let mut cmd = Command::new("git");
    cmd.arg("--no-optional-locks")
        .arg("-C")
        .arg(root)
        .args(args);
    run(cmd)
}

fn jj(root: &Path, args: &[&str]) -> Option<String> {
    let mut cmd = Command::new("jj");
    cmd.args(["--ignore-working-copy", "--no-pager", "--color=never", "-R"])
        .arg(root)
        .args(args)
        .current_dir(root);
    run(cmd)
}

/// Stdout of a successful run, or `None` (tool missing, failed, or not UTF-8).
fn run(mut cmd: Command) -> Option<String> {
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    // `sh`: the tests' git, beside the module's own `git`.
    use crate::testing::{git as sh, require_git};

    /// A repository with one commit of `a.txt`.
    fn repo() -> (tempfile::TempDir, String) {
        require_git();
        let dir = tempfile::tempdir().unwrap();
        sh(dir.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        sh(dir.path(), &["add", "a.txt"]);
        sh(dir.path(), &["commit", "-q", "-m", "add a\n\nwith a body"]);
        let hash = sh(dir.path(), &["rev-parse", "HEAD"]);
        (dir, hash)
    }

    #[test]
    fn head_names_the_commit_and_a_dirty_tree() {
        let (dir, hash) = repo();
        let sub = dir.path().join("deep");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(
            head(&sub),
            Some(Basis {
                commit: hash.clone(),
                dirty: false
            })
        );
        // Untracked files do not make a tree dirty; a change to a tracked one does.
        std::fs::write(dir.path().join("new.txt"), "x").unwrap();
        assert_eq!(head(dir.path()).map(|b| b.dirty), Some(false));
        std::fs::write(dir.path().join("a.txt"), "two\n").unwrap();
        assert_eq!(head(dir.path()).map(|b| b.dirty), Some(true));
    }

    #[test]
    fn a_revision_resolves_to_its_full_hash_subject_and_time() {
        let (dir, hash) = repo();
        let r = resolve_commit(dir.path(), &hash[..7]).unwrap();
        assert_eq!(r.hash, hash);
        assert_eq!(r.subject, "add a");
        assert_eq!(
            r.ts_ms,
            crate::vocab::time::parse_iso_ms("2026-07-14T09:30:00Z")
        );
        assert_eq!(resolve_commit(dir.path(), &hash).unwrap().hash, hash);
        assert_eq!(resolve_commit(dir.path(), "0000000"), None);
        // Not a commit's shape: refused before any tool runs.
        assert_eq!(resolve_commit(dir.path(), "HEAD"), None);
        assert_eq!(resolve_commit(dir.path(), "--all"), None);
    }

    #[test]
    fn a_commit_names_its_message_and_the_lines_it_added() {
        let (dir, _) = repo();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "bee\n").unwrap();
        sh(dir.path(), &["add", "."]);
        sh(
            dir.path(),
            &["commit", "-q", "-m", "more\n\nPeat-Session: 3f6c2a9e"],
        );
        let hash = sh(dir.path(), &["rev-parse", "HEAD"]);
        let c = commit_content(dir.path(), &hash).unwrap();
        assert!(c.message.contains("Peat-Session: 3f6c2a9e"), "{c:?}");
        assert_eq!(
            c.added,
            vec![
                ("a.txt".to_string(), vec!["two".to_string()]),
                ("b.txt".to_string(), vec!["bee".to_string()])
            ]
        );
        assert_eq!(commit_content(dir.path(), "--all"), None);
    }

    #[test]
    fn a_file_renamed_by_commits_and_in_the_index_names_its_earlier_paths() {
        let earlier_paths = |file: &Path, since| -> Vec<PathBuf> {
            earlier_names(file, since)
                .into_iter()
                .map(|n| n.abs)
                .collect()
        };
        let (dir, _) = repo();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        sh(&root, &["mv", "a.txt", "b.txt"]);
        sh(&root, &["commit", "-q", "-m", "a becomes b"]);
        std::fs::write(root.join("b.txt"), "one\ntwo\n").unwrap();
        sh(&root, &["commit", "-q", "-a", "-m", "b grows"]);
        std::fs::create_dir_all(root.join("d")).unwrap();
        sh(&root, &["mv", "b.txt", "d/c x.txt"]);
        sh(&root, &["commit", "-q", "-m", "into d"]);
        // Staged, not committed: still followed.
        sh(&root, &["mv", "d/c x.txt", "e.txt"]);
        assert_eq!(
            earlier_paths(&root.join("e.txt"), None),
            vec![
                root.join("d/c x.txt"),
                root.join("b.txt"),
                root.join("a.txt")
            ]
        );
        assert_eq!(
            earlier_paths(&root.join("d/c x.txt"), None),
            vec![root.join("b.txt"), root.join("a.txt")]
        );
        // The commits are dated 2026-07-14: a walk that starts later finds no rename but the
        // staged one.
        let later = crate::vocab::time::parse_iso_ms("2026-07-15T00:00:00Z");
        assert_eq!(
            earlier_paths(&root.join("e.txt"), later),
            vec![root.join("d/c x.txt")]
        );
        std::fs::write(root.join("fresh.txt"), "x\n").unwrap();
        assert!(earlier_paths(&root.join("fresh.txt"), None).is_empty());
        let outside = tempfile::tempdir().unwrap();
        assert!(earlier_paths(&outside.path().join("a.txt"), None).is_empty());
    }

    /// Commit everything in `dir` at `when` (committer and author date); the new hash.
    fn commit_at(dir: &Path, when: &str, message: &str) -> String {
        sh(dir, &["add", "-A"]);
        crate::testing::git_by(dir, "Pat", when, &["commit", "-q", "-m", message]);
        sh(dir, &["rev-parse", "HEAD"])
    }

    #[test]
    fn a_file_history_gives_the_file_at_the_last_commit_that_changed_it_and_each_lines_commit() {
        let (dir, first) = repo();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        let second = commit_at(&root, "2026-07-14T10:00:00Z", "two");
        std::fs::write(root.join("b.txt"), "other\n").unwrap();
        commit_at(&root, "2026-07-14T10:30:00Z", "another file");
        std::fs::rename(root.join("a.txt"), root.join("c.txt")).unwrap();
        let renamed = commit_at(&root, "2026-07-14T11:00:00Z", "a becomes c");
        let ms = |t: &str| crate::vocab::time::parse_iso_ms(t).unwrap();

        let h = FileHistory::of(&root.join("c.txt")).unwrap();
        assert_eq!(
            h.at(ms("2026-07-14T09:00:00Z")),
            None,
            "before its first commit"
        );
        let at = |t: &str| {
            let c = h.at(ms(t)).unwrap();
            (c.commit, c.ts_ms, c.text)
        };
        // Under its name then; a commit in the same second counts.
        assert_eq!(
            at("2026-07-14T09:30:00.500Z"),
            (first.clone(), ms("2026-07-14T09:30:00Z"), "one\n".into())
        );
        // The commit of another file is not the file's.
        assert_eq!(
            at("2026-07-14T10:45:00Z"),
            (
                second.clone(),
                ms("2026-07-14T10:00:00Z"),
                "one\ntwo\n".into()
            )
        );
        assert_eq!(at("2026-07-15T00:00:00Z").0, renamed);

        let lines = |a: Option<Vec<(String, LineCommit)>>| -> Vec<(String, String, String)> {
            a.unwrap()
                .into_iter()
                .map(|(t, c)| (t, c.hash, c.author))
                .collect()
        };
        let one = ("one".to_string(), first.clone(), "t".to_string());
        let two = ("two".to_string(), second.clone(), "Pat".to_string());
        assert_eq!(lines(h.annotate(None)), vec![one.clone(), two.clone()]);
        assert_eq!(lines(h.annotate(Some(&second))), vec![one.clone(), two]);
        assert_eq!(lines(h.annotate(Some(&first))), vec![one]);
        assert_eq!(
            h.annotate(None).unwrap()[1].1.ts_ms,
            ms("2026-07-14T10:00:00Z")
        );
        let outside = tempfile::tempdir().unwrap();
        assert!(FileHistory::of(&outside.path().join("a.txt")).is_none());
    }

    #[test]
    fn annotations_are_read_from_git_porcelain_and_jj_templates() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let porcelain = format!(
            "{a} 1 1 2\nauthor Ann Lee\nauthor-time 60\nsummary x\n\tfirst\n{a} 2 2\n\t\tindented\n{b} 1 3 1\nauthor Bo\nauthor-time 120\n\tthird\n"
        );
        let got: Vec<(String, String, i64)> = git_blame_lines(&porcelain)
            .into_iter()
            .map(|(t, c)| (t, c.author, c.ts_ms))
            .collect();
        assert_eq!(
            got,
            vec![
                ("first".into(), "Ann Lee".into(), 60_000),
                ("\tindented".into(), "Ann Lee".into(), 60_000),
                ("third".into(), "Bo".into(), 120_000),
            ]
        );
        let jj = format!("{a}\tAnn\t60\tone\ttab\n{b}\tBo\t120\tlast, no newline");
        let got: Vec<(String, String)> = jj_annotate_lines(&jj)
            .into_iter()
            .map(|(t, c)| (t, c.hash))
            .collect();
        assert_eq!(
            got,
            vec![("one\ttab".into(), a), ("last, no newline".into(), b)]
        );
    }

    #[test]
    fn renames_are_read_from_name_status_output() {
        let out = "\u{1}\0\nR100\0b.txt\0d/c x.txt\0\u{1}\0\nM\0b.txt\0\u{1}\0\nC075\0x\0y\0R090\0a.txt\0b.txt\0\u{1}\0\nA\0a.txt\0";
        assert_eq!(
            renames(out),
            vec![
                ("b.txt".to_string(), "d/c x.txt".to_string()),
                ("a.txt".to_string(), "b.txt".to_string())
            ]
        );
        assert!(renames("").is_empty());
    }

    #[test]
    fn outside_a_repository_there_is_nothing_to_ask() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(head(dir.path()), None);
        assert_eq!(resolve_commit(dir.path(), "abc1234"), None);
    }

    #[test]
    fn commits_since_lists_each_commit_after_the_moment_with_its_message_and_lines() {
        let (dir, first) = repo();
        std::fs::write(dir.path().join("b.txt"), "two\nthree\n").unwrap();
        sh(dir.path(), &["add", "b.txt"]);
        crate::testing::git_at(
            dir.path(),
            "2026-07-14T11:00:00Z",
            &["commit", "-q", "-m", "add b\n\nPeat-Session: 3f6c2a9e"],
        );
        let second = sh(dir.path(), &["rev-parse", "HEAD"]);
        let repo = Repo::find(dir.path()).unwrap();
        // Both commits are after 09:00; only the second after 10:00.
        let mut all = commits_since(&repo, 1_784_019_600_000).unwrap();
        let hashes: Vec<&str> = all.iter().map(|c| c.hash.as_str()).collect();
        assert_eq!(hashes, vec![second.as_str(), first.as_str()]);
        assert_eq!(all[0].ts_ms, Some(1_784_026_800_000));
        assert_eq!(all[0].message.trim_end(), "add b\n\nPeat-Session: 3f6c2a9e");
        assert_eq!(all[0].files, vec!["b.txt"]);
        assert_eq!(all[0].added, None, "git's lines are read only when asked");
        with_lines(&repo, &mut all[..1]);
        assert_eq!(
            all[0].added,
            Some(vec![(
                "b.txt".to_string(),
                vec!["two".to_string(), "three".to_string()]
            )])
        );
        assert_eq!(all[1].added, None, "only those asked for");
        with_lines(&repo, &mut all);
        assert_eq!(
            all[1].added.as_ref().unwrap()[0].0,
            "a.txt",
            "the root commit's lines too"
        );
        let later = commits_since(&repo, 1_784_023_200_000).unwrap();
        assert_eq!(later.len(), 1);
        assert_eq!(later[0].hash, second);
    }

    #[test]
    fn shapes_of_commits_and_changes() {
        assert!(is_commit_shape("abc1234"));
        assert!(is_commit_shape(&"f".repeat(40)));
        assert!(!is_commit_shape("abc123"));
        assert!(!is_commit_shape(&"f".repeat(41)));
        assert!(!is_commit_shape("abc123g"));
        assert!(is_change_shape("kmkuslsw"));
        assert!(!is_change_shape("kmkusls"));
        assert!(!is_change_shape("kmkuslsa"));
        assert_eq!(
            basis_label(&Basis {
                commit: "0123456789abcdef".into(),
                dirty: true
            }),
            "@01234567+"
        );
    }
}
