//! What a read of an MCP App (`ui://`, extensions/apps §UI Resource Format) must hold before it
//! reaches the client, whose iframe will run it: `text/html;profile=mcp-app`, and exactly the
//! HTML the plugin served when it loaded, as pinned (issue "the human stays in charge": the
//! HTML runs in the user's client, so a change waits for `mcpbox accept` like a tool's
//! description). A plugin serving other HTML later, or an app whose pin changed, is refused.

use rmcp::ErrorData as McpError;

use crate::runtime::Catalog;
use crate::runtime::catalog::DefinitionKind;
use crate::runtime::engine::bindings::types;
use crate::runtime::grants::meta::{APP_MIME_TYPE, UI_SCHEME};
use crate::runtime::plugin::metadata::app_digest;

/// Checks every `ui://` contents of a read.
pub(crate) fn check_app_contents(catalog: &Catalog, contents: &[types::ResourceContents]) -> Result<(), McpError> {
    for contents in contents.iter().filter(|c| c.uri.starts_with(UI_SCHEME)) {
        let uri = &contents.uri;
        if contents.mime_type.as_deref() != Some(APP_MIME_TYPE) && !crate::switched_off!("apps.mime-type-checked") {
            return Err(refused(format!("`{uri}` is a ui:// resource but its contents are not {APP_MIME_TYPE}")));
        }
        if crate::switched_off!("apps.html-pinned") {
            continue;
        }
        let plugin = catalog.resource_owner(uri).and_then(|index| catalog.plugins().get(index));
        let Some((plugin, loaded)) = plugin.and_then(|p| p.metadata.apps.get(uri).map(|digest| (p, digest))) else {
            return Err(refused(format!("`{uri}` is not an app its plugin listed when it loaded")));
        };
        if catalog.withholds(&plugin.name, DefinitionKind::App, uri) {
            return Err(refused(format!(
                "the app `{uri}` of plugin `{}` changed since it was pinned: withheld until accepted (`mcpbox accept {}`)",
                plugin.name, plugin.name
            )));
        }
        if app_digest(&contents.body) != *loaded {
            return Err(refused(format!(
                "plugin `{}` served other HTML for `{uri}` than when it loaded (and was pinned): refused",
                plugin.name
            )));
        }
    }
    Ok(())
}

fn refused(message: String) -> McpError {
    tracing::warn!("{message}");
    McpError::internal_error(message, None)
}
