//! The byte budget a read's text is held to. An agent pastes what a read prints into a
//! context it pays for by the byte: text output stops at a line boundary once it would pass
//! the budget (`--budget`, `PEAT_BUDGET`; 4096 bytes on a pipe by default), and its last line
//! is the exact command that prints it all. `ui::Out` applies it through a [`Meter`], so every
//! text read goes through it. `--json` is never cut: its lists keep the whole entries that fit
//! ([`fitting`]; see `cli::listing`).

use serde::Serialize;
use std::borrow::Cow;

/// The default budget of a read's text on a pipe, in bytes: about a thousand tokens.
pub(crate) const DEFAULT_BYTES: usize = 4096;

/// The byte budget text output is held to, and the command that prints it all.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// `None`: no budget (`--budget 0`, or a terminal given none).
    pub(crate) bytes: Option<usize>,
    /// This command again with `--budget 0`, shell-quoted. Made once per process, so kept for
    /// its life (it makes `Ui`, which every command copies, no heavier).
    pub(crate) rest: &'static str,
}

impl Budget {
    /// No budget at all.
    #[cfg(test)]
    pub(crate) const NONE: Budget = Budget {
        bytes: None,
        rest: "",
    };

    /// The budget `given` (`--budget`, else `PEAT_BUDGET`; 0 means none), else the default
    /// on a pipe. A terminal is given none by default: a person reads it through a pager,
    /// and pipes are where answers land in a context window.
    pub(crate) fn resolve(given: Option<usize>, stdout_tty: bool, argv: &[String]) -> Budget {
        let bytes = match given {
            Some(0) => None,
            Some(n) => Some(n),
            None if stdout_tty => None,
            None => Some(DEFAULT_BYTES),
        };
        Budget {
            bytes,
            rest: match bytes {
                Some(_) => Box::leak(rerun(argv, "--budget", Some("0")).into_boxed_str()),
                None => "",
            },
        }
    }

    /// The line that ends output cut after `lines` more lines of `bytes` bytes.
    fn footer(&self, lines: usize, bytes: usize) -> String {
        format!(
            "… cut at the {}-byte budget: {lines} more lines ({bytes} bytes)  ▸ {}\n",
            self.bytes.unwrap_or_default(),
            self.rest
        )
    }
}

/// Where a budgeted output stands: what it has written, and what it held back once a line
/// would not fit.
#[derive(Debug)]
pub(crate) struct Meter {
    budget: Budget,
    /// Bytes the kept lines may take: the budget less room for the footer.
    room: usize,
    used: usize,
    held_lines: usize,
    held_bytes: usize,
}

impl Meter {
    /// A meter for `budget`, or none when it has no bytes to count to.
    pub(crate) fn of(budget: Budget) -> Option<Meter> {
        let bytes = budget.bytes?;
        // The footer's own length, its counts at their widest, so that the kept lines and
        // the footer together stay within the budget.
        let reserve = budget.footer(usize::MAX, usize::MAX).len();
        Some(Meter {
            budget,
            room: bytes.saturating_sub(reserve),
            used: 0,
            held_lines: 0,
            held_bytes: 0,
        })
    }

    /// Whether a line of `len` bytes (its newline included) is written. Once one is held
    /// back every later one is too: output stops at a line boundary, it never skips.
    pub(crate) fn admit(&mut self, len: usize) -> bool {
        if self.held_lines == 0 && self.used + len <= self.room {
            self.used += len;
            return true;
        }
        self.held_lines += 1;
        self.held_bytes += len;
        false
    }

    /// The line saying how to see what was held back, if anything was.
    pub(crate) fn footer(&self) -> Option<String> {
        (self.held_lines > 0).then(|| self.budget.footer(self.held_lines, self.held_bytes))
    }
}

/// How many of `items`, from the first, a `--json` list keeps within `budget` bytes beside
/// `rest` (the bytes of the answer around the list): every one without a budget, and always
/// at least one, so that an answer never comes back empty for being long.
pub(crate) fn fitting<T: Serialize>(items: &[T], rest: usize, budget: Budget) -> usize {
    let Some(bytes) = budget.bytes else {
        return items.len();
    };
    let mut used = rest;
    for (i, item) in items.iter().enumerate() {
        let len = serde_json::to_vec(item).map_or(0, |v| v.len()) + 1;
        if i > 0 && used + len > bytes {
            return i;
        }
        used += len;
    }
    items.len()
}

/// This command line (`argv`, the program first) run again with `flag value` (a switch when
/// `value` is `None`) in place of any `flag` it had, as words a shell reads back: the command
/// that shows more.
pub(crate) fn rerun(argv: &[String], flag: &str, value: Option<&str>) -> String {
    let mut words: Vec<&str> = vec!["peat"];
    let mut args = argv.iter().skip(1).map(String::as_str).peekable();
    let mut tail: Vec<&str> = Vec::new();
    while let Some(a) = args.next() {
        if a == "--" {
            tail.push(a);
            tail.extend(args.by_ref());
            break;
        }
        if a == flag {
            if value.is_some() {
                args.next();
            }
            continue;
        }
        if a.strip_prefix(flag).is_some_and(|r| r.starts_with('=')) {
            continue;
        }
        words.push(a);
    }
    words.push(flag);
    words.extend(value);
    words.extend(tail);
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// `w` as a shell reads it back as one word.
fn quote(w: &str) -> Cow<'_, str> {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_alphanumeric() || "-_./:=,@%+".contains(c));
    match plain {
        true => Cow::Borrowed(w),
        false => Cow::Owned(format!("'{}'", w.replace('\'', r"'\''"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_rerun_replaces_the_flag_and_quotes_what_a_shell_would_split() {
        let a = argv(&[
            "/bin/peat",
            "recall",
            "rate limit",
            "--budget",
            "9",
            "--json",
        ]);
        assert_eq!(
            rerun(&a, "--budget", Some("0")),
            "peat recall 'rate limit' --json --budget 0"
        );
        let b = argv(&["peat", "log", "--limit=3", "x", "--", "--odd"]);
        assert_eq!(
            rerun(&b, "--limit", Some("0")),
            "peat log x --limit 0 -- --odd"
        );
        assert_eq!(
            rerun(&argv(&["peat", "log", "it's", "--full"]), "--full", None),
            r"peat log 'it'\''s' --full"
        );
    }

    #[test]
    fn the_meter_stops_at_the_first_line_that_does_not_fit_and_keeps_the_footer_inside() {
        let budget = Budget {
            bytes: Some(300),
            rest: "peat sessions --budget 0",
        };
        let mut m = Meter::of(budget).unwrap();
        assert!(m.admit(40));
        assert!(!m.admit(400));
        // A short line after the cut is held back too.
        assert!(!m.admit(2));
        let footer = m.footer().unwrap();
        assert!(footer.contains("2 more lines (402 bytes)"), "{footer}");
        assert!(footer.ends_with("▸ peat sessions --budget 0\n"));
        assert!(40 + footer.len() <= 300);
        assert!(Meter::of(Budget::NONE).is_none());
    }

    #[test]
    fn a_json_list_keeps_whole_entries_within_the_budget_and_at_least_one() {
        let items = vec!["x".repeat(10); 5];
        let budget = |n| Budget {
            bytes: Some(n),
            rest: "",
        };
        // Each entry is 12 bytes and its comma.
        assert_eq!(fitting(&items, 10, budget(50)), 3);
        assert_eq!(fitting(&items, 10, budget(1)), 1);
        assert_eq!(fitting(&items, 10, Budget::NONE), 5);
    }
}
