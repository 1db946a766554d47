//! Long answers in pages a model's context can hold. A read answers whole; a page is the
//! part of its JSON list and of its text that fits a budget, and the cursor says where the
//! next page starts in each. The cursor is opaque to the client and bound to the read it
//! came from, so one handed to other arguments is refused rather than misread.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The most bytes of the JSON list one page carries (at least one entry is always given).
const JSON_BUDGET: usize = 16 * 1024;
/// The most bytes of text one page carries (at least one line is always given).
const TEXT_BUDGET: usize = 4 * 1024;

/// Where a page starts: the first entry of the list and the first line of the text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Cursor {
    #[serde(rename = "e")]
    entry: usize,
    #[serde(rename = "l")]
    line: usize,
}

/// The read a cursor belongs to: the tool and its command line.
fn fingerprint(tool: &str, argv: &[String]) -> String {
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    for a in argv {
        h.update([0]);
        h.update(a.as_bytes());
    }
    hex::encode(&h.finalize()[..6])
}

#[derive(Serialize, Deserialize)]
struct Token {
    #[serde(rename = "r")]
    read: String,
    #[serde(flatten)]
    at: Cursor,
}

impl Cursor {
    /// The cursor as handed to the client.
    pub(crate) fn encode(self, tool: &str, argv: &[String]) -> String {
        let token = Token {
            read: fingerprint(tool, argv),
            at: self,
        };
        hex::encode(serde_json::to_vec(&token).unwrap_or_default())
    }

    /// The cursor the client passed back, if it is one handed out for this read.
    pub(crate) fn decode(s: &str, tool: &str, argv: &[String]) -> Option<Cursor> {
        let bytes = hex::decode(s.trim()).ok()?;
        let token: Token = serde_json::from_slice(&bytes).ok()?;
        (token.read == fingerprint(tool, argv)).then_some(token.at)
    }
}

/// One page of an answer.
#[derive(Debug, PartialEq)]
pub(crate) struct Page {
    /// The JSON answer with its list cut to this page's entries.
    pub(crate) json: Value,
    /// Which entries of how many the page holds, when the answer has a list.
    pub(crate) shown: Option<Shown>,
    /// The text lines of this page.
    pub(crate) text: String,
    /// Where the next page starts, when there is more.
    pub(crate) next: Option<Cursor>,
}

/// Which entries of the list a page holds.
#[derive(Debug, PartialEq, Serialize)]
pub(crate) struct Shown {
    /// The list, as a JSON pointer into the answer.
    pub(crate) list: String,
    /// The first entry given (0-based) and how many were given.
    pub(crate) from: usize,
    pub(crate) count: usize,
    pub(crate) total: usize,
}

/// The page of `json` (its list at `list`) and `text` that starts at `at`.
pub(crate) fn cut(mut json: Value, list: &str, text: &str, at: Cursor) -> Page {
    let (shown, entry) = match json.pointer_mut(list).and_then(Value::as_array_mut) {
        Some(items) => {
            let total = items.len();
            let from = at.entry.min(total);
            let count = fitting(
                items[from..].iter().map(|v| v.to_string().len()),
                JSON_BUDGET,
            );
            let page: Vec<Value> = items.drain(from..).take(count).collect();
            *items = page;
            let shown = Shown {
                list: list.to_string(),
                from,
                count,
                total,
            };
            let next = (from + count < total).then_some(from + count);
            (Some(shown), next)
        }
        None => (None, None),
    };
    let lines: Vec<&str> = text.lines().collect();
    let from = at.line.min(lines.len());
    let count = fitting(lines[from..].iter().map(|l| l.len() + 1), TEXT_BUDGET);
    let line = (from + count < lines.len()).then_some(from + count);
    let next = (entry.is_some() || line.is_some()).then(|| Cursor {
        entry: entry.unwrap_or(usize::MAX),
        line: line.unwrap_or(usize::MAX),
    });
    let mut page_text = lines[from..from + count].join("\n");
    if count > 0 {
        page_text.push('\n');
    }
    Page {
        json,
        shown,
        text: page_text,
        next,
    }
}

/// How many of the items, `sizes` long, fit in `budget` bytes: at least one, so a page
/// always moves on.
fn fitting(sizes: impl Iterator<Item = usize>, budget: usize) -> usize {
    let mut used = 0;
    let mut n = 0;
    for size in sizes {
        if n > 0 && used + size > budget {
            break;
        }
        used += size;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn argv() -> Vec<String> {
        vec!["log".into(), "--".into(), "3f6c".into()]
    }

    #[test]
    fn a_cursor_comes_back_only_for_the_read_it_was_made_for() {
        let c = Cursor { entry: 3, line: 40 };
        let s = c.encode("log", &argv());
        assert_eq!(Cursor::decode(&s, "log", &argv()), Some(c));
        assert_eq!(Cursor::decode(&s, "show", &argv()), None);
        let other = vec!["log".into(), "--".into(), "7a1b".into()];
        assert_eq!(Cursor::decode(&s, "log", &other), None);
        assert_eq!(Cursor::decode("zz", "log", &argv()), None);
    }

    #[test]
    fn pages_follow_each_other_until_the_list_and_the_text_are_given_whole() {
        let big = "x".repeat(3000);
        let items: Vec<Value> = (0..20).map(|i| json!({"n": i, "text": big})).collect();
        let answer = json!({"entries": items, "session": "s"});
        let text: String = (0..200)
            .map(|i| format!("line {i} {}\n", "y".repeat(60)))
            .collect();
        let (mut at, mut seen, mut lines) = (Cursor::default(), Vec::new(), 0);
        for _ in 0..20 {
            let page = cut(answer.clone(), "/entries", &text, at);
            assert_eq!(page.json["session"], "s", "the rest of the answer is kept");
            let shown = page.shown.unwrap();
            assert_eq!(shown.total, 20);
            assert!(page.json.to_string().len() < JSON_BUDGET + 1024);
            seen.extend(
                page.json["entries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["n"].clone()),
            );
            lines += page.text.lines().count();
            match page.next {
                Some(next) => at = next,
                None => break,
            }
        }
        assert_eq!(seen, (0..20).map(|i| json!(i)).collect::<Vec<_>>());
        assert_eq!(lines, 200);
    }

    #[test]
    fn a_small_answer_is_one_page_without_a_cursor() {
        let page = cut(json!([1, 2, 3]), "", "one\ntwo\n", Cursor::default());
        assert_eq!(page.json, json!([1, 2, 3]));
        assert_eq!(page.text, "one\ntwo\n");
        assert_eq!(page.next, None);
        let page = cut(json!({"a": 1}), "/hits", "", Cursor::default());
        assert_eq!((page.shown, page.next), (None, None));
    }
}
