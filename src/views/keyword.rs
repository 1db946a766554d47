//! The keyword lane: a BM25 index (tantivy) over the searchable texts of the ledger.
//!
//! One document per searchable event: its ledger key (`id`, indexed and stored, so a hit maps
//! back to its [`EventId`] and a replaced event can be deleted by term), its kind, its
//! timestamp, and its text. The text is indexed (positions for phrases; English stemming
//! for prose, none for what was run and printed) but never stored: the texts view hydrates
//! it, and the index stays small.
//!
//! The index is a view like any other: it records in each commit's payload the last ledger
//! change (LSN) it covers, so a process that opens it behind the feed knows where to resume.
//! Changes made since the last commit are discarded if the process ends without committing,
//! which is exactly what resuming from [`KeywordIndex::applied_lsn`] expects.
//!
//! Writing is lazy: a read-only process (one-shot recall) opens only the segment readers,
//! which is a few memory maps. The writer, with its arena and threads, exists from the
//! first [`KeywordIndex::retract`]/[`KeywordIndex::add`] until the next commit, which drops it.
//!
//! Merges: one commit per capture adds one small segment each time; a log merge policy folds
//! them into bigger ones, eight at a level (see [`MERGE_MIN_LAYER_DOCS`]). Merges run on a
//! background pool that a one-shot process would kill at exit (tantivy calls that safe: the
//! half-written files are collected later), so left alone the merges would never finish and
//! segments would pile up. So the commit waits for the merges it started
//! (`wait_merging_threads`): usually nothing, every eighth commit or so a merge of small
//! segments (tens of ms), rarely a merge of a higher level. That time is paid by the writer,
//! which holds the ledger lock anyway, never by a reader.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::directory::MmapDirectory;
use tantivy::indexer::{IndexWriterOptions, LogMergePolicy};
use tantivy::query::{
    BooleanQuery, ConstScoreQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery, TermSetQuery,
};
use tantivy::schema::{
    BytesOptions, Field, IndexRecordOption, NumericOptions, STORED, STRING, Schema,
    TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocAddress, Index, IndexBuilder, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument,
    TantivyError, Term,
};

use super::fault::{self, Fault};
use super::rows::TextFilter;
use crate::ledger::{decode_event_key, event_key};
use crate::vocab::event::EventId;

/// Tantivy's built-in English analyzer: split on non-alphanumerics, drop tokens over 40
/// bytes (base64, hashes glued to paths), lowercase, Snowball English stemmer. Built in, so
/// every process that opens the index has it without registering anything.
const ANALYZER: &str = "en_stem";

/// The same without the stemmer, for what the agent ran and what it printed (see
/// [`Fields::ran`]). Also built in.
const RAN_ANALYZER: &str = "default";

/// The writer's indexing arena. Large enough that a full rebuild of a typical ledger flushes
/// a handful of segments, small enough for a hook process.
const WRITER_MEMORY: usize = 32 << 20;

/// Segments below this many documents all count as one size for the log merge policy, so
/// every eighth small segment triggers a merge of that bottom layer. Tantivy's default
/// (10,000) lets the tiny segments of per-capture commits join the layer of a ~15k-doc
/// segment, rewriting it every seventh commit (150-550 ms on a 2-core machine); at 1,000 the
/// bottom layer stays small (merges of tens of ms), for about twice the segments a reader
/// opens (15 rather than 8 after 300 captures on a 44k-event index; +0.5 ms per search).
const MERGE_MIN_LAYER_DOCS: u32 = 1_000;

/// The kind of a searchable text. Defined with the searchable rows (`views::rows`); the index
/// stores its tag.
pub(crate) use super::rows::TextKind;

/// What the index takes for one event.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TextDoc<'a> {
    pub(crate) kind: TextKind,
    pub(crate) ts_ms: i64,
    pub(crate) text: &'a str,
    /// Observations only: what they are about (so `--subject` filters inside the index).
    pub(crate) subject: Option<&'a str>,
}

/// One search result. `kind` and `ts_ms` come along from the stored fields so that filters
/// (`--kind`, `--since`) need no hydration.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hit {
    pub(crate) id: EventId,
    pub(crate) score: f32,
    /// The score over what a document of average length holding each query word once
    /// would score: about 1 for a text that has every word of the query, near 0 for one
    /// that shares only its common words ("the", "fix"). Comparable across queries, where
    /// BM25 itself is not.
    pub(crate) strength: f32,
    pub(crate) kind: TextKind,
    pub(crate) ts_ms: i64,
}

/// Where an index lives, for messages.
#[derive(Clone, Debug)]
pub(crate) enum Place {
    Dir(PathBuf),
    #[cfg(test)]
    Memory,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Dir(dir) => write!(f, "at {}", dir.display()),
            #[cfg(test)]
            Place::Memory => f.write_str("in memory"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum KeywordError {
    #[error("cannot create the keyword index directory {}: {source}", dir.display())]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the keyword index {place} was built by a different peat (its fields differ); \
         delete that directory and peat rebuilds it from the ledger"
    )]
    SchemaMismatch { place: Place },
    #[error(
        "the keyword index {place} is being written by another process; \
         retry when it has finished"
    )]
    Busy { place: Place },
    #[error(
        "the keyword index {place} records {payload:?} as its ledger position, which is not a \
         number; delete that directory and peat rebuilds it from the ledger"
    )]
    BadPayload { place: Place, payload: String },
    #[error(
        "the keyword index {place} holds a document id that is not an event key; delete that \
         directory and peat rebuilds it from the ledger"
    )]
    BadDocument { place: Place },
    #[error(
        "the keyword index {place} covers the ledger up to change {applied}, not back to {lsn}"
    )]
    LsnRegressed {
        place: Place,
        applied: u64,
        lsn: u64,
    },
    #[error("the keyword index {place} could not {action}: {source}")]
    Tantivy {
        place: Place,
        action: &'static str,
        source: TantivyError,
    },
}

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    kind: Field,
    ts: Field,
    /// The words of the prose kinds, stemmed (a question in other forms of them finds them).
    text: Field,
    /// What was run and printed (tool calls, outputs), unstemmed: commands, paths and logs
    /// are matched by their exact words, which a stemmer only blurs, and stemming them was
    /// most of what indexing a capture cost (outputs are three quarters of the words). A
    /// search asks one field: a kind is either prose or not (see [`TextKind::is_prose`]).
    ran: Field,
    /// The session and the subject are indexed, never stored: filters match them as terms.
    session: Field,
    subject: Field,
}

impl Fields {
    /// The field that holds the words of texts of `kind`.
    fn words(&self, kind: TextKind) -> Field {
        if kind.is_prose() { self.text } else { self.ran }
    }

