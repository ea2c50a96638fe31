//! The registry commands and the step of `serve`, `check` and `compile` that turns `oci://`
//! references into plugin files (`registry/` does the work):
//!
//! - `resolve.rs`: resolving a config's references, `mcpbox pull`;
//! - `publish.rs`: `publish`, `sign`, `keygen`;
//! - `add.rs`: `add` (the config and the lock);
//! - `update.rs`: `update` (what changed, before and after);
//! - `watch.rs`: a running server follows the lock (hot reload);
//! - `summary.rs`: what an operator sees of a registry plugin before serving it (its tools,
//!   prompts and grants, as `add` prints them and `update` compares them).

mod add;
mod publish;
mod resolve;
mod summary;
mod update;
mod watch;

pub(crate) use add::{AddRequest, add};
pub(crate) use publish::{keygen, publish, sign};
pub(crate) use resolve::{pull, resolve_into};
pub(crate) use update::update;
pub(crate) use watch::follow_lock;
