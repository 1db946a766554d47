//! Where the ledger lives for a given working directory.
//!
//! `$PEAT_DB` wins. Otherwise the desk is the nearest ancestor holding `.git` or `.jj`, and
//! its `.peat/` directory holds desk-local state. A `.peat/redirect` there names another
//! `.peat` directory whose ledger is shared; a git worktree or a secondary jj workspace
//! resolves to its main checkout's ledger. A project that has no ledger of its own uses the
//! user-level ledger (in the user's data directory, made by `peat setup --user`) once there
//! is one. Outside any repository the desk is the cwd, and with no user-level ledger there
//! is no store at all: a command must say so rather than start one in a random folder.

use std::fs;
use std::path::{Path, PathBuf};

/// The store and the desk a command works with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    /// The store directory: the fjall database, the lock, and the views beside them.
    pub(crate) store: PathBuf,
    /// This desk's `.peat` directory (current-session, off, redirect, brief.tmpl).
    pub(crate) desk: PathBuf,
    /// The desk's root (the working copy), if it is in a repository.
    pub(crate) root: Option<PathBuf>,
    /// How the store was chosen, for `peat` to say when asked.
    pub(crate) reason: Reason,
    /// Where the user-level ledger is (or would be), whichever store was chosen.
    pub(crate) user: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    Env,
    Redirect(PathBuf),
    MainCheckout(PathBuf),
    Desk,
    /// The user-level ledger: this project has none of its own.
    User,
    /// Outside any repository with no user-level ledger: `store` is where one would be
    /// made here, and nothing may make it without being asked.
    Nowhere,
}

impl Reason {
    /// Whether the store holds every project's sessions, not one project's.
    pub(crate) fn machine_wide(&self) -> bool {
        matches!(self, Reason::User)
    }

    /// Whether the store is one repository's own (at its root, or its main checkout's):
    /// what `peat import` fills with that project's sessions only.
    pub(crate) fn project_own(&self) -> bool {
        matches!(self, Reason::Desk | Reason::MainCheckout(_))
    }
}

impl Location {
    /// Why the store is this one, in a sentence (`peat doctor` says it).
    pub(crate) fn why(&self) -> String {
        match &self.reason {
            Reason::Env => "PEAT_DB names it".to_string(),
            Reason::Redirect(to) => format!(".peat/redirect here names {}", to.display()),
            Reason::MainCheckout(main) => format!(
                "this checkout is a worktree or workspace of {}, whose ledger it shares",
                main.display()
            ),
            Reason::Desk => "this repository's own ledger".to_string(),
            Reason::User => {
                "the user-level ledger (`peat setup --user`): this project has none of its own"
                    .to_string()
            }
            Reason::Nowhere => {
                "none: this folder is in no repository and there is no user-level ledger"
                    .to_string()
            }
        }
    }
}

/// Resolve the location for `cwd`, with `$PEAT_DB` passed in as `env_db` and the
/// user-level ledger's place as `user_store`.
pub(crate) fn locate(cwd: &Path, env_db: Option<&Path>, user_store: Option<&Path>) -> Location {
    let root = repo_root(cwd);
    let desk_root = root.clone().unwrap_or_else(|| cwd.to_path_buf());
    let desk = desk_root.join(".peat");
    let user = user_store
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf);
    let at = |store: PathBuf, desk: PathBuf, reason| Location {
        store,
        desk,
        root: root.clone(),
        reason,
        user: user.clone(),
    };
    if let Some(db) = env_db.filter(|p| !p.as_os_str().is_empty()) {
        let store = if db.is_absolute() {
            db.to_path_buf()
        } else {
            cwd.join(db)
        };
        return at(store, desk, Reason::Env);
    }
    if let Some(target) = redirect_target(&desk, &desk_root) {
        return at(target.join("db"), desk, Reason::Redirect(target));
    }
    let (own, reason) = match root.as_deref().and_then(main_checkout) {
        Some(main) if main != desk_root => {
            (main.join(".peat").join("db"), Reason::MainCheckout(main))
        }
        _ => (desk.join("db"), Reason::Desk),
    };
    if recorded(&own) {
        return at(own, desk, reason);
    }
    if let Some(user) = user.as_deref().filter(|u| recorded(u)) {
        // Outside a repository desk state (the current session) is kept beside the ledger,
        // not in a `.peat` made in whatever folder the command ran from.
        let desk = match root {
            Some(_) => desk,
            None => user.parent().unwrap_or(user).to_path_buf(),
        };
        return at(user.to_path_buf(), desk, Reason::User);
    }
    match root {
        Some(_) => at(own, desk, reason),
        None => at(own, desk, Reason::Nowhere),
    }
}

/// Whether a ledger was ever created at `store`: its lock file or its database is there.
/// The lock file alone is not proof: deleting it must not make a ledger look absent.
pub(crate) fn recorded(store: &Path) -> bool {
    store.join("lock").exists() || store.join("fjall").exists()
}

/// The nearest ancestor of `cwd` (itself included) that holds `.git` or `.jj`.
pub(crate) fn repo_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists() || dir.join(".jj").exists())
        .map(Path::to_path_buf)
}

/// The first line of `.peat/redirect`, a `.peat` directory relative to the desk root.
fn redirect_target(desk: &Path, desk_root: &Path) -> Option<PathBuf> {
    let text = fs::read_to_string(desk.join("redirect")).ok()?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let p = Path::new(line);
    Some(if p.is_absolute() {
        p.to_path_buf()
    } else {
        desk_root.join(p)
    })
}

