//! Legacy Streamable HTTP sessions (`Mcp-Session-Id`) in a fleet: they live in their
//! replica's memory (rmcp's `LocalSessionManager`, to which everything is delegated), so a
//! session's requests must reach the replica that created it. Two ways, both shipped in
//! `deploy/`: a load balancer that learns the id from the response (HAProxy's stick table), or
//! one that routes by the id itself: in a fleet, a session id is `REPLICA.RANDOM`, the replica's
//! name first (its pod name: nginx or an Ingress can send `mcpbox-2.*` to `mcpbox-2`). A session
//! whose replica died is unknown to every other one: 404, and the client initializes again
//! (basic/transports §Session Management).

use std::sync::Arc;

use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, create_local_session,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use crate::telemetry::metrics::{Open, metrics};

/// Sessions of this replica, named after it in a fleet.
pub(crate) struct ReplicaSessions {
    local: LocalSessionManager,
    /// The replica's name, when it serves in a fleet.
    replica: Option<String>,
}

impl ReplicaSessions {
    pub(crate) fn new(local: LocalSessionManager, replica: Option<String>) -> ReplicaSessions {
        ReplicaSessions { local, replica }
    }

    /// How many sessions are open now, if the table is not being written to this instant.
    pub(crate) fn count(&self) -> Option<usize> {
        self.local.sessions.try_read().ok().map(|sessions| sessions.len())
    }
}

/// A session's SSE stream, counted in `mcpbox_streams` while it is open.
fn counted(
    stream: impl Stream<Item = ServerSseMessage> + Send + Sync + 'static,
) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
    let open = Open::count(&metrics().streams, "streamable_http");
    stream.map(move |message| {
        let _open = &open;
        message
    })
}

impl SessionManager for ReplicaSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // 128 random bits, as unguessable as rmcp's UUIDv4 ids.
        let (Some(replica), Some(random)) = (&self.replica, crate::hex::random_hex::<16>()) else {
            return self.local.create_session().await;
        };
        let id: SessionId = Arc::from(format!("{replica}.{random}"));
        let (handle, worker) = create_local_session(id.clone(), self.local.session_config.clone());
        self.local.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_stream(id, message).await.map(counted)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await.map(counted)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await.map(counted)
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.local.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}
