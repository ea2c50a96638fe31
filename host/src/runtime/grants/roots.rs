//! Directories a call may see. The operator allows directories (`--root`, the config file);
//! an MCP client's roots can only select among them or narrow them, never widen them. Every
//! path is canonicalized first, so `..` and symlinks cannot point a grant anywhere else.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

pub(crate) use super::allowed::AllowedDir;
use super::policy::PluginDir;
use super::quota::Quota;

/// Where granted directories appear inside the guest.
pub const GUEST_ROOTS: &str = "/roots";

/// A directory granted to a call: preopened at `guest_path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Its name, unique among the call's grants.
    pub name: String,
    /// The directory on the host (canonical).
    pub host_path: PathBuf,
    /// Where the guest sees it (`/roots/<name>`).
    pub guest_path: String,
    /// Whether the guest may write there.
    pub writable: bool,
    /// `host_path` is a base, resolved to the call's principal's directory under it before
    /// the call (`runtime/grants/principal_dirs.rs`); never preopened as it stands.
    pub per_principal: bool,
    /// Its write budget and the tree it covers, if the operator set one.
    pub quota: Option<Quota>,
}

/// A root as an MCP client reports it in `roots/list`.
#[derive(Debug, Clone)]
pub struct ClientRoot {
    /// A `file://` URI (others are refused).
    pub uri: String,
    /// The client's name for it.
    pub name: Option<String>,
}

/// Grants for every directory the operator allows (no client narrowing).
pub fn operator_grants(allowed: &[AllowedDir]) -> Vec<Grant> {
    let mut names = UniqueNames::default();
    allowed.iter().map(|dir| make_grant(&mut names, dir.name.as_deref(), &dir.path, dir)).collect()
}

/// A plugin's directories added to the shared grants: each one as is, or, where the operator
/// asked for it and the client has told its roots, only the parts of it inside those roots.
pub fn plugin_grants(shared: &[Grant], dirs: &[PluginDir], client_roots: Option<&[PathBuf]>) -> Vec<Grant> {
    let mut names = UniqueNames::default();
    for grant in shared {
        names.0.insert(grant.name.clone());
    }
    let mut grants = shared.to_vec();
    for PluginDir { dir, within_client_roots } in dirs {
        match client_roots {
            // A per-principal base is never narrowed: a part of it would be other principals'.
            Some(roots) if *within_client_roots && !dir.per_principal => {
                for root in roots {
                    if let Some(path) = intersection(&dir.path, root)
                        && !grants.iter().any(|g| g.host_path == path)
                    {
                        let name = if path == dir.path { dir.name.as_deref() } else { None };
                        grants.push(make_grant(&mut names, name, path, dir));
                    }
                }
            }
            _ => grants.push(Grant {
                per_principal: dir.per_principal,
                ..make_grant(&mut names, dir.name.as_deref(), &dir.path, dir)
            }),
        }
    }
    grants
}

/// The same grants mounted at their host paths (`/home/me/project`) instead of
/// `/roots/<name>`. A path that is not UTF-8 keeps its `/roots/<name>`: WASI paths are strings.
pub fn at_host_paths(grants: &[Grant]) -> Vec<Grant> {
    grants
        .iter()
        .map(|grant| match grant.host_path.to_str() {
            Some(path) => Grant { guest_path: path.to_owned(), ..grant.clone() },
            None => grant.clone(),
        })
        .collect()
}

/// The common part of two canonical directories: the inner one if one contains the other.
fn intersection<'a>(a: &'a Path, b: &'a Path) -> Option<&'a Path> {
    if a.starts_with(b) {
        Some(a)
    } else if b.starts_with(a) {
        Some(b)
    } else {
        None
    }
}

/// The canonical directories of the client's roots; those that are not local directories are
/// left out with the reason.
pub fn canonical_client_roots(roots: &[ClientRoot]) -> (Vec<PathBuf>, Vec<String>) {
    let mut paths = Vec::new();
    let mut refused = Vec::new();
    for root in roots {
        match file_uri_to_path(&root.uri).and_then(|p| p.canonicalize().map_err(anyhow::Error::from)) {
            Ok(path) if path.is_dir() => paths.push(path),
            Ok(_) => refused.push(format!("client root {} is not a directory", root.uri)),
            Err(e) => refused.push(format!("client root {}: {e}", root.uri)),
        }
    }
    (paths, refused)
}

/// Grants for the client's roots intersected with the allowed directories: a root inside an
/// allowed directory is granted as itself, an allowed directory inside a root as itself.
/// Returns the grants and, for each refused root, why.
pub fn client_grants(allowed: &[AllowedDir], roots: &[ClientRoot]) -> (Vec<Grant>, Vec<String>) {
    let mut names = UniqueNames::default();
    let mut grants: Vec<Grant> = Vec::new();
    let mut refused = Vec::new();
    for root in roots {
        let path = match file_uri_to_path(&root.uri) {
            Ok(path) => path,
            Err(e) => {
                refused.push(format!("client root {}: {e}", root.uri));
                continue;
            }
        };
        let canonical = match path.canonicalize() {
            Ok(c) if c.is_dir() => c,
            Ok(_) => {
                refused.push(format!("client root {} is not a directory", root.uri));
                continue;
            }
            Err(e) => {
                refused.push(format!("client root {}: {e}", root.uri));
                continue;
            }
        };
        // The most specific allowed directory decides whether the grant is writable.
        let container = allowed
            .iter()
            .filter(|dir| canonical.starts_with(&dir.path))
            .max_by_key(|dir| dir.path.components().count());
        let Some(container) = container else {
            // A root that contains allowed directories selects all of them.
            let inside: Vec<&AllowedDir> = allowed.iter().filter(|dir| dir.path.starts_with(&canonical)).collect();
            if inside.is_empty() {
                refused.push(format!("client root {} is outside every directory the operator allowed", root.uri));
            }
            for dir in inside {
                if !grants.iter().any(|g| g.host_path == dir.path) {
                    grants.push(make_grant(&mut names, dir.name.as_deref(), &dir.path, dir));
                }
            }
            continue;
        };
        if grants.iter().any(|g| g.host_path == canonical) {
            continue;
        }
        let operator_name = if canonical == container.path { container.name.as_deref() } else { None };
        let name = root.name.as_deref().or(operator_name);
        grants.push(make_grant(&mut names, name, &canonical, container));
    }
    (grants, refused)
}

