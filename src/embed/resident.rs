//! The resident embedder: one `peat model serve` process per user and model keeps the
//! one-shot model loaded, so a search embeds its query without loading ONNX Runtime, the
//! session and the tokenizer, which are most of a one-shot search's time.
//!
//! A search asks it first ([`Search`]): its query's vector, on a thread of its own while
//! the store opens, bounded to half a second. On any failure (no server, a stale socket, a
//! server of another build, a timeout) the search loads the model in process exactly as
//! before, and starts a server, detached, for the next one. A server answers with the
//! code path an in-process load uses ([`crate::embed::load`], [`Profile::OneShot`]), so
//! its vectors are the same bits and an answer never depends on which path embedded.
//!
//! The protocol is one request and one reply per connection: a length-prefixed JSON
//! frame each way, the reply to an embedding followed by one frame of little-endian f32s.
//! Both ends carry an [`Identity`] (the protocol, the model id, the hash of the
//! `models.lock` compiled in, this binary, the files resolved): a client uses an answer
//! only when it is its own.
//!
//! The socket lives in peat's own directory, `$XDG_RUNTIME_DIR/peat` (else `run/` in the
//! data directory), mode 0700, the socket 0600. A server holds `embed-<model>.lock` for
//! its life, so there is one per model; it exits after `PEAT_EMBED_IDLE_SECS` without a
//! search (default 15 minutes; 0: never start one), or when its socket is taken away.

use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::artifacts::{Lookup, Resolution, Resolved};
use super::lock::{MODELS_LOCK, ModelsLock};
use super::{EmbedError, Embedder, Profile};

/// The variable that sets how long a resident embedder waits for a search before it exits.
pub(crate) const IDLE_VAR: &str = "PEAT_EMBED_IDLE_SECS";

/// How long a resident embedder stays without a search, unless [`IDLE_VAR`] says otherwise.
pub(crate) const DEFAULT_IDLE: Duration = Duration::from_secs(15 * 60);

/// Bump when a request or a reply changes shape.
const PROTOCOL: u32 = 1;

/// How long a hello, a status or a stop waits for the server's answer.
const HELLO_BOUND: Duration = Duration::from_millis(200);

/// How long a search waits for its query's vectors (the embedding itself takes ~10 ms; a
/// busy server queues requests). Past this it loads in process.
const EMBED_BOUND: Duration = Duration::from_millis(500);

/// What each text of a request adds to [`EMBED_BOUND`]: a batch (`asof` embedding the
/// texts of versions since revised) takes ~10 ms a text, and must not run out the bound
/// meant for one query.
const EMBED_BOUND_PER_TEXT: Duration = Duration::from_millis(30);

/// How long a server waits for a connected client's request or for it to take the reply.
const CLIENT_BOUND: Duration = Duration::from_secs(1);

/// How often an idle server looks whether its socket is still its own.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// The largest frame either end accepts (a request's texts, a reply's vectors).
const MAX_FRAME: usize = 64 << 20;

/// `sun_path` holds 108 bytes with the terminating NUL.
const SOCKET_PATH_MAX: usize = 107;

/// Whether searches use a resident embedder, and how long one waits for a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Residency {
    /// `PEAT_EMBED_IDLE_SECS=0`: every search loads the model itself, and none starts a server.
    Off,
    Idle(Duration),
}

impl Default for Residency {
    fn default() -> Residency {
        Residency::Idle(DEFAULT_IDLE)
    }
}

impl Residency {
    /// [`IDLE_VAR`]'s value (`None`: unset). A value that is not a whole number of seconds
    /// is an error naming the variable.
    pub(crate) fn parse(raw: Option<&str>) -> Result<Residency, String> {
        let Some(raw) = raw.filter(|s| !s.trim().is_empty()) else {
            return Ok(Residency::default());
        };
        match raw.trim().parse::<u64>() {
            Ok(0) => Ok(Residency::Off),
            Ok(n) => Ok(Residency::Idle(Duration::from_secs(n))),
            Err(_) => Err(format!("{IDLE_VAR} is not a number of seconds: {raw:?}")),
        }
    }

    /// From the process environment.
    pub(crate) fn from_process() -> Result<Residency, String> {
        Residency::parse(std::env::var(IDLE_VAR).ok().as_deref())
    }
}

/// Where a model's resident embedder listens, and the lock its one server holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) dir: PathBuf,
    pub(crate) socket: PathBuf,
    pub(crate) lock: PathBuf,
}

impl Place {
    /// `None` when there is no directory of peat's own to put it in (no `XDG_RUNTIME_DIR`,
    /// data directory or HOME).
    pub(crate) fn of(lookup: &Lookup, model_id: &str) -> Option<Place> {
        let dir = match &lookup.runtime_dir {
            Some(run) => run.join("peat"),
            None => lookup.data_dir.as_ref()?.join("run"),
        };
        Some(Place {
            socket: dir.join(format!("embed-{model_id}.sock")),
            lock: dir.join(format!("embed-{model_id}.lock")),
            dir,
        })
    }

