//! Prometheus metrics (text exposition format 0.0.4): one process-wide registry, counted where
//! things happen, rendered when scraped. Labels are names the operator's catalog decides
//! (plugins, tools), fixed vocabularies (outcomes, transports, task states, refusal reasons),
//! never a value a client sends: a client cannot grow the series.

use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};

/// Call durations from a fast native call (under a millisecond) to the longest time limits.
const DURATION_BUCKETS: &[f64] =
    &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0];

/// Every metric mcpbox exports.
pub(crate) struct Metrics {
    registry: Registry,
    /// Tool calls by plugin, tool and outcome (`ok`, `tool_error`, or the host's failure kind).
    pub(crate) tool_calls: IntCounterVec,
    /// How long tool calls took, by plugin and tool.
    pub(crate) tool_duration: HistogramVec,
    /// The bytes tool results carried (as JSON on the wire), by plugin and tool.
    pub(crate) tool_output_bytes: IntCounterVec,
    /// Guest calls of any kind (tools, resources, prompts, completions) stopped by their
    /// time limit, by plugin.
    pub(crate) timeouts: IntCounterVec,
    /// Guest calls that asked for more memory than their limit, by plugin.
    pub(crate) memory_limit_hits: IntCounterVec,
    /// `memory.grow`s beyond a memory's size at instantiation, by plugin.
    pub(crate) memory_grows: IntCounterVec,
    /// Bytes the pool's unused memory and table slots keep resident for reuse (resident
    /// resets, `runtime/engine/resident.rs`).
    pub(crate) pool_resident_bytes: IntGauge,
    /// Unused memory slots that keep their module's image mapped.
    pub(crate) pool_warm_memories: IntGauge,
    /// Instances running a call now.
    pub(crate) instances_in_use: IntGauge,
    /// How many instances the pool holds at most (0: instances are allocated per call).
    pub(crate) pool_capacity: IntGauge,
    /// Open sessions, by transport.
    pub(crate) sessions: IntGaugeVec,
    /// Open streams (SSE responses and standalone streams, WebSocket connections), by transport.
    pub(crate) streams: IntGaugeVec,
    /// Requests received, by transport.
    pub(crate) requests: IntCounterVec,
    /// Tasks that entered each state (`working`, `input_required`, `completed`, `failed`,
    /// `cancelled`).
    pub(crate) tasks: IntCounterVec,
    /// Operations on the fleet's shared store that failed, by operation.
    pub(crate) store_errors: IntCounterVec,
    /// Requests refused to an authenticated principal, by reason (`insufficient_scope`,
    /// `too_many_calls`, `rate`, ...); the principal itself is not a label.
    pub(crate) principal_refusals: IntCounterVec,
    /// Writes refused by a write budget (`runtime/effects/quota.rs`), by plugin and budget.
    pub(crate) write_refusals: IntCounterVec,
    /// Audit lines that could not be written (`audit/`), by what was then done.
    pub(crate) audit_failures: IntCounterVec,
    /// Run before each scrape: gauges read from their source (sessions a library keeps).
    samplers: Mutex<Vec<Sampler>>,
}

/// Reads a gauge's value from where it lives, before a scrape.
type Sampler = Box<dyn Fn(&Metrics) + Send + Sync>;

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// The process's metrics.
pub(crate) fn metrics() -> &'static Metrics {
    &METRICS
}

fn counter(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let metric = IntCounterVec::new(Opts::new(name, help), labels).unwrap_or_else(|e| invalid(name, e));
    register(registry, name, Box::new(metric.clone()));
    metric
}

fn gauge_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    let metric = IntGaugeVec::new(Opts::new(name, help), labels).unwrap_or_else(|e| invalid(name, e));
    register(registry, name, Box::new(metric.clone()));
    metric
}

fn gauge(registry: &Registry, name: &str, help: &str) -> IntGauge {
    let metric = IntGauge::new(name, help).unwrap_or_else(|e| invalid(name, e));
    register(registry, name, Box::new(metric.clone()));
    metric
}

