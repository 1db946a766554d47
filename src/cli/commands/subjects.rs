use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::listing::{ListArgs, more_line, sized_json};
use crate::cli::ui::clip;
use crate::reads::vcs::basis_label;
use crate::views::Views;
use crate::views::handle::Handles;
use crate::vocab::event::{Basis, EventId, Seq, SessionId};

/// List the claims register, or one subject's evidence trail
///
/// Without NAME: every subject with its current claim (the newest observation), how many
/// observations support it, whether that claim cites evidence, and the commit it was
/// deposited against (`@abc12345`, `+` for a dirty tree); newest first. With NAME: every
/// observation ever filed under it, newest first. The register takes `--limit` (every
/// subject by default) and `--since` (claims made since).
#[derive(Args, Debug, Default)]
pub(crate) struct SubjectsArgs {
    /// One subject's full evidence trail (its exact name)
    #[arg(value_name = "NAME")]
    pub(crate) name: Vec<String>,
    #[command(flatten)]
    pub(crate) list: ListArgs,
}

pub(crate) fn run(ctx: &Ctx, args: &SubjectsArgs) -> Result<u8, CliError> {
    let (ledger, views, _model) = ctx.read_views()?;
    if !args.name.is_empty() {
        let name = args.name.join(" ");
        let found = trail(&views, &name, ctx.now_ms, &ctx.tz)?;
        let all = register(&views, ctx.now_ms, &ctx.tz)?;
        // Printed once the views close.
        let handles = Handles::new(&views.tables).keep(
            found
                .iter()
                .flat_map(|t| t.evidence.iter().map(|e| &e.session)),
        );
        let behind = views.behind();
        drop(views);
        drop(ledger);
        return match found {
            Some(t) => print_trail(ctx, &t, behind, &handles),
            None => Err(no_such_subject(&name, &all)),
        };
    }
    let since = args.list.since_ms(ctx.now_ms, &ctx.tz)?;
    let mut all = register(&views, ctx.now_ms, &ctx.tz)?;
    // A subject belongs to the scope its current claim was made in.
    let only = crate::cli::shared::in_scope(ctx, &views)?;
    all.retain(|s| {
        crate::views::session::admitted(only.as_ref(), &s.session)
            && since.is_none_or(|t| s.ts_ms >= t)
    });
    let total = all.len();
    if let Some(n) = args.list.limit_or(None) {
        all.truncate(n);
    }
    drop(views);
    drop(ledger);
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let sized = sized_json(ctx, &all, None, args.list.full, "subjects")
            .map_err(std::io::Error::from)?;
        serde_json::to_writer(&mut out, &sized).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    if all.is_empty() {
        ctx.ui.note(
            "no observations yet: `peat obs SUBJECT \"claim\" --from SEQ` deposits one (the seqs are the events it rests on).",
        );
        return Ok(0);
    }
    let ui = &ctx.ui;
    let mut out = ui.out();
    let today = crate::cli::shared::today(ctx);
    for s in &all {
        let mut tag = format!("{} obs", s.support);
        if !s.cited {
            tag.push_str(", uncited");
        }
        tag.push_str(&format!(", {}", s.age));
        if let Some(b) = &s.basis {
            tag.push_str(&format!(", {}", basis_label(b)));
        }
        writeln!(
            out,
            "  {} ({tag}): {}  {}",
            ui.bold(&ui.safe(&s.subject)),
            ui.preview(&clip(
                &s.text,
                if args.list.full { usize::MAX } else { 120 }
            )),
            ui.dim(&format!("▸ {}", handle(&s.subject, today)))
        )?;
    }
    if let Some(more) = more_line(ctx, total - all.len(), "subject", "") {
        writeln!(out, "  {more}")?;
    }
    out.finish()?;
    Ok(0)
}

/// One subject in the register.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SubjectLine {
    pub(crate) subject: String,
    /// Observations filed under it.
    pub(crate) support: i64,
    /// How many of them cite evidence.
    pub(crate) cited_count: i64,
    /// The current claim cites evidence.
    pub(crate) cited: bool,
    pub(crate) age: String,
    pub(crate) ts_ms: i64,
    pub(crate) session: SessionId,
    pub(crate) seq: Seq,
    /// The current claim.
    pub(crate) text: String,
    pub(crate) basis: Option<Basis>,
}

/// Every subject's current claim, newest first, with ages as of `now_ms`.
pub(crate) fn register(
    views: &Views,
    now_ms: i64,
    tz: &jiff::tz::TimeZone,
) -> Result<Vec<SubjectLine>, CliError> {
    let mut out = Vec::new();
    for (subject, s) in views.tables.all_subjects()? {
        let id = EventId {
            session: s.session.clone(),
            seq: s.seq,
        };
        let cited = views.tables.text(&id)?.is_some_and(|row| row.cited);
        out.push(SubjectLine {
            subject,
            support: s.count,
            cited_count: s.cited,
            cited,
            age: crate::vocab::time::age(now_ms, s.last_ms, tz),
            ts_ms: s.last_ms,
            session: s.session,
            seq: s.seq,
            text: s.text,
            basis: s.basis,
        });
    }
    out.sort_by(|a, b| {
        b.ts_ms
            .cmp(&a.ts_ms)
            .then_with(|| a.subject.cmp(&b.subject))
    });
    Ok(out)
}