    /// Where a server binds before its model is loaded (shorter than the socket's path).
    fn fresh(&self) -> PathBuf {
        self.socket.with_extension("new")
    }

    /// Whether a socket can be bound at this path at all.
    pub(crate) fn fits(&self) -> bool {
        self.socket.as_os_str().len() <= SOCKET_PATH_MAX
    }

    /// The directory, private to this user.
    fn make(&self) -> io::Result<()> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700))
    }

    fn open_lock(&self) -> io::Result<File> {
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&self.lock)
    }

    /// Whether a server holds the lock now (alive, loading or serving). Takes the lock for
    /// an instant when nobody holds it.
    fn held(&self) -> bool {
        match File::open(&self.lock) {
            Ok(f) => matches!(f.try_lock_shared(), Err(fs::TryLockError::WouldBlock)),
            Err(_) => false,
        }
    }

    /// The pid the lock's holder wrote.
    fn holder_pid(&self) -> Option<u32> {
        fs::read_to_string(&self.lock).ok()?.trim().parse().ok()
    }
}

/// Who answers: a client uses a server's answer only when every field is its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Identity {
    pub(crate) protocol: u32,
    /// The model id (the vector space).
    pub(crate) model: String,
    /// sha256 of the `models.lock` compiled in: every pinned file's hash.
    pub(crate) pin: String,
    /// This binary: its version, size and modification time (another build may embed
    /// differently).
    pub(crate) build: String,
    /// The files the model was resolved to (a runtime the lock does not pin may differ).
    pub(crate) files: String,
}

impl Identity {
    pub(crate) fn of(lock: &ModelsLock, resolved: &Resolved) -> Identity {
        let paths: Vec<&std::ffi::OsStr> =
            resolved.all().iter().map(|l| l.path.as_os_str()).collect();
        let joined = paths.join(std::ffi::OsStr::new("\0"));
        let files = super::artifacts::sha256_bytes(joined.as_encoded_bytes());
        Identity {
            protocol: PROTOCOL,
            model: lock.model.id.clone(),
            pin: pin().to_string(),
            build: build().to_string(),
            files: files[..16].to_string(),
        }
    }
}

fn pin() -> &'static str {
    static PIN: OnceLock<String> = OnceLock::new();
    PIN.get_or_init(|| super::artifacts::sha256_bytes(MODELS_LOCK.as_bytes()))
}

fn build() -> &'static str {
    static BUILD: OnceLock<String> = OnceLock::new();
    BUILD.get_or_init(|| {
        let version = env!("CARGO_PKG_VERSION");
        match std::env::current_exe().and_then(fs::metadata) {
            Ok(m) => format!("{version}:{}:{}.{}", m.size(), m.mtime(), m.mtime_nsec()),
            Err(_) => format!("{version}:unknown"),
        }
    })
}

/// What can go wrong asking a server; every one means "embed in process".
#[derive(Debug, thiserror::Error)]
pub(crate) enum AskError {
    #[error("no resident embedder answers at {}: {source}", socket.display())]
    Unreachable { socket: PathBuf, source: io::Error },
    #[error("the resident embedder is another build's or another model's ({0})")]
    Mismatch(String),
    #[error("the resident embedder answered {0}")]
    Protocol(String),
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Request {
    Hello {
        identity: Identity,
    },
    Embed {
        identity: Identity,
        texts: Vec<String>,
    },
    Status,
    Stop,
}

/// A server's reply; an embedding's vectors follow it in a frame of their own.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Reply {
    identity: Identity,
    pid: u32,
    idle_secs: u64,
    idle_left_ms: u64,
    rss_bytes: Option<u64>,
    served: u64,
    /// Vectors that follow, each `dim` f32s.
    count: usize,
    dim: usize,
    error: Option<String>,
}

fn write_frame(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let len = u32::try_from(bytes.len())
        .ok()
        .filter(|&n| n as usize <= MAX_FRAME)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(bytes)
}

fn read_frame(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "frame too large",
        ));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

fn vectors_to_bytes(vectors: &[Vec<f32>]) -> Vec<u8> {
    vectors
        .iter()
        .flat_map(|v| v.iter().flat_map(|x| x.to_le_bytes()))
        .collect()
}

fn bytes_to_vectors(bytes: &[u8], count: usize, dim: usize) -> Option<Vec<Vec<f32>>> {
    if dim == 0 || bytes.len() != count * dim * 4 {
        return None;
    }
    let floats: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Some(floats.chunks_exact(dim).map(<[f32]>::to_vec).collect())
}

