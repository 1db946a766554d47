//! Where the pinned files are, and whether they are the pinned bytes.
//!
//! Each role (model, tokenizer, runtime) is looked for in order: an environment variable
//! naming the file, a directory baked in at build time (Nix sets it), then the user's data
//! directory. Whatever is found is checked against `models.lock` before it is loaded: the
//! full sha256 once, then (on every search) only size and modification time against a stamp
//! recorded when the hash last matched. A file that does not match is an error, never a
//! silent fall-back to keyword-only search.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::EmbedError;
use super::lock::{Artifact, ModelsLock, Role, this_platform};

/// Where a file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Origin {
    /// Named by an environment variable (`PEAT_MODEL`, `PEAT_TOKENIZER`, `PEAT_ORT_LIB`).
    Env,
    /// The directory baked in at build time (`PEAT_MODEL_DIR_BUILTIN`, set by the Nix build).
    Builtin,
    /// Installed by `peat model fetch` into the data directory.
    DataDir,
}

impl Origin {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Origin::Env => "environment",
            Origin::Builtin => "built in",
            Origin::DataDir => "data dir",
        }
    }
}

/// Everything resolution reads from the outside world, gathered once, so tests can pass
/// their own instead of changing the process environment.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// `PEAT_MODEL`: the model.onnx to use.
    pub(crate) model: Option<PathBuf>,
    /// `PEAT_TOKENIZER`: the tokenizer.json to use.
    pub(crate) tokenizer: Option<PathBuf>,
    /// `PEAT_ORT_LIB` (or `ORT_DYLIB_PATH`): the ONNX Runtime library to load.
    pub(crate) runtime: Option<PathBuf>,
    /// A directory holding the artifacts under their models.lock names, baked in at build time.
    pub(crate) builtin_dir: Option<PathBuf>,
    /// An ONNX Runtime library baked in at build time (Nix's onnxruntime lives apart from
    /// the model files).
    pub(crate) builtin_runtime: Option<PathBuf>,
    /// peat's data directory: `$PEAT_DATA_DIR`, else `$XDG_DATA_HOME/peat`, else
    /// `$HOME/.local/share/peat`. Public for the CLI tests, which look for the model there.
    pub data_dir: Option<PathBuf>,
    /// `ARCH-OS`, to choose the runtime pinned for it.
    pub(crate) platform: String,
    /// `$XDG_RUNTIME_DIR` (absolute only): where the resident embedder's socket goes,
    /// under `peat/` (see [`super::resident::Place`]).
    pub(crate) runtime_dir: Option<PathBuf>,
}

impl Lookup {
    /// The process environment and what this binary was built with.
    pub fn from_process() -> Lookup {
        Lookup::from_vars(
            |k| std::env::var_os(k),
            option_env!("PEAT_MODEL_DIR_BUILTIN").map(PathBuf::from),
            option_env!("PEAT_ORT_LIB_BUILTIN").map(PathBuf::from),
        )
    }

    /// Resolution from any source of variables (empty values count as unset).
    pub fn from_vars(
        get: impl Fn(&str) -> Option<OsString>,
        builtin_dir: Option<PathBuf>,
        builtin_runtime: Option<PathBuf>,
    ) -> Lookup {
        let var = |k: &str| get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let data_dir = var("PEAT_DATA_DIR")
            .or_else(|| {
                // The XDG spec ignores a relative XDG_DATA_HOME.
                var("XDG_DATA_HOME")
                    .filter(|p| p.is_absolute())
                    .map(|p| p.join("peat"))
            })
            .or_else(|| var("HOME").map(|h| h.join(".local/share/peat")));
        Lookup {
            model: var(Role::Model.env_var()),
            tokenizer: var(Role::Tokenizer.env_var()),
            runtime: var(Role::Runtime.env_var()).or_else(|| var("ORT_DYLIB_PATH")),
            builtin_dir: builtin_dir.filter(|p| !p.as_os_str().is_empty()),
            builtin_runtime: builtin_runtime.filter(|p| !p.as_os_str().is_empty()),
            data_dir,
            platform: this_platform(),
            runtime_dir: var("XDG_RUNTIME_DIR").filter(|p| p.is_absolute()),
        }
    }

    fn env_path(&self, role: Role) -> Option<&Path> {
        match role {
            Role::Model => self.model.as_deref(),
            Role::Tokenizer => self.tokenizer.as_deref(),
            Role::Runtime => self.runtime.as_deref(),
        }
    }

