//! OpenTelemetry traces over OTLP/HTTP (protobuf), following the MCP semantic conventions
//! (OpenTelemetry semantic conventions, "MCP": a server span per request named
//! `{mcp.method.name} {target}`, trace context in the request's `params._meta` as
//! `traceparent`/`tracestate`). Spans are `tracing` spans; `tracing-opentelemetry` turns them
//! into OpenTelemetry's, which a batch processor sends from a thread of its own. Off unless an
//! endpoint is configured: then no layer exists and `set_parent` returns at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, Result};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer as _;

/// Whether spans are exported: when not, no trace context is even parsed.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// The exporting provider, shut down (flushed) when the process ends.
pub(super) struct Exporting(SdkTracerProvider);

impl Exporting {
    pub(super) fn shutdown(self) {
        if let Err(e) = self.0.shutdown() {
            eprintln!("mcpbox: the last spans could not be sent: {e}");
        }
    }
}

/// The span layer for the subscriber, sending to the collector at `endpoint`.
pub(super) fn exporting<S>(endpoint: &str) -> Result<(Exporting, impl tracing_subscriber::Layer<S>)>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let base = endpoint.trim_end_matches('/');
    let url = if base.ends_with("/v1/traces") { base.to_owned() } else { format!("{base}/v1/traces") };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        anyhow::bail!("--otlp-endpoint must be an http:// or https:// URL, not `{endpoint}`");
    }
    // reqwest is built without a TLS provider of its own: the host's, ring, for https:// collectors.
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url)
        .build()
        .with_context(|| format!("cannot send traces to {endpoint}"))?;
    let resource = Resource::builder()
        .with_service_name("mcpbox")
        .with_attribute(opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build();
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
    // mcpbox's own spans only (the request and the guest call), not those of its libraries.
    let ours = tracing_subscriber::filter::Targets::new().with_target("mcpbox", tracing::Level::INFO);
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("mcpbox"))
        .with_tracked_inactivity(false)
        .with_location(false)
        .with_threads(false)
        .with_filter(ours);
    ENABLED.store(true, Ordering::Relaxed);
    Ok((Exporting(provider), layer))
}

/// Makes `span` a child of the span the client's `traceparent` (and `tracestate`) names, when
/// spans are exported and the client sent one (W3C Trace Context, as the MCP conventions put it
/// in `params._meta`).
pub(crate) fn set_parent(span: &tracing::Span, traceparent: Option<&str>, tracestate: Option<&str>) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let Some(traceparent) = traceparent else { return };
    let mut carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    if let Some(tracestate) = tracestate {
        carrier.insert("tracestate".to_owned(), tracestate.to_owned());
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    // A traceparent that does not parse leaves the span a root of its own.
    let _ = span.set_parent(context);
}
