//! Each principal's share of the server (`[auth.limits]`): how many of its calls may run at
//! once, and how many it may start per minute (a token bucket of `burst` calls, refilled at
//! the rate). One principal at its limits is refused, with which limit and when to retry;
//! the others are not slowed at all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::config::{PrincipalLimits, Rate};

/// Principals tracked before idle ones (nothing running, a full bucket) are forgotten.
const TRACKED: usize = 4096;

/// Why a call was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LimitRefusal {
    /// `limit` calls of this principal are running already.
    Concurrency { limit: u32 },
    /// It started its `per_minute` (`burst` at once) already; the next may start after
    /// `retry_after`.
    Rate { per_minute: u32, retry_after: Duration },
}

impl LimitRefusal {
    /// When to try again, in whole seconds (at least 1: `Retry-After` counts seconds).
    pub(crate) fn retry_after_seconds(&self) -> u64 {
        match self {
            // A running call takes as long as it takes; a second is a fair first guess.
            LimitRefusal::Concurrency { .. } => 1,
            LimitRefusal::Rate { retry_after, .. } => retry_after.as_secs_f64().ceil().max(1.0) as u64,
        }
    }
}

impl std::fmt::Display for LimitRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitRefusal::Concurrency { limit } => write!(
                f,
                "too many calls at once: {limit} of this principal's calls are running ([auth.limits] concurrent_calls); retry after {} s",
                self.retry_after_seconds()
            ),
            LimitRefusal::Rate { per_minute, .. } => write!(
                f,
                "too many calls: this principal may start {per_minute} per minute ([auth.limits] calls_per_minute); retry after {} s",
                self.retry_after_seconds()
            ),
        }
    }
}

/// One principal's use.
struct Use {
    running: u32,
    /// Calls it may start now (fractional: the bucket refills continuously).
    tokens: f64,
    refilled: Instant,
}

/// The limits and every principal's use.
pub(crate) struct Limits {
    limits: PrincipalLimits,
    uses: Arc<Mutex<HashMap<String, Use>>>,
}

/// A call counted as running until this is dropped.
pub(crate) struct Running {
    key: String,
    uses: Arc<Mutex<HashMap<String, Use>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(used) = self.uses.lock().unwrap_or_else(PoisonError::into_inner).get_mut(&self.key) {
            used.running = used.running.saturating_sub(1);
        }
    }
}

impl Limits {
    pub(crate) fn new(limits: PrincipalLimits) -> Limits {
        Limits { limits, uses: Arc::default() }
    }

    /// Whether any limit is configured.
    pub(crate) fn any(&self) -> bool {
        self.limits.concurrent_calls.is_some() || self.limits.rate.is_some()
    }

    /// Starts a call of the principal `key`, or says which limit refuses it.
    pub(crate) fn start(&self, key: &str) -> Result<Running, LimitRefusal> {
        self.start_at(key, Instant::now())
    }

    fn start_at(&self, key: &str, now: Instant) -> Result<Running, LimitRefusal> {
        let mut uses = self.uses.lock().unwrap_or_else(PoisonError::into_inner);
        if uses.len() >= TRACKED && !uses.contains_key(key) {
            let full = self.limits.rate.map_or(0.0, |rate| f64::from(rate.burst.get()));
            uses.retain(|_, used| used.running > 0 || self.refilled(used, now) < full);
        }
        let burst = self.limits.rate.map_or(0.0, |rate| f64::from(rate.burst.get()));
        let used = uses.entry(key.to_owned()).or_insert(Use { running: 0, tokens: burst, refilled: now });
        if let Some(limit) = self.limits.concurrent_calls
            && used.running >= limit.get()
        {
            return Err(LimitRefusal::Concurrency { limit: limit.get() });
        }
        if let Some(rate) = self.limits.rate {
            used.tokens = self.refilled(used, now);
            used.refilled = now;
            if used.tokens < 1.0 && !crate::switched_off!("access.rate-limit") {
                let per_second = f64::from(rate.per_minute.get()) / 60.0;
                let retry_after = Duration::from_secs_f64((1.0 - used.tokens) / per_second);
                return Err(LimitRefusal::Rate { per_minute: rate.per_minute.get(), retry_after });
            }
            used.tokens -= 1.0;
        }
        used.running += 1;
        Ok(Running { key: key.to_owned(), uses: self.uses.clone() })
    }

    /// The tokens `used` has at `now`.
    fn refilled(&self, used: &Use, now: Instant) -> f64 {
        let Some(rate): Option<Rate> = self.limits.rate else { return 0.0 };
        let elapsed = now.saturating_duration_since(used.refilled).as_secs_f64();
        (used.tokens + elapsed * f64::from(rate.per_minute.get()) / 60.0).min(f64::from(rate.burst.get()))
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    fn limits(concurrent: Option<u32>, per_minute: u32, burst: u32) -> Limits {
        Limits::new(PrincipalLimits {
            concurrent_calls: concurrent.and_then(NonZeroU32::new),
            rate: Some(Rate {
                per_minute: NonZeroU32::new(per_minute).unwrap(),
                burst: NonZeroU32::new(burst).unwrap(),
            }),
        })
    }

    #[test]
    fn a_burst_then_the_rate_and_others_are_untouched() {
        let limits = limits(None, 60, 2);
        let start = Instant::now();
        let _a = limits.start_at("ada", start).unwrap();
        let _b = limits.start_at("ada", start).unwrap();
        let refused = limits.start_at("ada", start).err().unwrap();
        assert!(matches!(refused, LimitRefusal::Rate { per_minute: 60, .. }), "{refused:?}");
        assert_eq!(refused.retry_after_seconds(), 1);
        assert!(refused.to_string().contains("calls_per_minute"), "{refused}");
        // Bob has his own bucket.
        assert!(limits.start_at("bob", start).is_ok());
        // A second later, one more for Ada.
        assert!(limits.start_at("ada", start + Duration::from_millis(1001)).is_ok());
        assert!(limits.start_at("ada", start + Duration::from_millis(1002)).is_err());
    }

    #[test]
    fn running_calls_count_until_they_end() {
        let limits = limits(Some(1), 1_000, 1_000);
        let now = Instant::now();
        let running = limits.start_at("ada", now).unwrap();
        let refused = limits.start_at("ada", now).err().unwrap();
        assert_eq!(refused, LimitRefusal::Concurrency { limit: 1 });
        assert!(refused.to_string().contains("concurrent_calls"), "{refused}");
        assert!(limits.start_at("bob", now).is_ok());
        drop(running);
        assert!(limits.start_at("ada", now).is_ok());
    }

    #[test]
    fn idle_principals_are_forgotten_when_many_are_tracked() {
        let limits = limits(None, 60, 1);
        let start = Instant::now();
        for n in 0..TRACKED {
            drop(limits.start_at(&n.to_string(), start).unwrap());
        }
        // All drained their bucket; a minute on they are full again, and forgotten.
        drop(limits.start_at("new", start + Duration::from_secs(60)).unwrap());
        assert!(limits.uses.lock().unwrap().len() < 10);
    }
}
