//! The `mcpbox:plugin/host` imports: what a guest may ask of the host during a call. Logs and
//! progress go to the protocol layer as events, questions to the client through the call's
//! [`ClientRequests`](super::ClientRequests); every one of them, and every announcement, is
//! charged to the call's budget as the JSON it becomes before it goes anywhere.

use super::error::Interrupt;
use super::scope::{ClientError, ClientMethod, GuestEvent};
use super::state::HostState;
use crate::runtime::bindings::{host, types};
use crate::runtime::budget::{Emission, wire_len};

impl HostState {
    async fn ask_client(&mut self, method: ClientMethod, request: String) -> wasmtime::Result<Result<String, String>> {
        let params: serde_json::Value = match serde_json::from_str(&request) {
            Ok(params) => params,
            Err(e) => return Ok(Err(format!("the request is not JSON: {e}"))),
        };
        if !self.emit(Emission::ClientRequest, wire_len(&params)) {
            if self.budget.exhausted() {
                return Err(Interrupt::OutputLimit.into());
            }
            return Ok(Err(format!(
                "too many requests to the client in one call (at most {})",
                crate::runtime::budget::MAX_CLIENT_REQUESTS_PER_CALL
            )));
        }
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
        let bytes = wire_len(&data).saturating_add(wire_len(&logger));
        // The host's own log gets it only within the budget the guest's stderr has.
        if self.stderr.take_log_budget(bytes) {
            let plugin = &self.plugin;
            use types::LogLevel as L;
            match level {
                L::Debug => tracing::debug!(target: "mcpbox::guest", %plugin, logger, %data),
                L::Info | L::Notice => tracing::info!(target: "mcpbox::guest", %plugin, logger, %data),
                L::Warning => tracing::warn!(target: "mcpbox::guest", %plugin, logger, %data),
                _ => tracing::error!(target: "mcpbox::guest", %plugin, logger, %data),
            }
        }
        self.send(GuestEvent::Log { level, logger, data }, bytes);
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        let bytes = wire_len(&(progress, total, &message));
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
        if !self.emit(Emission::Announcement, wire_len(&uri)) {
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