fn histogram(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> HistogramVec {
    let options = HistogramOpts::new(name, help).buckets(DURATION_BUCKETS.to_vec());
    let metric = HistogramVec::new(options, labels).unwrap_or_else(|e| invalid(name, e));
    register(registry, name, Box::new(metric.clone()));
    metric
}

fn register(registry: &Registry, name: &str, metric: Box<dyn prometheus::core::Collector>) {
    if let Err(e) = registry.register(metric) {
        invalid(name, e);
    }
}

/// The names and labels above are constants: a unit test builds them all.
#[expect(clippy::panic, reason = "a metric's constant name or labels are wrong: caught by the unit test")]
fn invalid(name: &str, error: prometheus::Error) -> ! {
    panic!("metric {name}: {error}")
}

impl Metrics {
    fn new() -> Metrics {
        let r = Registry::new();
        Metrics {
            tool_calls: counter(
                &r,
                "mcpbox_tool_calls_total",
                "Tool calls, by outcome.",
                &["plugin", "tool", "outcome"],
            ),
            tool_duration: histogram(
                &r,
                "mcpbox_tool_call_duration_seconds",
                "How long tool calls took, from the catalog to the result.",
                &["plugin", "tool"],
            ),
            tool_output_bytes: counter(
                &r,
                "mcpbox_tool_output_bytes_total",
                "Bytes of tool results, as JSON on the wire.",
                &["plugin", "tool"],
            ),
            timeouts: counter(
                &r,
                "mcpbox_guest_timeouts_total",
                "Guest calls stopped by their time limit.",
                &["plugin"],
            ),
            memory_limit_hits: counter(
                &r,
                "mcpbox_guest_memory_limit_hits_total",
                "Guest calls that asked for more memory than their limit.",
                &["plugin"],
            ),
            memory_grows: counter(
                &r,
                "mcpbox_guest_memory_grows_total",
                "memory.grow calls beyond a memory's size at instantiation.",
                &["plugin"],
            ),
            pool_resident_bytes: gauge(
                &r,
                "mcpbox_pool_resident_bytes",
                "Bytes the pool's unused memory and table slots keep resident for reuse.",
            ),
            pool_warm_memories: gauge(
                &r,
                "mcpbox_pool_warm_memories",
                "Unused memory slots that keep their module's image mapped.",
            ),
            instances_in_use: gauge(&r, "mcpbox_instances_in_use", "Instances running a call now."),
            pool_capacity: gauge(
                &r,
                "mcpbox_instance_pool_capacity",
                "Instances the pooling allocator holds at most (0: allocated per call).",
            ),
            sessions: gauge_vec(&r, "mcpbox_sessions", "Open sessions.", &["transport"]),
            streams: gauge_vec(&r, "mcpbox_streams", "Open streams (SSE, WebSocket connections).", &["transport"]),
            requests: counter(&r, "mcpbox_requests_total", "Requests received.", &["transport"]),
            tasks: counter(&r, "mcpbox_tasks_total", "Tasks that entered each state.", &["state"]),
            store_errors: counter(
                &r,
                "mcpbox_store_errors_total",
                "Operations on the shared store that failed.",
                &["operation"],
            ),
            principal_refusals: counter(
                &r,
                "mcpbox_principal_refusals_total",
                "Requests refused to an authenticated principal.",
                &["reason"],
            ),
            write_refusals: counter(
                &r,
                "mcpbox_write_refusals_total",
                "Writes into granted directories refused by a write budget.",
                &["plugin", "budget"],
            ),
            audit_failures: counter(
                &r,
                "mcpbox_audit_failures_total",
                "Audit lines that could not be written, by what happened to the call.",
                &["policy"],
            ),
            registry: r,
            samplers: Mutex::default(),
        }
    }

    /// Runs `sample` before every scrape (for a gauge whose truth lives elsewhere).
    pub(crate) fn sample_with(&self, sample: impl Fn(&Metrics) + Send + Sync + 'static) {
        self.samplers.lock().unwrap_or_else(PoisonError::into_inner).push(Box::new(sample));
    }

    /// One tool call that ended with `outcome` after `took`, its result `output_bytes` long.
    pub(crate) fn tool_call(&self, plugin: &str, tool: &str, outcome: &str, took: Duration, output_bytes: usize) {
        self.tool_calls.with_label_values(&[plugin, tool, outcome]).inc();
        self.tool_duration.with_label_values(&[plugin, tool]).observe(took.as_secs_f64());
        if output_bytes > 0 {
            self.tool_output_bytes.with_label_values(&[plugin, tool]).inc_by(output_bytes as u64);
        }
    }

    /// Everything, in the text exposition format.
    pub(crate) fn render(&self) -> String {
        for sample in self.samplers.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            sample(self);
        }
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!("metrics could not be rendered: {e}");
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Something open (a session, a stream, an instance running a call), counted until dropped.
pub(crate) struct Open(IntGauge);

impl Open {
    /// Counts one more open in `gauge` until the returned value is dropped.
    pub(crate) fn count(gauge: &IntGaugeVec, transport: &str) -> Open {
        Open::gauge(&gauge.with_label_values(&[transport]))
    }

    /// Counts one more in `gauge` until the returned value is dropped.
    pub(crate) fn gauge(gauge: &IntGauge) -> Open {
        gauge.inc();
        Open(gauge.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Serves `/metrics` (and nothing else) on `listener` until the process ends. Its own listener,
/// not the MCP one: no bearer token to scrape with, and nothing of it reachable from the MCP
/// port unless the operator binds both to the same interfaces.
pub(crate) async fn serve(listener: tokio::net::TcpListener) {
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(|| async {
            ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], metrics().render())
        }),
    );
    if let Err(e) = axum::serve(listener, app).await {
        tracing::error!("the metrics listener stopped: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_is_valid_and_rendered() {
        let metrics = Metrics::new();
        metrics.tool_call("p", "t", "ok", Duration::from_millis(3), 10);
        metrics.timeouts.with_label_values(&["p"]).inc();
        let _open = Open::count(&metrics.sessions, "stdio");
        let text = metrics.render();
        assert!(text.contains("mcpbox_tool_calls_total{outcome=\"ok\",plugin=\"p\",tool=\"t\"} 1"), "{text}");
        assert!(text.contains("mcpbox_sessions{transport=\"stdio\"} 1"), "{text}");
        assert!(
            text.contains("mcpbox_tool_call_duration_seconds_bucket{plugin=\"p\",tool=\"t\",le=\"0.005\"} 1"),
            "{text}"
        );
    }
}
