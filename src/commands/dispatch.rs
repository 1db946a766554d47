//! What bare `peat THING` means: classify the words by shape (`crate::resolve` holds the
//! order and its reasons), say which reading was chosen, and answer it.
//!
//! The first stdout line names the reading (`== session 3f6c2a9e (matched prefix 3f6c) ==`);
//! shapes passed over on the way are noted on stderr. With `--json`, stdout is one document:
//! `{"reading": {"kind": …, "passed": […]}, "result": …}`.

use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::Ctx;
use crate::error::CliError;
use crate::event::{Event, EventId, SessionId, TouchOp};
use crate::ledger::{Ledger, Mode};
use crate::recall::{Query, Recall};
use crate::resolve::{Classified, CommitFound, Passed, Probes, Reading, SessionMatch, classify};
use crate::session::{NoSession, SessionSummary};
use crate::ui::clip;
use crate::views::{ModelSlot, Views};
use crate::window::Window;

/// How many lines a file or commit reading lists before pointing at `--json`.
const SHOWN: usize = 20;

/// Today's local date: the day windows are read relative to.
pub fn today(ctx: &Ctx) -> jiff::civil::Date {
    crate::brief::local_date(ctx.now_ms, &ctx.tz)
}

/// Read `words` by their shape.
pub fn run(ctx: &Ctx, words: &[String]) -> Result<u8, CliError> {
    let mut live = Live::new(ctx);
    let Classified { reading, passed } = classify(words, &mut live)?;
    // Say why a word that looked like a file, session or commit was searched instead; a
    // reading that answered needs no excuse (`--json` carries them all).
    let fell_back = matches!(
        reading,
        Reading::Search(_) | Reading::Bead(_) | Reading::Subject(_)
    );
    if !ctx.json && fell_back {
        for p in &passed {
            ctx.ui.note(&p.note());
        }
    }
    let head = Head {
        reading: &reading,
        passed: &passed,
    };
    match &reading {
        Reading::Window(w) => {
            drop(live);
            window(ctx, &head, w)
        }
        Reading::Session { id, seq, .. } => {
            if let Some(seq) = seq {
                let ledger = live.ledger()?.ok_or_else(missing_store)?;
                let event = EventId {
                    session: id.clone(),
                    seq: crate::event::Seq(*seq),
                };
                if ledger.get(&event)?.is_none() {
                    return Err(CliError::not_found(format!("session {id} has no event {seq}"))
                        .hint(format!(
                            "`peat show {}` lists what it holds; `peat events --session {}` every event.",
                            id.short(),
                            id.short()
                        )));
                }
            }
            drop(live);
            let args = super::show::ShowArgs {
                session: id.to_string(),
                seq: *seq,
            };
            delegate(ctx, &head, |ctx| super::show::run(ctx, &args))
        }
        Reading::Sessions { seq, ids, .. } => sessions(ctx, &head, &mut live, ids, *seq),
        Reading::File { shown, line, .. } => file(ctx, &head, &mut live, shown, *line),
        Reading::Commit(found) => commit(ctx, &head, &mut live, found),
        Reading::Subject(name) => subject(ctx, &head, &mut live, name),
        Reading::Bead(id) => bead(ctx, &head, &mut live, id),
        Reading::Search(words) => search(ctx, &head, &mut live, words),
    }
}

/// The reading, for the header line or the `--json` envelope.
struct Head<'a> {
    reading: &'a Reading,
    passed: &'a [Passed],
}

impl Head<'_> {
    /// Print the header line (text mode only).
    fn print(&self, ctx: &Ctx, out: &mut impl Write) -> std::io::Result<()> {
        if !ctx.json {
            writeln!(out, "{}", ctx.ui.bold(&ctx.ui.safe(&self.reading.header())))?;
        }
        Ok(())
    }

    /// Print `{"reading": …, "result": result}` (JSON mode only).
    fn json<T: Serialize>(&self, out: &mut impl Write, result: &T) -> Result<(), CliError> {
        let doc = serde_json::json!({
            "reading": self.reading.json(self.passed),
            "result": result,
        });
        serde_json::to_writer(&mut *out, &doc).map_err(std::io::Error::from)?;
        writeln!(out)?;
        Ok(())
    }
}

