//! The JavaScript toolchain `mcpbox build` drives, installed once per version set into mcpbox's
//! cache (`~/.cache/mcpbox/build/js-HASH`, or `MCPBOX_BUILD_TOOLS`): the npm packages below at
//! the versions pinned here, installed with `--ignore-scripts`, and the compatibility layer
//! (`sdk/compat/js`, carried inside the binary) written beside them. A changed pin or layer is
//! another directory; a directory is used only once complete (a stamp written last).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// The packages of the toolchain, pinned: the bundler, the component builder (and the WASI
/// shim its splicer loads at run time, a dev dependency of its own), and the npm packages the
/// Node shims are made of.
const PACKAGES: &[&str] = &[
    "esbuild@0.28.2",
    "@bytecodealliance/componentize-js@0.23.0",
    "@bytecodealliance/preview2-shim@0.25.0",
    "buffer@6.0.3",
    "events@3.3.0",
    "path-browserify@1.0.1",
    "pako@2.1.0",
];

/// The compatibility layer, as this binary carries it.
const LAYER: &[(&str, &str)] = &[
    ("build.mjs", include_str!("../../../../sdk/compat/js/build.mjs")),
    ("scan.mjs", include_str!("../../../../sdk/compat/js/scan.mjs")),
    ("hygiene.mjs", include_str!("../../../../sdk/compat/js/hygiene.mjs")),
    ("bridge.js", include_str!("../../../../sdk/compat/js/bridge.js")),
    ("preinitialized.js", include_str!("../../../../sdk/compat/js/preinitialized.js")),
    ("locale.js", include_str!("../../../../sdk/compat/js/locale.js")),
    ("session.js", include_str!("../../../../sdk/compat/js/session.js")),
    ("warm.js", include_str!("../../../../sdk/compat/js/warm.js")),
    ("transport.js", include_str!("../../../../sdk/compat/js/transport.js")),
    ("node/crypto.js", include_str!("../../../../sdk/compat/js/node/crypto.js")),
    ("node/fetch.js", include_str!("../../../../sdk/compat/js/node/fetch.js")),
    ("node/fs.js", include_str!("../../../../sdk/compat/js/node/fs.js")),
    ("node/fs-promises.js", include_str!("../../../../sdk/compat/js/node/fs-promises.js")),
    ("node/globals.js", include_str!("../../../../sdk/compat/js/node/globals.js")),
    ("node/hashes.js", include_str!("../../../../sdk/compat/js/node/hashes.js")),
    ("node/module.js", include_str!("../../../../sdk/compat/js/node/module.js")),
    ("node/os.js", include_str!("../../../../sdk/compat/js/node/os.js")),
    ("node/process.js", include_str!("../../../../sdk/compat/js/node/process.js")),
    ("node/tty.js", include_str!("../../../../sdk/compat/js/node/tty.js")),
    ("node/url.js", include_str!("../../../../sdk/compat/js/node/url.js")),
    ("node/util.js", include_str!("../../../../sdk/compat/js/node/util.js")),
    ("node/zlib.js", include_str!("../../../../sdk/compat/js/node/zlib.js")),
];

/// mcpbox's WIT, which the bridged world extends.
pub(crate) const WIT: &str = include_str!("../../../../wit/plugin.wit");

/// The toolchain directory, installed if it is not yet: `build.mjs` lives in `compat/` there.
pub(crate) fn javascript(node: &Path, registry: Option<&str>) -> Result<PathBuf> {
    let (dir, _lock) = match prepared("js", PACKAGES, LAYER)? {
        Prepared::Complete(dir) => return Ok(dir),
        Prepared::Empty(dir, lock) => (dir, lock),
    };
    eprintln!("installing the JavaScript build toolchain into {} (once)", dir.display());
    std::fs::write(dir.join("package.json"), "{ \"private\": true, \"type\": \"module\" }\n")?;
    let npm = npm_beside(node);
    let mut install = Command::new(&npm);
    install
        .args(["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"])
        .args(PACKAGES)
        .current_dir(&dir);
    // The build's own environment for the installer too (a registry only as the user passed).
    let scratch = tempfile::Builder::new().prefix("mcpbox-toolchain-").tempdir()?;
    super::environment::isolate(&mut install, &[node, &npm], scratch.path())?;
    super::environment::npm_settings(&mut install, scratch.path(), registry);
    let status = install.status().with_context(|| format!("cannot run {}", npm.display()))?;
    if !status.success() {
        bail!("installing the build toolchain with npm failed ({status})");
    }
    complete(&dir, LAYER)?;
    Ok(dir)
}

/// A toolchain directory: complete already, or locked for this process to install into.
pub(crate) enum Prepared {
    Complete(PathBuf),
    Empty(PathBuf, std::fs::File),
}

/// The directory `KIND-HASH` of mcpbox's build cache (`MCPBOX_BUILD_TOOLS`), the hash over the
/// pinned packages and the layer: a changed pin or layer is another directory, used only once
/// complete (a stamp written last). Builds at once (tests, a CI matrix) install once: the
/// others wait for the lock.
pub(crate) fn prepared(kind: &str, packages: &[&str], layer: &[(&str, &str)]) -> Result<Prepared> {
    let mut digest = Sha256::new();
    for package in packages {
        digest.update(package.as_bytes());
        digest.update([0]);
    }
    for (path, text) in layer {
        digest.update(path.as_bytes());
        digest.update(text.as_bytes());
    }
    let hash = crate::hex::hex(&digest.finalize()[..8]);
    let base = super::paths::base_dir()?;
    let dir = base.join(format!("{kind}-{hash}"));
    if dir.join(".complete").exists() {
        return Ok(Prepared::Complete(dir));
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let lock = std::fs::File::create(base.join(format!("{kind}-{hash}.lock")))
        .with_context(|| format!("cannot create the toolchain lock in {}", base.display()))?;
    lock.lock().context("cannot lock the build toolchain")?;
    if dir.join(".complete").exists() {
        return Ok(Prepared::Complete(dir));
    }
    Ok(Prepared::Empty(dir, lock))
}

/// Writes the layer into `dir/compat`, then the stamp that makes the directory usable.
pub(crate) fn complete(dir: &Path, layer: &[(&str, &str)]) -> Result<()> {
    for (path, text) in layer {
        let target = dir.join("compat").join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, text).with_context(|| format!("cannot write {}", target.display()))?;
    }
    std::fs::write(dir.join(".complete"), b"")?;
    Ok(())
}

/// npm of the same installation as `node` (Node's layout: both in one `bin/`), else `npm`.
pub(crate) fn npm_beside(node: &Path) -> PathBuf {
    let beside = node.with_file_name("npm");
    if beside.exists() { beside } else { PathBuf::from("npm") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of the layer left out of the binary would fail only when a build imports it.
    #[test]
    fn the_binary_carries_every_file_of_the_compatibility_layer() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/compat/js");
        let on_disk = crate::cli::build::driver::files_under(&root);
        let mut carried: Vec<String> = LAYER.iter().map(|(path, _)| (*path).to_owned()).collect();
        carried.sort();
        assert_eq!(carried, on_disk);
        for (path, text) in LAYER {
            assert_eq!(*text, std::fs::read_to_string(root.join(path)).unwrap(), "{path}");
        }
    }
}