/// One request, one reply (and the vectors that follow it), within `bound` per read.
fn ask(socket: &Path, request: &Request, bound: Duration) -> Result<(Reply, Vec<u8>), AskError> {
    let unreachable = |source| AskError::Unreachable {
        socket: socket.to_path_buf(),
        source,
    };
    let mut stream = UnixStream::connect(socket).map_err(unreachable)?;
    stream.set_read_timeout(Some(bound)).map_err(unreachable)?;
    stream.set_write_timeout(Some(bound)).map_err(unreachable)?;
    let body = serde_json::to_vec(request).map_err(|e| AskError::Protocol(e.to_string()))?;
    write_frame(&mut stream, &body).map_err(unreachable)?;
    let reply = read_frame(&mut stream).map_err(unreachable)?;
    let reply: Reply = serde_json::from_slice(&reply)
        .map_err(|e| AskError::Protocol(format!("a reply that does not parse: {e}")))?;
    let vectors = if reply.count > 0 {
        read_frame(&mut stream).map_err(unreachable)?
    } else {
        Vec::new()
    };
    Ok((reply, vectors))
}

/// A client of one model's resident embedder.
#[derive(Debug, Clone)]
pub struct Client {
    pub(crate) place: Place,
    pub(crate) identity: Identity,
}

impl Client {
    /// The client for the model `lock` pins as `lookup` resolves it; `None` when there is
    /// no place for a socket, or none that fits a socket's path.
    pub(crate) fn new(lookup: &Lookup, lock: &ModelsLock, resolved: &Resolved) -> Option<Client> {
        let place = Place::of(lookup, &lock.model.id).filter(Place::fits)?;
        Some(Client {
            place,
            identity: Identity::of(lock, resolved),
        })
    }

    /// The client for the installed model; `None` when it is not installed.
    pub fn installed(lookup: &Lookup) -> Result<Option<Client>, EmbedError> {
        let lock = super::pinned()?;
        Ok(match super::artifacts::resolve(lock, lookup)? {
            Resolution::Found(r) => Client::new(lookup, lock, &r),
            Resolution::NotInstalled => None,
        })
    }

    fn mine(&self, reply: &Reply) -> Result<(), AskError> {
        if reply.identity == self.identity {
            return Ok(());
        }
        let theirs = &reply.identity;
        let what = if theirs.model != self.identity.model {
            format!("model {}", theirs.model)
        } else if theirs.protocol != self.identity.protocol {
            format!("protocol {}", theirs.protocol)
        } else if theirs.pin != self.identity.pin {
            "another models.lock".into()
        } else if theirs.build != self.identity.build {
            format!("build {}", theirs.build)
        } else {
            "other model files".into()
        };
        Err(AskError::Mismatch(what))
    }

    /// Whether a server of this very build and model answers.
    pub(crate) fn hello(&self) -> Result<(), AskError> {
        let request = Request::Hello {
            identity: self.identity.clone(),
        };
        let (reply, _) = ask(&self.place.socket, &request, HELLO_BOUND)?;
        self.mine(&reply)
    }

    /// The vectors of `texts`, from the server.
    pub(crate) fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, AskError> {
        let request = Request::Embed {
            identity: self.identity.clone(),
            texts: texts.iter().map(|t| t.to_string()).collect(),
        };
        let n = u32::try_from(texts.len()).unwrap_or(u32::MAX);
        let bound = EMBED_BOUND + EMBED_BOUND_PER_TEXT.saturating_mul(n);
        let (reply, bytes) = ask(&self.place.socket, &request, bound)?;
        self.mine(&reply)?;
        if let Some(e) = reply.error {
            return Err(AskError::Protocol(format!("an error: {e}")));
        }
        match bytes_to_vectors(&bytes, reply.count, reply.dim) {
            Some(v) if v.len() == texts.len() => Ok(v),
            _ => Err(AskError::Protocol(format!(
                "{} vectors of {} dims for {} texts",
                reply.count,
                reply.dim,
                texts.len()
            ))),
        }
    }

    /// What runs, if anything (any build's server answers this).
    pub fn status(&self) -> Status {
        match ask(&self.place.socket, &Request::Status, HELLO_BOUND) {
            Ok((reply, _)) => Status::Running(Running {
                same_build: reply.identity == self.identity,
                pid: reply.pid,
                socket: self.place.socket.clone(),
                idle_secs: reply.idle_secs,
                idle_left_secs: reply.idle_left_ms.div_ceil(1000),
                rss_bytes: reply.rss_bytes,
                served: reply.served,
            }),
            Err(_) if self.place.held() => Status::Starting {
                pid: self.place.holder_pid(),
            },
            Err(_) => Status::Stopped,
        }
    }

