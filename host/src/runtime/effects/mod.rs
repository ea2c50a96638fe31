//! The effects a guest has on the world beyond its sandbox, each at the one door it passes:
//! outgoing HTTP (`network`: every request and redirect hop checked against the plugin's
//! allow-list, then every address its host resolves to against `special_purpose`, the IANA
//! registries of addresses that are not public; `credentials` set on requests to their origins
//! there, and `redaction` masking their reflections in responses). Files come next. This room applies grants it
//! is handed and reports what it refused through the call's log it is handed; it knows no
//! sandbox, plugin or catalog.

mod credentials;
pub(crate) mod network;
mod redaction;
pub(crate) mod special_purpose;
