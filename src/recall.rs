//! Hybrid recall: BM25 over every searchable text and an embedding scan over the dense ones,
//! fused by reciprocal rank (k = 60, the value of the original RRF paper).

use serde::Serialize;
use std::collections::{HashMap, HashSet};

use crate::event::{EventId, SessionId};
use crate::views::rows::{TextKind, TextRow};
use crate::views::{ModelSlot, ViewError, Views};

pub const RRF_K: f64 = 60.0;

/// What to look for, and where.
#[derive(Clone, Debug, Default)]
pub struct Query {
    pub words: String,
    pub kind: Option<TextKind>,
    /// Only texts at or after this instant.
    pub since_ms: Option<i64>,
    /// Only this session (already resolved from a prefix).
    pub session: Option<SessionId>,
    /// Only observations about this subject.
    pub subject: Option<String>,
    pub limit: usize,
}

/// One recalled text with its disposition.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    pub session: SessionId,
    pub seq: u32,
    #[serde(flatten)]
    pub row: TextRow,
    /// The fused score: the sum over lanes of 1 / (60 + rank).
    pub score: f64,
    /// 1-based rank in each lane that found it.
    pub keyword_rank: Option<usize>,
    pub vector_rank: Option<usize>,
    /// Cosine similarity to the query, where the vector lane found it.
    pub similarity: Option<f32>,
}

/// Whether the semantic lane took part, and if not, why.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Semantic {
    /// `queued`: texts not embedded yet (the embedding pass is behind), which only the
    /// keyword lane can find meanwhile.
    On {
        model: String,
        queued: usize,
    },
    Off,
}

#[derive(Clone, Debug, Serialize)]
pub struct Recall {
    pub query: String,
    pub semantic: Semantic,
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

/// A fused score and the 1-based rank in each lane that found the text.
type Fused = (f64, Option<usize>, Option<usize>);

/// Run `q` against both lanes of `views`.
pub fn recall(views: &Views, model: &mut ModelSlot, q: &Query) -> Result<Recall, ViewError> {
    let pool = (q.limit * 4).max(50);
    let keep = |id: &EventId, row: &TextRow| {
        q.kind.is_none_or(|k| row.kind == k)
            && q.since_ms.is_none_or(|t| row.ts_ms >= t)
            && q.session.as_ref().is_none_or(|s| &id.session == s)
            && q.subject
                .as_ref()
                .is_none_or(|s| row.subject.as_ref() == Some(s))
    };
    let mut rows: HashMap<EventId, TextRow> = HashMap::new();
    let mut lane = |ids: Vec<EventId>| -> Result<Vec<EventId>, ViewError> {
        let mut out = Vec::new();
        for id in ids {
            let row = match rows.get(&id) {
                Some(r) => r.clone(),
                None => match views.tables.text(&id)? {
                    Some(r) => r,
                    None => continue,
                },
            };
            if keep(&id, &row) {
                rows.insert(id.clone(), row);
                out.push(id);
            }
        }
        Ok(out)
    };

    let mut timings = Timings::default();
    let started = std::time::Instant::now();
    let keyword_ids = if q.words.trim().is_empty() {
        Vec::new()
    } else {
        views
            .keyword
            .search(&q.words, pool)?
            .into_iter()
            .map(|h| h.id)
            .collect()
    };
    let keyword = lane(keyword_ids)?;
    timings.keyword_ms = ms_since(started);

    let (semantic, vector, similarity) = match (views.model(), q.words.trim().is_empty()) {
        (Some(id), false) => match model.get()? {
            Some(embedder) => {
                let t = std::time::Instant::now();
                let qv = embedder
                    .embed(&[q.words.as_str()])
                    .map_err(ViewError::Embed)?
                    .pop()
                    .unwrap_or_default();
                timings.embed_ms = ms_since(t);
                let t = std::time::Instant::now();
                let hits = views.vectors.search(&qv, pool)?;
                let sims: HashMap<EventId, f32> =
                    hits.iter().map(|h| (h.id.clone(), h.score)).collect();
                let ids = lane(hits.into_iter().map(|h| h.id).collect())?;
                timings.vector_ms = ms_since(t);
                (
                    Semantic::On {
                        model: id.to_string(),
                        queued: views.vectors.queued()?,
                    },
                    ids,
                    sims,
                )
            }
            None => (Semantic::Off, Vec::new(), HashMap::new()),
        },
        _ => (Semantic::Off, Vec::new(), HashMap::new()),
    };

    let t = std::time::Instant::now();
    let mut fused: HashMap<EventId, Fused> = HashMap::new();
    for (rank, id) in keyword.iter().enumerate() {
        let e = fused.entry(id.clone()).or_default();
        e.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
        e.1 = Some(rank + 1);
    }
    for (rank, id) in vector.iter().enumerate() {
        let e = fused.entry(id.clone()).or_default();
        e.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
        e.2 = Some(rank + 1);
    }
    let mut order: Vec<(EventId, Fused)> = fused.into_iter().collect();
    order.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));

    // The same words said twice in a session (a closing message the Stop hook also
    // recorded) are one hit.
    let mut seen: HashSet<(SessionId, String)> = HashSet::new();
    let mut hits = Vec::new();
    for (id, (score, kr, vr)) in order {
        let Some(row) = rows.remove(&id) else {
            continue;
        };
        if !seen.insert((id.session.clone(), row.text.clone())) {
            continue;
        }
        hits.push(Hit {
            similarity: similarity.get(&id).copied(),
            session: id.session,
            seq: id.seq.0,
            row,
            score,
            keyword_rank: kr,
            vector_rank: vr,
        });
        if hits.len() >= q.limit {
            break;
        }
    }
    timings.fuse_ms = ms_since(t);
    Ok(Recall {
        query: q.words.clone(),
        semantic,
        hits,
        timings,
    })
}
