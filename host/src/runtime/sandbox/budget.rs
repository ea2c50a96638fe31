//! One budget for everything a call emits (issue 13, item 1). A call's result in every field,
//! its log and progress messages, its questions to the client and its resource announcements
//! are all charged to one [`CallBudget`], measured the same way: as the JSON they become on
//! the wire, after escaping ([`wire_len`]). Nothing is counted field by field, so a field added
//! to the WIT tomorrow is counted too (the bindings derive `Serialize`; see `bindings.rs`).
//! Counts are capped per kind as well, so a flood of tiny emissions is bounded by number, not
//! only by bytes. And the results held across all concurrent calls share one
//! [`SHARED_OUTPUT_BYTES`] budget: a call that would go past it is refused as busy.

use std::io;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde::Serialize;
use serde_json::ser::Formatter;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The bytes `value` takes as JSON on the wire: strings after escaping, byte lists as the
/// base64 strings MCP sends them as. Computed without building the JSON.
pub(crate) fn wire_len<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = Counter(0);
    let mut serializer = serde_json::Serializer::with_formatter(&mut counter, WireFormatter::default());
    // Serializing into a counter cannot fail: the bindings hold no maps with non-string keys
    // and no values serde_json refuses; if it ever did, count the maximum (refuse the output).
    match value.serialize(&mut serializer) {
        Ok(()) if crate::switched_off!("output.measured-as-json") => counter.0.min(64),
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

/// An `io::Write` that only counts.
struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 = self.0.saturating_add(bytes.len());
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// serde_json's compact format, except that a list of bytes counts as the base64 string it
/// becomes on the wire (4 bytes per 3, quoted) instead of an array of numbers.
#[derive(Default)]
struct WireFormatter {
    /// Per open array: its items so far, and how many of them were bytes.
    arrays: Vec<(usize, usize)>,
}

fn count<W: io::Write + ?Sized>(writer: &mut W, mut bytes: usize) -> io::Result<()> {
    const SPACES: [u8; 256] = [b' '; 256];
    while bytes > 0 {
        let chunk = bytes.min(SPACES.len());
        writer.write_all(&SPACES[..chunk])?;
        bytes -= chunk;
    }
    Ok(())
}

impl Formatter for WireFormatter {
    fn begin_array<W: io::Write + ?Sized>(&mut self, writer: &mut W) -> io::Result<()> {
        self.arrays.push((0, 0));
        writer.write_all(b"[")
    }

    fn begin_array_value<W: io::Write + ?Sized>(&mut self, _: &mut W, _first: bool) -> io::Result<()> {
        if let Some((items, _)) = self.arrays.last_mut() {
            *items += 1;
        }
        Ok(())
    }

    fn write_u8<W: io::Write + ?Sized>(&mut self, writer: &mut W, value: u8) -> io::Result<()> {
        match self.arrays.last_mut() {
            Some((_, bytes)) => {
                *bytes += 1;
                Ok(())
            }
            None => count(writer, value.to_string().len()),
        }
    }

    fn end_array<W: io::Write + ?Sized>(&mut self, writer: &mut W) -> io::Result<()> {
        let (items, bytes) = self.arrays.pop().unwrap_or_default();
        let commas = items.saturating_sub(1);
        if bytes > 0 && bytes == items {
            // `[` was counted; a base64 string is `"` + 4 per 3 bytes + `"`.
            return count(writer, bytes.div_ceil(3) * 4 + 1);
        }
        count(writer, commas)?;
        writer.write_all(b"]")
    }
}

/// What a call emits, by kind, for the per-kind caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Emission {
    /// A log or progress message (`host.log`, `host.progress`).
    Event,
    /// A `resource-updated` announcement.
    Announcement,
    /// A question to the client (`host.sample`, `host.elicit`, each question of `host.ask`).
    ClientRequest,
    /// State kept for the next round (`host.save-state`), sealed into the `requestState`.
    SavedState,
    /// A call of another served tool (`host.call-tool`): its arguments, then its result.
    ToolCall,
    /// The call's result (counted once, when the call returns).
    Result,
}

/// How many kinds of [`Emission`] there are.
const KINDS: usize = Emission::Result as usize + 1;

