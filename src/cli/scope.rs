//! Which sessions a read answers from, resolved once with the context: a project (a
//! repository with its worktrees and jj workspaces) and an agent. A user-level ledger holds
//! every project on the machine, so there a read is scoped to the repository it is run in
//! unless told otherwise (`--project PATH`, `--all-projects`); a project's own ledger, or
//! one `PEAT_DB` names, is read whole. Every read asks [`Scope::sessions`] for the sessions
//! it may show, and nothing else decides it.

use clap::Args;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::cli::error::CliError;
use crate::ledger::Location;
use crate::ledger::locate::{main_checkout, repo_root};
use crate::views::ViewError;
use crate::views::session::SessionSet;
use crate::views::tables::Tables;
use crate::vocab::event::Agent;

/// The flags every read takes to choose its sessions (global: before or after the verb).
#[derive(Args, Debug, Default, Clone)]
pub(crate) struct ScopeArgs {
    /// Only this project's sessions: a repository's path (its worktrees and jj workspaces
    /// count as it). A user-level ledger reads the current repository's by default
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) project: Option<PathBuf>,
    /// Every project's sessions, not only the current repository's (for a user-level ledger)
    #[arg(long, global = true, conflicts_with = "project")]
    pub(crate) all_projects: bool,
    /// Only sessions this agent ran: claude, codex
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) agent: Option<String>,
}

/// The sessions a read answers from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Scope {
    /// Only sessions whose working directory is in this project.
    pub(crate) project: Option<Project>,
    /// Only sessions this agent ran.
    pub(crate) agent: Option<Agent>,
    /// Why the project is what it is, for `peat doctor` to say.
    pub(crate) why: Why,
}

/// How the project part of the scope was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Why {
    /// `--project PATH`.
    Named,
    /// `--all-projects`.
    AllProjects,
    /// A user-level ledger read inside a repository: that repository.
    Here,
    /// A user-level ledger read outside any repository: there is no project to narrow to.
    NoRepository,
    /// The ledger is one project's (or the one `PEAT_DB` names): read whole.
    OwnLedger,
}

impl Why {
    pub(crate) fn sentence(self) -> &'static str {
        match self {
            Why::Named => "the project --project names",
            Why::AllProjects => "every project (--all-projects)",
            Why::Here => "this repository's sessions: the ledger is user-level",
            Why::NoRepository => {
                "every project: the ledger is user-level and this folder is in no repository"
            }
            Why::OwnLedger => "the whole ledger: it is not the user-level one",
        }
    }
}

/// A repository, as the working directories of its sessions are matched against it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Project {
    /// Its main checkout.
    pub(crate) root: PathBuf,
    /// The roots a session's cwd may be under: the main checkout and its git worktrees, each
    /// as given and as the file system resolves it (a harness records either).
    pub(crate) roots: Vec<PathBuf>,
}

impl Project {
    /// The repository holding `dir`, from its main checkout. `None` outside any repository.
    pub(crate) fn of(dir: &Path) -> Option<Project> {
        let found = repo_root(dir)?;
        let root = main_checkout(&found).unwrap_or(found);
        let worktrees = git_worktrees(&root);
        Some(Project::with(root, worktrees))
    }

    /// A folder in no repository, taken as a project of its own (`peat setup` there).
    pub(crate) fn at(dir: &Path) -> Project {
        Project::with(dir.to_path_buf(), Vec::new())
    }

    fn with(root: PathBuf, more: Vec<PathBuf>) -> Project {
        let mut roots = vec![root.clone()];
        roots.extend(more);
        let real: Vec<PathBuf> = roots
            .iter()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .collect();
        for r in real {
            if !roots.contains(&r) {
                roots.push(r);
            }
        }
        Project { root, roots }
    }

    /// Whether a session that worked in `cwd` worked in this project: under one of its roots
    /// (compared by path components), or in a checkout whose main checkout is this one (a jj
    /// workspace, which its main checkout does not list, or a worktree made since).
    pub(crate) fn holds(&self, cwd: &str, seen: &mut HashMap<String, bool>) -> bool {
        let path = Path::new(cwd);
        if self.roots.iter().any(|r| path.starts_with(r)) {
            return true;
        }
        *seen.entry(cwd.to_string()).or_insert_with(|| {
            repo_root(path)
                .map(|r| main_checkout(&r).unwrap_or(r))
                .is_some_and(|main| self.roots.contains(&main))
        })
    }
}

/// The roots of `main`'s git worktrees: each `.git/worktrees/<name>/gitdir` names the
/// worktree's `.git` file.
fn git_worktrees(main: &Path) -> Vec<PathBuf> {
    let Ok(dirs) = std::fs::read_dir(main.join(".git/worktrees")) else {
        return Vec::new();
    };
    dirs.flatten()
        .filter_map(|d| std::fs::read_to_string(d.path().join("gitdir")).ok())
        .filter_map(|text| Some(Path::new(text.trim()).parent()?.to_path_buf()))
        .collect()
}

/// The agent `name` names (as `Agent::label` spells it), or an error listing the known ones.
pub(crate) fn agent_named(name: &str) -> Result<Agent, CliError> {
    let wanted = name.trim().to_ascii_lowercase();
    Agent::ALL
        .iter()
        .copied()
        .find(|a| a.label() == wanted)
        .ok_or_else(|| {
            let known: Vec<&str> = Agent::ALL.iter().map(|a| a.label()).collect();
            CliError::user(format!("no agent is called {name:?}"))
                .hint(format!("--agent takes one of: {}.", known.join(", ")))
        })
}

