use clap::Args;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::Behind;
use crate::cli::ui::clip;
use crate::reads::recall::{FLOOR, Lanes, Query, Recall, Semantic, recall};
use crate::views::handle::Handles;
use crate::views::rows::{TextFilter, TextKind};

/// Search everything that was said: keyword and semantic lanes, fused
///
/// BM25 over prompts, closing messages, compaction summaries, observations and the agent's
/// prose; an embedding scan over the same texts (when the model is installed), where
/// matches weaker than a calibrated similarity floor are dropped. Each hit shows its kind,
/// age, whether it is cited, how strong a match it is (●●●○○), and the command that reads
/// it whole (a preview of its text; `--full` prints texts whole, and `--json` hits carry
/// previews marked `cut`, with the whole text's `chars`). Nothing clearing the bar: "no
/// hits", exit 1.
#[derive(Args, Debug, Default)]
pub(crate) struct RecallArgs {
    /// What to look for
    #[arg(value_name = "WORDS")]
    pub(crate) words: Vec<String>,
    /// Only texts of this kind
    #[arg(long, value_name = "KIND", value_parser = clap::builder::PossibleValuesParser::new(TextKind::TAGS))]
    pub(crate) kind: Option<String>,
    /// Only texts since: days (3), a duration (90min, 12h, 3d, 2w), a date or time (2026-11-01, 2026-11-01T14:30), or a day as `asof` reads it (yesterday, monday, "last week", 1m)
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    /// Only this session (an id or a unique prefix)
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Only observations about this subject
    #[arg(long, value_name = "NAME")]
    pub(crate) subject: Option<String>,
    /// How many hits
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub(crate) limit: usize,
    /// Words only: the keyword lane (BM25), without loading the model
    #[arg(long, conflicts_with = "semantic_only")]
    pub(crate) keyword_only: bool,
    /// Meaning only: the semantic lane (needs the model)
    #[arg(long)]
    pub(crate) semantic_only: bool,
    /// Whole texts, not previews
    #[arg(long)]
    pub(crate) full: bool,
    /// Drop semantic hits below this cosine similarity (0 keeps every one)
    #[arg(long, value_name = "COSINE", default_value_t = FLOOR, value_parser = parse_floor)]
    pub(crate) floor: f32,
}

fn parse_floor(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(f) if (-1.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "not a cosine similarity: {s:?} (want a number from -1 to 1, e.g. {FLOOR})"
        )),
    }
}

pub(crate) fn run(ctx: &Ctx, args: &RecallArgs) -> Result<u8, CliError> {
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
            ..Default::default()
        };
        return super::subjects::run(ctx, &trail);
    }
    let since_ms = match &args.since {
        Some(s) => {
            Some(crate::vocab::time::parse_since(s, ctx.now_ms, &ctx.tz).map_err(CliError::user)?)
        }
        None => None,
    };
    // The views answer (a session's prefix too), beside a writer as well. A search by
    // words alone needs no model loading beside it.
    let (ledger, views, mut model) = match args.keyword_only {
        false => ctx.read_views_to_search(words.trim())?,
        true => ctx.read_views()?,
    };
    let session = match &args.session {
        Some(p) => Some(crate::cli::shared::resolve_in_views(ctx, &views, p)?),
        None => None,
    };
    let lanes = if args.keyword_only {
        Lanes::Keyword
    } else if args.semantic_only {
        Lanes::Semantic
    } else {
        Lanes::Both
    };
    if lanes == Lanes::Semantic && views.model().is_none() {
        return Err(CliError::user(
            "--semantic-only needs the embedding model, which is not installed",
        )
        .hint("Run `peat model fetch`, or search by words alone without the flag."));
    }
    // A session named is already resolved in the scope (or past its default, by its id).
    let sessions = match &session {
        Some(_) => None,
        None => crate::cli::shared::in_scope(ctx, &views)?,
    };
    let query = Query {
        words,
        filter: TextFilter {
            kind: args
                .kind
                .as_deref()
                .map(|k| k.parse())
                .transpose()
                .map_err(CliError::user)?,
            since_ms,
            until_ms: None,
            session,
            subject: args.subject.clone(),
            sessions,
        },
        lanes,
        floor: args.floor,
        limit: args.limit,
    };
    let result = recall(&views, &mut model, &query)?;
    let behind = views.behind();
    // Printed once the views close.
    let handles = Handles::new(&views.tables).keep(result.hits.iter().map(|h| &h.session));
    drop(views);
    drop(ledger);
    print(ctx, &result, ctx.now_ms, (behind, args.full), &handles)
}

