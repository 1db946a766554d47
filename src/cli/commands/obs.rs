use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::ledger::{Ledger, Mode, WriteSet};
use crate::views::Views;
use crate::views::handle::{Handles, NoSession, resolve_prefix};
use crate::vocab::event::{Basis, Envelope, Event, EventId, OBS_SEQ_BASE, Seq, SessionId};

/// Deposit a claim about a subject, citing the events it rests on
///
/// The claim is filed under SUBJECT in the current session (`--session`, else the
/// `.peat/current-session` the SessionStart hook writes) against the commit the working
/// copy is on. It becomes the subject's current claim; earlier ones stay in its trail.
/// Without `--from` it is a bare assertion, and every listing marks it uncited. Names close
/// to SUBJECT are printed first, so one subject does not drift into several.
#[derive(Args, Debug, Default)]
pub(crate) struct ObsArgs {
    /// What the claim is about: a short stable name (`staging`, `fold-hnsw`)
    #[arg(value_name = "SUBJECT")]
    pub(crate) subject: String,
    /// The claim, stated so that a reader without this session's context understands it
    #[arg(value_name = "CLAIM", required = true, num_args = 1..)]
    pub(crate) claim: Vec<String>,
    /// The seqs of the session's events the claim rests on (`peat events --session SESSION`
    /// lists them)
    #[arg(long, value_name = "SEQ,SEQ", value_delimiter = ',')]
    pub(crate) from: Vec<Seq>,
    /// The session it belongs to: an id or a unique prefix
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// File it on this local day (at noon) instead of now
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub(crate) at: Option<String>,
}

/// Claims longer than this are hard to restate in a brief line.
const LONG_CLAIM: usize = 240;

/// Phrases that only make sense inside the session that wrote them, and why.
const DEICTIC: &[(&str, &str)] = &[
    ("tonight", "time-deictic"),
    ("today", "time-deictic"),
    ("yesterday", "time-deictic"),
    ("this evening", "time-deictic"),
    ("this morning", "time-deictic"),
    ("just now", "time-deictic"),
    ("earlier", "time-deictic"),
    ("this session", "session-deictic"),
    ("the reviewer", "person-deictic"),
    ("this change", "change-deictic"),
    ("this fix", "change-deictic"),
    ("in flight", "status-log"),
    ("now live", "status-log"),
    ("mirrors ", "status-log"),
    ("mirrored to", "status-log"),
    ("shipped", "status-log"),
    ("landed", "status-log"),
];

/// What was recorded (the `--json` receipt).
#[derive(Serialize)]
struct Recorded<'a> {
    subject: &'a str,
    session: &'a SessionId,
    seq: Seq,
    ts_ms: i64,
    cited: bool,
    derived_from: &'a [u32],
    basis: &'a Option<Basis>,
    support: i64,
    near: Vec<Near<'a>>,
}

#[derive(Serialize)]
struct Near<'a> {
    subject: &'a str,
    support: i64,
}