    fn schema() -> (Schema, Fields) {
        let mut b = Schema::builder();
        let id = b.add_bytes_field("id", BytesOptions::default().set_indexed().set_stored());
        let kind = b.add_text_field("kind", STRING | STORED);
        let ts = b.add_i64_field("ts", NumericOptions::default().set_fast().set_stored());
        let words = |analyzer| {
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(analyzer)
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            )
        };
        let text = b.add_text_field("text", words(ANALYZER));
        let ran = b.add_text_field("ran", words(RAN_ANALYZER));
        let session = b.add_text_field("session", STRING);
        let subject = b.add_text_field("subject", STRING);
        (
            b.build(),
            Fields {
                id,
                kind,
                ts,
                text,
                ran,
                session,
                subject,
            },
        )
    }
}

/// The keyword index. See the module documentation for its life cycle.
pub(crate) struct KeywordIndex {
    index: Index,
    reader: IndexReader,
    writer: Option<IndexWriter>,
    fields: Fields,
    applied: u64,
    place: Place,
}

impl KeywordIndex {
    /// Opens the index in `dir`, creating it (and the directory) if there is none yet.
    pub(crate) fn open(dir: &Path) -> Result<KeywordIndex, KeywordError> {
        let place = Place::Dir(dir.to_path_buf());
        std::fs::create_dir_all(dir).map_err(|source| KeywordError::CreateDir {
            dir: dir.to_path_buf(),
            source,
        })?;
        let mmap = MmapDirectory::open(dir).map_err(|e| KeywordError::Tantivy {
            place: place.clone(),
            action: "open its directory",
            source: e.into(),
        })?;
        let (schema, fields) = Fields::schema();
        let index = IndexBuilder::new()
            .schema(schema)
            .open_or_create(mmap)
            .map_err(|e| match e {
                TantivyError::SchemaError(_) => KeywordError::SchemaMismatch {
                    place: place.clone(),
                },
                source => KeywordError::Tantivy {
                    place: place.clone(),
                    action: "open",
                    source,
                },
            })?;
        KeywordIndex::with_index(index, fields, place)
    }

    #[cfg(test)]
    /// A scratch index that lives in memory only, for the tests of the lane itself.
    pub(crate) fn in_ram() -> Result<KeywordIndex, KeywordError> {
        let (schema, fields) = Fields::schema();
        let index = IndexBuilder::new()
            .schema(schema)
            .create_in_ram()
            .map_err(|source| KeywordError::Tantivy {
                place: Place::Memory,
                action: "be created",
                source,
            })?;
        KeywordIndex::with_index(index, fields, Place::Memory)
    }

