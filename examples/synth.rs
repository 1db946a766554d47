//! Synthetic Claude Code and Codex transcripts, for benchmarks and soak tests.
//!
//! ```text
//! cargo run --release --example synth -- --out DIR [--sessions N]
//!     [--events-per-session N | --bytes SIZE] [--codex-share F] [--seed S]
//!     [--start YYYY-MM-DD] [--days N]
//! cargo run --release --example synth -- --single FILE --bytes 100MB [--seed S]
//! ```
//!
//! Sessions land where the harnesses write them, so `HOME=DIR peat import` finds them:
//! Claude Code under `DIR/.claude/projects/-home-dev-<project>/<uuid>.jsonl`, Codex under
//! `DIR/.codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl`. The line shapes
//! follow `formats.md` §1.11 (Claude Code 2.1.190) and §3.11 (Codex legacy-mode rollouts).
//!
//! An "event" is roughly what a capture turns into a ledger row: a user prompt, an
//! assistant text block, a tool call, a compaction summary. Tool results, thinking blocks,
//! snapshots, attachments and Codex noise (`token_count`, `turn_context`, reasoning) ride
//! along for realistic byte sizes but are not counted.
//!
//! About 1% of prompts carry a pasted spec of 20-60 KB and 2% of closing messages a report
//! of 10-40 KB: capture keeps texts whole, and the benchmarks read ledgers that hold some.
//!
//! Output is a pure function of the arguments (and `--seed`): no clock, no OS randomness.

use serde_json::{Map, Value, json};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::exit;
use std::time::Instant;

const USAGE: &str = "\
usage: synth --out DIR [--sessions N] [--events-per-session N | --bytes SIZE]
             [--codex-share F] [--seed S] [--start YYYY-MM-DD] [--days N]
       synth --single FILE [--bytes SIZE | --events-per-session N] [--seed S]

  --out DIR               fake HOME: writes DIR/.claude/projects/… and DIR/.codex/sessions/…
  --sessions N            number of sessions (default 28)
  --events-per-session N  approximate events per session (default 1500)
  --bytes SIZE            total output size instead (split evenly across sessions);
                          SIZE is bytes or 512KB / 100MB / 2GB (powers of 1024)
  --codex-share F         fraction of sessions written as Codex rollouts (default 0.3)
  --seed S                PRNG seed (default 1)
  --start YYYY-MM-DD      first day sessions start on (default 2026-07-01)
  --days N                spread session starts over N days (default 28)
  --single FILE           write one Claude Code transcript to FILE (Codex if --codex-share 1)
";

// ------------------------------------------------------------------------------------------
// PRNG (splitmix64)

/// The splitmix64 finalizer: a bijective 64-bit hash.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone)]
struct Rng(u64);

impl Rng {
    /// Streams from different seeds (even adjacent ones) do not overlap: the seed is hashed.
    fn new(seed: u64) -> Rng {
        Rng(mix64(seed ^ 0x5DEE_CE66_D1CE_4E5B))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Roughly log-uniform in `lo..=hi`: many small values, a long tail.
    fn skewed(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo.max(1)) as f64, (hi.max(1)) as f64);
        let x = (a.ln() + self.unit() * (b.ln() - a.ln())).exp();
        (x as u64).clamp(lo, hi)
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    fn chars(&mut self, alphabet: &[u8], n: usize) -> String {
        let mut s = String::with_capacity(n);
        for _ in 0..n {
            s.push(alphabet[self.below(alphabet.len() as u64) as usize] as char);
        }
        s
    }

    fn b64_range(&mut self, lo: u64, hi: u64) -> String {
        let n = self.range(lo, hi) as usize;
        self.b64(n)
    }

    fn hex(&mut self, n: usize) -> String {
        self.chars(b"0123456789abcdef", n)
    }

    fn b62(&mut self, n: usize) -> String {
        self.chars(
            b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            n,
        )
    }

    fn b64(&mut self, n: usize) -> String {
        self.chars(
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            n,
        )
    }

    fn uuid4(&mut self) -> String {
        let a = self.next();
        let b = self.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | (b >> 48) & 0x3fff,
            b & 0xffff_ffff_ffff
        )
    }

    /// A UUID v7 (Codex thread and turn ids): 48 bits of unix ms, then random.
    fn uuid7(&mut self, ms: i64) -> String {
        let ms = ms as u64 & 0xffff_ffff_ffff;
        let a = self.next();
        let b = self.next();
        format!(
            "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
            ms >> 16,
            ms & 0xffff,
            a & 0xfff,
            0x8000 | (b >> 48) & 0x3fff,
            b & 0xffff_ffff_ffff
        )
    }
}

// ------------------------------------------------------------------------------------------
// Calendar (UTC, Hinnant's algorithms)

const DAY_MS: i64 = 86_400_000;

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

struct Civil {
    y: i64,
    mo: i64,
    d: i64,
    h: i64,
    mi: i64,
    s: i64,
    ms: i64,
}

fn civil(ms: i64) -> Civil {
    let (y, mo, d) = civil_from_days(ms.div_euclid(DAY_MS));
    let r = ms.rem_euclid(DAY_MS);
    Civil {
        y,
        mo,
        d,
        h: r / 3_600_000,
        mi: r / 60_000 % 60,
        s: r / 1000 % 60,
        ms: r % 1000,
    }
}

fn iso(ms: i64) -> String {
    let c = civil(ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        c.y, c.mo, c.d, c.h, c.mi, c.s, c.ms
    )
}

fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.split('-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let d: i64 = it.next()?.parse().ok()?;
    if it.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_uppercase();
    let t = t.strip_suffix("IB").map(|x| format!("{x}B")).unwrap_or(t);
    let (num, mult) = [
        ("GB", 1u64 << 30),
        ("MB", 1 << 20),
        ("KB", 1 << 10),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
        ("B", 1),
    ]
    .iter()
    .find_map(|(suf, m)| t.strip_suffix(suf).map(|n| (n.trim().to_string(), *m)))
    .unwrap_or((t.clone(), 1));
    let v: f64 = num.parse().ok()?;
    (v >= 0.0).then_some((v * mult as f64) as u64)
}

// ------------------------------------------------------------------------------------------
// Vocabulary

const PROJECTS: &[(&str, Lang)] = &[
    ("acme-api", Lang::Ts),
    ("peat", Lang::Rust),
    ("ledger-core", Lang::Rust),
    ("web-dashboard", Lang::Ts),
    ("fold-engine", Lang::Rust),
    ("billing-service", Lang::Py),
    ("data-pipeline", Lang::Py),
    ("nx-rs", Lang::Rust),
    ("infra-tools", Lang::Py),
    ("mobile-app", Lang::Ts),
];

#[derive(Clone, Copy, PartialEq)]
enum Lang {
    Rust,
    Ts,
    Py,
}

const RUST_FILES: &[&str] = &[
    "src/main.rs",
    "src/lib.rs",
    "src/cli.rs",
    "src/db.rs",
    "src/store.rs",
    "src/event.rs",
    "src/capture/reader.rs",
    "src/capture/claude.rs",
    "src/capture/codex.rs",
    "src/cursor.rs",
    "src/index/hnsw.rs",
    "src/index/bm25.rs",
    "src/search.rs",
    "src/brief.rs",
    "src/ladder.rs",
    "src/time.rs",
    "src/hook.rs",
    "src/config.rs",
    "tests/capture.rs",
    "tests/replay.rs",
    "benches/ingest.rs",
    "Cargo.toml",
    "README.md",
    "src/error.rs",
    "src/sync/lock.rs",
];
const TS_FILES: &[&str] = &[
    "src/server.ts",
    "src/app.ts",
    "src/middleware/rateLimit.ts",
    "src/middleware/auth.ts",
    "src/routes/users.ts",
    "src/routes/billing.ts",
    "src/db/pool.ts",
    "src/db/migrations.ts",
    "src/lib/cache.ts",
    "src/lib/retry.ts",
    "web/components/Dashboard.tsx",
    "web/components/NavUser.tsx",
    "web/hooks/useSession.ts",
    "web/store/authStore.ts",
    "test/limiter.test.ts",
    "test/routes.test.ts",
    "package.json",
    "tsconfig.json",
    "README.md",
];
const PY_FILES: &[&str] = &[
    "app/main.py",
    "app/models.py",
    "app/api/invoices.py",
    "app/api/customers.py",
    "app/services/stripe_sync.py",
    "app/db.py",
    "app/tasks/export_csv.py",
    "app/settings.py",
    "pipeline/extract.py",
    "pipeline/transform.py",
    "pipeline/load.py",
    "pipeline/schedule.py",
    "tests/test_invoices.py",
    "tests/test_pipeline.py",
    "pyproject.toml",
    "README.md",
];

const BRANCHES: &[&str] = &[
    "main",
    "main",
    "main",
    "feat/rate-limit",
    "fix/cursor-off-by-one",
    "feat/hnsw-index",
    "perf/zero-copy-reader",
    "refactor/store-api",
    "fix/flaky-ci",
    "feat/csv-export",
    "HEAD",
    "feat/oauth-refresh",
    "chore/deps",
];

