//! What a test keeps to itself. Every `mcpbox` a test starts gets a `HOME`, XDG directories and
//! `MCPBOX_STATE_DIR` of its own (a server's own; a command's are its test's), and every plugin
//! file or folder a test serves is the test's own copy (hard links, made once per test), so that
//! no server watches a folder another test or process writes into, and no server reads pins,
//! accounts or state another one wrote. Shared on purpose, by everyone: the compile cache
//! (`MCPBOX_CACHE_DIR`, keyed by the component's digest) and `mcpbox build`'s toolchain
//! (`MCPBOX_BUILD_TOOLS`), and the package managers' download caches.
//!
//! Everything lives under `target/test-own/PID/` (on `target/`'s filesystem, for the hard
//! links): `TEST/` for each test, `servers/` for each server's. A test run removes what a
//! finished run of the test binary left.
//!
//! A server started with a shared folder or shared state (a path into the guests' build output;
//! `HOME`, an XDG directory or `MCPBOX_STATE_DIR` outside the test's own temporary directories)
//! fails its test, unless the test is listed in [`SHARING`] with the reason it shares.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::repo_root;

/// The tests that give a server something shared on purpose, and why. Nothing else may.
pub const SHARING: &[(&str, &str)] = &[];

/// The folders the guests' builds write into (scripts/build-guests.sh), which a server must
/// never watch: a build of another test process replaces their files.
const SHARED_GUEST_FOLDERS: [&str; 4] = ["plugins", "test-plugins", "test-set", "failpoint-plugins"];

/// The environment that decides where a process keeps state, set for every mcpbox a test starts.
const STATE_VARIABLES: [&str; 6] =
    ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "MCPBOX_STATE_DIR"];

/// This test process's directory, made once; directories of test processes that are gone are
/// removed then.
fn process_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let all = repo_root().join("target/test-own");
        if let Ok(entries) = std::fs::read_dir(&all) {
            for entry in entries.flatten() {
                let pid = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok());
                if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = all.join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// A test's name as a directory name (`module::test` -> `module--test`); a thread that is no
/// test's (one a test spawned) gets the process's `unnamed` directory.
fn test_name() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) if name != "main" => name.replace("::", "--"),
        _ => "unnamed".to_owned(),
    }
}

/// Directories for state: `home/`, the XDG ones and `state/` under one root.
pub struct OwnDirs {
    root: PathBuf,
    /// Removes the root with the value (a server's); a test's stay until the process is gone.
    _temporary: Option<tempfile::TempDir>,
}

impl OwnDirs {
    /// A server's, removed when it is dropped.
    pub fn for_server() -> OwnDirs {
        let servers = process_dir().join("servers");
        std::fs::create_dir_all(&servers).unwrap();
        let temporary = tempfile::Builder::new().prefix("server").tempdir_in(&servers).unwrap();
        let root = temporary.path().to_owned();
        OwnDirs::make(&root);
        OwnDirs { root, _temporary: Some(temporary) }
    }

    /// The current test's (the same for every command it runs).
    pub fn for_test() -> OwnDirs {
        let root = process_dir().join(test_name()).join("dirs");
        OwnDirs::make(&root);
        OwnDirs { root, _temporary: None }
    }

    fn make(root: &Path) {
        for dir in ["home", "config", "data", "state", "cache", "mcpbox-state"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
    }

    /// Its `HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// Its `MCPBOX_STATE_DIR` (pins of plugins served without a config).
    pub fn state(&self) -> PathBuf {
        self.root.join("mcpbox-state")
    }

    /// Points `command`'s state at these directories; the tool homes and the package managers'
    /// download caches stay the real ones (shared on purpose: they hold downloads, not state).
    pub fn give(&self, command: &mut Command) {
        for (variable, value) in self.variables() {
            command.env(variable, value);
        }
    }

    /// [`OwnDirs::give`] for a tokio command.
    pub fn give_tokio(&self, command: &mut tokio::process::Command) {
        for (variable, value) in self.variables() {
            command.env(variable, value);
        }
    }

    /// The variables [`OwnDirs::give`] sets, for a program that starts mcpbox with an
    /// environment of its own making.
    pub fn variables(&self) -> Vec<(&'static str, PathBuf)> {
        let real_home = PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()));
        let tool = |variable: &str, default: PathBuf| std::env::var_os(variable).map_or(default, PathBuf::from);
        vec![
            ("HOME", self.home()),
            ("XDG_CONFIG_HOME", self.root.join("config")),
            ("XDG_DATA_HOME", self.root.join("data")),
            ("XDG_STATE_HOME", self.root.join("state")),
            ("XDG_CACHE_HOME", self.root.join("cache")),
            ("MCPBOX_STATE_DIR", self.state()),
            ("CARGO_HOME", tool("CARGO_HOME", real_home.join(".cargo"))),
            ("RUSTUP_HOME", tool("RUSTUP_HOME", real_home.join(".rustup"))),
            ("npm_config_cache", tool("npm_config_cache", real_home.join(".npm"))),
            ("PIP_CACHE_DIR", tool("PIP_CACHE_DIR", real_home.join(".cache/pip"))),
        ]
    }
}