    fn with_index(
        index: Index,
        fields: Fields,
        place: Place,
    ) -> Result<KeywordIndex, KeywordError> {
        let metas = index.load_metas().map_err(|source| KeywordError::Tantivy {
            place: place.clone(),
            action: "read its commit metadata",
            source,
        })?;
        let applied = match metas.payload {
            None => 0,
            Some(p) => p.trim().parse().map_err(|_| KeywordError::BadPayload {
                place: place.clone(),
                payload: p.clone(),
            })?,
        };
        // Manual reload: the default policy starts a thread that watches meta.json.
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|source| KeywordError::Tantivy {
                place: place.clone(),
                action: "open its segments",
                source,
            })?;
        Ok(KeywordIndex {
            index,
            reader,
            writer: None,
            fields,
            applied,
            place,
        })
    }

    /// The ledger change (LSN) the last commit covers; 0 for a new index.
    pub(crate) fn applied_lsn(&self) -> u64 {
        self.applied
    }

    #[cfg(test)]
    /// Live documents as of the last commit.
    pub(crate) fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cfg(test)]
    /// Searchable segments as of the last commit (for diagnostics).
    pub(crate) fn segments(&self) -> usize {
        self.reader.searcher().segment_readers().len()
    }

    /// Removes the event's document, if there is one, at the next commit.
    pub(crate) fn retract(&mut self, id: &EventId) -> Result<(), KeywordError> {
        let term = self.id_term(id);
        self.writer()?.delete_term(term);
        Ok(())
    }

    /// Indexes the event's text at the next commit. A document the event had before stays
    /// unless it is retracted first, as the fold does for every change with an old version.
    /// No delete by id here: a new event (nearly every one an import folds) has no document
    /// to delete, and each delete is held as a scored query until the commit, then looked
    /// up in every segment.
    pub(crate) fn add(&mut self, id: &EventId, doc: &TextDoc<'_>) -> Result<(), KeywordError> {
        let f = self.fields;
        let key = event_key(&id.session, id.seq);
        let mut d = TantivyDocument::new();
        d.add_bytes(f.id, &key);
        d.add_text(f.kind, doc.kind.tag());
        d.add_i64(f.ts, doc.ts_ms);
        d.add_text(f.words(doc.kind), doc.text);
        d.add_text(f.session, id.session.as_str());
        if let Some(subject) = doc.subject {
            d.add_text(f.subject, subject);
        }
        let place = self.place.clone();
        self.writer()?
            .add_document(d)
            .map_err(|source| KeywordError::Tantivy {
                place,
                action: "index a document",
                source,
            })?;
        Ok(())
    }

    /// Makes every change since the last commit durable and visible, recording `lsn` as the
    /// ledger change the index now covers. With no pending change and the same `lsn`, it does
    /// nothing; with no pending change and a newer `lsn`, it records the position.
    ///
    /// On error the pending changes are gone and [`KeywordIndex::applied_lsn`] still names the
    /// last durable position, which is where the caller resumes. (A merge that fails after the
    /// commit is reported too, but the commit stands and `applied_lsn` says so.)
    pub(crate) fn commit(&mut self, lsn: u64) -> Result<(), KeywordError> {
        if lsn < self.applied {
            return Err(KeywordError::LsnRegressed {
                place: self.place.clone(),
                applied: self.applied,
                lsn,
            });
        }
        if self.writer.is_none() && lsn == self.applied {
            return Ok(());
        }
        let mut writer = match self.writer.take() {
            Some(w) => w,
            None => self.new_writer()?,
        };
        let err = |action, source| KeywordError::Tantivy {
            place: self.place.clone(),
            action,
            source,
        };
        let mut prepared = writer
            .prepare_commit()
            .map_err(|e| err("prepare a commit", e))?;
        prepared.set_payload(&lsn.to_string());
        prepared.commit().map_err(|e| err("commit", e))?;
        self.applied = lsn;
        // The commit is durable; now let the merges it started finish, or a short-lived
        // process would kill them at exit and small segments would pile up.
        let merged = writer.wait_merging_threads();
        self.reader
            .reload()
            .map_err(|e| err("reload its segments", e))?;
        merged.map_err(|e| err("merge segments after a commit", e))
    }

    /// Merges every segment into one and deletes the files no commit needs, so no retracted
    /// document's terms are left on disk (`peat redact`).
    pub(crate) fn merge_all(&mut self) -> Result<(), KeywordError> {
        let place = self.place.clone();
        let err = |action, source| KeywordError::Tantivy {
            place: place.clone(),
            action,
            source,
        };
        let ids = self
            .index
            .searchable_segment_ids()
            .map_err(|e| err("list its segments", e))?;
        let mut writer = match self.writer.take() {
            Some(w) => w,
            None => self.new_writer()?,
        };
        if !ids.is_empty() {
            writer
                .merge(&ids)
                .wait()
                .map_err(|e| err("merge its segments", e))?;
        }
        self.reader
            .reload()
            .map_err(|e| err("reload its segments", e))?;
        writer
            .garbage_collect_files()
            .wait()
            .map_err(|e| err("remove unused files", e))?;
        writer
            .wait_merging_threads()
            .map_err(|e| err("finish merging", e))
    }

    /// The best `limit` documents for `query` by BM25, best first; equal scores in event id
    /// order. Words are matched after stemming (prose kinds), any of them may match (more matches score
    /// higher), and a run in double quotes must match as a phrase. Nothing in the query is
    /// syntax otherwise: `-`, `:`, `(`, `*` are just separators.
    ///
    /// Only documents `filter` admits are ranked: a filtered search returns its best
    /// `limit` matches however far down the unfiltered ranking they sit.
    pub(crate) fn search(
        &self,
        query: &str,
        filter: &TextFilter,
        limit: usize,
    ) -> Result<Vec<Hit>, KeywordError> {
        let searcher = self.reader.searcher();
        let live = usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX);
        // More than the live documents can never match (and tantivy sizes its heap by it).
        let limit = limit.min(live);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let field = self.fields.words(filter.kind.unwrap_or(TextKind::Said));
        let Some((query, terms)) = self.build_query(field, query)? else {
            return Ok(Vec::new());
        };
        let query = self.filtered(query, filter);
        let ideal = self.ideal_score(&searcher, &terms)?;
        let err = |action, source| KeywordError::Tantivy {
            place: self.place.clone(),
            action,
            source,
        };
        // Tantivy breaks ties by segment and doc id, which merges reshuffle. Fetch until the
        // cut falls strictly between two scores (or everything is in hand), so every document
        // tied with the last one kept is here, then order by (score desc, id asc) ourselves.
        let mut fetch = limit.saturating_add(1).min(live);
        let mut top = loop {
            let top = searcher
                .search(&query, &TopDocs::with_limit(fetch).order_by_score())
                .map_err(|e| err("search", e))?;
            if top.len() < fetch || fetch == live || top[fetch - 1].0 < top[limit - 1].0 {
                break top;
            }
            fetch = fetch.saturating_mul(2).min(live);
        };
        if let Some(&(cut, _)) = top.get(limit - 1) {
            top.retain(|&(score, _)| score >= cut);
        }
        let mut hits = top
            .into_iter()
            .map(|(score, addr)| self.hit(&searcher, score, addr))
            .collect::<Result<Vec<_>, _>>()?;
        for h in &mut hits {
            h.strength = if ideal > 0.0 { h.score / ideal } else { 0.0 };
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        if fault::active(Fault::KeywordUnranked) {
            hits.sort_by(|a, b| a.id.cmp(&b.id));
        }
        hits.truncate(limit);
        Ok(hits)
    }

    fn hit(
        &self,
        searcher: &tantivy::Searcher,
        score: f32,
        addr: DocAddress,
    ) -> Result<Hit, KeywordError> {
        let doc: TantivyDocument = searcher.doc(addr).map_err(|source| KeywordError::Tantivy {
            place: self.place.clone(),
            action: "read a stored document",
            source,
        })?;
        let bad = || KeywordError::BadDocument {
            place: self.place.clone(),
        };
        let key = doc
            .get_first(self.fields.id)
            .and_then(|v| v.as_bytes())
            .ok_or_else(bad)?;
        let id = decode_event_key(key).ok_or_else(bad)?;
        let kind = doc
            .get_first(self.fields.kind)
            .and_then(|v| v.as_str())
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        let ts_ms = doc
            .get_first(self.fields.ts)
            .and_then(|v| v.as_i64())
            .ok_or_else(bad)?;
        Ok(Hit {
            id,
            score,
            strength: 0.0,
            kind,
            ts_ms,
        })
    }

    /// BM25's score for a document of average length holding each of `terms` once: the
    /// sum of their inverse document frequencies (tantivy's formula).
    fn ideal_score(
        &self,
        searcher: &tantivy::Searcher,
        terms: &[Term],
    ) -> Result<f32, KeywordError> {
        let docs = searcher.num_docs();
        let mut sum = 0.0;
        for t in terms {
            let freq = searcher
                .doc_freq(t)
                .map_err(|source| KeywordError::Tantivy {
                    place: self.place.clone(),
                    action: "count a word's documents",
                    source,
                })?
                .min(docs);
            sum += (1.0 + ((docs - freq) as f32 + 0.5) / (freq as f32 + 0.5)).ln();
        }
        Ok(sum)
    }

    /// `query` restricted to what `filter` admits. The filter clauses score nothing, so
    /// the ranking is the words' alone.
    fn filtered(&self, query: BooleanQuery, filter: &TextFilter) -> BooleanQuery {
        let f = self.fields;
        let mut must: Vec<Box<dyn Query>> = Vec::new();
        let term = |field, value: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_text(field, value),
                IndexRecordOption::Basic,
            ))
        };
        // Without a kind the words are asked of the prose field alone, where no tool call or
        // output is indexed: no clause needs to exclude them.
        if let Some(kind) = filter.kind {
            must.push(term(f.kind, kind.tag()));
        }
        if let Some(session) = &filter.session {
            must.push(term(f.session, session.as_str()));
        }
        if let Some(only) = &filter.sessions {
            must.push(Box::new(TermSetQuery::new(
                only.iter()
                    .map(|s| Term::from_field_text(f.session, s.as_str())),
            )));
        }
        if let Some(subject) = &filter.subject {
            must.push(term(f.subject, subject));
        }
        if filter.since_ms.is_some() || filter.until_ms.is_some() {
            let bound = |t: Option<i64>| match t {
                Some(t) => std::ops::Bound::Included(Term::from_field_i64(f.ts, t)),
                None => std::ops::Bound::Unbounded,
            };
            must.push(Box::new(RangeQuery::new(
                bound(filter.since_ms),
                bound(filter.until_ms),
            )));
        }
        if must.is_empty() {
            return query;
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(query))];
        clauses.extend(must.into_iter().map(|q| {
            (
                Occur::Must,
                Box::new(ConstScoreQuery::new(q, 0.0)) as Box<dyn Query>,
            )
        }));
        BooleanQuery::new(clauses)
    }

    /// Every live document, as its event and the kind and time it was indexed with: what
    /// the oracles compare with their model of the lane.
    #[cfg(test)]
    pub(crate) fn dump(&self) -> Result<Vec<Hit>, KeywordError> {
        let searcher = self.reader.searcher();
        let addrs = searcher
            .search(
                &tantivy::query::AllQuery,
                &tantivy::collector::DocSetCollector,
            )
            .map_err(|source| KeywordError::Tantivy {
                place: self.place.clone(),
                action: "list its documents",
                source,
            })?;
        let mut hits = addrs
            .into_iter()
            .map(|addr| self.hit(&searcher, 0.0, addr))
            .collect::<Result<Vec<_>, _>>()?;
        hits.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(hits)
    }

    /// The query for the user's words; `None` when they hold no searchable token.
    /// With it, every distinct term it holds (phrases' too).
    fn build_query(
        &self,
        field: Field,
        query: &str,
    ) -> Result<Option<(BooleanQuery, Vec<Term>)>, KeywordError> {
        let mut analyzer: TextAnalyzer =
            self.index
                .tokenizer_for_field(field)
                .map_err(|source| KeywordError::Tantivy {
                    place: self.place.clone(),
                    action: "find its text analyzer",
                    source,
                })?;
        let mut seen_terms = HashSet::new();
        let mut seen_phrases = HashSet::new();
        let mut all_terms = Vec::new();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (quoted, part) in split_quotes(query) {
            let mut tokens: Vec<(usize, Term)> = Vec::new();
            let mut stream = analyzer.token_stream(part);
            while let Some(t) = stream.next() {
                tokens.push((t.position, Term::from_field_text(field, &t.text)));
            }
            if quoted && tokens.len() > 1 {
                let words: Vec<Term> = tokens.iter().map(|(_, t)| t.clone()).collect();
                if seen_phrases.insert(words) {
                    for (_, t) in &tokens {
                        if !all_terms.contains(t) {
                            all_terms.push(t.clone());
                        }
                    }
                    let first = tokens[0].0;
                    let offsets = tokens.into_iter().map(|(p, t)| (p - first, t)).collect();
                    clauses.push((
                        Occur::Should,
                        Box::new(PhraseQuery::new_with_offset(offsets)),
                    ));
                }
                continue;
            }
            // BM25 over a bag of words: a repeated word counts once.
            for (_, term) in tokens {
                if !all_terms.contains(&term) {
                    all_terms.push(term.clone());
                }
                if seen_terms.insert(term.clone()) {
                    clauses.push((
                        Occur::Should,
                        Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)),
                    ));
                }
            }
        }
        Ok((!clauses.is_empty()).then(|| (BooleanQuery::new(clauses), all_terms)))
    }

    fn id_term(&self, id: &EventId) -> Term {
        Term::from_field_bytes(self.fields.id, &event_key(&id.session, id.seq))
    }

    /// The writer, created on first use: one indexing thread, one merge thread.
    fn writer(&mut self) -> Result<&mut IndexWriter, KeywordError> {
        let writer = match self.writer.take() {
            Some(w) => w,
            None => self.new_writer()?,
        };
        Ok(self.writer.insert(writer))
    }

    /// A new writer: one indexing thread, one merge thread, the merge policy set.
    fn new_writer(&self) -> Result<IndexWriter, KeywordError> {
        let options = IndexWriterOptions::builder()
            .memory_budget_per_thread(WRITER_MEMORY)
            .num_worker_threads(1)
            .num_merge_threads(1)
            .build();
        let writer = self
            .index
            .writer_with_options(options)
            .map_err(|e| match e {
                TantivyError::LockFailure(..) => KeywordError::Busy {
                    place: self.place.clone(),
                },
                source => KeywordError::Tantivy {
                    place: self.place.clone(),
                    action: "start a writer",
                    source,
                },
            })?;
        let mut policy = LogMergePolicy::default();
        policy.set_min_layer_size(MERGE_MIN_LAYER_DOCS);
        writer.set_merge_policy(Box::new(policy));
        Ok(writer)
    }
}

