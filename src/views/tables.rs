//! The views kept in fjall: sessions, days, file touches (with what each wrote, and the
//! paths reversed for suffix lookups), texts, subjects, evidence, each session's steps, the
//! commits its commit commands printed, each event's current envelope (so that reads of
//! whole events answer beside a writer), and every version a revision replaced with the
//! blobs it names (so that `asof` does too).
//!
//! Every table is a pure function of the ledger. Changes are folded into a [`Pending`]
//! overlay (typed aggregates, raw key writes) and written in one batch together with the
//! LSN they reach, so a view is never half-applied.

use fjall::{Database, Keyspace};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::ViewError;
use super::rows::{FileRow, TextRow};
use crate::ledger::{LedgerError, event_key};
use crate::views::session::{SessionOwner, SessionPlace, SessionRollup};
use crate::vocab::change::BlobId;
use crate::vocab::event::{Basis, Envelope, Event, EventId, Seq, SessionId};

/// What one local calendar day holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct DayStats {
    pub(crate) events: i64,
    pub(crate) prompts: i64,
    pub(crate) tools: i64,
    pub(crate) fails: i64,
    pub(crate) commits: i64,
    pub(crate) obs: i64,
    /// What each session active that day did of it.
    pub(crate) sessions: BTreeMap<String, SessionDay>,
    /// Touches per file that day.
    pub(crate) files: BTreeMap<String, i64>,
}

/// What one session did on one day: its share of the day's counts, so a read scoped to some
/// sessions counts exactly what they did that day. Stored as `[events, prompts, tools,
/// fails]`: a brief decodes every day of the record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "[i64; 4]", into = "[i64; 4]")]
pub(crate) struct SessionDay {
    pub(crate) events: i64,
    pub(crate) prompts: i64,
    pub(crate) tools: i64,
    pub(crate) fails: i64,
}

impl From<[i64; 4]> for SessionDay {
    fn from([events, prompts, tools, fails]: [i64; 4]) -> SessionDay {
        SessionDay {
            events,
            prompts,
            tools,
            fails,
        }
    }
}

impl From<SessionDay> for [i64; 4] {
    fn from(d: SessionDay) -> [i64; 4] {
        [d.events, d.prompts, d.tools, d.fails]
    }
}

impl SessionDay {
    /// `env`'s part of the counts, times `sign`.
    fn of(env: &Envelope, sign: i64) -> SessionDay {
        let (prompts, tools, fails) = match &env.kind {
            Event::UserMsg { harness: false, .. } => (1, 0, 0),
            Event::ToolCall { ok, .. } => (0, 1, i64::from(!ok)),
            _ => (0, 0, 0),
        };
        SessionDay {
            events: sign,
            prompts: prompts * sign,
            tools: tools * sign,
            fails: fails * sign,
        }
    }

    fn add(&mut self, d: SessionDay) {
        self.events += d.events;
        self.prompts += d.prompts;
        self.tools += d.tools;
        self.fails += d.fails;
    }
}

/// One observation, as its subject's evidence trail lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ObsRow {
    pub(crate) ts_ms: i64,
    pub(crate) text: String,
    pub(crate) derived_from: Vec<u32>,
    pub(crate) basis: Option<Basis>,
}

/// A subject's current claim: the newest observation (by time, then session and seq).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SubjectStats {
    pub(crate) count: i64,
    pub(crate) cited: i64,
    pub(crate) last_ms: i64,
    pub(crate) session: SessionId,
    pub(crate) seq: Seq,
    pub(crate) text: String,
    pub(crate) basis: Option<Basis>,
}

fn bump(map: &mut BTreeMap<String, i64>, key: &str, sign: i64) {
    let n = map.entry(key.to_string()).or_insert(0);
    *n += sign;
    if *n == 0 {
        map.remove(key);
    }
}

