//! Views: everything read is materialised incrementally from the ledger's change feed.
//!
//! Each lane records the last change it applied and catches up when opened, so a crash
//! between the ledger and its views loses nothing. A replaced event is retracted from every
//! view before its new version is applied. Views are disposable: a change of view schema,
//! embedding model or time zone rebuilds them from the ledger into a new generation, and the
//! old generation is dropped only once the new one is complete.

pub(crate) mod asof;
pub(crate) mod audit;
pub(crate) mod closings;
pub(crate) mod fault;
pub(crate) mod handle;
pub(crate) mod keyword;
pub(crate) mod memo;
pub(crate) mod rows;
pub(crate) mod scrubbed;
pub(crate) mod session;
pub(crate) mod source;
pub(crate) mod stamp;
pub(crate) mod steps;
pub(crate) mod tables;
pub(crate) mod vectorfile;
pub(crate) mod vectors;

use fjall::{Database, Keyspace};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use crate::embed::resident::{Loader, Residency};
use crate::embed::{EmbedError, Embedder};
use crate::ledger::lock::ViewsLock;
use crate::ledger::{FeedEntry, Ledger, LedgerError, event_key};
use crate::views::session::{Cited, SessionRollup, SessionSummary};
use crate::vocab::event::{Envelope, Event, EventId, Seq, SessionId};
use fault::Fault;
use keyword::{KeywordIndex, TextDoc};
use rows::TextRow;
use tables::{Blobs, Pending, Tables, Writes};
use vectors::{LaneFile, PendingVectors, VectorLane};

/// Bump when what a view stores, or how it is derived, changes: views then rebuild.
pub(crate) const VIEW_SCHEMA: u32 = 13;

/// Changes folded per ingestion while catching up or rebuilding. Each ingestion writes new
/// tables, so fewer, larger ones are faster; this bounds the memory a fold holds.
const CHUNK: usize = 50_000;

/// Changes folded per ingestion once a reader has asked for the views: a reader arriving
/// while a chunk is written waits for that write (at 50,000 changes, hundreds of ms). Not
/// much smaller: each write also costs tens of ms whatever its size (new tables, a keyword
/// commit), and more writes pile up tables whose merge holds the views longer still. Over a
/// 25,000-change catch-up read by `peat sessions` in a loop, 4,096 and 8,192 made reads
/// slower at the median and at the worst than 16,384, and the catch-up 1.5x as long.
const CHUNK_BESIDE_READERS: usize = 16_384;

