//! The ledger: every event ever captured, keyed by id, with a change feed written in the
//! same atomic batch, the blob store for what edits wrote, and the capture cursors.
//!
//! Upsert by id: identical bytes are a no-op; different bytes replace the stored envelope
//! and append a feed entry carrying both versions, so views can retract the old before
//! applying the new. Nothing is ever deleted from the ledger.

pub(crate) mod damage;
pub(crate) mod locate;
pub mod lock;
pub(crate) mod private;
pub(crate) mod scrub;
pub(crate) mod space;

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::vocab::change::BlobId;
use crate::vocab::event::{Envelope, EventId, Seq, SessionId};

pub(crate) use locate::{Location, locate, recorded};
pub(crate) use lock::LockError;

const EVENTS: &str = "events";
const FEED: &str = "feed";
const BLOBS: &str = "blobs";
const CURSORS: &str = "cursors";
/// The ledger's own facts: its identity.
const META: &str = "meta";
/// The file beside the ledger that holds its identity, for readers that do not open it.
const ID_HINT: &str = "ledger.id";

/// Journal size past which closing the ledger flushes its memtables into tables. fjall
/// still reads its active journal whole on every open (it rotates only at 64 MB), but
/// entries already in tables are not inserted again: on a 44k-event ledger this took a
/// one-shot open from ~230 ms to ~160 ms.
pub(crate) const SETTLE_AT: u64 = 1 << 20;

/// How long closing waits for that flush.
const SETTLE_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub(crate) enum LedgerError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("no ledger at {}", .0.display())]
    Missing(PathBuf),
    #[error("cannot create the ledger at {}: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the ledger store at {} failed: {detail}", path.display())]
    Store { path: PathBuf, detail: String },
    #[error(
        "the disk holding the ledger at {} is full{}: {} free, and this write needs about {}",
        path.display(),
        short.mount.as_ref().map(|m| format!(" (the file system mounted at {})", m.display())).unwrap_or_default(),
        space::human(short.free),
        space::human(short.needed)
    )]
    DiskFull {
        path: PathBuf,
        short: space::Shortage,
    },
    #[error("a stored envelope ({id}) does not parse: {detail}")]
    Corrupt { id: String, detail: String },
}

/// What a storage-engine error means, as a sentence: fjall's own text is its Debug form
/// (`FjallError: Storage(Io(Os { code: 28, … }))`), which tells a user nothing.
pub(crate) fn storage_sentence(e: &fjall::Error) -> String {
    use fjall::Error as F;
    match e {
        F::Io(io) | F::Storage(fjall::LsmError::Io(io)) => io_sentence(io),
        F::Storage(fjall::LsmError::ChecksumMismatch { .. }) => {
            "a table's checksum does not match: its bytes were damaged on disk".into()
        }
        F::Storage(_) => "a table file is damaged or unreadable".into(),
        F::JournalRecovery(_) | F::InvalidTrailer | F::InvalidTag(_) | F::Decompress(_) => {
            "the journal (the store's recent writes) is damaged".into()
        }
        F::InvalidVersion(_) => "the store's version file is missing or damaged".into(),
        F::Poisoned => "an earlier write failed (often a full disk), so the store refuses more writes until it is reopened".into(),
        F::Locked => "another process has the database open".into(),
        F::Unrecoverable => "the store cannot be recovered from its files".into(),
        F::KeyspaceDeleted => "a table was deleted while in use".into(),
        _ => "the storage engine failed".into(),
    }
}

/// An I/O failure as a sentence; a full disk says so plainly.
fn io_sentence(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
            "the disk is full (no space left on the device)".into()
        }
        _ => format!("a file operation failed: {e}"),
    }
}

/// Whether opening may create the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Create,
    Existing,
}

/// How to wait for the lock, and what to say while waiting.
pub(crate) struct Access<'a> {
    pub(crate) mode: Mode,
    pub(crate) wait: Duration,
    /// What this process is doing, written into the lock for others to read.
    pub(crate) who: &'a str,
    pub(crate) on_wait: &'a mut dyn FnMut(),
}

/// What one write changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) new: usize,
    pub(crate) replaced: usize,
    pub(crate) unchanged: usize,
}

impl std::ops::AddAssign for Written {
    fn add_assign(&mut self, o: Written) {
        self.new += o.new;
        self.replaced += o.replaced;
        self.unchanged += o.unchanged;
    }
}

/// Everything one atomic write carries.
#[derive(Default)]
pub(crate) struct WriteSet {
    /// Each envelope with its seq (the session is the envelope's).
    pub(crate) events: Vec<(Seq, Envelope)>,
    pub(crate) blobs: Vec<(BlobId, Vec<u8>)>,
    /// The capture cursor for a transcript, updated with the events it covers.
    pub(crate) cursor: Option<(String, Vec<u8>)>,
}

impl WriteSet {
    pub(crate) fn event(&mut self, seq: Seq, env: Envelope) {
        self.events.push((seq, env));
    }
}

/// One change-feed entry: an event was inserted (`old` is None) or replaced.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FeedEntry {
    pub(crate) lsn: u64,
    pub(crate) id: EventId,
    pub(crate) old: Option<Envelope>,
    pub(crate) new: Envelope,
}

/// The ledger's database, opened on first use.
struct Db {
    db: Database,
    events: Keyspace,
    feed: Keyspace,
    blobs: Keyspace,
    cursors: Keyspace,
    next_lsn: u64,
    /// A random id written when the ledger was created: views stamped with another were
    /// folded from another ledger.
    id: String,
}

