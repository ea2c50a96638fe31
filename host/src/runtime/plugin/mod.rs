//! The plugin as loaded: a component compiled, linked under its policy and read for what it
//! offers (`load`, its descriptors bounded and checked in `descriptors`, plain components'
//! functions in `plain`, which of our interfaces it exports in `exports`, what it says beyond
//! its descriptors checked in `metadata`), held as a [`Plugin`] (`loaded`), and entered
//! through the one generic way into its exports (`invoke`). It runs calls in the sandbox room and knows nothing of the
//! catalog its plugin sits in.

pub(crate) mod descriptors;
mod exports;
pub(crate) mod invoke;
pub(crate) mod load;
mod loaded;
pub(crate) mod metadata;
pub(crate) mod plain;

pub use exports::Exports;
pub(crate) use loaded::OutputCheck;
pub use loaded::{Plugin, ToolInfo};
