//! `peat export SESSION`: a session as a transcript to paste into a pull request or an issue,
//! in Markdown (the default), one self-contained HTML page (`--html`), or JSON (`--json`).
//! The transcript is [`crate::reads::export`]'s; the two text forms are its templates here.

use clap::Args;
use minijinja::Environment;
use std::io::Write;
use std::path::PathBuf;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::resolve_in_views;
use crate::cli::template::{line_environment, to_value};
use crate::reads::export::Transcript;
use crate::vocab::event::Seq;

const MARKDOWN: &str = include_str!("transcript.md.j2");
const HTML: &str = include_str!("transcript.html.j2");

/// Write a session as a readable transcript, for a pull request or an issue
///
/// The person's prompts, the agent's prose and closing messages, each tool call folded with
/// what it printed, each edit as a diff, compactions, and the commits the session made.
/// Markdown by default (GitHub folds the calls); `--html` is one page with no script and
/// nothing fetched from elsewhere; `--json` is the same transcript as data. What the store
/// holds is redacted, so the export is too. `--since`/`--until` cut a part by seq (the seqs
/// `peat log` and `peat show` print).
#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    /// The session (an id, a prefix, or a handle from `peat sessions`)
    pub(crate) session: String,
    /// One self-contained HTML page instead of Markdown
    #[arg(long)]
    pub(crate) html: bool,
    /// Only from this seq on (inclusive)
    #[arg(long, value_name = "SEQ")]
    pub(crate) since: Option<Seq>,
    /// Only up to this seq (inclusive)
    #[arg(long, value_name = "SEQ")]
    pub(crate) until: Option<Seq>,
    /// Write it to this file instead of stdout
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

pub(crate) fn run(ctx: &Ctx, args: &ExportArgs) -> Result<u8, CliError> {
    if args.html && ctx.json {
        return Err(
            CliError::user("--html and --json are two forms of one export")
                .hint("ask for one of them (Markdown is the default)."),
        );
    }
    if let (Some(a), Some(b)) = (args.since, args.until)
        && a > b
    {
        return Err(
            CliError::user(format!("--since {a} comes after --until {b}"))
                .hint("--since is the first seq wanted and --until the last."),
        );
    }
    let (_ledger, views, _model) = ctx.read_views()?;
    let session = resolve_in_views(ctx, &views, &args.session)?;
    let transcript = Transcript::of(&views, session, (args.since, args.until), Some(&ctx.cwd))?;
    drop(views);
    let text = if ctx.json {
        let mut s = serde_json::to_string(&transcript).map_err(std::io::Error::from)?;
        s.push('\n');
        s
    } else {
        render(ctx, &transcript, args.html)?
    };
    match &args.output {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            CliError::user(format!("cannot write {}: {e}", path.display()))
                .hint("name a file in a folder that exists and that you can write to.")
        })?,
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(0)
}

/// The transcript through the Markdown or the HTML template.
fn render(ctx: &Ctx, t: &Transcript, html: bool) -> Result<String, CliError> {
    let env = environment(ctx.tz.clone());
    let (name, source) = match html {
        true => ("transcript.html", HTML),
        false => ("transcript.md", MARKDOWN),
    };
    let failed = |e: minijinja::Error| {
        CliError::user(format!("the export template failed: {e}"))
            .hint("this is a bug in peat: please report it with the session's agent and version.")
    };
    let template = env.template_from_named_str(name, source).map_err(failed)?;
    let json = serde_json::to_value(t).map_err(std::io::Error::from)?;
    template
        .render(minijinja::context! { t => to_value(json), meta => meta(ctx, t) })
        .map_err(failed)
}

/// The line under the title: agent, folder, branch, when.
fn meta(ctx: &Ctx, t: &Transcript) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(a) = t.agent {
        parts.push(a.label().to_string());
    }
    parts.extend(t.cwd.clone());
    parts.extend(t.branch.clone());
    if let (Some(a), Some(b)) = (t.start_ms, t.end_ms) {
        let minute = |ms| crate::vocab::time::local_minute(ms, &ctx.tz);
        parts.push(format!("{} – {}", minute(a), minute(b)));
    }
    parts.join(" · ")
}

/// The templates' environment: HTML escaped in `.html` templates (minijinja's default by
/// name), and the filters they share.
fn environment(tz: jiff::tz::TimeZone) -> Environment<'static> {
    let mut env = line_environment();
    env.add_filter("time", move |ms: i64| {
        crate::vocab::time::local_minute(ms, &tz)
    });
    env.add_filter("oneline", |s: String| {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    });
    env.add_filter("quote", |s: String| {
        s.lines()
            .map(|l| format!("> {l}").trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    });
    env.add_filter("preview", |s: String, n: usize| crate::cli::ui::clip(&s, n));
    // Markdown's HTML (a `<summary>`) needs only these three escaped.
    env.add_filter("h", |s: String| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    });
    env.add_filter("fenced", fenced);
    env.add_filter("difflines", difflines);
    env
}

/// `text` in a Markdown code block whose fence is longer than any run of backticks in it.
fn fenced(text: String, lang: String) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}", text.trim_end_matches('\n'))
}

/// A unified diff's lines, each with the class that colours it: `add`, `del`, `hunk` or
/// `ctx`.
fn difflines(diff: String) -> Vec<(&'static str, String)> {
    diff.lines()
        .map(|l| {
            let class = if l.starts_with("+++") || l.starts_with("---") {
                "ctx"
            } else if l.starts_with('+') {
                "add"
            } else if l.starts_with('-') {
                "del"
            } else if l.starts_with("@@") {
                "hunk"
            } else {
                "ctx"
            };
            (class, l.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_outgrows_the_backticks_inside_it() {
        assert_eq!(fenced("a\n".into(), "diff".into()), "```diff\na\n```");
        assert_eq!(
            fenced("x ```` y".into(), String::new()),
            "`````\nx ```` y\n`````"
        );
    }

    #[test]
    fn diff_lines_are_classed_by_their_mark() {
        let lines = difflines("--- a\n+++ a\n@@ -1 +1 @@\n-old\n+new\n same".into());
        let classes: Vec<&str> = lines.iter().map(|(c, _)| *c).collect();
        assert_eq!(classes, ["ctx", "ctx", "hunk", "del", "add", "ctx"]);
    }
}