    /// Stop the server, whatever its build, and wait (a few seconds at most) for it to be
    /// gone. Returns its pid, or `None` when none ran.
    pub(crate) fn stop(&self) -> Option<u32> {
        let pid = match ask(&self.place.socket, &Request::Stop, HELLO_BOUND) {
            Ok((reply, _)) => Some(reply.pid),
            Err(_) if self.place.held() => {
                // Loading, or stuck: it answers no request, but a signal ends it.
                let pid = self.place.holder_pid()?;
                // SAFETY: kill(2) with a pid and a signal number touches no memory.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
                Some(pid)
            }
            Err(_) => None,
        }?;
        let until = Instant::now() + Duration::from_secs(5);
        while self.place.held() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(pid)
    }
}

/// What `peat model status` says of the resident embedder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Status {
    /// `PEAT_EMBED_IDLE_SECS=0`.
    Off,
    /// No directory of peat's own to put a socket in (or its path is too long for one).
    Nowhere,
    Stopped,
    /// Holding its lock, not answering yet (loading the model).
    Starting {
        pid: Option<u32>,
    },
    Running(Running),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Running {
    pub pid: u32,
    pub(crate) socket: PathBuf,
    /// Whether this build's searches use it (another build's is left to time out).
    pub(crate) same_build: bool,
    pub(crate) idle_secs: u64,
    pub(crate) idle_left_secs: u64,
    /// Its resident memory.
    pub(crate) rss_bytes: Option<u64>,
    /// Requests it embedded.
    pub(crate) served: u64,
}

/// How a search loads the model: returns a boxed embedder or the reason it cannot.
pub(crate) type Loader = Box<dyn FnMut() -> Result<Box<dyn Embedder>, EmbedError> + Send>;

/// A one-shot search's way to its query's vector: the resident embedder if one answers,
/// else the in-process load, starting a server for the next search.
pub(crate) struct Search {
    client: Client,
    #[cfg(test)]
    id: String,
    dim: usize,
    /// The server start this search may ask for, made once the search is done.
    later: Later,
}

/// A server start asked for during a search, made when the search is done (the caller's
/// [`Later::start_if_asked`], from `ModelSlot`'s drop, after the answer is printed): started
/// at once, the server's load would take the CPU the search still needs (a cold search
/// that started one at once took 161 ms against 128 ms, load ~3 on 2 cores).
#[derive(Debug, Clone, Default)]
pub(crate) struct Later {
    asked: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The binary a server is started from (`None`: start none).
    exe: Option<PathBuf>,
}

impl Later {
    fn ask(&self) {
        self.asked.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Start the server if the search asked for one.
    pub(crate) fn start_if_asked(&self) {
        if self.asked.swap(false, std::sync::atomic::Ordering::Relaxed)
            && let Some(exe) = &self.exe
        {
            start_server(exe);
        }
    }
}

impl Search {
    /// For the model `lock` pins, resolved as `resolved`; `None` when searches should not
    /// use a resident embedder (`residency` off, or no place for its socket).
    pub(crate) fn new(
        lookup: &Lookup,
        lock: &ModelsLock,
        resolved: &Resolved,
        residency: Residency,
    ) -> Option<Search> {
        if residency == Residency::Off {
            return None;
        }
        Some(Search {
            client: Client::new(lookup, lock, resolved)?,
            #[cfg(test)]
            id: lock.model.id.clone(),
            dim: lock.model.dim,
            later: Later {
                asked: Default::default(),
                exe: std::env::current_exe().ok(),
            },
        })
    }

    /// Where a server start this search asks for waits for the search to be done.
    pub(crate) fn later(&self) -> Later {
        self.later.clone()
    }

