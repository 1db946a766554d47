//! Which events are searchable text, and which of those are dense enough to embed.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::views::session::{SessionSet, admitted};
use crate::vocab::change::BlobId;
use crate::vocab::event::{Basis, Event, EventId, SessionId, TouchOp};

/// One recorded edit of one path (a row of the files view; its change blob is a row of the
/// changes view under the same key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FileRow {
    pub(crate) ts_ms: i64,
    pub(crate) op: TouchOp,
    /// The tool reported an error: the edit was not applied.
    pub(crate) failed: bool,
    /// What the edit wrote, in the ledger's blob store.
    pub(crate) change: Option<BlobId>,
    /// The model that made the edit, where the transcript named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
}

/// The kinds of text recall searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TextKind {
    Obs,
    Said,
    User,
    Final,
    Compact,
    /// What the agent ran: a tool call's detail (the command, the query, the path).
    Tool,
    /// What a tool call printed: its head and tail.
    Output,
}

impl TextKind {
    pub(crate) const ALL: [TextKind; 7] = [
        TextKind::Obs,
        TextKind::Said,
        TextKind::User,
        TextKind::Final,
        TextKind::Compact,
        TextKind::Tool,
        TextKind::Output,
    ];
    pub(crate) const TAGS: [&'static str; 7] =
        ["obs", "said", "user", "final", "compact", "tool", "output"];

    pub(crate) fn tag(self) -> &'static str {
        match self {
            TextKind::Obs => "obs",
            TextKind::Said => "said",
            TextKind::User => "user",
            TextKind::Final => "final",
            TextKind::Compact => "compact",
            TextKind::Tool => "tool",
            TextKind::Output => "output",
        }
    }

    /// Whether texts of this kind are written by someone (the person, the agent) and so can
    /// be found by meaning. What a tool was given and printed is commands, paths and logs,
    /// which the words match exactly and an embedding of prose only blurs: keyword-only.
    pub(crate) fn is_prose(self) -> bool {
        !matches!(self, TextKind::Tool | TextKind::Output)
    }
}

impl fmt::Display for TextKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

impl FromStr for TextKind {
    type Err = String;
    fn from_str(s: &str) -> Result<TextKind, String> {
        TextKind::ALL
            .into_iter()
            .find(|k| k.tag() == s)
            .ok_or_else(|| {
                format!(
                    "not a text kind: {s:?} (want one of {})",
                    TextKind::TAGS.join(", ")
                )
            })
    }
}

/// Mid-turn prose shorter than this is narration ("Let me look at the file."): the ledger
/// keeps it, search does not.
pub(crate) const SAID_MIN: usize = 80;
/// Texts of fewer words are not embedded (see [`TextRow::dense`]).
pub(crate) const EMBED_MIN_WORDS: usize = 4;
/// The vector lane embeds the first this many bytes of a text (cut at a character
/// boundary). Texts are stored and keyword-indexed whole, but the model reads at most its
/// 256 tokens (about 1 KB of prose) anyway: the window bounds tokenizing a 50 KB closing
/// message to what the model would keep, with room for token-dense code.
pub(crate) const EMBED_WINDOW: usize = 2048;

/// A searchable text: what recall hydrates a hit with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TextRow {
    pub(crate) kind: TextKind,
    pub(crate) ts_ms: i64,
    /// Obs: it cites the events it derives from. Everything else is its own evidence.
    pub(crate) cited: bool,
    pub(crate) text: String,
    /// Obs only: the subject, and the commit it was deposited against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) basis: Option<Basis>,
}

impl TextRow {
    /// The searchable text an event carries, if any.
    pub(crate) fn of(ts_ms: i64, event: &Event) -> Option<TextRow> {
        let row = |kind, cited, text: &String| TextRow {
            kind,
            ts_ms,
            cited,
            text: text.clone(),
            subject: None,
            basis: None,
        };
        let r = match event {
            Event::Obs {
                subject,
                text,
                derived_from,
                basis,
            } => TextRow {
                subject: Some(subject.clone()),
                basis: basis.clone(),
                ..row(TextKind::Obs, !derived_from.is_empty(), text)
            },
            Event::FinalMsg { text } => row(TextKind::Final, true, text),
            Event::CompactSummary { text } => row(TextKind::Compact, true, text),
            Event::Said { text } if text.len() >= SAID_MIN => row(TextKind::Said, true, text),
            Event::UserMsg {
                text,
                harness: false,
                ..
            } => row(TextKind::User, true, text),
            Event::ToolCall { detail, .. } => row(TextKind::Tool, true, detail),
            Event::ToolOutput { excerpt, .. } => row(TextKind::Output, true, excerpt),
            _ => return None,
        };
        (!r.text.trim().is_empty()).then_some(r)
    }