/// Splits a query into runs outside and inside double quotes. An unmatched quote is only a
/// separator: `say "hi` searches `say` and `hi` as words.
fn split_quotes(query: &str) -> Vec<(bool, &str)> {
    let mut parts: Vec<(bool, &str)> = Vec::new();
    let mut rest = query;
    loop {
        let Some(open) = rest.find('"') else {
            parts.push((false, rest));
            break;
        };
        let after = &rest[open + 1..];
        let Some(close) = after.find('"') else {
            parts.push((false, rest));
            break;
        };
        parts.push((false, &rest[..open]));
        parts.push((true, &after[..close]));
        rest = &after[close + 1..];
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::event::{Seq, SessionId};

    /// Search with no filter.
    pub(super) trait Unfiltered {
        fn find(&self, query: &str, limit: usize) -> Result<Vec<Hit>, KeywordError>;
    }

    impl Unfiltered for KeywordIndex {
        fn find(&self, query: &str, limit: usize) -> Result<Vec<Hit>, KeywordError> {
            self.search(query, &TextFilter::default(), limit)
        }
    }

    fn id(session: &str, seq: u32) -> EventId {
        EventId {
            session: SessionId(session.to_string()),
            seq: Seq(seq),
        }
    }

    fn doc(kind: TextKind, text: &str) -> TextDoc<'_> {
        TextDoc {
            kind,
            ts_ms: 1_750_000_000_000,
            text,
            subject: None,
        }
    }

    fn ids(hits: &[Hit]) -> Vec<EventId> {
        hits.iter().map(|h| h.id.clone()).collect()
    }

    fn add_all(ix: &mut KeywordIndex, docs: &[(EventId, &str)]) {
        for (i, text) in docs {
            ix.add(i, &doc(TextKind::Said, text)).unwrap();
        }
    }

    #[test]
    fn prose_is_matched_by_its_stems_and_what_was_run_by_its_exact_words() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        let (said, ran, printed) = (id("s", 1), id("s", 2), id("s", 3));
        ix.add(&said, &doc(TextKind::Said, "the parser tests were failing"))
            .unwrap();
        ix.add(&ran, &doc(TextKind::Tool, "cargo tests --lib parser"))
            .unwrap();
        ix.add(&printed, &doc(TextKind::Output, "running 3 tests\nFAILED"))
            .unwrap();
        ix.commit(1).unwrap();
        let found = |query: &str, kind: Option<TextKind>| {
            let filter = TextFilter {
                kind,
                ..TextFilter::default()
            };
            ids(&ix.search(query, &filter, 10).unwrap())
        };
        assert_eq!(found("test failed", None), vec![said.clone()]);
        for (kind, event) in [(TextKind::Tool, &ran), (TextKind::Output, &printed)] {
            assert!(found("test", Some(kind)).is_empty(), "{kind}: unstemmed");
            assert_eq!(found("tests", Some(kind)), vec![event.clone()], "{kind}");
        }
        assert_eq!(found("\"3 tests\"", Some(TextKind::Output)), vec![printed]);
    }

    #[test]
    fn an_added_text_is_found_and_its_hit_maps_back_to_the_event() {
        let dir = tempfile::tempdir().unwrap();
        let mut ix = KeywordIndex::open(dir.path()).unwrap();
        let a = id("0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", 42);
        let b = id("0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", OBS_SEQ);
        ix.add(
            &a,
            &TextDoc {
                kind: TextKind::Final,
                ts_ms: 1_751_234_567_890,
                text: "Moved the ledger lock into its own module",
                subject: None,
            },
        )
        .unwrap();
        ix.add(
            &b,
            &doc(TextKind::Obs, "The hook must never block the prompt"),
        )
        .unwrap();
        assert!(ix.find("ledger", 10).unwrap().is_empty(), "uncommitted");
        ix.commit(7).unwrap();

        let hits = ix.find("ledger lock", 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].id, a);
        assert_eq!(hits[0].kind, TextKind::Final);
        assert_eq!(hits[0].ts_ms, 1_751_234_567_890);
        assert!(hits[0].score > 0.0);
        assert_eq!(ids(&ix.find("hook", 10).unwrap()), vec![b]);
        assert_eq!(ix.len(), 2);
    }

    const OBS_SEQ: u32 = crate::vocab::event::OBS_SEQ_BASE + 3;

    #[test]
    fn a_retracted_text_is_unfindable_also_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let gone = id("s1", 16);
        let kept = id("s1", 32);
        {
            let mut ix = KeywordIndex::open(dir.path()).unwrap();
            add_all(
                &mut ix,
                &[
                    (gone.clone(), "secret token leaked"),
                    (kept.clone(), "token rotated"),
                ],
            );
            ix.commit(1).unwrap();
            ix.retract(&gone).unwrap();
            ix.commit(2).unwrap();
            assert!(ix.find("secret", 10).unwrap().is_empty());
            assert_eq!(ids(&ix.find("token", 10).unwrap()), vec![kept.clone()]);
        }
        let ix = KeywordIndex::open(dir.path()).unwrap();
        assert!(ix.find("secret leaked", 10).unwrap().is_empty());
        assert_eq!(ids(&ix.find("token", 10).unwrap()), vec![kept]);
        assert_eq!(ix.len(), 1);
    }

    #[test]
    fn retract_then_add_in_one_commit_leaves_only_the_new_version() {
        let dir = tempfile::tempdir().unwrap();
        let e = id("s1", 5);
        let mut ix = KeywordIndex::open(dir.path()).unwrap();
        add_all(&mut ix, &[(e.clone(), "first draft about parsing")]);
        ix.commit(1).unwrap();

        ix.retract(&e).unwrap();
        ix.add(&e, &doc(TextKind::Said, "second draft about rendering"))
            .unwrap();
        ix.commit(2).unwrap();
        assert!(ix.find("parsing", 10).unwrap().is_empty());
        assert_eq!(ids(&ix.find("rendering", 10).unwrap()), vec![e.clone()]);
        assert_eq!(ids(&ix.find("draft", 10).unwrap()), vec![e.clone()]);
        assert_eq!(ix.len(), 1);

        // Within a single uncommitted batch too, and across a reopen.
        ix.retract(&e).unwrap();
        ix.add(&e, &doc(TextKind::Said, "third draft about caching"))
            .unwrap();
        ix.retract(&e).unwrap();
        ix.add(&e, &doc(TextKind::Said, "fourth draft about merging"))
            .unwrap();
        ix.commit(3).unwrap();
        drop(ix);
        let ix = KeywordIndex::open(dir.path()).unwrap();
        assert!(ix.find("parsing rendering caching", 10).unwrap().is_empty());
        assert_eq!(ids(&ix.find("draft", 10).unwrap()), vec![e]);
        assert_eq!(ix.len(), 1);
    }

    #[test]
    fn the_applied_lsn_persists_across_reopening() {
        let dir = tempfile::tempdir().unwrap();
        {
            let ix = KeywordIndex::open(dir.path()).unwrap();
            assert_eq!(ix.applied_lsn(), 0);
        }
        {
            let mut ix = KeywordIndex::open(dir.path()).unwrap();
            add_all(&mut ix, &[(id("s", 1), "one")]);
            ix.commit(41).unwrap();
            assert_eq!(ix.applied_lsn(), 41);
            // No pending change, a newer position: recorded all the same.
            ix.commit(45).unwrap();
            // Uncommitted work is dropped with the process; the position stays.
            add_all(&mut ix, &[(id("s", 2), "two")]);
        }
        let ix = KeywordIndex::open(dir.path()).unwrap();
        assert_eq!(ix.applied_lsn(), 45);
        assert!(ix.find("two", 10).unwrap().is_empty());
        assert_eq!(ix.len(), 1);
    }

    #[test]
    fn the_applied_lsn_never_moves_back() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        ix.commit(10).unwrap();
        ix.commit(10).unwrap();
        let err = ix.commit(9).unwrap_err();
        assert!(matches!(
            err,
            KeywordError::LsnRegressed {
                applied: 10,
                lsn: 9,
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            "the keyword index in memory covers the ledger up to change 10, not back to 9"
        );
    }

    #[test]
    fn queries_are_words_never_syntax_errors() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        let e = id("s", 1);
        add_all(
            &mut ix,
            &[(
                e.clone(),
                "cargo test --lib failed: error[E0308] in src/main.rs:42 (fn run)",
            )],
        );
        ix.commit(1).unwrap();
        for q in [
            "\"",
            "\"\"",
            "\"unbalanced phrase",
            ":",
            "text:",
            "kind:user",
            "(",
            ")",
            "((()",
            "-",
            "--lib",
            "-cargo",
            "+",
            "*",
            "?",
            "~2",
            "^",
            "\\",
            "[",
            "[1 TO",
            "{",
            "AND",
            "OR NOT",
            "NOT cargo",
            "a AND OR b",
            "src/main.rs:42",
            "error[E0308]",
            "fn run()",
            "title:\"x",
            "'",
            "😀 ünïcödé",
            "   ",
        ] {
            ix.find(q, 10)
                .unwrap_or_else(|e| panic!("query {q:?} failed: {e}"));
        }
        assert!(ix.find("", 10).unwrap().is_empty());
        assert!(ix.find("  \t\n", 10).unwrap().is_empty());
        assert!(ix.find("-- :: ()", 10).unwrap().is_empty());
        // Operators are just separators, so the words around them still count.
        for q in [
            "-cargo",
            "NOT cargo",
            "--lib",
            "src/main.rs:42",
            "error[E0308]",
            "(fn run)",
        ] {
            assert_eq!(
                ids(&ix.find(q, 10).unwrap()),
                vec![e.clone()],
                "query {q:?}"
            );
        }
        assert!(ix.find("cargo", 0).unwrap().is_empty());
    }

    #[test]
    fn quoted_words_must_match_as_a_phrase() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        let together = id("s", 1);
        let apart = id("s", 2);
        add_all(
            &mut ix,
            &[
                (together.clone(), "the lock file was stale"),
                (apart.clone(), "the file had a lock on it"),
            ],
        );
        ix.commit(1).unwrap();
        assert_eq!(
            ids(&ix.find("\"lock file\"", 10).unwrap()),
            vec![together.clone()]
        );
        assert_eq!(
            ids(&ix.find("\"locked files\"", 10).unwrap()),
            vec![together.clone()]
        );
        assert_eq!(ix.find("lock file", 10).unwrap().len(), 2);
        // A phrase plus a loose word: either may match.
        assert_eq!(ix.find("\"lock file\" had", 10).unwrap().len(), 2);
        // A one-word "phrase" is just a word.
        assert_eq!(ix.find("\"stale\"", 10).unwrap().len(), 1);
    }

    #[test]
    fn stemming_matches_other_forms_of_a_word() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        let e = id("s", 1);
        add_all(&mut ix, &[(e.clone(), "Indexing the Ledgers took MINUTES")]);
        ix.commit(1).unwrap();
        for q in ["indexed", "index", "INDEXES", "ledger", "minute"] {
            assert_eq!(
                ids(&ix.find(q, 10).unwrap()),
                vec![e.clone()],
                "query {q:?}"
            );
        }
        // Stemming is not prefix matching.
        assert!(ix.find("ledge min", 10).unwrap().is_empty());
    }

    #[test]
    fn very_long_tokens_are_not_indexed() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        let blob = "a".repeat(41);
        let text = format!("payload {blob} end");
        add_all(&mut ix, &[(id("s", 1), &text)]);
        ix.commit(1).unwrap();
        assert!(ix.find(&blob, 10).unwrap().is_empty());
        assert_eq!(ix.find("payload", 10).unwrap().len(), 1);
    }

    #[test]
    fn equal_scores_are_ordered_by_event_id_whatever_the_segments() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        // Same text, so the same score; added out of id order over several commits (several
        // segments), so tantivy's own order (segment, doc) differs from id order.
        let order = [7u32, 3, 9, 1, 5, 8, 2, 6, 4, 0];
        for (n, seq) in order.iter().enumerate() {
            add_all(&mut ix, &[(id("b", *seq), "flaky test retried")]);
            add_all(&mut ix, &[(id("a", 100 + *seq), "flaky test retried")]);
            ix.commit(n as u64 + 1).unwrap();
        }
        let better = id("z", 0);
        add_all(&mut ix, &[(better.clone(), "flaky flaky test retried")]);
        ix.commit(100).unwrap();

        let all = ix.find("flaky", 100).unwrap();
        assert_eq!(all.len(), 21);
        assert_eq!(all[0].id, better);
        let mut expected: Vec<EventId> = ids(&all[1..]);
        expected.sort();
        assert_eq!(ids(&all[1..]), expected);
        // A limit that cuts through the tie keeps the lowest ids, every time.
        for limit in [1, 2, 3, 5, 11] {
            let top = ix.find("flaky", limit).unwrap();
            assert_eq!(ids(&top), ids(&all[..limit]), "limit {limit}");
        }
    }

    #[test]
    fn an_in_ram_index_works_like_one_on_disk() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        assert_eq!(ix.applied_lsn(), 0);
        assert!(ix.is_empty());
        assert!(ix.find("anything", 5).unwrap().is_empty());
        let e = id("s", 1);
        add_all(&mut ix, &[(e.clone(), "scratch fold for asof")]);
        ix.commit(3).unwrap();
        assert_eq!(ix.applied_lsn(), 3);
        assert_eq!(ids(&ix.find("fold", 5).unwrap()), vec![e.clone()]);
        ix.retract(&e).unwrap();
        ix.commit(4).unwrap();
        assert!(ix.find("fold", 5).unwrap().is_empty());
    }

    #[test]
    fn many_small_commits_are_merged_and_keep_their_position() {
        let dir = tempfile::tempdir().unwrap();
        let mut ix = KeywordIndex::open(dir.path()).unwrap();
        for n in 0..40u32 {
            add_all(&mut ix, &[(id("s", n), "capture after capture")]);
            ix.commit(u64::from(n) + 1).unwrap();
        }
        assert!(ix.segments() < 10, "{} segments", ix.segments());
        drop(ix);
        let ix = KeywordIndex::open(dir.path()).unwrap();
        assert_eq!(ix.applied_lsn(), 40);
        assert_eq!(ix.len(), 40);
        assert!(ix.segments() < 10, "{} segments", ix.segments());
        assert_eq!(ix.find("capture", 100).unwrap().len(), 40);
    }

    #[test]
    fn a_second_writer_on_the_same_directory_is_told_the_index_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = KeywordIndex::open(dir.path()).unwrap();
        let mut second = KeywordIndex::open(dir.path()).unwrap();
        add_all(&mut first, &[(id("s", 1), "one")]);
        let err = second
            .add(&id("s", 2), &doc(TextKind::User, "two"))
            .unwrap_err();
        assert!(matches!(err, KeywordError::Busy { .. }), "{err}");
        assert!(err.to_string().contains("being written by another process"));
        first.commit(1).unwrap();
        // Once the first writer committed (and let go), the second may write.
        second
            .add(&id("s", 2), &doc(TextKind::User, "two"))
            .unwrap();
        second.commit(2).unwrap();
        assert_eq!(second.len(), 2);
    }

    #[test]
    fn an_unreadable_payload_is_reported_not_taken_for_zero() {
        let dir = tempfile::tempdir().unwrap();
        {
            let ix = KeywordIndex::open(dir.path()).unwrap();
            let mut w: IndexWriter = ix.index.writer_with_num_threads(1, 15 << 20).unwrap();
            let mut p = w.prepare_commit().unwrap();
            p.set_payload("lsn=12");
            p.commit().unwrap();
        }
        let err = KeywordIndex::open(dir.path()).err().expect("bad payload");
        assert!(matches!(err, KeywordError::BadPayload { .. }), "{err}");
    }

    #[test]
    fn every_kind_survives_the_index_round_trip() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        for (n, k) in TextKind::ALL.into_iter().enumerate() {
            ix.add(&id("s", n as u32), &doc(k, "same words")).unwrap();
        }
        ix.commit(1).unwrap();
        let mut kinds: Vec<TextKind> = ix.dump().unwrap().iter().map(|h| h.kind).collect();
        kinds.sort();
        let mut all = TextKind::ALL.to_vec();
        all.sort();
        assert_eq!(kinds, all);
        // A search without a kind finds the prose kinds alone.
        let found: Vec<TextKind> = ix
            .find("words", 10)
            .unwrap()
            .iter()
            .map(|h| h.kind)
            .collect();
        let prose: Vec<TextKind> = TextKind::ALL.into_iter().filter(|k| k.is_prose()).collect();
        assert_eq!(found, prose);
    }

    #[test]
    fn filters_run_inside_the_index_so_a_buried_match_is_found() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        // Two hundred strong matches in session "b", then one weak one per filter.
        for n in 0..200 {
            add_all(&mut ix, &[(id("b", n), "cache cache cache eviction")]);
        }
        let weak = "the cache came up once among many other words about the nightly job";
        let obs = id("a", 1);
        ix.add(
            &obs,
            &TextDoc {
                subject: Some("nightly"),
                ..doc(TextKind::Obs, weak)
            },
        )
        .unwrap();
        let late = id("c", 2);
        ix.add(
            &late,
            &TextDoc {
                ts_ms: 1_760_000_000_000,
                ..doc(TextKind::Final, weak)
            },
        )
        .unwrap();
        let early = id("d", 3);
        ix.add(
            &early,
            &TextDoc {
                ts_ms: 1_740_000_000_000,
                ..doc(TextKind::Final, weak)
            },
        )
        .unwrap();
        ix.commit(1).unwrap();
        let top = ids(&ix.find("cache", 10).unwrap());
        assert!(!top.contains(&obs) && !top.contains(&late), "{top:?}");
        let only = |filter: TextFilter| ids(&ix.search("cache", &filter, 10).unwrap());
        let session = |s: &str| Some(SessionId(s.to_string()));
        assert_eq!(
            only(TextFilter {
                session: session("a"),
                ..Default::default()
            }),
            vec![obs.clone()]
        );
        assert_eq!(
            only(TextFilter {
                kind: Some(TextKind::Obs),
                ..Default::default()
            }),
            vec![obs.clone()]
        );
        assert_eq!(
            only(TextFilter {
                subject: Some("nightly".into()),
                ..Default::default()
            }),
            vec![obs.clone()]
        );
        assert_eq!(
            only(TextFilter {
                since_ms: Some(1_755_000_000_000),
                ..Default::default()
            }),
            vec![late.clone()]
        );
        assert_eq!(
            only(TextFilter {
                until_ms: Some(1_745_000_000_000),
                ..Default::default()
            }),
            vec![early.clone()]
        );
        assert!(
            only(TextFilter {
                kind: Some(TextKind::Obs),
                session: session("b"),
                ..Default::default()
            })
            .is_empty()
        );
        // The filter scores nothing: the filtered ranking is the unfiltered one, cut.
        let all = ix.find("cache", 300).unwrap();
        let b = ix
            .search(
                "cache",
                &TextFilter {
                    session: session("b"),
                    ..Default::default()
                },
                300,
            )
            .unwrap();
        let b_in_all: Vec<&Hit> = all
            .iter()
            .filter(|h| h.id.session.as_str() == "b")
            .collect();
        assert_eq!(b.len(), b_in_all.len());
        for (x, y) in b.iter().zip(b_in_all) {
            assert_eq!((&x.id, x.score), (&y.id, y.score));
        }
    }

    #[test]
    fn strength_is_near_one_for_a_full_match_and_small_for_a_common_word() {
        let mut ix = KeywordIndex::in_ram().unwrap();
        for n in 0..50 {
            add_all(
                &mut ix,
                &[(id("s", n), "the build ran and the tests passed")],
            );
        }
        let full = id("t", 1);
        add_all(
            &mut ix,
            &[(full.clone(), "the tokenizer panicked on emoji input")],
        );
        ix.commit(1).unwrap();
        let hits = ix.find("tokenizer emoji input", 5).unwrap();
        assert_eq!(hits[0].id, full);
        assert!(hits[0].strength > 0.8, "{hits:?}");
        // Only "the" is shared with the fifty: a word in nearly every text is worth little.
        let weak = ix.find("the frobnicator", 60).unwrap();
        assert!(weak.iter().all(|h| h.strength < 0.1), "{weak:?}");
    }

    #[test]
    fn event_keys_decode_back_to_their_ids() {
        for e in [id("s", 0), id("0199a1b2-c3d4", u32::MAX), id("", 7)] {
            assert_eq!(decode_event_key(&event_key(&e.session, e.seq)), Some(e));
        }
        assert_eq!(decode_event_key(b"abc"), None);
        assert_eq!(decode_event_key(b"abcd\x01\0\0\0\0"), None);
    }
}