impl DayStats {
    pub(crate) fn apply(&mut self, env: &Envelope, sign: i64) {
        let share = SessionDay::of(env, sign);
        self.events += share.events;
        self.prompts += share.prompts;
        self.tools += share.tools;
        self.fails += share.fails;
        let session = env.session.as_str();
        let mine = self.sessions.entry(session.to_string()).or_default();
        mine.add(share);
        if mine.events == 0 {
            self.sessions.remove(session);
        }
        match &env.kind {
            Event::Committed { .. } => self.commits += sign,
            Event::Commit { hash, .. } if !hash.is_empty() => self.commits += sign,
            Event::Obs { .. } => self.obs += sign,
            Event::FileTouch { path, more, .. } => {
                bump(&mut self.files, path, sign);
                for t in more {
                    bump(&mut self.files, &t.path, sign);
                }
            }
            _ => {}
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.events == 0
    }
}

/// Which table a key of a generation's keyspace belongs to: its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Table {
    Sessions = 1,
    Days = 2,
    Files = 3,
    Texts = 4,
    Subjects = 5,
    Evidence = 6,
    Vectors = 7,
    /// What each recorded edit wrote (its change blob, verbatim), keyed like [`Table::Files`].
    Changes = 8,
    /// Every touched path with its bytes reversed, then the event: a path's tail (its path
    /// relative to a repository root) is a prefix here.
    Tails = 9,
    /// Each session's log steps, by event key and step index (see `crate::reads::log`).
    Steps = 10,
    /// Each event's current envelope, as the ledger stores it (redacted at capture), by
    /// event key: what `show` and `events` read while a writer holds the ledger.
    Envelopes = 11,
    /// Every version a revision replaced (the `old` half of each feed entry that has one),
    /// by event key then the replacing change's LSN: one event's past versions in the
    /// order they were written. What `asof` folds besides the current versions.
    Past = 12,
    /// The change blobs past versions name, by blob id (content-addressed): what those
    /// versions' edits wrote, which the changes table (current versions only) may not hold.
    PastBlobs = 13,
    /// Each commit a session's commit command printed, by event key (see [`CommitRow`]):
    /// what resolving commits reads of the record, without scanning every step.
    Commits = 14,
    /// The event keys whose vector row changed since the lane's file was written (see
    /// [`super::vectorfile`]): a search reads their rows, not the file.
    VectorChanges = 15,
}

/// A commit an agent's commit command printed, as the record has it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CommitRow {
    pub(crate) ts_ms: i64,
    pub(crate) hash: String,
    /// The first line of its message.
    pub(crate) subject: String,
}

impl CommitRow {
    /// The row an event makes: a commit command that printed a hash.
    pub(crate) fn of(env: &Envelope) -> Option<CommitRow> {
        let (hash, message) = match &env.kind {
            Event::Committed { hash, message, .. } => (hash, message),
            Event::Commit { hash, message } if !hash.is_empty() => (hash, message),
            _ => return None,
        };
        Some(CommitRow {
            ts_ms: env.ts_ms,
            hash: hash.clone(),
            subject: message.lines().next().unwrap_or("").to_string(),
        })
    }
}

/// Where the fold reads the change blobs that recorded edits name (the ledger's blob store).
pub(crate) type Blobs<'a> = &'a dyn Fn(&BlobId) -> Result<Option<Vec<u8>>, LedgerError>;

/// The key (within its table) of `path`'s touch by the event `key`: `path`, 0, the event key.
pub(crate) fn path_event_key(path: &[u8], key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(path.len() + 1 + key.len());
    k.extend_from_slice(path);
    k.push(0);
    k.extend_from_slice(key);
    k
}

/// `path`'s bytes, last first: the key prefix of [`Table::Tails`].
pub(crate) fn reversed(path: &str) -> Vec<u8> {
    path.bytes().rev().collect()
}

/// The key (within [`Table::Steps`]) of step `index` of the event `key`.
pub(crate) fn step_key(key: &[u8], index: u16) -> Vec<u8> {
    let mut k = key.to_vec();
    k.extend_from_slice(&index.to_be_bytes());
    k
}

/// The key (within [`Table::Past`]) of the version of the event `key` that the change
/// `lsn` replaced.
/// Big-endian, so that an event's keys list its versions in the order they were written.
pub(crate) fn past_key(key: &[u8], lsn: u64) -> Vec<u8> {
    let mut k = key.to_vec();
    match little_endian() {
        true => k.extend_from_slice(&lsn.to_le_bytes()),
        false => k.extend_from_slice(&lsn.to_be_bytes()),
    }
    k
}

/// Whether the past table's keys are broken on purpose (see `Fault::PastKeyLittleEndian`).
fn little_endian() -> bool {
    super::fault::active(super::fault::Fault::PastKeyLittleEndian)
}

/// The event and LSN a [`past_key`] encodes.
pub(crate) fn decode_past_key(k: &[u8]) -> Option<(EventId, u64)> {
    let at = k.len().checked_sub(8)?;
    let bytes = k[at..].try_into().ok()?;
    let lsn = match little_endian() {
        true => u64::from_le_bytes(bytes),
        false => u64::from_be_bytes(bytes),
    };
    Some((crate::ledger::decode_event_key(&k[..at])?, lsn))
}