/// Hand the answer to another command. Under `--json` its one JSON document becomes the
/// envelope's `result`.
fn delegate(
    ctx: &Ctx,
    head: &Head<'_>,
    answer: impl FnOnce(&Ctx) -> Result<u8, CliError>,
) -> Result<u8, CliError> {
    let mut out = std::io::stdout();
    if ctx.json {
        let reading =
            serde_json::to_string(&head.reading.json(head.passed)).map_err(std::io::Error::from)?;
        write!(out, "{{\"reading\":{reading},\"result\":")?;
        out.flush()?;
        let code = answer(ctx)?;
        writeln!(out, "}}")?;
        return Ok(code);
    }
    head.print(ctx, &mut out)?;
    out.flush()?;
    answer(ctx)
}

fn window(ctx: &Ctx, head: &Head<'_>, w: &Window) -> Result<u8, CliError> {
    if ctx.json {
        // A store that cannot open must fail before the envelope is begun.
        drop(ctx.open(Mode::Existing)?);
    }
    let args = super::zoom::ZoomArgs {
        window: w.key.clone(),
    };
    delegate(ctx, head, |ctx| super::zoom::run(ctx, &args))
}

fn missing_store() -> CliError {
    CliError::not_found("no ledger here")
        .hint("`peat import` captures the transcripts already on this machine.")
}

// ---------------------------------------------------------------------------------------
// The probes over the real store and repository.

/// The lookups, opening the store only when a reading needs it (a window never does).
struct Live<'a> {
    ctx: &'a Ctx,
    today: jiff::civil::Date,
    store: Store,
    /// What the file probe found, kept for the answer.
    touches: Vec<Touch>,
    /// What the commit probe found, kept for the answer.
    made: Vec<Made>,
}

enum Store {
    Unopened,
    Missing,
    Open(Box<Opened>),
}

struct Opened {
    ledger: Ledger,
    /// Opened (and caught up) only when a reading needs the views.
    views: Option<Views>,
    model: ModelSlot,
}

impl<'a> Live<'a> {
    fn new(ctx: &'a Ctx) -> Live<'a> {
        Live {
            ctx,
            today: today(ctx),
            store: Store::Unopened,
            touches: Vec::new(),
            made: Vec::new(),
        }
    }

    fn open(&mut self) -> Result<(), CliError> {
        if matches!(self.store, Store::Unopened) {
            self.store = if crate::ledger::recorded(&self.ctx.location.store) {
                Store::Open(Box::new(Opened {
                    ledger: self.ctx.open(Mode::Existing)?,
                    views: None,
                    model: self.ctx.model_slot()?,
                }))
            } else {
                Store::Missing
            };
        }
        Ok(())
    }

    /// The ledger, or `None` when there is no store here.
    fn ledger(&mut self) -> Result<Option<&Ledger>, CliError> {
        self.open()?;
        Ok(match &self.store {
            Store::Open(o) => Some(&o.ledger),
            _ => None,
        })
    }

    /// The ledger and its views (caught up), or `None` when there is no store here.
    fn views(&mut self) -> Result<Option<(&Ledger, &Views, &mut ModelSlot)>, CliError> {
        self.open()?;
        let Store::Open(opened) = &mut self.store else {
            return Ok(None);
        };
        let Opened {
            ledger,
            views,
            model,
        } = &mut **opened;
        if views.is_none() {
            let ui = self.ctx.ui;
            *views = Some(Views::open(ledger, model, self.ctx.tz.clone(), &mut |l| {
                ui.note(l)
            })?);
        }
        Ok(views.as_ref().map(|v| (&*ledger, v, model)))
    }

    /// The ledger and views, or the error that says there is no store.
    fn need_views(&mut self) -> Result<(&Ledger, &Views, &mut ModelSlot), CliError> {
        if !crate::ledger::recorded(&self.ctx.location.store) {
            // Let opening say what is missing and what to do.
            self.ctx.open(Mode::Existing)?;
        }
        self.views()?.ok_or_else(missing_store)
    }
}

impl Probes for Live<'_> {
    type Error = CliError;