const TOPICS: &[&str] = &[
    "token-bucket rate limiter",
    "HNSW vector index",
    "fjall keyspace compaction",
    "zstd dictionary compression",
    "tokio runtime shutdown",
    "serde untagged enum",
    "websocket reconnect backoff",
    "postgres migration",
    "OAuth refresh token flow",
    "LRU cache eviction",
    "flaky integration test",
    "race condition in the scheduler",
    "deadlock in the connection pool",
    "memory leak in the JSONL parser",
    "gRPC streaming endpoint",
    "Kafka consumer lag",
    "Redis pub/sub fanout",
    "JWT signature validation",
    "CSV export job",
    "pagination cursor",
    "retry with exponential jitter",
    "circuit breaker",
    "bloom filter sizing",
    "B-tree page split",
    "write-ahead log replay",
    "SIMD tokenizer",
    "UTF-8 boundary handling",
    "timezone offset handling",
    "ISO week numbering",
    "cron schedule parser",
    "feature flag rollout",
    "Docker multi-stage build",
    "GitHub Actions cache",
    "Nix flake inputs",
    "clippy warnings",
    "borrow checker error",
    "lifetime annotations",
    "async trait objects",
    "panic on empty input",
    "off-by-one in the capture cursor",
    "incremental capture cursor",
    "append-only ledger",
    "reciprocal rank fusion",
    "BM25 keyword scoring",
    "embedding dimension mismatch",
    "OpenTelemetry spans",
    "Prometheus histogram buckets",
    "TLS certificate rotation",
    "S3 multipart upload",
    "GraphQL resolver N+1 query",
    "React useEffect cleanup",
    "Tailwind dark mode toggle",
    "vitest snapshot tests",
    "pytest fixture scope",
    "mypy strict mode",
    "Stripe webhook idempotency",
    "invoice rounding",
    "session lock contention",
    "mmap-backed reader",
    "checkpoint policy",
    "hook install script",
    "idempotent upsert",
    "replay determinism",
    "tombstone retraction",
    "SQLite WAL checkpoint",
];

const VERBS: &[(&str, &str)] = &[
    ("Add", "Added"),
    ("Fix", "Fixed"),
    ("Refactor", "Refactored"),
    ("Investigate", "Investigated"),
    ("Write tests for", "Wrote tests for"),
    ("Benchmark", "Benchmarked"),
    ("Document", "Documented"),
    ("Speed up", "Sped up"),
    ("Remove", "Removed"),
    ("Migrate", "Migrated"),
    ("Review", "Reviewed"),
    ("Debug", "Debugged"),
    ("Profile", "Profiled"),
    ("Simplify", "Simplified"),
    ("Harden", "Hardened"),
    ("Rewrite", "Rewrote"),
];

const ERRORS: &[&str] = &[
    "index out of bounds: the len is 3 but the index is 3",
    "connection reset by peer (os error 104)",
    "called `Option::unwrap()` on a `None` value",
    "TypeError: Cannot read properties of undefined (reading 'map')",
    "deadline exceeded after 30s",
    "PoisonError { .. }: lock poisoned",
    "EADDRINUSE: address already in use :::3000",
    "mismatched types: expected `u32`, found `usize`",
    "relation \"invoices\" does not exist",
    "ModuleNotFoundError: No module named 'yaml'",
    "thread 'main' has overflowed its stack",
    "error[E0502]: cannot borrow `self.buf` as mutable because it is also borrowed as immutable",
    "SyntaxError: Unexpected token '<' in JSON at position 0",
    "sqlite3.OperationalError: database is locked",
    "Error: ledger still locked after 120s",
    "assertion `left == right` failed: left: 41, right: 42",
];

const CAUSES: &[&str] = &[
    "the cursor is advanced before the batch is committed",
    "the retry loop never resets its backoff after a success",
    "we clone the whole line buffer on every call",
    "the mutex guard is held across an await point",
    "timestamps are parsed as local time instead of UTC",
    "the cache key ignores the tenant id",
    "the iterator is consumed twice",
    "the migration runs before the connection pool is ready",
    "a partial last line is treated as corrupt instead of being deferred",
    "the tokenizer splits inside a multi-byte UTF-8 sequence",
    "the test depends on HashMap iteration order",
    "the rate limiter refills per request instead of per second",
    "the upsert key includes the wall-clock time, so replays are not idempotent",
    "the background task is never awaited on shutdown",
    "the JSON string is decoded once where it needs decoding twice",
    "the index is rebuilt from scratch on every insert",
];

const IDENTS: &[&str] = &[
    "cursor", "offset", "batch", "ledger", "session", "event", "buf", "reader", "writer", "index",
    "cache", "key", "value", "entry", "span", "token", "limit", "state", "config", "path", "line",
    "record", "blob", "hash", "seq", "ts_ms", "tx", "db", "store", "parser", "bucket", "window",
    "query", "score", "hit", "doc", "dim", "rows", "receipt", "invoice", "customer", "user",
    "retry", "backoff", "deadline", "pool", "conn", "payload", "header", "chunk",
];
const TYPES: &[&str] = &[
    "Event", "Session", "Ledger", "Cursor", "Batch", "Reader", "Config", "Error", "Store", "Blob",
    "Seq", "Receipt", "Parser", "Window", "Query", "Hit", "Index", "Span", "Token", "Bucket",
    "Invoice", "Customer", "Pool", "Limiter", "Snapshot",
];
const METHODS: &[&str] = &[
    "len",
    "push",
    "insert",
    "get",
    "parse",
    "flush",
    "read_line",
    "commit",
    "upsert",
    "iter",
    "collect",
    "map_err",
    "as_str",
    "to_string",
    "clone",
    "unwrap_or_default",
    "extend",
    "sort_by_key",
    "retain",
    "split",
    "trim",
    "finish",
    "open",
    "close",
    "send",
    "recv",
    "lock",
];

// ------------------------------------------------------------------------------------------
// Text and code

struct Lex {
    rust: Vec<String>,
    ts: Vec<String>,
    py: Vec<String>,
    instructions: String,
}

impl Lex {
    fn new(seed: u64) -> Lex {
        let mut r = Rng::new(seed.wrapping_mul(31).wrapping_add(7));
        let mut lex = Lex {
            rust: Vec::new(),
            ts: Vec::new(),
            py: Vec::new(),
            instructions: String::new(),
        };
        for lang in [Lang::Rust, Lang::Ts, Lang::Py] {
            let mut lines = Vec::with_capacity(12_000);
            while lines.len() < 12_000 {
                code_block(&mut r, lang, &mut lines);
            }
            match lang {
                Lang::Rust => lex.rust = lines,
                Lang::Ts => lex.ts = lines,
                Lang::Py => lex.py = lines,
            }
        }
        let mut ins = String::from(
            "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace and collaborate to achieve the user's goals.\n\n",
        );
        while ins.len() < 14_000 {
            ins.push_str("## ");
            ins.push_str(r.pick::<&str>(TOPICS));
            ins.push_str("\n\n- ");
            ins.push_str(&sentence(&mut r));
            ins.push_str("\n- ");
            ins.push_str(&sentence(&mut r));
            ins.push_str("\n\n");
        }
        lex.instructions = ins;
        lex
    }

    fn corpus(&self, lang: Lang) -> &[String] {
        match lang {
            Lang::Rust => &self.rust,
            Lang::Ts => &self.ts,
            Lang::Py => &self.py,
        }
    }

    /// `n` consecutive code lines from a random place (wrapping), as `(first_line, lines)`.
    fn lines<'a>(
        &'a self,
        r: &mut Rng,
        lang: Lang,
        n: usize,
    ) -> impl Iterator<Item = &'a str> + use<'a> {
        let c = self.corpus(lang);
        let start = r.below(c.len() as u64) as usize;
        (0..n).map(move |i| c[(start + i) % c.len()].as_str())
    }

    fn text(&self, r: &mut Rng, lang: Lang, n: usize) -> String {
        let mut s = String::with_capacity(n * 40);
        for l in self.lines(r, lang, n) {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    /// A file body of about `bytes`, returned with its line count.
    fn text_bytes(&self, r: &mut Rng, lang: Lang, bytes: usize) -> (String, usize) {
        let c = self.corpus(lang);
        let mut i = r.below(c.len() as u64) as usize;
        let mut s = String::with_capacity(bytes + 128);
        let mut n = 0;
        while s.len() < bytes {
            s.push_str(&c[i % c.len()]);
            s.push('\n');
            i += 1;
            n += 1;
        }
        (s, n)
    }
}

fn ident(r: &mut Rng) -> &'static str {
    r.pick::<&str>(IDENTS)
}

