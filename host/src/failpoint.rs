//! Fail points: every protection of SECURITY.md can be switched off at run time, one at a time,
//! so that `scripts/check-protections.py` proves each is guarded by tests that fail without it.
//!
//! A protection's check carries `switched_off!("area.what")`, e.g.
//!
//! ```text
//! // the memory limit: a grow past it is refused, unless the test armed `sandbox.memory-limit`
//! if desired > self.limit && !switched_off!("sandbox.memory-limit") {
//! ```
//!
//! and `tests/protections.toml` names the fail point and the tests that must fail with it armed.
//! In a product build `switched_off!` is the constant `false`: the check is compiled as if the
//! macro were not there, and no fail point's name reaches the binary. Only the `failpoints`
//! cargo feature, which the test command builds (`scripts/test.sh`; `build.rs` refuses the
//! feature unless `MCPBOX_TEST_FAILPOINTS=1` says so), compiles the switch: TiKV's `fail` crate,
//! armed per process by `FAILPOINTS=area.what=return` in the environment. Such a binary says so
//! in `--version`, logs it at start and refuses to run without `MCPBOX_TEST_FAILPOINTS=1`
//! (`cli/mod.rs`).
//!
//! A leaf like `telemetry`: it names no other module of the crate, so that every layer may use it.

/// True when the test armed the fail point `$name`, switching its protection off: the fail-point
/// build's definition. Exported only so that the binary's `main.rs` can use it too.
#[cfg(feature = "failpoints")]
#[macro_export]
macro_rules! switched_off {
    ($name:literal) => {
        $crate::failpoint::armed($name)
    };
}

/// The constant `false`: in a product build no protection can be switched off, and no fail
/// point's name reaches the binary. Exported only so that the binary's `main.rs` can use it too.
#[cfg(not(feature = "failpoints"))]
#[macro_export]
macro_rules! switched_off {
    ($name:literal) => {
        false
    };
}

/// The variable that must be `1` for a fail-point build to be built (`build.rs`) and to run.
pub const TEST_ONLY_VARIABLE: &str = "MCPBOX_TEST_FAILPOINTS";

/// What `--version` says: a fail-point build says what it is.
#[cfg(not(feature = "failpoints"))]
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// What `--version` says: a fail-point build says what it is.
#[cfg(feature = "failpoints")]
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (fail-point build: for the test suite only)");

#[cfg(feature = "failpoints")]
#[doc(hidden)]
pub use armed::armed;
#[cfg(feature = "failpoints")]
pub(crate) use armed::check_allowed;

#[cfg(feature = "failpoints")]
mod armed {
    use std::sync::Once;

    /// The `fail` crate's variable: `name=actions;name=actions` (`return` switches a protection
    /// off; the crate's other actions work too).
    const FAILPOINTS: &str = "FAILPOINTS";

    /// Whether the fail point `name` is armed in this process (read from `FAILPOINTS` once, so
    /// that the test process and every mcpbox it starts agree).
    pub fn armed(name: &str) -> bool {
        configure_once();
        fail::fail_point!(name, |_| true);
        false
    }

    fn configure_once() {
        static CONFIGURED: Once = Once::new();
        CONFIGURED.call_once(configure);
    }

    /// Arms what `FAILPOINTS` names. Not `fail::FailScenario::setup`: its guard holds a lock for
    /// as long as the scenario lasts, which here is the process, and it panics on a typo.
    fn configure() {
        let Ok(spec) = std::env::var(FAILPOINTS) else { return };
        for entry in spec.split(';').map(str::trim).filter(|entry| !entry.is_empty()) {
            let configured = match entry.split_once('=') {
                Some((name, actions)) => fail::cfg(name.trim(), actions.trim()),
                None => Err("expected NAME=ACTIONS".to_owned()),
            };
            if let Err(e) = configured {
                eprintln!("mcpbox: {FAILPOINTS}: cannot arm `{entry}`: {e}");
            }
        }
    }

    /// Refuses to run a fail-point build outside the test suite; otherwise says, on stderr, that
    /// this is one and which fail points are armed.
    pub(crate) fn check_allowed() -> Result<(), String> {
        if std::env::var(super::TEST_ONLY_VARIABLE).as_deref() != Ok("1") {
            return Err(format!(
                "this mcpbox is a fail-point build (the `failpoints` feature), made for the test suite: \
                 its protections can be switched off, so it runs only with {}=1. Build mcpbox without \
                 the feature (`cargo build --release`) to serve",
                super::TEST_ONLY_VARIABLE
            ));
        }
        configure_once();
        let mut names: Vec<String> = fail::list().into_iter().map(|(name, _)| name).collect();
        names.sort();
        let armed = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
        tracing::warn!("a fail-point build, for the test suite only: protections can be switched off (armed: {armed})");
        Ok(())
    }
}