/// A locked store whose ledger database is opened only when something reads or writes it.
///
/// Opening fjall replays its journal (up to 64 MB of recent writes), which would dominate
/// a one-shot read. Readers that only need the views learn the ledger's last LSN from a
/// hint file written after every commit, and never open the ledger when the views are
/// current.
pub(crate) struct Ledger {
    path: PathBuf,
    db: std::cell::OnceCell<Db>,
    /// A write failed (fjall is then poisoned): closing must not try to flush, which
    /// would wait forever for a flush that cannot happen.
    failed: std::cell::Cell<bool>,
    /// Keeps the files the store creates private until the ledger closes.
    _private: private::PrivateUmask,
    /// Entries of an older, wider-open store made private on open.
    pub(crate) tightened: usize,
    /// What this process is doing, for the holder line of a lock taken late (see
    /// [`Ledger::open_beside_writer`]).
    who: String,
    // Declared last so the database closes before the lock is released. Empty for a
    // reader that found a writer busy (see [`Ledger::open_beside_writer`]).
    lock: std::cell::OnceCell<lock::StoreLock>,
}

/// The file beside the ledger that holds its last LSN, for readers that do not open it.
const LSN_HINT: &str = "ledger.lsn";

impl Ledger {
    /// Take the store at `path` (see [`locate`]) with its single-writer lock. The ledger's
    /// database itself opens on first use.
    pub(crate) fn open(path: &Path, access: Access<'_>) -> Result<Ledger, LedgerError> {
        if !recorded(path) {
            if access.mode == Mode::Existing {
                return Err(LedgerError::Missing(path.to_path_buf()));
            }
            private::create_dir(path).map_err(|source| LedgerError::Create {
                path: path.to_path_buf(),
                source,
            })?;
            ignore_store(path);
        }
        let umask = private::private_umask();
        let who = access.who.to_string();
        let (lock, tightened) = Ledger::lock(path, access)?;
        Ok(Ledger {
            path: path.to_path_buf(),
            db: std::cell::OnceCell::new(),
            failed: std::cell::Cell::new(false),
            _private: umask,
            tightened,
            who,
            lock: std::cell::OnceCell::from(lock),
        })
    }

    /// The store at `path` for a reader, without its lock: another process (a writer) holds
    /// it. Only what lives beside the database (its last LSN, its identity) can be read; a
    /// read of the database itself takes the lock if it has come free meanwhile, and is
    /// refused at once ([`LockError::Busy`]) if not: a reader holding the views must never
    /// wait for the store lock (see [`lock`]).
    /// `who` says what this process is doing, in the lock's holder line if it takes it.
    pub(crate) fn open_beside_writer(path: &Path, who: &str) -> Result<Ledger, LedgerError> {
        if !recorded(path) {
            return Err(LedgerError::Missing(path.to_path_buf()));
        }
        Ok(Ledger {
            path: path.to_path_buf(),
            db: std::cell::OnceCell::new(),
            failed: std::cell::Cell::new(false),
            _private: private::private_umask(),
            tightened: 0,
            who: who.to_string(),
            lock: std::cell::OnceCell::new(),
        })
    }

    /// Whether this process holds the store's lock.
    pub(crate) fn is_locked(&self) -> bool {
        self.lock.get().is_some()
    }

    /// Take the lock, then make an older store private (best effort: a store that cannot
    /// be tightened is still readable).
    fn lock(path: &Path, access: Access<'_>) -> Result<(lock::StoreLock, usize), LedgerError> {
        let lock = lock::acquire(&path.join("lock"), access.wait, access.who, access.on_wait)?;
        Ok((lock, private::tighten(path).unwrap_or(0)))
    }

    fn db(&self) -> Result<&Db, LedgerError> {
        if let Some(db) = self.db.get() {
            return Ok(db);
        }
        if self.lock.get().is_none() {
            let taken = lock::acquire(
                &self.path.join("lock"),
                Duration::ZERO,
                &self.who,
                &mut || {},
            )?;
            let _ = self.lock.set(taken);
        }
        let opened = open_db(&self.path)?;
        let _ = self.db.set(opened);
        self.db.get().ok_or_else(|| LedgerError::Store {
            path: self.path.clone(),
            detail: "the ledger database did not stay open".into(),
        })
    }