fn code_block(r: &mut Rng, lang: Lang, out: &mut Vec<String>) {
    let (i1, i2, i3) = (ident(r), ident(r), ident(r));
    let (t1, t2) = (r.pick(TYPES), r.pick(TYPES));
    let body = r.range(2, 14);
    match lang {
        Lang::Rust => {
            if r.chance(0.2) {
                out.push(format!("use crate::{i1}::{{{t1}, {t2}}};"));
            }
            if r.chance(0.3) {
                out.push(format!("/// {}", sentence(r)));
            }
            if r.chance(0.15) {
                out.push("#[test]".into());
                out.push(format!(
                    "fn {i1}_{i2}_{}() {{",
                    r.pick(&[
                        "roundtrips",
                        "is_idempotent",
                        "survives_partial_lines",
                        "rejects_garbage",
                        "orders_by_seq"
                    ])
                ));
            } else {
                out.push(format!(
                    "pub fn {i1}_{i2}(&mut self, {i3}: &{t1}) -> Result<{t2}, Error> {{"
                ));
            }
            for _ in 0..body {
                let (a, b) = (ident(r), ident(r));
                let line = match r.below(8) {
                    0 => format!("    let {a} = self.{b}.{}()?;", r.pick(METHODS)),
                    1 => format!(
                        "    if {a}.{}() > {} {{\n        return Err(Error::{}({b}));\n    }}",
                        r.pick(METHODS),
                        r.range(1, 4096),
                        r.pick(TYPES)
                    ),
                    2 => format!("    // {}", sentence(r)),
                    3 => format!(
                        "    assert_eq!({a}.{}(), {});",
                        r.pick(METHODS),
                        r.range(0, 100)
                    ),
                    4 => format!(
                        "    for {a} in {b}.iter() {{\n        self.{}.push({a}.clone());\n    }}",
                        ident(r)
                    ),
                    5 => format!(
                        "    let {a}: Vec<{}> = {b}.into_iter().filter(|x| x.{} != 0).collect();",
                        r.pick(TYPES),
                        ident(r)
                    ),
                    6 => format!("    tracing::debug!({a} = ?{b}, \"{}\");", r.pick(TOPICS)),
                    _ => format!("    self.{a}.{}(&{b});", r.pick(METHODS)),
                };
                out.extend(line.split('\n').map(String::from));
            }
            out.push(format!("    Ok({t2}::from({i3}))"));
            out.push("}".into());
            out.push(String::new());
        }
        Lang::Ts => {
            if r.chance(0.2) {
                out.push(format!("import {{ {t1}, {t2} }} from \"./{i1}\";"));
            }
            if r.chance(0.25) {
                out.push(format!("// {}", sentence(r)));
            }
            out.push(format!(
                "export async function {i1}{t1}({i2}: {t2}, {i3}?: number): Promise<{t1}> {{"
            ));
            for _ in 0..body {
                let (a, b) = (ident(r), ident(r));
                let line = match r.below(7) {
                    0 => format!("  const {a} = await {b}.{}({});", r.pick(METHODS), ident(r)),
                    1 => format!(
                        "  if (!{a}) throw new Error(\"{}\");",
                        r.pick(ERRORS).replace('"', "'")
                    ),
                    2 => format!("  // {}", sentence(r)),
                    3 => format!(
                        "  expect({a}.{}()).toBe({});",
                        r.pick(METHODS),
                        r.range(0, 100)
                    ),
                    4 => format!(
                        "  for (const {a} of {b}) {{\n    {}.push({a});\n  }}",
                        ident(r)
                    ),
                    5 => format!("  logger.info({{ {a}, {b} }}, \"{}\");", r.pick(TOPICS)),
                    _ => format!("  {a}.{} = {b} ?? {};", ident(r), r.range(0, 1000)),
                };
                out.extend(line.split('\n').map(String::from));
            }
            out.push(format!("  return new {t1}({i2});"));
            out.push("}".into());
            out.push(String::new());
        }
        Lang::Py => {
            if r.chance(0.2) {
                out.push(format!("from app.{i1} import {t1}, {t2}"));
            }
            out.push(format!(
                "def {i1}_{i2}({i3}: {t1}, limit: int = {}) -> {t2}:",
                r.range(1, 500)
            ));
            out.push(format!("    \"\"\"{}\"\"\"", sentence(r)));
            for _ in 0..body {
                let (a, b) = (ident(r), ident(r));
                let line = match r.below(6) {
                    0 => format!("    {a} = {b}.{}({})", r.pick(METHODS), ident(r)),
                    1 => format!(
                        "    if {a} is None:\n        raise ValueError(\"{}\")",
                        r.pick(CAUSES)
                    ),
                    2 => format!("    # {}", sentence(r)),
                    3 => format!("    assert {a}.{} == {}", ident(r), r.range(0, 100)),
                    4 => format!("    for {a} in {b}:\n        {}.append({a})", ident(r)),
                    _ => format!(
                        "    log.info(\"{}\", extra={{\"{a}\": {b}}})",
                        r.pick(TOPICS)
                    ),
                };
                out.extend(line.split('\n').map(String::from));
            }
            out.push(format!("    return {t2}({i3})"));
            out.push(String::new());
        }
    }
}

fn sentence(r: &mut Rng) -> String {
    let t = r.pick(TOPICS);
    let c = r.pick(CAUSES);
    match r.below(7) {
        0 => format!("The {t} breaks when {c}."),
        1 => format!("Keep the {t} deterministic so replays give the same result."),
        2 => format!("Note: {c}; see the {t} for details."),
        3 => format!("This guards the {t} against {}.", r.pick(ERRORS)),
        4 => format!("Callers rely on the {t} never blocking the hot path."),
        5 => format!("TODO: revisit the {t} once the {} lands.", r.pick(TOPICS)),
        _ => format!("Invariant: {c} must never happen again."),
    }
}

fn lc_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn prompt(r: &mut Rng, file: &str) -> String {
    let t = r.pick(TOPICS);
    let t2 = r.pick(TOPICS);
    let (v, _) = *r.pick(VERBS);
    let e = r.pick(ERRORS);
    let c = r.pick(CAUSES);
    let mut p = match r.below(18) {
        0 => format!("{v} the {t} in {file}."),
        1 => format!("{v} the {t}; keep the public API stable and add a regression test."),
        2 => format!("Why does the build fail with \"{e}\"? I think it's the {t}."),
        3 => format!("I'm seeing \"{e}\" in {file} after the last change. Can you investigate?"),
        4 => format!(
            "Look at {file} — the {t} is too slow on large inputs. Profile it and propose a fix."
        ),
        5 => "run the full test suite and fix whatever breaks".to_string(),
        6 => "commit this with a sensible message".to_string(),
        7 => format!("ok good. now {} the {t} too", lc_first(v)),
        8 => format!("Can we replace the {t} with a {t2}? What are the trade-offs?"),
        9 => format!("Summarise what changed in {file} and whether the {t} is covered by tests."),
        10 => format!("The CI job is flaky: \"{e}\". Make the {t} deterministic."),
        11 => format!("Please document the {t} in README.md, with an example."),
        12 => format!("{v} {file}: {c}."),
        13 => "yes, go ahead".to_string(),
        14 => format!("no — revert that, the {t} must stay synchronous"),
        15 => format!("I suspect {c}. Confirm with a failing test before changing {file}."),
        16 => format!("{v} the {t} and the {t2}, then run clippy and the tests."),
        _ => format!("What's the state of the {t}? Read {file} and tell me what's missing."),
    };
    if r.chance(0.07) {
        p.push_str("\n\nHere's the log:\n```\n");
        for i in 0..r.range(8, 60) {
            p.push_str(&format!(
                "2026-07-14T09:{:02}:{:02}Z ERROR {}::{}: {}\n",
                i % 60,
                r.below(60),
                ident(r),
                ident(r),
                r.pick(ERRORS)
            ));
        }
        p.push_str("```");
    }
    if r.chance(0.01) {
        // A pasted spec of tens of KB: capture keeps it whole, and reads must not slow.
        p.push_str("\n\nThe spec, pasted whole:\n");
        long_tail(r, &mut p, 20_000, 60_000);
    }
    p
}

/// Append sentences to `s` until it holds between `lo` and `hi` bytes (chosen by `r`).
fn long_tail(r: &mut Rng, s: &mut String, lo: u64, hi: u64) {
    let target = r.range(lo, hi) as usize;
    while s.len() < target {
        s.push_str("- ");
        s.push_str(&sentence(r));
        s.push('\n');
    }
}

fn commit_msg(r: &mut Rng) -> String {
    let (v, _) = *r.pick(VERBS);
    format!("{}: {} {}", ident(r), lc_first(v), r.pick(TOPICS))
}

fn short_text(r: &mut Rng, file: &str) -> String {
    let t = r.pick(TOPICS);
    match r.below(8) {
        0 => format!("Let me read {file} first."),
        1 => "Now let me run the tests.".to_string(),
        2 => format!("I'll check how the {t} is wired up."),
        3 => format!(
            "Found it: {}, so the {t} sees stale state. I'll fix that in {file}.",
            r.pick(CAUSES)
        ),
        4 => format!(
            "The failure is \"{}\". Looking at the call site.",
            r.pick(ERRORS)
        ),
        5 => format!("That compiles. Next, the {t}: {}", sentence(r)),
        6 => "Let me search for other callers before changing the signature.".to_string(),
        _ => format!("The {t} looks right; the problem must be elsewhere. Checking {file}."),
    }
}

fn final_text(r: &mut Rng, file: &str) -> String {
    let (_, past) = *r.pick(VERBS);
    let t = r.pick(TOPICS);
    let mut s = format!(
        "{past} the {t} in `{file}`. The root cause was that {}; the fix makes that impossible by construction.",
        r.pick(CAUSES)
    );
    match r.below(4) {
        0 => s.push_str(&format!(
            "\n\nAll {} tests pass and clippy is clean.",
            r.range(12, 400)
        )),
        1 => s.push_str(&format!(
            "\n\nChanges:\n- `{file}`: {}\n- added a regression test for the {}\n- {}",
            sentence(r),
            r.pick(TOPICS),
            sentence(r)
        )),
        2 => s.push_str(&format!(
            "\n\nOne open question: should the {} also cover the {}?",
            t,
            r.pick(TOPICS)
        )),
        _ => {}
    }
    if r.chance(0.02) {
        // A long closing report (10-40 KB), kept whole by capture.
        s.push_str("\n\nFull report:\n");
        long_tail(r, &mut s, 10_000, 40_000);
    }
    s
}

