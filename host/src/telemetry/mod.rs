//! What operators watch a running mcpbox by, apart from the MCP it serves:
//!
//! - `metrics`: Prometheus metrics, counted where things happen (the runtime, the transports,
//!   the fleet) and served at `/metrics` on a listener of their own (`--metrics`);
//! - `trace`: OpenTelemetry spans sent over OTLP (`--otlp-endpoint`), following the MCP
//!   semantic conventions, with the trace context a request's `_meta` carries;
//! - `logs`: the subscriber every log line goes through, as text or JSON (`--log-format`), with
//!   the fields of the request's span;
//! - `outcome`: how the request being served ended, as the runtime counted it, for its span.
//!
//! A leaf: it names no other layer of the crate (`layering.rs`), so that every layer may use it.

mod logs;
pub(crate) mod metrics;
pub(crate) mod outcome;
pub(crate) mod trace;

pub use logs::{LogFormat, init};
