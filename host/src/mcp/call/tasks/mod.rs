//! The tasks extension (`io.modelcontextprotocol/tasks`, extensions/tasks/specification/
//! draft/tasks.md) for 2026-07-28 requests: `tasks/get`, `tasks/update` and `tasks/cancel`
//! over the runtime's [`TaskStore`], and tool calls that go on as tasks.
//!
//! - `wire`: a stored task in the extension's shapes (`Task`, `DetailedTask`);
//! - `call`: a `tools/call` that may become a task;
//! - `requests`: [`Tasks`], the store and owner, and `tasks/get`, `tasks/update`, `tasks/cancel`;
//! - `shared`: what a task-capable call, its client and its request share;
//! - `client`: what its guest asks through, before and after it becomes one.
//!
//! Legacy sessions (up to 2025-11-25) get no tasks: the extension is not defined there, and
//! the experimental tasks of 2025-11-25 are not offered (its `task` parameter is ignored, its
//! `tasks/result` and `tasks/list` are unknown methods). A tool the operator requires to run
//! as a task is refused to them with MissingRequiredClientCapability.
//!
//! The rule of this room: a task is a call that took the same steps first (`call/steps.rs`,
//! through `call/running.rs`); nothing here checks a caller again or lets one through.

mod call;
mod client;
mod requests;
mod shared;
mod wire;

pub(crate) use call::task_for;
pub(crate) use requests::Tasks;
