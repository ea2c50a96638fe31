//! Files the host trusts that a plugin must never write: the audit file (a plugin could rewrite
//! its own record), the pins file (a plugin that deletes or rewrites it would have every changed
//! definition served without `mcpbox accept`) and the compile cache (its artifacts are machine
//! code the host maps: one planted there runs as the host). A directory a plugin may write is a
//! writable root (`[[roots]]`, `--root-rw`) or a writable directory of a plugin's own
//! (`[[plugin.NAME.dirs]]`); the file (or the directory it will be made in) inside one stops
//! the start, naming both.

use std::path::{Path, PathBuf};

use crate::runtime::grants::plugin_config::PluginConfigs;
use crate::runtime::grants::roots::AllowedDir;

/// Refuses `path` (`what`: "the audit file", ...) inside a directory plugins may write.
pub(super) fn outside_writable(
    path: &Path,
    what: &str,
    roots: &[AllowedDir],
    plugins: &PluginConfigs,
) -> anyhow::Result<()> {
    let Some(place) = existing_place(path) else { return Ok(()) };
    let writable = roots
        .iter()
        .map(|root| (root, "[[roots]] (or --root-rw)".to_owned()))
        .chain(plugins.iter().flat_map(|(name, config)| {
            config.policy.dirs.iter().map(move |dir| (&dir.dir, format!("[[plugin.{name}.dirs]]")))
        }))
        .filter(|(root, _)| root.writable);
    for (root, section) in writable {
        let granted = root.path.canonicalize().unwrap_or_else(|_| root.path.clone());
        if place.starts_with(&granted) {
            anyhow::bail!(
                "{what} {} is inside {}, which {section} lets plugins write: put it where no plugin can write",
                path.display(),
                root.path.display()
            );
        }
    }
    Ok(())
}

/// Where `path` is, links resolved: the file itself if it exists, else the nearest directory
/// above it that exists (a state directory made at first use is where its parent is).
fn existing_place(path: &Path) -> Option<PathBuf> {
    let path = if path.is_relative() { std::env::current_dir().ok()?.join(path) } else { path.to_owned() };
    path.ancestors().find_map(|place| place.canonicalize().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_file_in_a_writable_grant_is_refused_and_elsewhere_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let granted = AllowedDir {
            path: dir.path().join("project"),
            name: None,
            writable: true,
            per_principal: false,
            quota: Default::default(),
        };
        std::fs::create_dir_all(&granted.path).unwrap();
        let plugins = PluginConfigs::default();
        // Not made yet: judged by the directory it will be made in.
        let inside = granted.path.join("state/pins/x.json");
        let refused = outside_writable(&inside, "the pins file", std::slice::from_ref(&granted), &plugins);
        assert!(refused.unwrap_err().to_string().contains("lets plugins write"));
        let read_only = AllowedDir { writable: false, ..granted.clone() };
        assert!(outside_writable(&inside, "the pins file", &[read_only], &plugins).is_ok());
        assert!(outside_writable(&dir.path().join("pins.json"), "the pins file", &[granted], &plugins).is_ok());
    }
}