/// Measurements on a ledger-sized index; run with
/// `cargo test --release --lib views::keyword::bench -- --ignored --nocapture`.
#[cfg(test)]
mod bench {
    use super::tests::Unfiltered;
    use super::*;
    use crate::vocab::event::{Seq, SessionId};
    use std::time::{Duration, Instant};

    const DOCS: u32 = 44_000;

    const WORDS: &str = "the a to of and in is it that for you this on with be as are not \
        was have or but can at from by if we will do what so all there an about which when \
        one would out up my they more like just some should then now only could also into \
        first new because any these how other use using used need make sure check change \
        file files test tests error errors fix fixed build run running command output line \
        lines function method type types value values return struct field fields module \
        import export config path paths directory index indexing indexed search query \
        ledger session sessions event events hook hooks capture commit commits branch merge \
        rebase diff patch review reviewed parse parser parsing token tokens cache cached \
        lock locked timeout retry failed failing passes passing green red release debug \
        cargo rust clippy rustfmt tantivy fjall serde json toml yaml schema migration \
        database table row rows column key keys seq stream feed view views render template \
        brief recall vector vectors embedding model onnx tokenizer window day days week \
        user prompt agent assistant claude codex transcript compact summary final message \
        observation note rule decision because however instead still already again never \
        always maybe probably actually exactly simply clean cleanup refactor rename move \
        split join add remove delete update insert upsert replace read write open close \
        flush sync async await thread threads spawn channel mutex arena memory budget \
        segment segments merging policy payload offset limit score scores rank ranking \
        fusion hybrid keyword semantic stemmer english phrase quote quotes word words \
        performance benchmark measure measured latency throughput fast slow faster slower";

