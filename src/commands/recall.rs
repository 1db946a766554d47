use clap::Args;
use std::io::Write;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::recall::{Query, Recall, Semantic, recall};
use crate::ui::clip;
use crate::views::rows::TextKind;

/// Search everything that was said: keyword and semantic lanes, fused
///
/// BM25 over prompts, closing messages, compaction summaries, observations and the agent's
/// prose; an embedding scan over the dense texts (when the model is installed). Each hit
/// shows its kind, age, whether it is cited, and the command that reads it whole.
#[derive(Args, Debug, Default)]
pub struct RecallArgs {
    /// What to look for
    #[arg(value_name = "WORDS")]
    pub words: Vec<String>,
    /// Only texts of this kind
    #[arg(long, value_name = "KIND", value_parser = clap::builder::PossibleValuesParser::new(TextKind::TAGS))]
    pub kind: Option<String>,
    /// Only texts since: days (3), a duration (12h, 3d, 2w) or a date (2026-11-01)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only this session (an id or a unique prefix)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only observations about this subject
    #[arg(long, value_name = "NAME")]
    pub subject: Option<String>,
    /// How many hits
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub limit: usize,
}

pub fn run(ctx: &Ctx, args: &RecallArgs) -> Result<u8, CliError> {
    let words = args.words.join(" ");
    if words.trim().is_empty() && args.subject.is_none() {
        return Err(
            CliError::user("recall needs words to look for (or --subject NAME)")
                .hint("For example: `peat recall rate limiter` or `peat rate limiter`."),
        );
    }
    if words.trim().is_empty()
        && let Some(name) = &args.subject
    {
        // No words, one subject: its whole evidence trail, not a ranked few.
        let trail = super::subjects::SubjectsArgs {
            name: vec![name.clone()],
        };
        return super::subjects::run(ctx, &trail);
    }
    let since_ms = match &args.since {
        Some(s) => Some(crate::time::parse_since(s, ctx.now_ms).map_err(CliError::user)?),
        None => None,
    };
    // Naming a session resolves its prefix in the ledger; otherwise the views suffice.
    let (ledger, views, mut model) = match args.session {
        Some(_) => ctx.open_views()?,
        None => ctx.read_views()?,
    };
    let session = match &args.session {
        Some(p) => Some(super::show::resolve(&ledger, p)?),
        None => None,
    };
    let query = Query {
        words,
        kind: args
            .kind
            .as_deref()
            .map(|k| k.parse())
            .transpose()
            .map_err(CliError::user)?,
        since_ms,
        session,
        subject: args.subject.clone(),
        limit: args.limit,
    };
    let result = recall(&views, &mut model, &query)?;
    drop(views);
    drop(ledger);
    print(ctx, &result, ctx.now_ms)
}

/// Print recall hits: JSON whole, or one clipped line each ending in its handle.
pub fn print(ctx: &Ctx, result: &Recall, now_ms: i64) -> Result<u8, CliError> {
    let mut out = std::io::stdout().lock();
    if ctx.json {
        serde_json::to_writer(&mut out, result).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    if result.semantic == Semantic::Off {
        ctx.ui.note(crate::embed::off_notice());
    }
    if result.hits.is_empty() {
        ctx.ui.note(&format!("no hits for {:?}", result.query));
        return Ok(1);
    }
    let ui = &ctx.ui;
    for h in &result.hits {
        let mut tag = h.row.kind.tag().to_string();
        if h.row.kind == TextKind::Obs {
            // An observation without evidence reads as the bare assertion it is.
            tag.push_str(if h.row.cited { "·cited" } else { "·uncited" });
        }
        tag.push_str(&format!(" · {}", crate::time::age(now_ms, h.row.ts_ms)));
        if let Some(s) = &h.row.subject {
            tag.push_str(&format!(" · {s}"));
        }
        if let Some(b) = &h.row.basis {
            tag.push_str(&format!(" · {}", crate::vcs::basis_label(b)));
        }
        let short: String = h.session.as_str().chars().take(8).collect();
        writeln!(
            out,
            "  {} {}  {}",
            ui.dim(&format!("[{tag}]")),
            ui.safe(&clip(&h.row.text, 200)),
            ui.dim(&format!("▸ peat show {short} {}", h.seq))
        )?;
    }
    Ok(0)
}
