use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::{made_line, newest, no_event, resolve_in_views};
use crate::cli::ui::clip;
use crate::ledger::Ledger;
use crate::reads::commits::MadeCommit;
use crate::reads::ladder::noun;
use crate::views::Views;
use crate::views::handle::Handles;
use crate::views::session::SessionSummary;
use crate::views::source::EventSource;
use crate::vocab::change::Change;
use crate::vocab::event::{Event, EventId, Seq, SessionId};

/// Show a session, or one event of it in full
///
/// Without a session: the latest one (by its last activity). With a session id (or a
/// unique prefix): where and when it ran, what the person asked,
/// what the agent said last, the files and commits. With a SEQ as well: that one event,
/// whole, with what its edit wrote or what its tool printed. A Claude subagent's handle is its parent's prefix and
/// its agent id: `peat show 3f6c2a9e/a7c19e2`. While a capture holds the store, the views
/// answer as they stand (`behind` in --json: recorded changes not shown yet). A session's
/// --json carries previews of its long texts and the prompts that fit the budget (`--full`,
/// `--budget 0`: all of them whole).
#[derive(Args, Debug)]
pub(crate) struct ShowArgs {
    /// A session id or a unique prefix of one (a subagent: PARENT/AGENT, e.g. 3f6c2a9e/a7c19e2)
    /// [default: the latest session]
    #[arg(value_name = "SESSION")]
    pub(crate) session: Option<String>,
    /// One event of the session, by seq
    #[arg(value_name = "SEQ")]
    pub(crate) seq: Option<Seq>,
    /// Print the `== session … ==` title (bare `peat SESSION` prints its own, with how the
    /// words were read, and the details go on the next line).
    #[arg(skip = true)]
    pub(crate) titled: bool,
    /// A session's texts whole in --json, not previews (one event is always whole)
    #[arg(long)]
    pub(crate) full: bool,
}

/// The first line: `== title == details`, or only the details under another's title.
fn head(ctx: &Ctx, titled: bool, title: &str, details: &str) -> String {
    let ui = &ctx.ui;
    match (titled, details.is_empty()) {
        (true, true) => ui.bold(&ui.safe(&format!("== {title} =="))),
        (true, false) => ui.bold(&ui.safe(&format!("== {title} == {details}"))),
        (false, _) => ui.safe(details).to_string(),
    }
}

/// How many of the person's prompts the overview lists.
const PROMPTS_SHOWN: usize = 20;

pub(crate) fn run(ctx: &Ctx, args: &ShowArgs) -> Result<u8, CliError> {
    // The views answer, an event whole from their copy of the ledger (see `EventSource`).
    let (ledger, views, _model) = ctx.read_views()?;
    let session = match &args.session {
        Some(prefix) => resolve_in_views(ctx, &views, prefix)?,
        None => latest(ctx, &views)?,
    };
    match args.seq {
        Some(seq) => show_event(
            ctx,
            &views,
            (EventSource::of(&views), &ledger),
            EventId { session, seq },
            args.titled,
        ),
        None => show_session(ctx, &views, session, (args.titled, args.full)),
    }
}

/// The session with the newest activity (a subagent's counts as its parent's).
fn latest(ctx: &Ctx, views: &Views) -> Result<SessionId, CliError> {
    let only = crate::cli::shared::in_scope(ctx, views)?;
    let mut all = views.tables.all_sessions()?;
    all.retain(|(s, _)| crate::views::session::admitted(only.as_ref(), s));
    let newest = newest(all).map(|(s, r)| r.parent.unwrap_or(s));
    newest.ok_or_else(|| {
        CliError::user("no sessions in the record yet")
            .hint("`peat import` captures the transcripts already on this machine.")
    })
}

#[derive(Serialize)]
struct SessionView<'a> {
    #[serde(flatten)]
    summary: &'a SessionSummary,
    prompts_list: Vec<crate::views::session::Cited>,
    /// The commits made in the session, each with the route that tied it (as `peat COMMIT`
    /// answers for it).
    made_commits: &'a [MadeCommit],
    /// Whether the session's repository is on this machine: without it, only the commits its
    /// own commit commands printed are known.
    repo_here: bool,
    /// Recorded changes the answer does not show yet (a writer was folding them): 0 when
    /// caught up.
    behind: u64,
}

