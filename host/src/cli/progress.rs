//! Progress of long commands on stderr: indicatif's bars on a terminal, one plain line per
//! step otherwise (a log or CI reads lines, not redrawn bars).

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::registry::Progress;

/// Whether progress is drawn as bars: stderr is a terminal.
pub(crate) fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar of `total` steps for `compile`-like work on a terminal, or `None` for plain lines.
pub(crate) fn steps(total: u64) -> Option<ProgressBar> {
    if !on_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(style("{prefix} [{bar:30}] {pos}/{len} {wide_msg}"));
    bar.enable_steady_tick(Duration::from_millis(100));
    Some(bar)
}

/// Downloads and uploads of the registry commands, drawn as byte bars on a terminal.
pub(crate) struct Transfers {
    current: Mutex<Option<Transfer>>,
}

struct Transfer {
    what: String,
    total: u64,
    done: u64,
    started: Instant,
    bar: Option<ProgressBar>,
}

impl Transfers {
    pub(crate) fn new() -> Transfers {
        Transfers { current: Mutex::new(None) }
    }

    fn with(&self, f: impl FnOnce(&mut Option<Transfer>)) {
        // A poisoned lock only means a report panicked mid-way: drawing goes on.
        let mut current = self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut current);
    }
}

impl Progress for Transfers {
    fn begin(&self, what: &str, total: u64) {
        let bar = on_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(style("{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}"));
            bar.set_message(what.to_owned());
            bar
        });
        if bar.is_none() {
            eprintln!("{what} ({})", indicatif::HumanBytes(total));
        }
        self.with(|current| {
            *current = Some(Transfer { what: what.to_owned(), total, done: 0, started: Instant::now(), bar });
        });
    }

    fn advance(&self, bytes: u64) {
        self.with(|current| {
            if let Some(transfer) = current {
                transfer.done += bytes;
                if let Some(bar) = &transfer.bar {
                    bar.inc(bytes);
                }
            }
        });
    }

    fn end(&self) {
        self.with(|current| {
            let Some(transfer) = current.take() else { return };
            if let Some(bar) = &transfer.bar {
                bar.finish_and_clear();
            }
            let complete = if transfer.done >= transfer.total { "" } else { " (incomplete)" };
            eprintln!(
                "{}: {} in {} ms{complete}",
                transfer.what,
                indicatif::HumanBytes(transfer.done),
                transfer.started.elapsed().as_millis()
            );
        });
    }
}

fn style(template: &str) -> ProgressStyle {
    // The templates are constants of this file; a bad one falls back to the default bar.
    ProgressStyle::with_template(template).map_or_else(|_| ProgressStyle::default_bar(), |s| s.progress_chars("=> "))
}