// ------------------------------------------------------------------------------------------
// Output

#[derive(Default)]
struct Stats {
    files: u64,
    lines: u64,
    bytes: u64,
    events: u64,
    claude: u64,
    codex: u64,
}

struct Out {
    w: BufWriter<File>,
    buf: Vec<u8>,
    lines: u64,
    bytes: u64,
}

impl Out {
    fn create(path: &Path) -> Out {
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            fs::create_dir_all(dir)
                .unwrap_or_else(|e| die(&format!("mkdir {}: {e}", dir.display())));
        }
        let f =
            File::create(path).unwrap_or_else(|e| die(&format!("create {}: {e}", path.display())));
        Out {
            w: BufWriter::with_capacity(1 << 20, f),
            buf: Vec::with_capacity(1 << 16),
            lines: 0,
            bytes: 0,
        }
    }

    /// An object with its top-level keys in the given order, as the harnesses write them
    /// (a `Value` object would sort them).
    fn fields(&mut self, f: &[(&str, Value)]) {
        self.buf.clear();
        self.buf.push(b'{');
        for (i, (k, v)) in f.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            serde_json::to_writer(&mut self.buf, k).expect("serialize");
            self.buf.push(b':');
            serde_json::to_writer(&mut self.buf, v).expect("serialize");
        }
        self.buf.push(b'}');
        self.end();
    }

    fn end(&mut self) {
        self.buf.push(b'\n');
        self.w
            .write_all(&self.buf)
            .unwrap_or_else(|e| die(&format!("write: {e}")));
        self.lines += 1;
        self.bytes += self.buf.len() as u64;
    }

    fn finish(mut self, stats: &mut Stats) {
        self.w
            .flush()
            .unwrap_or_else(|e| die(&format!("write: {e}")));
        stats.files += 1;
        stats.lines += self.lines;
        stats.bytes += self.bytes;
    }
}

/// A transcript gets a multi-MB Read result at least once per this many bytes.
const HUGE_EVERY: u64 = 40 << 20;

/// A JSON object's top-level fields, in writing order.
type Fields = Vec<(&'static str, Value)>;

trait Put {
    fn put(&mut self, k: &'static str, v: Value);
}

impl Put for Fields {
    fn put(&mut self, k: &'static str, v: Value) {
        self.push((k, v));
    }
}

#[derive(Clone, Copy)]
enum Budget {
    Events(u64),
    Bytes(u64),
}

struct Session<'a> {
    r: Rng,
    lex: &'a Lex,
    out: Out,
    budget: Budget,
    /// Output size at the last multi-MB line.
    last_huge: u64,
    events: u64,
    ts: i64,
    lang: Lang,
    files: &'static [&'static str],
    cwd: String,
    branch: &'static str,
    id: String,
}

impl Session<'_> {
    fn done(&self) -> bool {
        match self.budget {
            Budget::Events(n) => self.events >= n,
            Budget::Bytes(n) => self.out.bytes >= n,
        }
    }

    /// Advance the clock by `lo..=hi` ms (at least 1 ms: timestamps strictly increase).
    fn tick(&mut self, lo: u64, hi: u64) -> i64 {
        self.ts += self.r.range(lo.max(1), hi.max(1)) as i64;
        self.ts
    }

    fn file(&mut self) -> &'static str {
        self.r.pick::<&str>(self.files)
    }

    fn abs(&self, rel: &str) -> String {
        format!("{}/{}", self.cwd, rel)
    }

    fn code(&mut self, n: usize) -> String {
        self.lex.text(&mut self.r, self.lang, n)
    }

    fn code_range(&mut self, lo: u64, hi: u64) -> String {
        let n = self.r.range(lo, hi) as usize;
        self.code(n)
    }

    fn code_skewed(&mut self, lo: u64, hi: u64) -> String {
        let n = self.r.skewed(lo, hi) as usize;
        self.code(n)
    }

    fn cmd_output(&mut self, cmd: &str, fail: bool) -> String {
        let r = &mut self.r;
        let mut s = String::new();
        if cmd.starts_with("npm test") {
            let n = r.skewed(3, 300);
            s.push_str(&format!(
                "\n> {} test\n> vitest run\n\n",
                self.cwd.rsplit('/').next().unwrap_or("app")
            ));
            for _ in 0..r.range(1, 12) {
                s.push_str(&format!(
                    " ✓ test/{}.test.ts ({} tests) {}ms\n",
                    ident(r),
                    r.range(1, 40),
                    r.range(2, 900)
                ));
            }
            if fail {
                s.push_str(&format!(
                    " ✗ test/{}.test.ts > {} > {}\n   {}\n\n Test Files  1 failed | {} passed\n",
                    ident(r),
                    r.pick(TOPICS),
                    ident(r),
                    r.pick(ERRORS),
                    r.range(1, 20)
                ));
            } else {
                s.push_str(&format!(
                    "\n Test Files  {} passed\n      Tests  {n} passed\n   Duration  {:.2}s\n",
                    r.range(1, 20),
                    r.unit() * 10.0
                ));
            }
        } else if cmd.starts_with("pytest") {
            let n = r.skewed(3, 300);
            for _ in 0..(n / 60 + 1) {
                s.push_str(&format!(
                    "tests/test_{}.py {} [{:>3}%]\n",
                    ident(r),
                    ".".repeat(r.range(1, 60) as usize),
                    r.range(1, 100)
                ));
            }
            if fail {
                s.push_str(&format!("\n=================================== FAILURES ===================================\n____ test_{} ____\nE   {}\n=========================== short test summary info ============================\nFAILED tests/test_{}.py::test_{} - {}\n1 failed, {} passed in {:.2}s\n", ident(r), r.pick(ERRORS), ident(r), ident(r), r.pick(CAUSES), n - 1, r.unit() * 30.0));
            } else {
                s.push_str(&format!("\n{n} passed in {:.2}s\n", r.unit() * 30.0));
            }
        } else if cmd.starts_with("cargo test") {
            let n = r.skewed(3, 300);
            s.push_str(&format!("running {n} tests\n"));
            for _ in 0..n.min(20) {
                s.push_str(&format!(
                    "test {}::{}_{} ... ok\n",
                    ident(r),
                    ident(r),
                    ident(r)
                ));
            }
            if fail {
                s.push_str(&format!(
                    "test {}::{} ... FAILED\n\nfailures:\n\n---- {} stdout ----\nthread '{}' panicked at src/{}.rs:{}:{}:\n{}\n\ntest result: FAILED. {} passed; 1 failed; 0 ignored; finished in {:.2}s\n",
                    ident(r), ident(r), ident(r), ident(r), ident(r), r.range(1, 900), r.range(1, 80),
                    r.pick(ERRORS), n - 1, r.unit() * 20.0
                ));
            } else {
                s.push_str(&format!(
                    "\ntest result: ok. {n} passed; 0 failed; 0 ignored; finished in {:.2}s\n",
                    r.unit() * 20.0
                ));
            }
        } else if cmd.starts_with("cargo build") || cmd.starts_with("cargo clippy") {
            for _ in 0..r.range(0, 6) {
                s.push_str(&format!(
                    "   Compiling {} v0.{}.{}\n",
                    ident(r),
                    r.range(0, 9),
                    r.range(0, 30)
                ));
            }
            if fail {
                s.push_str(&format!("error: {}\n  --> src/{}.rs:{}:{}\n\nerror: could not compile due to 1 previous error\n", r.pick(ERRORS), ident(r), r.range(1, 900), r.range(1, 80)));
            } else {
                s.push_str(&format!(
                    "    Finished `release` profile [optimized] target(s) in {:.1}s\n",
                    r.unit() * 90.0
                ));
            }
        } else if cmd.starts_with("rg") || cmd.starts_with("grep") {
            let lang = self.lang;
            for _ in 0..r.skewed(1, 120) {
                let f = r.pick(self.files);
                let l = self.lex.lines(r, lang, 1).next().unwrap_or("");
                s.push_str(&format!("{f}:{}:{l}\n", r.range(1, 2000)));
            }
        } else if cmd.starts_with("git status") {
            for _ in 0..r.range(0, 8) {
                s.push_str(&format!(
                    "{} {}\n",
                    r.pick(&[" M", "??", " D", "A "]),
                    r.pick(self.files)
                ));
            }
        } else if cmd.starts_with("git log") {
            for _ in 0..10 {
                s.push_str(&format!("{} {}\n", r.hex(7), commit_msg(r)));
            }
        } else if cmd.starts_with("git diff") {
            let lang = self.lang;
            let f = r.pick(self.files);
            s.push_str(&format!(
                "diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -{},7 +{},9 @@\n",
                r.range(1, 400),
                r.range(1, 400)
            ));
            let n = r.range(4, 60) as usize;
            for l in self.lex.lines(r, lang, n) {
                s.push(*r.pick(&[' ', ' ', ' ', '+', '-']));
                s.push_str(l);
                s.push('\n');
            }
        } else if cmd.starts_with("ls") {
            for f in self
                .files
                .iter()
                .take(r.range(3, self.files.len() as u64) as usize)
            {
                s.push_str(f);
                s.push('\n');
            }
        } else {
            let lang = self.lang;
            let n = r.skewed(1, 200) as usize;
            s = self.lex.text(r, lang, n);
        }
        s
    }

    /// A Bash/exec command, and whether it is a commit (with its message).
    fn command(&mut self) -> (String, Option<String>) {
        let r = &mut self.r;
        if r.chance(0.08) {
            let msg = commit_msg(r);
            let cmd = if r.chance(0.5) {
                format!("git add -A && git commit -m \"{msg}\"")
            } else {
                format!("git commit -am \"{msg}\"")
            };
            return (cmd, Some(msg));
        }
        let f = *r.pick(self.files);
        let cmd = match (self.lang, r.below(10)) {
            (Lang::Rust, 0..=2) => format!(
                "cargo test {}",
                r.pick(&["", "--release", "-p peat", "capture", "-- --nocapture"])
            ),
            (Lang::Rust, 3) => "cargo clippy --all-targets -- -D warnings".to_string(),
            (Lang::Rust, 4) => "cargo build --release".to_string(),
            (Lang::Ts, 0..=3) => format!(
                "npm test -- {}",
                r.pick(&["", "--run", "limiter", "routes"])
            ),
            (Lang::Py, 0..=3) => format!(
                "pytest -q {}",
                r.pick(&["", "tests/test_invoices.py", "-x", "-k pipeline"])
            ),
            (_, 5) => format!("rg -n \"{}\" src", ident(r)),
            (_, 6) => "git status --short".to_string(),
            (_, 7) => "git diff --stat HEAD~1 && git diff".to_string(),
            (_, 8) => "git log --oneline -10".to_string(),
            _ => format!("{} {f}", r.pick(&["ls -la", "wc -l", "head -50", "cat"])),
        };
        (cmd, None)
    }
}