impl Emission {
    /// At most this many of a kind per call.
    pub(crate) fn cap(self) -> usize {
        match self {
            Emission::Event if crate::switched_off!("output.events-capped") => usize::MAX,
            Emission::Event => MAX_EVENTS_PER_CALL,
            Emission::Announcement => MAX_ANNOUNCEMENTS_PER_CALL,
            Emission::ClientRequest if crate::switched_off!("output.questions-capped") => usize::MAX,
            Emission::ClientRequest => MAX_CLIENT_REQUESTS_PER_CALL,
            Emission::SavedState => MAX_STATE_SAVES_PER_CALL,
            Emission::ToolCall if crate::switched_off!("compose.fan-out-bounded") => usize::MAX,
            Emission::ToolCall => MAX_TOOL_CALLS_PER_CALL,
            Emission::Result => 1,
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// How the kind is named in messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Emission::Event => "log/progress events",
            Emission::Announcement => "resource announcements",
            Emission::ClientRequest => "requests to the client (sample, elicit, ask)",
            Emission::SavedState => "saved states",
            Emission::ToolCall => "calls of other tools",
            Emission::Result => "results",
        }
    }
}

/// Log and progress messages per call; more are dropped.
pub(crate) const MAX_EVENTS_PER_CALL: usize = 10_000;
/// `resource-updated` announcements per call; more are dropped.
pub(crate) const MAX_ANNOUNCEMENTS_PER_CALL: usize = 1_000;
/// Questions to the client per call; more are refused (the guest gets an error).
pub(crate) const MAX_CLIENT_REQUESTS_PER_CALL: usize = 64;
/// Calls of other served tools per call (`host.call-tool`); more are refused (the guest gets
/// an error). A whole request's tree of calls has its own bound (`mcp/call/compose.rs`).
pub(crate) const MAX_TOOL_CALLS_PER_CALL: usize = 32;
/// `save-state` calls per call; more are refused (the guest gets an error).
pub(crate) const MAX_STATE_SAVES_PER_CALL: usize = 64;
/// The largest state a call may keep for its next round (`save-state`), in bytes.
pub(crate) const MAX_SAVED_STATE_BYTES: usize = 64 * 1024;
/// What any emission costs beyond its JSON: the JSON-RPC envelope of a notification or
/// request, the `type` tag of a block. Also what makes a flood of empty ones count.
pub(crate) const ENVELOPE: usize = 64;

/// Why an emission was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The call's output limit is spent: the call ends with the output-limit error.
    OverLimit,
    /// The cap on this kind is reached: this one is dropped (or refused to the guest).
    TooMany(Emission),
}

/// Everything one call emits, against its output limit.
#[derive(Debug)]
pub(crate) struct CallBudget {
    limit: usize,
    used: usize,
    counts: [usize; KINDS],
    warned: [bool; KINDS],
}

impl CallBudget {
    /// A budget of `limit` bytes on the wire.
    pub(crate) fn new(limit: usize) -> CallBudget {
        CallBudget { limit, used: 0, counts: [0; KINDS], warned: [false; KINDS] }
    }

    /// Charges `bytes` of JSON (plus the [`ENVELOPE`]) for one emission of `kind`. Bytes are
    /// charged even when refused, so that a call that keeps trying ends over its limit.
    pub(crate) fn charge(&mut self, kind: Emission, bytes: usize) -> Result<(), Refusal> {
        let bytes = if crate::switched_off!("output.every-byte-charged") { 0 } else { bytes };
        self.used = self.used.saturating_add(bytes).saturating_add(ENVELOPE);
        let count = &mut self.counts[kind.index()];
        *count += 1;
        if self.used > self.limit {
            return Err(Refusal::OverLimit);
        }
        if *count > kind.cap() {
            return Err(Refusal::TooMany(kind));
        }
        Ok(())
    }

    /// Charges `bytes` the call took in from another tool's result (`host.call-tool`), beyond
    /// the call itself: false once the output limit is spent.
    pub(crate) fn take_in(&mut self, bytes: usize) -> bool {
        let bytes = if crate::switched_off!("output.every-byte-charged") { 0 } else { bytes };
        self.used = self.used.saturating_add(bytes);
        self.used <= self.limit
    }

    /// What is left of the output limit, in bytes.
    pub(crate) fn left(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }

    /// Whether this is the first refusal of `kind` for being too many (to warn once a call).
    pub(crate) fn first_too_many(&mut self, kind: Emission) -> bool {
        !std::mem::replace(&mut self.warned[kind.index()], true)
    }

