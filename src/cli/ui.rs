//! The output contract. stdout carries the product and nothing else; notes, receipts and
//! progress go to stderr. Colour only on a terminal, never with `NO_COLOR` or `TERM=dumb`.
//! `--json` output is never clipped, styled, fitted or sanitized (JSON escaping is its own
//! safety).

use anstyle::{AnsiColor, Style};

use crate::cli::budget::{Budget, Meter};
use crate::cli::fit;
use std::io::{self, IsTerminal, Write};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// Set when stderr is a hook log (a capture a hook started): each line then starts with
/// the time and the hook's tag, as the log's own lines do.
static STDERR_TAG: OnceLock<String> = OnceLock::new();

/// Set on a detached capture: its stderr is the hook log, and each line it writes there
/// starts with the time and this tag (agent, moment, session). Here rather than in the hook,
/// because every line the command line writes on stderr may have to carry it.
pub(crate) const LOG_TAG_VAR: &str = "PEAT_HOOK_LOG_TAG";

/// One hook log line: `<time> <tag>: <message>`, the time being when it is written (a
/// detached capture's lines come minutes after the hook's own).
pub(crate) fn log_line(tag: &str, msg: &str) -> String {
    let when = crate::vocab::time::format_iso_ms(jiff::Timestamp::now().as_millisecond());
    format!("{when} {tag}: {}", msg.replace('\n', " "))
}

/// Mark stderr as the hook log of the hook `tag` names (see [`LOG_TAG_VAR`]).
pub(crate) fn stderr_is_hook_log(tag: String) {
    let _ = STDERR_TAG.set(tag);
}

