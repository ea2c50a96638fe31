//! The `mcpbox:plugin/host` imports: what a guest may ask of the host during a call. Logs and
//! progress go to the protocol layer as events (counted against the output limit), questions
//! to the client through the call's [`ClientRequests`](super::ClientRequests).

use super::error::Interrupt;
use super::scope::{ClientError, ClientMethod, GuestEvent};
use super::state::{EVENT_OVERHEAD, HostState};
use crate::runtime::bindings::{host, types};

impl HostState {
    async fn ask_client(&mut self, method: ClientMethod, request: String) -> wasmtime::Result<Result<String, String>> {
        let params: serde_json::Value = match serde_json::from_str(&request) {
            Ok(params) => params,
            Err(e) => return Ok(Err(format!("the request is not JSON: {e}"))),
        };
        let Some(client) = self.scope.client.clone() else {
            return Ok(Err("this call cannot reach the client".to_owned()));
        };
        tracing::debug!(plugin = %self.plugin, ?method, "guest asks the client");
        match client.request(method, params).await {
            Ok(result) => Ok(Ok(result.to_string())),
            Err(ClientError::Refused(reason)) => Ok(Err(reason)),
            Err(ClientError::InputRequired) => Err(Interrupt::InputRequired.into()),
            Err(ClientError::MissingCapability(capability)) => Err(Interrupt::MissingCapability(capability).into()),
        }
    }
}

impl types::Host for HostState {}

impl host::Host for HostState {
    fn log(&mut self, level: types::LogLevel, logger: Option<String>, data: String) {
        let data = serde_json::from_str(&data).unwrap_or(serde_json::Value::String(data));
        let plugin = &self.plugin;
        use types::LogLevel as L;
        match level {
            L::Debug => tracing::debug!(target: "mcpbox::guest", %plugin, logger, %data),
            L::Info | L::Notice => tracing::info!(target: "mcpbox::guest", %plugin, logger, %data),
            L::Warning => tracing::warn!(target: "mcpbox::guest", %plugin, logger, %data),
            _ => tracing::error!(target: "mcpbox::guest", %plugin, logger, %data),
        }
        let bytes = EVENT_OVERHEAD + logger.as_ref().map_or(0, String::len) + data.to_string().len();
        self.send(GuestEvent::Log { level, logger, data }, bytes);
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        let bytes = EVENT_OVERHEAD + message.as_ref().map_or(0, String::len);
        self.send(GuestEvent::Progress { progress, total, message }, bytes);
    }

    fn cancelled(&mut self) -> bool {
        self.scope.cancel.is_cancelled()
    }

    async fn sample(&mut self, request: String) -> wasmtime::Result<Result<String, String>> {
        self.ask_client(ClientMethod::Sample, request).await
    }

    async fn elicit(&mut self, request: String) -> wasmtime::Result<Result<String, String>> {
        self.ask_client(ClientMethod::Elicit, request).await
    }

    fn resource_updated(&mut self, uri: String) {
        if !self.admit(EVENT_OVERHEAD + uri.len()) {
            return;
        }
        if let Some(owned) = &self.scope.owned_uris
            && !owned.contains(&uri)
        {
            tracing::warn!(plugin = %self.plugin, %uri, "refused a resource update for a URI the plugin does not serve");
            return;
        }
        if let Some(notify) = &self.scope.resource_updated {
            notify(uri);
        }
    }

    fn granted_dirs(&mut self) -> Vec<host::GrantedDir> {
        self.scope
            .grants
            .iter()
            .map(|g| host::GrantedDir { name: g.name.clone(), guest_path: g.guest_path.clone(), writable: g.writable })
            .collect()
    }
}
