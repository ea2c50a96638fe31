//! The audit's second sink: every line, once written and chained in the file, sent as an OTLP
//! log record (OTLP/HTTP protobuf, batched on a thread of the exporter's own), so that a copy
//! leaves the machine as it happens: lines already sent cannot be cut from the file unnoticed.
//! The record's body is the line itself (what `verify` hashes); its attributes repeat what a
//! collector filters on:
//!
//! | attribute | from the line |
//! |---|---|
//! | event name `mcpbox.audit` | every record |
//! | `mcpbox.audit.seq`, `mcpbox.audit.kind`, `mcpbox.audit.prev` | `seq`, `kind`, `prev` |
//! | `mcpbox.audit.hash` | the SHA-256 of the line: the next line's `prev` |
//! | `mcp.method.name`, `gen_ai.tool.name` (tools), `mcpbox.plugin` | `method`, `target`, `plugin` |
//! | `enduser.id` | `principal.subject` |
//! | `mcpbox.outcome` | `outcome` |
//! | resource `service.name` = `mcpbox`, `service.instance.id` | the replica |

use anyhow::{Context, Result};
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};
use serde_json::{Map, Value};

/// The exporting logger.
pub(crate) struct OtlpAudit {
    provider: SdkLoggerProvider,
    logger: SdkLogger,
}

impl OtlpAudit {
    /// Sends to the collector at `endpoint` (its base URL, or the full `/v1/logs` URL) as
    /// replica `replica`.
    pub(crate) fn new(endpoint: &str, replica: &str) -> Result<OtlpAudit> {
        let base = endpoint.trim_end_matches('/');
        let url = if base.ends_with("/v1/logs") { base.to_owned() } else { format!("{base}/v1/logs") };
        // reqwest is built without a TLS provider of its own: the host's, ring.
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        let exporter = opentelemetry_otlp::LogExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(url)
            .build()
            .with_context(|| format!("cannot send the audit to {endpoint}"))?;
        let resource = Resource::builder()
            .with_service_name("mcpbox")
            .with_attribute(opentelemetry::KeyValue::new("service.instance.id", replica.to_owned()))
            .with_attribute(opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = SdkLoggerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
        let logger = provider.logger("mcpbox.audit");
        Ok(OtlpAudit { provider, logger })
    }

    /// Sends `line` (whose fields are `record`, whose hash is `hash`).
    pub(crate) fn send(&self, line: &[u8], record: &Map<String, Value>, hash: &str) {
        let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut log = self.logger.create_log_record();
        log.set_event_name("mcpbox.audit");
        let kind = text("kind").unwrap_or_default();
        log.set_severity_number(if kind == "outage" { Severity::Warn } else { Severity::Info });
        log.set_body(AnyValue::String(String::from_utf8_lossy(line).into_owned().into()));
        let seq = record.get("seq").and_then(Value::as_i64).unwrap_or_default();
        log.add_attribute("mcpbox.audit.seq", seq);
        log.add_attribute("mcpbox.audit.kind", kind);
        log.add_attribute("mcpbox.audit.hash", hash.to_owned());
        for (key, attribute) in [
            ("prev", "mcpbox.audit.prev"),
            ("method", "mcp.method.name"),
            ("plugin", "mcpbox.plugin"),
            ("outcome", "mcpbox.outcome"),
        ] {
            if let Some(value) = text(key) {
                log.add_attribute(attribute, value);
            }
        }
        if text("method").as_deref() == Some("tools/call")
            && let Some(tool) = text("target")
        {
            log.add_attribute("gen_ai.tool.name", tool);
        }
        if let Some(subject) = record.get("principal").and_then(|p| p.get("subject")).and_then(Value::as_str) {
            log.add_attribute("enduser.id", subject.to_owned());
        }
        self.logger.emit(log);
    }

    /// Sends what is batched.
    pub(crate) fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!("the audit's last records could not be sent over OTLP: {e}");
        }
    }
}
