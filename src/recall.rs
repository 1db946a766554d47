//! Hybrid recall: BM25 over every searchable text and an embedding scan over the embedded
//! ones, fused by strength.
//!
//! Each lane's score is turned into a strength comparable across queries: the keyword
//! lane's BM25 over what a text holding every query word once would score (so a text that
//! shares only "the" with the query is weak however many such texts there are), the
//! semantic lane's cosine rescaled between [`FLOOR`] and [`STRONG`]. A text's strength is
//! its better lane's, plus a little of the other's: agreement breaks ties, it never lifts a
//! middling text over a text one lane is sure of (reciprocal-rank fusion did, so a text both
//! lanes half-matched outranked the exact match of one). Semantic hits below [`FLOOR`] are
//! dropped, so a query about nothing recorded finds nothing.

use serde::Serialize;
use std::collections::{HashMap, HashSet};

use crate::event::{EventId, SessionId};
use crate::views::rows::{TextFilter, TextRow};
use crate::views::{ModelSlot, ViewError, Views};

/// The cosine below which a semantic hit is noise. Calibrated on `bench/quality.sh`: the
/// texts that answer a query score above it, the best hits of queries about things the
/// corpus never mentions score below it (see bench/README.md for the distributions).
pub const FLOOR: f32 = 0.30;
/// The cosine at which a semantic hit counts as certain (strength 1).
pub const STRONG: f32 = 0.70;
/// How much of its weaker lane a text found by both adds to its better lane's strength.
pub const AGREEMENT: f64 = 0.3;
/// Each lane ranks at least this many candidates before fusion.
const POOL: usize = 50;

/// Which lanes a search uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lanes {
    /// Both, fused (the semantic lane when the model is installed).
    #[default]
    Both,
    /// Words only (BM25).
    Keyword,
    /// Meaning only (the embedding scan); needs the model.
    Semantic,
}

/// What to look for, and where.
#[derive(Clone, Debug)]
pub struct Query {
    pub words: String,
    /// Only texts this admits; applied inside each lane.
    pub filter: TextFilter,
    pub lanes: Lanes,
    /// Semantic hits below this cosine are dropped.
    pub floor: f32,
    pub limit: usize,
}

impl Default for Query {
    fn default() -> Query {
        Query {
            words: String::new(),
            filter: TextFilter::default(),
            lanes: Lanes::Both,
            floor: FLOOR,
            limit: 12,
        }
    }
}

/// One recalled text with its disposition.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    pub session: SessionId,
    pub seq: u32,
    #[serde(flatten)]
    pub row: TextRow,
    /// The fused strength, 0 to about 1.3: the better lane's strength plus
    /// [`AGREEMENT`] times the other's.
    pub score: f64,
    /// 1-based rank in each lane that found it.
    pub keyword_rank: Option<usize>,
    pub vector_rank: Option<usize>,
    /// The keyword lane's strength (BM25 over a full match's), where it matched.
    pub keyword_strength: Option<f32>,
    /// Cosine similarity to the query, where the text is embedded and the model ran.
    pub similarity: Option<f32>,
}

impl Hit {
    /// How sure the match is, in five steps, for a person to read.
    pub fn stars(&self) -> usize {
        ((self.score.min(1.0) * 5.0).ceil() as usize).clamp(1, 5)
    }
}

/// Whether the semantic lane took part, and if not, why.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Semantic {
    On { model: String },
    Off,
}