impl Scope {
    /// The scope `args` ask for, read against where the store is (`location`) and the
    /// working directory.
    pub(crate) fn resolve(
        args: &ScopeArgs,
        location: &Location,
        cwd: &Path,
    ) -> Result<Scope, CliError> {
        let agent = args.agent.as_deref().map(agent_named).transpose()?;
        let (project, why) = if let Some(p) = &args.project {
            let dir = cwd.join(p);
            let project = Project::of(&dir).ok_or_else(|| {
                CliError::user(format!("{} is in no repository", dir.display())).hint(
                    "--project takes a path inside a git or jj repository; --all-projects reads every project.",
                )
            })?;
            (Some(project), Why::Named)
        } else if args.all_projects {
            (None, Why::AllProjects)
        } else if location.reason.machine_wide() {
            match Project::of(cwd) {
                Some(p) => (Some(p), Why::Here),
                None => (None, Why::NoRepository),
            }
        } else {
            (None, Why::OwnLedger)
        };
        Ok(Scope {
            project,
            agent,
            why,
        })
    }

    /// Every project's sessions (of `agent`, if named).
    pub(crate) fn whole(agent: Option<Agent>) -> Scope {
        Scope {
            project: None,
            agent,
            why: Why::AllProjects,
        }
    }

    /// Whether the project is only the default one (a user-level ledger read in a
    /// repository) and no agent was named: what a typed session id may reach past.
    pub(crate) fn is_default_project(&self) -> bool {
        self.why == Why::Here && self.agent.is_none()
    }

    /// Whether every session is in scope.
    pub(crate) fn is_open(&self) -> bool {
        self.project.is_none() && self.agent.is_none()
    }

    /// The sessions in scope, from one pass over the sessions table (each row's agent and
    /// working directory, nothing else parsed); `None` when every session is.
    pub(crate) fn sessions(&self, tables: &Tables) -> Result<Option<SessionSet>, ViewError> {
        if self.is_open() {
            return Ok(None);
        }
        let mut seen = HashMap::new();
        let mut set = HashSet::new();
        for (id, place) in tables.session_owners()? {
            let agent_ok = self.agent.is_none_or(|a| place.agent == Some(a));
            let project_ok = self.project.as_ref().is_none_or(|p| {
                place
                    .cwd
                    .as_deref()
                    .is_some_and(|cwd| p.holds(cwd, &mut seen))
            });
            if agent_ok && project_ok {
                set.insert(id);
            }
        }
        Ok(Some(SessionSet::new(set)))
    }

    /// What the scope is, in words: the project (and why) and the agent.
    pub(crate) fn describe(&self) -> String {
        let mut s = match &self.project {
            Some(p) => format!("{} ({})", p.root.display(), self.why.sentence()),
            None => self.why.sentence().to_string(),
        };
        if let Some(a) = self.agent {
            s.push_str(&format!("; only {} sessions (--agent)", a.label()));
        }
        s
    }

    /// What the scope is and the flags that lift it; `None` when nothing narrows the read.
    pub(crate) fn lift_hint(&self) -> Option<String> {
        let mut flags = Vec::new();
        if self.project.is_some() {
            flags.push("--all-projects");
        }
        if self.agent.is_some() {
            flags.push("no --agent");
        }
        (!flags.is_empty()).then(|| {
            format!(
                "{}; {} reads beyond it",
                self.describe(),
                flags.join(" and ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn an_unknown_agent_is_refused_with_the_known_names() {
        assert_eq!(agent_named("Codex").unwrap(), Agent::Codex);
        let e = agent_named("gpt").unwrap_err().to_string();
        assert!(e.contains("no agent is called \"gpt\""), "{e}");
        assert!(e.contains("claude, codex"), "{e}");
    }

    #[test]
    fn a_project_holds_its_worktrees_and_jj_workspaces_and_not_its_neighbours() {
        let t = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(t.path()).unwrap();
        let main = base.join("acme");
        fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
        let wt = base.join("acme-wt");
        fs::create_dir_all(&wt).unwrap();
        fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        fs::write(
            main.join(".git/worktrees/wt/gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        // A jj repository beside it with a secondary workspace its main checkout does not list.
        let jj = base.join("jjrepo");
        fs::create_dir_all(jj.join(".jj/repo")).unwrap();
        let ws = base.join("jj-ws");
        fs::create_dir_all(ws.join(".jj")).unwrap();
        fs::write(ws.join(".jj/repo"), "../../jjrepo/.jj/repo").unwrap();

        let mut seen = HashMap::new();
        let p = Project::of(&wt).unwrap();
        assert_eq!(p.root, main, "a worktree names its main checkout");
        let holds = |p: &Project, cwd: &Path, seen: &mut HashMap<String, bool>| {
            p.holds(cwd.to_str().unwrap(), seen)
        };
        assert!(holds(&p, &main.join("src"), &mut seen));
        assert!(holds(&p, &wt, &mut seen));
        assert!(!holds(&p, &base.join("acme-old"), &mut seen));
        assert!(!holds(&p, &jj, &mut seen));
        let j = Project::of(&jj).unwrap();
        let mut seen = HashMap::new();
        assert!(
            holds(&j, &ws, &mut seen),
            "a jj workspace counts as its repo"
        );
        assert!(!holds(&j, &main, &mut seen));
    }
}
