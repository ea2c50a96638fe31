//! The subscriber every log line and span goes through: text or JSON lines on stderr (stdout
//! is the stdio transport's), filtered by `MCPBOX_LOG`, and, with an OTLP endpoint, spans sent
//! as OpenTelemetry traces.

use anyhow::Result;
use tracing::{Level, Metadata};
use tracing_subscriber::filter::{FilterExt, LevelFilter, filter_fn};
use tracing_subscriber::layer::Filter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use super::trace;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of text each, for people.
    #[default]
    Text,
    /// One JSON object each, with the fields of the request's span (request, tool, plugin,
    /// principal, outcome, duration), for log pipelines. Adds a line per finished request.
    Json,
}

/// What `init` started; `shutdown` sends the spans still buffered.
pub struct Telemetry {
    traces: Option<trace::Exporting>,
}

impl Telemetry {
    /// Sends what is buffered and stops exporting (call outside the async runtime: the
    /// exporter blocks).
    pub fn shutdown(self) {
        if let Some(traces) = self.traces {
            traces.shutdown();
        }
    }
}

/// The default filter: mcpbox at info, rmcp's chatter at warn; the line per finished request
/// (target `mcpbox::request`) only in JSON, where a pipeline wants it.
fn default_filter(format: LogFormat) -> EnvFilter {
    let requests = if format == LogFormat::Json { "info" } else { "off" };
    EnvFilter::new(format!("info,rmcp=warn,mcpbox::request={requests}"))
}

/// Whether a line may be written whatever `MCPBOX_LOG` asks: mcpbox's own at every level (none
/// carries a call's arguments or results, a token or a key), the libraries' at info and above
/// only. Below that they write whole messages and frames: rmcp each request and response
/// (arguments, results), tungstenite each WebSocket frame, reqwest what it reads (tokens from
/// authorization servers, registry credentials). `docs/deploy.md` states the promise.
fn free_of_payloads(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("mcpbox")
        || *metadata.level() <= Level::INFO
        || crate::switched_off!("telemetry.payload-free-logs")
}

/// The lines' filter: what `levels` (`MCPBOX_LOG`) lets through, and of that only what is free
/// of payloads. The payload filter's hint (TRACE) leaves the combined hint the level filter's:
/// without a hint the `log` crate's maximum level would be TRACE, and every `log::trace!` of
/// Cranelift's (thousands per function compiled) would reach the subscriber to be refused
/// there; compiling a Python plugin took 8 times as long.
fn line_filter(levels: EnvFilter) -> impl Filter<Registry> + Send + Sync {
    levels.and(filter_fn(free_of_payloads).with_max_level_hint(LevelFilter::TRACE))
}

/// Installs the process's subscriber: `format` lines on stderr, and spans over OTLP/HTTP to
/// `otlp_endpoint` when one is given (the collector's base URL; `/v1/traces` is added).
pub fn init(format: LogFormat, otlp_endpoint: Option<&str>) -> Result<Telemetry> {
    // The log level filters the lines only: spans go to the exporter whatever it says.
    let filter = line_filter(EnvFilter::try_from_env("MCPBOX_LOG").unwrap_or_else(|_| default_filter(format)));
    let lines: Box<dyn Layer<Registry> + Send + Sync> = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false).boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_current_span(true)
            .with_span_list(false)
            .flatten_event(true)
            .boxed(),
    };
    let (traces, otel) = match otlp_endpoint {
        Some(endpoint) => {
            let (exporting, layer) = trace::exporting(endpoint)?;
            (Some(exporting), Some(layer))
        }
        None => (None, None),
    };
    tracing_subscriber::registry().with(lines.with_filter(filter)).with(otel).try_init()?;
    Ok(Telemetry { traces })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_filter_keeps_the_level_filters_hint() {
        // What `log` calls below it cost nothing: they stop at `log::max_level()`.
        assert_eq!(line_filter(default_filter(LogFormat::Text)).max_level_hint(), Some(LevelFilter::INFO));
        assert_eq!(line_filter(EnvFilter::new("warn,mcpbox=debug")).max_level_hint(), Some(LevelFilter::DEBUG));
    }
}
