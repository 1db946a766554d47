//! What the commands share, as jj's `cli_util` holds it: finding a session by prefix or
//! from `.peat/current-session`, the newest session, a missing event's error, the `--json`
//! shape of one event, today's date, and paths as typed here and as listings show them. A
//! command file calls this module and the library, never another command file's helpers.

use serde::Serialize;
use std::path::{Path, PathBuf};

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::hook::desk::{CURRENT_SESSION, read_current_session};
use crate::cli::hook::install::{self, Harness, UserLevel};
use crate::ledger::space;
use crate::reads::attribution::AttributionError;
use crate::reads::files::Wanted;
use crate::reads::moment::{Moment, MomentError};
use crate::views::Views;
use crate::views::handle::{Handles, NoSession};
use crate::views::session::newest_first;
use crate::vocab::event::{Event, EventId, Seq, SessionId};

/// A read's `--json` object with how many recorded changes its answer does not show yet:
/// `behind` is 0 when caught up, more while a writer beside the read was still folding them
/// (the stderr note says so too). Array outputs keep their shape and only the note says it.
#[derive(Serialize)]
pub(crate) struct Behind<'a, T: Serialize> {
    #[serde(flatten)]
    pub(crate) answer: &'a T,
    pub(crate) behind: u64,
}

/// One event as `--json` prints it. Its kind is the decoded [`Event`], or (for `events`,
/// which prints many) the bytes the views hold for it, copied as they are.
#[derive(Serialize)]
pub(crate) struct Row<'a, E: Serialize + ?Sized = Event> {
    pub(crate) session: &'a SessionId,
    pub(crate) seq: Seq,
    pub(crate) ts_ms: i64,
    pub(crate) ts: String,
    pub(crate) v: u16,
    pub(crate) event: &'a E,
}

impl<'a> Row<'a> {
    pub(crate) fn of(seq: Seq, env: &'a crate::vocab::event::Envelope) -> Row<'a> {
        Row::with(&env.session, seq, env.ts_ms, env.v, &env.kind)
    }
}

impl<'a, E: Serialize + ?Sized> Row<'a, E> {
    pub(crate) fn with(
        session: &'a SessionId,
        seq: Seq,
        ts_ms: i64,
        v: u16,
        event: &'a E,
    ) -> Row<'a, E> {
        Row {
            session,
            seq,
            ts_ms,
            ts: crate::vocab::time::format_iso_ms(ts_ms),
            v,
            event,
        }
    }
}

/// The session a prefix names among the sessions the views know (no ledger read), or an
/// error that says what to type instead. Looked for in the read's scope; a session outside
/// it is found too when the scope is only the default one (an id typed from an
/// `--all-projects` listing), never past an `--agent` or `--project` the person gave.
pub(crate) fn resolve_in_views(
    ctx: &Ctx,
    views: &Views,
    prefix: &str,
) -> Result<SessionId, CliError> {
    let all = views.tables.session_ids()?;
    let Some(only) = ctx.scope.sessions(&views.tables)? else {
        return explain(prefix, crate::views::handle::pick(all, prefix));
    };
    let scoped: Vec<SessionId> = all.iter().filter(|s| only.contains(s)).cloned().collect();
    match crate::views::handle::pick(scoped, prefix) {
        Err(NoSession::None) => match crate::views::handle::pick(all, prefix) {
            Ok(s) if ctx.scope.is_default_project() => Ok(s),
            Ok(s) => Err(
                CliError::not_found(format!("session {s} is outside this read's scope")).hint(
                    format!(
                        "This read shows {}.",
                        ctx.scope.lift_hint().unwrap_or_default()
                    ),
                ),
            ),
            Err(e) => explain(prefix, Err(e)),
        },
        found => explain(prefix, found),
    }
}

/// The sessions in the read's scope (`None`: every session), from the views' sessions table.
pub(crate) fn in_scope(
    ctx: &Ctx,
    views: &Views,
) -> Result<Option<crate::views::session::SessionSet>, CliError> {
    Ok(ctx.scope.sessions(&views.tables)?)
}