pub(crate) fn run(ctx: &Ctx, args: &ObsArgs) -> Result<u8, CliError> {
    let subject = args.subject.trim();
    if subject.is_empty() || subject.chars().any(char::is_control) {
        return Err(
            CliError::user(format!("not a subject name: {:?}", args.subject))
                .hint("Use a short stable name, like `staging` or `fold-hnsw`."),
        );
    }
    let text = args.claim.join(" ");
    let text = text.trim();
    if text.is_empty() {
        return Err(CliError::user("the claim is empty").hint(
            "For example: peat obs staging \"deploys go through the blue env first\" --from 1042",
        ));
    }
    let ts_ms = match &args.at {
        Some(d) => noon(d, &ctx.tz)
            .ok_or_else(|| CliError::user(format!("bad --at date {d:?}; expected YYYY-MM-DD")))?,
        None => ctx.now_ms,
    };
    // Read the session file before taking the lock: a missing one fails fast.
    let named = match &args.session {
        Some(s) => SessionArg::Prefix(s.trim().to_string()),
        None => SessionArg::Current(crate::cli::shared::current_session(ctx)?),
    };
    let basis = crate::reads::vcs::head(&ctx.cwd);

    let mut ledger = ctx.open(Mode::Create)?;
    let session = match named {
        SessionArg::Current(s) => s,
        SessionArg::Prefix(p) => session_for(ctx, &ledger, &p)?,
    };
    let mut model = ctx.model_slot()?;
    let ui = ctx.ui;
    let mut views = Views::open(&ledger, &mut model, ctx.tz.clone(), &mut |l| ui.note(l))?;

    let subjects = views.tables.all_subjects()?;
    let near = crate::reads::resolve::near_names(
        subject,
        subjects.iter().map(|(n, s)| (n.as_str(), s.count)),
    );
    if !near.is_empty() {
        let list: Vec<String> = near.iter().map(|(n, c)| format!("{n} ({c} obs)")).collect();
        ctx.ui.note(&format!("near subjects: {}", list.join(" · ")));
    }
    check_citations(&ledger, &session, &args.from, &Handles::new(&views.tables))?;

    let seq = free_seq(&ledger, &session)?;
    let derived_from: Vec<u32> = args.from.iter().map(|s| s.0).collect();
    let mut set = WriteSet::default();
    set.event(
        seq,
        Envelope::new(
            session.clone(),
            ts_ms,
            Event::Obs {
                subject: subject.to_string(),
                text: text.to_string(),
                derived_from: derived_from.clone(),
                basis: basis.clone(),
            },
        ),
    );
    crate::redact::apply::write_set(ctx.redactor().get()?, &mut set);
    ledger.write(set)?;
    views.catch_up(&ledger, &mut model)?;
    let support = views.tables.subject(subject)?.map_or(1, |s| s.count);
    let handle = Handles::new(&views.tables).of(&session);
    drop(views);
    drop(ledger);

    if ctx.json {
        let mut out = std::io::stdout().lock();
        let receipt = Recorded {
            subject,
            session: &session,
            seq,
            ts_ms,
            cited: !args.from.is_empty(),
            derived_from: &derived_from,
            basis: &basis,
            support,
            near: near
                .iter()
                .map(|(n, c)| Near {
                    subject: n,
                    support: *c,
                })
                .collect(),
        };
        serde_json::to_writer(&mut out, &receipt).map_err(std::io::Error::from)?;
        writeln!(out)?;
    }
    let mut receipt = format!("recorded → {subject} in session {handle} (support {support})");
    if let Some(b) = &basis {
        receipt.push_str(&format!(" {}", crate::reads::vcs::basis_label(b)));
    }
    if args.from.is_empty() {
        receipt.push_str(" · uncited");
    }
    ctx.ui.note(&receipt);
    if args.session.is_none() {
        // Typed in a shell, the file names the last session started here, which may not be
        // the one the claim is about: say which it went to.
        ctx.ui.note(&format!(
            "filed under session {handle}, which .peat/current-session names (the last agent session started here); --session ID files it elsewhere."
        ));
    }
    if args.from.is_empty() {
        ctx.ui.note(
            "uncited: it will read as a bare assertion; `--from SEQ,SEQ` cites the events it rests on.",
        );
    }
    for line in style_notes(text) {
        ctx.ui.note(&line);
    }
    Ok(0)
}