    /// The resident embedder when one of this build answers, `query`'s vector already in
    /// hand (asked for now, it is computed while the search opens the store); else
    /// `load()`, and a server started for the next search.
    pub(crate) fn embedder_or(
        self,
        mut load: Loader,
        query: &str,
    ) -> Result<Box<dyn Embedder>, EmbedError> {
        let asked = match query.is_empty() {
            true => self.client.hello().map(|()| None),
            false => self
                .client
                .embed(&[query])
                .map(|mut v| v.pop().map(|v| (query.to_string(), v))),
        };
        match asked {
            Ok(ahead) => Ok(Box::new(Resident {
                search: self,
                fallback: Some(load),
                local: None,
                ahead,
            })),
            Err(e) => {
                if matches!(e, AskError::Mismatch(_)) {
                    // Another build's: it would hold the lock the new one needs.
                    let _ = ask(&self.client.place.socket, &Request::Stop, HELLO_BOUND);
                }
                self.later.ask();
                load()
            }
        }
    }
}

/// `peat model serve` from `exe`, detached (a process group of its own, so a terminal's
/// signals to the caller's group miss it; no stdio), never waited for. A server already at
/// work makes it exit at once.
fn start_server(exe: &Path) {
    use std::os::unix::process::CommandExt;
    // Without a `pre_exec` hook the standard library spawns with posix_spawn, no fork of
    // this process's memory: about a millisecond, which SessionStart pays.
    let started = std::process::Command::new(exe)
        .args(["model", "serve"])
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
    // Best effort: without a server the next search loads in process again.
    let _ = started;
}

/// Start a resident embedder for the installed model when none holds its lock, waiting
/// for nothing (an open, a lock look, a spawn): SessionStart calls it, so that an agent's
/// first search finds the model loaded. Best effort, silent.
pub(crate) fn warm_up(lookup: &Lookup, residency: Residency) {
    let Ok(lock) = super::pinned() else { return };
    let Ok(Resolution::Found(resolved)) = super::artifacts::resolve(lock, lookup) else {
        return;
    };
    if let Some(search) = Search::new(lookup, lock, &resolved, residency)
        && !search.client.place.held()
    {
        search.later.ask();
        search.later.start_if_asked();
    }
}

/// The query's vectors from the resident embedder, falling back to an in-process load if
/// it stops answering between the hello and the query.
struct Resident {
    search: Search,
    fallback: Option<Loader>,
    local: Option<Box<dyn Embedder>>,
    /// The query's vector, asked for ahead (see [`Search::embedder_or`]).
    ahead: Option<(String, Vec<f32>)>,
}

impl Embedder for Resident {
    #[cfg(test)]
    fn model_id(&self) -> &str {
        &self.search.id
    }

    fn dim(&self) -> usize {
        self.search.dim
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let ([text], Some((query, _))) = (texts, &self.ahead)
            && text == query
            && let Some((_, v)) = self.ahead.take()
        {
            return Ok(vec![v]);
        }
        if self.local.is_none() {
            match self.search.client.embed(texts) {
                Ok(v) if v.iter().all(|x| x.len() == self.search.dim) => return Ok(v),
                _ => {}
            }
            let mut load = self.fallback.take().ok_or_else(|| {
                EmbedError::Inference("the resident embedder failed and no load is left".into())
            })?;
            let loaded = load()?;
            self.search.later.ask();
            self.local = Some(loaded);
        }
        match &mut self.local {
            Some(local) => local.embed(texts),
            None => unreachable!("set above"),
        }
    }

    fn served_by(&self) -> Served {
        match self.local {
            Some(_) => Served::InProcess,
            None => Served::Resident,
        }
    }
}

/// Which path embedded a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum Served {
    #[serde(rename = "resident")]
    Resident,
    #[serde(rename = "in-process")]
    InProcess,
}

