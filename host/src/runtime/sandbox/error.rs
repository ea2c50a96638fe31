//! Why a call produced no result, and how a failed store is classified into that reason. Each
//! variant names the plugin; the protocol layer maps each to one MCP outcome in one place
//! (`mcp/wire/errors.rs`).

use std::sync::Arc;
use std::time::Duration;

use wasmtime::Store;

use super::state::HostState;
use crate::runtime::grants::limits::Limits;
use crate::runtime::sandbox::guest_io::GuestOutput;

/// Why a call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No tool of that name is served.
    #[error("unknown tool `{name}`")]
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// No prompt of that name is served.
    #[error("unknown prompt `{name}`")]
    UnknownPrompt {
        /// The name asked for.
        name: String,
    },
    /// A completion reference that names no prompt or resource template.
    #[error("completion reference names no prompt or resource template of this server")]
    UnknownCompletionTarget,
    /// No plugin knows the URI.
    #[error("no plugin has a resource at `{uri}`")]
    UnknownResource {
        /// The URI asked for.
        uri: String,
    },
    /// The plugin said it has no such item (its lists and its answers disagree).
    #[error("plugin `{plugin}` has no {what} `{name}`")]
    NotFound {
        /// The plugin.
        plugin: Arc<str>,
        /// `tool` or `prompt`.
        what: &'static str,
        /// The guest's message.
        name: String,
    },
    /// The plugin refused the arguments.
    #[error("plugin `{plugin}` rejected the arguments: {message}")]
    InvalidArguments {
        /// The plugin.
        plugin: Arc<str>,
        /// The guest's message.
        message: String,
    },
    /// The plugin reported a failure.
    #[error("plugin `{plugin}` failed: {message}")]
    Failed {
        /// The plugin.
        plugin: Arc<str>,
        /// The guest's message.
        message: String,
    },
    /// The call ran out of time.
    #[error("plugin `{plugin}` exceeded its time limit of {}", humanize(*limit))]
    Timeout {
        /// The plugin.
        plugin: Arc<str>,
        /// Its time limit.
        limit: Duration,
    },
    /// The guest wanted more memory than its limit.
    #[error("plugin `{plugin}` exceeded its memory limit of {} MiB", limit >> 20)]
    OutOfMemory {
        /// The plugin.
        plugin: Arc<str>,
        /// Its memory limit in bytes.
        limit: usize,
    },
    /// Everything the call emitted (its result, logs, progress, questions to the client and
    /// announcements, as JSON on the wire) was over the output limit.
    #[error("plugin `{plugin}` sent {size} bytes (result, logs, progress, requests and announcements), over its output limit of {}", mib(*limit))]
    OutputTooLarge {
        /// The plugin.
        plugin: Arc<str>,
        /// What it sent, in bytes.
        size: usize,
        /// Its output limit in bytes.
        limit: usize,
    },
    /// The plugin's `max_concurrency` slots stayed taken for the whole time limit.
    #[error("plugin `{plugin}` is at its limit of concurrent calls; no slot freed within {}", humanize(*waited))]
    Busy {
        /// The plugin.
        plugin: Arc<str>,
        /// How long the call waited.
        waited: Duration,
    },
    /// The instance pool is full.
    #[error("plugin `{plugin}` could not start: the host runs its maximum number of instances at once; try again")]
    HostBusy {
        /// The plugin.
        plugin: Arc<str>,
    },
    /// The results of the calls in progress hold all the output mcpbox buffers at once.
    #[error("plugin `{plugin}` returned {size} bytes while the results of other calls hold the {} mcpbox buffers at once; try again", mib(*limit))]
    OutputBusy {
        /// The plugin.
        plugin: Arc<str>,
        /// Its result, in bytes.
        size: usize,
        /// The shared budget, in bytes.
        limit: usize,
    },
    /// The guest trapped.
    #[error("plugin `{plugin}` crashed: {cause}")]
    Crashed {
        /// The plugin.
        plugin: Arc<str>,
        /// The trap, with a Rust panic's message where the guest printed one.
        cause: String,
    },
    /// The client cancelled the call.
    #[error("call to plugin `{plugin}` was cancelled")]
    Cancelled {
        /// The plugin.
        plugin: Arc<str>,
    },
    /// A stateless client must answer a question first (multi round-trip).
    #[error("plugin `{plugin}` needs an answer from the client first")]
    InputRequired {
        /// The plugin.
        plugin: Arc<str>,
    },
    /// A stateless request lacks a capability the plugin's question needs.
    #[error("plugin `{plugin}` needs the client capability `{capability}`, which the request does not declare")]
    MissingCapability {
        /// The plugin.
        plugin: Arc<str>,
        /// `sampling` or `elicitation`.
        capability: &'static str,
    },
    /// The plugin returned something the host cannot serve.
    #[error("plugin `{plugin}` returned invalid {what}: {message}")]
    BadOutput {
        /// The plugin.
        plugin: Arc<str>,
        /// Which part of its output.
        what: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl CallError {
    /// The kind of failure, as metrics and traces name it (`error.type`).
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::UnknownTool { .. } => "unknown_tool",
            CallError::UnknownPrompt { .. } => "unknown_prompt",
            CallError::UnknownCompletionTarget => "unknown_completion_target",
            CallError::UnknownResource { .. } => "unknown_resource",
            CallError::NotFound { .. } => "not_found",
            CallError::InvalidArguments { .. } => "invalid_arguments",
            CallError::Failed { .. } => "failed",
            CallError::Timeout { .. } => "timeout",
            CallError::OutOfMemory { .. } => "memory_limit",
            CallError::OutputTooLarge { .. } => "output_limit",
            CallError::Busy { .. } => "busy",
            CallError::HostBusy { .. } => "host_busy",
            CallError::OutputBusy { .. } => "output_busy",
            CallError::Crashed { .. } => "crashed",
            CallError::Cancelled { .. } => "cancelled",
            CallError::InputRequired { .. } => "input_required",
            CallError::MissingCapability { .. } => "missing_capability",
            CallError::BadOutput { .. } => "bad_output",
        }
    }
}