    /// Where `peat model fetch` installs this model's files.
    pub(crate) fn install_dir(&self, lock: &ModelsLock) -> Option<PathBuf> {
        self.data_dir
            .as_ref()
            .map(|d| d.join("models").join(&lock.model.id))
    }

    /// The record of which files have been hashed and matched.
    pub(crate) fn stamp_path(&self, lock: &ModelsLock) -> Option<PathBuf> {
        self.install_dir(lock).map(|d| d.join(STAMP_FILE))
    }
}

pub(crate) const STAMP_FILE: &str = "verified.json";

/// A file found for a role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub(crate) role: Role,
    pub(crate) path: PathBuf,
    pub(crate) origin: Origin,
}

/// All three files, found (not yet verified).
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub(crate) model: Located,
    pub(crate) tokenizer: Located,
    pub(crate) runtime: Located,
}

impl Resolved {
    pub(crate) fn all(&self) -> [&Located; 3] {
        [&self.model, &self.tokenizer, &self.runtime]
    }
}

/// A role with no file: where it would have been installed.
#[derive(Debug, Clone)]
pub(crate) struct Missing {
    /// Where `peat model fetch` would put it (none without a data directory).
    pub(crate) expected: Option<PathBuf>,
    /// No artifact is pinned for this role on this platform: fetch cannot help, only an
    /// environment variable can.
    pub(crate) unpinned: bool,
}

#[derive(Debug, Clone)]
pub(crate) enum Resolution {
    Found(Resolved),
    /// One file or more is missing ([`locate`] says which, and where it would go).
    NotInstalled,
}

/// Where each role's file is, in order of precedence. An environment variable naming a file
/// that does not exist is an error (a typo should not quietly turn the lane off).
pub(crate) fn locate(
    lock: &ModelsLock,
    lookup: &Lookup,
    role: Role,
) -> Result<Result<Located, Missing>, EmbedError> {
    if let Some(p) = lookup.env_path(role) {
        return match fs::metadata(p) {
            Ok(m) if m.is_file() => Ok(Ok(Located {
                role,
                path: p.to_path_buf(),
                origin: Origin::Env,
            })),
            Ok(_) => Err(EmbedError::EnvPath {
                var: role.env_var(),
                path: p.to_path_buf(),
                problem: "it is not a file".into(),
            }),
            Err(e) => Err(EmbedError::EnvPath {
                var: role.env_var(),
                path: p.to_path_buf(),
                problem: e.to_string(),
            }),
        };
    }
    let name = lock.file_name(role, &lookup.platform);
    let builtin = match role {
        Role::Runtime => lookup
            .builtin_runtime
            .clone()
            .or_else(|| lookup.builtin_dir.as_ref().map(|d| d.join(name))),
        _ => lookup.builtin_dir.as_ref().map(|d| d.join(name)),
    };
    if let Some(p) = builtin.filter(|p| p.is_file()) {
        return Ok(Ok(Located {
            role,
            path: p,
            origin: Origin::Builtin,
        }));
    }
    let expected = lookup.install_dir(lock).map(|d| d.join(name));
    if let Some(p) = expected.as_ref().filter(|p| p.is_file()) {
        return Ok(Ok(Located {
            role,
            path: p.clone(),
            origin: Origin::DataDir,
        }));
    }
    Ok(Err(Missing {
        expected,
        unpinned: lock.artifact(role, &lookup.platform).is_none(),
    }))
}

/// Find all three files, or say which are missing.
pub(crate) fn resolve(lock: &ModelsLock, lookup: &Lookup) -> Result<Resolution, EmbedError> {
    let mut found = Vec::new();
    for role in Role::ALL {
        match locate(lock, lookup, role)? {
            Ok(l) => found.push(l),
            Err(_) => return Ok(Resolution::NotInstalled),
        }
    }
    let mut it = found.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(model), Some(tokenizer), Some(runtime)) => Ok(Resolution::Found(Resolved {
            model,
            tokenizer,
            runtime,
        })),
        _ => Err(EmbedError::Lock("a role was lost in resolution".into())),
    }
}

/// What a file was found to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Size and sha256 match models.lock.
    Verified {
        size: u64,
        sha256: String,
    },
    Mismatch(Mismatch),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mismatch {
    Size { found: u64, expected: u64 },
    Sha256 { found: String, expected: String },
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Size { found, expected } => {
                write!(f, "size {found} bytes, expected {expected}")
            }
            Mismatch::Sha256 { found, expected } => {
                write!(f, "sha256 {found}, expected {expected}")
            }
        }
    }
}