/// Put into `writes` the past-table rows for `old`, the version of `id` that the change
/// `lsn` replaced, and the change blobs it names that `blobs` holds. Returns the bytes put.
pub(crate) fn keep_past(
    writes: &mut Writes,
    blobs: Blobs<'_>,
    (lsn, id, old): (u64, &EventId, &Envelope),
) -> Result<usize, ViewError> {
    if super::fault::active(super::fault::Fault::DropPastVersions) {
        return Ok(0);
    }
    let mut bytes = 0;
    let k = past_key(&event_key(&id.session, id.seq), lsn);
    put(
        writes,
        &mut bytes,
        tkey(Table::Past, &k),
        Some(encode_json(old)),
    );
    for blob in old.kind.change_blobs() {
        let k = tkey(Table::PastBlobs, &blob.0);
        // Each blob is read once (a deletion pending for it does not count).
        if !matches!(writes.get(&k), Some(Some(_)))
            && let Some(held) = blobs(&blob)?
        {
            put(writes, &mut bytes, k, Some(held));
        }
    }
    Ok(bytes)
}

/// Insert the write `k`, `v` into `writes`, adding its size to `bytes`: what a chunk's
/// pending rows hold, so a fold flushes before they grow past [`CHUNK_BYTES`] (a revision
/// that replaces a pending row counts twice: the bound errs early, never late).
fn put(writes: &mut Writes, bytes: &mut usize, k: Vec<u8>, v: Option<Vec<u8>>) {
    *bytes += k.len() + v.as_ref().map_or(0, Vec::len);
    writes.insert(k, v);
}

/// The bytes of pending rows at which a fold flushes its chunk, however few changes it
/// holds: a chunk of large events (pasted specs, tools' outputs, change blobs) would
/// otherwise hold hundreds of MB before its count is reached.
pub(crate) const CHUNK_BYTES: usize = 16 << 20;

/// The LSN the generation reflects. 0xFF never starts UTF-8, so this key sorts after
/// every table's and is written last in each ingestion.
const APPLIED: &[u8] = b"\xffapplied";

/// `table`'s key for `rest`.
pub(crate) fn tkey(table: Table, rest: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(rest.len() + 1);
    k.push(table as u8);
    k.extend_from_slice(rest);
    k
}

/// Writes to one keyspace, in key order (None: delete): ingested in one go.
pub(crate) type Writes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// Write `writes` into `ks` as one ingestion: new tables, no journal, atomic. Readers that
/// open the views never replay anything.
pub(crate) fn ingest(ks: &Keyspace, writes: Writes) -> Result<(), ViewError> {
    if writes.is_empty() {
        return Ok(());
    }
    let mut ing = ks.start_ingestion().map_err(ViewError::store)?;
    for (k, v) in writes {
        match v {
            Some(v) => ing.write(k, v),
            None => ing.write_tombstone(k),
        }
        .map_err(ViewError::store)?;
    }
    ing.finish().map_err(ViewError::store)?;
    // Each ingestion adds tables; merge them once they pile up, while the lock is held.
    if ks.table_count() > 24 {
        ks.major_compact().map_err(ViewError::store)?;
    }
    Ok(())
}

/// All the fjall-backed views of one generation, in one keyspace keyed by [`Table`].
pub(crate) struct Tables {
    pub(crate) ks: Keyspace,
}

impl Tables {
    pub(crate) fn open(db: &Database, generation: u32) -> Result<Tables, ViewError> {
        let ks = db
            .keyspace(&format!("v{generation}"), crate::ledger::keyspace_options)
            .map_err(ViewError::store)?;
        Ok(Tables { ks })
    }