/// Print recall hits: JSON (with `behind`, see [`Behind`]), or one line each ending in its
/// handle; their texts previews unless `full`.
pub(crate) fn print(
    ctx: &Ctx,
    result: &Recall,
    now_ms: i64,
    (behind, full): (u64, bool),
    handles: &Handles,
) -> Result<u8, CliError> {
    // Texts wait and no pass embeds them (a read rebuilt the views): start one.
    let embedding = match result.semantic {
        Semantic::On { queued, .. } => crate::cli::embed_pass::start_pass(ctx, queued),
        Semantic::Off => false,
    };
    let found = u8::from(result.hits.is_empty());
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let answer = Behind {
            answer: result,
            behind,
        };
        let sized = crate::cli::listing::sized_json(ctx, &answer, Some("hits"), full, "hits")
            .map_err(std::io::Error::from)?;
        serde_json::to_writer(&mut out, &sized).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(found);
    }
    match result.semantic {
        Semantic::Off if result.lanes == Lanes::Both => ctx.ui.note(crate::embed::off_notice()),
        Semantic::On { queued, .. } if queued > 0 => ctx
            .ui
            .note(&crate::cli::embed_pass::backlog_note(queued, embedding)),
        _ => {}
    }
    if result.hits.is_empty() {
        let why = match (&result.semantic, result.lanes) {
            (Semantic::Off, _) => " (no text holds its words)".to_string(),
            (Semantic::On { .. }, lanes) => format!(
                " ({}nothing recorded comes closer to it in meaning than similarity {:.2}; \
                 `--floor 0` shows the nearest anyway)",
                if lanes == Lanes::Both {
                    "no text matches its words well enough, and "
                } else {
                    ""
                },
                result.floor
            ),
        };
        ctx.ui.note(&format!("no hits for {:?}{why}", result.query));
        return Ok(1);
    }
    let ui = &ctx.ui;
    let mut out = ui.out();
    for h in &result.hits {
        let mut tag = h.row.kind.tag().to_string();
        if h.row.kind == TextKind::Obs {
            // An observation without evidence reads as the bare assertion it is.
            tag.push_str(if h.row.cited { "·cited" } else { "·uncited" });
        }
        if let Some(a) = h.agent {
            tag.push_str(&format!(" · {}", a.label()));
        }
        tag.push_str(&format!(
            " · {}",
            crate::vocab::time::age(now_ms, h.row.ts_ms, &ctx.tz)
        ));
        tag.push_str(&format!(" · {}", strength_bar(h.stars())));
        if let Some(s) = &h.row.subject {
            tag.push_str(&format!(" · {s}"));
        }
        if let Some(b) = &h.row.basis {
            tag.push_str(&format!(" · {}", crate::reads::vcs::basis_label(b)));
        }
        let short = handles.of(&h.session);
        writeln!(
            out,
            "  {} {}  {}",
            ui.dim(&format!("[{tag}]")),
            ui.preview(&clip(&h.row.text, if full { usize::MAX } else { 200 })),
            ui.dim(&format!("▸ peat show {short} {}", h.seq))
        )?;
    }
    out.finish()?;
    Ok(0)
}

/// A match's strength as five dots, for a person to read at a glance: one per fifth of
/// the likelihood that it answers the query.
fn strength_bar(stars: usize) -> String {
    let stars = stars.min(5);
    format!("{}{}", "●".repeat(stars), "○".repeat(5 - stars))
}
