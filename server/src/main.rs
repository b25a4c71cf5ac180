fn main() -> std::process::ExitCode {
    natstudy::cli::main()
}