// ------------------------------------------------------------------------------------------
// Claude Code

struct Claude<'a> {
    s: Session<'a>,
    parent: Option<String>,
    model: &'static str,
    last_prompt: String,
}

impl<'a> Claude<'a> {
    /// The envelope's leading fields; `emit` appends `uuid` and `timestamp`.
    fn env(&mut self, ty: &str) -> Fields {
        let mut m = Fields::with_capacity(16);
        m.put(
            "parentUuid",
            self.parent.clone().map_or(Value::Null, Value::String),
        );
        m.put("isSidechain", false.into());
        m.put("userType", "external".into());
        m.put("cwd", self.s.cwd.clone().into());
        m.put("sessionId", self.s.id.clone().into());
        m.put("version", "2.1.190".into());
        m.put("gitBranch", self.s.branch.into());
        m.put("entrypoint", "cli".into());
        m.put("type", ty.into());
        m
    }

    fn emit(&mut self, mut m: Fields, uuid: String) {
        m.put("uuid", uuid.clone().into());
        m.put("timestamp", iso(self.s.ts).into());
        self.s.out.fields(&m);
        self.parent = Some(uuid);
    }

    fn usage(&mut self) -> Value {
        let r = &mut self.s.r;
        json!({
            "input_tokens": r.range(1, 12),
            "cache_creation_input_tokens": r.skewed(100, 20_000),
            "cache_read_input_tokens": r.range(10_000, 180_000),
            "output_tokens": r.skewed(20, 4_000),
            "service_tier": "standard",
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": r.skewed(100, 20_000)},
        })
    }

    fn assistant(
        &mut self,
        msg_id: &str,
        req_id: &str,
        usage: &Value,
        block: Value,
        stop: &str,
    ) -> String {
        let uuid = self.s.r.uuid4();
        let mut m = self.env("assistant");
        m.put(
            "message",
            json!({
                "model": self.model,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop,
                "stop_sequence": null,
                "usage": usage,
            }),
        );
        m.put("requestId", req_id.into());
        m.put("effort", "high".into());
        self.emit(m, uuid.clone());
        uuid
    }

    fn user_text(&mut self, text: String) {
        let uuid = self.s.r.uuid4();
        self.s.tick(1, 5);
        self.s.out.fields(&[
            ("type", "file-history-snapshot".into()),
            ("messageId", uuid.clone().into()),
            (
                "snapshot",
                json!({"messageId": uuid, "trackedFileBackups": {}, "timestamp": iso(self.s.ts)}),
            ),
            ("isSnapshotUpdate", false.into()),
        ]);
        let mut m = self.env("user");
        let content = if self.s.r.chance(0.2) {
            json!([{"type": "text", "text": text}])
        } else {
            Value::String(text.clone())
        };
        m.put("message", json!({"role": "user", "content": content}));
        m.put("promptId", self.s.r.uuid4().into());
        m.put(
            "permissionMode",
            (*self
                .s
                .r
                .pick(&["default", "default", "acceptEdits", "plan"]))
            .into(),
        );
        self.last_prompt = text;
        self.emit(m, uuid);
        self.s.events += 1;
    }

    fn attachment(&mut self, att: Value) {
        let uuid = self.s.r.uuid4();
        self.s.tick(1, 50);
        let mut m = self.env("attachment");
        m.put("attachment", att);
        self.emit(m, uuid);
    }

    fn session_start(&mut self) {
        let id = self.s.r.uuid4();
        let ms = self.s.r.range(8, 40);
        self.parent = None;
        self.attachment(json!({
            "type": "hook_success",
            "hookName": "SessionStart:startup",
            "toolUseID": id,
            "hookEvent": "SessionStart",
            "content": "",
            "stdout": "",
            "stderr": "",
            "exitCode": 0,
            "command": "peat hook",
            "durationMs": ms,
        }));
    }

    fn compact(&mut self) {
        let uuid = self.s.r.uuid4();
        self.s.tick(20_000, 90_000);
        let logical = self.parent.take();
        let mut m = self.env("system");
        m.put(
            "logicalParentUuid",
            logical.map_or(Value::Null, Value::String),
        );
        m.put("subtype", "compact_boundary".into());
        m.put("content", "Conversation compacted".into());
        m.put("level", "info".into());
        m.put("compactMetadata",
            json!({"trigger": *self.s.r.pick(&["auto", "auto", "manual"]), "preTokens": self.s.r.range(150_000, 190_000), "postTokens": self.s.r.range(6_000, 14_000), "durationMs": self.s.r.range(20_000, 60_000)}),
        );
        self.emit(m, uuid);

        let f = self.s.file();
        let mut text = String::from(
            "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n",
        );
        text.push_str(&format!(
            "1. Primary Request and Intent: {}\n\n2. Key Technical Concepts:\n",
            prompt(&mut self.s.r, f)
        ));
        for _ in 0..self.s.r.range(4, 12) {
            text.push_str(&format!("   - {}\n", self.s.r.pick(TOPICS)));
        }
        text.push_str("\n3. Files and Code Sections:\n");
        for _ in 0..self.s.r.range(2, 8) {
            let f = self.s.file();
            let snip = self.s.code_range(3, 25);
            text.push_str(&format!(
                "   - {f}\n     {}\n```\n{snip}```\n",
                sentence(&mut self.s.r)
            ));
        }
        text.push_str(&format!(
            "\n4. Errors and fixes:\n   - \"{}\": {}\n\n5. Pending Tasks:\n   - {}\n",
            self.s.r.pick(ERRORS),
            self.s.r.pick(CAUSES),
            sentence(&mut self.s.r)
        ));
        let uuid = self.s.r.uuid4();
        self.s.tick(5, 20);
        let mut m = self.env("user");
        m.put("message", json!({"role": "user", "content": text}));
        m.put("isCompactSummary", true.into());
        m.put("isVisibleInTranscriptOnly", true.into());
        self.emit(m, uuid);
        self.s.events += 1;
    }