/// How long opening the views waits for their lock. Its holders keep it for one read or
/// one chunk of a fold, so only something stuck runs this out.
pub(crate) const VIEWS_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Changes folded between looks at whether a reader waits for the views (a look is one
/// `stat`, a microsecond; a change of a large transcript takes 50-100 to fold, so a reader
/// waits well under a millisecond to be let in). Tests look more often, so that their small
/// ledgers pause mid-chunk too.
const PAUSE_CHECK: usize = if cfg!(test) { 3 } else { 8 };

#[derive(Debug, thiserror::Error)]
pub(crate) enum ViewError {
    #[error("the view store failed: {0}")]
    Store(String),
    #[error("a view row does not parse: {0}")]
    Corrupt(String),
    #[error("the keyword index failed: {0}")]
    Keyword(String),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error("cannot prepare {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ViewError {
    pub(crate) fn store(e: fjall::Error) -> ViewError {
        ViewError::Store(crate::ledger::storage_sentence(&e))
    }
}

impl From<keyword::KeywordError> for ViewError {
    fn from(e: keyword::KeywordError) -> ViewError {
        ViewError::Keyword(e.to_string())
    }
}

/// Which embedding model the vector lane uses, loaded only when something needs embedding.
pub(crate) struct ModelSlot {
    /// The installed model's id, or `None`: the semantic lane is off.
    pub(crate) id: Option<String>,
    loader: Loader,
    loaded: Option<Box<dyn Embedder>>,
    /// A one-shot search asks the resident embedder first (see [`ModelSlot::prefetch`]).
    resident: Option<crate::embed::resident::Search>,
    /// The resident embedder a search found missing, started when the slot drops (after
    /// the answer).
    later: Option<crate::embed::resident::Later>,
    /// A load started ahead on a thread of its own (see [`ModelSlot::prefetch`]).
    loading: Option<std::thread::JoinHandle<Result<Box<dyn Embedder>, EmbedError>>>,
    /// A fold embeds the texts the cache lacks itself, instead of queueing them for the
    /// embedding pass (see [`vectors`]).
    pub(crate) inline: bool,
    /// The installed model: left for the process's end to free (see `Drop`).
    installed: bool,
}

impl Drop for ModelSlot {
    /// A resident embedder the search found missing starts now, its load no longer taking
    /// the search's CPU. An ONNX session and its tokenizer take milliseconds to free piece
    /// by piece (a sixth of a one-shot search's CPU), and a slot lives until the command
    /// ends: the process's exit frees them at once.
    fn drop(&mut self) {
        if let Some(later) = &self.later {
            later.start_if_asked();
        }
        if self.installed
            && let Some(model) = self.loaded.take()
        {
            std::mem::forget(model);
        }
    }
}

impl ModelSlot {
    pub(crate) fn new(
        id: Option<String>,
        loader: impl FnMut() -> Result<Box<dyn Embedder>, EmbedError> + Send + 'static,
    ) -> ModelSlot {
        ModelSlot {
            id,
            loader: Box::new(loader),
            loaded: None,
            resident: None,
            later: None,
            loading: None,
            inline: false,
            installed: false,
        }
    }

    /// The model `models.lock` pins, if it is installed where `lookup` says to look: its id
    /// is known now, the ONNX session is created only when something needs embedding.
    /// Folds queue what the cache lacks. A one-shot slot that prefetches (a search) asks
    /// the resident embedder first unless `residency` is off; nothing else does (an
    /// import, a rebuild, the embedding pass load in process).
    pub(crate) fn installed(
        profile: crate::embed::Profile,
        lookup: crate::embed::Lookup,
        residency: Residency,
    ) -> Result<ModelSlot, EmbedError> {
        use crate::embed::resident::Search;
        let lock = crate::embed::pinned()?;
        let (id, resident) = match crate::embed::artifacts::resolve(lock, &lookup)? {
            crate::embed::Resolution::Found(r) => (
                Some(lock.model.id.clone()),
                (profile == crate::embed::Profile::OneShot)
                    .then(|| Search::new(&lookup, lock, &r, residency))
                    .flatten(),
            ),
            crate::embed::Resolution::NotInstalled => (None, None),
        };
        let mut slot = ModelSlot::new(id, move || {
            crate::embed::load(&lookup, profile)?.map_or_else(not_installed, Ok)
        });
        slot.later = resident.as_ref().map(|r| r.later());
        slot.resident = resident;
        slot.installed = true;
        Ok(slot)
    }

    #[cfg(test)]
    /// An embedder already in hand (tests, and the hash embedder); folds embed inline.
    pub(crate) fn with(embedder: Box<dyn Embedder>) -> ModelSlot {
        let id = embedder.model_id().to_string();
        ModelSlot {
            id: Some(id),
            loader: Box::new(not_installed),
            loaded: Some(embedder),
            resident: None,
            later: None,
            loading: None,
            inline: true,
            installed: false,
        }
    }

    #[cfg(test)]
    /// Folds queue what the cache lacks for the embedding pass.
    pub(crate) fn deferred(mut self) -> ModelSlot {
        self.inline = false;
        self
    }

    /// Start loading the model on a thread of its own, for a search that will embed its
    /// query: the load (most of a one-shot search's cost) then overlaps opening the store,
    /// catching the views up and the keyword lane. A resident embedder that answers embeds
    /// `query` (the text the search will embed) meanwhile instead, and the load is not
    /// needed; without one, this load starts one for the next search.
    pub(crate) fn prefetch(&mut self, query: &str) {
        if self.id.is_none() || self.loaded.is_some() || self.loading.is_some() {
            return;
        }
        let mut loader = std::mem::replace(&mut self.loader, Box::new(not_installed));
        let resident = self.resident.take();
        let query = query.to_string();
        self.loading = Some(std::thread::spawn(move || match resident {
            Some(search) => search.embedder_or(loader, &query),
            None => loader(),
        }));
    }

    /// The embedder, loading it on first use. `None` when the lane is off.
    pub(crate) fn get(&mut self) -> Result<Option<&mut (dyn Embedder + 'static)>, ViewError> {
        if self.id.is_none() {
            return Ok(None);
        }
        if self.loaded.is_none() {
            let loaded = match self.loading.take() {
                Some(thread) => thread.join().unwrap_or_else(|_| {
                    Err(EmbedError::Inference(
                        "the model's loading thread panicked".into(),
                    ))
                })?,
                None => (self.loader)()?,
            };
            self.loaded = Some(loaded);
        }
        Ok(self.loaded.as_deref_mut())
    }
}

fn not_installed() -> Result<Box<dyn Embedder>, EmbedError> {
    Err(EmbedError::Inference(
        crate::embed::off_notice().to_string(),
    ))
}

/// What the current generation of views was built for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Current {
    generation: u32,
    schema: u32,
    model: Option<String>,
    tz: String,
}

impl Current {
    /// Generation `generation` of this schema, for `model` in `tz`.
    fn of(generation: u32, model: Option<&str>, tz: &jiff::tz::TimeZone) -> Current {
        Current {
            generation,
            schema: VIEW_SCHEMA,
            model: model.map(str::to_string),
            tz: zone_name(tz),
        }
    }
}

/// A name for `tz` that changes whenever its days do, so views built in one zone are never
/// read in another. A zone without an IANA name (a fixed offset, a POSIX rule, an unnamed
/// /etc/localtime) is named by its offsets and transitions from 1970 to 2100: two such zones
/// share a name only if every day falls the same in both.
fn zone_name(tz: &jiff::tz::TimeZone) -> String {
    use sha2::{Digest, Sha256};
    if let Some(name) = tz.iana_name() {
        return name.to_string();
    }
    let start = jiff::Timestamp::UNIX_EPOCH;
    let end = jiff::Timestamp::from_second(4_102_444_800).expect("2100-01-01 is a timestamp");
    let mut h = Sha256::new();
    h.update(tz.to_offset(start).seconds().to_be_bytes());
    for t in tz.following(start).take_while(|t| t.timestamp() < end) {
        h.update(t.timestamp().as_second().to_be_bytes());
        h.update(t.offset().seconds().to_be_bytes());
    }
    format!("unnamed {}", &hex::encode(h.finalize())[..12])
}

/// Take the views lock of the store at `store` (see [`crate::ledger::lock`]), for `who`.
pub(crate) fn lock(store: &Path, who: &str) -> Result<ViewsLock, ViewError> {
    ViewsLock::acquire(store, VIEWS_WAIT, who).map_err(|e| ViewError::Ledger(e.into()))
}

/// The views' own database beside the ledger's, under `lock`: written only by ingestion,
/// so opening it replays no journal.
fn views_db(store: &Path, lock: &ViewsLock) -> Result<Database, ViewError> {
    let _held = lock;
    // A `peat redact` rewrite a crash interrupted is finished (or undone) first.
    crate::ledger::scrub::recover(&store.join("views")).map_err(|e| ViewError::store(e.into()))?;
    crate::ledger::clear_unfinished_creation(&store.join("views")).map_err(|source| {
        ViewError::Io {
            path: store.join("views"),
            source,
        }
    })?;
    crate::ledger::database(&store.join("views"))
        .open()
        .map_err(ViewError::store)
}

/// The views database beside `store`, its meta keyspace, and the generation it says is
/// current (if any was ever built).
fn views_base(store: &Path, lock: &ViewsLock) -> Result<Base, ViewError> {
    let db = views_db(store, lock)?;
    let meta = db
        .keyspace("views", crate::ledger::keyspace_options)
        .map_err(ViewError::store)?;
    let stored = meta
        .get("current")
        .map_err(ViewError::store)?
        .and_then(|v| serde_json::from_slice(&v).ok());
    Ok((db, meta, stored))
}

type Base = (Database, Keyspace, Option<Current>);

/// The open views of a store.
pub(crate) struct Views {
    db: Database,
    meta: Keyspace,
    dir: PathBuf,
    current: Current,
    pub(crate) tables: Tables,
    pub(crate) vectors: VectorLane,
    pub(crate) keyword: KeywordIndex,
    tz: jiff::tz::TimeZone,
    /// Ledger changes these views do not show yet: 0 unless opened as they stand beside a
    /// writer (see [`Views::beside_writer`]).
    behind: u64,
    // Declared last: released only once the database above has closed.
    lock: ViewsLock,
}

impl Views {
    /// Open the views beside `ledger`, rebuilding them if they were built for another schema,
    /// model or time zone, and catching them up with the ledger. `note` hears one line when
    /// a rebuild happens.
    pub(crate) fn open(
        ledger: &Ledger,
        model: &mut ModelSlot,
        tz: jiff::tz::TimeZone,
        note: &mut dyn FnMut(&str),
    ) -> Result<Views, ViewError> {
        let lock = lock(ledger.path(), "writing the views")?;
        let (db, meta, stored) = views_base(ledger.path(), &lock)?;
        let want = |generation| Current::of(generation, model.id.as_deref(), &tz);
        let mut rebuilt = true;
        let views = match stored {
            Some(cur) if cur == want(cur.generation) => {
                let v = Views::at(ledger.path(), (db, meta, lock), cur.clone(), tz.clone())?;
                match stamp::misfit(&v, ledger)? {
                    None => {
                        rebuilt = false;
                        v.caught_up(ledger, model)?
                    }
                    Some(why) => {
                        note(&why);
                        let Views { db, meta, lock, .. } = v;
                        let fresh = Fresh {
                            want: want(cur.generation + 1),
                            old: Some(cur),
                        };
                        Views::rebuild(ledger, (db, meta, lock), fresh, model, tz)?
                    }
                }
            }
            Some(cur) => {
                note(&rebuild_reason(&cur, &want(cur.generation)));
                let fresh = Fresh {
                    want: want(cur.generation + 1),
                    old: Some(cur),
                };
                Views::rebuild(ledger, (db, meta, lock), fresh, model, tz)?
            }
            None => {
                let fresh = Fresh {
                    want: want(1),
                    old: None,
                };
                Views::rebuild(ledger, (db, meta, lock), fresh, model, tz)?
            }
        };
        views.closings_after(rebuilt, ledger);
        Ok(views)
    }

    /// Write the closings file (see [`closings`]) unless it already holds these views'
    /// closings: after a rebuild, when it is missing or unreadable, or when it reaches
    /// another change than the tables do (which an interrupted catch-up leaves behind: it
    /// flushed the tables and failed before the file, and the next open may move only the
    /// keyword lane). Best effort: one that cannot be written is removed, so SessionStart
    /// reads the views instead of an older file.
    fn closings_after(&self, rebuilt: bool, ledger: &Ledger) {
        let current = !rebuilt
            && closings::written_at(ledger)
                .is_some_and(|at| self.tables.applied().ok() == Some(at));
        if !current && closings::write(self, ledger).is_err() {
            closings::discard(ledger.path());
        }
    }

    /// The views as they stand, for a reader while a writer holds the store: no catch-up,
    /// no rebuild, nothing written. With how many of the ledger's changes they do not show
    /// yet. `None` when they cannot be served as they stand (never built, being rebuilt for
    /// another schema, model or time zone, an interrupted rewrite, not this ledger's): the
    /// reader must then wait for the writer.
    pub(crate) fn beside_writer(
        ledger: &Ledger,
        model: Option<&str>,
        tz: jiff::tz::TimeZone,
    ) -> Result<Option<(Views, u64)>, ViewError> {
        let store = ledger.path();
        let lock = lock(store, "reading the views")?;
        let dir = store.join("views");
        let unfinished = ["views.scrub", "views.old"]
            .iter()
            .any(|s| store.join(s).exists());
        if unfinished || !dir.join("version").exists() {
            return Ok(None);
        }
        let db = crate::ledger::database(&dir)
            .open()
            .map_err(ViewError::store)?;
        if !db.keyspace_exists("views") {
            return Ok(None);
        }
        let meta = db
            .keyspace("views", crate::ledger::keyspace_options)
            .map_err(ViewError::store)?;
        let Some(cur) = meta
            .get("current")
            .map_err(ViewError::store)?
            .and_then(|v| serde_json::from_slice::<Current>(&v).ok())
        else {
            return Ok(None);
        };
        if cur != Current::of(cur.generation, model, &tz)
            || !keyword_dir(store, cur.generation)
                .join("meta.json")
                .exists()
        {
            return Ok(None);
        }
        let mut v = Views::at(store, (db, meta, lock), cur, tz)?;
        if stamp::unfit(&v, ledger)?.is_some() {
            return Ok(None);
        }
        let behind = ledger
            .last_lsn()?
            .saturating_sub(v.tables.applied()?.min(v.keyword.applied_lsn()));
        v.behind = behind;
        Ok(Some((v, behind)))
    }

    /// The views as they stand, without catching up or rebuilding and without any model:
    /// for a hook that must answer in milliseconds and may show a moment-old record.
    /// `None` when no views were ever built, or they do not fit the ledger (see [`stamp`]).
    /// Waits up to `wait` for the views lock (a writer lets a reader in between changes,
    /// but not while it writes a chunk), then fails as busy.
    pub(crate) fn peek(
        ledger: &Ledger,
        tz: jiff::tz::TimeZone,
        wait: std::time::Duration,
    ) -> Result<Option<Views>, ViewError> {
        let lock = ViewsLock::acquire(ledger.path(), wait, "reading the views")
            .map_err(|e| ViewError::Ledger(e.into()))?;
        let (db, meta, stored) = views_base(ledger.path(), &lock)?;
        let Some(cur) = stored else { return Ok(None) };
        let v = Views::at(ledger.path(), (db, meta, lock), cur, tz)?;
        // Beside a writer nothing is written, not even a missing stamp.
        let why = if ledger.is_locked() {
            stamp::misfit(&v, ledger)?
        } else {
            stamp::unfit(&v, ledger)?
        };
        Ok(why.is_none().then_some(v))
    }

    /// Fold `events` (the change blobs they name read from `blobs`) into fresh views in the
    /// scratch folder `scratch` (see [`Views::seed_scratch`]): an `asof` fold embeds nothing
    /// the real store had embedded, and holds nothing of it meanwhile.
    pub(crate) fn fold_scratch(
        scratch: Scratch,
        blobs: Blobs<'_>,
        events: impl Iterator<Item = Result<(EventId, Envelope), LedgerError>>,
        model: &mut ModelSlot,
        tz: jiff::tz::TimeZone,
    ) -> Result<Views, ViewError> {
        let Scratch { dir, base, search } = scratch;
        let fresh = Fresh {
            want: Current::of(1, model.id.as_deref(), &tz),
            old: None,
        };
        let folded = Folded {
            events,
            past: std::iter::empty(),
            keyword: search,
        };
        Views::fold_into(&dir, blobs, folded, 0, base, fresh, model, tz)
    }

    /// Open a scratch views folder at `dir`. For a `search`, its vector cache is a copy of
    /// `from`'s (vectors are a pure function of model and text: the copy is as good as the
    /// original); otherwise it will be read for its tables alone: nothing is copied, and
    /// its fold leaves the keyword lane empty (at a fifth of a small fold's time or more).
    pub(crate) fn seed_scratch(
        dir: &Path,
        from: &Views,
        search: bool,
    ) -> Result<Scratch, ViewError> {
        std::fs::create_dir_all(dir).map_err(|source| ViewError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let lock = lock(dir, "folding a scratch copy")?;
        let db = views_db(dir, &lock)?;
        let meta = db
            .keyspace("views", crate::ledger::keyspace_options)
            .map_err(ViewError::store)?;
        if search {
            let lane = VectorLane::open(&db, &Tables::open(&db, 1)?.ks, None)?;
            let mut ing = lane.cache().start_ingestion().map_err(ViewError::store)?;
            // The cache iterates in key order, as an ingestion wants.
            for kv in from.vectors.cache().iter() {
                let (k, v) = kv.into_inner().map_err(ViewError::store)?;
                ing.write(k, v).map_err(ViewError::store)?;
            }
            ing.finish().map_err(ViewError::store)?;
        }
        Ok(Scratch {
            dir: dir.to_path_buf(),
            base: (db, meta, lock),
            search,
        })
    }

    /// Rebuild every view from the ledger into a new generation, now.
    pub(crate) fn rebuild_now(
        ledger: &Ledger,
        model: &mut ModelSlot,
        tz: jiff::tz::TimeZone,
    ) -> Result<Views, ViewError> {
        let lock = lock(ledger.path(), "rebuilding the views")?;
        let (db, meta, stored) = views_base(ledger.path(), &lock)?;
        let generation = stored.as_ref().map_or(1, |c| c.generation + 1);
        let want = Current::of(generation, model.id.as_deref(), &tz);
        let fresh = Fresh { want, old: stored };
        let views = Views::rebuild(ledger, (db, meta, lock), fresh, model, tz)?;
        views.closings_after(true, ledger);
        Ok(views)
    }

    fn at(
        dir: &Path,
        (db, meta, lock): (Database, Keyspace, ViewsLock),
        current: Current,
        tz: jiff::tz::TimeZone,
    ) -> Result<Views, ViewError> {
        let keyword = KeywordIndex::open(&keyword_dir(dir, current.generation))?;
        Views::with_keyword(dir, (db, meta, lock), current, tz, keyword)
    }

    /// [`Views::at`] with the keyword lane already open.
    fn with_keyword(
        dir: &Path,
        (db, meta, lock): (Database, Keyspace, ViewsLock),
        current: Current,
        tz: jiff::tz::TimeZone,
        keyword: KeywordIndex,
    ) -> Result<Views, ViewError> {
        let dir = dir.to_path_buf();
        let tables = Tables::open(&db, current.generation)?;
        let file = current.model.clone().map(|model| LaneFile {
            path: vectorfile::path(&dir, current.generation),
            meta: meta.clone(),
            model,
        });
        Ok(Views {
            vectors: VectorLane::open(&db, &tables.ks, file)?,
            tables,
            keyword,
            db,
            meta,
            dir,
            current,
            tz,
            behind: 0,
            lock,
        })
    }

    /// How many recorded changes these views do not show yet (0: caught up), as a read's
    /// `--json` says in its `behind` field.
    pub(crate) fn behind(&self) -> u64 {
        self.behind
    }

    /// Close the views' database and let a reader that asked for it in, then open it
    /// again. The keyword lane stays open, its writer holding what it was given since the
    /// last commit: a reader opens the lane as that commit left it, as it opens the tables
    /// as the last flush left them. A fold in progress is kept by the caller, so a pause
    /// costs the writer no work.
    fn pause(self) -> Result<Views, ViewError> {
        let Views {
            db,
            meta,
            dir,
            current,
            tables,
            vectors,
            keyword,
            tz,
            lock,
            behind: _,
        } = self;
        drop((vectors, tables, meta, db));
        fault::paused();
        let lock = lock
            .pause(VIEWS_WAIT, "writing the views")
            .map_err(|e| ViewError::Ledger(e.into()))?;
        let db = views_db(&dir, &lock)?;
        let meta = db
            .keyspace("views", crate::ledger::keyspace_options)
            .map_err(ViewError::store)?;
        Views::with_keyword(&dir, (db, meta, lock), current, tz, keyword)
    }

    fn rebuild(
        ledger: &Ledger,
        base: (Database, Keyspace, ViewsLock),
        fresh: Fresh,
        model: &mut ModelSlot,
        tz: jiff::tz::TimeZone,
    ) -> Result<Views, ViewError> {
        // The position this fold records: from the database, as the events it folds are.
        let upto = ledger.last_lsn_stored()?;
        let blobs = |id: &crate::vocab::change::BlobId| ledger.blob(id);
        // The events table holds current versions only: the versions revisions replaced
        // are the old halves of the feed's revisions.
        let folded = Folded {
            events: ledger.events(),
            past: ledger.revisions(),
            keyword: true,
        };
        let views = Views::fold_into(ledger.path(), &blobs, folded, upto, base, fresh, model, tz)?;
        stamp::record(&views, ledger)?;
        views.vectors.rewrite_file()?;
        Ok(views)
    }

    /// Fold `folded` into the new generation `fresh.want` of the views database `base`
    /// (under `dir`), record it as current, and drop `fresh.old`.
    #[allow(clippy::too_many_arguments)]
    fn fold_into(
        dir: &Path,
        blobs: Blobs<'_>,
        folded: Folded<
            impl Iterator<Item = Result<(EventId, Envelope), LedgerError>>,
            impl Iterator<Item = Result<FeedEntry, LedgerError>>,
        >,
        upto: u64,
        (db, meta, lock): (Database, Keyspace, ViewsLock),
        fresh: Fresh,
        model: &mut ModelSlot,
        tz: jiff::tz::TimeZone,
    ) -> Result<Views, ViewError> {
        // Leftovers of a rebuild that did not finish are not views of anything: clear them.
        drop_generation(&db, dir, fresh.want.generation)?;
        let mut views = Views::at(dir, (db, meta, lock), fresh.want, tz)?;
        let mut fold = Fold::default();
        let mut chunk = fault::chunk(CHUNK);
        for item in folded.events {
            let (id, env) = item?;
            views.fold(
                &mut fold,
                blobs,
                &id,
                None,
                Some(&env),
                true,
                folded.keyword,
            )?;
            views = views.folded_one(&mut fold, model, upto, &mut chunk)?;
        }
        for entry in folded.past {
            let c = entry?;
            if let Some(old) = &c.old {
                fold.len += 1;
                fold.pending
                    .past(&views.tables, blobs, (c.lsn, &c.id, old))?;
                views = views.folded_one(&mut fold, model, upto, &mut chunk)?;
            }
        }
        views.flush(fold, model, upto)?;
        views
            .meta
            .insert("current", tables::encode_json(&views.current))
            .map_err(ViewError::store)?;
        if let Some(old) = fresh.old {
            drop_generation(&views.db, &views.dir, old.generation)?;
        }
        Ok(views)
    }

    /// After one change folded into a new generation: flush a full chunk, or let a
    /// reader that asked for the views in (the old generation is still the current one:
    /// the reader sees it whole), folding smaller chunks from then on.
    fn folded_one(
        mut self,
        fold: &mut Fold,
        model: &mut ModelSlot,
        upto: u64,
        chunk: &mut usize,
    ) -> Result<Views, ViewError> {
        if fold.full(*chunk) {
            self.flush(std::mem::take(fold), model, upto)?;
        } else if fold.len.is_multiple_of(PAUSE_CHECK) && self.reader_waits() {
            self = self.pause()?;
            *chunk = (*chunk).min(CHUNK_BESIDE_READERS);
        }
        Ok(self)
    }

    /// Whether a reader asks for the views (a test may hold the fold here until one does).
    fn reader_waits(&self) -> bool {
        fault::await_reader(&|| self.lock.wanted());
        self.lock.wanted()
    }

    /// Put the past table (and the blobs its versions name) back as `ledger`'s revisions
    /// say, dropping every row they do not: after `peat redact` scrubbed the ledger, the
    /// past versions it redacted must not survive here. One ingestion: a crash leaves the
    /// table as it was or as the ledger says, never half of each.
    pub(crate) fn refill_past(&mut self, ledger: &Ledger) -> Result<(), ViewError> {
        if fault::active(Fault::RefillLeavesPast) {
            return Ok(());
        }
        let mut writes = Writes::new();
        for table in [tables::Table::Past, tables::Table::PastBlobs] {
            for r in self.tables.scan(table, b"") {
                writes.insert(tables::tkey(table, &r?.0), None);
            }
        }
        let blobs = |id: &crate::vocab::change::BlobId| match fault::active(Fault::RefillDropsBlobs)
        {
            true => Ok(None),
            false => ledger.blob(id),
        };
        for entry in ledger.revisions() {
            let c = entry?;
            if let Some(old) = &c.old {
                tables::keep_past(&mut writes, &blobs, (c.lsn, &c.id, old))?;
            }
        }
        tables::ingest(&self.tables.ks, writes)
    }

    /// Apply the ledger changes these views have not seen.
    pub(crate) fn catch_up(
        &mut self,
        ledger: &Ledger,
        model: &mut ModelSlot,
    ) -> Result<(), ViewError> {
        self.catch_up_until(ledger, model, false, None)?;
        self.closings_after(false, ledger);
        Ok(())
    }

    /// [`Views::catch_up`], pausing for any reader that asks for the views meanwhile: the
    /// reader sees them as the last flush left them, and the fold goes on where it paused.
    fn caught_up(mut self, ledger: &Ledger, model: &mut ModelSlot) -> Result<Views, ViewError> {
        let mut held = None;
        loop {
            held = self.catch_up_until(ledger, model, true, held)?;
            if held.is_none() {
                return Ok(self);
            }
            self = self.pause()?;
        }
    }

    /// Apply the ledger changes these views have not seen, going on from `held` if a pause
    /// interrupted an earlier call. With `pausing`, stop when a reader asks for the views,
    /// handing back what was folded since the last flush; `None` once caught up.
    fn catch_up_until(
        &mut self,
        ledger: &Ledger,
        model: &mut ModelSlot,
        pausing: bool,
        held: Option<Held>,
    ) -> Result<Option<Held>, ViewError> {
        let tables_at = self.tables.applied()?;
        let keyword_at = self.keyword.applied_lsn();
        let resumed = held.is_some();
        let (mut fold, mut lsn) = match held {
            Some(Held { fold, lsn }) => (fold, lsn),
            None => {
                let last = ledger.last_lsn()?;
                if tables_at >= last && keyword_at >= last {
                    return Ok(None);
                }
                // The views must never be durable ahead of the ledger they are a view of.
                ledger.sync()?;
                (Fold::default(), tables_at.min(keyword_at))
            }
        };
        let chunk = if resumed {
            fault::chunk(CHUNK).min(CHUNK_BESIDE_READERS)
        } else {
            fault::chunk(CHUNK)
        };
        let blobs = |id: &crate::vocab::change::BlobId| ledger.blob(id);
        for change in ledger.changes_after(lsn) {
            let c = change?;
            lsn = c.lsn;
            self.fold(
                &mut fold,
                &blobs,
                &c.id,
                c.old.as_ref(),
                Some(&c.new),
                c.lsn > tables_at,
                c.lsn > keyword_at,
            )?;
            if c.lsn > tables_at
                && let Some(old) = &c.old
            {
                fold.pending
                    .past(&self.tables, &blobs, (c.lsn, &c.id, old))?;
            }
            if fold.full(chunk) {
                self.flush(std::mem::take(&mut fold), model, lsn)?;
            }
            if pausing && fold.len % PAUSE_CHECK == 0 && self.reader_waits() {
                return Ok(Some(Held { fold, lsn }));
            }
        }
        self.flush(fold, model, lsn)?;
        Ok(None)
    }

    /// Fold one change (retract `old`, apply `new`) into `fold`, for the lanes that want it;
    /// the change blobs edits name are read from `blobs`.
    #[allow(clippy::too_many_arguments)]
    fn fold(
        &mut self,
        fold: &mut Fold,
        blobs: Blobs<'_>,
        id: &EventId,
        old: Option<&Envelope>,
        new: Option<&Envelope>,
        tables: bool,
        keyword: bool,
    ) -> Result<(), ViewError> {
        fold.len += 1;
        for (env, sign) in [(old, -1), (new, 1)] {
            let Some(env) = env else { continue };
            if fault::active(Fault::DropToolCalls) && matches!(env.kind, Event::ToolCall { .. }) {
                continue;
            }
            // Each lane reads the event's text from one row (a copy of a text that may be
            // tens of KB).
            let row = TextRow::of(env.ts_ms, &env.kind);
            if tables {
                let day = self.day_of(env.ts_ms);
                let event = (id, env, row.as_ref());
                fold.pending.fold(&self.tables, blobs, event, sign, &day)?;
                if fault::active(Fault::ApplyTwice) {
                    fold.pending.fold(&self.tables, blobs, event, sign, &day)?;
                }
                if let Some(row) = row.as_ref().filter(|r| r.dense()) {
                    let key = event_key(&id.session, id.seq);
                    if sign > 0 {
                        fold.vectors.add(key, row.embed_text());
                    } else if !fault::active(Fault::SkipVectorRetract) {
                        fold.vectors.remove(key);
                    }
                }
            }
            if keyword {
                if sign < 0 {
                    if !fault::active(Fault::SkipKeywordRetract) {
                        self.keyword.retract(id)?;
                    }
                } else if let Some(row) = &row {
                    self.keyword.add(
                        id,
                        &TextDoc {
                            kind: row.kind,
                            ts_ms: row.ts_ms,
                            text: &row.text,
                            subject: row.subject.as_deref(),
                        },
                    )?;
                }
                fold.keyword = true;
            }
        }
        Ok(())
    }

    /// Write what `fold` holds, reaching `lsn`. A lane already past `lsn` (the other lane
    /// was behind, so this fold started earlier) keeps its own position: no position ever
    /// moves backwards, so no change is ever applied twice.
    fn flush(&mut self, fold: Fold, model: &mut ModelSlot, lsn: u64) -> Result<(), ViewError> {
        let mut writes = Writes::new();
        let mut cache_writes = Writes::new();
        self.vectors
            .write(fold.vectors, model, &mut writes, &mut cache_writes)?;
        let tables_lsn = onward(self.tables.applied()?, lsn);
        fold.pending.write(&self.tables, &mut writes, tables_lsn)?;
        // The cache first: it is content-addressed, so a crash after it costs nothing.
        tables::ingest(self.vectors.cache(), cache_writes)?;
        let injected = |at| {
            Err(ViewError::Store(format!(
                "injected: the flush failed {at:?}"
            )))
        };
        if fault::flush_fails(fault::Midway::BeforeTables) {
            return injected(fault::Midway::BeforeTables);
        }
        tables::ingest(&self.tables.ks, writes)?;
        if fault::flush_fails(fault::Midway::BeforeKeyword) {
            return injected(fault::Midway::BeforeKeyword);
        }
        let keyword_lsn = onward(self.keyword.applied_lsn(), lsn);
        if fold.keyword || self.keyword.applied_lsn() < keyword_lsn {
            self.keyword.commit(keyword_lsn)?;
        }
        Ok(())
    }

    /// Embed every queued text, `batch` at a time, holding these views meanwhile (scratch
    /// views, and the oracles; the store's own pass lets go of the store while the model
    /// runs, see `peat model embed`).
    /// Returns how many texts were embedded.
    pub(crate) fn embed_queued(
        &self,
        model: &mut ModelSlot,
        batch: usize,
    ) -> Result<usize, ViewError> {
        let Some(id) = self.model().map(str::to_string) else {
            return Ok(0);
        };
        let mut n = 0;
        loop {
            let taken = self.vectors.take(&id, batch)?;
            if taken.is_empty() {
                break;
            }
            let Some(done) = taken.embed_with(model)? else {
                break;
            };
            n += self.vectors.store(&id, done)?;
        }
        if n > 0 {
            self.vectors.rewrite_file()?;
        }
        Ok(n)
    }

    /// The local calendar day `ts_ms` falls on, as `YYYY-MM-DD`.
    pub(crate) fn day_of(&self, ts_ms: i64) -> String {
        match jiff::Timestamp::from_millisecond(ts_ms) {
            Ok(t) => t.to_zoned_datetime(self.tz.clone()).date().to_string(),
            Err(_) => "0000-00-00".to_string(),
        }
    }

    /// What the texts view holds at `seq` of `session`, as a citation.
    pub(crate) fn cited(&self, session: &SessionId, seq: Seq) -> Option<Cited> {
        let id = EventId {
            session: session.clone(),
            seq,
        };
        let row = self.tables.text(&id).ok().flatten()?;
        Some(Cited {
            seq,
            ts_ms: row.ts_ms,
            text: row.text,
        })
    }

    /// A session's summary, its first prompt and closing message read from the texts view
    /// (never the ledger).
    pub(crate) fn summary(&self, session: SessionId, rollup: SessionRollup) -> SessionSummary {
        let s = session.clone();
        SessionSummary::hydrate(session, rollup, |seq| {
            self.cited(&s, seq).map(|c| (c.ts_ms, c.text))
        })
    }

    /// Every session's summary, newest activity first.
    pub(crate) fn summaries(&self) -> Result<Vec<SessionSummary>, ViewError> {
        let mut out: Vec<SessionSummary> = self
            .tables
            .all_sessions()?
            .into_iter()
            .map(|(session, rollup)| self.summary(session, rollup))
            .collect();
        out.sort_by(|a, b| session::newest_first((&a.session, &a.rollup), (&b.session, &b.rollup)));
        Ok(out)
    }

    /// The embedding model the vector lane was built with (`None`: the lane is off).
    pub(crate) fn model(&self) -> Option<&str> {
        self.current.model.as_deref()
    }

    pub(crate) fn generation(&self) -> u32 {
        self.current.generation
    }
}

/// The position a lane at `applied` reaches by a flush up to `lsn`: never backwards.
fn onward(applied: u64, lsn: u64) -> u64 {
    if fault::active(Fault::RawPositions) {
        lsn
    } else {
        lsn.max(applied)
    }
}

/// A scratch views folder (an `asof` replay's), open, its vector cache seeded.
pub(crate) struct Scratch {
    dir: PathBuf,
    base: (Database, Keyspace, ViewsLock),
    /// Folded for a search: with the keyword lane (see [`Views::seed_scratch`]).
    search: bool,
}

/// What a new generation is folded from: every event's current version, then the versions
/// revisions replaced (the feed's revisions; none for a scratch fold).
struct Folded<E, P> {
    events: E,
    past: P,
    /// Whether the keyword lane is folded too (not for a scratch read for its tables).
    keyword: bool,
}

/// A generation about to be built: what it is for, and what it replaces.
struct Fresh {
    want: Current,
    old: Option<Current>,
}

/// A catch-up a reader paused: everything up to the last flush is written; what was
/// folded since (up to change `lsn`) is held here, to go on with once the reader is done.
struct Held {
    fold: Fold,
    lsn: u64,
}

/// Changes folded since the last flush.
#[derive(Default)]
struct Fold {
    pending: Pending,
    vectors: PendingVectors,
    keyword: bool,
    len: usize,
}

impl Fold {
    /// Whether to flush: `chunk` changes folded, or rows of [`tables::CHUNK_BYTES`] held
    /// (what keeps a capture's memory flat whatever the size of its events).
    fn full(&self, chunk: usize) -> bool {
        self.len >= chunk || self.pending.bytes() + self.vectors.bytes() >= tables::CHUNK_BYTES
    }
}

fn keyword_dir(store: &Path, generation: u32) -> PathBuf {
    store.join(format!("keyword.v{generation}"))
}

/// Remove every trace of generation `generation`.
fn drop_generation(db: &Database, store: &Path, generation: u32) -> Result<(), ViewError> {
    let name = format!("v{generation}");
    if db.keyspace_exists(&name) {
        let ks = db
            .keyspace(&name, crate::ledger::keyspace_options)
            .map_err(ViewError::store)?;
        db.delete_keyspace(ks).map_err(ViewError::store)?;
    }
    let dir = keyword_dir(store, generation);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|source| ViewError::Io { path: dir, source })?;
    }
    vectorfile::remove(store, generation)
}