/// How a server's life ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Another server of this build and model was at work: this one did nothing.
    AlreadyRunning,
    /// No search came for the idle time.
    Idle,
    /// `peat model stop`, or a search of another build.
    Stopped,
    /// Its socket was removed or replaced (its directory deleted, say).
    Displaced,
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    #[error("{IDLE_VAR}=0 turns the resident embedder off")]
    Off,
    #[error(
        "no directory for the resident embedder's socket (set XDG_RUNTIME_DIR, PEAT_DATA_DIR or HOME)"
    )]
    Nowhere,
    #[error("the resident embedder's socket path {} is longer than a socket's {SOCKET_PATH_MAX} bytes", .0.display())]
    TooLong(PathBuf),
    #[error("{}", crate::embed::off_notice())]
    NotInstalled,
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("cannot serve at {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// `peat model serve`: load the one-shot model once and answer searches on the socket
/// until idle for `residency`'s time, stopped, or displaced. `ready` hears where it
/// listens, once it does.
pub(crate) fn serve(
    lookup: &Lookup,
    residency: Residency,
    ready: &mut dyn FnMut(&Path),
) -> Result<Ended, ServeError> {
    let Residency::Idle(idle) = residency else {
        return Err(ServeError::Off);
    };
    // Started from a search in a terminal, it outlives the terminal: its hangup is not an
    // order to stop (`peat model stop` is).
    // SAFETY: setting a signal's disposition to "ignore" runs no code of ours.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
    let lock = super::pinned()?;
    let resolved = match super::artifacts::resolve(lock, lookup)? {
        Resolution::Found(r) => r,
        Resolution::NotInstalled => return Err(ServeError::NotInstalled),
    };
    let place = Place::of(lookup, &lock.model.id).ok_or(ServeError::Nowhere)?;
    if !place.fits() {
        return Err(ServeError::TooLong(place.socket));
    }
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ServeError::Io { path, source }
    };
    place.make().map_err(io_err(&place.dir))?;
    let identity = Identity::of(lock, &resolved);
    let mut held = place.open_lock().map_err(io_err(&place.lock))?;
    match held.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            // Another build's is told to go, and this one waits for its lock; one of this
            // build (or one still loading) is left to do the work.
            match ask(
                &place.socket,
                &Request::Hello {
                    identity: identity.clone(),
                },
                HELLO_BOUND,
            ) {
                Ok((reply, _)) if reply.identity != identity => {
                    let _ = ask(&place.socket, &Request::Stop, HELLO_BOUND);
                    if !lock_within(&held, Duration::from_secs(3)) {
                        return Ok(Ended::AlreadyRunning);
                    }
                }
                Ok(_) => return Ok(Ended::AlreadyRunning),
                // One loading, or `peat model status` looking for an instant.
                Err(_) => {
                    if !lock_within(&held, Duration::from_millis(300)) {
                        return Ok(Ended::AlreadyRunning);
                    }
                }
            }
        }
        Err(fs::TryLockError::Error(e)) => return Err(io_err(&place.lock)(e)),
    }
    held.set_len(0).map_err(io_err(&place.lock))?;
    write!(held, "{}", std::process::id()).map_err(io_err(&place.lock))?;
    // Bound first under a name of its own, so that a directory where no socket can be made
    // fails before the model is loaded for nothing; renamed into place once loaded, so a
    // search meanwhile finds no server and loads itself rather than wait on one that cannot
    // answer yet. Holding the lock, whatever was at either name is a dead server's.
    let fresh = place.fresh();
    let _ = fs::remove_file(&fresh);
    let listener = UnixListener::bind(&fresh).map_err(io_err(&fresh))?;
    let loaded = fs::set_permissions(&fresh, fs::Permissions::from_mode(0o600))
        .map_err(io_err(&fresh))
        .and_then(|()| Ok(super::load(lookup, Profile::OneShot)?))
        .and_then(|e| e.ok_or(ServeError::NotInstalled))
        .and_then(|e| {
            fs::rename(&fresh, &place.socket).map_err(io_err(&place.socket))?;
            Ok(e)
        });
    let mut embedder = match loaded {
        Ok(e) => e,
        Err(e) => {
            let _ = fs::remove_file(&fresh);
            return Err(e);
        }
    };
    let ino = fs::metadata(&place.socket)
        .map_err(io_err(&place.socket))?
        .ino();
    let ours = || fs::metadata(&place.socket).is_ok_and(|m| m.ino() == ino);
    ready(&place.socket);

    let mut server = Server {
        identity,
        idle,
        last: Instant::now(),
        served: 0,
    };
    let ended = loop {
        let left = server.left();
        if left.is_zero() {
            break Ended::Idle;
        }
        if !readable(&listener, left.min(LOOK_EVERY)) {
            if !ours() {
                break Ended::Displaced;
            }
            continue;
        }
        let Ok((stream, _)) = listener.accept() else {
            continue;
        };
        if server.answer(stream, embedder.as_mut()) {
            break Ended::Stopped;
        }
    };
    if ours() {
        let _ = fs::remove_file(&place.socket);
    }
    // The model stays loaded to the end: the process's exit frees it at once. The lock
    // too is let go by the exit, so whoever waits for it (`peat model stop`) sees this
    // process gone.
    std::mem::forget(embedder);
    std::mem::forget(held);
    Ok(ended)
}

/// Take `file`'s lock, trying for up to `wait`.
fn lock_within(file: &File, wait: Duration) -> bool {
    let until = Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return true,
            Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => return false,
        }
    }
}

struct Server {
    identity: Identity,
    idle: Duration,
    /// The last search's time.
    last: Instant,
    served: u64,
}

impl Server {
    fn left(&self) -> Duration {
        self.idle.saturating_sub(self.last.elapsed())
    }

    fn reply(&self, count: usize, dim: usize, error: Option<String>) -> Reply {
        Reply {
            identity: self.identity.clone(),
            pid: std::process::id(),
            idle_secs: self.idle.as_secs(),
            idle_left_ms: self.left().as_millis() as u64,
            rss_bytes: rss_bytes(),
            served: self.served,
            count,
            dim,
            error,
        }
    }

    /// Answer one connection; `true` when it asked this server to stop.
    fn answer(&mut self, mut stream: UnixStream, embedder: &mut dyn Embedder) -> bool {
        let _ = stream.set_read_timeout(Some(CLIENT_BOUND));
        let _ = stream.set_write_timeout(Some(CLIENT_BOUND));
        let Ok(request) = read_frame(&mut stream) else {
            return false;
        };
        let (reply, vectors, stop) = match serde_json::from_slice(&request) {
            Ok(r) => self.respond(r, embedder),
            Err(e) => (
                self.reply(0, 0, Some(format!("a request that does not parse: {e}"))),
                Vec::new(),
                false,
            ),
        };
        let _ = send(&mut stream, &reply, &vectors);
        stop
    }

