//! Lines fitted to the terminal's width. Only on a terminal: piped output is an API (scripts,
//! an agent's capture) and is never fitted, so [`width`] is `None` there and nothing here runs.
//!
//! Most of peat's lines begin with a handle, a time or a path and end in the command that
//! reads more (`▸ peat show 5e55a0a1 12`); those must stay whole for a person or an agent to
//! copy. Only a line's prose preview (a prompt, a reply, a hit) may be shortened. A renderer
//! marks it with [`mark`] (through `Ui::preview`), and `ui::Out` fits each line it writes:
//!
//! 1. a line that fits is left as it is;
//! 2. else its preview is cut with `…` to what the rest leaves, if that is [`MIN_PREVIEW`]
//!    columns or more;
//! 3. else its closing `▸` command moves to a line of its own, indented, and then the preview
//!    too when the line is still too wide;
//! 4. what still does not fit (a header, a list of paths) wraps at its spaces under a hanging
//!    indent, between two ` · ` fields where it can.
//!
//! So a line breaks only between words, never inside a handle, a path or a `▸` command, and
//! loses nothing; a word wider than the terminal is left for it to wrap.
//!
//! A line of code is marked to be left as it is, by [`keep`]. The marks are Unicode
//! noncharacters (U+FDD0..U+FDD2, reserved for a program's internal use): transcript text
//! cannot carry them onto a terminal, as `ui::sanitize` escapes them there, and one that ever
//! reached a terminal unfitted would show as a box, not change its state as a control would.

use unicode_width::UnicodeWidthChar;

/// Where a line's preview starts and ends.
pub(crate) const OPEN: char = '\u{FDD0}';
pub(crate) const CLOSE: char = '\u{FDD1}';
/// A line to leave as it is.
pub(crate) const KEEP: char = '\u{FDD2}';

/// A preview is never cut shorter than this many columns: below it, a line is laid out on more
/// lines instead.
pub(crate) const MIN_PREVIEW: usize = 20;

/// The columns under a `▸` command or a preview moved to a line of their own, past the line's
/// own indent.
const HANG: &str = "    ";

/// The columns text may use: `None` unless stdout is a terminal; there, `COLUMNS` when it is a
/// positive number (as other tools honour it, to fit output narrower or wider than the
/// terminal reports), else the terminal's own width. `COLUMNS` never fits piped output: a
/// shell may export it, and a pipe's reader (a script, an agent) has no width.
pub(crate) fn width(stdout_tty: bool, columns_var: Option<&str>) -> Option<usize> {
    if !stdout_tty {
        return None;
    }
    columns_var
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(|| {
            terminal_size::terminal_size_of(std::io::stdout())
                .map(|(w, _)| usize::from(w.0))
                .filter(|&n| n > 0)
        })
}

/// `s` marked as text whose line fitting must leave as it is: code, whose indent means
/// something and which a hanging indent would misalign.
pub(crate) fn keep(s: &str) -> String {
    format!("{KEEP}{s}")
}

/// `s` marked as the line's preview, the one part fitting may shorten.
pub(crate) fn mark(s: &str) -> String {
    format!("{OPEN}{s}{CLOSE}")
}

/// The columns `s` takes on a terminal: each character's display width (two for CJK and most
/// emoji, none for combining marks), none for escape sequences (colour) or marks.
pub(crate) fn columns(s: &str) -> usize {
    let mut n = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_escape(&mut chars);
        } else if c != OPEN && c != CLOSE {
            n += c.width().unwrap_or(0);
        }
    }
    n
}

/// Consume the rest of an escape sequence whose ESC was just read (CSI: `[`, parameters, a
/// final byte in `@`..=`~`), returning what it consumed.
fn skip_escape(chars: &mut std::str::Chars<'_>) -> String {
    let mut seq = String::new();
    if chars.clone().next() == Some('[') {
        for c in chars.by_ref() {
            seq.push(c);
            if seq.len() > 1 && ('@'..='~').contains(&c) {
                break;
            }
        }
    }
    seq
}

