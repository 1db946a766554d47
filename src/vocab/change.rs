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
    /// Claude Code `Write`, or an apply_patch `Add File`: the whole new content.
    Write { content: String },
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

impl Change {
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
        let a = Change::Write {
            content: "x\n".into(),
        };
        let b = Change::Write {
            content: "x\n".into(),
        };
        assert_eq!(a.to_blob().0, b.to_blob().0);
        let c = Change::Write {
            content: "y\n".into(),
        };
        assert_ne!(a.to_blob().0, c.to_blob().0);
        let id = a.to_blob().0;
        assert_eq!(BlobId::from_hex(&id.to_hex()), Some(id));
        assert_eq!(BlobId::from_hex("zz"), None);
    }
}