    /// The reply to `request`, the vectors that follow it, and whether to stop.
    fn respond(&mut self, request: Request, embedder: &mut dyn Embedder) -> (Reply, Vec<u8>, bool) {
        match request {
            Request::Hello { identity } => {
                if identity == self.identity {
                    self.last = Instant::now();
                }
                (self.reply(0, 0, None), Vec::new(), false)
            }
            Request::Status => (self.reply(0, 0, None), Vec::new(), false),
            Request::Stop => (self.reply(0, 0, None), Vec::new(), true),
            Request::Embed { identity, .. } if identity != self.identity => (
                self.reply(0, 0, Some("another build's request".into())),
                Vec::new(),
                false,
            ),
            Request::Embed { texts, .. } => {
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                self.last = Instant::now();
                match embedder.embed(&refs) {
                    Ok(v) => {
                        self.served += 1;
                        let bytes = vectors_to_bytes(&v);
                        (self.reply(v.len(), embedder.dim(), None), bytes, false)
                    }
                    Err(e) => (self.reply(0, 0, Some(e.to_string())), Vec::new(), false),
                }
            }
        }
    }
}

fn send(stream: &mut UnixStream, reply: &Reply, vectors: &[u8]) -> io::Result<()> {
    let body = serde_json::to_vec(reply).map_err(io::Error::other)?;
    write_frame(stream, &body)?;
    if reply.count > 0 {
        write_frame(stream, vectors)?;
    }
    Ok(())
}

/// Whether a connection waits on `listener`, looking for up to `wait`.
fn readable(listener: &UnixListener, wait: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = wait.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one valid pollfd, for the duration of the call.
    let n = unsafe { libc::poll(&mut fd, 1, ms) };
    n > 0 && fd.revents & libc::POLLIN != 0
}

