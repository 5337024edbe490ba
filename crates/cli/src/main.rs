//! The `warden` command.

mod cli;
mod commands;

// A faster allocator than the system's: a decision allocates a few dozen small
// strings and vectors, and with glibc's malloc that is a third of its time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
