//! The sentence embedder: the pinned MiniLM model through ONNX Runtime (loaded at run time),
//! with its own WordPiece tokenizer.
//!
//! A text becomes: tokens (truncated at the model's 256), padded to the longest text in its
//! batch, run through the model, mean-pooled over the real (unpadded) tokens, L2-normalised.
//! Texts are embedded 32 at a time, shortest first, so a batch pads little.
//!
//! Loading is most of what a one-shot search pays, so it is measured piece by piece
//! ([`LoadTimings`]) and the session is built for the job ([`Tuning`]; which one is chosen
//! when is [`super::load_onnx`]'s policy).
//!
//! One-shot cost on a 2-core machine (ONNX Runtime 1.31.1, 1 intra-op thread, warm page
//! cache, release build; medians of 15 fresh processes per row, rows interleaved, while other
//! builds shared the machine), in ms. A tokenizer time in brackets overlaps the rest.
//!
//! | session | runtime | session | tokenizer | load | query | process |
//! |---|---|---|---|---|---|---|
//! | pinned model, full optimisation, serial (ONNX Runtime's default) | 25 | 209 | 15 | 257 | 7 | 302 |
//! | same, tokenizer parsed on a second thread | 36 | 238 | (53) | 278 | 7 | 326 |
//! | same, no prepacking / no memory pattern / from memory | 35-37 | 213-230 | (52) | 250-263 | 7-11 | 295-316 |
//! | pinned model, optimisation off (the query pays the dequantisation) | 37 | 62 | (46) | 97 | 66 | 275 |
//! | optimised model saved once, loaded with optimisation off | 40 | 159 | (49) | 192 | 7 | 249 |
//! | same, its weights in a separate, memory-mapped file | 36 | 76 | (57) | 114 | 9 | 171 |
//! | same, without prepacking: the prepared copy, [`Tuning::one_shot`] | 36 | 24 | (51) | 60 | 17 | 122 |
//! | same, tokenizer parsed serially | 25 | 19 | 22 | 75 | 15 | 123 |
//!
//! (`process` is the whole `peat model bench` process, which also runs a second query.) The
//! prepared copy is made once (`peat model fetch`, or the first load): see [`super::prepared`].
//! Since then the tokenizer is read in one typed pass (`read_wordpiece`): serially 25-45 ms
//! against 30-93 ms at load 6, a fifth less CPU for a whole one-shot hybrid search.

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::{GraphOptimizationLevel, SessionBuilder};
use ort::value::Tensor;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokenizers::Tokenizer;
use tokenizers::utils::truncation::{TruncationParams, TruncationStrategy};

use super::artifacts::Resolved;
use super::lock::ModelSpec;
use super::{EmbedError, Embedder, normalize};

/// Texts per model run.
pub(crate) const BATCH: usize = 32;
/// At most this many padded tokens per batch: attention memory grows with the batch times
/// the square of its length, so 32 texts of 256 tokens would take gigabytes of buffers.
pub(crate) const BATCH_TOKENS: usize = 2048;

/// Inputs longer than this are cut before tokenizing: 256 tokens never need more, and a
/// multi-megabyte tool output should not cost a multi-megabyte tokenization.
const MAX_INPUT_BYTES: usize = 32 * 1024;

/// Graph optimisation, as ONNX Runtime names its levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Optimization {
    Disable,
    Basic,
    Extended,
    All,
}

