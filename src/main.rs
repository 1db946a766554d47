fn main() -> std::process::ExitCode {
    let code = peat::cli::run();
    peat::embed::onnx::exit_if_runtime_loaded(code);
    std::process::ExitCode::from(code)
}
