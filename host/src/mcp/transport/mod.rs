//! The transports (MCP `basic/transports`): each turns bytes on a connection into rmcp
//! messages for a [`Session`](super::Session) and back, with the transport's own rules for bad
//! input.

pub mod http;
pub mod stdio;
