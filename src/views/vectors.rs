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

use fjall::{Database, Keyspace};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::fault::{self, Fault};
use super::tables::{Table, Writes, split_key, tkey};
use super::{ModelSlot, ViewError};
use crate::embed::Embedder;
use crate::vocab::event::{EventId, SessionId};

/// Texts embedded per model call.
const BATCH: usize = 32;

/// The queue's first key byte: far from [`Table`]'s numbers, so new tables never collide
/// with it, and below the generation's `applied` key (0xFF).
const QUEUED: u8 = 0xF0;

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

/// Queued texts taken for embedding: (event key, text).
pub(crate) struct Batch {
    items: Vec<(Vec<u8>, String)>,
}

/// A batch with its vectors.
pub(crate) struct Embedded {
    items: Vec<(Vec<u8>, String, Vec<f32>)>,
}

impl Batch {
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Run the model over the batch (no store need be open meanwhile).
    pub(crate) fn embed(self, embedder: &mut dyn Embedder) -> Result<Embedded, ViewError> {
        // All at once: the embedder orders the texts by length and batches them itself,
        // so the more it sees, the less it pads.
        let texts: Vec<&str> = self.items.iter().map(|(_, t)| t.as_str()).collect();
        let vecs = embedder.embed(&texts).map_err(ViewError::Embed)?;
        let items = self
            .items
            .into_iter()
            .zip(vecs)
            .map(|((key, text), v)| (key, text, v))
            .collect();
        Ok(Embedded { items })
    }
}

/// A hit: the event and its cosine similarity to the query.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct VectorHit {
    pub(crate) id: EventId,
    pub(crate) score: f32,
}

/// The lane in memory, in key order: one block of codes (a row of `dim` per vector), its
/// scales and its event keys.
#[derive(Default)]
pub(crate) struct Loaded {
    keys: Vec<u8>,
    key_ends: Vec<u32>,
    scales: Vec<f32>,
    codes: Vec<u8>,
    dim: usize,
}

impl Loaded {
    pub(crate) fn len(&self) -> usize {
        self.scales.len()
    }

    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 {
            0
        } else {
            self.key_ends[i - 1] as usize
        };
        &self.keys[start..self.key_ends[i] as usize]
    }

    /// The similarity of `query` to the vector loaded for `id`, if it has one: what fusion
    /// asks of a text the keyword lane found and the scan did not rank. Rows are in key
    /// order, so this is a binary search in memory, not a read of the store.
    pub(crate) fn similarity(&self, query: &[f32], id: &EventId) -> Option<f32> {
        let key = crate::ledger::event_key(&id.session, id.seq);
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let codes = &self.codes[mid * self.dim..(mid + 1) * self.dim];
                    return Some(dot_i8(query, codes) / self.scales[mid]);
                }
            }
        }
        None
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
        if self.dim == 0 || query.len() != self.dim || k == 0 {
            return Ok(Vec::new());
        }
        // (score, row), best first; rows are in key order, so a later row loses a tie.
        let mut scored: Vec<(f32, usize)> = Vec::with_capacity(k + 1);
        for (i, (codes, scale)) in self
            .codes
            .chunks_exact(self.dim)
            .zip(&self.scales)
            .enumerate()
        {
            let score = dot_i8(query, codes) / scale;
            if score < floor || (scored.len() >= k && score <= scored[scored.len() - 1].0) {
                continue;
            }
            let Some((session, seq)) = split_key(self.key(i)) else {
                continue;
            };
            if !admits(&EventId { session, seq })? {
                continue;
            }
            let at = scored.partition_point(|&(s, _)| s >= score);
            scored.insert(at, (score, i));
            scored.truncate(k);
        }
        if fault::active(Fault::VectorsUnranked) {
            scored.sort_by_key(|&(_, i)| i);
        }
        Ok(scored
            .into_iter()
            .filter_map(|(score, i)| {
                split_key(self.key(i)).map(|(session, seq)| VectorHit {
                    id: EventId { session, seq },
                    score,
                })
            })
            .collect())
    }
}

