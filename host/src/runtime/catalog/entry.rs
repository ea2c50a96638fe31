//! What the catalog holds per name, and what it reports of a plugin that did not load.

use std::path::PathBuf;

/// A plugin that failed to load, and why.
#[derive(Debug)]
pub struct LoadProblem {
    /// The file (or directory) concerned.
    pub path: PathBuf,
    /// Why, naming the plugin where it is known.
    pub error: anyhow::Error,
}

/// A name the catalog serves, and where it lives.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<T> {
    /// The name clients see (prefix included).
    pub name: String,
    /// Index of the plugin in [`Catalog::plugins`](super::Catalog::plugins).
    pub plugin: usize,
    /// What the plugin says about it.
    pub item: T,
}