/// Refuse a claim citing events the session does not hold: a citation that points at
/// nothing would read as evidence. The error names the nearest events that do exist.
fn check_citations(
    ledger: &Ledger,
    session: &SessionId,
    from: &[Seq],
    handles: &Handles,
) -> Result<(), CliError> {
    let mut missing = Vec::new();
    for seq in from {
        let id = EventId {
            session: session.clone(),
            seq: *seq,
        };
        if ledger.get(&id)?.is_none() {
            missing.push(*seq);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let held: Vec<(Seq, Envelope)> = ledger
        .session_events(session)
        .map(|r| r.map(|(id, env)| (id.seq, env)))
        .collect::<Result<_, _>>()?;
    let list: Vec<String> = missing.iter().map(Seq::to_string).collect();
    let mut err = CliError::user(format!(
        "--from {}: session {} has no such event{}; the claim was not recorded",
        list.join(","),
        handles.of(session),
        if missing.len() == 1 { "" } else { "s" }
    ));
    err.code = 2;
    if held.is_empty() {
        return Err(err.hint(format!(
            "Session {} has no events in the record yet (its transcript is captured when it ends, or with `peat capture FILE`). Cite its events once captured, or deposit the claim without --from.",
            handles.of(session)
        )));
    }
    let mut near: Vec<String> = Vec::new();
    for seq in &missing {
        for (s, env) in nearest(&held, *seq) {
            let line = format!(
                "  {:>6} {:<8} {}",
                s.to_string(),
                env.kind.tag(),
                crate::cli::ui::clip(&env.kind.summary(), 70)
            );
            if !near.contains(&line) {
                near.push(line);
            }
        }
    }
    Err(err.hint(format!(
        "The nearest events it holds:\n{}\n`peat events --session {}` lists them all, each with its seq.",
        near.join("\n"),
        handles.of(session)
    )))
}

/// The events just below and just above `seq` (by seq), at most two of each.
fn nearest(held: &[(Seq, Envelope)], seq: Seq) -> Vec<&(Seq, Envelope)> {
    let at = held.partition_point(|(s, _)| *s < seq);
    held[at.saturating_sub(2)..at]
        .iter()
        .chain(held[at..].iter().take(2))
        .collect()
}

enum SessionArg {
    Current(SessionId),
    Prefix(String),
}

/// The session `--session` names. One the ledger does not hold yet (its transcript is
/// captured when it ends) is taken as given.
fn session_for(ctx: &Ctx, ledger: &Ledger, prefix: &str) -> Result<SessionId, CliError> {
    if prefix.is_empty() {
        return Err(CliError::user("--session is empty"));
    }
    match resolve_prefix(ledger, prefix)? {
        Ok(s) => Ok(s),
        Err(NoSession::None) => {
            ctx.ui.note(&format!(
                "session {prefix} is not in the record yet; the claim is filed under it as given"
            ));
            Ok(SessionId(prefix.to_string()))
        }
        Err(NoSession::Ambiguous(many)) => {
            let names: Vec<&str> = many.iter().take(6).map(SessionId::as_str).collect();
            Err(CliError::user(format!(
                "--session {prefix:?} matches {} sessions: {}",
                many.len(),
                names.join(", ")
            ))
            .hint("Give more characters of the id."))
        }
    }
}

/// The first seq from [`OBS_SEQ_BASE`] on that `session` does not use.
fn free_seq(ledger: &Ledger, session: &SessionId) -> Result<Seq, CliError> {
    let mut seq = OBS_SEQ_BASE;
    loop {
        let id = EventId {
            session: session.clone(),
            seq: Seq(seq),
        };
        if ledger.get(&id)?.is_none() {
            return Ok(Seq(seq));
        }
        seq = seq.checked_add(1).ok_or_else(|| {
            CliError::user(format!(
                "session {session} has no free observation seq left"
            ))
        })?;
    }
}

/// Local noon of `date` (`YYYY-MM-DD`) in `tz`, in ms.
fn noon(date: &str, tz: &jiff::tz::TimeZone) -> Option<i64> {
    let d: jiff::civil::Date = date.trim().parse().ok()?;
    let z = d.at(12, 0, 0, 0).to_zoned_datetime(tz.clone()).ok()?;
    Some(z.timestamp().as_millisecond())
}

/// Advisory notes on a claim's wording: phrases a later reader cannot resolve, and length.
pub(crate) fn style_notes(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut notes: Vec<String> = DEICTIC
        .iter()
        .filter(|(marker, _)| lower.contains(marker))
        .map(|(marker, why)| {
            format!(
                "style: {why} phrase {:?} — future readers lack this context; state the rule standalone (what holds, and since which commit or date).",
                marker.trim()
            )
        })
        .collect();
    if text.chars().count() > LONG_CLAIM {
        notes.push(format!(
            "long for a claim ({} chars): briefs clip at ~120 (trails read whole); consider splitting it into several subjects.",
            text.chars().count()
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deictic_phrases_and_length_are_noted_not_refused() {
        assert!(style_notes("deploys go through the blue env first").is_empty());
        let n = style_notes("Landed the fix today");
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(
            n.iter()
                .any(|l| l.contains("time-deictic phrase \"today\""))
        );
        assert!(n.iter().any(|l| l.contains("status-log phrase \"landed\"")));
        let long = "word ".repeat(60);
        assert!(style_notes(&long)[0].starts_with("long for a claim"));
    }

    #[test]
    fn at_files_a_claim_at_local_noon() {
        let utc = jiff::tz::TimeZone::UTC;
        assert_eq!(
            noon("2026-07-14", &utc),
            crate::vocab::time::parse_iso_ms("2026-07-14T12:00:00Z")
        );
        let plus2 = jiff::tz::TimeZone::fixed(jiff::tz::offset(2));
        assert_eq!(
            noon("2026-07-14", &plus2),
            crate::vocab::time::parse_iso_ms("2026-07-14T10:00:00Z")
        );
        assert_eq!(noon("14/07/2026", &utc), None);
    }
}