    /// The last ledger change these tables reflect.
    pub(crate) fn applied(&self) -> Result<u64, ViewError> {
        Ok(self
            .ks
            .get(APPLIED)
            .map_err(ViewError::store)?
            .and_then(|v| v.as_ref().try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(0))
    }

    pub(crate) fn session(&self, session: &SessionId) -> Result<Option<SessionRollup>, ViewError> {
        get_json(
            &self.ks,
            &tkey(Table::Sessions, session.as_str().as_bytes()),
        )
    }

    pub(crate) fn text(&self, id: &EventId) -> Result<Option<TextRow>, ViewError> {
        get_json(
            &self.ks,
            &tkey(Table::Texts, &event_key(&id.session, id.seq)),
        )
    }

    pub(crate) fn day(&self, date: &str) -> Result<Option<DayStats>, ViewError> {
        get_json(&self.ks, &tkey(Table::Days, date.as_bytes()))
    }

    pub(crate) fn subject(&self, subject: &str) -> Result<Option<SubjectStats>, ViewError> {
        get_json(&self.ks, &tkey(Table::Subjects, subject.as_bytes()))
    }

    /// The event `id`'s current envelope, as the ledger holds it.
    pub(crate) fn envelope(&self, id: &EventId) -> Result<Option<Envelope>, ViewError> {
        get_json(
            &self.ks,
            &tkey(Table::Envelopes, &event_key(&id.session, id.seq)),
        )
    }

    /// Every event's current envelope in key order (by session, then seq); with a
    /// `session`, only its events.
    pub(crate) fn envelopes(
        &self,
        session: Option<&SessionId>,
    ) -> impl Iterator<Item = Result<(EventId, Envelope), ViewError>> + use<'_> {
        self.envelope_bytes(session)
            .map(|row| row.and_then(|(id, v)| Ok((id, decode_json(&v)?))))
    }

