use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::ledger::{Ledger, Mode};
use crate::redact::{Finding, Redactor, retro};

/// Redact secrets from everything already recorded, or check a file against the rules
///
/// Secrets are redacted at capture, before anything is stored: each becomes
/// `[REDACTED:<kind>:<hash8>]`, where hash8 is keyed by this store's own key, so equal
/// secrets share a marker. Without arguments, this applies the current rules (built-in,
/// then `.peat/redact.toml`) to the whole store: changed events are written again as
/// revisions, the views follow, and the old bytes are then removed from disk (the ledger
/// and views databases are rewritten, the keyword index merged). Run it after adding a
/// rule. A newer peat with improved rules does the same by itself, once.
///
/// `.peat/redact.toml` (or `redact.toml` in the store `$PEAT_DB` names):
///
///   allow = ["^AKIAIOSFODNN7EXAMPLE$"]   # regexes never redacted
///
///   [[rule]]
///   kind = "acme-license"                # a-z, 0-9, '-'
///   regex = "ACME-[0-9A-F]{24}"          # a capture group, if any, is what is redacted
#[derive(Args, Debug, Default)]
#[command(verbatim_doc_comment)]
pub(crate) struct RedactArgs {
    /// Show what would be redacted in FILE, storing nothing
    #[arg(long, value_name = "FILE", conflicts_with = "rules")]
    pub(crate) check: Option<PathBuf>,
    /// List the rules in force and where each comes from
    #[arg(long)]
    pub(crate) rules: bool,
}

pub(crate) fn run(ctx: &Ctx, args: &RedactArgs) -> Result<u8, CliError> {
    if let Some(file) = &args.check {
        return check(ctx, file);
    }
    if args.rules {
        return list_rules(ctx);
    }
    let mut ledger = ctx.open(Mode::Existing)?;
    let report = apply(ctx, &mut ledger)?;
    if ctx.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    }
    ctx.ui.note(&format!(
        "redacted: {} of {} events revised, {} edit payloads replaced; old bytes removed from disk (rules v{})",
        report.revised, report.events, report.blobs, report.rules_version
    ));
    Ok(0)
}

/// Apply the store's current rules to all of it (see [`retro::run`]).
pub(crate) fn apply(ctx: &Ctx, ledger: &mut Ledger) -> Result<retro::Report, CliError> {
    let r = Redactor::for_store(ledger.path())?;
    let mut model = ctx.model_slot()?;
    let ui = ctx.ui;
    Ok(retro::run(
        ledger,
        &r,
        &mut model,
        ctx.tz.clone(),
        &mut |l| ui.note(l),
    )?)
}

#[derive(Serialize)]
struct Checked<'a> {
    file: &'a std::path::Path,
    findings: Vec<Found>,
}

#[derive(Serialize)]
struct Found {
    line: usize,
    column: usize,
    kind: String,
    marker: String,
    /// The first characters of the secret, enough to recognise it, never all of it.
    preview: String,
}

fn check(ctx: &Ctx, file: &std::path::Path) -> Result<u8, CliError> {
    let bytes = std::fs::read(file).map_err(|e| {
        CliError::user(format!("cannot read {}: {e}", file.display()))
            .hint("Name a text file: a transcript, an .env file, a log.")
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let r = checker(ctx)?;
    let findings: Vec<Found> = r
        .findings(&text)
        .into_iter()
        .map(|f| located(&text, f))
        .collect();
    if ctx.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &Checked { file, findings })
            .map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let mut out = ctx.ui.out();
    for f in &findings {
        writeln!(
            out,
            "{}:{}:{}  {}  {}…  → {}",
            file.display(),
            f.line,
            f.column,
            f.kind,
            f.preview,
            f.marker
        )?;
    }
    ctx.ui.note(&match findings.len() {
        0 => format!("{}: nothing would be redacted", file.display()),
        n => format!(
            "{}: {n} secret{} would be redacted (nothing was stored)",
            file.display(),
            if n == 1 { "" } else { "s" }
        ),
    });
    Ok(0)
}

/// The store's redactor if the store has a key; otherwise the same rules under a
/// throwaway key (a check creates nothing).
fn checker(ctx: &Ctx) -> Result<Redactor, CliError> {
    let store = &ctx.location.store;
    let user = crate::redact::config::load(&crate::redact::config::files(store))?;
    let key = match crate::redact::key::load(store)? {
        Some(k) => k,
        None => {
            ctx.ui.note(
                "peat: no store here yet: markers use a throwaway key and will differ from the store's",
            );
            crate::redact::key::throwaway()?
        }
    };
    Ok(Redactor::new(key, user)?)
}

fn located(text: &str, f: Finding) -> Found {
    let before = &text[..f.start];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let secret = &text[f.start..f.end];
    let shown = (secret.chars().count() / 4).clamp(1, 6);
    Found {
        line,
        column,
        kind: f.kind,
        marker: f.marker,
        preview: secret.chars().take(shown).collect(),
    }
}

fn list_rules(ctx: &Ctx) -> Result<u8, CliError> {
    let r = checker(ctx)?;
    #[derive(Serialize)]
    struct RuleOut<'a> {
        kind: &'a str,
        source: &'a str,
        regex: &'a str,
    }
    let rules: Vec<RuleOut> = r
        .rules()
        .iter()
        .map(|x| RuleOut {
            kind: &x.kind,
            source: &x.source,
            regex: x.regex(),
        })
        .collect();
    if ctx.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(
            &mut out,
            &serde_json::json!({"rules_version": crate::redact::RULES_VERSION, "rules": rules}),
        )
        .map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let mut out = ctx.ui.out();
    for x in &rules {
        writeln!(out, "{:<22} {}", x.kind, x.source)?;
    }
    Ok(0)
}
