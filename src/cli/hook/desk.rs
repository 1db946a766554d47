//! Desks: several workspaces (jj workspaces, git worktrees, redirects) may share one ledger,
//! but each keeps its own `.peat/` for what is local to it: the current session, the hook
//! log, `off`. "This desk's last session" is the last session whose cwd was in this
//! workspace, not the last session of the shared ledger.

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::spool;
use crate::cli::ctx::Ctx;
use crate::ledger::{Access, Ledger, LedgerError, LockError, Mode};
use crate::views::closings;
use crate::views::session::SessionRollup;
use crate::views::{ViewError, Views};
use crate::vocab::event::{Envelope, Event, EventId, Seq, SessionId};

/// How recent a session must be for SessionStart to mention it.
pub(crate) const RECENT_MS: i64 = 3 * 86_400_000;

/// How much of the closing message SessionStart prints.
const CLIP: usize = 600;

/// The file SessionStart writes the session id into.
pub(crate) const CURRENT_SESSION: &str = "current-session";

/// Create the desk's `.peat/` if it is missing, ignoring itself so that neither git nor jj
/// ever snapshots it.
pub(crate) fn ensure_desk(desk: &Path) -> Result<(), String> {
    if desk.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(desk).map_err(|e| format!("cannot create {}: {e}", desk.display()))?;
    let _ = fs::write(desk.join(".gitignore"), "*\n");
    Ok(())
}

/// Record `session` as this desk's current session (replacing the file whole, so a reader
/// never sees half an id).
pub(crate) fn write_current_session(desk: &Path, session: &str) -> Result<(), String> {
    ensure_desk(desk)?;
    let path = desk.join(CURRENT_SESSION);
    let tmp = desk.join(format!("{CURRENT_SESSION}.{}", std::process::id()));
    fs::write(&tmp, format!("{session}\n"))
        .and_then(|()| fs::rename(&tmp, &path))
        .map_err(|e| {
            let _ = fs::remove_file(&tmp);
            format!("cannot write {}: {e}", path.display())
        })
}

/// The current session recorded in `dir` (a desk, or beside a shared store), as the last
/// SessionStart wrote it: the file's first line.
pub(crate) fn read_current_session(dir: &Path) -> Option<SessionId> {
    let text = fs::read_to_string(dir.join(CURRENT_SESSION)).ok()?;
    let id = text.lines().next()?.trim();
    (!id.is_empty()).then(|| SessionId(id.to_string()))
}

/// The closing message SessionStart repeats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Closing {
    pub(crate) session: SessionId,
    /// Its handle, as worked out with the views open (SessionStart prints it without them).
    pub(crate) handle: String,
    pub(crate) seq: Seq,
    pub(crate) end_ms: i64,
    pub(crate) branch: Option<String>,
    pub(crate) text: String,
}

impl Closing {
    /// Three lines: where it comes from, the message (clipped), the command that reads it.
    pub(crate) fn render(&self, now_ms: i64, tz: &jiff::tz::TimeZone) -> String {
        let mut about = vec![
            self.handle.clone(),
            format!("{} ago", crate::vocab::time::age(now_ms, self.end_ms, tz)),
        ];
        if let Some(b) = &self.branch {
            about.push(b.clone());
        }
        format!(
            "peat: last session here ({}) closed with:\n  {}\n  ▸ peat show {} {}\n",
            about.join(", "),
            crate::cli::ui::clip(&self.text, CLIP),
            self.handle,
            self.seq
        )
    }
}

/// The previous closing message of this desk: the newest session other than `current`,
/// not a subagent, whose cwd was in this workspace, that ended within three days and has a
/// closing message. Read from the closings file the views leave beside them when it fits
/// the ledger (no lock, no database); else from the views as they stand (no catch-up, no
/// model), giving up quietly (`Ok(None)`) when the ledger is busy for longer than a moment.
pub(crate) fn previous_closing(
    ctx: &Ctx,
    current: Option<&str>,
) -> Result<Option<Closing>, String> {
    const WHO: &str = "peat hook (SessionStart)";
    let store = &ctx.location.store;
    let root = desk_root(ctx);
    let wanted = |session: &SessionId, end_ms: i64, cwd: Option<&str>| {
        ctx.now_ms - end_ms <= RECENT_MS
            && current != Some(session.as_str())
            && cwd.is_some_and(|cwd| in_desk(Path::new(cwd), &root))
    };
    // A closing message still in the spool is the very one this start should announce: it
    // is in no file yet, so the views are waited for (bounded) while a capture applies it.
    let pending = !spool::pending(store).is_empty();
    if !pending
        && let Ok(ledger) = Ledger::open_beside_writer(store, WHO)
        && let Some(file) = closings::read(&ledger)
    {
        let found = file
            .sessions
            .iter()
            .find(|c| wanted(&c.session, c.end_ms, c.cwd.as_deref()));
        // Past the file's oldest, only a session older still could be this desk's.
        let oldest_recent = file
            .sessions
            .last()
            .is_some_and(|c| ctx.now_ms - c.end_ms <= RECENT_MS);
        if found.is_some() || !(file.truncated && oldest_recent) {
            return Ok(found.cloned().map(Closing::from));
        }
    }
    let open = |wait| {
        Ledger::open(
            store,
            Access {
                mode: Mode::Existing,
                wait,
                who: WHO,
                on_wait: &mut || {},
            },
        )
    };
    let ledger = match open(std::time::Duration::ZERO) {
        Ok(l) => l,
        Err(LedgerError::Missing(_)) => return Ok(None),
        // Any writer but one applying a spooled closing message leaves the views as current
        // as they need to be, and they are read beside it at once.
        Err(LedgerError::Lock(LockError::Busy { .. })) if !pending => {
            match Ledger::open_beside_writer(store, WHO) {
                Ok(l) => l,
                Err(_) => return Ok(None),
            }
        }
        Err(LedgerError::Lock(LockError::Busy { .. })) => match open(super::START_LOCK_WAIT) {
            Ok(l) => l,
            Err(LedgerError::Lock(LockError::Busy { .. }) | LedgerError::Missing(_)) => {
                return Ok(None);
            }
            Err(e) => return Err(e.to_string()),
        },
        Err(e) => return Err(e.to_string()),
    };
    // A writer holds the views only while it writes a chunk (it lets readers in between
    // changes): wait for that as long as for a closing message in flight, then go without.
    let views = match Views::peek(&ledger, ctx.tz.clone(), super::START_LOCK_WAIT) {
        Ok(Some(views)) => views,
        Ok(None) | Err(ViewError::Ledger(LedgerError::Lock(LockError::Busy { .. }))) => {
            return Ok(None);
        }
        Err(e) => return Err(e.to_string()),
    };
    let skip = |s: &SessionId, r: &SessionRollup| {
        r.end_ms.is_none_or(|end| !wanted(s, end, r.cwd.as_deref()))
    };
    // The texts view holds it; the ledger itself is opened only if the view does not, and
    // beside a writer (where the ledger cannot be read) that session is passed over.
    let mut text_of = |id: &EventId, row: Option<String>| match row {
        Some(text) => Ok(Some(text)),
        None if !ledger.is_locked() => Ok(None),
        None => Ok(match ledger.get(id)? {
            Some(Envelope {
                kind: Event::FinalMsg { text },
                ..
            }) => Some(text),
            _ => None,
        }),
    };
    let (found, _) = closings::newest(&views, &skip, 1, &mut text_of).map_err(|e| e.to_string())?;
    // Its handle was worked out with the views open: it is rendered after they close.
    Ok(found.into_iter().next().map(Closing::from))
}