#[derive(Clone, Debug, Serialize)]
pub struct Recall {
    pub query: String,
    pub lanes: Lanes,
    pub semantic: Semantic,
    /// The similarity floor semantic hits had to clear.
    pub floor: f32,
    pub hits: Vec<Hit>,
    /// Where the time went, in milliseconds (the model load is part of `embed_ms`).
    pub timings: Timings,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Timings {
    pub keyword_ms: f64,
    pub embed_ms: f64,
    pub vector_ms: f64,
    pub fuse_ms: f64,
}

fn ms_since(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// What fusion knows of one candidate.
#[derive(Default)]
struct Candidate {
    keyword_rank: Option<usize>,
    vector_rank: Option<usize>,
    keyword_strength: Option<f32>,
    similarity: Option<f32>,
}

impl Candidate {
    /// The fused strength; see the module documentation.
    fn strength(&self, floor: f32) -> f64 {
        let k = f64::from(self.keyword_strength.unwrap_or(0.0)).min(1.0);
        let v = self.similarity.map_or(0.0, |s| semantic_strength(s, floor));
        k.max(v) + AGREEMENT * k.min(v)
    }
}

/// A cosine as a strength: 0 at the floor, 1 at [`STRONG`] and above.
fn semantic_strength(similarity: f32, floor: f32) -> f64 {
    if similarity < floor {
        return 0.0;
    }
    let span = (STRONG - floor).max(0.05);
    f64::from((similarity - floor) / span).clamp(0.0, 1.0)
}

/// Run `q` against the lanes it asks for.
pub fn recall(views: &Views, model: &mut ModelSlot, q: &Query) -> Result<Recall, ViewError> {
    let pool = (q.limit * 4).max(POOL);
    let words = q.words.trim();
    let mut timings = Timings::default();
    let mut rows: HashMap<EventId, TextRow> = HashMap::new();
    let mut found: HashMap<EventId, Candidate> = HashMap::new();

    if !words.is_empty() && q.lanes != Lanes::Semantic {
        let started = std::time::Instant::now();
        for (rank, h) in views
            .keyword
            .search(words, &q.filter, pool)?
            .into_iter()
            .enumerate()
        {
            let c = found.entry(h.id).or_default();
            c.keyword_rank = Some(rank + 1);
            c.keyword_strength = Some(h.strength);
        }
        timings.keyword_ms = ms_since(started);
    }

    let mut semantic = Semantic::Off;
    if let (Some(id), false, true) = (views.model(), words.is_empty(), q.lanes != Lanes::Keyword)
        && let Some(embedder) = model.get()?
    {
        semantic = Semantic::On {
            model: id.to_string(),
        };
        let t = std::time::Instant::now();
        let qv = embedder
            .embed(&[words])
            .map_err(ViewError::Embed)?
            .pop()
            .unwrap_or_default();
        timings.embed_ms = ms_since(t);
        let t = std::time::Instant::now();
        // The filter runs inside the scan: a row is read only for a vector that would
        // enter the pool, and kept for the answer.
        let mut admits = |id: &EventId| -> Result<bool, ViewError> {
            if q.filter.is_open() {
                return Ok(true);
            }
            Ok(match views.tables.text(id)? {
                Some(row) if q.filter.admits(id, &row) => {
                    rows.insert(id.clone(), row);
                    true
                }
                _ => false,
            })
        };
        let hits =
            views
                .vectors
                .search(&qv, pool, q.floor, q.filter.session.as_ref(), &mut admits)?;
        for (rank, h) in hits.into_iter().enumerate() {
            let c = found.entry(h.id).or_default();
            c.vector_rank = Some(rank + 1);
            c.similarity = Some(h.score);
        }
        // What the keyword lane found and the scan did not rank still has a similarity.
        for (id, c) in found.iter_mut() {
            if c.similarity.is_none() {
                c.similarity = views.vectors.similarity(&qv, id)?;
            }
        }
        timings.vector_ms = ms_since(t);
    }

    let t = std::time::Instant::now();
    let mut order: Vec<(EventId, Candidate, f64)> = found
        .into_iter()
        .map(|(id, c)| {
            let s = c.strength(q.floor);
            (id, c, s)
        })
        .filter(|(_, _, s)| *s > 0.0)
        .collect();
    order.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));

    // The same words said twice in a session (a closing message the Stop hook also
    // recorded) are one hit.
    let mut seen: HashSet<(SessionId, String)> = HashSet::new();
    let mut hits = Vec::new();
    for (id, c, score) in order {
        let row = match rows.remove(&id) {
            Some(r) => r,
            None => match views.tables.text(&id)? {
                Some(r) => r,
                None => continue,
            },
        };
        if !q.filter.admits(&id, &row) || !seen.insert((id.session.clone(), row.text.clone())) {
            continue;
        }
        hits.push(Hit {
            session: id.session,
            seq: id.seq.0,
            row,
            score,
            keyword_rank: c.keyword_rank,
            vector_rank: c.vector_rank,
            keyword_strength: c.keyword_strength,
            similarity: c.similarity,
        });
        if hits.len() >= q.limit {
            break;
        }
    }
    timings.fuse_ms = ms_since(t);
    Ok(Recall {
        query: q.words.clone(),
        lanes: q.lanes,
        semantic,
        floor: q.floor,
        hits,
        timings,
    })
}