/// This process's resident memory, from `/proc/self/statm`.
fn rss_bytes() -> Option<u64> {
    let statm = fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;

    fn identity(model: &str) -> Identity {
        Identity {
            protocol: PROTOCOL,
            model: model.into(),
            pin: pin().into(),
            build: build().into(),
            files: "0123456789abcdef".into(),
        }
    }

    /// A client of the socket in `dir`, for the hash embedder's space.
    fn search(dir: &Path) -> Search {
        let place = Place {
            dir: dir.to_path_buf(),
            socket: dir.join("embed.sock"),
            lock: dir.join("embed.lock"),
        };
        Search {
            client: Client {
                place,
                identity: identity("hash"),
            },
            id: "hash".into(),
            dim: HashEmbedder::new().dim(),
            later: Later::default(),
        }
    }

    /// A server on `socket` that answers `connections` requests as `who`, embedding with
    /// the hash embedder; returns the requests it was sent.
    fn fake(
        socket: &Path,
        who: Identity,
        connections: usize,
    ) -> std::thread::JoinHandle<Vec<String>> {
        fake_taking(socket, who, connections, Duration::ZERO)
    }

    /// [`fake`], taking `delay` over each request, as a busy server does.
    fn fake_taking(
        socket: &Path,
        who: Identity,
        connections: usize,
        delay: Duration,
    ) -> std::thread::JoinHandle<Vec<String>> {
        let listener = UnixListener::bind(socket).unwrap();
        std::thread::spawn(move || {
            let mut server = Server {
                identity: who,
                idle: Duration::from_secs(60),
                last: Instant::now(),
                served: 0,
            };
            let mut seen = Vec::new();
            for _ in 0..connections {
                let (mut stream, _) = listener.accept().unwrap();
                let frame = read_frame(&mut stream).unwrap();
                let op: serde_json::Value = serde_json::from_slice(&frame).unwrap();
                seen.push(op["op"].as_str().unwrap().to_string());
                let request = serde_json::from_slice(&frame).unwrap();
                let (reply, vectors, _) = server.respond(request, &mut HashEmbedder::new());
                std::thread::sleep(delay);
                send(&mut stream, &reply, &vectors).unwrap();
            }
            seen
        })
    }

    #[test]
    fn the_idle_time_is_whole_seconds_zero_turns_it_off_and_anything_else_names_the_variable() {
        assert_eq!(Residency::parse(None), Ok(Residency::Idle(DEFAULT_IDLE)));
        assert_eq!(Residency::parse(Some("0")), Ok(Residency::Off));
        assert_eq!(
            Residency::parse(Some(" 30 ")),
            Ok(Residency::Idle(Duration::from_secs(30)))
        );
        for bad in ["15m", "-1", "1.5"] {
            let e = Residency::parse(Some(bad)).unwrap_err();
            assert!(e.contains(IDLE_VAR) && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn the_socket_goes_in_the_runtime_dir_else_the_data_dir_and_only_where_it_fits() {
        let lookup = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Lookup::from_vars(
                move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.into()),
                None,
                None,
            )
        };
        let both = lookup(&[("XDG_RUNTIME_DIR", "/run/user/7"), ("HOME", "/home/a")]);
        let place = Place::of(&both, "m").unwrap();
        assert_eq!(place.socket, Path::new("/run/user/7/peat/embed-m.sock"));
        assert_eq!(place.lock, Path::new("/run/user/7/peat/embed-m.lock"));
        assert!(place.fits());
        // A relative XDG_RUNTIME_DIR is not one.
        let home = lookup(&[("XDG_RUNTIME_DIR", "run"), ("HOME", "/home/a")]);
        let place = Place::of(&home, "m").unwrap();
        assert_eq!(
            place.socket,
            Path::new("/home/a/.local/share/peat/run/embed-m.sock")
        );
        assert!(Place::of(&lookup(&[]), "m").is_none());
        let deep = "/d".repeat(60);
        let long = lookup(&[("PEAT_DATA_DIR", deep.as_str())]);
        assert!(!Place::of(&long, "m").unwrap().fits());
    }

    #[test]
    fn vectors_cross_the_socket_bit_for_bit() {
        let v = vec![
            vec![0.1f32, -0.0, f32::MIN_POSITIVE / 3.0, 1.0 / 3.0],
            vec![f32::MAX, -1e-30, 0.5, 7.25],
        ];
        let back = bytes_to_vectors(&vectors_to_bytes(&v), 2, 4).unwrap();
        let bits =
            |v: &[Vec<f32>]| -> Vec<u32> { v.iter().flatten().map(|x| x.to_bits()).collect() };
        assert_eq!(bits(&back), bits(&v));
        assert!(
            bytes_to_vectors(&[0; 12], 1, 4).is_none(),
            "a short frame is refused"
        );
    }

    /// The hash embedder, as a search's in-process load.
    fn load_hash() -> Loader {
        Box::new(|| Ok(Box::new(HashEmbedder::new()) as Box<dyn Embedder>))
    }

    #[test]
    fn a_server_of_another_model_is_ignored_told_to_stop_and_the_search_embeds_in_process() {
        let dir = tempfile::tempdir().unwrap();
        let s = search(dir.path());
        let server = fake(&s.client.place.socket, identity("other-model"), 3);
        assert!(
            matches!(s.client.hello(), Err(AskError::Mismatch(m)) if m.contains("other-model"))
        );
        let s = search(dir.path());
        let mut e = s.embedder_or(load_hash(), "the query").unwrap();
        assert_eq!(e.served_by(), Served::InProcess);
        let v = e.embed(&["the query"]).unwrap();
        assert_eq!(v, HashEmbedder::new().embed(&["the query"]).unwrap());
        assert_eq!(server.join().unwrap(), ["hello", "embed", "stop"]);
    }

    #[test]
    fn a_server_of_this_build_answers_the_query_with_the_vectors_it_computed() {
        let dir = tempfile::tempdir().unwrap();
        let s = search(dir.path());
        let server = fake(&s.client.place.socket, identity("hash"), 2);
        let never: Loader = Box::new(|| panic!("no in-process load while the server answers"));
        let mut e = s.embedder_or(never, "one").unwrap();
        // The query's vector was asked for ahead: embedding it asks nothing more.
        let mut hash = HashEmbedder::new();
        assert_eq!(e.embed(&["one"]).unwrap(), hash.embed(&["one"]).unwrap());
        let v = e.embed(&["one", "two"]).unwrap();
        assert_eq!(e.served_by(), Served::Resident);
        assert_eq!(v, hash.embed(&["one", "two"]).unwrap());
        assert_eq!(server.join().unwrap(), ["embed", "embed"]);
    }

    #[test]
    fn a_batch_may_take_longer_than_one_query_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let s = search(dir.path());
        // 20 texts at the server's pace (~10 ms each) and more: past one query's bound.
        let slow = EMBED_BOUND + Duration::from_millis(200);
        let server = fake_taking(&s.client.place.socket, identity("hash"), 1, slow);
        let texts: Vec<String> = (0..20).map(|i| format!("text {i}")).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let v = s.client.embed(&texts).unwrap();
        assert_eq!(v, HashEmbedder::new().embed(&texts).unwrap());
        server.join().unwrap();
    }

    #[test]
    fn a_server_gone_between_hello_and_query_leaves_the_query_to_an_in_process_load() {
        let dir = tempfile::tempdir().unwrap();
        let s = search(dir.path());
        let server = fake(&s.client.place.socket, identity("hash"), 1);
        let mut e = s.embedder_or(load_hash(), "").unwrap();
        assert_eq!(server.join().unwrap(), ["hello"]);
        let _ = fs::remove_file(dir.path().join("embed.sock"));
        let v = e.embed(&["the query"]).unwrap();
        assert_eq!(e.served_by(), Served::InProcess);
        assert_eq!(v, HashEmbedder::new().embed(&["the query"]).unwrap());
    }
}