fn explain(prefix: &str, found: Result<SessionId, NoSession>) -> Result<SessionId, CliError> {
    match found {
        Ok(s) => Ok(s),
        Err(NoSession::None) => Err(
            CliError::not_found(format!("no session matches {prefix:?}"))
                .hint("`peat sessions` lists every session."),
        ),
        Err(NoSession::Ambiguous(many)) => {
            let names: Vec<&str> = many.iter().take(6).map(SessionId::as_str).collect();
            Err(CliError::user(format!(
                "{prefix:?} matches {} sessions: {}",
                many.len(),
                names.join(", ")
            ))
            .hint("Give more characters of the id."))
        }
    }
}

/// The moment `when` names, as `--at` spells it: a day (YYYY-MM-DD: its end), an instant
/// (2026-08-10T19:18:11Z), a session (after its last event) or SESSION:SEQ (just after that
/// event). `flag` is the option it came from, for the hint.
pub(crate) fn parse_moment(
    ctx: &Ctx,
    views: &Views,
    when: &str,
    flag: &str,
) -> Result<Moment, CliError> {
    if let Some(ms) = crate::vocab::time::end_of_local_day(when, &ctx.tz) {
        return Ok(Moment::Instant(ms));
    }
    if let Some(ms) = crate::vocab::time::parse_iso_ms(when) {
        return Ok(Moment::Instant(ms));
    }
    let (prefix, seq) = match when.rsplit_once(':') {
        Some((s, n)) if n.parse::<Seq>().is_ok() => (s, n.parse::<Seq>().ok()),
        _ => (when, None),
    };
    let session = resolve_in_views(ctx, views, prefix).map_err(|e| {
        e.hint(format!("{flag} takes a day (YYYY-MM-DD), an instant (2026-08-10T19:18:11Z), a session, or SESSION:SEQ."))
    })?;
    Ok(match seq {
        Some(seq) => Moment::After(EventId { session, seq }),
        None => Moment::EndOf(session),
    })
}

/// Why the lines of `file` (as the person named it) could not be attributed, as of `at`
/// (the moment they asked for, if any), as a sentence and what to do.
pub(crate) fn attribution_error(
    views: &Views,
    e: AttributionError,
    file: &str,
    at: Option<&str>,
) -> CliError {
    match e {
        AttributionError::View(e) => e.into(),
        AttributionError::Moment(e) => moment_error(views, e),
        AttributionError::Unknowable => {
            let at = at.map(|a| format!(" at {a}")).unwrap_or_default();
            CliError::user(format!("the record cannot tell what {file} held{at}"))
                .hint("It is in no git or jj repository, no whole write of the file precedes that moment, and the edits since cannot be undone from its text now.")
        }
    }
}

/// A moment the views could not place, as a sentence and what to do.
pub(crate) fn moment_error(views: &Views, e: MomentError) -> CliError {
    let handles = Handles::new(&views.tables);
    match e {
        MomentError::View(e) => e.into(),
        MomentError::NoEvent(id) => {
            let session = handles.of(&id.session);
            let err = CliError::user(format!("session {session} has no event {}", id.seq));
            match views.behind() {
                0 => err.hint(format!("`peat show {session}` lists its events.")),
                n => err.hint(format!(
                    "A capture is still writing ({n} recorded changes not shown yet): run it again once that finishes."
                )),
            }
        }
        MomentError::NoSession(s) => CliError::user(format!("no session {}", handles.of(&s))),
    }
}

/// Today's local date: the day windows are read relative to.
pub(crate) fn today(ctx: &Ctx) -> jiff::civil::Date {
    crate::reads::brief::local_date(ctx.now_ms, &ctx.tz)
}

/// A commit a session made, as `show` and `log` list it: the route that tied it where it
/// says "made in", and the command that explains it whole.
pub(crate) fn made_line(ctx: &Ctx, c: &crate::reads::commits::MadeCommit) -> String {
    let ui = &ctx.ui;
    let hash = &c.hash[..c.hash.len().min(12)];
    let share = c.share.map_or(String::new(), |s| {
        format!(", {:.0}% of its lines", s * 100.0)
    });
    format!(
        "{hash} {}  {}  {}",
        ui.preview(&crate::cli::ui::clip(&c.subject, 80)),
        ui.dim(&format!("[made in it, by {}{share}]", c.route.label())),
        ui.dim(&format!("▸ peat {hash}"))
    )
}

