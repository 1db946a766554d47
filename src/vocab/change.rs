//! What an edit wrote, kept whole in the content-addressed blob store.
//!
//! A `FileTouch` event stays small and names its change by hash; the change itself is a
//! JSON document stored once however many events point at it. Line-level blame replays these.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// The sha256 of a blob's bytes; written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlobId(pub [u8; 32]);

impl BlobId {
    pub(crate) fn of(bytes: &[u8]) -> BlobId {
        BlobId(Sha256::digest(bytes).into())
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    pub(crate) fn from_hex(s: &str) -> Option<BlobId> {
        let mut out = [0u8; 32];
        hex::decode_to_slice(s, &mut out).ok()?;
        Some(BlobId(out))
    }
}

impl fmt::Debug for BlobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlobId({})", self.to_hex())
    }
}

impl fmt::Display for BlobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for BlobId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for BlobId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        BlobId::from_hex(&s).ok_or_else(|| serde::de::Error::custom("expected 64 hex digits"))
    }
}

/// One old/new replacement, as Claude Code's Edit and MultiEdit write them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Replacement {
    pub(crate) old: String,
    pub(crate) new: String,
    #[serde(default)]
    pub(crate) replace_all: bool,
}

/// One `@@` hunk of an apply_patch update: context (` `), removed (`-`) and added (`+`)
/// lines, without their prefix characters stripped (each line keeps its first character).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Hunk {
    /// The text after `@@ `, if any (a context anchor such as `def greet():`).
    #[serde(default)]
    pub(crate) header: Option<String>,
    pub(crate) lines: Vec<String>,
    /// `*** End of File` anchored the hunk at the end of the file.
    #[serde(default)]
    pub(crate) end_of_file: bool,
}

/// What one tool call wrote to one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Change {
    /// Claude Code `Edit`.
    Edit(Replacement),
    /// Claude Code `MultiEdit`: applied in order.
    MultiEdit { edits: Vec<Replacement> },
    /// Claude Code `Write`, or an apply_patch `Add File`: the whole new content, and what it
    /// replaced when the tool said.
    Write {
        content: String,
        /// The file before the write, as the tool reported it; absent when it did not say
        /// (and in every change recorded before this was kept), so such a blob keeps its id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<Before>,
    },
    /// Claude Code `NotebookEdit`.
    NotebookEdit {
        #[serde(default)]
        cell_id: Option<String>,
        #[serde(default)]
        cell_type: Option<String>,
        #[serde(default)]
        edit_mode: Option<String>,
        source: String,
    },
    /// An apply_patch `Update File` (optionally moved).
    Patch {
        #[serde(default)]
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
    /// An apply_patch `Delete File`.
    Delete,
    /// A unified diff as Codex recorded it after applying (`patch_apply_end`).
    UnifiedDiff {
        #[serde(default)]
        move_to: Option<String>,
        diff: String,
    },
}

/// How many line pairs the middle of a write may have for [`Before::between`] to diff it.
const DIFF_WORK: usize = 16_000_000;

/// What a whole-file write replaced, as the tool that made it reported it. Kept as the lines
/// that differ from what it wrote, so a write over a large file costs what it changed and not
/// a second copy of the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "was", rename_all = "snake_case")]
pub(crate) enum Before {
    /// No file: the write made it.
    Nothing,
    /// A file that held what the write wrote, but for these lines, in order.
    File { differs: Vec<Differs> },
}

/// Where the file before a write differs from what the write wrote: `len` lines of the content
/// from line `at` (counted from 0) stand where the lines `was` stood.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Differs {
    pub(crate) at: usize,
    pub(crate) len: usize,
    /// Each line with its line end (the last one may have none).
    pub(crate) was: Vec<String>,
}

impl Before {
    /// The file `before`, as the lines where it differs from `content`. The lines both share
    /// at their head and tail are set aside first; a middle too long on both sides to diff
    /// cheaply (a line diff costs up to the product of its sides) is one difference, which
    /// keeps the file before exactly, only less compactly.
    pub(crate) fn between(before: &str, content: &str) -> Before {
        let old: Vec<&str> = before.split_inclusive('\n').collect();
        let new: Vec<&str> = content.split_inclusive('\n').collect();
        let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let tail = old[head..]
            .iter()
            .rev()
            .zip(new[head..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let (old_mid, new_mid) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
        let differs = if old_mid.len().saturating_mul(new_mid.len()) > DIFF_WORK {
            vec![Differs {
                at: head,
                len: new_mid.len(),
                was: old_mid.iter().map(|l| l.to_string()).collect(),
            }]
        } else {
            similar::capture_diff_slices(similar::Algorithm::Myers, old_mid, new_mid)
                .into_iter()
                .filter(|op| !matches!(op, similar::DiffOp::Equal { .. }))
                .map(|op| Differs {
                    at: head + op.new_range().start,
                    len: op.new_range().len(),
                    was: old_mid[op.old_range()]
                        .iter()
                        .map(|l| l.to_string())
                        .collect(),
                })
                .collect()
        };
        Before::File { differs }
    }

    /// The lines of `content` the write changed: where the file before differs from it (every
    /// line, when the write made the file).
    pub(crate) fn written<'a>(&self, content: &'a str) -> Vec<&'a str> {
        let lines: Vec<&str> = content.split_inclusive('\n').collect();
        match self {
            Before::Nothing => lines,
            Before::File { differs } => differs
                .iter()
                .flat_map(|d| lines.get(d.at..d.at + d.len).unwrap_or_default())
                .copied()
                .collect(),
        }
    }

