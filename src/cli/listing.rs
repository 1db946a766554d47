//! What every list takes, and how its entries are sized: `--limit N` and `--since WHEN`
//! ([`ListArgs`]), with a default limit where an unbounded list is the problem and a last
//! line naming the command that lists the rest ([`more_line`]); long texts as previews, cut
//! at a character boundary with `…`, the whole text one handle away or with `--full`; and a
//! `--json` answer with previews marked as cut and its list fitted to the byte budget
//! ([`sized_json`]), never a clipped document.

use clap::Args;
use serde::Serialize;
use std::borrow::Cow;

use crate::cli::budget::fitting;
use crate::cli::ctx::Ctx;

/// How many characters of a long text a list's `--json` entry keeps.
pub(crate) const PREVIEW_CHARS: usize = 200;

/// The bounds every list takes. Its default limit is each command's own (`--help` says it).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ListArgs {
    /// At most N entries (0: every one)
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<usize>,
    /// Only entries since: days (3), a duration (90min, 12h, 3d, 2w), a date or time (2026-11-01, 2026-11-01T14:30), or a day as `asof` reads it (yesterday, monday, "last week", 1m)
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    /// Whole texts, not previews (and nothing folded)
    #[arg(long)]
    pub(crate) full: bool,
}

impl ListArgs {
    /// The limit given, else `default` (`None`: no limit).
    pub(crate) fn limit_or(&self, default: Option<usize>) -> Option<usize> {
        match self.limit {
            Some(0) => None,
            Some(n) => Some(n),
            None => default,
        }
    }

    /// The instant `--since` names, relative to now (one grammar with `asof` and `zoom`).
    pub(crate) fn since_ms(
        &self,
        now_ms: i64,
        tz: &jiff::tz::TimeZone,
    ) -> Result<Option<i64>, crate::cli::error::CliError> {
        self.since
            .as_deref()
            .map(|s| crate::vocab::time::parse_since(s, now_ms, tz))
            .transpose()
            .map_err(crate::cli::error::CliError::user)
    }
}

/// A long text as a list shows it: its first characters, and whether and how much was cut.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Preview<'a> {
    pub(crate) text: Cow<'a, str>,
    /// The whole text's length in characters: more than the preview's when `cut`.
    pub(crate) chars: usize,
    pub(crate) cut: bool,
}

/// `text` cut to `n` characters at a character boundary, ending in `…` when cut; whole when
/// `full`.
pub(crate) fn preview(text: &str, n: usize, full: bool) -> Preview<'_> {
    let chars = text.chars().count();
    if full || chars <= n {
        return Preview {
            text: Cow::Borrowed(text),
            chars,
            cut: false,
        };
    }
    let end = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    Preview {
        text: Cow::Owned(format!("{}…", text[..end].trim_end())),
        chars,
        cut: true,
    }
}

/// The line that ends a list `--limit` cut short: how many `what` (a singular noun) it left
/// out, anything `aside` adds, and this command again with `--limit 0`, which lists them all.
/// `None` when nothing was left out.
pub(crate) fn more_line(ctx: &Ctx, left: usize, what: &str, aside: &str) -> Option<String> {
    more_line_with(ctx, left, (what, aside), &ctx.rerun("--limit", Some("0")))
}

/// [`more_line`] naming `rest` as the command that lists them all.
pub(crate) fn more_line_with(
    ctx: &Ctx,
    left: usize,
    (what, aside): (&str, &str),
    rest: &str,
) -> Option<String> {
    (left > 0).then(|| {
        let plural = if left == 1 { "" } else { "s" };
        format!(
            "… {left} more {what}{plural}{aside}  {}",
            ctx.ui.dim(&format!("▸ {rest}"))
        )
    })
}

/// How many of `items` a `--json` list prints: those within the budget ([`fitting`]), and
/// when that leaves some out, a note on stderr saying how many and how to list them all.
fn json_fit<T: Serialize>(ctx: &Ctx, items: &[T], rest: usize, what: &str) -> usize {
    let n = fitting(items, rest, ctx.ui.budget);
    if n < items.len() {
        ctx.ui.note(&format!(
            "peat: {n} of {} {what} fit the {}-byte budget; `{}` prints them all",
            items.len(),
            ctx.ui.budget.bytes.unwrap_or_default(),
            ctx.ui.budget.rest
        ));
    }
    n
}

/// The keys of a `--json` answer's long texts: a prompt's or a reply's `text`, a tool call's
/// `detail`, a commit's `message`.
const TEXT_KEYS: [&str; 3] = ["text", "detail", "message"];

/// A `--json` answer whose long texts are previews (unless `full`) and whose list (the
/// field `list` names, or the answer itself when it is an array) keeps the entries that fit
/// the budget: the document stays whole JSON, only shorter. Each text cut says so beside it
/// (`cut`: true, `chars`: its whole length); a list left short says so on stderr with the
/// command that prints it all, and an object answer also by how many entries it left out
/// (`omitted`). `what` names the entries, for that note.
pub(crate) fn sized_json<T: Serialize>(
    ctx: &Ctx,
    answer: &T,
    list: Option<&str>,
    full: bool,
    what: &str,
) -> Result<serde_json::Value, serde_json::Error> {
    let mut v = serde_json::to_value(answer)?;
    if !full {
        preview_texts(&mut v);
    }
    let items = match list {
        Some(key) => v.get_mut(key),
        None => Some(&mut v),
    };
    let Some(serde_json::Value::Array(items)) = items else {
        return Ok(v);
    };
    let taken = std::mem::take(items);
    // The answer around the list, with room for `omitted` and the closing newline.
    let around = serde_json::to_vec(&v)?.len() + r#","omitted":"#.len() + 20 + 1;
    let n = json_fit(ctx, &taken, around, what);
    let omitted = taken.len() - n;
    let kept = taken.into_iter().take(n);
    match (list, &mut v) {
        (Some(key), serde_json::Value::Object(map)) => {
            if let Some(serde_json::Value::Array(items)) = map.get_mut(key) {
                items.extend(kept);
            }
            if omitted > 0 {
                map.insert("omitted".into(), omitted.into());
            }
        }
        (_, serde_json::Value::Array(items)) => items.extend(kept),
        _ => {}
    }
    Ok(v)
}

/// Every long text under one of [`TEXT_KEYS`] in `v`, at any depth, as its preview, its
/// object marked `cut` with the whole text's `chars`.
fn preview_texts(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for key in TEXT_KEYS {
                let Some(serde_json::Value::String(s)) = map.get(key) else {
                    continue;
                };
                let p = preview(s, PREVIEW_CHARS, false);
                if p.cut {
                    let (text, chars) = (p.text.into_owned(), p.chars);
                    map.insert(key.into(), text.into());
                    map.insert("chars".into(), chars.into());
                    map.insert("cut".into(), true.into());
                }
            }
            map.values_mut().for_each(preview_texts);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(preview_texts),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preview_cuts_at_a_character_boundary_and_says_how_long_the_whole_is() {
        let p = preview("ééééé", 3, false);
        assert_eq!(p.text, "ééé…");
        assert_eq!((p.chars, p.cut), (5, true));
        let whole = preview("ééééé", 3, true);
        assert_eq!((whole.text.as_ref(), whole.cut), ("ééééé", false));
        assert!(!preview("abc", 3, false).cut);
    }
}
