//! The `mcpbox` binary: everything is in the library's `cli` module.

use std::os::unix::process::CommandExt;

/// glibc's malloc raises its mmap threshold to the size of the largest block freed (up to
/// 32 MiB), and then serves blocks that large from per-thread arenas it rarely gives back:
/// after 24 results of 15 MiB, 8 at a time, the host kept 90 MiB more than before. A fixed
/// threshold (blocks of 1 MiB and more mapped, and unmapped when freed) returns that memory;
/// glibc reads it only from the environment at start-up, so mcpbox restarts itself once with
/// it set (`exec`: same process id, same arguments). tests/integration/budget.rs measures it.
const MMAP_THRESHOLD: (&str, &str) = ("MALLOC_MMAP_THRESHOLD_", "1048576");

/// And a fixed threshold also fixes glibc's trim threshold at 128 KiB: each instance's state
/// (an interpreter plugin's holds ~6,000 function references, ~200 KiB), freed at the top of
/// an arena, was given back and faulted in again by the next instance, 12 of a Python call's
/// 15 page faults. Up to 8 MiB free at an arena's top stays (0 faults per call; the idle test
/// of budget.rs still passes).
const TRIM_THRESHOLD: (&str, &str) = ("MALLOC_TRIM_THRESHOLD_", "8388608");

fn main() -> std::process::ExitCode {
    if cfg!(target_os = "linux")
        && std::env::var_os(MMAP_THRESHOLD.0).is_none()
        && !mcpbox::switched_off!("host.mmap-threshold")
    {
        let mut args = std::env::args_os();
        if let (Ok(exe), Some(_)) = (std::env::current_exe(), args.next()) {
            // Returns only if the exec failed; then mcpbox runs as it is.
            let mut command = std::process::Command::new(exe);
            command.args(args).env(MMAP_THRESHOLD.0, MMAP_THRESHOLD.1);
            if std::env::var_os(TRIM_THRESHOLD.0).is_none() {
                command.env(TRIM_THRESHOLD.0, TRIM_THRESHOLD.1);
            }
            let error = command.exec();
            eprintln!("mcpbox: cannot restart with fixed malloc mmap and trim thresholds ({error}); continuing");
        }
    }
    mcpbox::cli::main()
}