/// `s` in at most `cols` columns, its last column `…` when cut. Escape sequences are all
/// kept, so a style opened in the part kept is still closed.
fn cut(s: &str, cols: usize) -> String {
    if columns(s) <= cols {
        return s.to_string();
    }
    let room = cols.saturating_sub(1);
    let mut out = String::new();
    let mut used = 0;
    let mut full = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push(c);
            out.push_str(&skip_escape(&mut chars));
            continue;
        }
        let w = c.width().unwrap_or(0);
        if !full && used + w <= room {
            out.push(c);
            used += w;
            continue;
        }
        if !full {
            // No space before the ellipsis: "word…", not "word …".
            while out.ends_with(' ') {
                out.pop();
            }
            out.push('…');
            full = true;
        }
    }
    out
}

/// `line` (without its newline) fitted to `width` columns, its marks removed; a line laid out
/// on more lines comes back with newlines inside it.
pub(crate) fn line(line: &str, width: usize) -> String {
    if line.contains(KEEP) {
        return line.replace([OPEN, CLOSE, KEEP], "");
    }
    let p = Parts::of(line);
    let body = format!("{}{}{}", p.head, p.preview, p.rest);
    let tail = format!("{}{}", p.gap, p.hint);
    let whole = format!("{body}{tail}");
    if columns(&whole) <= width {
        return whole;
    }
    if let Some(one) = p.shortened(&tail, width) {
        return one;
    }
    let indent = format!("{}{HANG}", &whole[..whole.len() - whole.trim_start().len()]);
    let body = if columns(&body) <= width {
        body
    } else {
        p.shortened("", width)
            .or_else(|| p.below(&indent, width))
            .unwrap_or_else(|| wrap(&body, width, &indent))
    };
    if p.hint.is_empty() || body.trim().is_empty() {
        return format!("{body}{tail}");
    }
    format!("{body}\n{indent}{}", p.hint)
}

