// glibc's allocator took about a fifth of an import's CPU (serde_json values, fjall's
// blocks, tantivy's postings: many small allocations across threads); mimalloc does the
// same work in a fraction of that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let code = peat::cli::run();
    peat::embed::onnx::exit_if_runtime_loaded(code);
    std::process::ExitCode::from(code)
}
