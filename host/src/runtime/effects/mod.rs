//! The effects a guest has on the world beyond its sandbox, each at the one door it passes:
//! outgoing HTTP (`network`: every request and redirect hop checked against the plugin's
//! allow-list, then every address its host resolves to against `special_purpose`, the IANA
//! registries of addresses that are not public; `credentials` set on requests to their origins
//! there, and `redaction` masking their reflections in responses); files (`filesystem`: every
//! `wasi:filesystem` call seen, the streams a descriptor hands out wrapped in `streams`, with
//! `file_door` its per-call state and `quota` the write budgets). What passes each door is
//! written into the call's `record` when someone keeps one (the audit). This room applies grants it
//! is handed and reports what it refused through the call's log it is handed; it knows no
//! sandbox, plugin or catalog.

mod credentials;
pub(crate) mod file_door;
pub(crate) mod filesystem;
pub(crate) mod network;
pub(crate) mod quota;
pub(crate) mod record;
mod redaction;
pub(crate) mod special_purpose;
mod streams;