impl From<closings::Closing> for Closing {
    fn from(c: closings::Closing) -> Closing {
        Closing {
            handle: crate::views::handle::read_back(&c.session, &c.handle),
            session: c.session,
            seq: c.seq,
            end_ms: c.end_ms,
            branch: c.branch,
            text: c.text,
        }
    }
}

/// The workspace this desk is: its repository root, else the cwd it was resolved from.
pub(crate) fn desk_root(ctx: &Ctx) -> PathBuf {
    let root = ctx
        .location
        .desk
        .parent()
        .map(Path::to_path_buf)
        .or_else(|| ctx.location.root.clone())
        .unwrap_or_else(|| ctx.cwd.clone());
    fs::canonicalize(&root).unwrap_or(root)
}

/// Whether a session that ran in `cwd` ran in the workspace rooted at `root` (canonical):
/// `cwd` is at or under `root`, and not inside a nested workspace (a folder between them
/// holding `.git` or `.jj`: a worktree or jj workspace kept inside the main checkout is a
/// desk of its own).
pub(crate) fn in_desk(cwd: &Path, root: &Path) -> bool {
    let cwd = fs::canonicalize(cwd).unwrap_or_else(|_| lexical(cwd));
    let Ok(rest) = cwd.strip_prefix(root) else {
        return false;
    };
    let mut dir = root.to_path_buf();
    for part in rest.components() {
        dir.push(part);
        if dir.join(".git").exists() || dir.join(".jj").exists() {
            return false;
        }
    }
    true
}

/// `p` with `.` and `..` resolved without the file system (for a folder that is gone).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_in_a_nested_workspace_belong_to_that_desk() {
        let t = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(t.path()).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::create_dir_all(root.join(".worktrees/wt/src")).unwrap();
        fs::write(
            root.join(".worktrees/wt/.git"),
            "gitdir: ../../.git/worktrees/wt\n",
        )
        .unwrap();
        assert!(in_desk(&root, &root));
        assert!(in_desk(&root.join("src/deep"), &root));
        assert!(
            in_desk(&root.join("gone/now"), &root),
            "a removed folder still counts"
        );
        assert!(!in_desk(&root.join(".worktrees/wt/src"), &root));
        assert!(!in_desk(root.parent().unwrap(), &root));
        let sibling = PathBuf::from(format!("{}-old", root.display()));
        assert!(
            !in_desk(&sibling, &root),
            "a name prefix is not a folder prefix"
        );
        assert!(in_desk(&root.join("src/../src/deep"), &root));
    }

    #[test]
    fn the_current_session_is_written_whole_and_read_back() {
        let t = tempfile::tempdir().unwrap();
        let desk = t.path().join("repo/.peat");
        write_current_session(&desk, "abc-123").unwrap();
        assert_eq!(read_current_session(&desk).unwrap().as_str(), "abc-123");
        assert_eq!(fs::read_to_string(desk.join(".gitignore")).unwrap(), "*\n");
        write_current_session(&desk, "def").unwrap();
        assert_eq!(read_current_session(&desk).unwrap().as_str(), "def");
        let left: Vec<_> = fs::read_dir(&desk)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 2, "no temporary file is left behind: {left:?}");
    }

    #[test]
    fn a_closing_renders_with_its_handle() {
        let c = Closing {
            session: SessionId("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b".into()),
            handle: "3f6c2a9e".into(),
            seq: Seq(1234),
            end_ms: 0,
            branch: Some("feat/rate-limit".into()),
            text: "Done:\n\nthe limiter   is in.".into(),
        };
        assert_eq!(
            c.render(5 * 3_600_000, &jiff::tz::TimeZone::UTC),
            "peat: last session here (3f6c2a9e, 5h ago, feat/rate-limit) closed with:\n  Done: the limiter is in.\n  ▸ peat show 3f6c2a9e 1234\n"
        );
    }
}