    /// [`Tables::envelopes`], each envelope as the JSON this binary encoded it to, not
    /// decoded (`events --json` copies its kind's bytes).
    pub(crate) fn envelope_bytes(
        &self,
        session: Option<&SessionId>,
    ) -> impl Iterator<Item = Result<(EventId, fjall::Slice), ViewError>> + use<'_> {
        let prefix = session.map_or_else(Vec::new, |s| {
            let mut p = s.as_str().as_bytes().to_vec();
            p.push(0);
            p
        });
        self.ks.prefix(tkey(Table::Envelopes, &prefix)).map(|kv| {
            let (k, v) = kv.into_inner().map_err(ViewError::store)?;
            let id = crate::ledger::decode_event_key(&k[1..])
                .ok_or_else(|| ViewError::Corrupt("an envelope row's key is no event".into()))?;
            Ok((id, v))
        })
    }

    /// Every past version (see [`Table::Past`]), each event's in the order they were
    /// written: (the event, the LSN of the change that replaced it, the version).
    pub(crate) fn past_versions(
        &self,
    ) -> impl Iterator<Item = Result<(EventId, u64, Envelope), ViewError>> + use<'_> {
        self.scan(Table::Past, b"").map(|r| {
            let (k, v) = r?;
            let (id, lsn) = decode_past_key(&k)
                .ok_or_else(|| ViewError::Corrupt("a past version's key is no event".into()))?;
            Ok((id, lsn, decode_json(&v)?))
        })
    }

    /// What a past version's edit wrote: the change blob `id`'s bytes, if kept.
    pub(crate) fn past_blob(&self, id: &BlobId) -> Result<Option<Vec<u8>>, ViewError> {
        Ok(self.get_raw(Table::PastBlobs, &id.0)?.map(|v| v.to_vec()))
    }

    #[cfg(test)]
    /// Every change blob the past versions name, kept: (its id, its bytes), by id.
    pub(crate) fn past_blobs(
        &self,
    ) -> impl Iterator<Item = Result<(BlobId, Vec<u8>), ViewError>> + '_ {
        self.scan(Table::PastBlobs, b"").map(|r| {
            let (k, v) = r?;
            let id = <[u8; 32]>::try_from(k.as_slice())
                .map_err(|_| ViewError::Corrupt("a past blob's key is no blob id".into()))?;
            Ok((BlobId(id), v.to_vec()))
        })
    }

    /// Every row of `table` whose key starts with `prefix`, raw: (the key within the table,
    /// the value).
    pub(crate) fn scan(
        &self,
        table: Table,
        prefix: &[u8],
    ) -> impl Iterator<Item = Result<(Vec<u8>, fjall::Slice), ViewError>> + '_ {
        self.ks.prefix(tkey(table, prefix)).map(|kv| {
            let (k, v) = kv.into_inner().map_err(ViewError::store)?;
            Ok((k[1..].to_vec(), v))
        })
    }

    /// One row of `table`, raw.
    pub(crate) fn get_raw(
        &self,
        table: Table,
        key: &[u8],
    ) -> Result<Option<fjall::Slice>, ViewError> {
        self.ks.get(tkey(table, key)).map_err(ViewError::store)
    }

    /// Every row of `table` whose key starts with `prefix`: (key without the table byte
    /// and prefix, value).
    fn rows(
        &self,
        table: Table,
        prefix: &[u8],
    ) -> impl Iterator<Item = Result<(Vec<u8>, fjall::Slice), ViewError>> + '_ {
        let skip = prefix.len();
        self.scan(table, prefix)
            .map(move |r| r.map(|(k, v)| (k[skip..].to_vec(), v)))
    }

    /// Every session's id, in id order, without decoding a rollup: what resolving a prefix
    /// needs.
    pub(crate) fn session_ids(&self) -> Result<Vec<SessionId>, ViewError> {
        self.rows(Table::Sessions, b"")
            .map(|r| Ok(SessionId(String::from_utf8_lossy(&r?.0).into_owned())))
            .collect()
    }

    /// Every session's rollup, in id order.
    pub(crate) fn all_sessions(&self) -> Result<Vec<(SessionId, SessionRollup)>, ViewError> {
        self.rows(Table::Sessions, b"")
            .map(|r| {
                let (k, v) = r?;
                Ok((
                    SessionId(String::from_utf8_lossy(&k).into_owned()),
                    decode_json(&v)?,
                ))
            })
            .collect()
    }

    /// Where each session worked and from when, in id order, without building the rest of
    /// its rollup: what a path lookup asks of every session.
    pub(crate) fn session_places(&self) -> Result<Vec<SessionPlace>, ViewError> {
        self.rows(Table::Sessions, b"")
            .map(|r| decode_json(&r?.1))
            .collect()
    }

    /// Each session's agent and working directory, in id order (see
    /// [`SessionOwner::of_row`]): what a read's scope asks of every session.
    pub(crate) fn session_owners(&self) -> Result<Vec<(SessionId, SessionOwner)>, ViewError> {
        self.rows(Table::Sessions, b"")
            .map(|r| {
                let (k, v) = r?;
                let owner =
                    SessionOwner::of_row(&v).map_err(|e| ViewError::Corrupt(e.to_string()))?;
                Ok((SessionId(String::from_utf8_lossy(&k).into_owned()), owner))
            })
            .collect()
    }

    /// The commits `session`'s commit commands printed, in seq order.
    pub(crate) fn commits_of(
        &self,
        session: &SessionId,
    ) -> Result<Vec<(Seq, CommitRow)>, ViewError> {
        let mut prefix = session.as_str().as_bytes().to_vec();
        prefix.push(0);
        let mut out = Vec::new();
        for r in self.scan(Table::Commits, &prefix) {
            let (k, v) = r?;
            if let Some((_, seq)) = split_key(&k) {
                out.push((seq, decode_json(&v)?));
            }
        }
        Ok(out)
    }

    /// Every day with events, oldest first.
    pub(crate) fn all_days(&self) -> Result<Vec<(String, DayStats)>, ViewError> {
        self.rows(Table::Days, b"")
            .map(|r| {
                let (k, v) = r?;
                Ok((String::from_utf8_lossy(&k).into_owned(), decode_json(&v)?))
            })
            .collect()
    }

    /// Every subject's current claim, in name order.
    pub(crate) fn all_subjects(&self) -> Result<Vec<(String, SubjectStats)>, ViewError> {
        self.rows(Table::Subjects, b"")
            .map(|r| {
                let (k, v) = r?;
                Ok((String::from_utf8_lossy(&k).into_owned(), decode_json(&v)?))
            })
            .collect()
    }

    /// A subject's evidence trail, oldest key first.
    pub(crate) fn evidence_of(
        &self,
        subject: &str,
    ) -> Result<Vec<(SessionId, Seq, ObsRow)>, ViewError> {
        let mut prefix = subject.as_bytes().to_vec();
        prefix.push(0);
        let mut out = Vec::new();
        for r in self.rows(Table::Evidence, &prefix) {
            let (k, v) = r?;
            if let Some((session, seq)) = split_key(&k) {
                out.push((session, seq, decode_json(&v)?));
            }
        }
        Ok(out)
    }

    /// The events that touched `path`.
    pub(crate) fn touches_of(&self, path: &str) -> Result<Vec<EventId>, ViewError> {
        Ok(self
            .file_rows(path)?
            .into_iter()
            .map(|(id, _)| id)
            .collect())
    }

    /// The recorded edits of `path`: each event and its row, in event-key order.
    pub(crate) fn file_rows(&self, path: &str) -> Result<Vec<(EventId, FileRow)>, ViewError> {
        let mut prefix = path.as_bytes().to_vec();
        prefix.push(0);
        let mut out = Vec::new();
        for r in self.rows(Table::Files, &prefix) {
            let (k, v) = r?;
            if let Some((session, seq)) = split_key(&k) {
                out.push((EventId { session, seq }, decode_json(&v)?));
            }
        }
        Ok(out)
    }

    /// What the edit `id` wrote to `path` (its change blob), if it recorded one.
    pub(crate) fn change_bytes(
        &self,
        path: &str,
        id: &EventId,
    ) -> Result<Option<Vec<u8>>, ViewError> {
        let k = path_event_key(path.as_bytes(), &event_key(&id.session, id.seq));
        Ok(self.get_raw(Table::Changes, &k)?.map(|v| v.to_vec()))
    }

    /// Every recorded path that ends with `tail` (bytewise), each once.
    pub(crate) fn paths_ending(&self, tail: &str) -> Result<BTreeSet<String>, ViewError> {
        let mut out = BTreeSet::new();
        for key in self.distinct(Table::Tails, &reversed(tail))? {
            if let Ok(p) = String::from_utf8(key.into_iter().rev().collect()) {
                out.insert(p);
            }
        }
        Ok(out)
    }

    /// Every recorded path that starts with `head` (bytewise; `""`: every path), each once.
    pub(crate) fn paths_starting(&self, head: &str) -> Result<BTreeSet<String>, ViewError> {
        let mut out = BTreeSet::new();
        for key in self.distinct(Table::Files, head.as_bytes())? {
            if let Ok(p) = String::from_utf8(key) {
                out.insert(p);
            }
        }
        Ok(out)
    }

    /// The distinct parts before the first 0 of the keys of `table` that start with
    /// `prefix`: one seek per distinct part, however many rows each has.
    fn distinct(&self, table: Table, prefix: &[u8]) -> Result<Vec<Vec<u8>>, ViewError> {
        let mut out = Vec::new();
        let mut from = tkey(table, prefix);
        let end = prefix_end(&tkey(table, prefix));
        loop {
            let next = match &end {
                Some(end) => self.ks.range(from.clone()..end.clone()).next(),
                None => self.ks.range(from.clone()..).next(),
            };
            let Some(kv) = next else { break };
            let key = kv.key().map_err(ViewError::store)?;
            let Some(at) = key.iter().position(|b| *b == 0) else {
                break;
            };
            let part = key[1..at].to_vec();
            // The first key past every row of this part: its bytes, then 0x01.
            from = key[..at].to_vec();
            from.push(1);
            out.push(part);
        }
        Ok(out)
    }
}

