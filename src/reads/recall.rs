//! Hybrid recall: BM25 over every searchable text and an embedding scan over the same
//! texts, fused by how likely the two scores together say the text is an answer.
//!
//! Raw scores do not compare: BM25 grows with the query's length and rarity, a cosine
//! lives in its own narrow band. So the keyword lane reports a strength (BM25 over what a
//! text holding every query word once would score: a text sharing only "the" with the
//! query is weak however many such texts there are), and the fusion turns (strength,
//! cosine) into the probability that the text answers the query, by a logistic model
//! fitted on the labelled queries of `bench/quality.sh`. Agreement counts, and a meaning far
//! off discounts a partial word match; but a text holding every word of the query keeps at
//! least what its words alone are worth, since identifiers and error codes are typed
//! verbatim and mean little to the model. Reciprocal-rank fusion, which this replaces, put
//! any text both lanes half-matched above the exact match of one.
//!
//! A hit must be at least as likely as a text found by meaning alone at the similarity
//! [`FLOOR`], so a query about nothing recorded finds nothing.

use serde::Serialize;
use std::collections::{HashMap, HashSet};

use crate::views::rows::{TextFilter, TextRow};
use crate::views::vectors::{Loaded, VectorHit};
use crate::views::{ModelSlot, ViewError, Views};
use crate::vocab::event::{Agent, EventId, Seq, SessionId};

/// The cosine below which a semantic hit is noise. Calibrated on `bench/quality.sh`: 99% of
/// the texts that answer its queries score above it, and the best hits of three in four of
/// its queries about things never recorded score below it (0.32 would turn away one answer
/// in a hundred more for one unrelated query in twelve; bench/README.md has the
/// distributions).
pub(crate) const FLOOR: f32 = 0.30;
/// Logistic models of "this text answers the query", fitted on `bench/quality.sh` (every
/// candidate of every labelled and unrelated query, labelled by whether it is in the
/// session the query is about). Refit when the model, the embedded texts or the keyword
/// scoring change. Both lanes: (keyword strength, cosine, intercept).
const JOINT_FIT: (f64, f64, f64) = (3.51, 18.31, -9.27);
/// One lane alone: (slope, intercept) over its own score.
const KEYWORD_FIT: (f64, f64) = (10.48, -4.77);
const SEMANTIC_FIT: (f64, f64) = (18.29, -8.26);
/// A keyword strength from which the text holds (nearly) every word of the query.
const WHOLE_MATCH: f32 = 0.7;
/// A keyword strength over this counts as this: a short text holding every word is no more
/// an answer than a long one that does.
const KEYWORD_CAP: f32 = 1.5;
/// The cosine assumed for a text the lane does not embed ("ok", "yes do it"): a typical
/// unrelated one.
const UNEMBEDDED: f32 = 0.15;
/// Each lane ranks at least this many candidates before fusion.
const POOL: usize = 50;

