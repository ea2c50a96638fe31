//! The audit: one JSON line per call (`tools/call`, `prompts/get`, `resources/read`), written
//! and flushed before the response goes out, saying who called what with which grants, and
//! everything the call did beyond its sandbox (`runtime/effects/record.rs`). Lines form a hash
//! chain (each carries the SHA-256 of the line before it, across restarts and rotated files),
//! checkpointed with an ECDSA signature when the operator gives a key, so that `mcpbox audit
//! verify` finds the first line altered, removed or reordered.
//!
//! - `settings.rs`: what the operator chose (`--audit`, `[audit]`), as values;
//! - `chain.rs`: hashes, the checkpoint's signed text, and reading a chain back (`verify`);
//! - `sink.rs`: the writer thread: the file (0600, appended, rotated by size), the chain's
//!   state, checkpoints, `fsync`, and what happens when the disk fails (fail closed or open);
//! - `otlp.rs`: the second sink, each written line as an OTLP log record.
//!
//! The protocol layer builds each call's record (`mcp/call/audited.rs`); this layer knows no rmcp.

mod chain;
mod otlp;
mod settings;
mod sink;

pub(crate) use chain::verify;
pub(crate) use settings::{Arguments, AuditSettings, FULL_ARGUMENTS_MAX, Fsync, OnFailure};
pub(crate) use sink::AuditSink;

#[cfg(test)]
mod tests;
