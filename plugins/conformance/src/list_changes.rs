//! The diagnostic hooks of `server-stateless` that change the server's tool and prompt lists
//! (`test_trigger_tool_change`, `test_trigger_prompt_change`). mcpbox's lists change when its
//! plugin directories do (hot reload), so each hook adds or removes a plugin in a watched
//! plugin directory the operator granted it writable (`[[plugin.conformance.dirs]]` named
//! `extra`): a copy of the one `.wasm` file in the directory granted as `spare` (a plugin with
//! tools and prompts, not served otherwise). Its tools and prompts (under its own prefix)
//! appear or disappear, and every listening client is told. Without those grants the hooks fail
//! and change nothing.

use std::path::Path;

use mcpbox_sdk::host::granted_dirs;
use mcpbox_sdk::prelude::*;

fn granted(name: &str) -> Result<String, Error> {
    granted_dirs()
        .into_iter()
        .find(|d| d.name == name)
        .map(|d| d.guest_path)
        .ok_or_else(|| Error::failed(format!("no directory `{name}` granted: see the module documentation")))
}

/// Adds the spare plugin to `extra` if it is absent there, removes it if present; says which.
fn toggle_spare() -> Result<String, Error> {
    let (spare, extra) = (granted("spare")?, granted("extra")?);
    let file = std::fs::read_dir(&spare)?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .find(|name| name.ends_with(".wasm"))
        .ok_or_else(|| Error::failed("no .wasm file in the spare directory"))?;
    let copy = format!("{extra}/{file}");
    if Path::new(&copy).exists() {
        std::fs::remove_file(&copy)?;
        return Ok(format!("removed {file}: its tools and prompts are gone"));
    }
    let bytes = std::fs::read(format!("{spare}/{file}"))?;
    // Written whole under another name first, so the watcher never loads half a file.
    let partial = format!("{copy}.partial");
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, &copy)?;
    Ok(format!("added {file}: its tools and prompts are listed"))
}

pub(crate) fn hooks(plugin: Plugin) -> Plugin {
    plugin
        .tool(Tool::new(
            "test_trigger_tool_change",
            "Changes the server's tool list (adds or removes a plugin)",
            |_: NoArgs| toggle_spare(),
        ))
        .tool(Tool::new(
            "test_trigger_prompt_change",
            "Changes the server's prompt list (adds or removes a plugin)",
            |_: NoArgs| toggle_spare(),
        ))
}
