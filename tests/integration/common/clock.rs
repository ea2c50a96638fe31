//! Each test's wall time, for the test command's report of the slowest (stable libtest times
//! none). libtest runs every test on a thread of its own, named after the test; the first helper
//! a test calls ([`started`], from `guests()`, `temp_dir()` and the server and command helpers)
//! puts a timer in that thread's local storage, and the thread's end drops it, which appends
//! `SECONDS\tNAME` to the file `MCPBOX_TEST_TIMES` names (scripts/test.sh sets it for the host
//! tests and prints the ten slowest). The time counts from the thread's own start, read from
//! `/proc/thread-self/stat`, not from the first helper call: work a test does before it is
//! counted too.

use std::cell::RefCell;
use std::io::Write;
use std::time::{Duration, Instant};

struct Timer {
    name: String,
    /// When the test's thread started, as this process's monotonic clock sees it.
    started: Instant,
}

thread_local! {
    static TIMER: RefCell<Option<Timer>> = const { RefCell::new(None) };
}

/// Starts timing the test on this thread, once; nothing when no report is asked for, or off
/// a test's thread (the main thread, a helper thread a test spawned).
pub fn started() {
    let Some(name) = std::thread::current().name().map(str::to_owned) else { return };
    if name == "main" || std::env::var_os("MCPBOX_TEST_TIMES").is_none() {
        return;
    }
    TIMER.with(|timer| {
        let mut timer = timer.borrow_mut();
        if timer.is_none() {
            let started = Instant::now().checked_sub(thread_age().unwrap_or_default()).unwrap_or_else(Instant::now);
            *timer = Some(Timer { name, started });
        }
    });
}

impl Drop for Timer {
    fn drop(&mut self) {
        let Some(path) = std::env::var_os("MCPBOX_TEST_TIMES") else { return };
        let line = format!("{:.1}\t{}\n", self.started.elapsed().as_secs_f64(), self.name);
        // One write of a short line to a file opened for appending: lines of tests ending at
        // once do not interleave.
        if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = file.write_all(line.as_bytes());
        }
    }
}

/// How long ago this thread started: its start time in clock ticks after boot (field 22 of
/// `/proc/thread-self/stat`, proc(5)) against the system's uptime.
fn thread_age() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = &stat[stat.rfind(')')? + 2..];
    let start_ticks: f64 = after_name.split(' ').nth(19)?.parse().ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime").ok()?.split(' ').next()?.parse().ok()?;
    // USER_HZ is 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)).
    Some(Duration::from_secs_f64((uptime - start_ticks / 100.0).max(0.0)))
}
