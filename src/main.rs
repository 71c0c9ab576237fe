fn main() {
    std::process::exit(retry_run::cli::main());
}