    /// What the vector lane embeds of this text: its first [`EMBED_WINDOW`] bytes.
    pub(crate) fn embed_text(&self) -> &str {
        let mut end = self.text.len().min(EMBED_WINDOW);
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        &self.text[..end]
    }

    /// Whether the vector lane embeds this text: every searchable text of at least
    /// [`EMBED_MIN_WORDS`] words, the agent's prose and long prompts included (a text only
    /// one lane can see can never be found by meaning; the quality benchmark measured what
    /// leaving them out cost). "ok", "yes do it" are left out: they carry no meaning to match,
    /// and short texts collect spurious similarities. What a tool ran is never embedded
    /// (see [`TextKind::is_prose`]).
    pub(crate) fn dense(&self) -> bool {
        self.kind.is_prose()
            && self
                .text
                .split_whitespace()
                .nth(EMBED_MIN_WORDS - 1)
                .is_some()
    }
}

/// Which texts a search admits. Every lane applies it while it ranks (tantivy's query, the
/// vector scan), so a filtered search finds its matches however far down the unfiltered
/// ranking they sit.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TextFilter {
    /// Only this kind; with none, the prose kinds (what was run and printed is searched
    /// only when asked for by its kind, so a question in words finds what was said).
    pub(crate) kind: Option<TextKind>,
    /// Only texts at or after this instant.
    pub(crate) since_ms: Option<i64>,
    /// Only texts at or before this instant (`asof`'s cutoff).
    pub(crate) until_ms: Option<i64>,
    /// Only this session (already resolved from a prefix).
    pub(crate) session: Option<SessionId>,
    /// Only these sessions (the read's scope: a project, an agent).
    pub(crate) sessions: Option<SessionSet>,
    /// Only observations about this subject.
    pub(crate) subject: Option<String>,
}

impl TextFilter {
    /// Whether the text `row` of event `id` passes.
    pub(crate) fn admits(&self, id: &EventId, row: &TextRow) -> bool {
        self.kind.map_or(row.kind.is_prose(), |k| row.kind == k)
            && self.since_ms.is_none_or(|t| row.ts_ms >= t)
            && self.until_ms.is_none_or(|t| row.ts_ms <= t)
            && self.session.as_ref().is_none_or(|s| &id.session == s)
            && admitted(self.sessions.as_ref(), &id.session)
            && self
                .subject
                .as_ref()
                .is_none_or(|s| row.subject.as_ref() == Some(s))
    }

    /// Whether it admits everything.
    pub(crate) fn is_open(&self) -> bool {
        *self == TextFilter::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_kept_whole_and_embedded_by_its_first_window() {
        // A closing message of 40 KB, with a multi-byte character straddling the window.
        let mut text = "a".repeat(EMBED_WINDOW - 1);
        text.push('é');
        text.push_str(&"tail words ".repeat(4000));
        let row = TextRow::of(1, &Event::FinalMsg { text: text.clone() }).unwrap();
        assert_eq!(row.text, text, "the row holds the text whole");
        assert!(row.dense());
        let window = row.embed_text();
        assert_eq!(
            window.len(),
            EMBED_WINDOW - 1,
            "cut before the split character"
        );
        assert!(text.starts_with(window));
        let short = TextRow::of(
            1,
            &Event::FinalMsg {
                text: "done".into(),
            },
        )
        .unwrap();
        assert_eq!(short.embed_text(), "done");
    }

    #[test]
    fn prose_and_long_prompts_are_embedded_acknowledgements_are_not() {
        let user = |text: &str| {
            TextRow::of(
                1,
                &Event::UserMsg {
                    text: text.into(),
                    harness: false,
                    context: None,
                },
            )
            .unwrap()
        };
        let said = TextRow::of(
            1,
            &Event::Said {
                text:
                    "The importer chokes on the byte order mark, so the first header never matches."
                        .repeat(2),
            },
        )
        .unwrap();
        assert!(said.dense(), "the agent's prose");
        let pasted = format!(
            "why does this fail?\n{}",
            "ERROR worker-3 out of memory\n".repeat(40)
        );
        assert!(user(&pasted).dense(), "a prompt with a pasted log");
        assert!(user("fix the flaky port test").dense());
        for ack in ["ok", "yes do it", "  go   on  "] {
            assert!(!user(ack).dense(), "{ack:?}");
        }
    }
}