fn mib(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) { format!("{} MiB", bytes >> 20) } else { format!("{bytes} bytes") }
}

fn humanize(d: Duration) -> String {
    if d.subsec_millis() == 0 { format!("{} s", d.as_secs()) } else { format!("{} ms", d.as_millis()) }
}

/// Why an epoch check or a host import stopped a guest.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Interrupt {
    #[error("deadline reached")]
    Deadline,
    #[error("cancelled")]
    Cancelled,
    #[error("the client must be asked first")]
    InputRequired,
    #[error("the client lacks the capability `{0}`")]
    MissingCapability(&'static str),
    #[error("output limit reached")]
    OutputLimit,
    #[error("{0}")]
    Misuse(String),
}

/// The [`CallError`] for a call of `plugin` that ended in `error` (`None`: cancelled while the
/// guest waited on the host), from what the store recorded and the guest's last stderr.
pub(crate) fn classify(
    plugin: &Arc<str>,
    limits: Limits,
    store: &Store<HostState>,
    error: Option<wasmtime::Error>,
    stderr: &GuestOutput,
) -> CallError {
    let plugin = plugin.clone();
    let Some(error) = error else { return CallError::Cancelled { plugin } };
    if store.data().memory_exceeded() {
        return CallError::OutOfMemory { plugin, limit: limits.memory_bytes };
    }
    match error.downcast_ref::<Interrupt>() {
        Some(Interrupt::Deadline) => return CallError::Timeout { plugin, limit: limits.timeout },
        Some(Interrupt::Cancelled) => return CallError::Cancelled { plugin },
        Some(Interrupt::InputRequired) => return CallError::InputRequired { plugin },
        Some(Interrupt::MissingCapability(capability)) => {
            return CallError::MissingCapability { plugin, capability };
        }
        Some(Interrupt::Misuse(message)) => {
            return CallError::BadOutput { plugin, what: "questions", message: message.clone() };
        }
        Some(Interrupt::OutputLimit) => {
            let size = store.data().budget.used();
            return CallError::OutputTooLarge { plugin, size, limit: limits.output_bytes };
        }
        None => {}
    }
    if error.downcast_ref::<wasmtime::PoolConcurrencyLimitError>().is_some() {
        return CallError::HostBusy { plugin };
    }
    let cause = match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::StackOverflow) => "stack overflow (wasm stack limit reached)".to_owned(),
        Some(trap) => match panic_message(&stderr.tail()) {
            Some(panic) => format!("{panic} ({trap})"),
            None => format!("{trap}"),
        },
        None => format!("{error:#}"),
    };
    CallError::Crashed { plugin, cause }
}

/// The message of a Rust panic, from what the guest printed to stderr.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.rfind("panicked at")?;
    let mut lines = stderr[start..].lines();
    let location = lines.next()?.trim_end_matches(':');
    Some(match lines.next() {
        Some(message) => format!("{location}: {}", message.trim()),
        None => location.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::{CallError, panic_message};

    #[test]
    fn documented_messages() {
        // Too costly to provoke in a test (2,000 calls at once); the text is checked here.
        let troubleshooting = include_str!("../../../../docs/troubleshooting.md");
        let busy = CallError::HostBusy { plugin: "x".into() }.to_string();
        assert!(troubleshooting.contains(&format!("``{busy}``")), "docs/troubleshooting.md should quote `{busy}`");
    }

    #[test]
    fn finds_the_panic_message() {
        let stderr = "noise\nthread '<unnamed>' panicked at src/lib.rs:5:9:\nboom\nnote: run with RUST_BACKTRACE";
        assert_eq!(panic_message(stderr).unwrap(), "panicked at src/lib.rs:5:9: boom");
        assert!(panic_message("all fine").is_none());
    }
}