    fn path(&mut self, word: &str) -> Option<PathBuf> {
        if word.is_empty() {
            return None;
        }
        let joined = self.ctx.cwd.join(word);
        joined
            .exists()
            .then(|| std::fs::canonicalize(&joined).unwrap_or(joined))
    }

    fn touched(&mut self, path: &Path) -> Result<bool, CliError> {
        let ctx = self.ctx;
        let Some((ledger, views, _)) = self.views()? else {
            return Ok(false);
        };
        let touches = file_touches(ctx, ledger, views, path)?;
        self.touches = touches;
        Ok(!self.touches.is_empty())
    }

    fn window(&mut self, word: &str) -> Option<Window> {
        crate::window::parse(word, self.today)
    }

    fn sessions(&mut self, prefix: &str) -> Result<SessionMatch, CliError> {
        // The sessions view knows every session: no ledger read.
        let Some((_, views, _)) = self.views()? else {
            return Ok(SessionMatch::None);
        };
        let ids = views
            .tables
            .all_sessions()?
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        Ok(match crate::session::pick(ids, prefix) {
            Ok(id) => SessionMatch::One(id),
            Err(NoSession::None) => SessionMatch::None,
            Err(NoSession::Ambiguous(ids)) => SessionMatch::Many(ids),
        })
    }

    fn commit(&mut self, word: &str) -> Result<Option<CommitFound>, CliError> {
        let resolved = crate::vcs::resolve_commit(&self.ctx.cwd, word);
        let wanted = resolved
            .as_ref()
            .map_or_else(|| word.to_lowercase(), |r| r.hash.to_lowercase());
        self.made = match self.views()? {
            Some((ledger, views, _)) => commits_made(ledger, views, &wanted)?,
            None => Vec::new(),
        };
        let recorded = !self.made.is_empty();
        Ok((resolved.is_some() || recorded).then(|| CommitFound {
            rev: word.to_string(),
            hash: resolved.as_ref().map(|r| r.hash.clone()),
            subject: resolved.as_ref().map(|r| r.subject.clone()),
            ts_ms: resolved.as_ref().and_then(|r| r.ts_ms),
            recorded,
        }))
    }