    /// A tool call's input and its result: (name, input, result text, toolUseResult, is_error).
    fn tool(&mut self) -> (&'static str, Value, String, Value, bool) {
        let roll = self.s.r.below(100);
        let fail = self.s.r.chance(0.06);
        let rel = self.s.file();
        let path = self.s.abs(rel);
        match roll {
            0..=34 => {
                let (cmd, commit) = self.s.command();
                let input = json!({"command": cmd, "description": self.s.r.pick(&["Run tests", "Build", "Search the codebase", "Check git status", "Commit changes", "Show file"])});
                if let Some(msg) = commit {
                    let out = format!(
                        "[{} {}] {msg}\n {} files changed, {} insertions(+), {} deletions(-)\n",
                        if self.s.branch == "HEAD" {
                            "detached HEAD"
                        } else {
                            self.s.branch
                        },
                        self.s.r.hex(7),
                        self.s.r.range(1, 9),
                        self.s.r.range(1, 300),
                        self.s.r.range(0, 120)
                    );
                    let tur = json!({"stdout": out, "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false});
                    return ("Bash", input, out, tur, false);
                }
                let out = self.s.cmd_output(&cmd, fail);
                if fail {
                    let code = if cmd.starts_with("cargo test") {
                        101
                    } else {
                        1
                    };
                    let text = format!("Exit code {code}\n{out}");
                    (
                        "Bash",
                        input,
                        text.clone(),
                        Value::String(format!("Error: {text}")),
                        true,
                    )
                } else {
                    let tur = json!({"stdout": out, "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false});
                    ("Bash", input, out, tur, false)
                }
            }
            35..=59 => {
                let lang = self.s.lang;
                let u = self.s.r.unit();
                // The body rides twice on the result line (numbered in the tool_result,
                // raw in toolUseResult), so a 100 KB file makes a ~200 KB line.
                // Besides the odd random one, a multi-MB line at least every HUGE_EVERY bytes,
                // so a big single transcript always exercises huge-line handling.
                let huge = u < 0.0004 || self.s.out.bytes >= self.s.last_huge + HUGE_EVERY;
                if huge {
                    self.s.last_huge = self.s.out.bytes;
                }
                let (body, n) = if huge {
                    let b = self.s.r.range(2 << 20, 3 << 20) as usize;
                    self.s.lex.text_bytes(&mut self.s.r, lang, b)
                } else if u < 0.008 {
                    let b = self.s.r.range(80 << 10, 130 << 10) as usize;
                    self.s.lex.text_bytes(&mut self.s.r, lang, b)
                } else {
                    let n = self.s.r.skewed(5, 150) as usize;
                    (self.s.code(n), n)
                };
                let mut numbered = String::with_capacity(body.len() + n * 8);
                for (i, l) in body.lines().enumerate() {
                    numbered.push_str(&format!("{:>6}\t{l}\n", i + 1));
                }
                let input = json!({"file_path": path});
                let tur = json!({"type": "text", "file": {"filePath": path, "content": body, "numLines": n, "startLine": 1, "totalLines": n}});
                ("Read", input, numbered, tur, false)
            }
            60..=77 => {
                let old = self.s.code_range(1, 8);
                let mut new = old.clone();
                new.push_str(&self.s.code_range(1, 10));
                let input = json!({"file_path": path, "old_string": old, "new_string": new, "replace_all": false});
                if fail {
                    let msg = format!("String to replace not found in file.\nString: {old}");
                    return (
                        "Edit",
                        input,
                        format!("<tool_use_error>{msg}</tool_use_error>"),
                        Value::String(format!("Error: {msg}")),
                        true,
                    );
                }
                let orig = self.s.code_skewed(10, 200);
                let start = self.s.r.range(1, 400);
                let mut lines: Vec<String> = old.lines().map(|l| format!("-{l}")).collect();
                lines.extend(new.lines().map(|l| format!("+{l}")));
                let tur = json!({
                    "filePath": path, "oldString": old, "newString": new, "originalFile": orig,
                    "structuredPatch": [{"oldStart": start, "oldLines": old.lines().count(), "newStart": start, "newLines": new.lines().count(), "lines": lines}],
                    "userModified": false, "replaceAll": false,
                });
                (
                    "Edit",
                    input,
                    format!("The file {path} has been updated successfully."),
                    tur,
                    false,
                )
            }
            78..=89 => {
                let pat = format!("{}|{}", ident(&mut self.s.r), self.s.r.pick(TYPES));
                let input = json!({"pattern": pat, "path": self.s.cwd, "output_mode": "content", "-n": true});
                let mut out = String::new();
                let hits = self.s.r.skewed(1, 50);
                for _ in 0..hits {
                    let f = self.s.file();
                    let l = self.s.code(1);
                    out.push_str(&format!(
                        "{}:{}:{}",
                        self.s.abs(f),
                        self.s.r.range(1, 2000),
                        l
                    ));
                }
                let tur = json!({"mode": "content", "filenames": [], "numFiles": 0, "content": out, "numLines": hits});
                ("Grep", input, out, tur, false)
            }
            90..=94 => {
                let body = self.s.code_skewed(10, 300);
                let input = json!({"file_path": path, "content": body});
                let tur = json!({"type": "create", "filePath": path, "content": body, "structuredPatch": []});
                (
                    "Write",
                    input,
                    format!("File created successfully at: {path}"),
                    tur,
                    false,
                )
            }
            95..=97 => {
                let ext = match self.s.lang {
                    Lang::Rust => "rs",
                    Lang::Ts => "ts",
                    Lang::Py => "py",
                };
                let input = json!({"pattern": format!("**/*.{ext}")});
                let names: Vec<String> = self.s.files.iter().map(|f| self.s.abs(f)).collect();
                let tur = json!({"filenames": names, "durationMs": self.s.r.range(5, 300), "numFiles": names.len(), "truncated": false});
                ("Glob", input, names.join("\n"), tur, false)
            }
            _ => {
                let todos: Vec<Value> = (0..self.s.r.range(2, 7))
                    .map(|i| {
                        let (v, _) = *self.s.r.pick(VERBS);
                        let t = self.s.r.pick(TOPICS);
                        json!({"content": format!("{v} the {t}"), "status": if i == 0 { "in_progress" } else { "pending" }, "activeForm": format!("Working on the {t}")})
                    })
                    .collect();
                let input = json!({"todos": todos});
                let tur = json!({"oldTodos": [], "newTodos": todos});
                ("TodoWrite", input, "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.".into(), tur, false)
            }
        }
    }

    fn turn(&mut self) {
        let f = self.s.file();
        let p = prompt(&mut self.s.r, f);
        self.user_text(p);
        if self.s.r.chance(0.1) {
            let t = self.s.r.pick(TOPICS);
            self.attachment(json!({"type": "hook_additional_context", "hookName": "UserPromptSubmit", "content": [format!("peat: related history on the {t}")]}));
        }
        let steps = self.s.r.skewed(1, 24);
        for _ in 0..steps {
            if self.s.done() {
                break;
            }
            let msg_id = format!("msg_01{}", self.s.r.b62(22));
            let req_id = format!("req_011C{}", self.s.r.b62(18));
            let usage = self.usage();
            self.s.tick(1_500, 25_000);
            if self.s.r.chance(0.35) {
                let sig = self.s.r.b64_range(150, 1600);
                self.assistant(
                    &msg_id,
                    &req_id,
                    &usage,
                    json!({"type": "thinking", "thinking": "", "signature": sig}),
                    "tool_use",
                );
                self.s.tick(1, 400);
            }
            if self.s.r.chance(0.3) {
                let f = self.s.file();
                let t = short_text(&mut self.s.r, f);
                self.assistant(
                    &msg_id,
                    &req_id,
                    &usage,
                    json!({"type": "text", "text": t}),
                    "tool_use",
                );
                self.s.events += 1;
                self.s.tick(1, 400);
            }
            // One response, one or more tool_use lines (parallel calls), then their results.
            let parallel = if self.s.r.chance(0.12) {
                self.s.r.range(2, 4)
            } else {
                1
            };
            let mut calls = Vec::new();
            for _ in 0..parallel {
                let (name, input, text, tur, err) = self.tool();
                let id = format!("toolu_01{}", self.s.r.b62(22));
                let a = self.assistant(&msg_id, &req_id, &usage, json!({"type": "tool_use", "id": id, "name": name, "input": input, "caller": {"type": "direct"}}), "tool_use");
                self.s.events += 1;
                self.s.tick(1, 300);
                calls.push((id, a, text, tur, err));
            }
            for (id, a, text, tur, err) in calls {
                let uuid = self.s.r.uuid4();
                self.s.tick(40, 40_000);
                let mut block = json!({"tool_use_id": id, "type": "tool_result", "content": text});
                if err {
                    block["is_error"] = true.into();
                }
                let mut m = self.env("user");
                m.put("message", json!({"role": "user", "content": [block]}));
                m.put("toolUseResult", tur);
                m.put("sourceToolAssistantUUID", a.into());
                self.emit(m, uuid);
            }
        }
        let msg_id = format!("msg_01{}", self.s.r.b62(22));
        let req_id = format!("req_011C{}", self.s.r.b62(18));
        let usage = self.usage();
        self.s.tick(2_000, 30_000);
        let f = self.s.file();
        let t = final_text(&mut self.s.r, f);
        self.assistant(
            &msg_id,
            &req_id,
            &usage,
            json!({"type": "text", "text": t}),
            "end_turn",
        );
        self.s.events += 1;
        if self.s.r.chance(0.5) {
            let uuid = self.s.r.uuid4();
            self.s.tick(5, 50);
            let mut m = self.env("system");
            m.put("subtype", "turn_duration".into());
            m.put("durationMs", self.s.r.range(3_000, 600_000).into());
            m.put("isMeta", false.into());
            self.emit(m, uuid);
        }
    }

    fn run(mut self, stats: &mut Stats) {
        self.session_start();
        let mut since_compact = 0u64;
        // At least one turn, however small the budget.
        loop {
            let before = self.s.events;
            self.turn();
            since_compact += self.s.events - before;
            if self.s.done() {
                break;
            }
            if since_compact > 150 && self.s.r.chance(0.04) {
                self.compact();
                since_compact = 0;
            }
            // The user reads, thinks, goes to lunch.
            let gap = if self.s.r.chance(0.05) {
                self.s.r.range(3_600_000, 5 * 3_600_000)
            } else {
                self.s.r.skewed(10_000, 1_200_000)
            };
            self.s.tick(gap, gap);
        }
        let leaf = self.parent.clone();
        let title = format!("{} {}", self.s.r.pick(VERBS).0, self.s.r.pick(TOPICS));
        let last: String = self.last_prompt.chars().take(200).collect();
        let id: Value = self.s.id.clone().into();
        self.s.out.fields(&[
            ("type", "last-prompt".into()),
            ("lastPrompt", last.into()),
            ("leafUuid", leaf.into()),
            ("sessionId", id.clone()),
        ]);
        self.s.out.fields(&[
            ("type", "ai-title".into()),
            ("aiTitle", title.into()),
            ("sessionId", id),
        ]);
        stats.events += self.s.events;
        stats.claude += 1;
        self.s.out.finish(stats);
    }
}

// ------------------------------------------------------------------------------------------
// Codex

struct Codex<'a> {
    s: Session<'a>,
    total_in: u64,
    total_out: u64,
    first_turn: bool,
}

impl Codex<'_> {
    fn line(&mut self, ty: &str, payload: Value) {
        let ts = iso(self.s.ts);
        self.s.out.fields(&[
            ("timestamp", ts.into()),
            ("type", ty.into()),
            ("payload", payload),
        ]);
    }

    fn token_count(&mut self) {
        let (i, o) = (self.s.r.range(2_000, 20_000), self.s.r.skewed(20, 3_000));
        self.total_in += i;
        self.total_out += o;
        let cached = i * 8 / 10;
        let pct = (self.total_in % 9_000) as f64 / 100.0;
        self.s.tick(1, 30);
        self.line(
            "event_msg",
            json!({"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": self.total_in, "cached_input_tokens": self.total_in * 8 / 10, "output_tokens": self.total_out, "reasoning_output_tokens": self.total_out / 3, "total_tokens": self.total_in + self.total_out},
                "last_token_usage": {"input_tokens": i, "cached_input_tokens": cached, "output_tokens": o, "reasoning_output_tokens": o / 3, "total_tokens": i + o},
                "model_context_window": 258_400},
                "rate_limits": {"limit_id": "codex", "primary": {"used_percent": pct, "window_minutes": 300, "resets_at": self.s.ts / 1000 + 9_000}, "secondary": {"used_percent": pct / 5.0, "window_minutes": 10_080, "resets_at": self.s.ts / 1000 + 400_000}, "credits": null, "plan_type": null}}),
        );
    }

