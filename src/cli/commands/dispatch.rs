//! What bare `peat THING` means: classify the words by shape (`crate::reads::resolve` holds the
//! order and its reasons), say which reading was chosen, and answer it.
//!
//! The first stdout line names the reading (`== session 3f6c2a9e (matched prefix 3f6c) ==`);
//! shapes passed over on the way are noted on stderr. With `--json`, stdout is one document:
//! `{"reading": {"kind": …, "passed": […]}, "result": …}`.

use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::Behind;
use crate::cli::shared::today;
use crate::cli::ui::clip;
use crate::ledger::{Ledger, Mode};
use crate::reads::recall::{Query, Recall};
use crate::reads::resolve::{
    Classified, CommitFound, Miss, Passed, Probes, Reading, SessionMatch, classify,
};
use crate::views::handle::{Handles, NoSession};
use crate::views::session::SessionSummary;
use crate::views::source::EventSource;
use crate::views::{ModelSlot, Views};
use crate::vocab::event::{Event, EventId, Seq, SessionId};
use crate::vocab::window::Window;

/// How many lines a file or commit reading lists before pointing at `--json`.
const SHOWN: usize = 20;

/// Read `words` by their shape.
pub(crate) fn run(ctx: &Ctx, words: &[String]) -> Result<u8, CliError> {
    if let [word] = words
        && let Some(why) = crate::vocab::window::invalid_date(word)
    {
        return Err(CliError::user(why).hint(format!(
            "Name a real day or period ({}); to search for the text, use `peat recall {word}`.",
            crate::vocab::window::WANT
        )));
    }
    let mut live = Live::new(ctx);
    let Classified { reading, passed } = classify(words, &mut live)?;
    // Say why a word that looked like a file, session or commit was searched instead; a
    // reading that answered needs no excuse (`--json` carries them all).
    let fell_back = matches!(
        reading,
        Reading::Search(_) | Reading::Bead(_) | Reading::Subject(_)
    );
    if !ctx.json && fell_back {
        for note in passed.iter().filter_map(Passed::note) {
            ctx.ui.note(&note);
        }
    }
    // The header names a session by its handle, printed once the views close.
    let handles = match &reading {
        Reading::Session { id, .. } => match live.views()? {
            Some((_, views, _)) => Handles::new(&views.tables).keep([id]),
            None => Handles::without_views(),
        },
        _ => Handles::without_views(),
    };
    let head = Head {
        reading: &reading,
        passed: &passed,
        handles: &handles,
    };
    match &reading {
        Reading::Window(w) => {
            drop(live);
            window(ctx, &head, w)
        }
        Reading::Session { id, seq, .. } => {
            if let Some(seq) = seq {
                // The views know the event (beside a writer too): no wait for the ledger.
                let (_, views, _) = live.need_views()?;
                let event = EventId {
                    session: id.clone(),
                    seq: *seq,
                };
                if EventSource::of(views).get(&event)?.is_none() {
                    let behind = views.behind();
                    return Err(crate::cli::shared::no_event(&event, behind, head.handles));
                }
            }
            drop(live);
            let args = super::show::ShowArgs {
                session: Some(id.to_string()),
                seq: *seq,
                titled: false,
                full: false,
            };
            delegate(ctx, &head, |ctx| super::show::run(ctx, &args))
        }
        Reading::Sessions { seq, ids, .. } => sessions(ctx, &head, &mut live, ids, *seq),
        Reading::File { shown, line, .. } => file(ctx, &head, &mut live, shown, *line),
        Reading::Commit(found) => commit(ctx, &head, &mut live, found),
        Reading::Subject(name) => subject(ctx, &head, &mut live, name),
        Reading::Missed(miss) => missed(ctx, &head, &mut live, miss),
        Reading::Bead(id) => bead(ctx, &head, &mut live, id),
        Reading::Search(words) => search(ctx, &head, &mut live, words),
    }
}

