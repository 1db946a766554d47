//! The vector lane: an embedding per dense text, searched by exact scan.
//!
//! Vectors are a pure function of (model, text), so they are cached by content hash in a
//! keyspace no rebuild or `asof` fold clears: a replay never embeds a text twice.
//!
//! A fold never waits for the model (unless its slot says [`ModelSlot::inline`]): a text
//! the cache does not hold is queued, `(event key → text)` in the generation's keyspace,
//! and its event's old vector is removed at once (a revised text never keeps the vector
//! of its old version). The embedding pass (`peat model embed`, started detached after
//! captures) drains the queue a batch at a time: [`VectorLane::take`] reads a batch,
//! [`Batch::embed`] runs the model with no store open, [`VectorLane::store`] writes the
//! vectors whose queue entry still holds the text that was embedded, in one ingestion. The
//! queue is the pass's position: a pass killed midway resumes where its last batch ended.
//!
//! A search reads the lane from one mapped file (see [`super::vectorfile`]) that the pass
//! rewrites when it finishes, and a rebuild when it ends, minus the keys whose row changed
//! since (the changes table), plus those rows as they stand.

use fjall::{Database, Keyspace};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;

use super::fault::{self, Fault};
use super::tables::{Table, Writes, split_key, tkey};
use super::vectorfile::{self, Block, Mapped, Stamp};
use super::{ModelSlot, ViewError};
use crate::embed::Embedder;
use crate::vocab::event::{EventId, SessionId};

/// Texts embedded per model call.
const BATCH: usize = 32;

/// The queue's first key byte: far from [`Table`]'s numbers, so new tables never collide
/// with it, and below the generation's `applied` key (0xFF).
const QUEUED: u8 = 0xF0;

/// The key of the nonce of the last vector file written (see [`vectorfile::Stamp`]).
const FILE_NONCE: u8 = 0xF1;

/// The key whose presence says the queue is empty, so that counting it is one read: the
/// pass's deletions leave the queue's range full of tombstones that a count would walk
/// (at 300k events, nearly half of a warm hybrid search). Set by a take that finds the
/// queue empty; removed in the same ingestion as every entry queued. Its absence says
/// nothing (a store older than the mark has none): the queue is counted then.
const QUEUE_EMPTY: u8 = 0xF2;

fn queue_key(key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.push(QUEUED);
    k.extend_from_slice(key);
    k
}

/// The lane's vectors live in the generation's keyspace (under [`Table::Vectors`]); the
/// cache has a keyspace of its own that no rebuild clears. An `asof` fold starts from a copy
/// of the real store's cache (see `Views::seed_scratch`).
pub(crate) struct VectorLane {
    vectors: Keyspace,
    cache: Keyspace,
    file: Option<LaneFile>,
}

/// Where a store's lane keeps its file, and what stamps it (a scratch fold keeps none).
pub(crate) struct LaneFile {
    pub(crate) path: PathBuf,
    /// The views' meta keyspace, which holds the ledger's identity (see [`super::stamp`]).
    pub(crate) meta: Keyspace,
    pub(crate) model: String,
}

/// The changes since the file stamped `nonce` was written (zeros: since none was) are
/// keyed under it: a search scans only the current file's, never the entries a rewrite
/// cleared (tombstones it would walk until a compaction).
fn changes_prefix(nonce: &[u8; vectorfile::NONCE]) -> Vec<u8> {
    tkey(Table::VectorChanges, nonce)
}

/// Record that `key`'s vector row changed since the file stamped `nonce`: the file no
/// longer speaks for it.
fn changed(writes: &mut Writes, nonce: &[u8; vectorfile::NONCE], key: &[u8]) {
    if !fault::active(Fault::VectorChangesUnrecorded) {
        writes.insert([&changes_prefix(nonce)[..], key].concat(), Some(Vec::new()));
    }
}

/// Dense texts added and removed, not yet embedded or written.
#[derive(Default)]
pub(crate) struct PendingVectors {
    upserts: BTreeMap<Vec<u8>, String>,
    deletes: BTreeSet<Vec<u8>>,
    /// The bytes of the texts added (a replaced one still counts: an upper bound).
    bytes: usize,
}