    fn db_mut(&mut self) -> Result<&mut Db, LedgerError> {
        self.db()?;
        let path = self.path.clone();
        self.db.get_mut().ok_or(LedgerError::Store {
            path,
            detail: "the ledger database did not stay open".into(),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    #[cfg(test)]
    /// Whether the ledger's database was opened: a read the views answer never opens it.
    pub(crate) fn is_open(&self) -> bool {
        self.db.get().is_some()
    }

    /// The ledger's fjall database (for maintenance such as `peat compact`).
    pub(crate) fn database(&self) -> Result<&Database, LedgerError> {
        Ok(&self.db()?.db)
    }

    fn store_err(&self, e: fjall::Error) -> LedgerError {
        self.failed.set(true);
        fault(&self.path, e, 0)
    }

    /// Write `set` in one atomic batch: events (upserted), their feed entries, new blobs,
    /// and the cursor. A failed write leaves the store as it was before it.
    pub(crate) fn write(&mut self, set: WriteSet) -> Result<Written, LedgerError> {
        let result = self.write_batch(set);
        if result.is_err() {
            self.failed.set(true);
        }
        result
    }

    fn write_batch(&mut self, set: WriteSet) -> Result<Written, LedgerError> {
        let path = self.path.clone();
        // What the batch carries, counted as it is built, for a full disk to say.
        let carried = std::cell::Cell::new(set.blobs.iter().map(|(_, b)| b.len() as u64).sum());
        let store_err = |e: fjall::Error| fault(&path, e, carried.get());
        let d = self.db_mut()?;
        let mut batch = d.db.batch();
        let mut written = Written::default();
        // Positions are taken from a local counter and handed back only once the batch is
        // committed: a failed commit consumes none, so the feed never has a gap.
        let mut next_lsn = d.next_lsn;
        // Within one set, a later version of an id replaces the earlier one.
        let mut pending: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        for (seq, env) in set.events {
            let key = event_key(&env.session, seq);
            let bytes = encode(&env);
            carried.set(carried.get() + bytes.len() as u64);
            let old = match pending.get(&key) {
                Some(b) => Some(b.clone()),
                None => d.events.get(&key).map_err(store_err)?.map(|v| v.to_vec()),
            };
            if old.as_deref() == Some(bytes.as_slice()) {
                written.unchanged += 1;
                continue;
            }
            if old.is_some() {
                written.replaced += 1;
            } else {
                written.new += 1;
            }
            batch.insert(
                &d.feed,
                next_lsn.to_be_bytes(),
                encode_feed(&key, old.as_deref(), &bytes),
            );
            next_lsn += 1;
            batch.insert(&d.events, key.clone(), bytes.clone());
            pending.insert(key, bytes);
        }
        for (id, bytes) in set.blobs {
            if !d.blobs.contains_key(id.0).map_err(store_err)? {
                batch.insert(&d.blobs, id.0, bytes);
            }
        }
        if let Some((key, value)) = set.cursor {
            batch.insert(&d.cursors, key, value);
        }
        // The hint moves before the batch commits: a writer killed once the batch is in
        // the journal must not leave a hint behind it, or readers would take the views for
        // caught up and never fold the batch. A hint ahead only makes a reader open the
        // ledger, which sets it right.
        let ahead = next_lsn != d.next_lsn;
        if ahead {
            write_hint(&path, next_lsn - 1, false);
        }
        after_hint(&path);
        let committed = if fail_commit() {
            Err(fjall::Error::Poisoned)
        } else {
            batch.commit()
        };
        if let Err(e) = committed {
            if ahead {
                write_hint(&path, d.next_lsn - 1, false);
            }
            return Err(store_err(e));
        }
        d.next_lsn = next_lsn;
        Ok(written)
    }

    /// Make everything written so far durable (the journal, not a flush of the tables).
    ///
    /// The hint is made durable first: after a power loss, a hint that reached the disk
    /// behind the journal would make readers take the views for caught up and answer
    /// without the batches between (until a writer next opens the ledger); one ahead only
    /// makes a reader open the ledger.
    pub(crate) fn sync(&self) -> Result<(), LedgerError> {
        let Some(d) = self.db.get() else {
            return Ok(());
        };
        write_hint(&self.path, d.next_lsn - 1, true);
        d.db.persist(PersistMode::SyncAll)
            .map_err(|e| self.store_err(e))
    }

    /// Flush the memtables to tables once the journal has grown past [`SETTLE_AT`], so the
    /// next open need not rebuild them from the journal. Called when a ledger closes.
    ///
    /// A flush that cannot finish (a disk that filled up) is waited for only [`SETTLE_WAIT`]:
    /// the journal still holds everything, so giving up loses nothing.
    pub(crate) fn settle(&self) -> Result<(), LedgerError> {
        let Some(d) = self.db.get() else {
            return Ok(());
        };
        let journal = d.db.journal_disk_space().map_err(|e| self.store_err(e))?;
        if journal < SETTLE_AT {
            return Ok(());
        }
        // Tables take about what the journal holds: without that room, do not start.
        if space::free_bytes(&self.path).is_some_and(|f| f < journal + space::SLACK) {
            return Ok(());
        }
        let mut sealed = Vec::new();
        for name in d.db.list_keyspace_names() {
            let ks =
                d.db.keyspace(&name, keyspace_options)
                    .map_err(|e| self.store_err(e))?;
            ks.rotate_memtable().map_err(|e| self.store_err(e))?;
            sealed.push(ks);
        }
        let started = std::time::Instant::now();
        while sealed.iter().any(|ks| ks.sealed_memtable_count() > 0) {
            if started.elapsed() > SETTLE_WAIT {
                return Err(LedgerError::Store {
                    path: self.path.clone(),
                    detail: "flushing the journal into tables did not finish".into(),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// Rewrite the whole database so that no old byte survives (see [`scrub`]): every
    /// stored envelope (the events, both versions of every feed entry) through `envelope`,
    /// every cursor through `cursor`, without the blobs `drop_blob` says to drop. `None`
    /// from a transform keeps the entry as it is; an entry that does not decode is kept.
    pub(crate) fn scrub(
        &mut self,
        envelope: &dyn Fn(&Envelope) -> Option<Envelope>,
        cursor: &dyn Fn(&[u8]) -> Option<Vec<u8>>,
        drop_blob: &dyn Fn(&[u8]) -> bool,
    ) -> Result<(), LedgerError> {
        self.sync()?;
        drop(self.db.take());
        let redo = |key: &[u8], bytes: &[u8]| -> Option<Vec<u8>> {
            let env = decode(key, bytes).ok()?;
            envelope(&env).map(|e| encode(&e))
        };
        let mut transform = |ks: &str, key: &[u8], value: &[u8]| -> Option<Vec<u8>> {
            let kept = Some(value.to_vec());
            match ks {
                EVENTS => redo(key, value).or(kept),
                FEED => {
                    let Some((k, old, new)) = decode_feed(value) else {
                        return kept;
                    };
                    let old2 = old.map(|o| redo(k, o).unwrap_or_else(|| o.to_vec()));
                    let new2 = redo(k, new).unwrap_or_else(|| new.to_vec());
                    Some(encode_feed(k, old2.as_deref(), &new2))
                }
                BLOBS if drop_blob(value) => None,
                CURSORS => cursor(value).or(kept),
                _ => kept,
            }
        };
        scrub::rewrite(&self.path.join("fjall"), &mut transform).map_err(|e| self.store_err(e))
    }

    pub(crate) fn get(&self, id: &EventId) -> Result<Option<Envelope>, LedgerError> {
        let key = event_key(&id.session, id.seq);
        match self.db()?.events.get(&key).map_err(|e| self.store_err(e))? {
            Some(v) => decode(&key, &v).map(Some),
            None => Ok(None),
        }
    }

    /// Every event, in key order (by session, then seq).
    pub(crate) fn events(
        &self,
    ) -> impl Iterator<Item = Result<(EventId, Envelope), LedgerError>> + '_ {
        self.scan(|d| d.events.iter())
    }

    /// Decode the pairs `iter` yields from the opened database; an open failure is the one
    /// item of the iteration.
    fn scan<'a>(
        &'a self,
        iter: impl FnOnce(&'a Db) -> fjall::Iter,
    ) -> impl Iterator<Item = Result<(EventId, Envelope), LedgerError>> + 'a {
        let (inner, err) = match self.db() {
            Ok(d) => (Some(iter(d)), None),
            Err(e) => (None, Some(Err(e))),
        };
        err.into_iter().chain(
            inner
                .into_iter()
                .flatten()
                .map(move |kv| self.decode_pair(kv)),
        )
    }

    /// The events of one session, by seq.
    pub(crate) fn session_events(
        &self,
        session: &SessionId,
    ) -> impl Iterator<Item = Result<(EventId, Envelope), LedgerError>> + '_ {
        let mut prefix = session.as_str().as_bytes().to_vec();
        prefix.push(0);
        self.scan(move |d| d.events.prefix(prefix))
    }

    /// The distinct sessions, in id order, without decoding any envelope.
    pub(crate) fn sessions(&self) -> Result<Vec<SessionId>, LedgerError> {
        let mut out: Vec<SessionId> = Vec::new();
        let mut from: Vec<u8> = Vec::new();
        loop {
            let next = self.db()?.events.range(from.as_slice()..).next();
            let Some(kv) = next else { break };
            let key = kv.key().map_err(|e| self.store_err(e))?;
            let (session, _) = decode_key(&key).ok_or_else(|| self.corrupt_key(&key))?;
            // Skip to the first key past this session: its bytes, then 0x01.
            from = session.as_str().as_bytes().to_vec();
            from.push(1);
            out.push(session);
        }
        Ok(out)
    }

    /// How many events the ledger holds.
    pub(crate) fn len(&self) -> Result<usize, LedgerError> {
        self.db()?.events.len().map_err(|e| self.store_err(e))
    }

    pub(crate) fn is_empty(&self) -> Result<bool, LedgerError> {
        self.db()?.events.is_empty().map_err(|e| self.store_err(e))
    }

    /// Change-feed entries after `lsn`, oldest first.
    pub(crate) fn changes_after(
        &self,
        lsn: u64,
    ) -> impl Iterator<Item = Result<FeedEntry, LedgerError>> + '_ {
        self.changes_where(lsn, |_| true)
    }

    /// Every revision in the feed (entries that replaced an earlier version), oldest first.
    /// Insertions are recognised from the raw entry and never decoded, so this costs a scan
    /// of the feed plus the decoding of the revisions alone.
    pub(crate) fn revisions(&self) -> impl Iterator<Item = Result<FeedEntry, LedgerError>> + '_ {
        self.changes_where(0, |old| old.is_some())
    }

    /// Feed entries after `lsn` whose replaced version (`None`: an insertion) `keep` accepts.
    fn changes_where(
        &self,
        lsn: u64,
        keep: impl Fn(Option<&[u8]>) -> bool + 'static,
    ) -> impl Iterator<Item = Result<FeedEntry, LedgerError>> + '_ {
        let (inner, err) = match self.db() {
            Ok(d) => (
                Some(d.feed.range((lsn.saturating_add(1)).to_be_bytes()..)),
                None,
            ),
            Err(e) => (None, Some(Err(e))),
        };
        err.into_iter().chain(
            inner
                .into_iter()
                .flatten()
                .map(move |kv| kv.into_inner().map_err(|e| self.store_err(e)))
                .filter(move |kv| {
                    kv.as_ref().map_or(true, |(_, v)| {
                        decode_feed(v).is_none_or(|(_, o, _)| keep(o))
                    })
                })
                .map(move |kv| {
                    let (key, value) = kv?;
                    self.decode_change(&key, &value)
                }),
        )
    }

    /// The newest change's LSN (0 when the feed is empty). Read from the hint file while
    /// the database is not open; a missing hint opens it.
    pub(crate) fn last_lsn(&self) -> Result<u64, LedgerError> {
        if let Some(d) = self.db.get() {
            return Ok(d.next_lsn - 1);
        }
        if let Some(lsn) = read_hint(&self.path) {
            return Ok(lsn);
        }
        self.last_lsn_stored()
    }

    /// The newest change's LSN as the database holds it, never the hint: for a fold that
    /// records it as the position it reached.
    pub(crate) fn last_lsn_stored(&self) -> Result<u64, LedgerError> {
        Ok(self.db()?.next_lsn - 1)
    }

    /// The ledger's identity. Read from the hint file while the database is not open; a
    /// missing hint opens it.
    pub(crate) fn identity(&self) -> Result<String, LedgerError> {
        if let Some(d) = self.db.get() {
            return Ok(d.id.clone());
        }
        if let Ok(id) = std::fs::read_to_string(self.path.join(ID_HINT))
            && !id.trim().is_empty()
        {
            return Ok(id.trim().to_string());
        }
        Ok(self.db()?.id.clone())
    }

    pub(crate) fn blob(&self, id: &BlobId) -> Result<Option<Vec<u8>>, LedgerError> {
        Ok(self
            .db()?
            .blobs
            .get(id.0)
            .map_err(|e| self.store_err(e))?
            .map(|v| v.to_vec()))
    }

    pub(crate) fn cursor(&self, key: &str) -> Result<Option<Vec<u8>>, LedgerError> {
        Ok(self
            .db()?
            .cursors
            .get(key)
            .map_err(|e| self.store_err(e))?
            .map(|v| v.to_vec()))
    }

    fn decode_pair(&self, kv: fjall::Guard) -> Result<(EventId, Envelope), LedgerError> {
        let (key, value) = kv.into_inner().map_err(|e| self.store_err(e))?;
        let (session, seq) = decode_key(&key).ok_or_else(|| self.corrupt_key(&key))?;
        Ok((EventId { session, seq }, decode(&key, &value)?))
    }

    fn decode_change(&self, key: &[u8], value: &[u8]) -> Result<FeedEntry, LedgerError> {
        let lsn = decode_lsn(key);
        let bad = || LedgerError::Corrupt {
            id: format!("feed entry {lsn}"),
            detail: "truncated".into(),
        };
        let (event_key, old, new) = decode_feed(value).ok_or_else(bad)?;
        let (session, seq) = decode_key(event_key).ok_or_else(bad)?;
        Ok(FeedEntry {
            lsn,
            id: EventId { session, seq },
            old: old.map(|o| decode(event_key, o)).transpose()?,
            new: decode(event_key, new)?,
        })
    }

    fn corrupt_key(&self, key: &[u8]) -> LedgerError {
        LedgerError::Corrupt {
            id: String::from_utf8_lossy(key).into_owned(),
            detail: "malformed key".into(),
        }
    }
}

/// A storage-engine failure of the store at `path`, during a write carrying `carried`
/// bytes: a full disk is named as such, with the room it needs.
fn fault(path: &Path, e: fjall::Error, carried: u64) -> LedgerError {
    match space::shortage(path, &e, carried) {
        Some(short) => LedgerError::DiskFull {
            path: path.to_path_buf(),
            short,
        },
        None => LedgerError::Store {
            path: path.to_path_buf(),
            detail: storage_sentence(&e),
        },
    }
}

/// How every keyspace of a store is made. A small memtable per keyspace keeps memory flat
/// however much one capture writes (the default, 64 MiB each, buffers a large transcript
/// several times over).
pub(crate) fn keyspace_options() -> KeyspaceCreateOptions {
    KeyspaceCreateOptions::default().max_memtable_size(8 << 20)
}

/// How the keyspace `name` of a store's database is made: [`keyspace_options`], and for the
/// ledger's record (events, feed, blobs) tables compressed (lz4) at every level. fjall leaves
/// the first two levels uncompressed, which on a ledger of tens of MB is all of it: on the
/// benchmark corpus (58k events, a quarter of them what tools printed) this took the store
/// from 192 to 159 MB. The views are left as they are: they are read on every fold.
pub(crate) fn options_of(name: &str) -> KeyspaceCreateOptions {
    let options = keyspace_options();
    if matches!(name, EVENTS | FEED | BLOBS) {
        options.data_block_compression_policy(fjall::config::CompressionPolicy::all(
            fjall::CompressionType::Lz4,
        ))
    } else {
        options
    }
}

/// How a store's database (the ledger's, the views') is opened: with one background worker.
/// With more, fjall's first worker hands every compaction request back to the queue for
/// the others (keeping itself free for flushes) and, while they compact, spins doing just
/// that: on the benchmark import a sixth of the CPU time went to that loop. A block cache
/// of 8 MiB, not fjall's 32: a capture opens two databases, and an import fills both
/// caches, which a process's peak memory then holds; a one-shot read touches few blocks
/// twice, and the page cache keeps the files (bench/scale.sh measures both).
pub(crate) fn database(dir: &Path) -> fjall::DatabaseBuilder<Database> {
    Database::builder(dir).worker_threads(1).cache_size(8 << 20)
}

/// Open (creating if needed) the ledger database of the store at `path`.
fn open_db(path: &Path) -> Result<Db, LedgerError> {
    let store = |e: fjall::Error| fault(path, e, 0);
    scrub::recover(&path.join("fjall")).map_err(|e| store(e.into()))?;
    clear_unfinished_creation(&path.join("fjall")).map_err(|e| store(e.into()))?;
    let db = database(&path.join("fjall"))
        .max_journaling_size(64 << 20)
        .open()
        .map_err(store)?;
    let ks = |name: &str| db.keyspace(name, || options_of(name));
    let events = ks(EVENTS).map_err(store)?;
    let feed = ks(FEED).map_err(store)?;
    let blobs = ks(BLOBS).map_err(store)?;
    let cursors = ks(CURSORS).map_err(store)?;
    let meta = ks(META).map_err(store)?;
    let id = match meta.get("id").map_err(store)? {
        Some(v) => String::from_utf8_lossy(&v).into_owned(),
        None => {
            let id = new_identity();
            meta.insert("id", id.as_bytes()).map_err(store)?;
            id
        }
    };
    if std::fs::read_to_string(path.join(ID_HINT)).ok().as_deref() != Some(id.as_str()) {
        let tmp = path.join(format!("{ID_HINT}.tmp"));
        if std::fs::write(&tmp, &id).is_ok() {
            let _ = std::fs::rename(&tmp, path.join(ID_HINT));
        }
    }
    let next_lsn = match feed.last_key_value() {
        Some(kv) => {
            let key = kv.key().map_err(store)?;
            decode_lsn(&key) + 1
        }
        None => 1,
    };
    write_hint(path, next_lsn - 1, false);
    Ok(Db {
        db,
        events,
        feed,
        blobs,
        cursors,
        next_lsn,
        id,
    })
}

/// 128 random bits as hex, from the OS (the time and pid if it cannot be read).
fn new_identity() -> String {
    use sha2::Digest;
    let mut seed = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut seed));
    if read.is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let digest = sha2::Sha256::digest(format!("{:?} {}", now, std::process::id()));
        seed.copy_from_slice(&digest[..16]);
    }
    hex::encode(seed)
}

