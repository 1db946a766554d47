fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(peat::cli::run())
}
