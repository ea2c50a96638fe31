//! Building one call's store: the WASI context from the call's grants and the plugin's policy
//! (deny by default), the HTTP hooks, the memory limiter, and the epoch callback that enforces
//! the deadline, cancellation and the output limit while the guest computes.

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{InstancePre, ResourceTable};
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};
use wasmtime_wasi_http::WasiHttpCtx;

use super::error::{CallError, Interrupt};
use super::scope::CallScope;
use super::scope::GuestEvent;
use super::state::{HostState, MemoryLimiter};
use crate::runtime::effects::file_door::FileDoor;
use crate::runtime::effects::network::{NetworkAccess, Reports};
use crate::runtime::effects::record::GrantEffect;
use crate::runtime::engine::bindings::types::LogLevel;
use crate::runtime::grants::limits::Limits;
use crate::runtime::grants::policy::Policy;
use crate::runtime::sandbox::budget::CallBudget;
use crate::runtime::sandbox::guest_io::GuestOutput;

/// Everything one call's store is made from.
pub(crate) struct StoreBuilder<'a> {
    pub(crate) plugin: &'a Arc<str>,
    pub(crate) pre: &'a InstancePre<HostState>,
    pub(crate) limits: Limits,
    pub(crate) policy: &'a Policy,
    pub(crate) deadline: Instant,
    pub(crate) stdout: &'a GuestOutput,
    pub(crate) stderr: &'a GuestOutput,
}

impl StoreBuilder<'_> {
    /// The store for a call in `scope`; fails only if a granted directory cannot be opened.
    pub(crate) fn build(self, scope: CallScope) -> Result<Store<HostState>, CallError> {
        let pre = self.pre;
        let state = self.state(scope)?;
        let mut store = Store::new(pre.engine(), state);
        store.limiter(|state| &mut state.limiter);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|context| {
            let state = context.data();
            if state.scope.cancel.is_cancelled() && !crate::switched_off!("sandbox.cancellation") {
                return Err(Interrupt::Cancelled.into());
            }
            if Instant::now() >= state.deadline && !crate::switched_off!("sandbox.deadline") {
                return Err(Interrupt::Deadline.into());
            }
            if state.budget.exhausted() {
                return Err(Interrupt::OutputLimit.into());
            }
            // Yield so that a guest that computes for long shares its tokio thread fairly.
            Ok(UpdateDeadline::Yield(1))
        });
        Ok(store)
    }

    /// Gives `store`, whose instance was made ahead with nothing granted, to the call in
    /// `scope`: everything the call sees (WASI with its directories and the plugin's
    /// environment, its client, events, deadline, budget, output) replaces what the making had.
    /// Only the resource table stays, holding what the instance itself was given while made.
    pub(crate) fn arm(self, store: &mut Store<HostState>, scope: CallScope) -> Result<(), CallError> {
        let mut state = self.state(scope)?;
        std::mem::swap(&mut state.table, &mut store.data_mut().table);
        if !crate::switched_off!("sandbox.prepared-takes-call-state") {
            *store.data_mut() = state;
        }
        store.set_epoch_deadline(1);
        Ok(())
    }

    /// The data of a call's store.
    fn state(self, scope: CallScope) -> Result<HostState, CallError> {
        let StoreBuilder { plugin, pre: _, limits, policy, deadline, stdout, stderr } = self;
        let mut wasi = WasiCtxBuilder::new();
        // Deny by default: no stdin, no sockets, no DNS; only the grants, and only the
        // environment variables and arguments the operator configured for this plugin.
        // (Outgoing HTTP, if granted, goes through `NetworkAccess`, not through sockets.)
        wasi.stdout(stdout.clone()).stderr(stderr.clone());
        if !policy.args.is_empty() {
            // A program's first argument is its name: the plugin's.
            let argv: Vec<String> = std::iter::once(plugin.to_string()).chain(policy.args.iter().cloned()).collect();
            wasi.args(&argv);
        }
        if crate::switched_off!("sandbox.no-host-environment") {
            wasi.inherit_env();
        } else {
            wasi.envs(&policy.env);
        }
        if crate::switched_off!("sandbox.no-sockets") {
            wasi.inherit_network().allow_ip_name_lookup(true);
        } else {
            wasi.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);
        }
        for grant in scope.grants.iter() {
            let perms = if grant.writable || crate::switched_off!("sandbox.read-only-grants") {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            wasi.preopened_dir(&grant.host_path, &grant.guest_path, perms).map_err(|e| CallError::Failed {
                plugin: plugin.clone(),
                message: format!("cannot open granted directory {}: {e}", grant.host_path.display()),
            })?;
        }
        if let Some(log) = &scope.effects {
            let grants = scope.grants.iter().map(|g| GrantEffect {
                name: g.name.clone(),
                path: g.guest_path.clone(),
                host_path: g.host_path.display().to_string(),
                writable: g.writable,
            });
            let network = policy.network.iter().flat_map(|n| n.allow.iter().map(ToString::to_string)).collect();
            log.granted(grants.collect(), network);
        }
        let files = FileDoor::new(plugin.clone(), &scope.grants, limits.write_bytes, scope.effects.clone());
        Ok(HostState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            network: NetworkAccess {
                plugin: plugin.clone(),
                policy: policy.network.clone(),
                denials: Arc::default(),
                reports: Arc::new(network_reports(stderr, &scope)),
                linked: scope.linked.clone(),
                effects: scope.effects.clone(),
            },
            limiter: MemoryLimiter { limit: limits.memory_bytes, exceeded: false, peak: 0, grows: 0 },
            plugin: plugin.clone(),
            scope,
            deadline,
            budget: CallBudget::new(limits.output_bytes),
            stderr: stderr.clone(),
            files,
            ui_permissions: policy.ui_permissions.clone().into(),
            may_call: policy.may_call.clone(),
        })
    }
}

/// How the network reports a request it refused: a host log line within the call's log
/// budget, and a warning to the client beside the guest's logs.
fn network_reports(stderr: &GuestOutput, scope: &CallScope) -> Reports {
    let stderr = stderr.clone();
    let warn_client = scope.events.clone().map(|events| {
        Box::new(move |message: String| {
            let _ = events.send(GuestEvent::Log {
                level: LogLevel::Warning,
                logger: Some("mcpbox".into()),
                data: message.into(),
            });
        }) as Box<dyn Fn(String) + Send + Sync>
    });
    Reports { log_line: Box::new(move |bytes| stderr.take_line(bytes)), warn_client }
}