impl PendingVectors {
    pub(crate) fn add(&mut self, key: Vec<u8>, text: &str) {
        self.deletes.remove(&key);
        self.bytes += key.len() + text.len();
        self.upserts.insert(key, text.to_string());
    }

    /// The bytes of the texts added so far.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn remove(&mut self, key: Vec<u8>) {
        self.upserts.remove(&key);
        self.deletes.insert(key);
    }
}

/// Queued texts taken for embedding: (event key, text, its vector if the cache holds one).
pub(crate) struct Batch {
    items: Vec<(Vec<u8>, String, Option<Vec<u8>>)>,
}

/// A batch with its vectors (as bytes), each marked whether the model made it now (and
/// the cache does not hold it yet).
pub(crate) struct Embedded {
    items: Vec<(Vec<u8>, String, Vec<u8>, bool)>,
}

impl Batch {
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many distinct texts of the batch the model must embed.
    pub(crate) fn to_embed(&self) -> usize {
        let texts: HashSet<&str> = self
            .items
            .iter()
            .filter(|(_, _, cached)| cached.is_none())
            .map(|(_, t, _)| t.as_str())
            .collect();
        texts.len()
    }

    /// [`Batch::embed`] with the model of `slot`, loaded only when the cache did not answer
    /// the batch whole; `None` when it must embed and no model is there.
    pub(crate) fn embed_with(self, slot: &mut ModelSlot) -> Result<Option<Embedded>, ViewError> {
        let embedder = match self.to_embed() {
            0 => None,
            _ => match slot.get()? {
                Some(e) => Some(e),
                None => return Ok(None),
            },
        };
        self.embed(embedder).map(Some)
    }

    /// Run the model over the batch's texts the cache did not hold, each distinct text
    /// once (no store need be open meanwhile). `embedder` may be `None` when
    /// [`Batch::to_embed`] is 0: the model is not loaded for a batch the cache answers.
    pub(crate) fn embed(
        self,
        embedder: Option<&mut (dyn Embedder + 'static)>,
    ) -> Result<Embedded, ViewError> {
        let mut distinct: HashMap<&str, usize> = HashMap::new();
        let mut texts: Vec<&str> = Vec::new();
        for (_, text, cached) in &self.items {
            if cached.is_none() && !distinct.contains_key(text.as_str()) {
                distinct.insert(text, texts.len());
                texts.push(text);
            }
        }
        // All at once: the embedder orders the texts by length and batches them itself,
        // so the more it sees, the less it pads.
        let vecs = match (texts.is_empty(), embedder) {
            (true, _) => Vec::new(),
            (false, Some(embedder)) => embedder.embed(&texts).map_err(ViewError::Embed)?,
            (false, None) => {
                return Err(ViewError::Embed(crate::embed::EmbedError::Inference(
                    "no model to embed the batch with".into(),
                )));
            }
        };
        let vecs: Vec<Vec<u8>> = vecs.iter().map(|v| to_bytes(v)).collect();
        let mut items = Vec::with_capacity(self.items.len());
        let mut cached_now: HashSet<usize> = HashSet::new();
        for (key, text, cached) in &self.items {
            let item = match cached {
                Some(v) => (key.clone(), text.clone(), v.clone(), false),
                None => {
                    let i = distinct[text.as_str()];
                    let Some(v) = vecs.get(i) else {
                        return Err(ViewError::Corrupt(
                            "the model returned fewer vectors than texts".into(),
                        ));
                    };
                    // Cached once per distinct text.
                    (key.clone(), text.clone(), v.clone(), cached_now.insert(i))
                }
            };
            items.push(item);
        }
        Ok(Embedded { items })
    }
}

/// A hit: the event and its cosine similarity to the query.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VectorHit {
    pub(crate) id: EventId,
    pub(crate) score: f32,
}

/// Vectors read from rows into memory, in key order, as the columns of a [`Block`].
#[derive(Default)]
struct Rows {
    scales: Vec<u8>,
    key_ends: Vec<u8>,
    codes: Vec<u8>,
    keys: Vec<u8>,
    dim: usize,
}

