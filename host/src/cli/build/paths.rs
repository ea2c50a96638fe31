//! Where a build works and keeps its toolchains, and the check that its component names no
//! place of the build machine.
//!
//! The work directory is under `/tmp` (where it exists), not under `$TMPDIR`: its path is
//! recorded in what the componentizers keep (componentize-js's arguments to its initializer),
//! and a builder's `TMPDIR` may be inside their home; `/tmp/mcpbox-build-` and a random suffix
//! say nothing of the machine. After a build, the component's bytes are searched for the paths
//! that would betray the machine: the toolchain's directory (absolute, and as the bundler
//! writes it, relative to the work directory), `$TMPDIR` when it is not `/tmp`, and the work
//! directory when it could not be under `/tmp`. (The home directory alone is not searched:
//! componentize-py's own runtime names the `/root/.cargo` of the machine that built it, which is
//! not this one; the test suite builds from a HOME whose path holds a canary and searches for
//! that.)

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Where the toolchains are kept: `MCPBOX_BUILD_TOOLS`, else `build/` in mcpbox's cache.
pub(crate) fn base_dir() -> Result<PathBuf> {
    match std::env::var_os("MCPBOX_BUILD_TOOLS") {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => Ok(crate::runtime::engine::default_cache_dir()
            .context("no cache directory for the build toolchain: set MCPBOX_BUILD_TOOLS")?
            .join("build")),
    }
}

/// A fresh work directory, removed when the value is dropped (unless kept).
pub(crate) fn work_dir() -> Result<tempfile::TempDir> {
    let neutral = Path::new("/tmp");
    let mut builder = tempfile::Builder::new();
    builder.prefix("mcpbox-build-");
    let made = if neutral.is_dir() { builder.tempdir_in(neutral) } else { builder.tempdir() };
    made.context("cannot create a build directory")
}

/// Fails when `component` holds one of the places of this machine the build used.
pub(crate) fn no_builder_paths(component: &Path, work: &Path) -> Result<()> {
    if crate::switched_off!("build.no-builder-paths") || !component.exists() {
        return Ok(());
    }
    let bytes = std::fs::read(component).with_context(|| format!("cannot read {}", component.display()))?;
    for place in places(work) {
        let needle = place.to_string_lossy();
        if needle.len() >= 8 && memchr::memmem::find(&bytes, needle.as_bytes()).is_some() {
            bail!(
                "the component names {needle}, a place of the build machine: nothing of the machine may enter a \
                 component (a defect of mcpbox build: please report it with the report file)"
            );
        }
    }
    Ok(())
}

/// The places a component must not name.
fn places(work: &Path) -> Vec<PathBuf> {
    let mut places = Vec::new();
    if work.parent() != Some(Path::new("/tmp")) {
        places.push(work.to_owned());
    }
    if let Ok(tools) = base_dir() {
        let tools = std::fs::canonicalize(&tools).unwrap_or(tools);
        if let Some(relative) = pathdiff_from(work, &tools) {
            places.push(relative);
        }
        places.push(tools);
    }
    if let Some(tmp) = std::env::var_os("TMPDIR").map(PathBuf::from).filter(|t| t != Path::new("/tmp")) {
        places.push(tmp);
    }
    places
}

/// `to` relative to `from` (`../../x`), both absolute.
fn pathdiff_from(from: &Path, to: &Path) -> Option<PathBuf> {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut relative = PathBuf::new();
    for _ in common..from.len() {
        relative.push("..");
    }
    for part in &to[common..] {
        relative.push(part);
    }
    Some(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_naming_the_work_directory_or_the_toolchain_is_refused() {
        let work = tempfile::tempdir().unwrap();
        let component = work.path().join("c.wasm");
        std::fs::write(&component, b"\0asm clean bytes").unwrap();
        assert!(no_builder_paths(&component, work.path()).is_ok());
        let tools = super::base_dir().unwrap();
        for named in [
            format!("\0asm // {}/js-0/compat/bridge.js", tools.display()),
            format!("\0asm // {}/js-0/compat/bridge.js", pathdiff_from(work.path(), &tools).unwrap().display()),
        ] {
            std::fs::write(&component, named).unwrap();
            let refused = no_builder_paths(&component, work.path()).unwrap_err().to_string();
            assert!(refused.contains("a place of the build machine"), "{refused}");
        }
        // A work directory where /tmp could not hold it is a place of the machine too.
        let elsewhere = Path::new("/var/tmp/x/mcpbox-build-1");
        std::fs::write(&component, format!("\0asm {}/bundle.js", elsewhere.display())).unwrap();
        assert!(no_builder_paths(&component, elsewhere).is_err());
        assert_eq!(
            pathdiff_from(Path::new("/tmp/w"), Path::new("/home/a/.cache/t")).unwrap(),
            Path::new("../../home/a/.cache/t")
        );
    }
}