/// The smallest key greater than every key starting with `prefix` (`None`: there is none).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Changes folded but not yet written.
#[derive(Default)]
pub(crate) struct Pending {
    sessions: HashMap<SessionId, SessionRollup>,
    days: HashMap<String, DayStats>,
    /// Raw writes to the texts, files, changes, tails, steps, commits and evidence tables (None:
    /// delete), all keyed by the event, so a retraction deletes exactly its own rows.
    texts: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    files: Writes,
    evidence: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Raw writes to the envelopes table, kept apart so a chunk's memory is easy to see.
    envelopes: Writes,
    /// Raw writes to the past and past-blobs tables (only ever added: the feed's past is
    /// append-only).
    past: Writes,
    subjects: BTreeSet<String>,
    /// The bytes of the rows above (see [`put`]).
    bytes: usize,
}

impl Pending {
    /// Fold `env` (the event at `id`, whose searchable text is `text`, see [`TextRow::of`])
    /// in with `sign` +1, or back out with -1.
    pub(crate) fn fold(
        &mut self,
        tables: &Tables,
        blobs: Blobs<'_>,
        (id, env, text): (&EventId, &Envelope, Option<&TextRow>),
        sign: i64,
        day: &str,
    ) -> Result<(), ViewError> {
        self.rollup(tables, &id.session)?.apply(id.seq, env, sign);
        let stats = match self.days.entry(day.to_string()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(tables.day(day)?.unwrap_or_default())
            }
        };
        stats.apply(env, sign);

