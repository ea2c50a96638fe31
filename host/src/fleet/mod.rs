//! Replicas sharing what must be shared (issue 20): one Redis that every replica of a fleet
//! talks to, behind the runtime's traits. In-memory stays the default for one process; with
//! `[store] redis` (or `--store`) a replica keeps its tasks there (`tasks.rs`), fans resource
//! updates and list changes out to every replica's listeners (`changes.rs`), and says it is
//! alive (a presence key that expires with its lease, so nothing of a dead replica outlives
//! it). What is *not* in the store: the keys that seal `requestState` (the operator gives
//! every replica the same file), legacy sessions (they stay on their replica), the
//! per-principal limits (counted per replica: docs/fleet.md has the arithmetic).
//!
//! Keys, all under the operator's prefix (`mcpbox` unless configured):
//! `P:task:ID` (a hash: `rev`, `doc`; expires with the task), `P:tasks` and `P:tasks:PRINCIPAL`
//! (sorted sets of task ids by expiry: the count limits), `P:out` (a hash of each task's kept
//! output: the output limits), `P:leases` (running tasks by the end of their owner's lease:
//! the orphans to settle), `P:replica:OWNER` (presence), `P:catalog` (the catalog last
//! announced), `P:vault:...` (the token vault's sealed records: links opened once, each
//! principal's linked accounts); channels `P:changes` and `P:inbox:OWNER`.
//!
//! - `tasks`: the [`TaskStore`](crate::runtime::tasks::TaskStore) in Redis;
//! - `replica`: this replica's connection, presence and key names;
//! - `connect`: joining the fleet and dispatching what arrives;
//! - `changes`: list changes and resource updates between replicas;
//! - `vault`: the token vault's sealed records.

mod changes;
mod connect;
mod replica;
mod tasks;
mod vault;

pub use replica::{Fleet, StoreOptions};
pub(crate) use tasks::RedisTasks;
pub(crate) use vault::vault_delete_all;