/// A directory `name` of the current test's own (kept until the test process ends), for what
/// a test builds and serves from one place (a fixture it builds): never a fixed path under
/// `target/` that the same test in another process would rebuild beside it.
pub fn scratch(name: &str) -> PathBuf {
    let dir = process_dir().join(test_name()).join("scratch").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The current test's own copy of `original`, a file or folder the guests' build wrote under
/// `target/` (hard links, made once per test; a folder's files, not its subfolders).
pub fn own_copy(original: &Path) -> PathBuf {
    let target = repo_root().join("target");
    let relative = original
        .strip_prefix(&target)
        .unwrap_or_else(|_| panic!("{} is not a guest build's output under {}", original.display(), target.display()));
    let copy = process_dir().join(test_name()).join("guests").join(relative);
    if copy.exists() {
        return copy;
    }
    if original.is_dir() {
        copy_folder(original, &copy);
    } else {
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        link_or_copy(original, &copy);
    }
    copy
}

/// Makes `copy` a folder with `original`'s files (hard links; not its subfolders).
pub fn copy_folder(original: &Path, copy: &Path) {
    std::fs::create_dir_all(copy).unwrap();
    for entry in std::fs::read_dir(original).unwrap().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            link_or_copy(&entry.path(), &copy.join(entry.file_name()));
        }
    }
}

fn link_or_copy(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        // Made by another thread of this test meanwhile, or another filesystem.
        if !to.exists() {
            std::fs::copy(from, to).unwrap();
        }
    }
}

/// What a server's command line or environment shares with other tests: a path into the
/// guests' build folders, or state directories the test chose. `None`: nothing.
pub fn shared_in<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &str)]) -> Option<String> {
    let target = repo_root().join("target");
    for arg in args {
        let path = Path::new(arg.as_ref());
        if let Some(folder) = shared_folder(path, &target) {
            return Some(format!("serves {} from the shared folder target/{folder}", path.display()));
        }
    }
    // State the test made for this server (in a temporary directory, or its own under
    // target/test-own) is its own; anything else (the real HOME, a fixed path) is shared.
    let owned = |value: &str| {
        let path = Path::new(value);
        path.starts_with(std::env::temp_dir()) || path.starts_with(target.join("test-own"))
    };
    env.iter()
        .find(|(variable, value)| STATE_VARIABLES.contains(variable) && !owned(value))
        .map(|(variable, value)| format!("sets {variable}={value}, which is not a directory of its own"))
}

/// Which shared guest folder `path` is in, if any.
pub fn shared_folder(path: &Path, target: &Path) -> Option<&'static str> {
    let relative = path.strip_prefix(target).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    SHARED_GUEST_FOLDERS.iter().copied().find(|folder| *folder == first)
}

/// Fails the current test when it shares `what` without being listed in [`SHARING`].
pub fn check_sharing(what: &str) {
    let test = std::thread::current().name().unwrap_or_default().to_owned();
    if !SHARING.iter().any(|(listed, _)| *listed == test) {
        panic!(
            "test `{test}` starts a server that {what}: give it its own (fixture(), plugin(), \
             test_set(), bundled() are the test's own copies; every server gets its own HOME and \
             state), or list the test in common/own.rs SHARING with the reason it shares"
        );
    }
}