impl Optimization {
    fn level(self) -> GraphOptimizationLevel {
        match self {
            Optimization::Disable => GraphOptimizationLevel::Disable,
            Optimization::Basic => GraphOptimizationLevel::Level1,
            Optimization::Extended => GraphOptimizationLevel::Level2,
            Optimization::All => GraphOptimizationLevel::All,
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Optimization> {
        Some(match s {
            "disable" | "off" => Optimization::Disable,
            "basic" => Optimization::Basic,
            "extended" => Optimization::Extended,
            "all" => Optimization::All,
            _ => return None,
        })
    }
}

/// How a session is built. [`super::load_onnx`] picks one per [`super::Profile`]; the
/// benchmark (`peat model bench`) can try others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tuning {
    pub(crate) optimization: Optimization,
    pub(crate) intra_threads: usize,
    pub(crate) prepacking: bool,
    pub(crate) memory_pattern: bool,
    /// Read the model file ourselves and hand ONNX Runtime the bytes.
    pub(crate) from_memory: bool,
    /// Parse tokenizer.json on a second thread while the runtime loads and the session is built.
    pub(crate) parallel_tokenizer: bool,
    /// Load this (pre-optimised) model instead of the resolved one.
    pub(crate) model_override: Option<PathBuf>,
    /// Write the optimised graph here when the session is created.
    pub(crate) save_optimized: Option<PathBuf>,
    /// Further ONNX Runtime session configuration entries (key, value).
    pub(crate) config: Vec<(String, String)>,
}

impl Tuning {
    /// A one-shot query on the pinned model as it is: not optimising it is cheaper overall
    /// for a single run (the run pays the int8 dequantisation that session creation would
    /// otherwise fold into float constants, at more than twice the cost).
    pub(crate) fn one_shot_unprepared() -> Tuning {
        Tuning {
            optimization: Optimization::Disable,
            intra_threads: 1,
            prepacking: true,
            memory_pattern: true,
            from_memory: false,
            parallel_tokenizer: true,
            model_override: None,
            save_optimized: None,
            config: Vec::new(),
        }
    }

    /// A one-shot query on the prepared copy (already optimised, weights memory-mapped): no
    /// optimisation, and no prepacking, which would copy the weights the mapping spared and
    /// costs more than it saves on a single run.
    pub(crate) fn one_shot(prepared_model: &Path) -> Tuning {
        Tuning {
            prepacking: false,
            model_override: Some(prepared_model.to_path_buf()),
            ..Tuning::one_shot_unprepared()
        }
    }

    /// Optimise the pinned model and save the result as a prepared copy in `out_dir`, with
    /// its weights in a separate file so later loads can memory-map them. The session is
    /// fully usable, so the load that prepares also answers its query.
    pub(crate) fn preparing(out_dir: &Path) -> Tuning {
        Tuning {
            optimization: Optimization::Extended,
            prepacking: true,
            save_optimized: Some(out_dir.join(super::prepared::MODEL_FILE)),
            config: vec![
                (
                    "session.optimized_model_external_initializers_file_name".into(),
                    super::prepared::WEIGHTS_FILE.into(),
                ),
                (
                    "session.optimized_model_external_initializers_min_size_in_bytes".into(),
                    "1024".into(),
                ),
            ],
            ..Tuning::one_shot_unprepared()
        }
    }

    /// Throughput on the pinned model: every run reuses the folded, prepacked weights, so
    /// folding them once pays off.
    pub(crate) fn bulk_unprepared() -> Tuning {
        Tuning {
            optimization: Optimization::All,
            intra_threads: 2,
            memory_pattern: false,
            ..Tuning::one_shot_unprepared()
        }
    }

    /// Throughput on the prepared copy: already folded, so only prepacking is left to do
    /// (a third of the pinned model's load, the same speed per batch).
    pub(crate) fn bulk(prepared_model: &Path) -> Tuning {
        Tuning {
            intra_threads: 2,
            prepacking: true,
            // Batches vary in shape; a memory pattern per shape only accumulates.
            memory_pattern: false,
            ..Tuning::one_shot(prepared_model)
        }
    }

    /// The same settings with another number of intra-op threads.
    pub(crate) fn with_threads(self, intra_threads: usize) -> Tuning {
        Tuning {
            intra_threads,
            ..self
        }
    }
}

/// Which model file a load used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LoadedModel {
    /// The pinned model.onnx.
    #[default]
    Pinned,
    /// The prepared copy.
    Prepared,
    /// The pinned model, optimised now and saved as the prepared copy.
    Preparing,
}