/// A fjall database whose creation was cut short (a process killed between creating its first
/// journal and writing its `version` marker, which fjall writes last) cannot be opened again:
/// fjall sees no marker, creates anew and fails on the journal already there. Nothing was
/// ever written to such a database (writes start only once creation has finished), so the
/// unfinished folder is removed and creation starts over.
pub(crate) fn clear_unfinished_creation(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() && !dir.join("version").exists() {
        std::fs::remove_dir_all(dir)?;
    }
    Ok(())
}

/// Record the ledger's last LSN for readers. Best effort: a missing or stale hint only
/// makes a reader open the ledger (missing) or catch up at the next write (stale). With
/// `durable`, it is on disk when this returns (the file's bytes, then the rename), for
/// [`Ledger::sync`].
fn write_hint(path: &Path, lsn: u64, durable: bool) {
    let tmp = path.join(format!("{LSN_HINT}.tmp"));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        std::io::Write::write_all(&mut f, lsn.to_string().as_bytes())?;
        if durable { f.sync_all() } else { Ok(()) }
    });
    if written.is_ok() && std::fs::rename(&tmp, path.join(LSN_HINT)).is_ok() && durable {
        let _ = std::fs::File::open(path).and_then(|dir| dir.sync_all());
    }
}

fn read_hint(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path.join(LSN_HINT))
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl Drop for Ledger {
    fn drop(&mut self) {
        // Best effort: a failed flush leaves a longer journal, never lost data. After a
        // failed write fjall is poisoned and a flush would never finish. The umask goes
        // back either way (the `_private` guard, dropped after this and after the database,
        // whose last files are created private): the process may go on to write files
        // that are not the store's.
        if self.failed.get() {
            return;
        }
        let _ = self.settle();
        drop(self.db.take());
    }
}