fn logistic(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// The probability a keyword strength alone gives.
fn keyword_likelihood(strength: f32) -> f64 {
    let (a, b) = KEYWORD_FIT;
    logistic(a * f64::from(strength.min(KEYWORD_CAP)) + b)
}

/// The probability a cosine similarity alone gives.
fn semantic_likelihood(similarity: f32) -> f64 {
    let (a, b) = SEMANTIC_FIT;
    logistic(a * f64::from(similarity) + b)
}

/// The probability a keyword strength and a cosine together give.
fn joint_likelihood(strength: f32, similarity: f32) -> f64 {
    let (a, b, c) = JOINT_FIT;
    logistic(a * f64::from(strength.min(KEYWORD_CAP)) + b * f64::from(similarity) + c)
}

/// Which lanes a search uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Lanes {
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
pub(crate) struct Query {
    pub(crate) words: String,
    /// Only texts this admits; applied inside each lane.
    pub(crate) filter: TextFilter,
    pub(crate) lanes: Lanes,
    /// Semantic hits below this cosine are dropped.
    pub(crate) floor: f32,
    pub(crate) limit: usize,
}

impl Query {
    /// How many candidates each lane hands fusion: enough that filtering and deduplication
    /// still leave `limit` hits.
    fn pool(&self) -> usize {
        (self.limit * 4).max(POOL)
    }
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
pub(crate) struct Hit {
    pub(crate) session: SessionId,
    /// The agent that ran the session, where its transcript says.
    pub(crate) agent: Option<Agent>,
    pub(crate) seq: Seq,
    #[serde(flatten)]
    pub(crate) row: TextRow,
    /// How likely the text answers the query, 0 to 1 (see the module documentation).
    pub(crate) score: f64,
    /// 1-based rank in each lane that found it.
    pub(crate) keyword_rank: Option<usize>,
    pub(crate) vector_rank: Option<usize>,
    /// The keyword lane's strength (BM25 over a full match's), where it matched.
    pub(crate) keyword_strength: Option<f32>,
    /// Cosine similarity to the query, where the text is embedded and the model ran.
    pub(crate) similarity: Option<f32>,
}

impl Hit {
    /// How sure the match is, in five steps, for a person to read.
    pub(crate) fn stars(&self) -> usize {
        ((self.score * 5.0).ceil() as usize).clamp(1, 5)
    }
}

/// Whether the semantic lane took part, and if not, why.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub(crate) enum Semantic {
    /// `queued`: texts not embedded yet (the embedding pass is behind), which only the
    /// keyword lane can find meanwhile.
    On {
        model: String,
        queued: usize,
        /// Which path embedded the query: the resident embedder or this process.
        embedder: crate::embed::resident::Served,
    },
    Off,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Recall {
    pub(crate) query: String,
    pub(crate) lanes: Lanes,
    pub(crate) semantic: Semantic,
    /// The similarity floor semantic hits had to clear.
    pub(crate) floor: f32,
    pub(crate) hits: Vec<Hit>,
    /// Where the time went, in milliseconds (the model load overlaps the rest: what is left
    /// of it shows as `model_wait_ms`).
    pub(crate) timings: Timings,
}

#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Timings {
    pub(crate) keyword_ms: f64,
    /// Reading the vector lane into memory (and counting what waits to be embedded).
    pub(crate) vector_load_ms: f64,
    /// Waiting for the model to finish loading, after everything else was done.
    pub(crate) model_wait_ms: f64,
    /// Embedding the query.
    pub(crate) embed_ms: f64,
    /// The scan, and the similarities of what only the keyword lane found.
    pub(crate) vector_ms: f64,
    pub(crate) fuse_ms: f64,
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
    /// Its text waits for the embedding pass: its meaning is not known yet.
    waiting: bool,
}

impl Candidate {
    /// How likely the text answers the query, from what the lanes that ran found; `None`
    /// when it is no candidate (found by meaning only, below the floor).
    fn likelihood(&self, floor: f32, lanes: Lanes, semantic: bool) -> Option<f64> {
        let words = self.keyword_strength.filter(|s| *s > 0.0);
        let meaning = self.similarity.filter(|s| *s >= floor);
        match (lanes, semantic) {
            (Lanes::Semantic, _) => meaning.map(semantic_likelihood),
            (Lanes::Keyword, _) | (Lanes::Both, false) => words.map(keyword_likelihood),
            // What the pass has not embedded yet is found by its words, as if the keyword
            // lane ran alone (the search says so), not taken for a text far from the query.
            (Lanes::Both, true) if self.waiting => words.map(keyword_likelihood),
            (Lanes::Both, true) => {
                if words.is_none() && meaning.is_none() {
                    return None;
                }
                let k = words.unwrap_or(0.0);
                let joint = joint_likelihood(k, self.similarity.unwrap_or(UNEMBEDDED));
                Some(if k >= WHOLE_MATCH {
                    joint.max(keyword_likelihood(k))
                } else {
                    joint
                })
            }
        }
    }
}

/// Run `q` against the lanes it asks for.
pub(crate) fn recall(views: &Views, model: &mut ModelSlot, q: &Query) -> Result<Recall, ViewError> {
    let pool = q.pool();
    let words = q.words.trim();
    let mut timings = Timings::default();
    let mut rows: HashMap<EventId, TextRow> = HashMap::new();
    let mut found: HashMap<EventId, Candidate> = HashMap::new();

    // The two lanes share nothing until fusion: when both run, the keyword search runs on
    // its own thread while this one loads the vectors, embeds the query and scans (at 1.29M
    // events a warm search went from 57.9 to 49.8 ms; bench/README). Alone, it runs here.
    let keyword_search = || {
        let started = std::time::Instant::now();
        let hits = views.keyword.search(words, &q.filter, pool);
        (hits, ms_since(started))
    };
    let wants_keyword = !words.is_empty() && q.lanes != Lanes::Semantic;
    let wants_scan = !words.is_empty() && q.lanes != Lanes::Keyword && views.model().is_some();
    let semantic = std::thread::scope(|scope| -> Result<Semantic, ViewError> {
        let beside = (wants_keyword && wants_scan).then(|| scope.spawn(keyword_search));
        let scanned = match wants_scan {
            true => scan(views, model, q, &mut rows, &mut timings)?,
            false => None,
        };
        let keyword = match beside {
            Some(thread) => Some(
                thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            ),
            None => wants_keyword.then(keyword_search),
        };
        if let Some((hits, ms)) = keyword {
            timings.keyword_ms = ms;
            for (rank, h) in hits?.into_iter().enumerate() {
                let c = found.entry(h.id).or_default();
                c.keyword_rank = Some(rank + 1);
                c.keyword_strength = Some(h.strength);
            }
        }
        let Some(Scanned {
            lane,
            query,
            hits,
            queued,
            on,
        }) = scanned
        else {
            return Ok(Semantic::Off);
        };
        let t = std::time::Instant::now();
        for (rank, h) in hits.into_iter().enumerate() {
            let c = found.entry(h.id).or_default();
            c.vector_rank = Some(rank + 1);
            c.similarity = Some(h.score);
        }
        // What the keyword lane found and the scan did not rank still has a similarity,
        // unless its text waits for the pass.
        for (id, c) in found.iter_mut() {
            if c.similarity.is_none() {
                c.similarity = lane.similarity(&query, id);
            }
            if c.similarity.is_none() && queued > 0 {
                c.waiting = views.vectors.is_queued(id)?;
            }
        }
        timings.vector_ms += ms_since(t);
        Ok(on)
    })?;

    let t = std::time::Instant::now();
    // With both lanes, a hit must be as likely as a text found by meaning alone at the
    // floor: a text sharing only common words with the query is no answer. One lane alone
    // returns what it found (words match or they do not; the scan applied the floor).
    let on = matches!(semantic, Semantic::On { .. });
    let least = if on && q.lanes == Lanes::Both {
        joint_likelihood(0.0, q.floor)
    } else {
        0.0
    };
    let mut order: Vec<(EventId, Candidate, f64)> = found
        .into_iter()
        .filter_map(|(id, c)| {
            let p = c.likelihood(q.floor, q.lanes, on)?;
            (p >= least || c.waiting).then_some((id, c, p))
        })
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
            agent: views.tables.session(&id.session)?.and_then(|r| r.agent),
            session: id.session,
            seq: id.seq,
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

/// What the vector lane's half of a search found: the lane as loaded (for the similarity of
/// what only the keyword lane finds), the query's vector, the scan's best and the search's
/// semantic state.
struct Scanned {
    lane: Loaded,
    query: Vec<f32>,
    hits: Vec<VectorHit>,
    queued: usize,
    on: Semantic,
}

/// The vector lane's half of a search: load the lane, embed the query once the model is in
/// hand, and scan, keeping in `rows` the rows the filter read. `None` when the views have no
/// model or no embedder answers (the search runs on words alone).
fn scan(
    views: &Views,
    model: &mut ModelSlot,
    q: &Query,
    rows: &mut HashMap<EventId, TextRow>,
    timings: &mut Timings,
) -> Result<Option<Scanned>, ViewError> {
    let Some(id) = views.model() else {
        return Ok(None);
    };
    let words = q.words.trim();
    // Everything that does not need the query's vector is done before waiting for the
    // model, which a one-shot search loads meanwhile (see `ModelSlot::prefetch`).
    let t = std::time::Instant::now();
    let lane = views.vectors.load(q.filter.session.as_ref())?;
    let queued = views.vectors.queued()?;
    timings.vector_load_ms = ms_since(t);
    let t = std::time::Instant::now();
    let embedder = model.get()?;
    timings.model_wait_ms = ms_since(t);
    let Some(embedder) = embedder else {
        return Ok(None);
    };
    let t = std::time::Instant::now();
    let query = embedder
        .embed(&[words])
        .map_err(ViewError::Embed)?
        .pop()
        .unwrap_or_default();
    timings.embed_ms = ms_since(t);
    let on = Semantic::On {
        model: id.to_string(),
        queued,
        embedder: embedder.served_by(),
    };
    let t = std::time::Instant::now();
    // The filter runs inside the scan: a row is read only for a vector that would enter the
    // pool, and kept for the answer.
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
    let hits = lane.search(&query, q.pool(), q.floor, &mut admits)?;
    timings.vector_ms = ms_since(t);
    Ok(Some(Scanned {
        lane,
        query,
        hits,
        queued,
        on,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(keyword_strength: Option<f32>, similarity: Option<f32>) -> Option<f64> {
        Candidate {
            keyword_strength,
            similarity,
            ..Default::default()
        }
        .likelihood(FLOOR, Lanes::Both, true)
    }

    fn least() -> f64 {
        joint_likelihood(0.0, FLOOR)
    }

    #[test]
    fn a_text_one_lane_is_sure_of_outranks_one_both_lanes_half_match() {
        let sure_meaning = both(None, Some(0.62)).unwrap();
        let sure_words = both(Some(1.0), Some(0.25)).unwrap();
        let half_both = both(Some(0.35), Some(0.40)).unwrap();
        assert!(sure_meaning > half_both, "{sure_meaning} {half_both}");
        assert!(sure_words > half_both, "{sure_words} {half_both}");
    }

    #[test]
    fn agreement_breaks_a_tie_between_equal_meanings() {
        let alone = both(None, Some(0.45)).unwrap();
        let with_words = both(Some(0.4), Some(0.45)).unwrap();
        assert!(with_words > alone);
    }

    #[test]
    fn every_word_of_an_identifier_counts_even_far_from_its_meaning() {
        // `search_products` in a text the model places far from the query.
        let p = both(Some(1.3), Some(0.05)).unwrap();
        assert!(p >= least(), "{p}");
        assert!(p >= keyword_likelihood(1.3) - 1e-12);
    }

    #[test]
    fn a_text_waiting_for_the_pass_is_judged_by_its_words_alone() {
        let waiting = Candidate {
            keyword_strength: Some(0.45),
            waiting: true,
            ..Default::default()
        };
        let p = waiting.likelihood(FLOOR, Lanes::Both, true).unwrap();
        assert_eq!(p, keyword_likelihood(0.45));
        // Taken for a far text instead, it would be no answer.
        assert!(both(Some(0.45), None).unwrap() < least());
    }

    #[test]
    fn a_common_word_shared_with_a_far_text_is_no_answer() {
        // "chess opening repertoire for black" against "black text on a near-black page".
        let p = both(Some(0.45), Some(0.13)).unwrap();
        assert!(p < least(), "{p}");
        // Meaning alone below the floor is no candidate at all.
        assert_eq!(both(None, Some(FLOOR - 0.01)), None);
        assert!(both(None, Some(FLOOR)).unwrap() >= least());
    }

    #[test]
    fn one_lane_alone_ranks_by_its_own_score() {
        let words = |s| {
            Candidate {
                keyword_strength: Some(s),
                ..Default::default()
            }
            .likelihood(FLOOR, Lanes::Keyword, false)
            .unwrap()
        };
        assert!(words(0.9) > words(0.5) && words(0.5) > words(0.1));
        let meaning = |s| {
            Candidate {
                similarity: Some(s),
                ..Default::default()
            }
            .likelihood(FLOOR, Lanes::Semantic, true)
        };
        assert!(meaning(0.6) > meaning(0.4));
        assert_eq!(meaning(0.2), None, "under the floor");
    }

    #[test]
    fn strength_shows_as_one_to_five_dots() {
        let hit = |score| Hit {
            session: SessionId("s".into()),
            agent: None,
            seq: crate::vocab::event::Seq(1),
            row: TextRow {
                kind: crate::views::rows::TextKind::User,
                ts_ms: 0,
                cited: true,
                text: "t".into(),
                subject: None,
                basis: None,
            },
            score,
            keyword_rank: None,
            vector_rank: None,
            keyword_strength: None,
            similarity: None,
        };
        assert_eq!(hit(0.01).stars(), 1);
        assert_eq!(hit(0.5).stars(), 3);
        assert_eq!(hit(0.99).stars(), 5);
        assert_eq!(hit(1.0).stars(), 5);
    }
}