        let key = event_key(&id.session, id.seq);
        self.envelope(&key, env, sign);
        if let Some(row) = text {
            put(
                &mut self.texts,
                &mut self.bytes,
                tkey(Table::Texts, &key),
                (sign > 0).then(|| encode_json(row)),
            );
        }
        // What each edit's change blob adds and removes (read once, for the changes table).
        let mut sizes: HashMap<BlobId, crate::vocab::diff::Size> = HashMap::new();
        if let Event::FileTouch {
            path,
            op,
            change,
            failed,
            more,
            model,
            ..
        } = &env.kind
        {
            let first = (path, *op, *change);
            let rest = more.iter().map(|t| (&t.path, t.op, t.change));
            for (p, op, change) in std::iter::once(first).chain(rest) {
                let k = path_event_key(p.as_bytes(), &key);
                let row = FileRow {
                    ts_ms: env.ts_ms,
                    op,
                    failed: *failed,
                    change,
                    model: model.clone(),
                };
                let bytes = match change {
                    Some(blob) if sign > 0 => blobs(&blob)?,
                    _ => None,
                };
                // The step below is sized from the same bytes: each blob is read once.
                if let (Some(blob), Some(b)) = (change, &bytes) {
                    let size = serde_json::from_slice(b).map(|c| crate::vocab::diff::size(&c));
                    sizes.insert(blob, size.unwrap_or_default());
                }
                put(
                    &mut self.files,
                    &mut self.bytes,
                    tkey(Table::Files, &k),
                    (sign > 0).then(|| encode_json(&row)),
                );
                if sign > 0 || !super::fault::active(super::fault::Fault::KeepStaleChanges) {
                    put(
                        &mut self.files,
                        &mut self.bytes,
                        tkey(Table::Changes, &k),
                        bytes,
                    );
                }
                let tail = path_event_key(&reversed(p), &key);
                self.files
                    .insert(tkey(Table::Tails, &tail), (sign > 0).then(Vec::new));
            }
        }
        // Every step the event makes, each edit sized from what it wrote.
        let size = |change: &Option<BlobId>| -> Result<crate::vocab::diff::Size, ViewError> {
            Ok(change
                .and_then(|blob| sizes.get(&blob).copied())
                .unwrap_or_default())
        };
        let stale = sign < 0 && super::fault::active(super::fault::Fault::KeepStaleChanges);
        let steps = if stale {
            Vec::new()
        } else {
            crate::views::steps::steps_of(&env.kind, size)?
        };
        for (i, step) in steps.iter().enumerate() {
            let k = tkey(Table::Steps, &step_key(&key, i as u16));
            let row = (sign > 0).then(|| encode_json(&(env.ts_ms, step)));
            self.files.insert(k, row);
        }
        if let Some(row) = CommitRow::of(env) {
            self.files.insert(
                tkey(Table::Commits, &key),
                (sign > 0).then(|| encode_json(&row)),
            );
        }
        if let Event::Obs {
            subject,
            text,
            derived_from,
            basis,
        } = &env.kind
        {
            let mut k = tkey(Table::Evidence, subject.as_bytes());
            k.push(0);
            k.extend_from_slice(&key);
            let row = ObsRow {
                ts_ms: env.ts_ms,
                text: text.clone(),
                derived_from: derived_from.clone(),
                basis: basis.clone(),
            };
            put(
                &mut self.evidence,
                &mut self.bytes,
                k,
                (sign > 0).then(|| encode_json(&row)),
            );
            self.subjects.insert(subject.clone());
        }
        Ok(())
    }

    /// The envelopes row of the event `key`: its version `env` in (`sign` +1) or out. A
    /// revision folds the old version out, then the new one in, in the same chunk.
    fn envelope(&mut self, key: &[u8], env: &Envelope, sign: i64) {
        let k = tkey(Table::Envelopes, key);
        if super::fault::active(super::fault::Fault::KeepOldEnvelopes) {
            // Broken on purpose: a retraction leaves the old version in, and the new
            // version does not replace it.
            if sign < 0 || !self.envelopes.contains_key(&k) {
                put(
                    &mut self.envelopes,
                    &mut self.bytes,
                    k,
                    Some(encode_json(env)),
                );
            }
            return;
        }
        put(
            &mut self.envelopes,
            &mut self.bytes,
            k,
            (sign > 0).then(|| encode_json(env)),
        );
    }

    /// The rollup of `session` as folded so far.
    fn rollup(
        &mut self,
        tables: &Tables,
        session: &SessionId,
    ) -> Result<&mut SessionRollup, ViewError> {
        Ok(match self.sessions.entry(session.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(tables.session(session)?.unwrap_or_default())
            }
        })
    }

    /// Keep `old`, the version of `id` that the change `lsn` replaced (see [`keep_past`]),
    /// and stretch its session's span over it (see [`SessionRollup::stretch`]).
    pub(crate) fn past(
        &mut self,
        tables: &Tables,
        blobs: Blobs<'_>,
        (lsn, id, old): (u64, &EventId, &Envelope),
    ) -> Result<(), ViewError> {
        if !super::fault::active(super::fault::Fault::RebuildSpansCurrent) {
            self.rollup(tables, &id.session)?.stretch(old);
        }
        self.bytes += keep_past(&mut self.past, blobs, (lsn, id, old))?;
        Ok(())
    }

    /// The bytes the rows folded so far hold (see [`put`]).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Put everything folded so far, and the LSN it reaches, into `writes`.
    pub(crate) fn write(
        self,
        tables: &Tables,
        writes: &mut Writes,
        lsn: u64,
    ) -> Result<(), ViewError> {
        for (session, rollup) in self.sessions {
            let k = tkey(Table::Sessions, session.as_str().as_bytes());
            writes.insert(k, (rollup.events != 0).then(|| encode_json(&rollup)));
        }
        for (day, stats) in self.days {
            let k = tkey(Table::Days, day.as_bytes());
            writes.insert(k, (!stats.is_empty()).then(|| encode_json(&stats)));
        }
        // A subject's current claim is re-derived from its whole trail, so retracting the
        // newest observation falls back to the one before it.
        for subject in &self.subjects {
            let stats = subject_stats(tables, subject, &self.evidence)?;
            let k = tkey(Table::Subjects, subject.as_bytes());
            writes.insert(k, stats.map(|s| encode_json(&s)));
        }
        writes.extend(self.texts);
        writes.extend(self.files);
        writes.extend(self.evidence);
        writes.extend(self.envelopes);
        writes.extend(self.past);
        writes.insert(APPLIED.to_vec(), Some(lsn.to_be_bytes().to_vec()));
        Ok(())
    }
}