/// The grant of `path`, which `dir` allows (itself or a directory inside it): writable as
/// `dir` is, under `dir`'s budget measured over `dir`'s whole tree.
fn make_grant(names: &mut UniqueNames, name: Option<&str>, path: &Path, dir: &AllowedDir) -> Grant {
    let base = name
        .map(str::to_owned)
        .or_else(|| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let name = names.claim(&sanitize(&base));
    Grant {
        guest_path: format!("{GUEST_ROOTS}/{name}"),
        name,
        host_path: path.to_owned(),
        writable: dir.writable,
        per_principal: false,
        quota: if dir.writable { Quota::over(&dir.path, dir.quota) } else { None },
    }
}

fn sanitize(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' })
        .take(64)
        .collect();
    match cleaned.trim_matches('.') {
        "" => "root".to_owned(),
        trimmed => trimmed.to_owned(),
    }
}

#[derive(Default)]
struct UniqueNames(HashSet<String>);

impl UniqueNames {
    fn claim(&mut self, base: &str) -> String {
        let mut candidate = base.to_owned();
        let mut n = 2;
        while !self.0.insert(candidate.clone()) {
            candidate = format!("{base}-{n}");
            n += 1;
        }
        candidate
    }
}

/// `file:///a/b%20c` → `/a/b c`. Only local `file:` URIs name directories we can grant.
pub fn file_uri_to_path(uri: &str) -> Result<PathBuf> {
    let Some(rest) = uri.strip_prefix("file://") else {
        bail!("not a file:// uri");
    };
    let path = match rest.strip_prefix("localhost") {
        Some(p) if p.starts_with('/') => p,
        _ => rest,
    };
    if !path.starts_with('/') {
        bail!("file uri names a remote host");
    }
    let mut bytes = Vec::with_capacity(path.len());
    let raw = path.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' && i + 2 < raw.len() {
            let hex = std::str::from_utf8(&raw[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(byte) = hex {
                bytes.push(byte);
                i += 3;
                continue;
            }
        }
        bytes.push(raw[i]);
        i += 1;
    }
    let decoded = String::from_utf8(bytes).context("file uri is not UTF-8 after percent-decoding")?;
    Ok(PathBuf::from(decoded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_roots_only_narrow() {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().to_owned();
        let inner = base.join("allowed/inner dir");
        let outside = base.join("outside");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let allowed = vec![AllowedDir::new(&base.join("allowed"), None, false).unwrap()];
        let roots = [
            ClientRoot { uri: format!("file://{}", inner.display()).replace(' ', "%20"), name: None },
            ClientRoot { uri: format!("file://{}", outside.display()), name: None },
            ClientRoot { uri: format!("file://{}/allowed/../outside", base.display()), name: None },
            ClientRoot { uri: "https://example.com/".into(), name: None },
        ];
        let (grants, refused) = client_grants(&allowed, &roots);
        assert_eq!(grants.len(), 1, "{grants:?}");
        assert_eq!(grants[0].name, "inner_dir");
        assert_eq!(grants[0].guest_path, "/roots/inner_dir");
        assert_eq!(refused.len(), 3, "{refused:?}");
    }

    #[test]
    fn plugin_dirs_are_narrowed_to_client_roots_when_asked() {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().to_owned();
        std::fs::create_dir_all(base.join("data/inner")).unwrap();
        std::fs::create_dir_all(base.join("other")).unwrap();
        let dir = |within| PluginDir {
            dir: AllowedDir::new(&base.join("data"), Some("data".into()), true).unwrap(),
            within_client_roots: within,
        };
        let inner = base.join("data/inner").canonicalize().unwrap();
        let other = base.join("other").canonicalize().unwrap();
        let parent = base.canonicalize().unwrap();
        // Not narrowed: the directory as configured, whatever the client says.
        let fixed = plugin_grants(&[], &[dir(false)], Some(std::slice::from_ref(&other)));
        assert_eq!(fixed.len(), 1);
        assert_eq!(fixed[0].guest_path, "/roots/data");
        // Narrowed: a root inside it is granted as itself, a root around it grants it, a root
        // elsewhere grants nothing.
        let narrowed = plugin_grants(&[], &[dir(true)], Some(&[inner.clone(), other.clone(), parent]));
        let paths: Vec<_> = narrowed.iter().map(|g| g.host_path.clone()).collect();
        assert_eq!(paths, vec![inner, base.join("data").canonicalize().unwrap()]);
        assert!(narrowed.iter().all(|g| g.writable));
        assert!(plugin_grants(&[], &[dir(true)], Some(&[other])).is_empty());
        // A client without roots: the directory as configured.
        assert_eq!(plugin_grants(&[], &[dir(true)], None).len(), 1);
    }

    #[test]
    fn names_are_unique_and_clean() {
        let mut names = UniqueNames::default();
        assert_eq!(names.claim(&sanitize("a b")), "a_b");
        assert_eq!(names.claim(&sanitize("a b")), "a_b-2");
        assert_eq!(sanitize(".."), "root");
    }
}