/// Show `session` as an overview, with its title when `titled`; its `--json` texts are
/// previews and its prompts those that fit the budget, unless `full`.
fn show_session(
    ctx: &Ctx,
    views: &Views,
    session: SessionId,
    (titled, full): (bool, bool),
) -> Result<u8, CliError> {
    let rollup = views.tables.session(&session)?.unwrap_or_default();
    let prompts: Vec<crate::views::session::Cited> = rollup
        .prompt_seqs
        .iter()
        .filter_map(|&seq| views.cited(&session, Seq(seq)))
        .collect();
    let summary = views.summary(session.clone(), rollup);
    let made =
        crate::reads::commits::made_by(views, std::slice::from_ref(&session), Some(&ctx.cwd))?;
    let commits = made.of(&session);
    let repo_here = !made.without_repo.contains(&session);
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let view = SessionView {
            summary: &summary,
            prompts_list: prompts,
            made_commits: commits,
            repo_here,
            behind: views.behind(),
        };
        let sized =
            crate::cli::listing::sized_json(ctx, &view, Some("prompts_list"), full, "prompts")
                .map_err(std::io::Error::from)?;
        serde_json::to_writer(&mut out, &sized).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let ui = &ctx.ui;
    let mut out = ui.out();
    let handles = Handles::new(&views.tables);
    let short = handles.of(&session);
    let mut details = summary.rollup.cwd.as_deref().unwrap_or("?").to_string();
    if let Some(b) = &summary.rollup.branch {
        details.push_str(&format!(" · {b}"));
    }
    if let Some(a) = summary.rollup.agent {
        details.push_str(&format!(" · {}", a.label()));
    }
    let title = format!("session {session}");
    writeln!(out, "{}", head(ctx, titled, &title, &details))?;
    if let (Some(a), Some(b)) = (summary.rollup.start_ms, summary.rollup.end_ms) {
        writeln!(
            out,
            "ran {} – {}",
            crate::vocab::time::local_minute(a, &ctx.tz),
            crate::vocab::time::local_minute(b, &ctx.tz)
        )?;
    }
    let r = &summary.rollup;
    let mut work = [
        noun(r.events, "event"),
        noun(r.prompts, "prompt"),
        noun(r.tools, "tool"),
    ]
    .join(" · ");
    if r.failed_tools > 0 {
        work.push_str(&format!(" ({} failed)", r.failed_tools));
    }
    work.push_str(&format!(
        " · {} · {}",
        noun(r.files.len() as i64, "file"),
        noun(commits.len() as i64, "commit")
    ));
    if summary.rollup.compactions > 0 {
        work.push_str(&format!(" · compacted {}x", summary.rollup.compactions));
    }
    writeln!(out, "{work}")?;
    if let Some(p) = &summary.rollup.parent {
        writeln!(
            out,
            "subagent of {}  {}",
            p,
            ui.dim(&format!("▸ peat show {}", handles.of(p)))
        )?;
    }
    if !prompts.is_empty() {
        writeln!(out, "\nthe person asked:")?;
        for p in prompts.iter().take(PROMPTS_SHOWN) {
            writeln!(
                out,
                "  {}  {}",
                ui.preview(&clip(&p.text, 160)),
                ui.dim(&format!("▸ peat show {short} {}", p.seq))
            )?;
        }
        if prompts.len() > PROMPTS_SHOWN {
            writeln!(
                out,
                "  … {} more  {}",
                prompts.len() - PROMPTS_SHOWN,
                ui.dim(&format!("▸ peat events --session {short} --kind user"))
            )?;
        }
    }
    if let Some(c) = &summary.closing {
        writeln!(out, "\nclosing message:")?;
        writeln!(
            out,
            "  {}  {}",
            ui.preview(&clip(&c.text, 400)),
            ui.dim(&format!("▸ peat show {short} {}", c.seq))
        )?;
    }
    if !summary.rollup.files.is_empty() {
        writeln!(out, "\nfiles:")?;
        // As the brief names them: relative to here when under it, pasteable after `peat`.
        for (f, n) in summary.rollup.files.iter().take(12) {
            let arg = crate::reads::brief::file_arg(f, &ctx.cwd);
            writeln!(out, "  {} ({})", ui.safe(&arg), noun(*n, "edit"))?;
        }
        if summary.rollup.files.len() > 12 {
            writeln!(
                out,
                "  … {} more  {}",
                summary.rollup.files.len() - 12,
                ui.dim(&format!("▸ peat events --session {short} --kind file"))
            )?;
        }
    }
    if !commits.is_empty() {
        writeln!(out, "\ncommits made in it:")?;
        for c in commits {
            writeln!(out, "  {}", made_line(ctx, c))?;
        }
    }
    if !repo_here {
        writeln!(
            out,
            "\n{}",
            ui.dim("(its repository is not on this machine: only the commits it ran, and this repository's, are known)")
        )?;
    }
    writeln!(
        out,
        "\n{}",
        ui.dim(&format!("▸ peat events --session {short}"))
    )?;
    out.finish()?;
    Ok(0)
}

