//! Redaction applied to what the ledger stores: envelopes, blobs (what edits wrote, what
//! tools printed), cursors, and a whole [`WriteSet`] on its way into a write.

use std::collections::HashMap;

use super::Redactor;
use crate::ledger::WriteSet;
use crate::vocab::change::{Before, BlobId, Change, Replacement};
use crate::vocab::event::{Envelope, Event};

/// Redact every text of `set` in place: the events, the change blobs (a redacted blob is
/// a new blob: the events that name it are pointed at the new id) and the cursor.
pub(crate) fn write_set(r: &Redactor, set: &mut WriteSet) {
    if !r.is_on() {
        return;
    }
    let mut moved: HashMap<BlobId, BlobId> = HashMap::new();
    for (id, bytes) in &mut set.blobs {
        if let Some((new_id, new_bytes)) = blob(r, bytes) {
            moved.insert(*id, new_id);
            *id = new_id;
            *bytes = new_bytes;
        }
    }
    for (_, env) in &mut set.events {
        envelope(r, env);
        if !moved.is_empty() {
            repoint(env, &|id| moved.get(id).copied());
        }
    }
    if let Some((_, cursor)) = &mut set.cursor
        && let Some(c) = json_bytes(r, cursor)
    {
        *cursor = c;
    }
}

/// Redact every text of `env`; true when something changed.
pub(crate) fn envelope(r: &Redactor, env: &mut Envelope) -> bool {
    let mut changed = false;
    let mut s = |t: &mut String| changed |= r.redact_string(t);
    match &mut env.kind {
        Event::UserMsg { text, context, .. } => {
            s(text);
            if let Some(c) = context {
                s(c);
            }
        }
        Event::FinalMsg { text } | Event::Said { text } | Event::CompactSummary { text } => s(text),
        Event::ToolCall { detail, .. } => s(detail),
        Event::ToolOutput { excerpt, .. } => s(excerpt),
        Event::Commit { message, .. } | Event::Committed { message, .. } => s(message),
        Event::Obs { subject, text, .. } => {
            s(subject);
            s(text);
        }
        Event::Distill { key, text, .. } => {
            s(key);
            s(text);
        }
        Event::FileTouch { path, more, .. } => {
            s(path);
            for m in more {
                s(&mut m.path);
            }
        }
        Event::SessionMeta { cwd, branch, .. } => {
            s(cwd);
            if let Some(b) = branch {
                s(b);
            }
        }
        Event::Compaction {} => {}
        Event::Unknown(v) => changed |= json_value(r, v),
    }
    changed
}

/// Point `env`'s blob ids (an edit's changes, a tool's output) through `to` (a blob replaced by its redacted copy). True when
/// one moved.
pub(crate) fn repoint(env: &mut Envelope, to: &dyn Fn(&BlobId) -> Option<BlobId>) -> bool {
    if let Event::ToolOutput {
        output: Some(output),
        ..
    } = &mut env.kind
        && let Some(new) = to(output)
    {
        *output = new;
        return true;
    }
    let Event::FileTouch { change, more, .. } = &mut env.kind else {
        return false;
    };
    let mut moved = false;
    for c in std::iter::once(change).chain(more.iter_mut().map(|m| &mut m.change)) {
        if let Some(new) = c.as_ref().and_then(to) {
            *c = Some(new);
            moved = true;
        }
    }
    moved
}

/// The redacted copy of a change blob, if redaction changed it: its new id and bytes.
pub(crate) fn blob(r: &Redactor, bytes: &[u8]) -> Option<(BlobId, Vec<u8>)> {
    match serde_json::from_slice::<Change>(bytes) {
        Ok(mut change) => change_texts(r, &mut change).then(|| change.to_blob()),
        // Not a change this binary knows: redact its JSON strings, or its text.
        Err(_) => match serde_json::from_slice::<serde_json::Value>(bytes) {
            Ok(_) => json_bytes(r, bytes).map(|b| (BlobId::of(&b), b)),
            Err(_) => {
                let text = String::from_utf8_lossy(bytes);
                match r.redact(&text) {
                    std::borrow::Cow::Owned(s) => Some((BlobId::of(s.as_bytes()), s.into())),
                    std::borrow::Cow::Borrowed(_) => None,
                }
            }
        },
    }
}

fn change_texts(r: &Redactor, change: &mut Change) -> bool {
    let changed = std::cell::Cell::new(false);
    let s = |t: &mut String| changed.set(r.redact_string(t) | changed.get());
    let rep = |e: &mut Replacement| {
        s(&mut e.old);
        s(&mut e.new);
    };
    match change {
        Change::Edit(e) => rep(e),
        Change::MultiEdit { edits } => {
            for e in edits {
                rep(e);
            }
        }
        Change::Write { content, before } => {
            let lines = content.split_inclusive('\n').count();
            s(content);
            if let Some(Before::File { differs }) = before {
                // The lines a write replaced are redacted as one text per place (a key block
                // spans lines); how many they are is free, as nothing points into them.
                for d in differs.iter_mut() {
                    if let std::borrow::Cow::Owned(red) = r.redact(&d.was.concat()) {
                        d.was = red.split_inclusive('\n').map(str::to_string).collect();
                        changed.set(true);
                    }
                }
                // A secret over several lines of the content is one marker now, and the places
                // count lines of the content: they are dropped rather than misplaced.
                if content.split_inclusive('\n').count() != lines {
                    *before = None;
                }
            }
        }
        Change::NotebookEdit { source, .. } => s(source),
        Change::Patch { move_to, hunks } => {
            if let Some(m) = move_to {
                s(m);
            }
            for h in hunks {
                if let Some(header) = &mut h.header {
                    s(header);
                }
                // A secret can span lines (a key block): redact the hunk as one text and
                // split it back only when the line count is unchanged.
                let joined = h.lines.join("\n");
                let red = r.redact(&joined);
                if let std::borrow::Cow::Owned(red) = red {
                    let lines: Vec<String> = red.split('\n').map(str::to_string).collect();
                    if lines.len() == h.lines.len() {
                        h.lines = lines;
                    } else {
                        // A multi-line secret became one marker: pad with the removed
                        // lines' prefixes (` `, `-`, `+`), so the hunk still lines up.
                        let mut out = lines;
                        while out.len() < h.lines.len() {
                            let prefix = h.lines[out.len()].chars().next();
                            out.push(prefix.map(String::from).unwrap_or_default());
                        }
                        h.lines = out;
                    }
                    changed.set(true);
                }
            }
        }
        Change::UnifiedDiff { move_to, diff } => {
            if let Some(m) = move_to {
                s(m);
            }
            s(diff);
        }
        Change::Delete => {}
    }
    changed.get()
}

/// Redact every string of a JSON value in place.
pub(crate) fn json_value(r: &Redactor, v: &mut serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => r.redact_string(s),
        serde_json::Value::Array(a) => a.iter_mut().fold(false, |c, x| json_value(r, x) | c),
        serde_json::Value::Object(o) => o.values_mut().fold(false, |c, x| json_value(r, x) | c),
        _ => false,
    }
}

/// The JSON document `bytes` with its strings redacted, if that changed any.
pub(crate) fn json_bytes(r: &Redactor, bytes: &[u8]) -> Option<Vec<u8>> {
    let mut v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    json_value(r, &mut v).then(|| serde_json::to_vec(&v).unwrap_or_default())
}