/// Hash a file completely and compare it with its pin.
pub(crate) fn check_file(path: &Path, artifact: &Artifact) -> Result<Check, EmbedError> {
    let io_err = |source| EmbedError::Io {
        path: path.to_path_buf(),
        source,
    };
    let size = fs::metadata(path).map_err(io_err)?.len();
    if size != artifact.size {
        return Ok(Check::Mismatch(Mismatch::Size {
            found: size,
            expected: artifact.size,
        }));
    }
    let sha256 = sha256_file(path).map_err(io_err)?;
    if sha256 != artifact.sha256 {
        return Ok(Check::Mismatch(Mismatch::Sha256 {
            found: sha256,
            expected: artifact.sha256.clone(),
        }));
    }
    Ok(Check::Verified { size, sha256 })
}

pub(crate) fn sha256_file(path: &Path) -> io::Result<String> {
    let mut f = fs::File::open(path)?;
    let mut hasher = HashingWriter::new(io::sink());
    io::copy(&mut f, &mut hasher)?;
    Ok(hasher.finish().1)
}

/// Writes through to `inner` while hashing and counting what passes.
pub(crate) struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> HashingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }

    /// The inner writer, the byte count and the hex sha256.
    pub(crate) fn finish(self) -> (W, String, u64) {
        let digest = self.hasher.finalize();
        (self.inner, hex::encode(digest), self.written)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The hex sha256 of bytes in memory.
pub(crate) fn sha256_bytes(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The record of files whose full hash matched: `verified.json` in the install directory.
/// A file whose size and modification time still match its entry is trusted without
/// re-reading it, which keeps the check on every search to a few `stat` calls.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Stamps {
    pub(crate) files: BTreeMap<String, Stamp>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) size: u64,
    pub(crate) mtime_ns: u128,
    pub(crate) sha256: String,
}

impl Stamps {
    /// A missing or unreadable stamp file is an empty one: it only costs a re-hash.
    pub(crate) fn load(path: &Path) -> Stamps {
        fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Write atomically (temp file + rename) so a reader never sees half a stamp.
    pub(crate) fn save(&self, path: &Path) -> io::Result<()> {
        let json = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
        fs::write(&tmp, json)?;
        fs::rename(&tmp, path).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    }

    fn key(path: &Path) -> String {
        fs::canonicalize(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .to_string_lossy()
            .into_owned()
    }

    /// The stamp still vouches for this file as the pinned one.
    pub(crate) fn vouches(&self, path: &Path, meta: &fs::Metadata, artifact: &Artifact) -> bool {
        self.files.get(&Stamps::key(path)).is_some_and(|s| {
            s.sha256 == artifact.sha256
                && s.size == meta.len()
                && Some(s.mtime_ns) == mtime_ns(meta)
        })
    }

    /// The stamp vouches for a derived file (one with no pin): it is as it was recorded.
    pub(crate) fn vouches_recorded(&self, path: &Path, meta: &fs::Metadata) -> bool {
        self.files
            .get(&Stamps::key(path))
            .is_some_and(|s| s.size == meta.len() && Some(s.mtime_ns) == mtime_ns(meta))
    }

    pub(crate) fn record(&mut self, path: &Path, meta: &fs::Metadata, sha256: &str) {
        if let Some(mtime_ns) = mtime_ns(meta) {
            self.files.insert(
                Stamps::key(path),
                Stamp {
                    size: meta.len(),
                    mtime_ns,
                    sha256: sha256.to_string(),
                },
            );
        }
    }
}

fn mtime_ns(meta: &fs::Metadata) -> Option<u128> {
    meta.modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_nanos())
}

/// How a load-time check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// Size and modification time matched a stamp from an earlier full hash.
    Stamp,
    /// The file was hashed now.
    Hashed,
    /// No artifact is pinned for this role on this platform, so there is nothing to check.
    Unpinned,
}