    fn turn_context(&mut self, turn_id: &str) {
        self.s.tick(1, 20);
        let day = iso(self.s.ts)[..10].to_string();
        self.line(
            "turn_context",
            json!({"turn_id": turn_id, "cwd": self.s.cwd, "current_date": day, "timezone": "Europe/Berlin", "approval_policy": "on-request",
                   "sandbox_policy": {"type": "workspace-write", "writable_roots": [self.s.cwd], "network_access": false, "exclude_tmpdir_env_var": false, "exclude_slash_tmp": false},
                   "model": "gpt-5.3-codex", "effort": "medium", "summary": "auto"}),
        );
    }

    fn message(&mut self, role: &str, text: &str, phase: Option<&str>) {
        let kind = if role == "assistant" {
            "output_text"
        } else {
            "input_text"
        };
        let mut p =
            json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]});
        if let Some(ph) = phase {
            p["phase"] = ph.into();
        }
        self.line("response_item", p);
    }

    fn agent_says(&mut self, text: &str, phase: &str) {
        self.line(
            "event_msg",
            json!({"type": "agent_message", "message": text, "phase": phase}),
        );
        self.s.tick(1, 5);
        self.message("assistant", text, Some(phase));
        self.s.events += 1;
    }

    fn exec(&mut self) {
        let (cmd, commit) = self.s.command();
        let fail = commit.is_none() && self.s.r.chance(0.08);
        let call_id = format!("call_{}", self.s.r.b62(24));
        let args = json!({"cmd": cmd, "workdir": self.s.cwd, "yield_time_ms": 1000, "max_output_tokens": 10_000}).to_string();
        self.line("response_item", json!({"type": "function_call", "name": "exec_command", "arguments": args, "call_id": call_id}));
        self.s.events += 1;
        let out = match commit {
            Some(msg) => format!(
                "[{} {}] {msg}\n {} files changed, {} insertions(+), {} deletions(-)\n",
                if self.s.branch == "HEAD" {
                    "detached HEAD"
                } else {
                    self.s.branch
                },
                self.s.r.hex(7),
                self.s.r.range(1, 9),
                self.s.r.range(1, 300),
                self.s.r.range(0, 120)
            ),
            None => {
                let mut o = self.s.cmd_output(&cmd, fail);
                if o.len() > 40_000 {
                    let mut cut = 40_000;
                    while !o.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    o.truncate(cut);
                    o.push_str("\n…output truncated…\n");
                }
                o
            }
        };
        let code = if fail { 1 } else { 0 };
        let wall = self.s.r.unit() * 8.0;
        self.s.tick(30, 60_000);
        let output = if self.s.r.chance(0.3) {
            format!(
                "Chunk ID: {}\nWall time: {wall:.4} seconds\nProcess exited with code {code}\nOriginal token count: {}\nOutput:\n{out}",
                self.s.r.hex(6),
                out.len() / 4
            )
        } else {
            format!("Exit code: {code}\nWall time: {wall:.1} seconds\nOutput:\n{out}")
        };
        self.line(
            "response_item",
            json!({"type": "function_call_output", "call_id": call_id, "output": output}),
        );
    }

    fn apply_patch(&mut self, turn_id: &str) {
        let call_id = format!("call_{}", self.s.r.b62(24));
        let mut patch = String::from("*** Begin Patch\n");
        let mut summary = String::new();
        let mut changes = Map::new();
        let nfiles = if self.s.r.chance(0.2) {
            self.s.r.range(2, 4)
        } else {
            1
        };
        for _ in 0..nfiles {
            let rel = self.s.file();
            let abs = self.s.abs(rel);
            let roll = self.s.r.below(10);
            if roll == 0 {
                let body = self.s.code_range(5, 120);
                patch.push_str(&format!("*** Add File: {rel}\n"));
                for l in body.lines() {
                    patch.push('+');
                    patch.push_str(l);
                    patch.push('\n');
                }
                summary.push_str(&format!("A {rel}\n"));
                changes.insert(abs, json!({"type": "add", "content": body}));
            } else if roll == 1 {
                patch.push_str(&format!("*** Delete File: {rel}\n"));
                summary.push_str(&format!("D {rel}\n"));
                changes.insert(
                    abs,
                    json!({"type": "delete", "content": self.s.code_range(5, 60)}),
                );
            } else {
                let ctx = self.s.code(3);
                let old = self.s.code_range(1, 6);
                let new = self.s.code_range(1, 12);
                let mut hunk = String::new();
                let mut ctx_lines = ctx.lines();
                let head = ctx_lines.next().unwrap_or("");
                for l in ctx_lines {
                    hunk.push_str(&format!(" {l}\n"));
                }
                for l in old.lines() {
                    hunk.push_str(&format!("-{l}\n"));
                }
                for l in new.lines() {
                    hunk.push_str(&format!("+{l}\n"));
                }
                patch.push_str(&format!("*** Update File: {rel}\n@@ {head}\n{hunk}"));
                summary.push_str(&format!("M {rel}\n"));
                let at = self.s.r.range(1, 500);
                let diff = format!(
                    "@@ -{at},{} +{at},{} @@\n{hunk}",
                    old.lines().count() + 2,
                    new.lines().count() + 2
                );
                changes.insert(
                    abs,
                    json!({"type": "update", "unified_diff": diff, "move_path": null}),
                );
            }
        }
        patch.push_str("*** End Patch\n");
        self.line("response_item", json!({"type": "custom_tool_call", "status": "completed", "call_id": call_id, "name": "apply_patch", "input": patch}));
        self.s.events += 1;
        self.s.tick(50, 1_500);
        let ok = !self.s.r.chance(0.05);
        let (stdout, stderr, code) = if ok {
            (
                format!("Success. Updated the following files:\n{summary}"),
                String::new(),
                0,
            )
        } else {
            (
                String::new(),
                format!(
                    "apply_patch verification failed: Failed to find expected lines in {}:\n{}",
                    self.s.file(),
                    self.s.code(2)
                ),
                1,
            )
        };
        self.line(
            "event_msg",
            json!({"type": "patch_apply_end", "call_id": call_id, "turn_id": turn_id, "stdout": stdout, "stderr": stderr, "success": ok, "changes": if ok { Value::Object(changes) } else { json!({}) }}),
        );
        self.s.tick(1, 20);
        let out = format!(
            "Exit code: {code}\nWall time: 0.1 seconds\nOutput:\n{}{}",
            stdout, stderr
        );
        self.line(
            "response_item",
            json!({"type": "custom_tool_call_output", "call_id": call_id, "output": out}),
        );
    }

    fn compact(&mut self) {
        self.s.tick(20_000, 60_000);
        let f = self.s.file();
        let p = prompt(&mut self.s.r, f);
        let summary = if self.s.r.chance(0.5) {
            String::new()
        } else {
            format!(
                "Summary of the work so far: {}\n\n- {}\n- {}",
                p,
                sentence(&mut self.s.r),
                sentence(&mut self.s.r)
            )
        };
        let enc = format!("gAAAAAB{}", self.s.r.b64_range(2_000, 12_000));
        self.line(
            "compacted",
            json!({"message": summary, "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": p}]},
                {"type": "compaction", "encrypted_content": enc}]}),
        );
        self.s.tick(1, 30);
        self.line("event_msg", json!({"type": "context_compacted"}));
        if !summary.is_empty() {
            self.s.events += 1;
        }
    }

    fn turn(&mut self) {
        let turn_id = self.s.r.uuid7(self.s.ts);
        let started = self.s.ts / 1000;
        let started_ms = self.s.ts;
        self.s.tick(1, 20);
        self.line("event_msg", json!({"type": "task_started", "turn_id": turn_id, "model_context_window": 258_400, "collaboration_mode_kind": "default"}));
        if self.first_turn {
            self.s.tick(1, 5);
            self.message("developer", "<permissions instructions>\nFilesystem sandboxing defines which files can be read or written. `sandbox_mode` is `workspace-write`: The sandbox permits reading files, and editing files in `cwd` and `writable_roots`. Editing files in other directories requires approval. Network access is restricted.\nApprovals are your mechanism to get user consent to run shell commands without the sandbox. `approval_policy` is `on-request`.\n</permissions instructions>", None);
            self.s.tick(1, 5);
            let env = format!(
                "<environment_context>\n  <cwd>{}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>zsh</shell>\n</environment_context>",
                self.s.cwd
            );
            self.message("user", &env, None);
        }
        let f = self.s.file();
        let p = prompt(&mut self.s.r, f);
        self.s.tick(1, 5);
        self.message("user", &p, None);
        self.s.events += 1;
        self.s.tick(1, 5);
        self.line("event_msg", json!({"type": "user_message", "message": p, "images": [], "local_images": [], "text_elements": []}));
        self.turn_context(&turn_id);
        if self.first_turn {
            self.s.tick(1, 30);
            self.line("event_msg", json!({"type": "token_count", "info": null, "rate_limits": {"limit_id": "codex", "primary": {"used_percent": 1.0, "window_minutes": 300, "resets_at": self.s.ts / 1000 + 9_000}, "secondary": null, "credits": null, "plan_type": null}}));
            self.first_turn = false;
        }
        let steps = self.s.r.skewed(1, 24);
        for _ in 0..steps {
            if self.s.done() {
                break;
            }
            self.s.tick(1_000, 20_000);
            let t = self.s.r.pick(TOPICS);
            let enc = format!("gAAAAAB{}", self.s.r.b64_range(400, 3_000));
            self.line("response_item", json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": format!("**Inspecting the {t}**")}], "content": null, "encrypted_content": enc}));
            self.s.tick(1, 200);
            match self.s.r.below(10) {
                0 | 1 => {
                    let f = self.s.file();
                    let text = short_text(&mut self.s.r, f);
                    self.agent_says(&text, "commentary");
                }
                2..=7 => self.exec(),
                _ => self.apply_patch(&turn_id),
            }
            self.token_count();
            if self.s.r.chance(0.1) {
                self.turn_context(&turn_id);
            }
        }
        self.s.tick(2_000, 30_000);
        let f = self.s.file();
        let last = final_text(&mut self.s.r, f);
        self.agent_says(&last, "final_answer");
        self.token_count();
        self.s.tick(1, 20);
        self.line(
            "event_msg",
            json!({"type": "task_complete", "turn_id": turn_id, "last_agent_message": last, "started_at": started, "completed_at": self.s.ts / 1000, "duration_ms": self.s.ts - started_ms}),
        );
    }

    fn run(mut self, stats: &mut Stats) {
        let git = json!({"commit_hash": self.s.r.hex(40), "branch": self.s.branch, "repository_url": format!("git@github.com:acme/{}.git", self.s.cwd.rsplit('/').next().unwrap_or("repo"))});
        self.line(
            "session_meta",
            json!({"id": self.s.id, "timestamp": iso(self.s.ts), "cwd": self.s.cwd, "originator": "codex_cli_rs", "cli_version": "0.128.0", "source": "cli",
                   "model_provider": "openai", "base_instructions": {"text": self.s.lex.instructions}, "git": git}),
        );
        let mut since_compact = 0u64;
        // At least one turn, however small the budget.
        loop {
            let before = self.s.events;
            self.turn();
            since_compact += self.s.events - before;
            if self.s.done() {
                break;
            }
            if since_compact > 150 && self.s.r.chance(0.04) {
                self.compact();
                since_compact = 0;
            }
            let gap = if self.s.r.chance(0.05) {
                self.s.r.range(3_600_000, 5 * 3_600_000)
            } else {
                self.s.r.skewed(10_000, 1_200_000)
            };
            self.s.tick(gap, gap);
        }
        stats.events += self.s.events;
        stats.codex += 1;
        self.s.out.finish(stats);
    }
}