/// The reading, for the header line or the `--json` envelope.
struct Head<'a> {
    reading: &'a Reading,
    passed: &'a [Passed],
    handles: &'a Handles<'static>,
}

impl Head<'_> {
    /// Print the header line (text mode only).
    fn print(&self, ctx: &Ctx, out: &mut impl Write) -> std::io::Result<()> {
        if !ctx.json {
            let header = self.reading.header(self.passed, self.handles);
            writeln!(out, "{}", ctx.ui.bold(&ctx.ui.safe(&header)))?;
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
    if ctx.json && !crate::ledger::recorded(&ctx.location.store) {
        // A store that cannot open must fail before the envelope is begun (a busy one is
        // read as it stands: it need not wait).
        drop(ctx.open(Mode::Existing)?);
    }
    let args = super::zoom::ZoomArgs {
        window: w.key.clone(),
        titled: false,
        list: Default::default(),
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
}

enum Store {
    Unopened,
    Missing,
    Open(Box<Opened>),
}

/// The store as [`Ctx::read_views`] opens it: beside a writer, the ledger is not held.
struct Opened {
    ledger: Ledger,
    views: Views,
    model: ModelSlot,
}

impl<'a> Live<'a> {
    fn new(ctx: &'a Ctx) -> Live<'a> {
        Live {
            ctx,
            today: today(ctx),
            store: Store::Unopened,
        }
    }

    /// Open the store for the views alone: while a writer holds it, as they stand.
    fn open(&mut self) -> Result<(), CliError> {
        if matches!(self.store, Store::Unopened) {
            self.store = if crate::ledger::recorded(&self.ctx.location.store) {
                let (ledger, views, model) = self.ctx.read_views()?;
                Store::Open(Box::new(Opened {
                    ledger,
                    views,
                    model,
                }))
            } else {
                Store::Missing
            };
        }
        Ok(())
    }

    /// Open the store for a search: the model starts loading on a thread of its own
    /// (see [`ModelSlot::prefetch`]) while the views open.
    fn open_to_search(&mut self, query: &str) -> Result<(), CliError> {
        if matches!(self.store, Store::Unopened)
            && crate::ledger::recorded(&self.ctx.location.store)
        {
            let (ledger, views, model) = self.ctx.read_views_to_search(query)?;
            self.store = Store::Open(Box::new(Opened {
                ledger,
                views,
                model,
            }));
        }
        self.open()
    }

    /// The ledger and its views, or `None` when there is no store here.
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
        Ok(Some((&*ledger, &*views, model)))
    }

    /// The ledger and views, or the error that says there is no store. Beside a writer the
    /// ledger is not held; whole events are read from the views' copy ([`EventSource`]).
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
        if joined.exists() {
            return Some(std::fs::canonicalize(&joined).unwrap_or(joined));
        }
        // A file that is not here may still be in the record (deleted since, or written in
        // another checkout): a word shaped like a path is looked up.
        crate::reads::resolve::is_path_shape(word).then_some(joined)
    }

    fn here(&mut self, path: &Path) -> bool {
        path.exists()
    }

    fn touched(&mut self, word: &str) -> Result<bool, CliError> {
        let ctx = self.ctx;
        let Some((_, views, _)) = self.views()? else {
            return Ok(false);
        };
        let wanted = crate::cli::shared::wanted(ctx, word);
        Ok(!crate::reads::files::recorded_history(views, &wanted)?.is_empty())
    }

    fn window(&mut self, word: &str) -> Option<Window> {
        crate::vocab::window::parse(word, self.today)
    }

    fn sessions(&mut self, prefix: &str) -> Result<SessionMatch, CliError> {
        // The sessions view knows every session: no ledger read.
        let Some((_, views, _)) = self.views()? else {
            return Ok(SessionMatch::None);
        };
        Ok(
            match crate::views::handle::pick(views.tables.session_ids()?, prefix) {
                Ok(id) => SessionMatch::One(id),
                Err(NoSession::None) => SessionMatch::None,
                Err(NoSession::Ambiguous(ids)) => SessionMatch::Many(ids),
            },
        )
    }

    fn commit(&mut self, word: &str) -> Result<Option<CommitFound>, CliError> {
        // Only what classifying needs: does the repository or the record know this commit?
        // Explaining it (its message, its diff, every route) waits for the answer.
        let resolved = crate::reads::vcs::resolve_commit(&self.ctx.cwd, word);
        let hash = resolved
            .as_ref()
            .map_or_else(|| word.to_lowercase(), |r| r.hash.to_lowercase());
        let recorded = match self.views()? {
            Some((_, views, _)) => {
                crate::reads::commits::recorded(&views.tables.all_sessions()?, &hash)
            }
            None => false,
        };
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

fn file(
    ctx: &Ctx,
    head: &Head<'_>,
    live: &mut Live<'_>,
    shown: &str,
    line: Option<u32>,
) -> Result<u8, CliError> {
    // The readings open the store themselves.
    drop(std::mem::replace(&mut live.store, Store::Unopened));
    match line {
        // One line: who last wrote it, as `peat blame FILE -L N` says.
        Some(n) => {
            let args = super::blame::BlameArgs {
                file: shown.to_string(),
                lines: Some(n.to_string()),
                at: None,
            };
            delegate(ctx, head, |ctx| super::blame::run(ctx, &args))
        }
        None => {
            let args = super::file::FileArgs {
                path: shown.to_string(),
                list: Default::default(),
            };
            delegate(ctx, head, |ctx| super::file::run(ctx, &args))
        }
    }
}

/// A word whose shape left no doubt named nothing recorded: said so, never searched for.
fn missed(ctx: &Ctx, head: &Head<'_>, live: &mut Live<'_>, miss: &Miss) -> Result<u8, CliError> {
    // With no store here, that is what to say.
    live.need_views()?;
    let mut out = std::io::stdout().lock();
    match ctx.json {
        true => head.json(&mut out, &serde_json::Value::Null)?,
        false => head.print(ctx, &mut out)?,
    }
    let (what, instead) = miss.said();
    Err(CliError::not_found(what).hint(instead))
}

// ---------------------------------------------------------------------------------------
// Commits.

/// A session tied to the commit, as the answer lists it.
#[derive(Clone, Debug, Serialize)]
struct TiedSession {
    #[serde(flatten)]
    tie: crate::reads::commits::Tie,
    age: Option<String>,
    place: String,
    /// The prompt behind the tie's event, else the session's first prompt.
    prompt: Option<crate::reads::files::Prompt>,
    show: String,
}

fn tied(
    ctx: &Ctx,
    views: &Views,
    handles: &Handles,
    prompts: &mut crate::reads::files::Prompts,
    tie: &crate::reads::commits::Tie,
) -> Result<TiedSession, CliError> {
    let rollup = views.tables.session(&tie.session)?.unwrap_or_default();
    let prompt = match tie.seq {
        Some(seq) => prompts.answered_by(views, &tie.session, seq)?,
        None => rollup
            .first_prompt_seq()
            .and_then(|seq| views.cited(&tie.session, seq))
            .map(|c| crate::reads::files::Prompt {
                seq: c.seq,
                ts_ms: c.ts_ms,
                text: c.text,
            }),
    };
    let short = handles.of(&tie.session);
    Ok(TiedSession {
        age: tie
            .ts_ms
            .or(rollup.end_ms)
            .map(|ms| crate::vocab::time::age(ctx.now_ms, ms, &ctx.tz)),
        place: rollup.place(),
        prompt,
        show: match tie.seq {
            Some(seq) => format!("peat show {short} {seq}"),
            None => format!("peat log {short}"),
        },
        tie: tie.clone(),
    })
}

fn commit(
    ctx: &Ctx,
    head: &Head<'_>,
    live: &mut Live<'_>,
    found: &CommitFound,
) -> Result<u8, CliError> {
    let cwd = &ctx.cwd;
    let commit = crate::reads::commits::Commit {
        hash: found
            .hash
            .clone()
            .unwrap_or_else(|| found.rev.to_lowercase()),
        ts_ms: found.ts_ms,
        content: found
            .hash
            .as_deref()
            .and_then(|h| crate::reads::vcs::commit_content(cwd, h))
            .unwrap_or_default(),
    };
    let root = crate::reads::commits::repo_at(cwd).map(|(_, root)| root);
    let (_, views, _) = live.need_views()?;
    let explained = crate::reads::commits::explain(views, root.as_deref(), &commit)?;
    let handles = Handles::new(&views.tables);
    let mut prompts = crate::reads::files::Prompts::default();
    let answer = explained
        .answer
        .iter()
        .map(|t| tied(ctx, views, &handles, &mut prompts, t))
        .collect::<Result<Vec<_>, _>>()?;
    let mut others = explained
        .others
        .iter()
        .map(|t| tied(ctx, views, &handles, &mut prompts, t))
        .collect::<Result<Vec<_>, _>>()?;
    others.sort_by(|a, b| {
        (a.tie.route, std::cmp::Reverse(ordered(a.tie.share)))
            .cmp(&(b.tie.route, std::cmp::Reverse(ordered(b.tie.share))))
    });
    let route = answer.first().map(|t| t.tie.route);
    if ctx.json {
        head.json(
            &mut std::io::stdout().lock(),
            &serde_json::json!({
                "commit": found,
                "route": route,
                "sessions": answer,
                "others": others,
                "behind": views.behind(),
            }),
        )?;
        return Ok(if answer.is_empty() { 1 } else { 0 });
    }
    let ui = &ctx.ui;
    let mut out = ui.out();
    head.print(ctx, &mut out)?;
    if let (Some(hash), Some(subject)) = (&found.hash, &found.subject) {
        writeln!(out, "{} {}", &hash[..hash.len().min(12)], ui.safe(subject))?;
    }
    let line = |t: &TiedSession| {
        let mut tag = format!("{} · {}", handles.of(&t.tie.session), t.place);
        if let Some(age) = &t.age {
            tag = format!("{} · {age} · {}", handles.of(&t.tie.session), t.place);
        }
        let share = t.tie.share.map_or(String::new(), |s| {
            format!(" · wrote {:.0}% of its lines", s * 100.0)
        });
        let prompt = t.prompt.as_ref().map_or(String::new(), |p| {
            let text = clip(&p.text.replace('\n', " "), 80);
            format!(" \"{}\"", ui.preview(&text))
        });
        format!(
            "  {}{prompt}  {}",
            ui.dim(&format!("[{tag}{share}]")),
            ui.dim(&format!("▸ {}", t.show))
        )
    };
    match route {
        Some(route) => {
            writeln!(out, "made in this session, by {}:", route.label())?;
            for t in answer.iter().take(SHOWN) {
                writeln!(out, "{}", line(t))?;
            }
            if !others.is_empty() {
                writeln!(out, "also:")?;
                for t in others.iter().take(5) {
                    writeln!(out, "{}  {}", line(t), ui.dim(t.tie.route.label()))?;
                }
            }
            out.finish()?;
            Ok(0)
        }
        None => {
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
            if !others.is_empty() {
                writeln!(out, "nearest candidates (below what explains a commit):")?;
                for t in others.iter().take(5) {
                    writeln!(out, "{}", line(t))?;
                }
            }
            out.finish()?;
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
            Ok(1)
        }
    }
}

/// A share as an orderable number (None first).
fn ordered(share: Option<f64>) -> i64 {
    share.map_or(-1, |s| (s * 1_000_000.0) as i64)
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
    seq: Option<Seq>,
) -> Result<u8, CliError> {
    let (_, views, _) = live.need_views()?;
    let source = EventSource::of(views);
    let mut all = Vec::new();
    for id in ids {
        let rollup = views.tables.session(id)?.unwrap_or_default();
        let s = SessionSummary::hydrate(id.clone(), rollup, |seq| {
            let env = source
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
    if ctx.json {
        head.json(&mut std::io::stdout().lock(), &all)?;
        return Ok(0);
    }
    let ui = &ctx.ui;
    let mut out = ui.out();
    head.print(ctx, &mut out)?;
    let handles = Handles::new(&views.tables);
    for c in &all {
        let age = c.end_ms.map_or_else(
            || "?".to_string(),
            |t| crate::vocab::time::age(ctx.now_ms, t, &ctx.tz),
        );
        let handle = match seq {
            Some(n) => format!("▸ peat show {} {n}", c.session),
            None => format!("▸ peat show {}", c.session),
        };
        writeln!(
            out,
            "  {} {}  {}",
            ui.dim(&format!(
                "[{} · {age} · {}]",
                handles.of(&c.session),
                c.place
            )),
            ui.preview(&clip(c.first_prompt.as_deref().unwrap_or(""), 100)),
            ui.dim(&handle)
        )?;
    }
    out.finish()?;
    ctx.ui
        .note("several sessions start with that; give more characters of the id.");
    Ok(0)
}

// ---------------------------------------------------------------------------------------
// Subjects, beads and search.

fn subject(ctx: &Ctx, head: &Head<'_>, live: &mut Live<'_>, name: &str) -> Result<u8, CliError> {
    let (_, views, _) = live.need_views()?;
    let Some(trail) = super::subjects::trail(views, name, ctx.now_ms, &ctx.tz)? else {
        return Err(CliError::not_found(format!("no such subject: {name:?}")));
    };
    if ctx.json {
        let answer = Behind {
            answer: &trail,
            behind: views.behind(),
        };
        head.json(&mut std::io::stdout().lock(), &answer)?;
        return Ok(0);
    }
    let mut out = ctx.ui.out();
    head.print(ctx, &mut out)?;
    super::subjects::write_trail(ctx, &mut out, &trail, &Handles::new(&views.tables))?;
    out.finish()?;
    Ok(0)
}

fn bead(ctx: &Ctx, head: &Head<'_>, live: &mut Live<'_>, id: &str) -> Result<u8, CliError> {
    let (_, views, model) = live.need_views()?;
    let query = Query {
        words: format!("\"{id}\""),
        limit: 50,
        ..Default::default()
    };
    let mut result = crate::reads::recall::recall(views, model, &query)?;
    // Only texts that name the id itself: the words around it are not the bead.
    let needle = id.to_lowercase();
    result
        .hits
        .retain(|h| h.row.text.to_lowercase().contains(&needle));
    result.hits.truncate(12);
    result.query = id.to_string();
    answer_recall(ctx, head, &result, views)
}

fn search(ctx: &Ctx, head: &Head<'_>, live: &mut Live<'_>, words: &str) -> Result<u8, CliError> {
    live.open_to_search(words.trim())?;
    let (_, views, model) = live.need_views()?;
    let query = Query {
        words: words.to_string(),
        limit: 12,
        ..Default::default()
    };
    let result = crate::reads::recall::recall(views, model, &query)?;
    answer_recall(ctx, head, &result, views)
}

fn answer_recall(
    ctx: &Ctx,
    head: &Head<'_>,
    result: &Recall,
    views: &Views,
) -> Result<u8, CliError> {
    let behind = views.behind();
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let answer = Behind {
            answer: result,
            behind,
        };
        head.json(&mut out, &answer)?;
        // Nothing found is exit 1, in JSON too.
        return Ok(u8::from(result.hits.is_empty()));
    }
    {
        let mut out = ctx.ui.out();
        head.print(ctx, &mut out)?;
        out.finish()?;
    }
    super::recall::print(
        ctx,
        result,
        ctx.now_ms,
        (behind, false),
        &Handles::new(&views.tables),
    )
}
