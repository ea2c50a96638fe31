//! Which paths a call may touch, decided as the reference's `validatePath` decides: `~`
//! expanded, a relative path resolved against the allowed directories, `..` collapsed, the
//! result inside an allowed directory, symbolic links followed and the target inside one too.
//! The allowed directories are the ones mcpbox granted this call, mounted at their host paths
//! (`host_paths = true`), so the paths a model reads and writes are the host's own. The sandbox
//! enforces the same bounds underneath: nothing outside the grants is even mounted.

use mcpbox_sdk::host::granted_dirs;

/// Symbolic links followed in one path at most (Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The directories this call may touch, as the guest (and, with host paths, the user) sees
/// them.
pub(crate) fn allowed_dirs() -> Vec<String> {
    granted_dirs().into_iter().map(|dir| dir.guest_path).collect()
}

/// `path.resolve` of an absolute path: `.` and `..` and repeated slashes collapsed.
pub(crate) fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') { format!("{dir}{name}") } else { format!("{dir}/{name}") }
}

pub(crate) fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => ".",
    }
}

pub(crate) fn is_within(path: &str, dirs: &[String]) -> bool {
    !path.contains('\0')
        && dirs.iter().any(|dir| {
            let dir = normalize(dir);
            path == dir || dir == "/" || path.strip_prefix(&dir).is_some_and(|rest| rest.starts_with('/'))
        })
}

/// The reference's `validatePath`: the real path `requested` names, or why it may not be used.
pub(crate) fn validate(requested: &str) -> Result<String, String> {
    let dirs = allowed_dirs();
    let expanded = expand_home(requested)?;
    let bytes = expanded.as_bytes();
    if bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes.get(2), None | Some(b'\\' | b'/'))
    {
        return Err(format!("Access denied - Windows-style path received on a POSIX host: {requested}"));
    }
    let absolute = if expanded.starts_with('/') { normalize(&expanded) } else { resolve_relative(&expanded, &dirs) };
    if !is_within(&absolute, &dirs) {
        return Err(format!("Access denied - path outside allowed directories: {absolute} not in {}", dirs.join(", ")));
    }
    let real = real_path(&absolute);
    if !is_within(&real, &dirs) {
        return Err(format!(
            "Access denied - symlink target outside allowed directories: {real} not in {}",
            dirs.join(", ")
        ));
    }
    Ok(real)
}

/// `~` and `~/...` in the home directory, when the operator gave the plugin a `HOME`; the
/// sandbox knows no other.
fn expand_home(path: &str) -> Result<String, String> {
    if path == "~" || path.starts_with("~/") {
        return match std::env::var("HOME") {
            Ok(home) if !home.is_empty() => Ok(normalize(&format!("{home}/{}", &path[1..]))),
            _ => Err(format!(
                "Access denied - path outside allowed directories: {path} (no home directory in the sandbox)"
            )),
        };
    }
    Ok(path.to_owned())
}

/// The first allowed directory in which `relative` stays inside an allowed directory, else
/// the first one.
fn resolve_relative(relative: &str, dirs: &[String]) -> String {
    dirs.iter()
        .map(|dir| normalize(&join(dir, relative)))
        .find(|candidate| is_within(candidate, dirs))
        .unwrap_or_else(|| normalize(&join(dirs.first().map_or("/", String::as_str), relative)))
}

/// `fs.realpath`, where it can see: symbolic links followed one component at a time; a missing
/// component ends the walk, and the rest is appended as given (as the reference does for a file
/// about to be created).
fn real_path(absolute: &str) -> String {
    let mut pending: Vec<String> = absolute.split('/').filter(|p| !p.is_empty()).map(str::to_owned).rev().collect();
    let mut resolved = String::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop() {
        let candidate = match part.as_str() {
            "." => continue,
            ".." => {
                resolved = parent(&resolved).to_owned();
                continue;
            }
            _ => join(&resolved, &part),
        };
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() && links < MAX_LINKS => {
                links += 1;
                let Ok(target) = std::fs::read_link(&candidate) else { return candidate };
                let target = target.to_string_lossy().into_owned();
                if target.starts_with('/') {
                    resolved = String::from("/");
                }
                pending.extend(target.split('/').filter(|p| !p.is_empty()).map(str::to_owned).rev());
            }
            Ok(_) => resolved = candidate,
            Err(_) => {
                let rest: Vec<String> = pending.into_iter().rev().collect();
                return if rest.is_empty() { candidate } else { normalize(&format!("{candidate}/{}", rest.join("/"))) };
            }
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_like_path_resolve() {
        assert_eq!(normalize("/a/b/../c/./d//e/"), "/a/c/d/e");
        assert_eq!(normalize("/../.."), "/");
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
    }

    #[test]
    fn within_means_the_directory_or_below() {
        let dirs = vec!["/home/me/project".to_owned()];
        assert!(is_within("/home/me/project", &dirs));
        assert!(is_within("/home/me/project/a.txt", &dirs));
        assert!(!is_within("/home/me/project2/a.txt", &dirs));
        assert!(!is_within("/home/me", &dirs));
        assert!(!is_within("/home/me/project/a\0", &dirs));
    }
}
