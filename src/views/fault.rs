//! Deliberately broken folds, for tests only: each oracle must go red under each fault, or it
//! proves nothing. A test turns one fault on for its own thread with [`inject`]; outside
//! tests [`active`] is a constant `false` and every check compiles away.

/// One way to break the fold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Fault {
    /// The keyword lane never retracts a replaced event's document.
    SkipKeywordRetract,
    /// The vector lane never retracts a replaced event's vector.
    SkipVectorRetract,
    /// A text queued for the embedding pass keeps its event's old vector until the pass runs.
    QueueKeepsOldVector,
    /// Queueing a text leaves the mark that says the queue is empty.
    QueueMarkKept,
    /// The embedding pass stores a vector even when its text was revised meanwhile.
    PassIgnoresRevisions,
    /// The embedding pass caches nothing it embeds.
    PassCachesNothing,
    /// The embedding pass caches each vector under the text its event's queue entry holds
    /// when the vector is stored, which a revision may have changed since the batch was taken.
    CacheMisfiled,
    /// Tool calls never reach the views.
    DropToolCalls,
    /// Every change is applied to the tables twice.
    ApplyTwice,
    /// `asof` filters today's versions by timestamp instead of folding versions.
    AsofReadsToday,
    /// `asof` takes every day as the views hold it today, missing the versions then of
    /// events revised since (in its counts, and in choosing to search today's lanes).
    TallySkipsRevisions,
    /// `asof` with words searches today's lanes cut at the cutoff even when an event revised
    /// since had another version then.
    AsofSearchesToday,
    /// A flush writes the position its chunk reached even when a lane was already past it
    /// (positions move backwards, and the next catch-up applies changes again).
    RawPositions,
    /// A replaced event's changes and log steps are left in place (its files-view row and
    /// tails are still retracted).
    KeepStaleChanges,
    /// A revised event keeps its old envelope in the envelopes table.
    KeepOldEnvelopes,
    /// A revision's old version is not kept in the past table (nor the blobs it names).
    DropPastVersions,
    /// The keyword lane lists its hits in event id order, whatever their scores.
    KeywordUnranked,
    /// The vector lane lists its nearest vectors in event id order, whatever their scores.
    VectorsUnranked,
    /// A vector row changes without its key entering the changes table: a search scores
    /// the file's vector of the key, which may be a revised text's.
    VectorChangesUnrecorded,
    /// A search scores the whole vector file, ignoring the changes table.
    VectorChangesIgnored,
    /// A vector file is read whatever its stamp says (another store's, another write's).
    VectorFileUnstamped,
    /// A meta revised into another kind leaves its agent and parent in the session.
    MetaRetractKeepsAgent,
    /// A rebuild spans a session over its events' current versions only, not the versions
    /// revisions replaced (which a catch-up folded one by one).
    RebuildSpansCurrent,
    /// `refill_past` leaves the past table as it was (after a redaction: unredacted).
    RefillLeavesPast,
    /// `refill_past` puts the past versions back without the change blobs they name.
    RefillDropsBlobs,
    /// The past table's keys end with the LSN little-endian, so they no longer list an
    /// event's versions in the order they were written once LSNs pass a byte.
    PastKeyLittleEndian,
}

/// Where in a flush an armed failure strikes (see `fail_flush_in`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Midway {
    /// After the vector cache, before the tables: nothing of the chunk is applied.
    BeforeTables,
    /// After the tables, before the keyword lane's commit: the tables are ahead.
    BeforeKeyword,
}

pub(crate) use switch::{active, await_reader, chunk, flush_fails, paused};
#[cfg(test)]
pub(crate) use switch::{await_readers, fail_flush_in, inject, pauses, set_chunk};

#[cfg(test)]
mod switch {
    use super::{Fault, Midway};
    use std::cell::Cell;

    thread_local! {
        static ON: Cell<Option<Fault>> = const { Cell::new(None) };
        static FAIL_IN: Cell<Option<(usize, Midway)>> = const { Cell::new(None) };
        static CHUNK: Cell<Option<usize>> = const { Cell::new(None) };
        static PAUSES: Cell<usize> = const { Cell::new(0) };
        static AWAIT: Cell<usize> = const { Cell::new(0) };
    }

    /// Turns `fault` on for this thread until the guard drops.
    pub(crate) fn inject(fault: Fault) -> Guard {
        ON.with(|f| f.set(Some(fault)));
        Guard
    }

    pub(crate) struct Guard;

    impl Drop for Guard {
        fn drop(&mut self) {
            ON.with(|f| f.set(None));
        }
    }

    pub(crate) fn active(fault: Fault) -> bool {
        ON.with(|f| f.get() == Some(fault))
    }

    /// Make the `n`th flush from now on this thread fail at `midway`: an interrupted
    /// catch-up or rebuild. Not a fault: the views must recover from it.
    pub(crate) fn fail_flush_in(armed: Option<(usize, Midway)>) {
        FAIL_IN.with(|c| c.set(armed));
    }

    /// Whether a flush reaching `point` fails there; a flush is counted at its first point.
    pub(crate) fn flush_fails(point: Midway) -> bool {
        FAIL_IN.with(|c| match (c.get(), point) {
            (Some((1, at)), Midway::BeforeTables) => {
                c.set((at != point).then_some((0, at)));
                at == point
            }
            (Some((n, at)), Midway::BeforeTables) => {
                c.set(Some((n.saturating_sub(1), at)));
                false
            }
            (Some((0, _)), Midway::BeforeKeyword) => {
                c.set(None);
                true
            }
            _ => false,
        })
    }

    /// Fold in chunks of `n` changes on this thread (to interrupt folds mid-way in tests).
    pub(crate) fn set_chunk(n: Option<usize>) {
        CHUNK.with(|c| c.set(n));
    }

    pub(crate) fn chunk(default: usize) -> usize {
        CHUNK.with(|c| c.get()).unwrap_or(default)
    }

    /// Counts a fold pausing for a reader (so a test can prove its readers made it pause).
    pub(crate) fn paused() {
        PAUSES.with(|c| c.set(c.get() + 1));
    }

    /// How many times folds on this thread paused for a reader.
    pub(crate) fn pauses() -> usize {
        PAUSES.with(Cell::get)
    }

    /// Hold each of the next `n` folds' checks for a reader on this thread until a reader
    /// asks for the views (a minute at most), so that a test's reader is sure to make the
    /// fold pause instead of racing it.
    pub(crate) fn await_readers(n: usize) {
        AWAIT.with(|c| c.set(n));
    }

    /// Wait until `wanted`, if a test asked this check to (see [`await_readers`]).
    pub(crate) fn await_reader(wanted: &dyn Fn() -> bool) {
        if AWAIT.with(|c| c.replace(c.get().saturating_sub(1))) == 0 {
            return;
        }
        let started = std::time::Instant::now();
        while !wanted() && started.elapsed() < std::time::Duration::from_secs(60) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

#[cfg(not(test))]
mod switch {
    use super::{Fault, Midway};

    pub(crate) fn active(_: Fault) -> bool {
        false
    }

    pub(crate) fn flush_fails(_: Midway) -> bool {
        false
    }

    pub(crate) fn chunk(default: usize) -> usize {
        default
    }

    pub(crate) fn paused() {}

    pub(crate) fn await_reader(_: &dyn Fn() -> bool) {}
}