impl Rows {
    fn block(&self) -> Block<'_> {
        Block {
            scales: &self.scales,
            key_ends: &self.key_ends,
            codes: &self.codes,
            keys: &self.keys,
            dim: self.dim,
        }
    }

    /// Add the vector stored as `value` (scale, then codes) under `key`, unless its
    /// dimension is not the lane's: every vector of a lane has its model's dimension, a
    /// stray one is no neighbour.
    fn push(&mut self, key: &[u8], value: &[u8]) {
        let Some((scale, codes)) = value.split_first_chunk::<4>() else {
            return;
        };
        if self.dim == 0 {
            self.dim = codes.len();
        }
        if codes.len() != self.dim {
            return;
        }
        self.keys.extend_from_slice(key);
        self.key_ends
            .extend_from_slice(&(self.keys.len() as u32).to_le_bytes());
        self.scales.extend_from_slice(scale);
        self.codes.extend_from_slice(codes);
    }
}

/// The lane as a search reads it: the mapped file's rows in `range` (those of the session
/// asked for) but the `changed` keys', and the rows of those keys as the store holds them
/// (`fresh`). Without a file that can be read, every row is fresh.
#[derive(Default)]
pub(crate) struct Loaded {
    file: Option<Mapped>,
    range: Range<usize>,
    changed: HashSet<Vec<u8>>,
    fresh: Rows,
}

