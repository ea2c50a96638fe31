//! The checks a call passes before its plugin starts, each one step of `call/steps.rs`:
//!
//! - `admission`: may this principal use this tool, prompt or resource now (entitlement, then
//!   limits; `access/`), and the lists filtered to what it may use;
//! - `link`: the caller's account at a third party, linked first when the plugin sends each
//!   caller's own token;
//! - `approval`: the person's yes before a call of a tool the operator marked, its arguments
//!   shown by `shown_arguments` (what the call may touch first and whole), what was allowed
//!   remembered by `approved`.
//!
//! The rule of this room: a check answers whether a call may go on, or the [`Stop`] that
//! answers instead; it runs nothing, and it is taken only through the steps (or, for the lists
//! and the HTTP precheck, `admission`'s filter and verdicts).
//!
//! [`Stop`]: crate::mcp::call::Stop

pub(crate) mod admission;
mod approval;
pub(crate) mod approved;
mod link;
mod shown_arguments;