fn rebuild_reason(had: &Current, want: &Current) -> String {
    let why = if had.schema != want.schema {
        format!("view schema v{} → v{}", had.schema, want.schema)
    } else if had.model != want.model {
        format!(
            "embedding model {} → {}",
            had.model.as_deref().unwrap_or("none"),
            want.model.as_deref().unwrap_or("none")
        )
    } else {
        format!("time zone {} → {}", had.tz, want.tz)
    };
    format!("peat: {why}: rebuilding the views from the ledger")
}

#[cfg(test)]
mod oracles;

#[cfg(test)]
mod tests {
    use super::{CHUNK, Fold, ModelSlot, Views, tables, zone_name};
    use crate::vocab::event::{Envelope, Event, EventId, Seq, SessionId};
    use jiff::tz::{Offset, TimeZone};

    /// One event whose rows (its envelope and its text, each as long as the text) pass the
    /// chunk's bytes makes the chunk full, though it holds one change of the 50,000 a count
    /// waits for: a capture of large events flushes before its memory grows with them.
    #[test]
    fn a_fold_is_full_once_its_rows_reach_the_chunk_bytes_whatever_their_count() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = crate::ledger::open_for_test(dir.path());
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let mut views = Views::open(&ledger, &mut model, TimeZone::UTC, &mut |_| {}).unwrap();
        let blobs = |_: &crate::vocab::change::BlobId| Ok(None);
        let mut fold_of = |text: String| {
            let id = EventId {
                session: SessionId("s".into()),
                seq: Seq(1),
            };
            let env = Envelope::new(id.session.clone(), 1_000, Event::Said { text });
            let mut fold = Fold::default();
            views
                .fold(&mut fold, &blobs, &id, None, Some(&env), true, false)
                .unwrap();
            fold
        };
        // One word: not embedded, so only the tables' rows count.
        let large = fold_of("x".repeat(tables::CHUNK_BYTES / 2));
        assert_eq!(large.len, 1);
        assert!(large.full(CHUNK));
        assert!(!fold_of("x".repeat(1000)).full(CHUNK));
    }

    #[test]
    fn a_fold_counts_its_texts_to_embed_against_the_chunk_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = crate::ledger::open_for_test(dir.path());
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let mut views = Views::open(&ledger, &mut model, TimeZone::UTC, &mut |_| {}).unwrap();
        let blobs = |_: &crate::vocab::change::BlobId| Ok(None);
        // Prose of many words: each text is also held to be embedded.
        let text = "the parser rejects a trailing comma in the list ".repeat(40);
        let mut fold = Fold::default();
        let mut seq = 0;
        while !fold.full(usize::MAX) {
            seq += 1;
            let id = EventId {
                session: SessionId("s".into()),
                seq: Seq(seq),
            };
            let env = Envelope::new(
                id.session.clone(),
                1_000,
                Event::Said { text: text.clone() },
            );
            views
                .fold(&mut fold, &blobs, &id, None, Some(&env), true, false)
                .unwrap();
        }
        assert!(fold.vectors.bytes() > 0, "the texts wait to be embedded");
        assert!(
            fold.pending.bytes() < tables::CHUNK_BYTES,
            "full when the rows and the texts to embed together reach the chunk, before the rows alone ({} rows' bytes after {seq} texts)",
            fold.pending.bytes()
        );
    }

    /// A ledger holding one said event at noon UTC of 1970-01-01.
    fn one_event(dir: &std::path::Path) -> crate::ledger::Ledger {
        let mut ledger = crate::ledger::open_for_test(dir);
        let mut set = crate::ledger::WriteSet::default();
        let env = Envelope::new(
            SessionId("s".into()),
            12 * 3_600_000,
            Event::Said {
                text: "at noon".into(),
            },
        );
        set.event(Seq(1), env);
        ledger.write(set).unwrap();
        ledger
    }

    fn days(views: &Views) -> Vec<String> {
        let days = views.tables.all_days().unwrap();
        days.into_iter().map(|(d, _)| d).collect()
    }

    #[test]
    fn summaries_list_every_session_newest_first_with_its_first_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = crate::ledger::open_for_test(dir.path());
        let mut set = crate::ledger::WriteSet::default();
        for (session, hour, text) in [("older", 1, "fix the parser"), ("newer", 5, "add a cache")] {
            let prompt = Event::UserMsg {
                text: text.into(),
                harness: false,
                context: None,
            };
            set.event(
                Seq(1),
                Envelope::new(SessionId(session.into()), hour * 3_600_000, prompt),
            );
        }
        ledger.write(set).unwrap();
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let views = Views::open(&ledger, &mut model, TimeZone::UTC, &mut |_| {}).unwrap();
        let listed: Vec<(String, String)> = views
            .summaries()
            .unwrap()
            .into_iter()
            .map(|s| {
                (
                    s.session.0,
                    s.first_prompt.map(|c| c.text).unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("newer".to_string(), "add a cache".to_string()),
                ("older".to_string(), "fix the parser".to_string())
            ]
        );
    }

    #[test]
    fn views_opened_in_another_zone_are_rebuilt_with_its_days() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = one_event(dir.path());
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let utc = Views::open(&ledger, &mut model, TimeZone::UTC, &mut |_| {}).unwrap();
        assert_eq!(days(&utc), ["1970-01-01"]);
        let first = utc.generation();
        drop(utc);
        let east = TimeZone::fixed(Offset::constant(14));
        let views = Views::open(&ledger, &mut model, east, &mut |_| {}).unwrap();
        assert_eq!(days(&views), ["1970-01-02"]);
        assert_eq!(views.generation(), first + 1);
    }

    #[test]
    fn views_stamped_by_another_ledger_are_rebuilt_into_a_newer_generation() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = one_event(dir.path());
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let views = Views::open(&ledger, &mut model, TimeZone::UTC, &mut |_| {}).unwrap();
        let first = views.generation();
        views
            .meta
            .insert(super::stamp::STAMP, "another ledger")
            .unwrap();
        drop(views);
        let mut notes = Vec::new();
        let views = Views::open(&ledger, &mut model, TimeZone::UTC, &mut |n| {
            notes.push(n.to_string())
        })
        .unwrap();
        assert!(notes[0].contains("another ledger"), "{notes:?}");
        assert_eq!(views.generation(), first + 1);
        assert_eq!(days(&views), ["1970-01-01"]);
    }

    #[test]
    fn a_reader_beside_a_writer_is_served_finished_views_and_never_a_rewrite_midway() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = one_event(dir.path());
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        drop(Views::open(&ledger, &mut model, TimeZone::UTC, &mut |_| {}).unwrap());
        // One change the views do not show yet.
        let mut set = crate::ledger::WriteSet::default();
        let later = Envelope::new(SessionId("s".into()), 1, Event::Said { text: "x".into() });
        set.event(Seq(2), later);
        ledger.write(set).unwrap();
        let (views, behind) = Views::beside_writer(&ledger, None, TimeZone::UTC)
            .unwrap()
            .expect("finished views are served as they stand");
        assert_eq!((days(&views), behind), (vec!["1970-01-01".to_string()], 1));
        assert_eq!(
            views.behind(),
            1,
            "what every read says of the change it lacks"
        );
        drop(views);
        // Folded in another zone than the reader's: its days would be wrong; it waits.
        let east = TimeZone::fixed(Offset::constant(14));
        assert!(Views::beside_writer(&ledger, None, east).unwrap().is_none());
        // A rewrite of the views left unfinished (a scrub's marker): the reader waits.
        std::fs::create_dir(dir.path().join("views.scrub")).unwrap();
        let served = Views::beside_writer(&ledger, None, TimeZone::UTC).unwrap();
        assert!(served.is_none());
    }

    #[test]
    fn zones_without_a_name_are_told_apart_by_their_days() {
        let plus_five = TimeZone::fixed(Offset::constant(5));
        let minus_five = TimeZone::fixed(Offset::constant(-5));
        let eastern_rule = TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").unwrap();
        assert_ne!(zone_name(&plus_five), zone_name(&minus_five));
        assert_ne!(zone_name(&minus_five), zone_name(&eastern_rule));
        assert_eq!(
            zone_name(&plus_five),
            zone_name(&TimeZone::fixed(Offset::constant(5)))
        );
        assert_eq!(
            zone_name(&TimeZone::get("Asia/Tokyo").unwrap()),
            "Asia/Tokyo"
        );
    }
}
