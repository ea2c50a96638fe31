//! All loaded plugins as one server: prefixed names, collision checks, deterministic lists,
//! and routing of calls to the plugin that serves them. This is the runtime's API for the
//! protocol layer, and it knows nothing of MCP's wire types.
//!
//! - `assembled`: [`Catalog`], the plugins' names prefixed, settled and listed in order;
//!   `entry`: what it holds per name, and what it reports of a plugin that did not load;
//! - [`discover`](discover()): which files are plugins;
//! - `loader`: compiling and loading them in parallel under their configs;
//! - `dispatch`: the calls (`call_tool`, `read_resource`, ...), routed by name or URI;
//! - `ownership`: which plugin owns a resource URI (reads and update announcements);
//! - `contests`: what two plugins claim (a name, URIs), served by neither unless the operator
//!   gives it to one, so that nothing depends on the order plugins load in;
//! - `pins`: what each plugin's definitions say, pinned; a changed one withheld until accepted
//!   and shown as a diff (`diff`);
//! - `live` and `reload`: the catalog being served, swapped on hot reload.

mod assembled;
mod contests;
mod diff;
mod discover;
mod dispatch;
mod entry;
pub(crate) mod live;
mod loader;
mod ownership;
mod pins;
pub(crate) mod reload;

pub use assembled::Catalog;
pub use discover::discover;
pub(crate) use discover::is_plugin_file;
pub use dispatch::CompletionTarget;
pub use entry::{Entry, LoadProblem};
pub(crate) use loader::{load_files, load_one};
pub use ownership::OwnedUris;
pub use pins::{DefinitionKind, FirstUse, PinSettings, Pins};