/// `s` broken at its spaces into lines of at most `width` columns, each after the first under
/// `indent`: a break after a `·` (between two fields) is preferred, and a word wider than a
/// line is left whole.
fn wrap(s: &str, width: usize, indent: &str) -> String {
    if columns(s) <= width {
        return s.to_string();
    }
    let lead = &s[..s.len() - s.trim_start_matches(' ').len()];
    let mut lines: Vec<Vec<&str>> = Vec::new();
    let mut line: Vec<&str> = Vec::new();
    let used = |start: &str, words: &[&str]| {
        columns(start) + words.iter().map(|w| columns(w) + 1).sum::<usize>()
    };
    for word in s[lead.len()..].split(' ') {
        let start = if lines.is_empty() { lead } else { indent };
        if !word.is_empty() && !line.is_empty() && used(start, &line) + columns(word) > width {
            let at = line
                .iter()
                .rposition(|w| *w == "·")
                .map(|i| i + 1)
                .filter(|&i| i < line.len() && used(indent, &line[i..]) + columns(word) <= width)
                .unwrap_or(line.len());
            let carried = line.split_off(at);
            lines.push(line);
            line = carried;
        }
        line.push(word);
    }
    lines.push(line);
    lines
        .iter()
        .enumerate()
        .map(|(i, words)| format!("{}{}", if i == 0 { lead } else { indent }, words.join(" ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line taken apart: what comes before its preview, the preview, what follows it, and its
/// closing `▸` command with the gap before it. Each may be empty.
struct Parts<'a> {
    head: String,
    preview: String,
    rest: String,
    gap: &'a str,
    hint: &'a str,
}

impl<'a> Parts<'a> {
    fn of(line: &'a str) -> Parts<'a> {
        let marked = line
            .split_once(OPEN)
            .and_then(|(head, more)| more.split_once(CLOSE).map(|(p, after)| (head, p, after)));
        // The command is looked for after the preview only: a preview may quote a `▸`.
        let (head, preview, (rest, gap, hint)) = match marked {
            Some((head, preview, after)) => (head, preview, split_hint(after)),
            None => {
                let (head, gap, hint) = split_hint(line);
                (head, "", ("", gap, hint))
            }
        };
        let unmarked = |s: &str| s.replace([OPEN, CLOSE], "");
        Parts {
            head: unmarked(head),
            preview: unmarked(preview),
            rest: unmarked(rest),
            gap,
            hint,
        }
    }

    /// The line on one line with `tail` after it, its preview cut to fit; `None` when the
    /// preview would be cut below [`MIN_PREVIEW`] (or there is none).
    fn shortened(&self, tail: &str, width: usize) -> Option<String> {
        let fixed = columns(&self.head) + columns(&self.rest) + columns(tail);
        let room = width.checked_sub(fixed)?;
        (!self.preview.is_empty() && room >= MIN_PREVIEW).then(|| {
            format!(
                "{}{}{}{tail}",
                self.head,
                cut(&self.preview, room),
                self.rest
            )
        })
    }

    /// The head on a line of its own and the preview (with what follows it) below it,
    /// indented and cut to fit; `None` when the head holds nothing to break after, or the
    /// preview would be cut below [`MIN_PREVIEW`].
    fn below(&self, indent: &str, width: usize) -> Option<String> {
        if self.preview.is_empty() {
            return None;
        }
        // What opens the preview (a quote) goes down with it.
        let at = self.head.rfind(' ')?;
        let (kept, lead) = (self.head[..at].trim_end(), &self.head[at + 1..]);
        if kept.trim().is_empty() {
            return None;
        }
        let room = width.checked_sub(columns(indent) + columns(lead) + columns(&self.rest))?;
        (room >= MIN_PREVIEW.min(columns(&self.preview))).then(|| {
            format!(
                "{}\n{indent}{lead}{}{}",
                wrap(kept, width, indent),
                cut(&self.preview, room),
                self.rest
            )
        })
    }
}

/// `s` split before its last `▸` command: what precedes it, the spaces between, and the
/// command with any style opened right before it. All of `s` precedes when it has no `▸`.
fn split_hint(s: &str) -> (&str, &str, &str) {
    let Some(mut start) = s.rfind('▸') else {
        return (s, "", "");
    };
    while let Some(esc) = s[..start].rfind('\x1b').filter(|&e| is_csi(&s[e..start])) {
        start = esc;
    }
    let before = s[..start].trim_end_matches(' ');
    (before, &s[before.len()..start], &s[start..])
}

/// Whether `s` is exactly one CSI escape sequence (such as a colour).
fn is_csi(s: &str) -> bool {
    let Some(body) = s.strip_prefix("\x1b[") else {
        return false;
    };
    let mut chars = body.chars();
    let last = chars.next_back();
    last.is_some_and(|c| ('@'..='~').contains(&c)) && chars.all(|c| ('0'..='?').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HINT: &str = "▸ peat show 5e55a0a1 12";

    fn widest(s: &str) -> usize {
        s.lines().map(columns).max().unwrap_or(0)
    }

    #[test]
    fn columns_count_display_width_and_not_colour_or_marks() {
        assert_eq!(columns("abc"), 3);
        assert_eq!(columns("日本語"), 6);
        assert_eq!(columns("🦀 ok"), 5);
        assert_eq!(columns("e\u{301}"), 1);
        assert_eq!(columns("\x1b[2m▸ x\x1b[0m"), 3);
        assert_eq!(columns(&mark("ab")), 2);
    }

    #[test]
    fn a_line_that_fits_is_only_unmarked() {
        let l = format!("  [prompt] {}  {HINT}", mark("make it so"));
        assert_eq!(line(&l, 80), format!("  [prompt] make it so  {HINT}"));
        assert_eq!(line("no marks at all", 15), "no marks at all");
    }

    #[test]
    fn only_the_preview_is_cut_and_the_command_stays_whole() {
        let prose = "add a token-bucket rate limiter to src/server.ts and wire it after cors";
        let l = format!("  09:01 ❯ {}  {HINT}", mark(prose));
        let out = line(&l, 60);
        assert!(columns(&out) <= 60 && columns(&out) >= 59, "{out}");
        assert!(out.starts_with("  09:01 ❯ add a token"), "{out}");
        assert!(out.ends_with(&format!("…  {HINT}")), "{out}");
        assert!(!out.contains('\n'));
    }

    #[test]
    fn wide_characters_are_cut_by_the_columns_they_take() {
        let l = format!("{}  {HINT}", mark(&"日本語のテキスト".repeat(6)));
        let out = line(&l, 50);
        assert!(columns(&out) <= 50, "{out}");
        assert!(out.ends_with(&format!("…  {HINT}")), "{out}");
    }

    #[test]
    fn colour_is_kept_and_counted_as_nothing() {
        let l = format!(
            "  \x1b[2m[hit]\x1b[0m {}  \x1b[2m{HINT}\x1b[0m",
            mark(&"word ".repeat(30))
        );
        let out = line(&l, 60);
        assert!(columns(&out) <= 60 && columns(&out) >= 59, "{out:?}");
        assert!(
            out.ends_with(&format!("…  \x1b[2m{HINT}\x1b[0m")),
            "{out:?}"
        );
    }

    #[test]
    fn a_preview_too_short_to_read_puts_the_command_on_its_own_line() {
        let head = "  [prompt · 6d ago · ●●●○○] ";
        let l = format!("{head}{}  \x1b[2m{HINT}\x1b[0m", mark(&"prose ".repeat(20)));
        let out = line(&l, 60);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(
            lines[0].starts_with(head) && lines[0].ends_with('…'),
            "{out}"
        );
        assert_eq!(lines[1], format!("      \x1b[2m{HINT}\x1b[0m"));
        assert!(widest(&out) <= 60, "{out}");
    }

    #[test]
    fn a_long_head_sends_the_preview_below_it() {
        let head = "3f6c2a9e 2026-07-14 09:00 claude acme-api · 8 tools · 1 file  ";
        let l = format!("{head}{}  {HINT}", mark("turn 0: add a limiter"));
        let out = line(&l, 60);
        assert_eq!(
            out,
            format!("{}\n    turn 0: add a limiter\n    {HINT}", head.trim_end())
        );
    }

    #[test]
    fn the_quote_opening_a_preview_goes_down_with_it() {
        let l = format!(
            "12 3f6c2a9e · acme-api · 8 tools · 1 file \"{}\"",
            mark("x y z")
        );
        assert_eq!(
            line(&l, 44),
            "12 3f6c2a9e · acme-api · 8 tools · 1 file\n    \"x y z\""
        );
    }

    #[test]
    fn a_line_without_a_preview_moves_its_command_and_wraps_the_rest() {
        let l = format!("  2026-07-14: 8 tools · 1 commit · src/server.ts, src/limiter.ts  {HINT}");
        assert_eq!(
            line(&l, 70),
            format!(
                "  2026-07-14: 8 tools · 1 commit · src/server.ts, src/limiter.ts\n      {HINT}"
            )
        );
        assert_eq!(
            line(&l, 60),
            format!(
                "  2026-07-14: 8 tools · 1 commit ·\n      src/server.ts, src/limiter.ts\n      {HINT}"
            )
        );
        let bare = "  src/a/very/long/path/that/cannot/be/cut/anywhere/at/all.rs (3 edits)";
        assert_eq!(
            line(bare, 40),
            "  src/a/very/long/path/that/cannot/be/cut/anywhere/at/all.rs\n      (3 edits)"
        );
        assert_eq!(line(&format!("  {HINT}"), 10), format!("  {HINT}"));
    }

    #[test]
    fn a_line_with_nothing_to_shorten_wraps_between_its_fields() {
        let head = "== log 3f6c2a9e · claude · acme-api · feat/rate-limit · 3 prompts · 4 tool calls · 1 file ==";
        assert_eq!(
            line(head, 60),
            "== log 3f6c2a9e · claude · acme-api · feat/rate-limit ·\n    3 prompts · 4 tool calls · 1 file =="
        );
        let said = "last session in another project, acme-api (6d ago, feat/rate-limit):";
        let out = line(said, 40);
        assert!(widest(&out) <= 40, "{out}");
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>(),
            said.split_whitespace().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_line_of_code_is_left_as_it_is() {
        let code = format!("  12 │ {}", keep(&"let x = y; ".repeat(10)));
        assert_eq!(
            line(&code, 40),
            format!("  12 │ {}", "let x = y; ".repeat(10))
        );
    }

    #[test]
    fn a_command_quoted_in_a_preview_is_not_taken_for_the_lines_own() {
        let l = format!(
            "  {}",
            mark(&format!("run {HINT} then {}", "more ".repeat(20)))
        );
        let out = line(&l, 40);
        assert!(!out.contains('\n'), "{out}");
        assert!(columns(&out) <= 40, "{out}");
    }

    #[test]
    fn only_a_terminal_has_a_width() {
        assert_eq!(width(false, Some("60")), None);
        assert_eq!(width(true, Some("60")), Some(60));
        assert_ne!(width(true, Some("0")), Some(0));
        assert_ne!(width(true, Some("wide")), Some(0));
    }
}