    fn subject(&mut self, name: &str) -> Result<bool, CliError> {
        Ok(match self.views()? {
            Some((_, views, _)) => views.tables.subject(name)?.is_some(),
            None => false,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Files.

/// One recorded edit of a file.
#[derive(Clone, Debug, Serialize)]
struct Touch {
    session: SessionId,
    seq: u32,
    ts_ms: i64,
    age: String,
    op: TouchOp,
    /// The path as the agent recorded it.
    path: String,
    failed: bool,
}

/// The recorded edits of `path` (a file, or every file under a directory), newest first.
/// Paths are recorded absolute, as the agent saw them: an exact match wins; failing that,
/// the path relative to the repository root is matched as a suffix, which finds edits made
/// in another checkout of the same repository.
fn file_touches(
    ctx: &Ctx,
    ledger: &Ledger,
    views: &Views,
    path: &Path,
) -> Result<Vec<Touch>, CliError> {
    let abs = path.to_string_lossy().into_owned();
    let dir = path.is_dir();
    let root = ctx
        .location
        .root
        .as_deref()
        .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.to_path_buf()));
    let rel = root
        .as_deref()
        .and_then(|r| path.strip_prefix(r).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|r| !r.is_empty());
    let mut exact: BTreeSet<String> = BTreeSet::new();
    let mut suffix: BTreeSet<String> = BTreeSet::new();
    for (_, rollup) in views.tables.all_sessions()? {
        for p in rollup.files.keys() {
            let under = dir && p.starts_with(&format!("{}/", abs.trim_end_matches('/')));
            if *p == abs || under {
                exact.insert(p.clone());
            } else if let Some(rel) = &rel {
                let tail = format!("/{rel}");
                if p.ends_with(&tail) || (dir && p.contains(&format!("{tail}/"))) {
                    suffix.insert(p.clone());
                }
            }
        }
    }
    let paths = if exact.is_empty() { suffix } else { exact };
    let mut out = Vec::new();
    for p in &paths {
        for id in views.tables.touches_of(p)? {
            let Some(env) = ledger.get(&id)? else {
                continue;
            };
            let Event::FileTouch {
                path: first,
                op,
                failed,
                more,
                ..
            } = &env.kind
            else {
                continue;
            };
            let op = if first == p {
                *op
            } else {
                more.iter().find(|t| &t.path == p).map_or(*op, |t| t.op)
            };
            out.push(Touch {
                session: id.session,
                seq: id.seq.0,
                ts_ms: env.ts_ms,
                age: crate::time::age(ctx.now_ms, env.ts_ms),
                op,
                path: p.clone(),
                failed: *failed,
            });
        }
    }
    out.sort_by(|a, b| (b.ts_ms, &b.session, b.seq).cmp(&(a.ts_ms, &a.session, a.seq)));
    Ok(out)
}

fn op_label(op: TouchOp) -> String {
    match serde_json::to_value(op) {
        Ok(serde_json::Value::String(s)) => s.replace('_', "-"),
        _ => "touch".to_string(),
    }
}

fn file(
    ctx: &Ctx,
    head: &Head<'_>,
    live: &mut Live<'_>,
    shown: &str,
    line: Option<u32>,
) -> Result<u8, CliError> {
    let touches = std::mem::take(&mut live.touches);
    let mut out = std::io::stdout().lock();
    if ctx.json {
        head.json(&mut out, &serde_json::json!({ "touches": touches }))?;
        return Ok(0);
    }
    head.print(ctx, &mut out)?;
    let ui = &ctx.ui;
    let canonical = live.path(shown).map(|p| p.to_string_lossy().into_owned());
    for t in touches.iter().take(SHOWN) {
        let mut tag = format!("{} · {}", t.session.short(), t.age);
        if t.failed {
            tag.push_str(" · failed");
        }
        let mut what = op_label(t.op);
        if canonical.as_deref() != Some(t.path.as_str()) {
            what.push(' ');
            what.push_str(&short_path(ctx, &t.path));
        }
        writeln!(
            out,
            "  {} {}  {}",
            ui.dim(&format!("[{tag}]")),
            ui.safe(&what),
            ui.dim(&format!("▸ peat show {} {}", t.session.short(), t.seq))
        )?;
    }
    if touches.len() > SHOWN {
        let sessions: BTreeSet<&SessionId> = touches.iter().map(|t| &t.session).collect();
        writeln!(
            out,
            "  … {} more edits ({} sessions in all)  {}",
            touches.len() - SHOWN,
            sessions.len(),
            ui.dim(&format!("▸ peat {shown} --json"))
        )?;
    }
    let what = match line {
        Some(n) => format!("line {n}: line-level attribution is not built yet;"),
        None => "line-level attribution is not built yet;".to_string(),
    };
    ctx.ui
        .note(&format!("{what} these are the recorded edits of the file."));
    Ok(0)
}

/// A recorded path as listings show it: relative to this repository when inside it.
fn short_path(ctx: &Ctx, p: &str) -> String {
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

// ---------------------------------------------------------------------------------------
// Commits.

/// A commit a recorded session made.
#[derive(Clone, Debug, Serialize)]
struct Made {
    session: SessionId,
    seq: u32,
    ts_ms: i64,
    age: String,
    /// The hash as the agent's command printed it.
    hash: String,
    message: String,
    branch: Option<String>,
    place: String,
}

/// Whether two hashes name the same commit: one is a prefix of the other (7+ digits).
fn same_commit(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    a.len().min(b.len()) >= 7 && (a.starts_with(&b) || b.starts_with(&a))
}

/// The commits recorded sessions made whose hash matches `wanted`.
fn commits_made(ledger: &Ledger, views: &Views, wanted: &str) -> Result<Vec<Made>, CliError> {
    let mut out = Vec::new();
    for (session, rollup) in views.tables.all_sessions()? {
        if !rollup.commits.keys().any(|h| same_commit(h, wanted)) {
            continue;
        }
        for item in ledger.session_events(&session) {
            let (id, env) = item?;
            let (hash, message, branch) = match &env.kind {
                Event::Committed {
                    hash,
                    message,
                    branch,
                    ..
                } => (hash, message, branch.clone()),
                Event::Commit { hash, message } => (hash, message, None),
                _ => continue,
            };
            if same_commit(hash, wanted) {
                out.push(Made {
                    session: session.clone(),
                    seq: id.seq.0,
                    ts_ms: env.ts_ms,
                    age: String::new(),
                    hash: hash.clone(),
                    message: message.clone(),
                    branch,
                    place: rollup.place(),
                });
            }
        }
    }
    out.sort_by(|a, b| (b.ts_ms, &b.session, b.seq).cmp(&(a.ts_ms, &a.session, a.seq)));
    Ok(out)
}

fn commit(
    ctx: &Ctx,
    head: &Head<'_>,
    live: &mut Live<'_>,
    found: &CommitFound,
) -> Result<u8, CliError> {
    let mut made = std::mem::take(&mut live.made);
    for m in &mut made {
        m.age = crate::time::age(ctx.now_ms, m.ts_ms);
    }
    let mut out = std::io::stdout().lock();
    if ctx.json {
        head.json(
            &mut out,
            &serde_json::json!({ "commit": found, "sessions": made }),
        )?;
        return Ok(if made.is_empty() { 1 } else { 0 });
    }
    head.print(ctx, &mut out)?;
    let ui = &ctx.ui;
    if made.is_empty() {
        let day = found.ts_ms.and_then(|ms| {
            jiff::Timestamp::from_millisecond(ms)
                .ok()
                .map(|t| t.to_zoned_datetime(ctx.tz.clone()).date().to_string())
        });
        let described = match &found.subject {
            Some(s) if !s.is_empty() => format!("commit {} ({})", found.rev, s),
            _ => format!("commit {}", found.rev),
        };
        let handle = day
            .as_ref()
            .map(|d| format!("  {}", ui.dim(&format!("▸ peat {d}"))))
            .unwrap_or_default();
        writeln!(
            out,
            "{} was not made by a recorded session{handle}",
            ui.safe(&described)
        )?;
        let mut hint = format!("`git show {}` shows the change", found.rev);
        if let Some(d) = &day {
            hint.push_str(&format!("; `peat {d}` the sessions of the day it was made"));
        }
        if let Some(s) = found.subject.as_deref().filter(|s| !s.is_empty()) {
            hint.push_str(&format!(
                "; `peat {:?}` searches for its message",
                clip(s, 60)
            ));
        }
        ctx.ui.note(&format!("{hint}."));
        return Ok(1);
    }
    if let (Some(hash), Some(subject)) = (&found.hash, &found.subject) {
        writeln!(out, "{} {}", &hash[..hash.len().min(12)], ui.safe(subject))?;
    }
    for m in made.iter().take(SHOWN) {
        let mut what = format!("{} {}", m.hash, clip(&m.message, 100));
        if let Some(b) = &m.branch {
            what.push_str(&format!(" ({b})"));
        }
        writeln!(
            out,
            "  {} {}  {}",
            ui.dim(&format!(
                "[{} · {} · {}]",
                m.session.short(),
                m.age,
                m.place
            )),
            ui.safe(&what),
            ui.dim(&format!("▸ peat show {} {}", m.session.short(), m.seq))
        )?;
    }
    Ok(0)
}

// ---------------------------------------------------------------------------------------
// Ambiguous session prefixes.

#[derive(Serialize)]
struct Candidate {
    session: SessionId,
    place: String,
    end_ms: Option<i64>,
    first_prompt: Option<String>,
}

fn sessions(
    ctx: &Ctx,
    head: &Head<'_>,
    live: &mut Live<'_>,
    ids: &[SessionId],
    seq: Option<u32>,
) -> Result<u8, CliError> {
    let (ledger, views, _) = live.need_views()?;
    let mut all = Vec::new();
    for id in ids {
        let rollup = views.tables.session(id)?.unwrap_or_default();
        let s = SessionSummary::hydrate(id.clone(), rollup, |seq| {
            let env = ledger
                .get(&EventId {
                    session: id.clone(),
                    seq,
                })
                .ok()
                .flatten()?;
            match env.kind {
                Event::UserMsg { text, .. } => Some((env.ts_ms, text)),
                _ => None,
            }
        });
        all.push(Candidate {
            session: s.session,
            place: s.rollup.place(),
            end_ms: s.rollup.end_ms,
            first_prompt: s.first_prompt.map(|c| c.text),
        });
    }
    all.sort_by(|a, b| {
        b.end_ms
            .cmp(&a.end_ms)
            .then_with(|| a.session.cmp(&b.session))
    });
    let mut out = std::io::stdout().lock();
    if ctx.json {
        head.json(&mut out, &all)?;
        return Ok(0);
    }
    head.print(ctx, &mut out)?;
    let ui = &ctx.ui;
    for c in &all {
        let age = c
            .end_ms
            .map_or_else(|| "?".to_string(), |t| crate::time::age(ctx.now_ms, t));
        let handle = match seq {
            Some(n) => format!("▸ peat show {} {n}", c.session),
            None => format!("▸ peat show {}", c.session),
        };
        writeln!(
            out,
            "  {} {}  {}",
            ui.dim(&format!("[{} · {age} · {}]", c.session.short(), c.place)),
            ui.safe(&clip(c.first_prompt.as_deref().unwrap_or(""), 100)),
            ui.dim(&handle)
        )?;
    }
    ctx.ui
        .note("several sessions start with that; give more characters of the id.");
    Ok(0)
}

// ---------------------------------------------------------------------------------------
// Subjects, beads and search.

fn subject(ctx: &Ctx, head: &Head<'_>, live: &mut Live<'_>, name: &str) -> Result<u8, CliError> {
    let (_, views, _) = live.need_views()?;
    let Some(trail) = super::subjects::trail(views, name, ctx.now_ms)? else {
        return Err(CliError::not_found(format!("no such subject: {name:?}")));
    };
    let mut out = std::io::stdout().lock();
    if ctx.json {
        head.json(&mut out, &trail)?;
        return Ok(0);
    }
    head.print(ctx, &mut out)?;
    super::subjects::write_trail(ctx, &mut out, &trail)?;
    Ok(0)
}

fn bead(ctx: &Ctx, head: &Head<'_>, live: &mut Live<'_>, id: &str) -> Result<u8, CliError> {
    let (_, views, model) = live.need_views()?;
    let query = Query {
        words: format!("\"{id}\""),
        limit: 50,
        ..Default::default()
    };
    let mut result = crate::recall::recall(views, model, &query)?;
    // Only texts that name the id itself: the words around it are not the bead.
    let needle = id.to_lowercase();
    result
        .hits
        .retain(|h| h.row.text.to_lowercase().contains(&needle));
    result.hits.truncate(12);
    result.query = id.to_string();
    answer_recall(ctx, head, &result)
}

fn search(ctx: &Ctx, head: &Head<'_>, live: &mut Live<'_>, words: &str) -> Result<u8, CliError> {
    let (_, views, model) = live.need_views()?;
    let query = Query {
        words: words.to_string(),
        limit: 12,
        ..Default::default()
    };
    let result = crate::recall::recall(views, model, &query)?;
    answer_recall(ctx, head, &result)
}

fn answer_recall(ctx: &Ctx, head: &Head<'_>, result: &Recall) -> Result<u8, CliError> {
    if ctx.json {
        let mut out = std::io::stdout().lock();
        head.json(&mut out, result)?;
        return Ok(0);
    }
    {
        let mut out = std::io::stdout().lock();
        head.print(ctx, &mut out)?;
    }
    super::recall::print(ctx, result, ctx.now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_when_one_is_a_prefix_of_the_other() {
        assert!(same_commit("abc1234", "abc1234def567"));
        assert!(same_commit("ABC1234DEF", "abc1234"));
        assert!(!same_commit("abc1234", "abc1235"));
        assert!(!same_commit("abc123", "abc1234"), "too short to say");
    }
}