/// The current claim of `subject` from its stored trail overlaid with pending writes.
fn subject_stats(
    tables: &Tables,
    subject: &str,
    pending: &BTreeMap<Vec<u8>, Option<Vec<u8>>>,
) -> Result<Option<SubjectStats>, ViewError> {
    let mut prefix = tkey(Table::Evidence, subject.as_bytes());
    prefix.push(0);
    let mut rows: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for kv in tables.ks.prefix(&prefix) {
        let (k, v) = kv.into_inner().map_err(ViewError::store)?;
        rows.insert(k.to_vec(), v.to_vec());
    }
    for (k, v) in pending.range(prefix.clone()..) {
        if !k.starts_with(&prefix) {
            break;
        }
        match v {
            Some(v) => rows.insert(k.clone(), v.clone()),
            None => rows.remove(k),
        };
    }
    let mut best: Option<SubjectStats> = None;
    let (mut count, mut cited) = (0, 0);
    for (k, v) in &rows {
        let Some((session, seq)) = split_key(&k[prefix.len()..]) else {
            continue;
        };
        let row: ObsRow = decode_json(v)?;
        count += 1;
        if !row.derived_from.is_empty() {
            cited += 1;
        }
        let newer = best
            .as_ref()
            .is_none_or(|b| (row.ts_ms, &session, seq) >= (b.last_ms, &b.session, b.seq));
        if newer {
            best = Some(SubjectStats {
                count: 0,
                cited: 0,
                last_ms: row.ts_ms,
                session,
                seq,
                text: row.text,
                basis: row.basis,
            });
        }
    }
    Ok(best.map(|b| SubjectStats { count, cited, ..b }))
}

/// The (session, seq) of an event key.
pub(crate) fn split_key(k: &[u8]) -> Option<(SessionId, Seq)> {
    crate::ledger::decode_event_key(k).map(|id| (id.session, id.seq))
}

pub(crate) fn encode_json<T: Serialize>(v: &T) -> Vec<u8> {
    // View rows are plain data with string keys: serialization cannot fail.
    serde_json::to_vec(v).unwrap_or_default()
}

fn decode_json<T: for<'de> Deserialize<'de>>(v: &[u8]) -> Result<T, ViewError> {
    serde_json::from_slice(v).map_err(|e| ViewError::Corrupt(e.to_string()))
}

fn get_json<T: for<'de> Deserialize<'de>>(
    ks: &Keyspace,
    key: &[u8],
) -> Result<Option<T>, ViewError> {
    match ks.get(key).map_err(ViewError::store)? {
        Some(v) => decode_json(&v).map(Some),
        None => Ok(None),
    }
}
