//! The words every room of the protocol layer speaks, decided once: what differs between the
//! eras, plugin values as MCP types, failures as MCP outcomes, cursors.
//!
//! - `era`: everything that differs between the eras for one request (roots, questions, log
//!   level, caching hints, content dialect);
//! - `convert`: plugin (WIT) values to MCP wire values, checked by rmcp's types;
//! - `errors`: the only place a failed call becomes a JSON-RPC error or an `isError` result;
//! - `paging`: stateless cursors (MCP `server/utilities/pagination`).
//!
//! The rule of this room: it knows no session, request or call, only values; every other room
//! may use it, and it uses none of them.

pub(crate) mod convert;
pub(crate) mod era;
pub(crate) mod errors;
pub(crate) mod paging;