/// A recorded path as listings show it: relative to this repository when inside it.
pub(crate) fn short_path(ctx: &Ctx, p: &str) -> String {
    ctx.location
        .root
        .as_deref()
        .and_then(|r| {
            let r = std::fs::canonicalize(r).unwrap_or_else(|_| r.to_path_buf());
            Path::new(p)
                .strip_prefix(r)
                .ok()
                .map(|x| x.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| p.to_string())
}

/// The session `.peat/current-session` names: the desk's, else the one beside the store.
pub(super) fn current_session(ctx: &Ctx) -> Result<SessionId, CliError> {
    let mut dirs: Vec<&Path> = vec![&ctx.location.desk];
    dirs.extend(ctx.location.store.parent());
    if let Some(id) = dirs.iter().find_map(|d| read_current_session(d)) {
        return Ok(id);
    }
    Err(CliError::user(format!(
        "no session id: {} is missing (here and beside the ledger)",
        ctx.location.desk.join(CURRENT_SESSION).display()
    ))
    .hint("Pass --session ID (`peat sessions` lists them). The SessionStart hook writes that file in agent sessions: `peat setup` installs it."))
}

/// The session [`Views::summaries`] lists first, without reading every session's texts.
pub(crate) fn newest(
    sessions: Vec<(SessionId, crate::views::session::SessionRollup)>,
) -> Option<(SessionId, crate::views::session::SessionRollup)> {
    sessions
        .into_iter()
        .min_by(|(a, ra), (b, rb)| newest_first((a, ra), (b, rb)))
}

/// The error for an event `source` does not hold; beside a writer it may be among the
/// changes the views do not show yet.
pub(crate) fn no_event(id: &EventId, behind: u64, handles: &Handles) -> CliError {
    let short = handles.of(&id.session);
    let err = CliError::not_found(format!("session {} has no event {}", id.session, id.seq));
    match behind {
        0 => err.hint(format!("`peat events --session {short}` lists its events.")),
        n => err.hint(format!(
            "A capture is still writing ({n} recorded changes not shown yet): run it again once that finishes; `peat events --session {short}` lists its events."
        )),
    }
}

/// What a path typed here names, in the record's terms.
pub(crate) fn wanted(ctx: &Ctx, typed: &str) -> Wanted {
    let joined = ctx.cwd.join(typed);
    let abs = std::fs::canonicalize(&joined).unwrap_or_else(|_| normalize(&joined));
    let in_repo = ctx.location.root.as_deref().and_then(|root| {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        abs.strip_prefix(root)
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
    });
    // Outside a repository, a relative path is taken as typed: relative to a session's root.
    let as_typed = || {
        let plain = Path::new(typed).components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        plain.then(|| normalize(Path::new(typed)).to_string_lossy().into_owned())
    };
    let rel = in_repo.or_else(as_typed).filter(|r| !r.is_empty());
    Wanted {
        dir: !abs.is_file(),
        abs: abs.to_string_lossy().into_owned(),
        rel,
    }
}

/// `a/./b/../c` as `a/c`, for a path that does not exist (and so cannot be canonicalized).
fn normalize(p: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Bring the views up to date with what was just written, while the lock is still held:
/// the next read then starts warm. Texts to embed are queued, and the embedding pass
/// started for them.
pub(crate) fn catch_up_views(
    ctx: &Ctx,
    ledger: &crate::ledger::Ledger,
    mut model: crate::views::ModelSlot,
) -> Result<(), CliError> {
    let ui = ctx.ui;
    let caught_up =
        crate::views::stamp::open_recovering(ledger, &mut model, ctx.tz.clone(), &mut |line| {
            ui.note(line)
        });
    match caught_up {
        Ok(views) => {
            // The vectors come after, from a pass of their own: a capture never waits for
            // the model.
            crate::cli::embed_pass::start_pass_after_write(ctx, views.vectors.queued()?);
            Ok(())
        }
        Err(e) => {
            let mut err = CliError::from(e);
            let store = ledger.path();
            // The views failing for room is not damage: what was captured is safe.
            if let Some(free) = space::short_of_room(store) {
                let disk = space::mount_of(store)
                    .map_or_else(|| store.display().to_string(), |m| m.display().to_string());
                err = err.hint(format!(
                    "The events were recorded; only the views lag behind. The disk holding {} ({disk}) has {} free: free some space there, and the next read brings the views up to date.",
                    store.display(),
                    space::human(free)
                ));
            }
            Err(err)
        }
    }
}

/// Where hooks are installed: the repository root, else the working directory.
pub(crate) fn install_root(ctx: &Ctx) -> PathBuf {
    ctx.location.root.clone().unwrap_or_else(|| ctx.cwd.clone())
}

/// A path as messages show it: relative to the working directory when under it.
pub(crate) fn shown(ctx: &Ctx, p: &Path) -> String {
    p.strip_prefix(&ctx.cwd)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .map_or_else(|| p.display().to_string(), |r| r.display().to_string())
}

/// The agents this person uses here: each whose folder is on this machine (`~/.claude`,
/// `~/.codex`, `~/.gemini`, …, below `home`) or in the project (`<root>/.claude`,
/// `<root>/.codex`; for the others, peat's configuration file there: a `.github` folder says
/// nothing about Copilot CLI), and each peat's skill was laid for in the project (an install
/// leaves it even where the agent's folder is gone). With none, Claude Code when
/// `or_claude` (what `peat hook install` wires), else none.
pub(crate) fn agents(
    root: &Path,
    (claude_home, codex_home): (&Path, &Path),
    home: Option<&Path>,
    or_claude: bool,
) -> Vec<Harness> {
    let others = install::OTHERS.iter().map(|o| {
        let home = home.map(|h| h.join(o.dir)).unwrap_or_default();
        (Harness::Other(o), home, root.join(o.config))
    });
    let opencode = (
        Harness::OpenCode,
        home.map(|h| h.join(".config/opencode")).unwrap_or_default(),
        Harness::OpenCode.config_path(root),
    );
    // Cline's CLI keeps `~/.cline`; its VS Code extension makes `~/Documents/Cline`.
    let cline = [".cline", "Documents/Cline"].map(|dir| {
        (
            Harness::Cline,
            home.map(|h| h.join(dir)).unwrap_or_default(),
            Harness::Cline.config_path(root),
        )
    });
    let mut found: Vec<Harness> = [
        (
            Harness::Claude { local: false },
            claude_home.to_path_buf(),
            root.join(".claude"),
        ),
        (
            Harness::Codex,
            codex_home.to_path_buf(),
            root.join(".codex"),
        ),
    ]
    .into_iter()
    .chain(others)
    .chain([opencode])
    .chain(cline)
    .filter(|(harness, home, project)| {
        (!home.as_os_str().is_empty() && home.is_dir())
            || project.exists()
            || harness.skill_path(root).exists()
    })
    .map(|(harness, _, _)| harness)
    .collect();
    found.dedup();
    if found.is_empty() && or_claude {
        found.push(Harness::Claude { local: false });
    }
    found
}

/// Where this person's harness reads hooks and skills for every project.
pub(crate) fn user_level(ctx: &Ctx, harness: Harness) -> UserLevel {
    let home = ctx.home.clone().unwrap_or_default();
    UserLevel::of(harness, &ctx.claude_home, &ctx.codex_home, &home)
}

/// One agent's wiring in a project: what is in place, and what is not, each said with the
/// command that fixes it.
pub(crate) struct Wiring {
    pub(crate) ok: Vec<String>,
    pub(crate) missing: Vec<String>,
}

/// Whether `harness` runs `peat hook` (`entry`) on every moment peat uses, here or at user
/// level, and has peat's current skill. For Claude Code without `--local`, either of its
/// settings files will do.
pub(crate) fn wiring(
    ctx: &Ctx,
    harness: Harness,
    root: &Path,
    hook: &install::HookCommand,
) -> Result<Wiring, CliError> {
    let fix = harness.install_command();
    let user = user_level(ctx, harness);
    let mut w = Wiring {
        ok: Vec::new(),
        missing: Vec::new(),
    };
    let events = harness.moments();
    let configs = match harness {
        Harness::Claude { local: false } => vec![
            harness.config_path(root),
            Harness::Claude { local: true }.config_path(root),
        ],
        _ => vec![harness.config_path(root)],
    };
    if user.has_hooks() {
        w.ok.push(format!(
            "{}: peat hook on {events} (user level)",
            shown(ctx, &user.config)
        ));
    } else {
        let mut found = None;
        for config in &configs {
            if let Some(missing) =
                install::missing_at(harness, config, hook).map_err(CliError::user)?
            {
                if missing.is_empty() {
                    found = Some(Ok(config));
                    break;
                }
                found.get_or_insert(Err((config, missing)));
            }
        }
        match found {
            Some(Ok(config)) => {
                w.ok.push(format!("{}: peat hook on {events}", shown(ctx, config)))
            }
            Some(Err((config, missing))) => w.missing.push(format!(
                "{}: peat hook missing on {} — run: {fix}",
                shown(ctx, config),
                missing.join(", ")
            )),
            None => w
                .missing
                .push(format!("{}: missing — run: {fix}", shown(ctx, &configs[0]))),
        }
    }
    let skill = harness.skill_path(root);
    if install::skill_is_current(&skill) {
        w.ok.push(format!("{}: current", shown(ctx, &skill)));
    } else if let Some(at) = user.current_skill() {
        w.ok.push(format!("{}: current (user level)", shown(ctx, at)));
    } else {
        w.missing.push(format!(
            "{}: missing or stale — run: {fix}",
            shown(ctx, &skill)
        ));
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::session::SessionRollup;

    #[test]
    fn the_newest_session_is_the_latest_activity_and_on_a_tie_the_smaller_id() {
        let at = |id: &str, end: Option<i64>| {
            (
                SessionId(id.into()),
                SessionRollup {
                    end_ms: end,
                    ..SessionRollup::default()
                },
            )
        };
        let pick = |all: Vec<(SessionId, SessionRollup)>| newest(all).map(|(s, _)| s.0);
        assert_eq!(pick(vec![]), None);
        assert_eq!(
            pick(vec![at("a", Some(1)), at("b", Some(3)), at("c", None)]),
            Some("b".into())
        );
        assert_eq!(
            pick(vec![at("d", Some(3)), at("b", Some(3)), at("c", Some(2))]),
            Some("b".into())
        );
    }

    #[test]
    fn a_missing_path_is_normalized_without_the_disk() {
        assert_eq!(
            normalize(Path::new("/r/./src/../lib/x.rs")),
            Path::new("/r/lib/x.rs")
        );
    }

    #[test]
    fn the_agents_found_are_those_with_a_folder_or_peats_skill_and_else_claude_if_asked() {
        let t = tempfile::tempdir().unwrap();
        let p = |s: &str| t.path().join(s);
        let (claude, codex) = (p("claude"), p("codex"));
        let found = |or_claude| super::agents(&p("root"), (&claude, &codex), None, or_claude);
        use super::Harness::{Claude, Codex};
        assert_eq!(found(true), vec![Claude { local: false }]);
        assert_eq!(found(false), vec![]);
        std::fs::create_dir_all(&codex).unwrap();
        assert_eq!(found(true), vec![Codex]);
        std::fs::create_dir_all(p("root/.claude")).unwrap();
        assert_eq!(found(false), vec![Claude { local: false }, Codex]);
        // Codex's folder gone, peat's skill for it still laid here: still found.
        std::fs::remove_dir_all(&codex).unwrap();
        std::fs::create_dir_all(p("root/.agents/skills/peat")).unwrap();
        std::fs::write(p("root/.agents/skills/peat/SKILL.md"), "x").unwrap();
        assert_eq!(found(false), vec![Claude { local: false }, Codex]);
        // Gemini CLI's folder in the home folder; a `.github` folder is no Copilot CLI.
        std::fs::create_dir_all(p("home/.gemini")).unwrap();
        std::fs::create_dir_all(p("root/.github/workflows")).unwrap();
        assert_eq!(
            super::agents(&p("root"), (&claude, &codex), Some(&p("home")), false),
            vec![
                Claude { local: false },
                Codex,
                Harness::Other(&install::OTHERS[0])
            ]
        );
    }
}