/// Write `msg` on stderr, each of its lines tagged when stderr is a hook log.
pub(crate) fn stderr_line(msg: &str) {
    let mut err = io::stderr().lock();
    let _ = match STDERR_TAG.get() {
        Some(tag) => msg
            .lines()
            .try_for_each(|l| writeln!(err, "{}", log_line(tag, l))),
        None => writeln!(err, "{msg}"),
    };
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Ui {
    pub(crate) stdout_tty: bool,
    /// The columns stdout's lines are fitted to: only on a terminal (see [`fit::width`]).
    pub(crate) width: Option<usize>,
    pub(crate) stderr_tty: bool,
    /// Styling is allowed on stdout.
    pub(crate) color: bool,
    /// Styling is allowed on stderr.
    pub(crate) err_color: bool,
    /// The bytes text output may take (see [`crate::cli::budget`]).
    pub(crate) budget: Budget,
}

impl Ui {
    /// Styles only on a terminal, and never when `plain` (`NO_COLOR` or `TERM=dumb`, which
    /// the context reads); lines fitted to the terminal's width, or to `columns` (`COLUMNS`),
    /// only on a terminal. Text held to the budget `budget` names (see [`Budget::resolve`]),
    /// `argv` being the command line that its last line repeats.
    pub(crate) fn detect(
        plain: bool,
        columns: Option<&str>,
        budget: Option<usize>,
        argv: &[String],
    ) -> Ui {
        let stdout_tty = io::stdout().is_terminal();
        let stderr_tty = io::stderr().is_terminal();
        Ui {
            stdout_tty,
            width: fit::width(stdout_tty, columns),
            stderr_tty,
            color: stdout_tty && !plain,
            err_color: stderr_tty && !plain,
            budget: Budget::resolve(budget, stdout_tty, argv),
        }
    }

    /// A status line on stderr (receipts, what was done).
    pub(crate) fn note(&self, msg: &str) {
        stderr_line(msg);
    }

    /// A warning on stderr: something was skipped, the run goes on.
    pub(crate) fn warn(&self, msg: &str) {
        let head = paint(self.err_color, WARNING, "peat:");
        stderr_line(&format!("{head} {msg}"));
    }

    /// Where a long listing goes: through `less -RFX` on a terminal, else stdout; its lines
    /// fitted to the terminal as [`Ui::out`]'s are.
    pub(crate) fn pager(&self) -> Out {
        if self.stdout_tty
            && let Ok(mut child) = Command::new("less")
                .arg("-RFX")
                .stdin(Stdio::piped())
                .spawn()
            && let Some(stdin) = child.stdin.take()
        {
            return Out {
                sink: Sink::Pager {
                    child,
                    stdin: io::BufWriter::new(stdin),
                },
                fit: self.width,
                line: Vec::new(),
                meter: Meter::of(self.budget),
            };
        }
        self.out()
    }

    /// stdout for text: on a terminal, each line fitted to its width (see [`fit`]); held to
    /// the budget, its last line then saying how to see the rest.
    pub(crate) fn out(&self) -> Out {
        Out {
            fit: self.width,
            meter: Meter::of(self.budget),
            ..Out::stdout()
        }
    }

    /// A progress bar on stderr, only on a terminal.
    pub(crate) fn progress(&self, len: u64, what: &str) -> Option<indicatif::ProgressBar> {
        if !self.stderr_tty {
            return None;
        }
        let bar = indicatif::ProgressBar::new(len);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} {msg} {pos}/{len} {wide_bar} {eta}")
        {
            bar.set_style(style);
        }
        bar.set_message(what.to_string());
        Some(bar)
    }

    /// Make transcript text safe for a terminal (control, bidi and zero-width characters
    /// escaped); piped output is left byte-exact.
    pub(crate) fn safe<'a>(&self, s: &'a str) -> std::borrow::Cow<'a, str> {
        if self.stdout_tty {
            sanitize(s)
        } else {
            std::borrow::Cow::Borrowed(s)
        }
    }

    /// `s` as a line's prose preview (a prompt, a reply, a hit): made safe as [`Ui::safe`]
    /// does, and on a terminal marked as the part of its line [`Ui::out`] may shorten to fit.
    pub(crate) fn preview<'a>(&self, s: &'a str) -> std::borrow::Cow<'a, str> {
        self.marked(s, fit::mark)
    }

    /// `s` (code) made safe as [`Ui::safe`] does, and on a terminal marked so that its line
    /// is not fitted: a hanging indent would read as the code's own.
    pub(crate) fn code<'a>(&self, s: &'a str) -> std::borrow::Cow<'a, str> {
        self.marked(s, fit::keep)
    }

    /// `s` made safe, and marked with `mark` when lines are fitted (never on a pipe).
    fn marked<'a>(&self, s: &'a str, mark: fn(&str) -> String) -> std::borrow::Cow<'a, str> {
        let safe = self.safe(s);
        match self.width {
            Some(_) => std::borrow::Cow::Owned(mark(&safe)),
            None => safe,
        }
    }

    /// `s` dimmed on a terminal.
    pub(crate) fn dim(&self, s: &str) -> String {
        paint(self.color, DIM, s)
    }

    /// `s` in bold on a terminal.
    pub(crate) fn bold(&self, s: &str) -> String {
        paint(self.color, BOLD, s)
    }

    /// `s` in the accent colour on a terminal.
    pub(crate) fn accent(&self, s: &str) -> String {
        paint(self.color, ACCENT, s)
    }

    /// `s` in the warning colour on a terminal (that of [`Ui::warn`]'s `peat:`).
    pub(crate) fn warning(&self, s: &str) -> String {
        paint(self.color, WARNING, s)
    }
}

// The one palette: every styled word peat writes (here, in the brief's template filters)
// takes its look from these, so a warning has one colour wherever it appears.
pub(crate) const BOLD: Style = Style::new().bold();
pub(crate) const DIM: Style = Style::new().dimmed();
pub(crate) const ACCENT: Style = AnsiColor::Cyan.on_default();
pub(crate) const WARNING: Style = AnsiColor::Yellow.on_default();

/// `s` in `style` when `on`, else `s` as it is.
pub(crate) fn paint(on: bool, style: Style, s: &str) -> String {
    if on {
        format!("{style}{s}{style:#}")
    } else {
        s.to_string()
    }
}

/// stdout, or a pager in front of it; on a terminal, each line fitted to its width; text
/// held to its budget, line by line.
pub(crate) struct Out {
    sink: Sink,
    /// The width lines are fitted to.
    fit: Option<usize>,
    /// The line being written until its newline, when lines are fitted or metered.
    line: Vec<u8>,
    /// How much of the budget the lines written took, and what was held back.
    meter: Option<Meter>,
}