    /// Bytes charged so far.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    /// Whether the output limit is spent.
    pub(crate) fn exhausted(&self) -> bool {
        self.used > self.limit
    }

    /// The output limit.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}

/// What the results of all calls held at once may take, in bytes on the wire: with the
/// default output limit (16 MiB) that is 64 maximal results at once.
pub(crate) const SHARED_OUTPUT_BYTES: usize = 1 << 30;

/// A result's share of [`SHARED_OUTPUT_BYTES`], returned when dropped.
#[derive(Debug)]
pub(crate) struct SharedCharge(#[expect(dead_code, reason = "held for its Drop")] Option<OwnedSemaphorePermit>);

/// Takes `bytes` of the shared budget for a result, or `None` if it is spent.
pub(crate) fn take_shared(bytes: usize) -> Option<SharedCharge> {
    // The budget all calls' results share, in KiB (a semaphore's permits).
    static SHARED: OnceLock<Arc<Semaphore>> = OnceLock::new();
    let semaphore = SHARED.get_or_init(|| Arc::new(Semaphore::new(SHARED_OUTPUT_BYTES >> 10)));
    let kib = u32::try_from(bytes.div_ceil(1024)).ok()?;
    if kib == 0 || crate::switched_off!("output.shared-budget") {
        return Some(SharedCharge(None));
    }
    semaphore.clone().try_acquire_many_owned(kib).ok().map(|permit| SharedCharge(Some(permit)))
}

/// Where a request keeps the shares of the results its calls returned, until it has turned
/// them into its answer (set by the protocol layer in the call's scope; without one, a share
/// is returned as soon as the call returns).
#[derive(Debug, Clone, Default)]
pub struct OutputHold(Arc<Mutex<Vec<SharedCharge>>>);

impl OutputHold {
    pub(crate) fn keep(&self, charge: SharedCharge) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(charge);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::engine::bindings::{tools, types};

    #[test]
    fn wire_length_is_the_json_length_with_bytes_as_base64() {
        for value in
            [serde_json::json!("a\"\n\u{1}"), serde_json::json!({"k": [1, 2.5, null, "x"]}), serde_json::json!([])]
        {
            assert_eq!(wire_len(&value), value.to_string().len(), "{value}");
        }
        let bytes: Vec<u8> = vec![0; 300];
        assert_eq!(wire_len(&bytes), 2 + 400);
        let image = types::ContentBlock::Image(types::MediaContent {
            data: vec![7; 3_000],
            mime_type: "image/png".into(),
            annotations: None,
        });
        let result = tools::CallResult { content: vec![image], structured_content: None, is_error: false };
        let len = wire_len(&result);
        assert!((4_000..4_200).contains(&len), "{len}");
    }

    #[test]
    fn the_shared_budget_refuses_past_its_size_and_returns_what_is_dropped() {
        // (The only test in this process that takes shares: no plugin runs in unit tests.)
        let most = take_shared(SHARED_OUTPUT_BYTES - (1 << 20)).expect("the whole budget is free");
        let held = OutputHold::default();
        held.keep(take_shared(1 << 20).expect("the last MiB is free"));
        assert!(take_shared(1).is_none(), "a spent budget refuses");
        drop(held);
        assert!(take_shared(1 << 20).is_some(), "a dropped hold returns its share");
        drop(most);
        assert!(take_shared(SHARED_OUTPUT_BYTES).is_some());
    }

    #[test]
    fn caps_and_limit() {
        let mut budget = CallBudget::new(1_000);
        assert_eq!(budget.charge(Emission::Event, 100), Ok(()));
        assert_eq!(budget.used(), 100 + ENVELOPE);
        assert_eq!(budget.charge(Emission::Event, 1_000), Err(Refusal::OverLimit));
        assert!(budget.exhausted());
        let mut budget = CallBudget::new(usize::MAX);
        for _ in 0..MAX_CLIENT_REQUESTS_PER_CALL {
            assert_eq!(budget.charge(Emission::ClientRequest, 0), Ok(()));
        }
        assert_eq!(budget.charge(Emission::ClientRequest, 0), Err(Refusal::TooMany(Emission::ClientRequest)));
        assert!(budget.first_too_many(Emission::ClientRequest));
        assert!(!budget.first_too_many(Emission::ClientRequest));
    }
}
