//! The `mcpbox` binary: everything is in the library's `cli` module.

fn main() -> std::process::ExitCode {
    mcpbox::cli::main()
}
