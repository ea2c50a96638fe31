//! One call, one sandbox: a fresh `Store` and WASI context per call, built from the call's
//! grants, with a deadline, a memory limit, captured output and cancellation.
//!
//! - `scope`: what the protocol layer hands a call (grants, cancellation, event and question
//!   channels), as runtime types;
//! - `state`: the store's data behind wasmtime's view traits, and the per-call counters;
//! - `host_api`: the `mcpbox:plugin/host` imports a guest calls;
//! - `store`: building the store (deny-by-default WASI, limiter, epoch callback), and arming
//!   one made ahead for the call that takes it;
//! - `prepared`: instances made ahead of calls, each used by one call only;
//! - `error`: [`CallError`] and the classification of a failed call;
//! - `call`: running one call from start to result;
//! - `linker`: the host imports a guest may link, per its policy;
//! - `budget`: the one budget everything a call emits is charged to;
//! - `guest_io`: its stdout and stderr, and every log line it causes on the host.

pub(crate) mod budget;
mod call;
mod error;
pub(crate) mod guest_io;
mod host_api;
pub(crate) mod linker;
pub(crate) mod prepared;
mod scope;
mod state;
mod store;

pub(crate) use call::{CallFuture, run_call};
pub use error::CallError;
pub(crate) use prepared::Prepared;
pub use scope::{
    BoxFuture, CallScope, CallableTool, Caller, ClientError, ClientMethod, ClientRequests, GuestEvent, InnerCallError,
    MetaSink, Question, ToolCalls, Within,
};
pub use state::HostState;