/// Check every resolved file before loading it: cheap when stamped, a full hash otherwise.
/// A mismatch is an error naming the file and both hashes.
pub(crate) fn verify_for_load(
    lock: &ModelsLock,
    lookup: &Lookup,
    resolved: &Resolved,
) -> Result<[Trust; 3], EmbedError> {
    let stamp_path = lookup.stamp_path(lock);
    let mut stamps = stamp_path.as_deref().map(Stamps::load).unwrap_or_default();
    let mut dirty = false;
    let mut trust = [Trust::Stamp; 3];
    for (i, located) in resolved.all().into_iter().enumerate() {
        let Some(artifact) = lock.artifact(located.role, &lookup.platform) else {
            // Nothing is pinned for this role here (a runtime on a platform models.lock does
            // not cover yet): the file was named by the user or the build, and is theirs.
            trust[i] = Trust::Unpinned;
            continue;
        };
        let meta = fs::metadata(&located.path).map_err(|source| EmbedError::Io {
            path: located.path.clone(),
            source,
        })?;
        if meta.len() == artifact.size && stamps.vouches(&located.path, &meta, artifact) {
            continue;
        }
        match check_file(&located.path, artifact)? {
            Check::Verified { sha256, .. } => {
                stamps.record(&located.path, &meta, &sha256);
                dirty = true;
                trust[i] = Trust::Hashed;
            }
            Check::Mismatch(m) => {
                return Err(EmbedError::Mismatch {
                    name: artifact.name.clone(),
                    path: located.path.clone(),
                    detail: m.to_string(),
                });
            }
        }
    }
    if dirty && let Some(p) = stamp_path {
        // The stamp is a cache: without a writable data directory the next load hashes again.
        if p.parent().is_some_and(|d| fs::create_dir_all(d).is_ok()) {
            let _ = stamps.save(&p);
        }
    }
    Ok(trust)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::embed::lock::{ModelsLock, Role};

    /// A lock whose artifacts are small files the test writes itself.
    fn tiny_lock(files: &[(&str, Role, &[u8])]) -> ModelsLock {
        let mut text = String::from(
            "schema = 1\n[model]\nid = \"tiny\"\ndim = 4\nmax_tokens = 8\npooling = \"mean\"\nnormalize = true\n",
        );
        let z = "0".repeat(64);
        for (name, role, bytes) in files {
            text.push_str(&format!(
                "[[artifact]]\nname = \"{name}\"\nrole = \"{}\"\nplatform = \"any\"\nsize = {}\nsha256 = \"{}\"\nsri = \"x\"\nlicense = \"MIT\"\n[artifact.source]\npackage = \"p\"\nversion = \"1\"\nwheel = \"p-1-py3-none-any.whl\"\nwheel_sha256 = \"{z}\"\nwheel_sri = \"x\"\nmember = \"p/{name}\"\n",
                role.label(),
                bytes.len(),
                sha256_bytes(bytes),
            ));
        }
        ModelsLock::parse(&text).unwrap()
    }

    fn files() -> Vec<(&'static str, Role, &'static [u8])> {
        vec![
            ("model.onnx", Role::Model, b"model bytes"),
            ("tokenizer.json", Role::Tokenizer, b"{\"tok\": 1}"),
            ("libonnxruntime.so", Role::Runtime, b"\x7fELF runtime"),
        ]
    }

    fn write_all(dir: &Path, files: &[(&str, Role, &[u8])]) {
        fs::create_dir_all(dir).unwrap();
        for (name, _, bytes) in files {
            fs::write(dir.join(name), bytes).unwrap();
        }
    }

    fn vars(pairs: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> {
        let map: BTreeMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn the_data_dir_is_peat_data_dir_then_xdg_then_home() {
        let a = Path::new("/a");
        let x = Path::new("/x");
        let h = Path::new("/h");
        let l = Lookup::from_vars(
            vars(&[("PEAT_DATA_DIR", a), ("XDG_DATA_HOME", x), ("HOME", h)]),
            None,
            None,
        );
        assert_eq!(l.data_dir.as_deref(), Some(a));
        let l = Lookup::from_vars(vars(&[("XDG_DATA_HOME", x), ("HOME", h)]), None, None);
        assert_eq!(l.data_dir, Some(PathBuf::from("/x/peat")));
        let l = Lookup::from_vars(
            vars(&[("XDG_DATA_HOME", Path::new("rel")), ("HOME", h)]),
            None,
            None,
        );
        assert_eq!(l.data_dir, Some(PathBuf::from("/h/.local/share/peat")));
        let l = Lookup::from_vars(vars(&[("PEAT_DATA_DIR", Path::new(""))]), None, None);
        assert_eq!(l.data_dir, None);
    }

    #[test]
    fn ort_dylib_path_is_accepted_but_peat_ort_lib_wins() {
        let l = Lookup::from_vars(vars(&[("ORT_DYLIB_PATH", Path::new("/o"))]), None, None);
        assert_eq!(l.runtime, Some(PathBuf::from("/o")));
        let l = Lookup::from_vars(
            vars(&[
                ("ORT_DYLIB_PATH", Path::new("/o")),
                ("PEAT_ORT_LIB", Path::new("/p")),
            ]),
            None,
            None,
        );
        assert_eq!(l.runtime, Some(PathBuf::from("/p")));
    }

    #[test]
    fn resolution_prefers_the_environment_then_the_builtin_dir_then_the_data_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let files = files();
        let lock = tiny_lock(&files);
        let data = tmp.path().join("data");
        let installed = data.join("models/tiny");
        let builtin = tmp.path().join("builtin");
        let envdir = tmp.path().join("env");
        write_all(&installed, &files);

        // Only the data dir.
        let lookup = Lookup::from_vars(vars(&[("PEAT_DATA_DIR", &data)]), None, None);
        let Resolution::Found(r) = resolve(&lock, &lookup).unwrap() else {
            panic!("not found")
        };
        assert!(r.all().iter().all(|l| l.origin == Origin::DataDir));
        assert_eq!(r.model.path, installed.join("model.onnx"));

        // A builtin dir beats the data dir, per file.
        fs::create_dir_all(&builtin).unwrap();
        fs::write(builtin.join("model.onnx"), b"model bytes").unwrap();
        let lookup = Lookup::from_vars(
            vars(&[("PEAT_DATA_DIR", &data)]),
            Some(builtin.clone()),
            None,
        );
        let Resolution::Found(r) = resolve(&lock, &lookup).unwrap() else {
            panic!("not found")
        };
        assert_eq!(r.model.origin, Origin::Builtin);
        assert_eq!(r.model.path, builtin.join("model.onnx"));
        assert_eq!(r.tokenizer.origin, Origin::DataDir);

        // The environment beats both.
        write_all(&envdir, &files);
        let env_model = envdir.join("model.onnx");
        let lookup = Lookup::from_vars(
            vars(&[("PEAT_DATA_DIR", &data), ("PEAT_MODEL", &env_model)]),
            Some(builtin.clone()),
            None,
        );
        let Resolution::Found(r) = resolve(&lock, &lookup).unwrap() else {
            panic!("not found")
        };
        assert_eq!(r.model.origin, Origin::Env);
        assert_eq!(r.model.path, env_model);
    }

    #[test]
    fn a_builtin_runtime_path_is_used_for_the_runtime() {
        let tmp = tempfile::tempdir().unwrap();
        let files = files();
        let lock = tiny_lock(&files);
        let lib = tmp.path().join("lib/libonnxruntime.so");
        fs::create_dir_all(lib.parent().unwrap()).unwrap();
        fs::write(&lib, b"\x7fELF runtime").unwrap();
        let lookup = Lookup::from_vars(|_| None, None, Some(lib.clone()));
        let Ok(Ok(l)) = locate(&lock, &lookup, Role::Runtime) else {
            panic!("runtime not found")
        };
        assert_eq!((l.path, l.origin), (lib, Origin::Builtin));
    }

    #[test]
    fn nothing_installed_lists_every_missing_file_and_where_fetch_would_put_it() {
        let tmp = tempfile::tempdir().unwrap();
        let files = files();
        let lock = tiny_lock(&files);
        let lookup = Lookup::from_vars(vars(&[("PEAT_DATA_DIR", tmp.path())]), None, None);
        assert!(matches!(
            resolve(&lock, &lookup).unwrap(),
            Resolution::NotInstalled
        ));
        let missing: Vec<Missing> = Role::ALL
            .into_iter()
            .map(|role| locate(&lock, &lookup, role).unwrap().unwrap_err())
            .collect();
        assert_eq!(
            missing[0].expected.as_deref(),
            Some(tmp.path().join("models/tiny/model.onnx").as_path())
        );
        assert!(missing.iter().all(|m| !m.unpinned));
    }

    #[test]
    fn an_environment_variable_naming_a_missing_file_is_an_error_not_a_fallback() {
        let tmp = tempfile::tempdir().unwrap();
        let files = files();
        let lock = tiny_lock(&files);
        write_all(&tmp.path().join("models/tiny"), &files);
        let nowhere = tmp.path().join("typo.onnx");
        let lookup = Lookup::from_vars(
            vars(&[("PEAT_DATA_DIR", tmp.path()), ("PEAT_MODEL", &nowhere)]),
            None,
            None,
        );
        let err = resolve(&lock, &lookup).unwrap_err();
        assert!(err.to_string().contains("PEAT_MODEL"), "{err}");
    }

    #[test]
    fn a_correct_file_is_hashed_once_then_trusted_by_its_stamp() {
        let tmp = tempfile::tempdir().unwrap();
        let files = files();
        let lock = tiny_lock(&files);
        write_all(&tmp.path().join("models/tiny"), &files);
        let lookup = Lookup::from_vars(vars(&[("PEAT_DATA_DIR", tmp.path())]), None, None);
        let Resolution::Found(r) = resolve(&lock, &lookup).unwrap() else {
            panic!()
        };
        assert_eq!(
            verify_for_load(&lock, &lookup, &r).unwrap(),
            [Trust::Hashed; 3]
        );
        assert!(tmp.path().join("models/tiny/verified.json").is_file());
        assert_eq!(
            verify_for_load(&lock, &lookup, &r).unwrap(),
            [Trust::Stamp; 3]
        );
    }

    #[test]
    fn a_tampered_file_is_caught_even_after_it_was_stamped() {
        let tmp = tempfile::tempdir().unwrap();
        let files = files();
        let lock = tiny_lock(&files);
        let dir = tmp.path().join("models/tiny");
        write_all(&dir, &files);
        let lookup = Lookup::from_vars(vars(&[("PEAT_DATA_DIR", tmp.path())]), None, None);
        let Resolution::Found(r) = resolve(&lock, &lookup).unwrap() else {
            panic!()
        };
        verify_for_load(&lock, &lookup, &r).unwrap();

        // Same size, different bytes: the stamp no longer vouches (mtime moved), the hash fails.
        tamper(&dir.join("tokenizer.json"), b"{\"tok\": 2}");
        let err = verify_for_load(&lock, &lookup, &r).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("tokenizer.json at "), "{msg}");
        assert!(msg.contains("does not match models.lock (sha256 "), "{msg}");
        assert!(msg.contains(&format!("expected {}", sha256_bytes(b"{\"tok\": 1}"))));

        // A different size is caught without hashing.
        fs::write(dir.join("tokenizer.json"), b"{}").unwrap();
        let msg = verify_for_load(&lock, &lookup, &r).unwrap_err().to_string();
        assert!(msg.contains("size 2 bytes, expected 10"), "{msg}");
    }

    /// Rewrite a file and move its mtime on by a second (whatever the filesystem's clock
    /// granularity), as any real edit does.
    pub(crate) fn tamper(path: &Path, bytes: &[u8]) {
        let before = fs::metadata(path).unwrap().modified().unwrap();
        fs::write(path, bytes).unwrap();
        let f = fs::OpenOptions::new().write(true).open(path).unwrap();
        f.set_modified(before + std::time::Duration::from_secs(1))
            .unwrap();
    }

    #[test]
    fn a_stamp_for_other_bytes_does_not_vouch_for_a_file() {
        let tmp = tempfile::tempdir().unwrap();
        let files = files();
        let lock = tiny_lock(&files);
        let p = tmp.path().join("model.onnx");
        fs::write(&p, b"model bytez").unwrap();
        let meta = fs::metadata(&p).unwrap();
        let mut stamps = Stamps::default();
        // A forged entry with the right size and mtime but the wrong recorded hash.
        stamps.record(&p, &meta, &sha256_bytes(b"model bytez"));
        let artifact = lock.artifact(Role::Model, "any").unwrap();
        assert!(!stamps.vouches(&p, &meta, artifact));
        assert!(matches!(
            check_file(&p, artifact).unwrap(),
            Check::Mismatch(Mismatch::Sha256 { .. })
        ));
        stamps.save(&tmp.path().join("verified.json")).unwrap();
        assert_eq!(Stamps::load(&tmp.path().join("verified.json")), stamps);
    }

    #[test]
    fn hashing_writer_counts_and_hashes_what_passes_through() {
        let mut w = HashingWriter::new(Vec::new());
        w.write_all(b"abc").unwrap();
        let (inner, sha, n) = w.finish();
        assert_eq!(inner, b"abc");
        assert_eq!(n, 3);
        assert_eq!(
            sha,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