impl VectorLane {
    /// The lane over `generation`'s keyspace; the cache is `db`'s, shared by generations.
    pub(crate) fn open(db: &Database, generation: &Keyspace) -> Result<VectorLane, ViewError> {
        let cache = db
            .keyspace("embed_cache", crate::ledger::keyspace_options)
            .map_err(ViewError::store)?;
        Ok(VectorLane {
            vectors: generation.clone(),
            cache,
        })
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
        for key in pending.deletes {
            writes.insert(queue_key(&key), None);
            writes.insert(tkey(Table::Vectors, &key), None);
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
            for (key, text, _) in &waiting {
                writes.insert(queue_key(key), Some(text.as_bytes().to_vec()));
                // Until the pass embeds the new text, the event has no vector: never
                // the old text's.
                if !fault::active(Fault::QueueKeepsOldVector) {
                    writes.insert(tkey(Table::Vectors, key), None);
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
        }
        Ok(needed)
    }

    /// How many texts wait for the embedding pass.
    pub(crate) fn queued(&self) -> Result<usize, ViewError> {
        let mut n = 0;
        for kv in self.vectors.prefix([QUEUED]) {
            kv.key().map_err(ViewError::store)?;
            n += 1;
        }
        Ok(n)
    }

    /// Up to `limit` queued texts, in key order.
    pub(crate) fn take(&self, limit: usize) -> Result<Batch, ViewError> {
        let mut items = Vec::new();
        for kv in self.vectors.prefix([QUEUED]).take(limit) {
            let (key, value) = kv.into_inner().map_err(ViewError::store)?;
            items.push((
                key[1..].to_vec(),
                String::from_utf8_lossy(&value).into_owned(),
            ));
        }
        Ok(Batch { items })
    }

    /// Write the vectors of `done` (embedded under `model`) whose queue entry still holds
    /// the text that was embedded; a text revised meanwhile stays queued with its new
    /// version. Every vector is cached either way. Returns how many left the queue.
    pub(crate) fn store(&self, model: &str, done: Embedded) -> Result<usize, ViewError> {
        let mut writes = Writes::new();
        let mut cache_writes = Writes::new();
        let mut stored = 0;
        for (key, text, v) in done.items {
            let bytes = to_bytes(&v);
            let qk = queue_key(&key);
            let current = self.vectors.get(&qk).map_err(ViewError::store)?;
            if current.as_ref().is_some_and(|c| **c == *text.as_bytes())
                || fault::active(Fault::PassIgnoresRevisions)
            {
                writes.insert(qk, None);
                writes.insert(tkey(Table::Vectors, &key), Some(quantize(&bytes)));
                stored += 1;
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

    /// The stored vectors, `within`'s only when given, read into memory in one pass: a
    /// one-shot search reads them while the model loads, so that only the arithmetic of
    /// [`Loaded::search`] waits for the query's vector.
    pub(crate) fn load(&self, within: Option<&SessionId>) -> Result<Loaded, ViewError> {
        let mut prefix = vec![Table::Vectors as u8];
        if let Some(session) = within {
            prefix.extend_from_slice(session.as_str().as_bytes());
            prefix.push(0);
        }
        let mut lane = Loaded::default();
        for kv in self.vectors.prefix(&prefix) {
            let (key, value) = kv.into_inner().map_err(ViewError::store)?;
            let Some((scale, codes)) = value.split_first_chunk::<4>() else {
                continue;
            };
            if lane.dim == 0 {
                lane.dim = codes.len();
            }
            // Every vector of a lane has its model's dimension; a stray one is no neighbour.
            if codes.len() != lane.dim {
                continue;
            }
            lane.keys.extend_from_slice(&key[1..]);
            lane.key_ends.push(lane.keys.len() as u32);
            lane.scales.push(f32::from_le_bytes(*scale));
            lane.codes.extend_from_slice(codes);
        }
        Ok(lane)
    }

    /// Every stored vector (quantized), by event: what
    /// the oracles compare with their model of the lane.
    #[cfg(test)]
    pub(crate) fn dump(&self) -> Result<Vec<(EventId, Vec<u8>)>, ViewError> {
        self.vectors
            .prefix([Table::Vectors as u8])
            .map(|kv| {
                let (key, value) = kv.into_inner().map_err(ViewError::store)?;
                let (session, seq) = split_key(&key[1..])
                    .ok_or_else(|| ViewError::Corrupt("a vector key is not an event key".into()))?;
                Ok((EventId { session, seq }, value.to_vec()))
            })
            .collect()
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
/// every single similarity use this one kernel, so they agree to the bit.
fn dot_i8(q: &[f32], codes: &[u8]) -> f32 {
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
        let mut lane = Loaded::default();
        let mut stored = Vec::new();
        for (k, id) in ids.iter().enumerate() {
            let q = quantize(&to_bytes(&vector(k)));
            lane.keys
                .extend_from_slice(&crate::ledger::event_key(&id.session, id.seq));
            lane.key_ends.push(lane.keys.len() as u32);
            lane.scales
                .push(f32::from_le_bytes(q[..4].try_into().unwrap()));
            lane.codes.extend_from_slice(&q[4..]);
            lane.dim = 16;
            stored.push(q);
        }
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
