//! The limits every call runs under, and their valid ranges. A limit is built only through the
//! checked constructors here, so no value a user types can overflow the arithmetic a call does
//! with it (`Instant::now() + timeout`, `MiB << 20`): out-of-range values are an error that the
//! configuration layer prefixes with the flag or key the user typed.

use std::time::{Duration, Instant};

/// Limits every call runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall time from instantiation to result.
    pub timeout: Duration,
    /// Linear memory per instance, in bytes.
    pub memory_bytes: usize,
    /// What one call may send: its result (text, binary data, structured content) and its
    /// log and progress messages, in bytes. Bounds what reaches the protocol stream and the
    /// client, whatever the guest's memory allows.
    pub output_bytes: usize,
    /// What one call may write into granted directories, in bytes: every byte written, and a
    /// file grown by `set-size`. Bounds how fast a plugin fills a disk; the directories'
    /// own budgets (`quota.rs`) bound how far.
    pub write_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(30),
            memory_bytes: 256 << 20,
            output_bytes: 16 << 20,
            write_bytes: 64 << 20,
        }
    }
}

/// The longest time limit: a day. Longer ones are typos, and far longer ones overflow the
/// clock (`Instant + Duration` panics past the platform's range).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);
/// The largest memory limit: 4 GiB, all a 32-bit WebAssembly memory can address.
pub const MAX_MEMORY_MIB: u64 = 4096;
/// The largest output limit. A call's output is held in the host's memory on its way to the
/// client, so this is also what one call may make the host hold.
pub const MAX_OUTPUT_MIB: u64 = 1024;

/// Why a limit's value is refused; the caller says which flag or key it came from.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitError {
    /// Zero, negative or not a number.
    #[error("must be a positive number, not {0}")]
    NotPositive(String),
    /// Under the limit's minimum.
    #[error("must be at least {min}, not {value}")]
    TooSmall {
        /// The minimum, with its unit.
        min: String,
        /// The value given, with its unit.
        value: String,
    },
    /// Over the limit's maximum.
    #[error("must be at most {max}, not {value}")]
    TooLarge {
        /// The maximum, with its unit.
        max: String,
        /// The value given, with its unit.
        value: String,
    },
}

/// A time limit of `seconds` (a fraction is fine).
pub fn timeout_from_secs(seconds: f64) -> Result<Duration, LimitError> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(LimitError::NotPositive(format!("{seconds:?}")));
    }
    if seconds > MAX_TIMEOUT.as_secs_f64() {
        return Err(LimitError::TooLarge {
            max: format!("{} seconds", MAX_TIMEOUT.as_secs()),
            value: format!("{seconds:?} seconds"),
        });
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A time limit of `ms` milliseconds.
pub fn timeout_from_ms(ms: u64) -> Result<Duration, LimitError> {
    if ms == 0 {
        return Err(LimitError::NotPositive("0 ms".to_owned()));
    }
    if u128::from(ms) > MAX_TIMEOUT.as_millis() {
        return Err(LimitError::TooLarge { max: format!("{} ms", MAX_TIMEOUT.as_millis()), value: format!("{ms} ms") });
    }
    Ok(Duration::from_millis(ms))
}

/// A memory limit of `mib` MiB, in bytes.
/// The largest plugin file, in MiB.
pub const MAX_PLUGIN_MIB: u64 = 4096;

/// A plugin file size bound from MiB: positive and at most [`MAX_PLUGIN_MIB`].
pub fn plugin_bytes_from_mib(mib: u64) -> Result<u64, LimitError> {
    mib_to_bytes(mib, MAX_PLUGIN_MIB).map(|bytes| bytes as u64)
}

pub fn memory_from_mib(mib: u64) -> Result<usize, LimitError> {
    mib_to_bytes(mib, MAX_MEMORY_MIB)
}

/// An output limit of `mib` MiB, in bytes.
pub fn output_from_mib(mib: u64) -> Result<usize, LimitError> {
    mib_to_bytes(mib, MAX_OUTPUT_MIB)
}

/// The largest write limit per call: 1 TiB.
pub const MAX_WRITE_MIB: u64 = 1 << 20;

/// A call's write limit of `mib` MiB.
pub fn write_from_mib(mib: u64) -> Result<u64, LimitError> {
    mib_to_bytes(mib, MAX_WRITE_MIB).map(|bytes| bytes as u64)
}

/// A directory's byte budget of `mib` MiB (up to 1 PiB; 0 is refused: a read-only grant says that).
pub fn tree_bytes_from_mib(mib: u64) -> Result<u64, LimitError> {
    mib_to_bytes(mib, 1 << 30).map(|bytes| bytes as u64)
}

/// A directory's entry budget: at least 1.
pub fn tree_files(count: u64) -> Result<u64, LimitError> {
    if count == 0 {
        return Err(LimitError::NotPositive("0 entries".to_owned()));
    }
    Ok(count)
}

/// How many instances a plugin keeps made ahead of its calls: 0 (none) to
/// [`MAX_PREPARED_PER_PLUGIN`](MAX_PREPARED_PER_PLUGIN).
pub fn prepared_count(count: u64) -> Result<usize, LimitError> {
    let max = MAX_PREPARED_PER_PLUGIN;
    usize::try_from(count)
        .ok()
        .filter(|count| *count <= max)
        .ok_or_else(|| LimitError::TooLarge { max: max.to_string(), value: count.to_string() })
}

fn mib_to_bytes(mib: u64, max: u64) -> Result<usize, LimitError> {
    if mib == 0 {
        return Err(LimitError::NotPositive("0 MiB".to_owned()));
    }
    if mib > max {
        return Err(LimitError::TooLarge { max: format!("{max} MiB"), value: format!("{mib} MiB") });
    }
    // At most 4096 MiB: fits a usize on every 64-bit target this host builds for.
    usize::try_from(mib << 20)
        .map_err(|_| LimitError::TooLarge { max: format!("{max} MiB"), value: format!("{mib} MiB") })
}

/// Instances made ahead of calls kept per plugin unless the operator says otherwise: enough for
/// a call to find one ready while the previous call's replacement is still being made.
pub const DEFAULT_PREPARED: usize = 2;

/// The most a plugin may keep (`[plugin.NAME] prepared`).
pub const MAX_PREPARED_PER_PLUGIN: usize = 16;

/// When something given `timeout` from now must stop. `Limits` are validated to at most a day;
/// the fallback only guards the arithmetic.
pub(crate) fn deadline_after(timeout: std::time::Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout).unwrap_or(now + MAX_TIMEOUT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_limits_are_errors_not_panics() {
        assert_eq!(timeout_from_secs(2.5).unwrap(), Duration::from_millis(2500));
        for absurd in [1e20, 1e19, f64::INFINITY, f64::NAN, -1.0, 0.0, 86_400.5] {
            assert!(timeout_from_secs(absurd).is_err(), "{absurd}");
        }
        assert!(timeout_from_ms(u64::MAX).is_err());
        assert!(timeout_from_ms(0).is_err());
        assert_eq!(memory_from_mib(64).unwrap(), 64 << 20);
        assert!(memory_from_mib(u64::MAX).is_err());
        assert!(output_from_mib(4096).is_err());
        assert_eq!(memory_from_mib(5000).unwrap_err().to_string(), "must be at most 4096 MiB, not 5000 MiB");
        assert_eq!(prepared_count(0).unwrap(), 0);
        assert_eq!(prepared_count(17).unwrap_err().to_string(), "must be at most 16, not 17");
        assert!(prepared_count(u64::MAX).is_err());
    }
}