#[derive(Serialize)]
struct EventView<'a> {
    #[serde(flatten)]
    row: crate::cli::shared::Row<'a>,
    /// What the edit wrote, for a file touch.
    #[serde(skip_serializing_if = "Option::is_none")]
    change: Option<Change>,
    /// What the tool printed, for a tool call whose output was recorded, or that output.
    #[serde(skip_serializing_if = "Option::is_none")]
    printed: Option<Printed>,
    /// Recorded changes the answer does not show yet: 0 when caught up.
    behind: u64,
}

/// What a tool call printed, whole.
#[derive(Serialize)]
struct Printed {
    /// The seq of the output's event.
    seq: u32,
    /// Its length in bytes.
    bytes: u64,
    text: String,
    /// False when the blob holding the whole output is missing: `text` is its excerpt.
    whole: bool,
}

/// How much of an output the text answer shows; `--json` carries it whole.
const PRINTED_SHOWN: usize = 4096;

/// What the tool call at `id` printed (`event` is the call, or its output event), whole
/// from the blob store.
fn printed(
    (source, ledger): (&EventSource<'_>, &Ledger),
    id: &EventId,
    event: &Event,
) -> Result<Option<Printed>, CliError> {
    let found = match event {
        Event::ToolOutput { .. } => Some((id.seq, event.clone())),
        // The output is recorded on a later line, naming its call.
        Event::ToolCall { .. } => {
            let mut found = None;
            for e in source.events(Some(&id.session)) {
                let (eid, env) = e?;
                if eid.seq > id.seq
                    && matches!(env.kind, Event::ToolOutput { call, .. } if call == id.seq)
                {
                    found = Some((eid.seq, env.kind));
                    break;
                }
            }
            found
        }
        _ => None,
    };
    let Some((
        seq,
        Event::ToolOutput {
            excerpt,
            output,
            bytes,
            ..
        },
    )) = found
    else {
        return Ok(None);
    };
    let blob = match output {
        Some(blob) => ledger.blob(&blob)?,
        None => Some(excerpt.clone().into_bytes()),
    };
    Ok(Some(Printed {
        seq: seq.0,
        bytes,
        whole: blob.is_some(),
        text: blob.map_or(excerpt, |b| String::from_utf8_lossy(&b).into_owned()),
    }))
}

/// `printed` as the text answer shows it: its first [`PRINTED_SHOWN`] bytes, and how much
/// was cut.
fn printed_text(p: &Printed) -> String {
    let shown = crate::vocab::event::cap(&p.text, PRINTED_SHOWN);
    let mut s = format!("printed ({} bytes):\n{}", p.bytes, shown.trim_end());
    if shown.len() < p.text.len() {
        s.push_str(&format!(
            "\n[… {} more bytes cut: --json has it whole]",
            p.text.len() - shown.len()
        ));
    }
    if !p.whole {
        s.push_str("\n(only its head and tail were kept: the whole output is missing)");
    }
    s
}

fn show_event(
    ctx: &Ctx,
    views: &Views,
    (source, ledger): (EventSource<'_>, &Ledger),
    id: EventId,
    titled: bool,
) -> Result<u8, CliError> {
    let handles = Handles::new(&views.tables);
    let Some(env) = source.get(&id)? else {
        return Err(no_event(&id, views.behind(), &handles));
    };
    // What the first file the edit touched was written with.
    let change = match &env.kind {
        Event::FileTouch {
            path,
            change: Some(_),
            ..
        } => source
            .change(&id, path)?
            .and_then(|b| serde_json::from_slice::<Change>(&b).ok()),
        _ => None,
    };
    let view = EventView {
        row: crate::cli::shared::Row::of(id.seq, &env),
        change,
        printed: printed((&source, ledger), &id, &env.kind)?,
        behind: views.behind(),
    };
    let mut out = std::io::stdout().lock();
    if ctx.json {
        serde_json::to_writer(&mut out, &view).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let ui = &ctx.ui;
    let title = format!("event {} {}", handles.of(&id.session), id.seq);
    let details = format!(
        "{} · {}",
        env.kind.tag(),
        crate::vocab::time::local_minute(env.ts_ms, &ctx.tz)
    );
    let line = match titled {
        true => head(ctx, true, &format!("{title} · {details}"), ""),
        false => head(ctx, false, &title, &details),
    };
    writeln!(out, "{line}")?;
    writeln!(
        out,
        "{}",
        ui.safe(&readable(&env.kind, view.change.as_ref()))
    )?;
    if let Some(p) = &view.printed {
        writeln!(out, "\n{}", ui.safe(&printed_text(p)))?;
    }
    writeln!(
        out,
        "{}",
        ui.dim(&format!(
            "▸ peat log {}   ▸ peat show {} --json {}",
            handles.of(&id.session),
            handles.of(&id.session),
            id.seq
        ))
    )?;
    Ok(0)
}

/// An event as a person reads it: messages as their text, an edit as a unified diff of what
/// it wrote, a tool call as its command.
fn readable(event: &Event, change: Option<&Change>) -> String {
    match event {
        Event::UserMsg {
            text,
            harness,
            context,
        } => {
            let who = if *harness {
                "the harness, for the person"
            } else {
                "the person"
            };
            match context {
                Some(context) => format!("{who}:\n{text}\n\nwith this context:\n{context}"),
                None => format!("{who}:\n{text}"),
            }
        }
        Event::Said { text } => format!("the agent:\n{text}"),
        Event::FinalMsg { text } => format!("the agent's closing message:\n{text}"),
        Event::CompactSummary { text } => format!("the compaction summary:\n{text}"),
        Event::ToolCall {
            tool, detail, ok, ..
        } => {
            let failed = if *ok { "" } else { " (failed)" };
            format!("{tool}{failed}\n{detail}")
        }
        Event::ToolOutput { call, .. } => format!("the output of tool call {call}"),
        Event::FileTouch {
            path,
            op,
            failed,
            more,
            model,
            ..
        } => {
            let failed = if *failed {
                " (the tool reported an error: not applied)"
            } else {
                ""
            };
            let by = model.as_ref().map_or(String::new(), |m| format!(" by {m}"));
            let mut s = format!(
                "{path} [{}]{by}{failed}\n",
                crate::vocab::event::serde_plain(op)
            );
            match change {
                Some(c) => s.push_str(&crate::vocab::diff::unified(path, c)),
                None => s.push_str("(what the edit wrote was not recorded)\n"),
            }
            for t in more {
                s.push_str(&format!("also {}\n", t.path));
            }
            s.trim_end().to_string()
        }
        Event::Committed {
            vcs,
            hash,
            message,
            branch,
        } => {
            let on = branch
                .as_deref()
                .map_or(String::new(), |b| format!(" on {b}"));
            let vcs = crate::vocab::event::serde_plain(vcs);
            format!("{vcs} commit {hash}{on}\n{message}")
        }
        Event::Obs {
            subject,
            text,
            derived_from,
            basis,
        } => {
            let mut s = format!("{subject}: {text}");
            if derived_from.is_empty() {
                s.push_str("\n(uncited)");
            } else {
                let cites: Vec<String> = derived_from.iter().map(u32::to_string).collect();
                s.push_str(&format!("\ncites {}", cites.join(", ")));
            }
            if let Some(b) = basis {
                s.push_str(&format!(
                    "\nagainst {}{}",
                    b.commit,
                    if b.dirty {
                        " (uncommitted changes)"
                    } else {
                        ""
                    }
                ));
            }
            s
        }
        other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.summary()),
    }
}