impl Loaded {
    /// How many vectors a search scores.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.vectors().map_or(0, |v| v.len())
    }

    /// The blocks a search scans, each with the rows to scan and whether to skip the
    /// changed keys in it.
    fn parts(&self) -> Vec<(Block<'_>, Range<usize>, bool)> {
        let mut parts = Vec::with_capacity(2);
        if let Some(file) = &self.file {
            parts.push((file.block(), self.range.clone(), true));
        }
        let fresh = self.fresh.block();
        parts.push((fresh, 0..fresh.len(), false));
        parts
    }

    /// The stored vector of `key` as scanned: its block and row.
    fn row(&self, key: &[u8]) -> Option<(Block<'_>, usize)> {
        match &self.file {
            Some(file) if !self.changed.contains(key) => {
                let block = file.block();
                block
                    .find(key)
                    .filter(|i| self.range.contains(i))
                    .map(|i| (block, i))
            }
            _ => {
                let block = self.fresh.block();
                block.find(key).map(|i| (block, i))
            }
        }
    }

    /// The similarity of `query` to the vector loaded for `id`, if it has one: what fusion
    /// asks of a text the keyword lane found and the scan did not rank. Rows are in key
    /// order, so this is a binary search in memory, not a read of the store.
    pub(crate) fn similarity(&self, query: &[f32], id: &EventId) -> Option<f32> {
        let key = crate::ledger::event_key(&id.session, id.seq);
        let (block, i) = self.row(&key)?;
        (query.len() == block.dim).then(|| dot_i8(query, block.codes(i)) / block.scale(i))
    }

    /// The `k` vectors nearest `query` (an L2-normalised embedding) with a similarity of at
    /// least `floor` that `admits` accepts; best first, ties by id, so the order is
    /// deterministic. `admits` is asked only about a vector that would enter the best `k`,
    /// so a filter costs a lookup per contender, not per vector.
    pub(crate) fn search(
        &self,
        query: &[f32],
        k: usize,
        floor: f32,
        admits: &mut dyn FnMut(&EventId) -> Result<bool, ViewError>,
    ) -> Result<Vec<VectorHit>, ViewError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        // (score, key), best first, equal scores in key order.
        let ahead = |a: (f32, &[u8]), b: (f32, &[u8])| a.0 > b.0 || (a.0 == b.0 && a.1 < b.1);
        let mut scored: Vec<(f32, &[u8])> = Vec::with_capacity(k + 1);
        for (block, range, skip_changed) in self.parts() {
            if block.dim == 0 || query.len() != block.dim {
                continue;
            }
            let codes = &block.codes[range.start * block.dim..range.end * block.dim];
            for (i, codes) in range.zip(codes.chunks_exact(block.dim)) {
                let score = dot_i8(query, codes) / block.scale(i);
                if score < floor || (scored.len() >= k && score < scored[k - 1].0) {
                    continue;
                }
                let key = block.key(i);
                if scored.len() >= k && !ahead((score, key), scored[k - 1]) {
                    continue;
                }
                if skip_changed && self.changed.contains(key) {
                    continue;
                }
                let Some((session, seq)) = split_key(key) else {
                    continue;
                };
                if !admits(&EventId { session, seq })? {
                    continue;
                }
                let at = scored.partition_point(|&c| ahead(c, (score, key)));
                scored.insert(at, (score, key));
                scored.truncate(k);
            }
        }
        if fault::active(Fault::VectorsUnranked) {
            scored.sort_by_key(|&(_, key)| key);
        }
        Ok(scored
            .into_iter()
            .filter_map(|(score, key)| {
                split_key(key).map(|(session, seq)| VectorHit {
                    id: EventId { session, seq },
                    score,
                })
            })
            .collect())
    }

    /// Every vector as a search scores it (scale, then codes), by event: what the oracles
    /// compare with their model of the lane.
    #[cfg(test)]
    fn vectors(&self) -> Result<Vec<(EventId, Vec<u8>)>, ViewError> {
        let mut out = Vec::new();
        for (block, range, skip_changed) in self.parts() {
            for i in range {
                let key = block.key(i);
                if skip_changed && self.changed.contains(key) {
                    continue;
                }
                let (session, seq) = split_key(key)
                    .ok_or_else(|| ViewError::Corrupt("a vector key is not an event key".into()))?;
                let mut v = block.scale(i).to_le_bytes().to_vec();
                v.extend_from_slice(block.codes(i));
                out.push((EventId { session, seq }, v));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

impl VectorLane {
    /// The lane over `generation`'s keyspace; the cache is `db`'s, shared by generations.
    /// With a `file`, searches read the lane from it (when it is the one the rows stamp).
    pub(crate) fn open(
        db: &Database,
        generation: &Keyspace,
        file: Option<LaneFile>,
    ) -> Result<VectorLane, ViewError> {
        let cache = db
            .keyspace("embed_cache", crate::ledger::keyspace_options)
            .map_err(ViewError::store)?;
        Ok(VectorLane {
            vectors: generation.clone(),
            cache,
            file,
        })
    }

    /// The stamp a file of `file`'s lane carries, with `nonce`.
    fn stamp(&self, file: &LaneFile, nonce: [u8; vectorfile::NONCE]) -> Result<Stamp, ViewError> {
        let identity = file
            .meta
            .get(super::stamp::STAMP)
            .map_err(ViewError::store)?
            .map_or_else(Vec::new, |v| v.to_vec());
        Ok(Stamp {
            schema: super::VIEW_SCHEMA,
            identity,
            model: file.model.clone(),
            nonce,
        })
    }

    /// The nonce of the file the rows record, if one was written.
    fn nonce(&self) -> Result<Option<[u8; vectorfile::NONCE]>, ViewError> {
        let recorded = self.vectors.get([FILE_NONCE]).map_err(ViewError::store)?;
        Ok(recorded.and_then(|n| <[u8; vectorfile::NONCE]>::try_from(&n[..]).ok()))
    }

    /// The lane's file, mapped, if it is the one the rows record, with its nonce.
    fn mapped(&self) -> Result<Option<(Mapped, [u8; vectorfile::NONCE])>, ViewError> {
        let (Some(file), Some(nonce)) = (&self.file, self.nonce()?) else {
            return Ok(None);
        };
        Ok(vectorfile::open(&file.path, &self.stamp(file, nonce)?).map(|m| (m, nonce)))
    }

    /// Whether the file lags the rows by at least `n` changed keys (or there is none to
    /// read): a search then reads enough rows besides the file that writing it again pays.
    pub(crate) fn file_lags(&self, n: usize) -> Result<bool, ViewError> {
        let Some((_, nonce)) = self.mapped()? else {
            return Ok(true);
        };
        let mut changed = 0;
        for kv in self.vectors.prefix(changes_prefix(&nonce)).take(n) {
            kv.key().map_err(ViewError::store)?;
            changed += 1;
        }
        Ok(changed >= n)
    }

    /// Write the lane's file from the rows, and record it as the lane's (clearing the
    /// changes it now holds): what the embedding pass does when it finishes and a rebuild
    /// when it ends. The rename comes first: a crash before the record leaves a file no
    /// search reads, never a record of changes cleared that the file does not hold.
    pub(crate) fn rewrite_file(&self) -> Result<(), ViewError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let rows = self.rows(&[Table::Vectors as u8])?;
        let stamp = self.stamp(file, Stamp::fresh_nonce()?)?;
        vectorfile::write(&file.path, &stamp, rows.block())?;
        let mut writes = Writes::new();
        for kv in self.vectors.prefix([Table::VectorChanges as u8]) {
            writes.insert(kv.key().map_err(ViewError::store)?.to_vec(), None);
        }
        writes.insert(vec![FILE_NONCE], Some(stamp.nonce.to_vec()));
        super::tables::ingest(&self.vectors, writes)
    }

    fn cached(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ViewError> {
        Ok(self
            .cache
            .get(key)
            .map_err(ViewError::store)?
            .map(|v| v.to_vec()))
    }

    /// Write what is pending: vectors from the cache, and for texts it never saw either the
    /// model's (an inline slot) or a queue entry for the embedding pass. Returns how many
    /// texts needed the model.
    pub(crate) fn write(
        &self,
        pending: PendingVectors,
        slot: &mut ModelSlot,
        writes: &mut Writes,
        cache_writes: &mut Writes,
    ) -> Result<usize, ViewError> {
        let nonce = self.nonce()?.unwrap_or_default();
        for key in pending.deletes {
            writes.insert(queue_key(&key), None);
            writes.insert(tkey(Table::Vectors, &key), None);
            changed(writes, &nonce, &key);
        }
        let Some(model) = slot.id.clone() else {
            return Ok(0);
        };
        // Texts the cache lacks, each once (by cache key), and the upserts waiting on them.
        let mut misses: HashMap<Vec<u8>, &str> = HashMap::new();
        let mut waiting: Vec<(&Vec<u8>, &str, Vec<u8>)> = Vec::new();
        let mut resolved: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (key, text) in &pending.upserts {
            let ck = cache_key(&model, text);
            match self.cached(&ck)? {
                Some(v) => resolved.push((key.clone(), v)),
                None => {
                    misses.entry(ck.clone()).or_insert(text);
                    waiting.push((key, text, ck));
                }
            }
        }
        let needed = misses.len();
        if !slot.inline {
            if !waiting.is_empty() && !fault::active(Fault::QueueMarkKept) {
                writes.insert(vec![QUEUE_EMPTY], None);
            }
            for (key, text, _) in &waiting {
                writes.insert(queue_key(key), Some(text.as_bytes().to_vec()));
                // Until the pass embeds the new text, the event has no vector: never
                // the old text's.
                if !fault::active(Fault::QueueKeepsOldVector) {
                    writes.insert(tkey(Table::Vectors, key), None);
                    changed(writes, &nonce, key);
                }
            }
        } else if !misses.is_empty()
            && let Some(embedder) = slot.get()?
        {
            let missing: Vec<(Vec<u8>, &str)> = misses.into_iter().collect();
            let mut fresh: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
            embed_into(embedder, &missing, cache_writes, &mut fresh)?;
            for (key, _, ck) in waiting {
                if let Some(v) = fresh.get(&ck) {
                    resolved.push((key.clone(), v.clone()));
                }
            }
        }
        for (key, v) in resolved {
            writes.insert(queue_key(&key), None);
            writes.insert(tkey(Table::Vectors, &key), Some(quantize(&v)));
            changed(writes, &nonce, &key);
        }
        Ok(needed)
    }

    /// How many texts wait for the embedding pass.
    pub(crate) fn queued(&self) -> Result<usize, ViewError> {
        if self.marked_empty()? {
            return Ok(0);
        }
        let mut n = 0;
        for kv in self.vectors.prefix([QUEUED]) {
            kv.key().map_err(ViewError::store)?;
            n += 1;
        }
        Ok(n)
    }

    /// Up to `limit` queued texts, in key order, each with its vector under `model` if the
    /// cache holds one (a text queued twice, or embedded by an earlier batch, is not
    /// embedded again).
    ///
    /// A take that finds none marks the queue empty (see [`QUEUE_EMPTY`]): only the pass
    /// takes, holding the store (no capture can queue a text between the two), or a fold
    /// of a store of its own (an `asof` replay's).
    pub(crate) fn take(&self, model: &str, limit: usize) -> Result<Batch, ViewError> {
        let mut items = Vec::new();
        for kv in self.vectors.prefix([QUEUED]).take(limit) {
            let (key, value) = kv.into_inner().map_err(ViewError::store)?;
            let text = String::from_utf8_lossy(&value).into_owned();
            let cached = self.cached(&cache_key(model, &text))?;
            items.push((key[1..].to_vec(), text, cached));
        }
        if items.is_empty() && !self.marked_empty()? {
            super::tables::ingest(
                &self.vectors,
                Writes::from([(vec![QUEUE_EMPTY], Some(vec![]))]),
            )?;
        }
        Ok(Batch { items })
    }

    /// Whether the text of `id` waits for the embedding pass.
    pub(crate) fn is_queued(&self, id: &EventId) -> Result<bool, ViewError> {
        let key = queue_key(&crate::ledger::event_key(&id.session, id.seq));
        let entry = self.vectors.get(key).map_err(ViewError::store)?;
        Ok(entry.is_some())
    }

    fn marked_empty(&self) -> Result<bool, ViewError> {
        let mark = self.vectors.get([QUEUE_EMPTY]).map_err(ViewError::store)?;
        Ok(mark.is_some())
    }

    /// Write the vectors of `done` (embedded under `model`) whose queue entry still holds
    /// the text that was embedded; a text revised meanwhile stays queued with its new
    /// version. Every vector is cached either way. Returns how many left the queue.
    pub(crate) fn store(&self, model: &str, done: Embedded) -> Result<usize, ViewError> {
        let mut writes = Writes::new();
        let mut cache_writes = Writes::new();
        let mut stored = 0;
        let nonce = self.nonce()?.unwrap_or_default();
        for (key, text, bytes, fresh) in done.items {
            let qk = queue_key(&key);
            let current = self.vectors.get(&qk).map_err(ViewError::store)?;
            if current.as_ref().is_some_and(|c| **c == *text.as_bytes())
                || fault::active(Fault::PassIgnoresRevisions)
            {
                writes.insert(qk, None);
                writes.insert(tkey(Table::Vectors, &key), Some(quantize(&bytes)));
                changed(&mut writes, &nonce, &key);
                stored += 1;
            }
            if !fresh {
                continue;
            }
            let filed = match current {
                Some(c) if fault::active(Fault::CacheMisfiled) => {
                    String::from_utf8_lossy(&c).into_owned()
                }
                _ => text,
            };
            if !fault::active(Fault::PassCachesNothing) {
                cache_writes.insert(cache_key(model, &filed), Some(bytes));
            }
        }
        // The cache first: it is content-addressed, so a crash after it costs nothing.
        super::tables::ingest(&self.cache, cache_writes)?;
        super::tables::ingest(&self.vectors, writes)?;
        Ok(stored)
    }

    /// The lane as a search scores it, `within`'s only when given: the file mapped (minus
    /// the keys changed since it was written, plus their rows), or without a file that can
    /// be read every row, read into memory in one pass. A one-shot search loads it while
    /// the model loads, so that only the arithmetic of [`Loaded::search`] waits for the
    /// query's vector.
    pub(crate) fn load(&self, within: Option<&SessionId>) -> Result<Loaded, ViewError> {
        let mut session = Vec::new();
        if let Some(s) = within {
            session.extend_from_slice(s.as_str().as_bytes());
            session.push(0);
        }
        let prefixed = |table: Table| [&[table as u8][..], &session].concat();
        let Some((file, nonce)) = self.mapped()? else {
            let fresh = self.rows(&prefixed(Table::Vectors))?;
            return Ok(Loaded {
                fresh,
                ..Loaded::default()
            });
        };
        let block = file.block();
        let range = match within {
            None => 0..block.len(),
            Some(_) => {
                // The session's keys are those from `session` up to the same with its last
                // byte (the 0 ending the session id) raised.
                let mut after = session.clone();
                if let Some(last) = after.last_mut() {
                    *last = 1;
                }
                block.first_at_or_after(&session)..block.first_at_or_after(&after)
            }
        };
        let mut changed = HashSet::new();
        let mut fresh = Rows {
            dim: block.dim,
            ..Rows::default()
        };
        if !fault::active(Fault::VectorChangesIgnored) {
            let prefix = changes_prefix(&nonce);
            for kv in self.vectors.prefix([&prefix[..], &session].concat()) {
                let key = kv.key().map_err(ViewError::store)?[prefix.len()..].to_vec();
                if let Some(v) = self
                    .vectors
                    .get(tkey(Table::Vectors, &key))
                    .map_err(ViewError::store)?
                {
                    fresh.push(&key, &v);
                }
                changed.insert(key);
            }
        }
        Ok(Loaded {
            file: Some(file),
            range,
            changed,
            fresh,
        })
    }

    /// The vector rows under `prefix` (a table's byte, maybe a session), in key order.
    fn rows(&self, prefix: &[u8]) -> Result<Rows, ViewError> {
        let mut rows = Rows::default();
        for kv in self.vectors.prefix(prefix) {
            let (key, value) = kv.into_inner().map_err(ViewError::store)?;
            rows.push(&key[1..], &value);
        }
        Ok(rows)
    }

    /// Every vector as a search scores it (quantized), by event: what the oracles compare
    /// with their model of the lane.
    #[cfg(test)]
    pub(crate) fn dump(&self) -> Result<Vec<(EventId, Vec<u8>)>, ViewError> {
        self.load(None)?.vectors()
    }

    /// Drop the cached vectors of `texts` under `model` (texts redacted by `peat redact`:
    /// an embedding of a secret is not kept either).
    pub(crate) fn forget<'a>(
        &self,
        model: &str,
        texts: impl IntoIterator<Item = &'a str>,
    ) -> Result<usize, ViewError> {
        let mut n = 0;
        for text in texts {
            let key = cache_key(model, text);
            if self.cache.contains_key(&key).map_err(ViewError::store)? {
                self.cache.remove(key).map_err(ViewError::store)?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// The cache keyspace, for ingesting new vectors.
    pub(crate) fn cache(&self) -> &Keyspace {
        &self.cache
    }
}

/// Embed `missing` (cache key, text) in batches, caching each vector.
fn embed_into(
    embedder: &mut dyn Embedder,
    missing: &[(Vec<u8>, &str)],
    cache_writes: &mut Writes,
    fresh: &mut HashMap<Vec<u8>, Vec<u8>>,
) -> Result<(), ViewError> {
    for chunk in missing.chunks(BATCH) {
        let texts: Vec<&str> = chunk.iter().map(|(_, t)| *t).collect();
        let vecs = embedder.embed(&texts).map_err(ViewError::Embed)?;
        for ((ck, _), v) in chunk.iter().zip(vecs) {
            let bytes = to_bytes(&v);
            cache_writes.insert(ck.clone(), Some(bytes.clone()));
            fresh.insert(ck.clone(), bytes);
        }
    }
    Ok(())
}

fn cache_key(model: &str, text: &str) -> Vec<u8> {
    let mut k = model.as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(&Sha256::digest(text.as_bytes()));
    k
}

fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The lane stores each vector as one signed byte per dimension, scaled so its largest
/// component is 127, after the scale itself (an f32): a quarter of the bytes to scan per
/// query, and similarities within about 0.005 of full precision. The cache keeps the
/// exact floats.
fn quantize(f32_bytes: &[u8]) -> Vec<u8> {
    let v: Vec<f32> = f32_bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { 127.0 / max } else { 1.0 };
    let mut out = scale.to_le_bytes().to_vec();
    out.extend(
        v.iter()
            .map(|x| (x * scale).round().clamp(-127.0, 127.0) as i8 as u8),
    );
    out
}

/// The dot product of a query and a stored quantized vector (their cosine, for unit
/// vectors): what the oracles compare a lane with.
#[cfg(test)]
pub(crate) fn dot_quantized(q: &[f32], stored: &[u8]) -> f32 {
    let Some((scale, bytes)) = stored.split_first_chunk::<4>() else {
        return 0.0;
    };
    dot_i8(q, bytes) / f32::from_le_bytes(*scale)
}

/// Lanes of the dot product's sum: independent partial sums the compiler keeps in one
/// vector register (a single running sum is a chain it may not reorder).
const LANES: usize = 8;

/// `q · codes` (signed bytes) over their common length, summed in [`LANES`] partial sums. The scan and
/// every single similarity use this one kernel, so they agree to the bit. On a CPU with
/// AVX2 the same sums are compiled for it (the release build targets plain x86-64, whose
/// byte-to-float conversions take four instructions where AVX2 takes one): the same
/// operations in the same order, so the same bits, in about half the time.
fn dot_i8(q: &[f32], codes: &[u8]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the only feature the function is compiled for.
        return unsafe { dot_i8_avx2(q, codes) };
    }
    dot_i8_sums(q, codes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_i8_avx2(q: &[f32], codes: &[u8]) -> f32 {
    dot_i8_sums(q, codes)
}

#[inline(always)]
fn dot_i8_sums(q: &[f32], codes: &[u8]) -> f32 {
    let n = q.len().min(codes.len());
    let (q, codes) = (&q[..n], &codes[..n]);
    let mut acc = [0f32; LANES];
    let mut qs = q.chunks_exact(LANES);
    let mut cs = codes.chunks_exact(LANES);
    for (qc, cc) in (&mut qs).zip(&mut cs) {
        for j in 0..LANES {
            acc[j] += qc[j] * f32::from(cc[j] as i8);
        }
    }
    let tail: f32 = qs
        .remainder()
        .iter()
        .zip(cs.remainder())
        .map(|(x, &c)| x * f32::from(c as i8))
        .sum();
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_vectors_keep_their_similarities() {
        let unit = |v: Vec<f32>| {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let a = unit((0..384).map(|i| ((i * 7 % 13) as f32) - 6.0).collect());
        let b = unit((0..384).map(|i| ((i * 5 % 11) as f32) - 5.0).collect());
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let q = quantize(&to_bytes(&b));
        assert_eq!(q.len(), 4 + 384);
        assert!((dot_quantized(&a, &q) - exact).abs() < 0.005);
        assert!((dot_quantized(&a, &quantize(&to_bytes(&a))) - 1.0).abs() < 0.005);
    }

    #[test]
    fn the_dot_product_is_the_same_to_the_bit_whichever_instructions_compute_it() {
        // Lengths past, at and short of a whole number of lanes, and codes of every sign.
        for n in [384, 385, 7, 0] {
            let q: Vec<f32> = (0..n)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
                .collect();
            let codes: Vec<u8> = (0..n).map(|i| (i * 91 % 256) as u8).collect();
            let plain = dot_i8_sums(&q, &codes);
            assert_eq!(dot_i8(&q, &codes).to_bits(), plain.to_bits(), "length {n}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: checked just above.
                let wide = unsafe { dot_i8_avx2(&q, &codes) };
                assert_eq!(wide.to_bits(), plain.to_bits(), "length {n}");
            }
        }
    }

    #[test]
    fn a_loaded_lane_gives_the_stored_similarity_of_each_event_and_none_of_others() {
        let id = |s: &str, seq: u32| EventId {
            session: SessionId(s.into()),
            seq: crate::vocab::event::Seq(seq),
        };
        let vector = |k: usize| -> Vec<f32> {
            let v: Vec<f32> = (0..16).map(|i| ((i * (k + 3)) % 7) as f32 - 3.0).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect()
        };
        // Key order, as the lane is read: by session, then seq.
        let ids = [id("a", 1), id("a", 9), id("ab", 0), id("b", 4), id("b", 5)];
        let mut rows = Rows::default();
        let mut stored = Vec::new();
        for (k, id) in ids.iter().enumerate() {
            let q = quantize(&to_bytes(&vector(k)));
            rows.push(&crate::ledger::event_key(&id.session, id.seq), &q);
            stored.push(q);
        }
        let lane = Loaded {
            fresh: rows,
            ..Loaded::default()
        };
        let query = vector(9);
        for (id, q) in ids.iter().zip(&stored) {
            assert_eq!(
                lane.similarity(&query, id),
                Some(dot_quantized(&query, q)),
                "{id:?}"
            );
        }
        for absent in [id("a", 0), id("a", 2), id("aa", 1), id("b", 6), id("c", 0)] {
            assert_eq!(lane.similarity(&query, &absent), None, "{absent:?}");
        }
    }
}
