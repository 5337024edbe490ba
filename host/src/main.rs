fn main() -> std::process::ExitCode {
    warden_host::cli::main()
}
