//! `[store]` and `--store`: the Redis a fleet's replicas share (docs/fleet.md), the replica's
//! name, and what a shared store requires (the same `requestState` keys on every replica).

use std::time::Duration;

use anyhow::{Result, anyhow};
use toml::Spanned;

use super::ServeArgs;
use super::file::ConfigFile;
use super::problems::Problems;
use super::problems::{flag_limit, pick, spanned_limit};
use crate::fleet::StoreOptions;
use crate::runtime::grants::limits::LimitError;

/// How long a replica's claim on its tasks lasts unless configured: a dead replica's tasks
/// read as failed after at most this.
const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// A lease under 2 s is renewed more often than a store round trip can be trusted to take;
/// one over 10 minutes leaves a dead replica's tasks working for too long.
const LEASE_SECONDS: std::ops::RangeInclusive<u64> = 2..=600;
/// Keys and channels start with this unless configured.
const DEFAULT_PREFIX: &str = "mcpbox";

/// The shared store, if `--store` or `[store] redis` names one; each bad value a problem.
pub(super) fn store_options(file: &ConfigFile, args: &ServeArgs, problems: &mut Problems) -> Option<StoreOptions> {
    let section = &file.config.store;
    let url = match (&args.store, &section.redis) {
        (Some(url), _) => problems.take(checked_url(url).map_err(|e| anyhow!("--store {e}")))?,
        (None, Some(url)) => problems
            .take(checked_url(url.get_ref()).map_err(|e| anyhow!("{}: [store] redis {e}", file.at(url.span()))))?,
        (None, None) => {
            for (key, present) in
                [("prefix", section.prefix.is_some()), ("lease_seconds", section.lease_seconds.is_some())]
            {
                if present {
                    problems.take::<()>(Err(anyhow!(
                        "{}: [store] {key} without [store] redis (or --store) does nothing: name the Redis, or remove it",
                        file.path.display()
                    )));
                }
            }
            return None;
        }
    };
    if args.request_state_keys.is_none() {
        problems.take::<()>(Err(anyhow!(
            "a shared store (--store, [store] redis) needs --request-state-keys FILE, the same file on every replica: a key made per process would refuse the requestState another replica sealed"
        )));
    }
    let prefix = problems.take(prefix(file, &section.prefix)).unwrap_or_else(|| DEFAULT_PREFIX.to_owned());
    let lease = pick(
        problems,
        flag_limit(args.store_lease, "--store-lease", seconds_within(LEASE_SECONDS)),
        spanned_limit(file, &section.lease_seconds, "[store] lease_seconds", seconds_within(LEASE_SECONDS)),
    );
    let lease = lease.unwrap_or(DEFAULT_LEASE);
    Some(StoreOptions { url, prefix, lease })
}

fn checked_url(url: &str) -> Result<String, String> {
    if url.starts_with("redis://") || url.starts_with("rediss://") {
        Ok(url.to_owned())
    } else {
        Err("must be a redis:// or rediss:// URL".to_owned())
    }
}

fn prefix(file: &ConfigFile, prefix: &Option<Spanned<String>>) -> Result<String> {
    let Some(prefix) = prefix else { return Ok(DEFAULT_PREFIX.to_owned()) };
    let text = prefix.get_ref();
    let fits = !text.is_empty()
        && text.len() <= 64
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fits {
        Ok(text.clone())
    } else {
        Err(anyhow!(
            "{}: [store] prefix must be 1 to 64 letters, digits, `-`, `_` or `.`, not `{text}`",
            file.at(prefix.span())
        ))
    }
}

/// `--replica`, else the host name (the pod name under Kubernetes), else `mcpbox`.
pub(super) fn replica_name(args: &ServeArgs, problems: &mut Problems) -> String {
    if let Some(name) = &args.replica {
        return problems.take(checked_name(name).map_err(|e| anyhow!("--replica {e}"))).unwrap_or_default();
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| checked_name(name).is_ok())
        .unwrap_or_else(|| "mcpbox".to_owned())
}

/// A DNS label: 1 to 63 lowercase letters, digits and `-`, not starting or ending with `-`
/// (it starts session ids, and a load balancer may route by it).
fn checked_name(name: &str) -> Result<String, String> {
    let fits = (1..=63).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if fits {
        Ok(name.to_owned())
    } else {
        Err(format!("must be a DNS label (1 to 63 of a-z, 0-9 and `-`), not `{name}`"))
    }
}

/// Whole seconds within `range`, as a duration (the lease, the shutdown's waits).
pub(super) fn seconds_within(range: std::ops::RangeInclusive<u64>) -> impl Fn(u64) -> Result<Duration, LimitError> {
    move |seconds| {
        if seconds < *range.start() {
            Err(LimitError::TooSmall { min: format!("{} seconds", range.start()), value: format!("{seconds} seconds") })
        } else if seconds > *range.end() {
            Err(LimitError::TooLarge { max: format!("{} seconds", range.end()), value: format!("{seconds} seconds") })
        } else {
            Ok(Duration::from_secs(seconds))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{checked_name, seconds_within};

    #[test]
    fn replica_names_are_dns_labels() {
        assert!(checked_name("mcpbox-7d9f-0").is_ok());
        for bad in ["", "-a", "a-", "A", "a.b", "a/b", &"x".repeat(64)] {
            assert!(checked_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn seconds_are_checked_against_their_range() {
        let lease = seconds_within(2..=600);
        assert_eq!(lease(2).unwrap().as_secs(), 2);
        assert_eq!(lease(1).unwrap_err().to_string(), "must be at least 2 seconds, not 1 seconds");
        assert_eq!(lease(601).unwrap_err().to_string(), "must be at most 600 seconds, not 601 seconds");
    }
}
