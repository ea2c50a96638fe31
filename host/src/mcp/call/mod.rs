//! A call of a tool, from the protocol layer's side: the steps every call takes before its
//! plugin starts, written once for the calls a client makes (`running.rs`), the inner calls of
//! a composing tool (`compose.rs`) and the calls that go on as tasks (`running.rs` hands one to
//! `tasks/call.rs` only after the same steps); and the one outcome of a step that stops a call.
//!
//! - `steps`: the steps in their order (known, admitted, linked, approved), [`Caller`] (who
//!   calls), [`Stop`] (what a call answers instead of running) and `Ready` (what a call they
//!   let through holds until it ran);
//! - `outcome`: what a call that ran answers, at once or stored in its task.
//!
//! The rule of this room: a check that must hold before a plugin starts is a step here, and
//! nowhere else; the callers only word a [`Stop`] for their own kind of answer.

mod outcome;
mod steps;

pub(crate) use outcome::call_outcome;
pub(crate) use steps::{Caller, Stop};