/// Whether a test asked this thread's next ledger commit to fail.
#[cfg(test)]
fn fail_commit() -> bool {
    FAIL_COMMIT.with(|f| f.replace(false))
}

#[cfg(not(test))]
fn fail_commit() -> bool {
    false
}

#[cfg(test)]
thread_local! {
    /// Test-only: make the next [`Ledger::write`] on this thread fail before it commits.
    pub(crate) static FAIL_COMMIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Test-only: the hint as the last [`Ledger::write`] on this thread left it just before
    /// committing, where a writer killed mid-commit leaves it.
    pub(crate) static HINT_AT_COMMIT: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Record the hint as a commit starts (tests only).
#[cfg(test)]
fn after_hint(path: &Path) {
    HINT_AT_COMMIT.with(|h| h.set(read_hint(path)));
}

#[cfg(not(test))]
fn after_hint(_: &Path) {}

/// A store is never committed to a repository: `.peat/` ignores itself.
fn ignore_store(store: &Path) {
    if let Some(parent) = store.parent()
        && parent.file_name().is_some_and(|n| n == ".peat")
    {
        let gi = parent.join(".gitignore");
        if !gi.exists() {
            let _ = std::fs::write(gi, "*\n");
        }
    }
}

fn encode(env: &Envelope) -> Vec<u8> {
    // Plain data with string keys: serialization cannot fail.
    serde_json::to_vec(env).unwrap_or_default()
}

fn decode(key: &[u8], bytes: &[u8]) -> Result<Envelope, LedgerError> {
    serde_json::from_slice(bytes).map_err(|e| LedgerError::Corrupt {
        id: String::from_utf8_lossy(key).replace('\0', " "),
        detail: e.to_string(),
    })
}

/// Session bytes, a NUL, then the seq big-endian: keys sort by session, then seq.
pub(crate) fn event_key(session: &SessionId, seq: Seq) -> Vec<u8> {
    let s = session.as_str().as_bytes();
    let mut key = Vec::with_capacity(s.len() + 5);
    key.extend_from_slice(s);
    key.push(0);
    key.extend_from_slice(&seq.0.to_be_bytes());
    key
}

/// The id an [`event_key`] encodes, if `key` is one.
pub(crate) fn decode_event_key(key: &[u8]) -> Option<EventId> {
    let split = key.len().checked_sub(5)?;
    let (session, rest) = key.split_at(split);
    if rest.first() != Some(&0) {
        return None;
    }
    let seq = u32::from_be_bytes(rest.get(1..5)?.try_into().ok()?);
    let session = String::from_utf8(session.to_vec()).ok()?;
    Some(EventId {
        session: SessionId(session),
        seq: Seq(seq),
    })
}

fn decode_key(key: &[u8]) -> Option<(SessionId, Seq)> {
    decode_event_key(key).map(|id| (id.session, id.seq))
}

fn decode_lsn(key: &[u8]) -> u64 {
    key.try_into().map(u64::from_be_bytes).unwrap_or(0)
}

/// `key_len u32 | key | old_len u32 (u32::MAX: none) | old | new`, lengths little-endian.
fn encode_feed(key: &[u8], old: Option<&[u8]>, new: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + key.len() + old.map_or(0, <[u8]>::len) + new.len());
    v.extend_from_slice(&(key.len() as u32).to_le_bytes());
    v.extend_from_slice(key);
    match old {
        Some(o) => {
            v.extend_from_slice(&(o.len() as u32).to_le_bytes());
            v.extend_from_slice(o);
        }
        None => v.extend_from_slice(&u32::MAX.to_le_bytes()),
    }
    v.extend_from_slice(new);
    v
}

