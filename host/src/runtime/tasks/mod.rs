//! Durable handles of long calls (the `io.modelcontextprotocol/tasks` extension, whose wire
//! shapes live in `mcp/call/tasks/`): what a task is while it runs and after, and the store that
//! keeps it, behind [`TaskStore`] so that several replicas can share one.
//!
//! The store is designed for replicas from the start: every task has an *owner* (the process
//! running its call) holding a *lease* it renews; the owner alone changes the task's state,
//! while input and cancellation may arrive at any process and are delivered to the owner's
//! inbox. A task whose owner stopped renewing reads as failed. The in-memory store
//! (`memory.rs`) serves one process; the shared one (Redis, `crate::fleet`) implements the same
//! trait for replicas.
//!
//! - `entry`: a task and its owner's inbox, and the rules of how they change (both stores);
//! - `store`: a task's state and record, the limits, and the [`TaskStore`] trait;
//! - `memory`: the in-process store, with its limits and expiry.

mod entry;
mod memory;
mod store;

pub use entry::TaskEntry;
pub use memory::MemoryStore;
pub use store::{
    Inbox, Over, TaskChange, TaskLimits, TaskRecord, TaskSettings, TaskState, TaskStore, TaskStoreError, millis, now_ms,
};
