//! Resident resets: whether a freed memory slot of the pool is reset in place (its written pages
//! copied back from the image or zeroed, and kept) instead of given back to the kernel.
//!
//! Why: an interpreter guest (Python, JavaScript) writes a few hundred pages of its heap image in
//! every call. Given back with `madvise`, each of them faults again in the next instance of the
//! slot (a copy-on-write fault, and a TLB shootdown to the other cores): ~44% of a Python call's
//! CPU. Reset in place, the next instance finds them mapped and writable.
//!
//! What it needs, each checked here, otherwise the pool gives pages back as before:
//! - the kernel's `PAGEMAP_SCAN` (Linux 6.7), which wasmtime uses only when asked
//!   (`pagemap_scan`): without it wasmtime resets the first [`RESIDENT_RESET_BYTES`] of every
//!   slot by `memset` and copy, written or not (measured: a Python call's whole 12.7 MiB heap,
//!   every call);
//! - the patched wasmtime (`host/vendor/PATCH.md`): the scan continues past 32 dirty runs;
//! - no swap device: a written page the kernel swapped out is not present, and wasmtime 48.0.8's
//!   scan would neither reset nor give it back, so the next instance would read the previous
//!   call's data. The patch counts such pages as written; the resets stay off where swap is on
//!   all the same, because no test here can swap a slot out on every machine.

/// Bytes of written memory a freed slot keeps and resets in place; the rest of what a call
/// wrote is given back. Sized from the dirty set measured per slot (`mcpbox_pool_resident_bytes`
/// over `mcpbox_pool_warm_memories` after sequential calls): the `mcpbox new` template's call
/// writes ~0.75 MiB in Python, ~0.6 MiB in JavaScript, ~40 KiB in Rust; four times the largest
/// leaves room for a call that does more, and a call that writes megabytes (a large result)
/// keeps only this much after it.
pub const RESIDENT_RESET_BYTES: usize = 3 << 20;

/// Unused slots that keep their module's image mapped (wasmtime's `max_unused_warm_slots`):
/// with resident resets, each holds up to [`RESIDENT_RESET_BYTES`], so this bounds the memory
/// kept for reuse to 48 MiB, and the idle return (`idle.rs`) gives it back once no call runs.
pub const WARM_SLOTS: u32 = 16;

/// The environment variable that overrides [`RESIDENT_RESET_BYTES`] in KiB (0 turns resident
/// resets off), for the benchmark's A/B runs; the checks above still apply.
pub const OVERRIDE_VARIABLE: &str = "MCPBOX_RESIDENT_RESET_KIB";

/// The decision and why, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResidentReset {
    /// Bytes each freed slot keeps (0: resident resets are off).
    pub bytes: usize,
    /// Why, for the log.
    pub why: String,
}

/// Decides from this machine's kernel and swap, and the override variable.
pub fn decide() -> ResidentReset {
    let swaps = std::fs::read_to_string("/proc/swaps").ok();
    let requested = std::env::var(OVERRIDE_VARIABLE).ok();
    decide_from(swaps.as_deref(), pagemap_scan_available(), requested.as_deref())
}

/// [`decide`] from what it read: `/proc/swaps` (None where there is none), whether the kernel
/// has `PAGEMAP_SCAN`, and the override.
pub(crate) fn decide_from(swaps: Option<&str>, pagemap_scan: bool, requested: Option<&str>) -> ResidentReset {
    let off = |why: String| ResidentReset { bytes: 0, why };
    let bytes = match requested.map(|kib| kib.trim().parse::<usize>()) {
        None => RESIDENT_RESET_BYTES,
        Some(Ok(0)) => return off(format!("{OVERRIDE_VARIABLE} is 0")),
        Some(Ok(kib)) => kib.saturating_mul(1024).min(1 << 30),
        Some(Err(_)) => {
            tracing::warn!("{OVERRIDE_VARIABLE} is not a number of KiB; using the default");
            RESIDENT_RESET_BYTES
        }
    };
    if !pagemap_scan {
        return off("the kernel has no PAGEMAP_SCAN (Linux 6.7)".to_owned());
    }
    // The first line is the header; any further line is a swap device or file in use.
    if crate::switched_off!("sandbox.resident-reset-swap-check") {
        return ResidentReset { bytes, why: "the swap check is switched off".to_owned() };
    }
    if let Some(device) = swaps.and_then(|text| text.lines().skip(1).find(|line| !line.trim().is_empty())) {
        let name = device.split_whitespace().next().unwrap_or("a device");
        return off(format!("swap is on ({name}): a swapped-out page could outlive its call"));
    }
    ResidentReset { bytes, why: format!("{} KiB per freed slot, reset in place", bytes / 1024) }
}

/// Whether the kernel has `PAGEMAP_SCAN` (Linux 6.7), probed by wasmtime the way its pool uses
/// it.
fn pagemap_scan_available() -> bool {
    wasmtime::PoolingAllocationConfig::is_pagemap_scan_available()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_SWAP: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";

    #[test]
    fn resident_resets_stay_off_whenever_a_swap_device_is_listed() {
        let on = decide_from(Some(NO_SWAP), true, None);
        assert_eq!(on.bytes, RESIDENT_RESET_BYTES, "{}", on.why);
        assert_eq!(decide_from(None, true, None).bytes, RESIDENT_RESET_BYTES);
        for line in
            ["/dev/sda2                               partition\t8388604\t0\t-2\n", "/swapfile file 65532 12 -2\n"]
        {
            let off = decide_from(Some(&format!("{NO_SWAP}{line}")), true, None);
            assert_eq!(off.bytes, 0, "{line}");
            assert!(off.why.starts_with("swap is on (/"), "{}", off.why);
            // Not even when a benchmark asks for them.
            assert_eq!(decide_from(Some(&format!("{NO_SWAP}{line}")), true, Some("4096")).bytes, 0);
        }
    }

    #[test]
    fn resident_resets_need_the_kernels_page_scan_and_follow_the_override() {
        let off = decide_from(Some(NO_SWAP), false, None);
        assert_eq!(off.bytes, 0);
        assert!(off.why.contains("PAGEMAP_SCAN"), "{}", off.why);
        assert_eq!(decide_from(Some(NO_SWAP), true, Some("0")).bytes, 0);
        assert_eq!(decide_from(Some(NO_SWAP), true, Some("512")).bytes, 512 << 10);
        assert_eq!(decide_from(Some(NO_SWAP), true, Some("a lot")).bytes, RESIDENT_RESET_BYTES);
        assert_eq!(decide_from(Some(NO_SWAP), true, Some("99999999999999")).bytes, 1 << 30);
    }

    #[test]
    fn this_kernels_page_scan_is_probed() {
        // Linux 6.7 and later answer wasmtime's probe; this machine kind runs one.
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut numbers = release.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse::<u32>().ok());
        if (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0)) >= (6, 7) {
            assert!(pagemap_scan_available(), "kernel {release} has PAGEMAP_SCAN");
        }
    }
}