/// The command that reads a subject's trail: bare `peat NAME` when nothing else claims
/// that shape, else the explicit spelling.
pub(crate) fn handle(name: &str, today: jiff::civil::Date) -> String {
    if crate::reads::resolve::bare_reads_subject(name, today) {
        format!("peat {name}")
    } else {
        format!("peat subjects {name:?}")
    }
}

/// One observation in a trail.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Evidence {
    pub(crate) session: SessionId,
    pub(crate) seq: Seq,
    pub(crate) age: String,
    pub(crate) ts_ms: i64,
    /// It cites the events it rests on; otherwise it is a bare assertion.
    pub(crate) cited: bool,
    pub(crate) derived_from: Vec<u32>,
    pub(crate) basis: Option<Basis>,
    pub(crate) text: String,
}

/// A subject's full evidence trail, newest first.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Trail {
    pub(crate) subject: String,
    pub(crate) current: String,
    pub(crate) support: i64,
    pub(crate) evidence: Vec<Evidence>,
}

/// The trail of `name` (exact), newest first with ages as of `now_ms`, or `None` if no
/// observation was filed under it.
pub(crate) fn trail(
    views: &Views,
    name: &str,
    now_ms: i64,
    tz: &jiff::tz::TimeZone,
) -> Result<Option<Trail>, CliError> {
    let Some(stats) = views.tables.subject(name)? else {
        return Ok(None);
    };
    let mut evidence: Vec<Evidence> = views
        .tables
        .evidence_of(name)?
        .into_iter()
        .map(|(session, seq, row)| Evidence {
            session,
            seq,
            age: crate::vocab::time::age(now_ms, row.ts_ms, tz),
            ts_ms: row.ts_ms,
            cited: !row.derived_from.is_empty(),
            derived_from: row.derived_from,
            basis: row.basis,
            text: row.text,
        })
        .collect();
    evidence.sort_by(|a, b| (b.ts_ms, &b.session, b.seq).cmp(&(a.ts_ms, &a.session, a.seq)));
    Ok(Some(Trail {
        subject: name.to_string(),
        current: stats.text,
        support: stats.count,
        evidence,
    }))
}

/// Print a trail: JSON whole (with `behind`, see [`crate::cli::shared::Behind`]), or a head line and one
/// line per observation, each whole (a trail is read in full) and ending in its handle.
pub(crate) fn print_trail(
    ctx: &Ctx,
    trail: &Trail,
    behind: u64,
    handles: &Handles,
) -> Result<u8, CliError> {
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let answer = crate::cli::shared::Behind {
            answer: trail,
            behind,
        };
        serde_json::to_writer(&mut out, &answer).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let mut out = ctx.ui.out();
    write_trail(ctx, &mut out, trail, handles)?;
    out.finish()?;
    Ok(0)
}

/// The text form of a trail.
pub(crate) fn write_trail(
    ctx: &Ctx,
    out: &mut impl Write,
    trail: &Trail,
    handles: &Handles,
) -> std::io::Result<()> {
    let ui = &ctx.ui;
    writeln!(
        out,
        "{} — {} ({} obs)",
        ui.bold(&ui.safe(&trail.subject)),
        ui.preview(&clip(&trail.current, 120)),
        trail.support
    )?;
    for e in &trail.evidence {
        let mut tag = format!(
            "{} · {} · {}",
            handles.of(&e.session),
            e.age,
            if e.cited { "cited" } else { "uncited" }
        );
        if let Some(b) = &e.basis {
            tag.push_str(&format!(" · {}", basis_label(b)));
        }
        writeln!(
            out,
            "  {} {}  {}",
            ui.dim(&format!("[{tag}]")),
            ui.safe(&e.text),
            ui.dim(&format!("▸ peat show {} {}", handles.of(&e.session), e.seq))
        )?;
    }
    Ok(())
}

/// "No such subject", naming the near ones.
pub(crate) fn no_such_subject(name: &str, all: &[SubjectLine]) -> CliError {
    let near = crate::reads::resolve::near_names(
        name,
        all.iter().map(|s| (s.subject.as_str(), s.support)),
    );
    let hint = if near.is_empty() {
        "`peat subjects` lists every subject.".to_string()
    } else {
        let names: Vec<String> = near.iter().map(|(n, _)| format!("{n:?}")).collect();
        format!(
            "Near names: {}. `peat subjects` lists every subject.",
            names.join(", ")
        )
    };
    CliError::not_found(format!("no such subject: {name:?}")).hint(hint)
}
