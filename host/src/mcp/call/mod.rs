//! A request that runs a plugin (`tools/call`, `resources/read`, `prompts/get`), from the
//! protocol layer's side: its span and audit line, the steps every call of a tool takes before
//! its plugin starts, written once for the calls a client makes, the inner calls of a composing
//! tool and the calls that go on as tasks, the scope it runs in, and its answer.
//!
//! - `request`: [`Call`](request::Call), the request as every step after the handler takes it
//!   (made once by `Call::begin`);
//! - `observe`: the span per request (OpenTelemetry's MCP conventions); `audited`: each call's
//!   audit line and the record of its effects;
//! - `running`: the requests as their steps (`run_tool`, `run_read`, `run_prompt`);
//! - `steps`: the steps in their order (known, admitted, linked, approved), [`Caller`] (who
//!   calls), [`Stop`] (what a call answers instead of running) and `Ready` (what a call they
//!   let through holds until it ran), taken from the checks of `checks`;
//! - `scope`: the scope a call runs in (its directories, where its guest's questions go, its
//!   events), with the rounds of `rounds`; `events`: its guest's log and progress forwarded;
//! - `compose`: tools that call tools (WIT 0.1.4 `host.call-tool`), each inner call through the
//!   same steps; `tasks`: calls that go on as tasks, and `tasks/get`, `tasks/update`,
//!   `tasks/cancel`;
//! - `apps`: what an MCP App's read must hold before it reaches the client;
//! - `outcome`: what a call that ran answers, at once or stored in its task.
//!
//! The rule of this room: a check that must hold before a plugin starts is a step here, and
//! nowhere else; the callers (a client's request, a composer's code, a task) only word a
//! [`Stop`] for their own kind of answer.

mod apps;
pub(crate) mod audited;
pub(crate) mod checks;
pub(crate) mod compose;
mod events;
pub(crate) mod observe;
mod outcome;
pub(crate) mod request;
pub(crate) mod rounds;
mod running;
pub(crate) mod scope;
mod steps;
pub(crate) mod tasks;

pub(crate) use outcome::call_outcome;
pub(crate) use steps::{Caller, Stop};
