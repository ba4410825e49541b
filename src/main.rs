fn main() -> std::process::ExitCode {
    unfold_cli::main()
}