/// Buffered: stdout alone writes each line as it ends (a syscall per line, a fifth of
/// `events --json`), and a pager's pipe each piece of a line.
enum Sink {
    Stdout(io::BufWriter<io::StdoutLock<'static>>),
    Pager {
        child: Child,
        stdin: io::BufWriter<std::process::ChildStdin>,
    },
}

impl Out {
    /// Standard output, whatever it is (no pager, no fitting: for `--json`).
    pub(crate) fn stdout() -> Out {
        Out {
            sink: Sink::Stdout(io::BufWriter::with_capacity(1 << 16, io::stdout().lock())),
            fit: None,
            line: Vec::new(),
            meter: None,
        }
    }

    /// Write out what is buffered (and the line saying what the budget held back), close
    /// the pager (if any) and wait for the person to leave it.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        let ended =
            self.end_line()
                .and_then(|()| match self.meter.as_ref().and_then(Meter::footer) {
                    Some(footer) => self.sink.write_all(footer.as_bytes()),
                    None => Ok(()),
                });
        match self.sink {
            Sink::Stdout(mut s) => ended.and_then(|()| s.flush()),
            Sink::Pager { mut child, stdin } => {
                // A pager the person quit early has closed its pipe: nothing to report.
                drop(stdin.into_inner());
                child.wait().map(|_| ())
            }
        }
    }

    /// Write the line begun and not ended, if any.
    fn end_line(&mut self) -> io::Result<()> {
        if self.line.is_empty() {
            return Ok(());
        }
        let line = std::mem::take(&mut self.line);
        self.emit(&line, false)
    }

    /// Write one line (`text` without its newline), fitted, if the budget admits it; its
    /// newline too when `ended`.
    fn emit(&mut self, text: &[u8], ended: bool) -> io::Result<()> {
        if let Some(meter) = &mut self.meter
            && !meter.admit(text.len() + 1)
        {
            return Ok(());
        }
        match self.fit {
            Some(width) => {
                let fitted = fit::line(&String::from_utf8_lossy(text), width);
                self.sink.write_all(fitted.as_bytes())?;
            }
            None => self.sink.write_all(text)?,
        }
        if ended {
            self.sink.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.fit.is_none() && self.meter.is_none() {
            return self.sink.write(buf);
        }
        self.line.extend_from_slice(buf);
        while let Some(end) = self.line.iter().position(|&b| b == b'\n') {
            let rest = self.line.split_off(end + 1);
            let line = std::mem::replace(&mut self.line, rest);
            self.emit(&line[..end], true)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.end_line()?;
        self.sink.flush()
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::Pager { stdin, .. } => stdin.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::Pager { stdin, .. } => stdin.flush(),
        }
    }
}

/// Escape what a terminal would interpret: C0/C1 controls (but tab), bidi overrides,
/// zero-width characters; and the noncharacters that mark a line's parts for fitting it.
pub(crate) fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && c != '\t' && c != '\n')
            || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
            || [fit::OPEN, fit::CLOSE, fit::KEEP].contains(&c)
    };
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(
        s.chars()
            .map(|c| {
                if bad(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// Collapse whitespace to single spaces and cut to `n` characters, marking a cut with `…`.
pub(crate) fn clip(s: &str, n: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for word in s.split_whitespace() {
        if !out.is_empty() {
            if count + 1 > n {
                out.push('…');
                return out;
            }
            out.push(' ');
            count += 1;
        }
        for c in word.chars() {
            if count >= n {
                out.push('…');
                return out;
            }
            out.push(c);
            count += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_collapses_whitespace_and_marks_the_cut() {
        assert_eq!(clip("a  b\n\nc", 10), "a b c");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("ab cd", 2), "ab…");
        assert_eq!(clip("", 5), "");
    }

    #[test]
    fn terminal_escapes_in_transcript_text_are_defused() {
        assert_eq!(sanitize("plain"), "plain");
        let s = sanitize("red \x1b[31m and \u{202E}rtl");
        assert!(!s.contains('\x1b'));
        assert!(!s.contains('\u{202E}'));
        assert!(s.contains("\\u{1b}"));
    }

    #[test]
    fn transcript_text_cannot_mark_a_line_for_fitting() {
        let forged = format!("a{}b{}c", fit::OPEN, fit::CLOSE);
        let s = sanitize(&forged);
        assert_eq!(s, "a\\u{fdd0}b\\u{fdd1}c");
        assert_eq!(
            fit::line(&format!("{s}  ▸ peat x"), 12),
            format!("{s}\n    ▸ peat x")
        );
    }
}