/// A feed entry's parts: the event key, the replaced bytes (if any), the new bytes.
type FeedParts<'a> = (&'a [u8], Option<&'a [u8]>, &'a [u8]);

fn decode_feed(v: &[u8]) -> Option<FeedParts<'_>> {
    let take_len = |v: &[u8], at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(v.get(at..at + 4)?.try_into().ok()?))
    };
    let klen = take_len(v, 0)? as usize;
    let key = v.get(4..4 + klen)?;
    let mut at = 4 + klen;
    let olen = take_len(v, at)?;
    at += 4;
    let old = if olen == u32::MAX {
        None
    } else {
        let o = v.get(at..at + olen as usize)?;
        at += olen as usize;
        Some(o)
    };
    Some((key, old, v.get(at..)?))
}

/// The store at `dir` (made if missing) opened by a writer, for the unit tests.
#[cfg(test)]
pub(crate) fn open_for_test(dir: &Path) -> Ledger {
    Ledger::open(
        dir,
        Access {
            mode: Mode::Create,
            wait: Duration::from_secs(5),
            who: "test",
            on_wait: &mut || {},
        },
    )
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::open_for_test as open;
    use super::*;
    use crate::vocab::event::Event;

    fn said(session: &str, ts: i64, text: &str) -> Envelope {
        Envelope::new(
            SessionId(session.into()),
            ts,
            Event::Said { text: text.into() },
        )
    }

    fn write(l: &mut Ledger, events: &[(u32, Envelope)]) -> Written {
        let mut set = WriteSet::default();
        for (seq, env) in events {
            set.event(Seq(*seq), env.clone());
        }
        l.write(set).unwrap()
    }

    #[test]
    fn identical_bytes_are_a_no_op_and_a_revision_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = open(dir.path());
        let w = write(&mut l, &[(2, said("s", 1, "a")), (3, said("s", 1, "b"))]);
        assert_eq!(
            w,
            Written {
                new: 2,
                replaced: 0,
                unchanged: 0
            }
        );
        let w = write(&mut l, &[(2, said("s", 1, "a"))]);
        assert_eq!(
            w,
            Written {
                new: 0,
                replaced: 0,
                unchanged: 1
            }
        );
        assert_eq!(l.last_lsn().unwrap(), 2);
        let w = write(&mut l, &[(2, said("s", 1, "a2"))]);
        assert_eq!(w.replaced, 1);
        let changes: Vec<FeedEntry> = l.changes_after(2).map(Result::unwrap).collect();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].old, Some(said("s", 1, "a")));
        assert_eq!(changes[0].new, said("s", 1, "a2"));
        assert_eq!(l.len().unwrap(), 2);
    }

    #[test]
    fn the_feed_and_cursor_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut l = open(dir.path());
            let mut set = WriteSet::default();
            set.event(Seq(0), said("s", 1, "x"));
            set.cursor = Some(("file".into(), b"c1".to_vec()));
            l.write(set).unwrap();
        }
        let mut l = open(dir.path());
        assert_eq!(l.last_lsn().unwrap(), 1);
        assert_eq!(l.cursor("file").unwrap().as_deref(), Some(&b"c1"[..]));
        write(&mut l, &[(1, said("s", 2, "y"))]);
        assert_eq!(l.last_lsn().unwrap(), 2);
        let all: Vec<u64> = l.changes_after(0).map(|c| c.unwrap().lsn).collect();
        assert_eq!(all, vec![1, 2]);
    }

    #[test]
    fn sessions_are_listed_without_a_scan_of_their_events() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = open(dir.path());
        write(
            &mut l,
            &[
                (0, said("b", 1, "x")),
                (5, said("a", 1, "y")),
                (9, said("a", 1, "z")),
                (1, said("ab", 1, "w")),
            ],
        );
        let s: Vec<String> = l.sessions().unwrap().into_iter().map(|s| s.0).collect();
        assert_eq!(s, vec!["a", "ab", "b"]);
        let a: Vec<u32> = l
            .session_events(&SessionId("a".into()))
            .map(|r| r.unwrap().0.seq.0)
            .collect();
        assert_eq!(a, vec![5, 9]);
    }

    #[test]
    fn a_creation_killed_before_fjall_wrote_its_version_marker_is_started_over() {
        let dir = tempfile::tempdir().unwrap();
        // What a SIGKILL between fjall's first journal and its `version` marker leaves.
        std::fs::create_dir_all(dir.path().join("fjall/keyspaces")).unwrap();
        std::fs::write(dir.path().join("fjall/0.jnl"), b"").unwrap();
        std::fs::write(dir.path().join("fjall/lock"), b"").unwrap();
        let mut l = open(dir.path());
        write(&mut l, &[(1, said("s", 1, "after the crash"))]);
        assert_eq!(l.len().unwrap(), 1);
        drop(l);
        // A finished database is never cleared.
        let l = open(dir.path());
        assert_eq!(l.len().unwrap(), 1);
    }

    #[test]
    fn a_reader_beside_a_writer_takes_the_lock_late_under_its_own_name() {
        let dir = tempfile::tempdir().unwrap();
        drop(open(dir.path()));
        let writer =
            lock::acquire(&dir.path().join("lock"), Duration::ZERO, "w", &mut || {}).unwrap();
        let reader = Ledger::open_beside_writer(dir.path(), "peat recall cache").unwrap();
        assert!(
            matches!(reader.len(), Err(LedgerError::Lock(LockError::Busy { .. }))),
            "a read of the database never waits for the writer"
        );
        drop(writer);
        assert_eq!(reader.len().unwrap(), 0);
        let holder = std::fs::read_to_string(dir.path().join("lock")).unwrap();
        assert!(holder.contains("(peat recall cache)"), "{holder}");
    }

    #[test]
    fn reading_a_missing_store_does_not_create_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("nothing");
        let r = Ledger::open(
            &p,
            Access {
                mode: Mode::Existing,
                wait: Duration::ZERO,
                who: "t",
                on_wait: &mut || {},
            },
        );
        assert!(matches!(r, Err(LedgerError::Missing(_))));
        assert!(!p.exists());
    }

    #[test]
    fn a_failed_commit_consumes_no_position() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = open(dir.path());
        write(&mut l, &[(0, said("s", 1, "a"))]);
        FAIL_COMMIT.with(|f| f.set(true));
        let mut set = WriteSet::default();
        set.event(Seq(1), said("s", 2, "lost"));
        assert!(l.write(set).is_err());
        assert_eq!(l.last_lsn().unwrap(), 1);
        assert_eq!(read_hint(dir.path()), Some(1), "the hint went back");
        assert_eq!(
            l.get(&EventId {
                session: SessionId("s".into()),
                seq: Seq(1)
            })
            .unwrap(),
            None
        );
        write(&mut l, &[(1, said("s", 2, "b"))]);
        let lsns: Vec<u64> = l.changes_after(0).map(|c| c.unwrap().lsn).collect();
        assert_eq!(lsns, vec![1, 2], "the feed has no gap");
    }

    #[test]
    fn a_commit_starts_with_the_hint_already_at_its_batch() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = open(dir.path());
        write(&mut l, &[(0, said("s", 1, "a")), (1, said("s", 1, "b"))]);
        // Where a writer killed mid-commit leaves the hint: at the batch's last change, so
        // no reader takes views without the batch for caught up.
        assert_eq!(HINT_AT_COMMIT.with(|h| h.get()), Some(2));
        write(&mut l, &[(2, said("s", 2, "c"))]);
        assert_eq!(HINT_AT_COMMIT.with(|h| h.get()), Some(3));
    }

    #[test]
    fn a_sync_writes_the_hint_again_at_the_last_change() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = open(dir.path());
        write(&mut l, &[(0, said("s", 1, "a")), (1, said("s", 1, "b"))]);
        // A hint left behind (as a power loss could leave one that never reached the disk).
        std::fs::write(dir.path().join(LSN_HINT), "0").unwrap();
        l.sync().unwrap();
        assert_eq!(read_hint(dir.path()), Some(2));
    }

    #[test]
    fn revisions_are_the_replacing_entries_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = open(dir.path());
        write(&mut l, &[(0, said("s", 1, "a")), (1, said("s", 1, "b"))]);
        write(&mut l, &[(1, said("s", 5, "b2")), (2, said("s", 1, "c"))]);
        write(&mut l, &[(1, said("s", 9, "b3"))]);
        let revs: Vec<(u64, Option<Envelope>, Envelope)> = l
            .revisions()
            .map(|c| {
                let c = c.unwrap();
                (c.lsn, c.old, c.new)
            })
            .collect();
        assert_eq!(
            revs,
            vec![
                (3, Some(said("s", 1, "b")), said("s", 5, "b2")),
                (5, Some(said("s", 5, "b2")), said("s", 9, "b3")),
            ]
        );
    }

    #[test]
    fn feed_entries_round_trip() {
        let e = encode_feed(b"k\0\0\0\0\x01", Some(b"old"), b"new");
        assert_eq!(
            decode_feed(&e),
            Some((&b"k\0\0\0\0\x01"[..], Some(&b"old"[..]), &b"new"[..]))
        );
        let e = encode_feed(b"k", None, b"n");
        assert_eq!(decode_feed(&e), Some((&b"k"[..], None, &b"n"[..])));
        assert_eq!(decode_feed(&e[..3]), None);
    }
}
