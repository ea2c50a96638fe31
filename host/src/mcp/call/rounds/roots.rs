//! The client's roots, in both eras, turned into the directories a request may use. Legacy
//! sessions (2025-06-18 `client/roots`) are asked `roots/list` once the session is up and again
//! on `notifications/roots/list_changed`; a 2026-07-28 request answers the `roots/list`
//! question of a multi round-trip (basic §Multi round-trip requests). Both go through
//! [`view_of_client_roots`], the one place where client roots become grants: they can only
//! narrow the operator's directories, never widen them.

#![expect(deprecated, reason = "roots stay served to the clients that use them")]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{InputRequest, InputRequests, InputRequiredResult, InputResponses};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::watch;

use crate::runtime::grants::roots::{self, AllowedDir, ClientRoot, Grant};

/// How long a call waits for the client's first `roots/list` answer before it runs with no
/// directories (deny by default: we never fall back to wider grants).
const ROOTS_WAIT: Duration = Duration::from_secs(10);
/// The key of the `roots/list` question in a multi round-trip request.
pub(crate) const ROOTS_QUESTION: &str = "roots";

/// The directories of one request.
#[derive(Debug, Clone)]
pub(crate) struct FsView {
    /// The shared grants: the operator's, narrowed by the client's roots.
    pub(crate) grants: Arc<[Grant]>,
    /// The client's roots (canonical) if it told them; plugin directories the operator wants
    /// within the client's roots are intersected with these.
    pub(crate) client_roots: Option<Arc<[PathBuf]>>,
}

impl FsView {
    /// The operator's grants, for a client without roots.
    pub(crate) fn operator(grants: &Arc<[Grant]>) -> FsView {
        FsView { grants: grants.clone(), client_roots: None }
    }

    /// Nothing at all: a client declared roots but could not say which.
    fn nothing() -> FsView {
        FsView { grants: Arc::from([]), client_roots: Some(Arc::from([])) }
    }
}

/// The grants of `client_roots` within the operator's `allowed` directories; refused roots are
/// logged with the reason.
pub(crate) fn view_of_client_roots(allowed: &[AllowedDir], client_roots: &[ClientRoot]) -> FsView {
    let (grants, refused) = roots::client_grants(allowed, client_roots);
    for reason in refused {
        tracing::warn!("refused {reason}");
    }
    tracing::debug!(granted = ?grants.iter().map(|g| &g.guest_path).collect::<Vec<_>>(), "client roots");
    FsView { grants: grants.into(), client_roots: Some(roots::canonical_client_roots(client_roots).0.into()) }
}

/// A 2026-07-28 request's view: from its answer to the `roots/list` question, or the question
/// if it has not answered yet.
pub(crate) fn modern_view(allowed: &[AllowedDir], answers: &InputResponses) -> Result<FsView, InputRequiredResult> {
    let Some(answer) = answers.get(ROOTS_QUESTION) else {
        return Err(InputRequiredResult::from_input_requests(InputRequests::from([(
            ROOTS_QUESTION.to_owned(),
            InputRequest::ListRoots(rmcp::model::ListRootsRequest::default()),
        )])));
    };
    Ok(view_of_client_roots(allowed, &parse_roots(answer)))
}

/// The roots of a `roots/list` result as JSON; entries without a `uri` are left out.
fn parse_roots(answer: &Value) -> Vec<ClientRoot> {
    let entries = answer["roots"].as_array().map(Vec::as_slice).unwrap_or_default();
    entries
        .iter()
        .filter_map(|r| {
            Some(ClientRoot { uri: r["uri"].as_str()?.to_owned(), name: r["name"].as_str().map(str::to_owned) })
        })
        .collect()
}

/// A legacy session's roots as far as it knows them.
#[derive(Debug, Clone)]
enum RootsState {
    /// The client did not declare the roots capability: the operator's grants apply.
    NotDeclared,
    /// Asked, no answer yet.
    Pending,
    /// From the client's answer.
    Known(FsView),
}

/// A legacy session's roots: calls wait for the client's answer instead of racing ahead of it.
pub(crate) struct SessionRoots(watch::Sender<RootsState>);

impl SessionRoots {
    pub(crate) fn new() -> SessionRoots {
        SessionRoots(watch::channel(RootsState::NotDeclared).0)
    }

    /// The client declared roots: until it answers, calls wait.
    pub(crate) fn declared(&self) {
        self.0.send_replace(RootsState::Pending);
    }

    /// The view a call of this session runs with: the client's roots once known, the
    /// operator's grants if it has none, nothing if it does not answer in time.
    pub(crate) async fn view(&self, operator: &Arc<[Grant]>) -> FsView {
        let mut watcher = self.0.subscribe();
        let wait = watcher.wait_for(|state| !matches!(state, RootsState::Pending));
        match tokio::time::timeout(ROOTS_WAIT, wait).await {
            Ok(Ok(state)) => match &*state {
                RootsState::Known(view) => view.clone(),
                _ => FsView::operator(operator),
            },
            _ => {
                tracing::warn!(
                    "the client declared roots but has not answered roots/list; running with no directories"
                );
                FsView::nothing()
            }
        }
    }

    /// Asks the client for its roots and serves them from then on.
    pub(crate) async fn refresh(&self, peer: Peer<RoleServer>, allowed: &[AllowedDir]) {
        self.0.send_replace(RootsState::Pending);
        let view = match peer.list_roots().await {
            Ok(result) => {
                let client_roots: Vec<ClientRoot> =
                    result.roots.into_iter().map(|r| ClientRoot { uri: r.uri, name: r.name }).collect();
                view_of_client_roots(allowed, &client_roots)
            }
            Err(e) => {
                tracing::warn!("roots/list failed: {e}; running with no directories");
                FsView::nothing()
            }
        };
        self.0.send_replace(RootsState::Known(view));
    }
}