    const IDENTS: &str = "src/views/keyword.rs src/ledger/mod.rs event_key EventId SessionId \
        Seq::at_line KeywordIndex::open TopDocs::with_limit order_by_score prepare_commit \
        set_payload wait_merging_threads IndexWriter cargo_test --lib -D warnings fn impl \
        pub(crate) Result<()> Option<String> Vec<u8> &str u64 i64 #[test] assert_eq! \
        unwrap() map_err ? => -> :: .peat/ ~/.claude/projects 0x7f 127.0.0.1:8080 \
        error[E0308] warning: note: help: --release --json PEAT_DB HOME=DIR";

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Zipf-like English with code identifiers, paths and one-off names mixed in.
    fn text(rng: &mut Rng, words: &[&str], idents: &[&str], bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 16);
        while s.len() < bytes {
            let r = rng.unit();
            if r < 0.08 {
                s.push_str(idents[rng.below(idents.len())]);
            } else if r < 0.12 {
                s.push_str(&format!("name_{}", rng.below(60_000)));
            } else {
                let skew = rng.unit().powi(3);
                s.push_str(words[(skew * words.len() as f64) as usize]);
            }
            s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
        }
        s
    }

    fn corpus() -> Vec<(EventId, TextKind, i64, String)> {
        let words: Vec<&str> = WORDS.split_whitespace().collect();
        let idents: Vec<&str> = IDENTS.split_whitespace().collect();
        let mut rng = Rng(1);
        (0..DOCS)
            .map(|n| {
                let (kind, bytes) = match rng.below(100) {
                    0..60 => (TextKind::User, 20 + rng.below(380)),
                    60..85 => (TextKind::Said, 80 + rng.below(1100)),
                    85..90 => (TextKind::Final, 300 + rng.below(3700)),
                    90..95 => (TextKind::Compact, 2000 + rng.below(6000)),
                    _ => (TextKind::Obs, 80 + rng.below(420)),
                };
                let id = EventId {
                    session: SessionId(format!("0199a1b2-c3d4-7e5f-8a9b-{:012x}", n / 1500)),
                    seq: Seq((n % 1500) * 16),
                };
                let ts = 1_751_000_000_000 + i64::from(n) * 60_000;
                (id, kind, ts, text(&mut rng, &words, &idents, bytes))
            })
            .collect()
    }

    fn dir_size(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    }

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1000.0
    }

    #[test]
    #[ignore = "benchmark: run in release with --nocapture"]
    fn keyword_index_on_44k_events() {
        let docs = corpus();
        let text_bytes: usize = docs.iter().map(|d| d.3.len()).sum();
        println!(
            "corpus: {} docs, {:.1} MB of text",
            docs.len(),
            text_bytes as f64 / 1e6
        );
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("keyword");

        let t = Instant::now();
        {
            let mut ix = KeywordIndex::open(&dir).unwrap();
            for (id, kind, ts_ms, text) in &docs {
                let d = TextDoc {
                    kind: *kind,
                    ts_ms: *ts_ms,
                    text,
                    subject: None,
                };
                ix.add(id, &d).unwrap();
            }
            ix.commit(u64::from(DOCS)).unwrap();
            println!(
                "build: {:.0} ms, {} segments, {:.1} MB on disk",
                ms(t.elapsed()),
                ix.segments(),
                dir_size(&dir) as f64 / 1e6
            );
        }

        let queries = [
            "ledger lock timeout",
            "fix the failing test in the parser",
            "\"wait_merging_threads\"",
            "tantivy commit payload",
            "name_4242",
            "why did we rename the keyword module",
        ];
        for q in queries {
            let mut times = Vec::new();
            let mut n = 0;
            for _ in 0..15 {
                let t = Instant::now();
                let ix = KeywordIndex::open(&dir).unwrap();
                let hits = ix.find(q, 24).unwrap();
                n = hits.len();
                drop(ix);
                times.push(ms(t.elapsed()));
            }
            let first = times[0];
            times.sort_by(f64::total_cmp);
            println!(
                "open+search+close {q:?}: first {first:.2} ms, median {:.2} ms, max {:.2} ms ({n} hits)",
                times[times.len() / 2],
                times[times.len() - 1],
            );
        }
        {
            let t = Instant::now();
            let ix = KeywordIndex::open(&dir).unwrap();
            let open = t.elapsed();
            let t = Instant::now();
            for q in queries {
                ix.find(q, 24).unwrap();
            }
            println!(
                "open alone: {:.2} ms; search alone: {:.2} ms per query",
                ms(open),
                ms(t.elapsed()) / queries.len() as f64
            );
        }

        // One commit per capture: 300 captures of 25 events, a fifth of them replacements.
        let mut ix = KeywordIndex::open(&dir).unwrap();
        let mut rng = Rng(7);
        let mut commit_times = Vec::new();
        let mut max_segs = 0;
        const COMMITS: u64 = 300;
        let mut seq = 1_000_000u32;
        for c in 0..COMMITS {
            let t = Instant::now();
            for _ in 0..25 {
                let (id, kind, ts_ms, text) = if rng.below(5) == 0 {
                    let d = &docs[rng.below(docs.len())];
                    ix.retract(&d.0).unwrap();
                    (d.0.clone(), d.1, d.2, format!("{} revised", d.3))
                } else {
                    seq += 16;
                    let d = &docs[rng.below(docs.len())];
                    let id = EventId {
                        session: SessionId("live-session".into()),
                        seq: Seq(seq),
                    };
                    (id, d.1, d.2, d.3.clone())
                };
                let d = TextDoc {
                    kind,
                    ts_ms,
                    text: &text,
                    subject: None,
                };
                ix.add(&id, &d).unwrap();
            }
            ix.commit(u64::from(DOCS) + c + 1).unwrap();
            commit_times.push(ms(t.elapsed()));
            max_segs = max_segs.max(ix.segments());
        }
        println!("max segments during the commits: {max_segs}");
        let mean = commit_times.iter().sum::<f64>() / commit_times.len() as f64;
        let mut sorted = commit_times.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "{COMMITS} small commits: mean {mean:.1} ms, median {:.1} ms, max {:.1} ms; {} segments, {} docs, {:.1} MB",
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1],
            ix.segments(),
            ix.len(),
            dir_size(&dir) as f64 / 1e6
        );

        drop(ix);
        let mut times = Vec::new();
        for _ in 0..15 {
            let t = Instant::now();
            let ix = KeywordIndex::open(&dir).unwrap();
            ix.find("ledger lock timeout", 24).unwrap();
            times.push(ms(t.elapsed()));
        }
        times.sort_by(f64::total_cmp);
        println!(
            "open+search after the small commits: median {:.2} ms",
            times[7]
        );
    }
}