/// For a git worktree (`.git` is a file `gitdir: <main>/.git/worktrees/<name>`) or a
/// secondary jj workspace (`.jj/repo` is a file naming `<main>/.jj/repo`): the main checkout.
pub(crate) fn main_checkout(root: &Path) -> Option<PathBuf> {
    let git = root.join(".git");
    if git.is_file() {
        let text = fs::read_to_string(&git).ok()?;
        let gitdir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        let gitdir = absolutize(root, Path::new(gitdir));
        // <main>/.git/worktrees/<name>: the main checkout is above `.git`.
        let dotgit = gitdir.parent()?.parent()?;
        if dotgit.file_name()? == ".git" {
            return dotgit.parent().map(Path::to_path_buf);
        }
        return None;
    }
    let repo = root.join(".jj").join("repo");
    if repo.is_file() {
        let text = fs::read_to_string(&repo).ok()?;
        let target = absolutize(&root.join(".jj"), Path::new(text.trim()));
        // <main>/.jj/repo
        return target.parent()?.parent().map(Path::to_path_buf);
    }
    None
}

fn absolutize(base: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    fs::canonicalize(&joined).unwrap_or(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(p: &Path) -> PathBuf {
        fs::canonicalize(p).unwrap()
    }

    #[test]
    fn the_env_variable_wins() {
        let t = tempfile::tempdir().unwrap();
        let loc = locate(t.path(), Some(Path::new("/somewhere/db")), None);
        assert_eq!(loc.store, Path::new("/somewhere/db"));
        assert_eq!(loc.reason, Reason::Env);
    }

    #[test]
    fn the_store_sits_beside_the_nearest_repository_root() {
        let t = tempfile::tempdir().unwrap();
        let root = real(t.path());
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        let loc = locate(&root.join("src/deep"), None, None);
        assert_eq!(loc.store, root.join(".peat/db"));
        assert_eq!(loc.desk, root.join(".peat"));
        assert_eq!(loc.root.as_deref(), Some(root.as_path()));
    }

    #[test]
    fn a_git_worktree_resolves_to_its_main_checkout() {
        let t = tempfile::tempdir().unwrap();
        let base = real(t.path());
        let main = base.join("main");
        fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
        let wt = base.join("wt");
        fs::create_dir_all(&wt).unwrap();
        fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        let loc = locate(&wt, None, None);
        assert_eq!(loc.store, main.join(".peat/db"));
        assert_eq!(loc.desk, wt.join(".peat"), "desk state stays local");
    }

    #[test]
    fn a_secondary_jj_workspace_resolves_to_its_main_checkout() {
        let t = tempfile::tempdir().unwrap();
        let base = real(t.path());
        let main = base.join("main");
        fs::create_dir_all(main.join(".jj/repo")).unwrap();
        let ws = base.join("ws");
        fs::create_dir_all(ws.join(".jj")).unwrap();
        fs::write(ws.join(".jj/repo"), "../../main/.jj/repo").unwrap();
        let loc = locate(&ws, None, None);
        assert_eq!(loc.store, main.join(".peat/db"));
    }

    #[test]
    fn a_redirect_names_a_shared_ledger() {
        let t = tempfile::tempdir().unwrap();
        let base = real(t.path());
        let desk = base.join("desk");
        fs::create_dir_all(desk.join(".git")).unwrap();
        fs::create_dir_all(desk.join(".peat")).unwrap();
        fs::write(desk.join(".peat/redirect"), "../shared/.peat\n").unwrap();
        let loc = locate(&desk, None, None);
        assert_eq!(loc.store, desk.join("../shared/.peat/db"));
    }

    #[test]
    fn outside_a_repository_the_cwd_is_the_desk() {
        let t = tempfile::tempdir().unwrap();
        let cwd = real(t.path());
        let loc = locate(&cwd, None, None);
        assert_eq!(loc.store, cwd.join(".peat/db"));
        assert!(loc.root.is_none());
        assert_eq!(
            loc.reason,
            Reason::Nowhere,
            "nothing may be made there unasked"
        );
    }

    #[test]
    fn a_project_without_a_ledger_uses_the_user_level_one_once_it_exists() {
        let t = tempfile::tempdir().unwrap();
        let base = real(t.path());
        let user = base.join("data/peat/db");
        let project = base.join("p");
        fs::create_dir_all(project.join(".git")).unwrap();
        let outside = base.join("elsewhere");
        fs::create_dir_all(&outside).unwrap();
        // No user-level ledger yet: the project's own place, and nowhere outside.
        assert_eq!(locate(&project, None, Some(&user)).reason, Reason::Desk);
        assert_eq!(locate(&outside, None, Some(&user)).reason, Reason::Nowhere);
        fs::create_dir_all(user.join("fjall")).unwrap();
        let loc = locate(&project, None, Some(&user));
        assert_eq!((loc.store, loc.reason), (user.clone(), Reason::User));
        assert_eq!(loc.desk, project.join(".peat"));
        let loc = locate(&outside, None, Some(&user));
        assert_eq!((&loc.store, &loc.reason), (&user, &Reason::User));
        assert_eq!(loc.desk, base.join("data/peat"), "no .peat made in the cwd");
        // A project ledger, once made, is the project's.
        fs::create_dir_all(project.join(".peat/db/fjall")).unwrap();
        assert_eq!(locate(&project, None, Some(&user)).reason, Reason::Desk);
    }
}
