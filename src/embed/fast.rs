//! fastembed with all-MiniLM-L6-v2 (int8 ONNX, mean pooling, 256 tokens) loaded from local files.
//!
//! The ONNX runtime is loaded dynamically from a path (`ort::init_from`) so a missing library is an
//! error we can report, never a panic at the first embedding.

use super::{Embedder, Error, normalise};
use fastembed::{InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Texts embedded per model run (and per hold of the model's lock).
const BATCH: usize = 32;

/// The model name reported in stats.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2-int8";

/// Where the model and runtime files are.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    /// `libonnxruntime.so`.
    pub runtime: PathBuf,
    /// Directory with `model.onnx` and the tokenizer files.
    pub model_dir: PathBuf,
}

impl ModelFiles {
    /// The standard layout under a models directory (as install.sh provisions it).
    pub fn under(dir: &Path) -> ModelFiles {
        let lib = if cfg!(target_os = "macos") { "libonnxruntime.dylib" } else { "libonnxruntime.so" };
        ModelFiles { runtime: dir.join("ort").join(lib), model_dir: dir.join(MODEL_NAME) }
    }
}

/// The fastembed model behind a mutex (`embed` takes `&mut self`).
pub struct FastEmbedder {
    model: Mutex<TextEmbedding>,
}

impl FastEmbedder {
    /// Loads the runtime and the model, its int8 tables kept int8. Blocking: call from
    /// `spawn_blocking`.
    pub fn load(files: &ModelFiles, threads: usize, max_length: usize) -> Result<FastEmbedder, Error> {
        Self::load_with(files, threads, max_length, Tables::Int8)
    }

    /// `load`, with the model's tables held as `tables` says.
    pub fn load_with(
        files: &ModelFiles,
        threads: usize,
        max_length: usize,
        tables: Tables,
    ) -> Result<FastEmbedder, Error> {
        let read = |name: &str| {
            let p = files.model_dir.join(name);
            std::fs::read(&p).map_err(|e| {
                Error::Unavailable(format!("cannot read {}: {e}; run ./install.sh to provision the model", p.display()))
            })
        };
        if !files.runtime.exists() {
            return Err(Error::Unavailable(format!(
                "ONNX runtime not found at {}; run ./install.sh or set model.runtime",
                files.runtime.display()
            )));
        }
        let onnx = match tables {
            Tables::Int8 => int8_tables(read("model.onnx")?),
            Tables::Folded => read("model.onnx")?,
        };
        let tokenizer = TokenizerFiles {
            tokenizer_file: read("tokenizer.json")?,
            config_file: read("config.json")?,
            special_tokens_map_file: read("special_tokens_map.json")?,
            tokenizer_config_file: read("tokenizer_config.json")?,
        };
        let environment = init_runtime(&files.runtime)?;
        let model = UserDefinedEmbeddingModel::new(onnx, tokenizer).with_pooling(Pooling::Mean);
        let options = InitOptionsUserDefined::new()
            .with_max_length(max_length)
            .with_intra_threads(threads.max(1))
            .with_execution_providers(cpu_without_arena())
            .with_environment(environment);
        let model = TextEmbedding::try_new_from_user_defined(model, options)
            .map_err(|e| Error::Unavailable(format!("cannot load model from {}: {e}", files.model_dir.display())))?;
        Ok(FastEmbedder { model: Mutex::new(model) })
    }
}

/// How the model's int8 embedding tables are held in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tables {
    /// Int8, each row read scaled as it is read (`tables.rs`): the same vectors, and ~35 MB less
    /// resident than the runtime's f32 copy of the word table.
    Int8,
    /// As the model file has them: dequantised to f32 by the runtime at load (for comparisons).
    Folded,
}

/// The model with its table lookups rewritten to read int8 rows; a model the rewrite cannot read
/// or has nothing for is loaded as it is (it costs memory, not correctness).
fn int8_tables(onnx: Vec<u8>) -> Vec<u8> {
    match super::tables::read_rows_int8(&onnx) {
        Ok(Some(lean)) => {
            tracing::debug!(tables = ?lean.tables, "model tables kept int8");
            lean.model
        }
        Ok(None) => onnx,
        Err(e) => {
            tracing::warn!("model tables left to the runtime: {e}");
            onnx
        }
    }
}

/// The CPU execution provider without its memory arena. The arena keeps the largest buffers a
/// batch ever needed for the life of the process: with this model, one batch of 32 texts of 128
/// tokens left 616 MiB resident with the arena and 236 MiB without it, for the same
/// one-sentence time.
pub fn cpu_without_arena() -> Vec<ort::ep::ExecutionProviderDispatch> {
    vec![ort::ep::CPU::default().with_arena_allocator(false).build()]
}

/// Loads the ONNX runtime library (the embedder and the verifier share it). `ort::init_from` may
/// run once per process; later calls reuse the first result. The process keeps one environment, built with ONNX Runtime's telemetry off: by default the runtime looks
/// up Microsoft's telemetry host, and refrain sends nothing anywhere.
pub fn init_runtime(path: &Path) -> Result<ort::environment::Environment, Error> {
    static ENV: std::sync::OnceLock<Result<ort::environment::Environment, String>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let builder = ort::init_from(path).map_err(|e| format!("cannot load ONNX runtime {}: {e}", path.display()))?;
        builder.with_telemetry(false).build().map_err(|e| format!("cannot start ONNX runtime: {e}"))
    })
    .clone()
    .map_err(Error::Unavailable)
}

impl Embedder for FastEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
        let mut out = Vec::with_capacity(texts.len());
        // The lock is taken per batch, not for the whole list: a call embedding many texts (and
        // running at low priority once it is slow) keeps another call's one text waiting for
        // one batch at most.
        for batch in texts.chunks(BATCH) {
            let mut model = self.model.lock().map_err(|_| Error::Failed("model lock poisoned".into()))?;
            out.extend(model.embed(batch, Some(BATCH)).map_err(|e| Error::Failed(e.to_string()))?);
        }
        out.iter_mut().for_each(|v| normalise(v));
        Ok(out)
    }

    fn dim(&self) -> usize {
        384
    }

    fn name(&self) -> &str {
        MODEL_NAME
    }
}