    /// The file before the write of `content`; `None` when these differences do not fit it
    /// (a content they were not taken from).
    pub(crate) fn text(&self, content: &str) -> Option<String> {
        let Before::File { differs } = self else {
            return Some(String::new());
        };
        let lines: Vec<&str> = content.split_inclusive('\n').collect();
        let mut out = String::with_capacity(content.len());
        let mut next = 0;
        for d in differs {
            if d.at < next || d.at + d.len > lines.len() {
                return None;
            }
            out.extend(lines[next..d.at].iter().copied());
            out.extend(d.was.iter().map(String::as_str));
            next = d.at + d.len;
        }
        out.extend(lines[next..].iter().copied());
        Some(out)
    }
}

impl Change {
    /// A whole-file write of `content` that does not say what it replaced.
    pub(crate) fn write(content: impl Into<String>) -> Change {
        Change::Write {
            content: content.into(),
            before: None,
        }
    }

    /// A whole-file write of `content` that made the file (an apply_patch `Add File`).
    pub(crate) fn created(content: impl Into<String>) -> Change {
        Change::Write {
            content: content.into(),
            before: Some(Before::Nothing),
        }
    }

    /// The canonical bytes stored in the blob store (and hashed for the id).
    pub(crate) fn to_blob(&self) -> (BlobId, Vec<u8>) {
        // Serializing these plain structs cannot fail.
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        (BlobId::of(&bytes), bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_are_content_addresses() {
        let a = Change::write("x\n");
        let b = Change::write("x\n");
        assert_eq!(a.to_blob().0, b.to_blob().0);
        let c = Change::write("y\n");
        assert_ne!(a.to_blob().0, c.to_blob().0);
        let id = a.to_blob().0;
        assert_eq!(BlobId::from_hex(&id.to_hex()), Some(id));
        assert_eq!(BlobId::from_hex("zz"), None);
    }

    #[test]
    fn a_write_that_does_not_say_what_it_replaced_keeps_the_bytes_it_always_had() {
        let (_, bytes) = Change::write("x\n").to_blob();
        assert_eq!(bytes, br#"{"kind":"write","content":"x\n"}"#);
        let old: Change = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(old, Change::write("x\n"));
    }

    #[test]
    fn the_file_before_a_write_is_rebuilt_from_the_lines_that_differ() {
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\nd\n"),
            ("", "new\n"),
            ("gone\n", ""),
            ("same\n", "same\n"),
            ("x\nno end", "x\nno end\n"),
            ("1\n2\n3\n4\n5\n", "0\n2\n4\n5\n6"),
        ];
        for (before, content) in cases {
            let b = Before::between(before, content);
            assert_eq!(
                b.text(content).as_deref(),
                Some(before),
                "{before:?} -> {content:?}"
            );
        }
        // Two long unrelated middles are one difference, and still give the file back.
        let long_old: String = (0..5000).map(|i| format!("old {i}\n")).collect();
        let long_new: String = (0..5000).map(|i| format!("new {i}\n")).collect();
        let (before, content) = (
            format!("head\n{long_old}tail\n"),
            format!("head\n{long_new}tail\n"),
        );
        let b = Before::between(&before, &content);
        assert_eq!(b.text(&content), Some(before));
        let Before::File { differs } = b else {
            panic!()
        };
        assert_eq!((differs.len(), differs[0].at, differs[0].len), (1, 1, 5000));
        // Only what differs is kept.
        let Before::File { differs } = Before::between("a\nb\nc\n", "a\nB\nc\n") else {
            panic!()
        };
        assert_eq!(
            differs,
            vec![Differs {
                at: 1,
                len: 1,
                was: vec!["b\n".into()]
            }]
        );
        assert_eq!(Before::Nothing.text("x\n").as_deref(), Some(""));
        assert_eq!(
            Before::between("a\nb\nc\n", "a\nB\nc\nd\n").written("a\nB\nc\nd\n"),
            vec!["B\n", "d\n"]
        );
        assert_eq!(Before::Nothing.written("x\ny"), vec!["x\n", "y"]);
        // Differences taken from another content do not fit this one.
        assert_eq!(
            Before::between("a\nb\nc\n", "a\nb\nc\nd\n").text("a\n"),
            None
        );
    }
}
