//! The linkers plugins are linked with, and the import check that decides whether a plugin may
//! load under its policy: WASI 0.2 (its sockets denied per call) and `mcpbox:plugin/host` for
//! every plugin; `wasi:http` only with a network grant (or the denying stub); interfaces mcpbox
//! does not offer only as trapping stubs, when the operator chose them.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use wasmtime::Engine;
use wasmtime::component::{Component, HasSelf, Linker, types::ComponentItem};

use crate::runtime::effects::filesystem::FilesView;
use crate::runtime::engine::bindings;
use crate::runtime::grants::policy::Policy;
use crate::runtime::sandbox::HostState;

/// The linkers plugins are linked with: WASI 0.2 (its sockets denied per call) and the
/// `mcpbox:plugin/host` imports; plus `wasi:http` for plugins with a network grant or the
/// denying stub.
#[derive(Clone)]
pub(crate) struct Linkers {
    base: Arc<Linker<HostState>>,
    with_http: Arc<Linker<HostState>>,
}

impl Linkers {
    pub(crate) fn new(engine: &Engine) -> Result<Linkers> {
        let mut base = Linker::new(engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut base).map_err(anyhow::Error::from).context("cannot link WASI")?;
        // The filesystem through mcpbox's door (`runtime/effects/filesystem.rs`), which sees
        // every call and delegates it to wasmtime-wasi's: linked over wasmtime-wasi's own.
        if !crate::switched_off!("effects.filesystem-door") {
            use wasmtime_wasi::p2::bindings::filesystem::{preopens, types};
            base.allow_shadowing(true);
            types::add_to_linker::<HostState, FilesView>(&mut base, HostState::files)
                .map_err(anyhow::Error::from)
                .context("cannot link the filesystem door")?;
            preopens::add_to_linker::<HostState, FilesView>(&mut base, HostState::files)
                .map_err(anyhow::Error::from)
                .context("cannot link the filesystem door")?;
            base.allow_shadowing(false);
        }
        bindings::DescribedPlugin::add_to_linker::<HostState, HasSelf<HostState>>(&mut base, |state| state)
            .map_err(anyhow::Error::from)
            .context("cannot link the mcpbox host interface")?;
        let mut with_http = base.clone();
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut with_http)
            .map_err(anyhow::Error::from)
            .context("cannot link wasi:http")?;
        Ok(Linkers { base: Arc::new(base), with_http: Arc::new(with_http) })
    }

    /// The linker for `component` under `policy`, or why it may not load: it imports
    /// `wasi:http` without a network grant, or an interface mcpbox does not offer (unless the
    /// operator chose stubs for what it was not granted).
    pub(crate) fn for_plugin(
        &self,
        component: &Component,
        name: &str,
        policy: &Policy,
    ) -> Result<Arc<Linker<HostState>>> {
        let engine = component.engine();
        let imports: Vec<String> =
            component.component_type().imports(engine).map(|(import, _)| import.to_owned()).collect();
        let http_import = imports.iter().find(|i| i.starts_with("wasi:http/"));
        if let Some(import) = http_import
            && policy.network.is_none()
            && !crate::switched_off!("linker.http-needs-grant")
            && !policy.stub_ungranted
        {
            bail!(
                "plugin `{name}` imports `{import}` but has no network grant: allow the hosts it may reach with \
                 `[plugin.{name}] network = [\"https://api.example.com\"]` in the config, or set \
                 `stub_ungranted = true` there to link a stub that refuses every request"
            );
        }
        let linker = if http_import.is_some() { &self.with_http } else { &self.base };
        if !policy.stub_ungranted && !crate::switched_off!("linker.unknown-imports-refused") {
            return Ok(linker.clone());
        }
        let mut stubbed = Linker::clone(linker);
        define_trapping_stubs(&mut stubbed, component, name)?;
        Ok(Arc::new(stubbed))
    }
}

/// Links every imported interface mcpbox does not offer (anything but `wasi:*` and
/// `mcpbox:plugin/*`, which the linker already has in some compatible version) as functions
/// that trap with a message naming the import. (wasmtime's `define_unknown_imports_as_traps`
/// would also stub WASI interfaces of a newer minor version than ours, which the linker
/// satisfies by semver, and break their resource types.)
fn define_trapping_stubs(linker: &mut Linker<HostState>, component: &Component, plugin: &str) -> Result<()> {
    struct Stubbed;
    let engine = component.engine();
    for (import, item) in component.component_type().imports(engine) {
        if import.starts_with("wasi:") || import.starts_with("mcpbox:plugin/") {
            continue;
        }
        let ComponentItem::ComponentInstance(instance) = item.ty else { continue };
        let mut stubs = linker.instance(import).map_err(anyhow::Error::from)?;
        for (export, item) in instance.exports(engine) {
            match item.ty {
                ComponentItem::ComponentFunc(_) => {
                    let message =
                        format!("plugin `{plugin}` called `{import}#{export}`, which mcpbox does not offer (a stub)");
                    stubs
                        .func_new(export, move |_, _, _, _| Err(wasmtime::Error::msg(message.clone())))
                        .map_err(anyhow::Error::from)?;
                }
                ComponentItem::Resource(_) => {
                    stubs
                        .resource(export, wasmtime::component::ResourceType::host::<Stubbed>(), |_, _| Ok(()))
                        .map_err(anyhow::Error::from)?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// What a component imports and exports, for `mcpbox inspect`.
pub(crate) fn interface_names(engine: &Engine, component: &Component) -> (Vec<String>, Vec<String>) {
    let ty = component.component_type();
    let imports = ty.imports(engine).map(|(name, _)| name.to_owned()).collect();
    let exports = ty
        .exports(engine)
        .map(|(name, item)| match item.ty {
            ComponentItem::ComponentInstance(_) => name.to_owned(),
            _ => format!("{name} (not an interface)"),
        })
        .collect();
    (imports, exports)
}