/// Where a load's time went (wall clock, each piece measured on its own thread).
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub(crate) struct LoadTimings {
    pub(crate) model: LoadedModel,
    /// Checking the files against models.lock (stamps; a full hash only when they moved).
    pub(crate) verify_ms: f64,
    /// Loading the ONNX Runtime library and creating its environment (first load only).
    pub(crate) runtime_ms: f64,
    /// Building the session from model.onnx.
    pub(crate) session_ms: f64,
    /// Parsing tokenizer.json (overlapped with the two above when done in parallel).
    pub(crate) tokenizer_ms: f64,
    /// The whole load, start to finish.
    pub(crate) total_ms: f64,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Keep ONNX Runtime from writing outside peat's own directories. On every load its
/// telemetry client creates `$XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime/`
/// (a `deviceid` and a database), before `with_telemetry(false)` can take effect; the
/// runtime's own `ORT_DISABLE_TELEMETRY` switch stops it. A person's explicit setting is
/// left alone.
///
/// Call only while the process has one thread (first thing in `cli::run`): changing the
/// environment races with any other thread reading it.
pub(crate) fn keep_runtime_out_of_home() {
    if std::env::var_os("ORT_DISABLE_TELEMETRY").is_none() {
        // SAFETY: called before any thread is spawned, so nothing reads the environment
        // concurrently.
        unsafe { std::env::set_var("ORT_DISABLE_TELEMETRY", "1") };
    }
}

/// End this process at once, its output flushed, if it loaded ONNX Runtime; return otherwise.
/// The runtime's static destructors (its kernel registries and allocators, about a twentieth
/// of a one-shot search's CPU) free memory the exit frees anyway. For `main`, after the
/// command returned: nothing but stdout is buffered by then.
pub fn exit_if_runtime_loaded(code: u8) {
    let loaded = RUNTIME.lock().map_or(true, |slot| slot.is_some());
    if !loaded {
        return;
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` ends the process without running exit handlers; every Rust buffer
    // that matters was flushed above.
    unsafe { libc::_exit(i32::from(code)) }
}

/// The ONNX Runtime library is loaded once per process, and its environment lives as long
/// as the process (`ort` allows one environment per process).
static RUNTIME: Mutex<Option<(PathBuf, Environment)>> = Mutex::new(None);

fn environment(library: &Path) -> Result<Environment, EmbedError> {
    let mut slot = RUNTIME.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((loaded, env)) = slot.as_ref() {
        if loaded != library {
            return Err(EmbedError::Runtime {
                path: library.to_path_buf(),
                message: format!(
                    "this process already loaded ONNX Runtime from {}",
                    loaded.display()
                ),
            });
        }
        return Ok(env.clone());
    }
    let runtime_err = |message: String| EmbedError::Runtime {
        path: library.to_path_buf(),
        message,
    };
    let env = ort::init_from(library)
        .map_err(|e| runtime_err(e.to_string()))?
        .with_name("peat")
        .with_telemetry(false)
        .build()
        .map_err(|e| runtime_err(e.to_string()))?;
    *slot = Some((library.to_path_buf(), env.clone()));
    Ok(env)
}

fn build_session(env: &Environment, model: &Path, tuning: &Tuning) -> Result<Session, EmbedError> {
    let err = |e: ort::Error| EmbedError::Session {
        path: model.to_path_buf(),
        message: e.to_string(),
    };
    let err_b = |e: ort::Error<SessionBuilder>| err(e.into());
    let mut builder = Session::builder(env)
        .map_err(err)?
        .with_optimization_level(tuning.optimization.level())
        .map_err(err_b)?
        .with_intra_threads(tuning.intra_threads)
        .map_err(err_b)?
        .with_inter_threads(1)
        .map_err(err_b)?
        .with_intra_op_spinning(false)
        .map_err(err_b)?
        .with_memory_pattern(tuning.memory_pattern)
        .map_err(err_b)?;
    if !tuning.prepacking {
        builder = builder.with_prepacking(false).map_err(err_b)?;
    }
    for (key, value) in &tuning.config {
        builder = builder.with_config_entry(key, value).map_err(err_b)?;
    }
    if let Some(out) = &tuning.save_optimized {
        builder = builder.with_optimized_model_path(out).map_err(err_b)?;
    }
    if tuning.from_memory {
        let bytes = std::fs::read(model).map_err(|source| EmbedError::Io {
            path: model.to_path_buf(),
            source,
        })?;
        builder.commit_from_memory(&bytes).map_err(err)
    } else {
        builder.commit_from_file(model).map_err(err)
    }
}

fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<(Tokenizer, i64, i64), EmbedError> {
    let err = |message: String| EmbedError::Tokenizer {
        path: path.to_path_buf(),
        message,
    };
    let mut tokenizer = match read_wordpiece(path) {
        Some(t) => t,
        None => Tokenizer::from_file(path).map_err(|e| err(e.to_string()))?,
    };
    // The file pads every text to a fixed 128 tokens; pad to the batch's longest instead,
    // ourselves (so we can order a batch by length), with the pad ids the file names.
    let (pad_id, pad_type_id) = tokenizer
        .get_padding()
        .map_or((0, 0), |p| (i64::from(p.pad_id), i64::from(p.pad_type_id)));
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            ..TruncationParams::default()
        }))
        .map_err(|e| err(e.to_string()))?;
    Ok((tokenizer, pad_id, pad_type_id))
}

/// A WordPiece tokenizer.json (the pinned one) read in one typed pass; `None` for any other
/// file, which the library reads. `Tokenizer::from_file` buffers the model's 30,522-entry
/// vocabulary twice over (an untagged enum, then a flattened JSON value) before building
/// it: most of a one-shot search's tokenizer load, which here is a third of it.
fn read_wordpiece(path: &Path) -> Option<Tokenizer> {
    use tokenizers::decoders::DecoderWrapper;
    use tokenizers::models::wordpiece::WordPiece;
    use tokenizers::normalizers::NormalizerWrapper;
    use tokenizers::pre_tokenizers::PreTokenizerWrapper;
    use tokenizers::processors::PostProcessorWrapper;
    use tokenizers::{AddedToken, PaddingParams};

    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        added_tokens: Vec<Added>,
        normalizer: Option<NormalizerWrapper>,
        pre_tokenizer: Option<PreTokenizerWrapper>,
        post_processor: Option<PostProcessorWrapper>,
        decoder: Option<DecoderWrapper>,
        padding: Option<PaddingParams>,
        model: WordPiece,
    }
    #[derive(serde::Deserialize)]
    struct Added {
        content: String,
        special: bool,
        single_word: bool,
        lstrip: bool,
        rstrip: bool,
        normalized: bool,
    }

    let bytes = std::fs::read(path).ok()?;
    let file: File = serde_json::from_slice(&bytes).ok()?;
    let mut t = Tokenizer::new(file.model);
    t.with_normalizer(file.normalizer)
        .with_pre_tokenizer(file.pre_tokenizer)
        .with_post_processor(file.post_processor)
        .with_decoder(file.decoder)
        .with_padding(file.padding);
    // As the library adds them, after the model: each keeps the model's id for its text.
    let added: Vec<AddedToken> = file
        .added_tokens
        .into_iter()
        .map(|a| {
            AddedToken::from(a.content, a.special)
                .single_word(a.single_word)
                .lstrip(a.lstrip)
                .rstrip(a.rstrip)
                .normalized(a.normalized)
        })
        .collect();
    t.add_tokens(&added);
    Some(t)
}

/// The pinned model, ready to embed.
pub(crate) struct OnnxEmbedder {
    session: Session,
    tokenizer: Tokenizer,
    pad_id: i64,
    pad_type_id: i64,
    #[cfg(test)]
    id: String,
    dim: usize,
    timings: LoadTimings,
}

impl OnnxEmbedder {
    /// Load the resolved (and already verified) files with these session settings.
    pub(crate) fn load_tuned(
        resolved: &Resolved,
        spec: &ModelSpec,
        tuning: &Tuning,
    ) -> Result<OnnxEmbedder, EmbedError> {
        let start = Instant::now();
        let tokenizer_path = resolved.tokenizer.path.as_path();
        let model_path = tuning
            .model_override
            .as_deref()
            .unwrap_or(resolved.model.path.as_path());
        let timed_tokenizer = || {
            let t = Instant::now();
            load_tokenizer(tokenizer_path, spec.max_tokens).map(|r| (r, t.elapsed()))
        };
        let (tok, runtime, session) = std::thread::scope(|scope| {
            let parallel = tuning
                .parallel_tokenizer
                .then(|| scope.spawn(timed_tokenizer));
            let t = Instant::now();
            let env = environment(&resolved.runtime.path);
            let runtime = t.elapsed();
            let t = Instant::now();
            let session = env.and_then(|env| build_session(&env, model_path, tuning));
            let session = session.map(|s| (s, t.elapsed()));
            let tok = match parallel {
                Some(handle) => handle.join().unwrap_or_else(|_| {
                    Err(EmbedError::Tokenizer {
                        path: tokenizer_path.to_path_buf(),
                        message: "the tokenizer thread panicked".into(),
                    })
                }),
                None => timed_tokenizer(),
            };
            (tok, runtime, session)
        });
        let (session, session_time) = session?;
        let ((tokenizer, pad_id, pad_type_id), tokenizer_time) = tok?;
        let embedder = OnnxEmbedder {
            session,
            tokenizer,
            pad_id,
            pad_type_id,
            #[cfg(test)]
            id: spec.id.clone(),
            dim: spec.dim,
            timings: LoadTimings {
                model: LoadedModel::Pinned,
                verify_ms: 0.0,
                runtime_ms: ms(runtime),
                session_ms: ms(session_time),
                tokenizer_ms: ms(tokenizer_time),
                total_ms: ms(start.elapsed()),
            },
        };
        embedder.check_signature()?;
        Ok(embedder)
    }

    /// Where the load's time went.
    pub(crate) fn timings(&self) -> LoadTimings {
        self.timings
    }

    pub(super) fn note_load(&mut self, model: LoadedModel, verify: Duration) {
        self.timings.model = model;
        self.timings.verify_ms = ms(verify);
        self.timings.total_ms += ms(verify);
    }

    /// A model with other inputs or outputs than the pinned one is the wrong file, whatever
    /// its hash check said (the hash check may have been skipped for an unpinned runtime).
    fn check_signature(&self) -> Result<(), EmbedError> {
        let inputs: Vec<&str> = self.session.inputs().iter().map(|i| i.name()).collect();
        let has_output = self
            .session
            .outputs()
            .iter()
            .any(|o| o.name() == "last_hidden_state");
        for need in ["input_ids", "attention_mask", "token_type_ids"] {
            if !inputs.contains(&need) {
                return Err(EmbedError::Inference(format!(
                    "the model has no `{need}` input (inputs: {})",
                    inputs.join(", ")
                )));
            }
        }
        if !has_output {
            return Err(EmbedError::Inference(
                "the model has no `last_hidden_state` output".into(),
            ));
        }
        Ok(())
    }

    /// One model run over texts already tokenized: pad, run, mean-pool, normalise.
    fn run_batch(
        &mut self,
        encodings: &[&tokenizers::Encoding],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let batch = encodings.len();
        let seq = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![self.pad_id; batch * seq];
        let mut mask = vec![0i64; batch * seq];
        let mut types = vec![self.pad_type_id; batch * seq];
        for (row, enc) in encodings.iter().enumerate() {
            let base = row * seq;
            for (j, ((&id, &m), &t)) in enc
                .get_ids()
                .iter()
                .zip(enc.get_attention_mask())
                .zip(enc.get_type_ids())
                .enumerate()
            {
                ids[base + j] = i64::from(id);
                mask[base + j] = i64::from(m);
                types[base + j] = i64::from(t);
            }
        }
        let shape = [batch as i64, seq as i64];
        let tensor = |v: Vec<i64>| {
            Tensor::from_array((shape, v)).map_err(|e| EmbedError::Inference(e.to_string()))
        };
        let inputs = ort::inputs! {
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask.clone())?,
            "token_type_ids" => tensor(types)?,
        };
        let outputs = self
            .session
            .run(inputs)
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        let hidden = outputs
            .get("last_hidden_state")
            .ok_or_else(|| EmbedError::Inference("no last_hidden_state output".into()))?;
        let (out_shape, data) = hidden
            .try_extract_tensor::<f32>()
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        let dim = self.dim;
        if out_shape.len() != 3
            || out_shape[0] != batch as i64
            || out_shape[1] != seq as i64
            || out_shape[2] != dim as i64
        {
            return Err(EmbedError::Inference(format!(
                "last_hidden_state has shape {out_shape:?}, expected [{batch}, {seq}, {dim}]"
            )));
        }
        Ok((0..batch)
            .map(|row| {
                let mut v = vec![0f32; dim];
                let mut n = 0f32;
                for j in 0..seq {
                    if mask[row * seq + j] == 0 {
                        continue;
                    }
                    n += 1.0;
                    let token = &data[(row * seq + j) * dim..(row * seq + j + 1) * dim];
                    for (acc, x) in v.iter_mut().zip(token) {
                        *acc += x;
                    }
                }
                if n > 0.0 {
                    v.iter_mut().for_each(|x| *x /= n);
                }
                normalize(&mut v);
                v
            })
            .collect())
    }
}

/// `text`, cut at a character boundary at or below `max` bytes.
fn clip_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl Embedder for OnnxEmbedder {
    #[cfg(test)]
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut encodings = Vec::with_capacity(texts.len());
        for text in texts {
            let enc = self
                .tokenizer
                .encode(clip_bytes(text, MAX_INPUT_BYTES), true)
                .map_err(|e| EmbedError::Inference(format!("tokenizing failed: {e}")))?;
            encodings.push(enc);
        }
        // Shortest first, so each batch pads to a length close to all of its texts.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut start = 0;
        while start < order.len() {
            // Shortest first, so the last text of a batch is its longest: grow the batch
            // while it stays within BATCH texts and BATCH_TOKENS padded tokens.
            let mut end = start + 1;
            while end < order.len()
                && end - start < BATCH
                && (end - start + 1) * encodings[order[end]].len() <= BATCH_TOKENS
            {
                end += 1;
            }
            let chunk = &order[start..end];
            let batch: Vec<&tokenizers::Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
            for (&i, v) in chunk.iter().zip(self.run_batch(&batch)?) {
                out[i] = v;
            }
            start = end;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_respects_character_boundaries() {
        assert_eq!(clip_bytes("héllo", 2), "h");
        assert_eq!(clip_bytes("héllo", 3), "hé");
        assert_eq!(clip_bytes("abc", 10), "abc");
    }
}

/// The real pinned model, found the way peat finds it. Without it these tests skip (and
/// say so), unless `PEAT_REQUIRE_MODEL=1`, where its absence fails the run (CI installs it).
#[cfg(test)]
mod real_model_tests {
    use super::*;
    use crate::embed::artifacts::Lookup;
    use crate::embed::{Profile, cosine, load_onnx};
    use std::sync::OnceLock;

    fn required() -> bool {
        std::env::var("PEAT_REQUIRE_MODEL").is_ok_and(|v| v == "1")
    }

    /// One shared one-shot embedder (loading is the slow part); `None` when not installed.
    #[track_caller]
    fn with_model(test: impl FnOnce(&mut OnnxEmbedder)) {
        static MODEL: OnceLock<Option<Mutex<OnnxEmbedder>>> = OnceLock::new();
        let model = MODEL.get_or_init(|| {
            match load_onnx(&Lookup::from_process(), Profile::OneShot) {
                Ok(Some(e)) => Some(Mutex::new(e)),
                Ok(None) if required() => {
                    panic!("PEAT_REQUIRE_MODEL=1 but the model is not installed: run `peat model fetch`")
                }
                Ok(None) => None,
                Err(e) => panic!("the installed model does not load: {e}"),
            }
        });
        match model {
            Some(m) => test(&mut m.lock().unwrap_or_else(|p| p.into_inner())),
            None => crate::testing::skip(
                "the embedding model is not installed (run `peat model fetch`, or set PEAT_MODEL, PEAT_TOKENIZER and PEAT_ORT_LIB)",
                required(),
            ),
        }
    }

    fn sim(e: &mut OnnxEmbedder, a: &str, b: &str) -> f32 {
        let v = e.embed(&[a, b]).unwrap();
        cosine(&v[0], &v[1])
    }

    #[test]
    fn the_model_scores_known_pairs_like_the_reference() {
        with_model(|e| {
            assert_eq!((e.model_id(), e.dim()), ("all-MiniLM-L6-v2-int8", 384));
            let food = sim(
                e,
                "A man is eating food.",
                "A man is eating a piece of bread.",
            );
            assert!((food - 0.755).abs() < 0.02, "food pair: {food}");
            let film = sim(e, "The new movie is awesome.", "The new film is so great.");
            eprintln!("food pair {food:.4}, film pair {film:.4}");
            assert!((film - 0.876).abs() < 0.02, "film pair: {film}");
        });
    }

    #[test]
    fn paraphrases_outrank_unrelated_texts() {
        with_model(|e| {
            let query = "the login test fails intermittently";
            let paraphrase = "fix the flaky authentication test";
            let unrelated = [
                "bump the tantivy dependency to 0.27",
                "A man is playing a guitar on stage.",
                "rename the columns in the sales report",
            ];
            let near = sim(e, query, paraphrase);
            for u in unrelated {
                let far = sim(e, query, u);
                assert!(near > far + 0.15, "{near} vs {far} for {u:?}");
            }
        });
    }

    #[test]
    fn the_one_pass_tokenizer_reads_the_pinned_file_as_the_library_does() {
        let lookup = Lookup::from_process();
        let lock = crate::embed::pinned().unwrap();
        let Ok(crate::embed::Resolution::Found(resolved)) =
            crate::embed::artifacts::resolve(lock, &lookup)
        else {
            return crate::testing::skip("the embedding model is not installed", required());
        };
        let path = &resolved.tokenizer.path;
        let ours = read_wordpiece(path).expect("the pinned tokenizer is a WordPiece file");
        let theirs = Tokenizer::from_file(path).unwrap();
        for text in [
            "A man is eating food.",
            "Ünïcödé, 中文字符 and emoji 🦀 in [CLS] a [SEP] text [MASK] with [UNK]",
            "   fix   the\tflaky\nlogin test   ",
            "",
        ] {
            let (a, b) = (
                ours.encode(text, true).unwrap(),
                theirs.encode(text, true).unwrap(),
            );
            assert_eq!(a.get_ids(), b.get_ids(), "{text:?}");
            assert_eq!(a.get_type_ids(), b.get_type_ids(), "{text:?}");
            assert_eq!(a.get_attention_mask(), b.get_attention_mask(), "{text:?}");
        }
        let pads = |t: &Tokenizer| t.get_padding().map(|p| (p.pad_id, p.pad_type_id));
        assert_eq!(pads(&ours), pads(&theirs));
        assert_eq!(ours.get_vocab_size(true), theirs.get_vocab_size(true));
    }

    #[test]
    fn vectors_are_unit_length() {
        with_model(|e| {
            for v in e
                .embed(&["one", "", "a much longer sentence about the ledger"])
                .unwrap()
            {
                let n: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                assert!((n - 1.0).abs() < 1e-4, "norm {n}");
            }
        });
    }

    #[test]
    fn a_batch_gives_the_vectors_of_one_text_at_a_time() {
        with_model(|e| {
            // More than one batch, lengths all different: order and padding both exercised.
            let texts: Vec<String> = (0..40)
                .map(|i| {
                    format!(
                        "commit {i}: {}",
                        "update the parser and its tests ".repeat(i % 7 + 1)
                    )
                })
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let batch = e.embed(&refs).unwrap();
            for (i, t) in refs.iter().enumerate() {
                let alone = e.embed(&[t]).unwrap().remove(0);
                let c = cosine(&alone, &batch[i]);
                assert!(c > 0.9999, "text {i}: cosine {c}");
            }
        });
    }

    #[test]
    fn padding_does_not_change_a_vector() {
        with_model(|e| {
            let short = "fix the lock";
            let long = "a long message that forces padding: ".repeat(20);
            let alone = e.embed(&[short]).unwrap().remove(0);
            let padded = e.embed(&[short, &long]).unwrap().remove(0);
            assert!(cosine(&alone, &padded) > 0.9999);
        });
    }

    #[test]
    fn text_beyond_the_token_limit_is_truncated_not_refused() {
        with_model(|e| {
            let huge = "word ".repeat(100_000);
            let v = e.embed(&[&huge, ""]).unwrap();
            assert_eq!(v[0].len(), 384);
            let head = "word ".repeat(300);
            let c = cosine(&v[0], &e.embed(&[&head]).unwrap()[0]);
            assert!(c > 0.9999, "only the first 256 tokens count: {c}");
        });
    }

    #[test]
    fn every_session_configuration_gives_the_same_vectors() {
        with_model(|one_shot| {
            let lookup = Lookup::from_process();
            let lock = crate::embed::pinned().unwrap();
            let Ok(crate::embed::Resolution::Found(resolved)) =
                crate::embed::artifacts::resolve(lock, &lookup)
            else {
                panic!("resolution changed under the test")
            };
            let load = |t: Tuning| OnnxEmbedder::load_tuned(&resolved, &lock.model, &t).unwrap();
            // The reference: the pinned model, fully optimised (ONNX Runtime's default).
            let mut full = load(Tuning::bulk_unprepared());
            let mut unoptimised = load(Tuning::one_shot_unprepared());
            let Ok(Some(mut bulk)) = load_onnx(&lookup, Profile::Bulk) else {
                panic!("bulk load failed")
            };
            let texts = [
                "A man is eating food.",
                "how did we fix the flaky login test",
                "",
            ];
            let reference = full.embed(&texts).unwrap();
            for (what, other) in [
                ("one-shot", one_shot),
                ("bulk", &mut bulk),
                ("unoptimised", &mut unoptimised),
            ] {
                for (x, y) in other.embed(&texts).unwrap().iter().zip(&reference) {
                    let c = cosine(x, y);
                    assert!(c >= 0.999, "{what} vs fully optimised: {c}");
                }
            }
        });
    }
}