// ------------------------------------------------------------------------------------------
// Driver

struct Args {
    out: Option<PathBuf>,
    single: Option<PathBuf>,
    sessions: u64,
    events: Option<u64>,
    bytes: Option<u64>,
    codex_share: f64,
    seed: u64,
    start_day: i64,
    days: u64,
}

fn die(msg: &str) -> ! {
    eprintln!("synth: {msg}");
    exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        out: None,
        single: None,
        sessions: 28,
        events: None,
        bytes: None,
        codex_share: 0.3,
        seed: 1,
        start_day: days_from_civil(2026, 7, 1),
        days: 28,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            print!("{USAGE}");
            exit(0);
        }
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (flag, None),
        };
        let mut val = || {
            inline
                .clone()
                .or_else(|| it.next())
                .unwrap_or_else(|| die(&format!("{flag} needs a value\n{USAGE}")))
        };
        let bad = |v: &str| -> ! { die(&format!("bad value for {flag}: {v:?}")) };
        match flag.as_str() {
            "--out" => a.out = Some(PathBuf::from(val())),
            "--single" => a.single = Some(PathBuf::from(val())),
            "--sessions" => {
                let v = val();
                a.sessions = v.parse().unwrap_or_else(|_| bad(&v))
            }
            "--events-per-session" => {
                let v = val();
                a.events = Some(v.parse().unwrap_or_else(|_| bad(&v)))
            }
            "--bytes" => {
                let v = val();
                a.bytes = Some(parse_size(&v).unwrap_or_else(|| bad(&v)))
            }
            "--codex-share" => {
                let v = val();
                a.codex_share = v
                    .parse()
                    .ok()
                    .filter(|f: &f64| (0.0..=1.0).contains(f))
                    .unwrap_or_else(|| bad(&v))
            }
            "--seed" => {
                let v = val();
                a.seed = v.parse().unwrap_or_else(|_| bad(&v))
            }
            "--start" => {
                let v = val();
                a.start_day = parse_date(&v).unwrap_or_else(|| bad(&v))
            }
            "--days" => {
                let v = val();
                a.days = v.parse().ok().filter(|d| *d > 0).unwrap_or_else(|| bad(&v))
            }
            _ => die(&format!("unknown argument {flag}\n{USAGE}")),
        }
    }
    if a.events.is_some() && a.bytes.is_some() {
        die("give --events-per-session or --bytes, not both");
    }
    if a.out.is_none() && a.single.is_none() {
        die(&format!("need --out DIR or --single FILE\n{USAGE}"));
    }
    if a.sessions == 0 {
        die("--sessions must be at least 1");
    }
    a
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    }
}

fn main() {
    let a = parse_args();
    let t0 = Instant::now();
    let lex = Lex::new(a.seed);
    let mut stats = Stats::default();

    let n = if a.single.is_some() { 1 } else { a.sessions };
    let budget = match (a.events, a.bytes) {
        (_, Some(b)) => Budget::Bytes((b / n).max(1)),
        (Some(e), None) => Budget::Events(e.max(1)),
        (None, None) => Budget::Events(1500),
    };

    for i in 0..n {
        let mut r = Rng::new(mix64(a.seed) ^ mix64(i.wrapping_add(0xA5A5)));
        let codex = if a.single.is_some() {
            a.codex_share >= 1.0
        } else {
            ((i + 1) as f64 * a.codex_share).round() > (i as f64 * a.codex_share).round()
        };
        let (project, lang) = *r.pick(PROJECTS);
        let files: &'static [&'static str] = match lang {
            Lang::Rust => RUST_FILES,
            Lang::Ts => TS_FILES,
            Lang::Py => PY_FILES,
        };
        let day = a.start_day + (i * a.days / n) as i64;
        let start =
            day * DAY_MS + r.range(7 * 3_600_000, 20 * 3_600_000) as i64 + r.below(1000) as i64;
        let cwd = format!("/home/dev/{project}");
        let branch = *r.pick(BRANCHES);
        let id = if codex { r.uuid7(start) } else { r.uuid4() };
        let model = *r.pick(&["claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-5"]);
        let path = match (&a.single, codex) {
            (Some(p), _) => p.clone(),
            (None, false) => a
                .out
                .as_ref()
                .unwrap()
                .join(".claude/projects")
                .join(format!("-home-dev-{project}"))
                .join(format!("{id}.jsonl")),
            (None, true) => {
                let c = civil(start);
                a.out
                    .as_ref()
                    .unwrap()
                    .join(format!(".codex/sessions/{:04}/{:02}/{:02}", c.y, c.mo, c.d))
                    .join(format!(
                        "rollout-{:04}-{:02}-{:02}T{:02}-{:02}-{:02}-{id}.jsonl",
                        c.y, c.mo, c.d, c.h, c.mi, c.s
                    ))
            }
        };
        let s = Session {
            r,
            lex: &lex,
            out: Out::create(&path),
            budget,
            last_huge: 0,
            events: 0,
            ts: start,
            lang,
            files,
            cwd,
            branch,
            id,
        };
        if codex {
            Codex {
                s,
                total_in: 0,
                total_out: 0,
                first_turn: true,
            }
            .run(&mut stats);
        } else {
            Claude {
                s,
                parent: None,
                model,
                last_prompt: String::new(),
            }
            .run(&mut stats);
        }
    }

    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "synth: {} files ({} claude, {} codex), {} lines, {} ({} bytes), ~{} events in {:.2}s ({:.0} MB/s)",
        stats.files,
        stats.claude,
        stats.codex,
        stats.lines,
        human(stats.bytes),
        stats.bytes,
        stats.events,
        secs,
        stats.bytes as f64 / (1u64 << 20) as f64 / secs.max(1e-9)
    );
}
