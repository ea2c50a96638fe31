//! The environment the build's own programs run with (the language drivers, and npm, pip and
//! the componentizers they start): one of their own, never the builder's. The builder's shell
//! holds tokens, credentials and settings that name files of this machine (`NODE_OPTIONS`,
//! `npm_config_*`, `PIP_*`, `PYTHONPATH`, `SSH_AUTH_SOCK`, cloud keys); none of it may reach a
//! build that installs and bundles other people's code.
//!
//! What the programs get: `PATH` with the directories of the programs mcpbox resolved (the
//! real node or python, not a version manager's shim that needs the builder's HOME) before
//! the system's; a `HOME` and `TMPDIR` inside the build's work directory; a fixed locale and
//! time zone; and, so that npm and pip can reach a registry at all, the machine's trust
//! settings (CA files) and proxies. Registries and indexes are only what the user passes to
//! `mcpbox build` (`--registry`, `--index-url`, `--find-links`). SECURITY.md, "the build".

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Variables kept from the builder's environment: trust and the way out to the registries.
/// None names a registry or runs anything.
const KEPT: &[&str] = &[
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "PIP_CERT",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

/// The system's program directories, after the resolved tools'.
const SYSTEM_PATH: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

/// Gives `command` the build's own environment: `programs` are the executables it must find
/// (their directories go first on `PATH`), `work` the build's work directory.
pub(crate) fn isolate(command: &mut Command, programs: &[&Path], work: &Path) -> std::io::Result<()> {
    if crate::switched_off!("build.clean-tool-environment") {
        return Ok(());
    }
    let home = work.join("home");
    let tmp = work.join("tmp");
    std::fs::create_dir_all(&home)?;
    std::fs::create_dir_all(&tmp)?;
    let mut path: Vec<PathBuf> = Vec::new();
    for dir in programs.iter().filter_map(|p| p.parent()).chain(SYSTEM_PATH.iter().map(Path::new)) {
        if !dir.as_os_str().is_empty() && !path.iter().any(|p| p == dir) {
            path.push(dir.to_owned());
        }
    }
    command.env_clear();
    for name in KEPT {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
        .env("PATH", std::env::join_paths(path).unwrap_or_default())
        .env("HOME", home)
        .env("TMPDIR", tmp)
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env("TZ", "UTC");
    Ok(())
}

/// mcpbox's own npm settings for a build: the download cache beside the toolchain (shared by
/// builds: content-addressed, checked against each package's integrity), no user or global
/// config file (the builder's would name a registry or a program), no git (a git dependency is
/// refused: hygiene.mjs), and the registry the user passed, if any.
pub(crate) fn npm_settings(command: &mut Command, work: &Path, registry: Option<&str>) {
    let home = work.join("home");
    if let Ok(tools) = super::paths::base_dir() {
        command.env("npm_config_cache", tools.join("npm-cache"));
    }
    command
        .env("npm_config_userconfig", home.join("no-user-npmrc"))
        .env("npm_config_globalconfig", home.join("no-global-npmrc"))
        .env("npm_config_git", work.join("no-git"))
        .env("npm_config_update_notifier", "false");
    if let Some(registry) = registry {
        command.env("npm_config_registry", registry);
    }
}

/// mcpbox's own pip settings for a build: no config file of the builder's, no user site, the
/// download cache beside the toolchain. The index is passed on pip's command line (build.py).
pub(crate) fn pip_settings(command: &mut Command) {
    if let Ok(tools) = super::paths::base_dir() {
        command.env("PIP_CACHE_DIR", tools.join("pip-cache"));
    }
    command
        .env("PIP_CONFIG_FILE", "/dev/null")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
}

/// The real executable behind `program` (a name on `PATH`, or a version manager's shim that
/// needs the builder's environment to find it), as the program itself reports it: asked with
/// the builder's environment, once, before the build's own environment is set.
pub(crate) fn real_program(program: &Path, asks: &[&str]) -> PathBuf {
    Command::new(program)
        .args(asks)
        .env_remove("NODE_OPTIONS")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(OsString::from(String::from_utf8_lossy(&output.stdout).trim().to_owned())))
        .filter(|path| path.is_absolute() && path.exists())
        .unwrap_or_else(|| program.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_program_gets_nothing_of_the_builders_environment_but_trust_and_proxies() {
        let work = tempfile::tempdir().unwrap();
        let mut command = Command::new("env");
        isolate(&mut command, &[Path::new("/opt/node/bin/node")], work.path()).unwrap();
        let set: Vec<(String, String)> =
            command.get_envs().filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned()))).collect();
        let names: Vec<&str> = set.iter().map(|(k, _)| k.as_str()).collect();
        assert!(
            names.iter().all(|n| KEPT.contains(n) || ["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ"].contains(n))
        );
        let value = |name: &str| set.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(value("PATH"), "/opt/node/bin:/usr/local/bin:/usr/bin:/bin");
        assert!(value("HOME").starts_with(work.path().to_str().unwrap()));
        let output = command.output().unwrap();
        let printed = String::from_utf8_lossy(&output.stdout);
        assert!(!printed.contains("CARGO") && !printed.contains("RUST"), "{printed}");
    }
}
