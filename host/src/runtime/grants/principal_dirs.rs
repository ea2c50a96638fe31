//! Directories of one principal's own (`[[plugin.NAME.dirs]] path = "/srv/mcpbox/users/{sub}"`):
//! the operator names a base directory, and each call made on behalf of a principal sees only
//! the principal's directory under it, created on first use. The protocol layer names the
//! directory (injectively from the token's issuer and subject, `access/tokens`); this file only
//! makes and checks it, through a capability to the base (cap-std): the name is one path
//! component, and what stands under the base at that name must be a real directory, not a
//! symlink, so nothing under the base can point a principal elsewhere. A call without a
//! principal (stdio, the static token) gets no such directory at all.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::quota::Quota;
use super::roots::Grant;

/// The grants of a call made on behalf of the principal whose directory is `name` (or of none):
/// each per-principal grant pointed at that principal's directory under its base, created if
/// missing; without a principal, left out.
pub(crate) fn resolve(grants: &[Grant], name: Option<&str>) -> Result<Vec<Grant>> {
    let mut resolved = Vec::with_capacity(grants.len());
    for grant in grants {
        if !grant.per_principal {
            resolved.push(grant.clone());
            continue;
        }
        let Some(name) = name else { continue };
        let host_path = if crate::switched_off!("dirs.per-principal") {
            grant.host_path.clone()
        } else {
            ensure(&grant.host_path, name)?
        };
        // Each principal's directory is a tree of its own, with a budget of its own.
        let quota = grant.quota.as_ref().map(|q| Quota { tree: Arc::from(host_path.as_path()), limits: q.limits });
        resolved.push(Grant { host_path, per_principal: false, quota, ..grant.clone() });
    }
    Ok(resolved)
}

/// `base/name`, created if missing; refused if `name` is not one plain component or what is
/// there is not a directory of its own.
fn ensure(base: &Path, name: &str) -> Result<PathBuf> {
    let plain = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0']);
    if !plain {
        bail!("`{name}` is not a directory name");
    }
    let base_dir = Dir::open_ambient_dir(base, ambient_authority())
        .with_context(|| format!("cannot open the per-principal base directory {}", base.display()))?;
    match base_dir.create_dir(name) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", base.join(name).display())),
    }
    let kind = base_dir.symlink_metadata(name).with_context(|| format!("cannot read {}", base.join(name).display()))?;
    if !kind.is_dir() {
        bail!("{} is not a directory (a symlink or a file stands there)", base.join(name).display());
    }
    Ok(base.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(path: &Path, per_principal: bool) -> Grant {
        Grant {
            name: "home".into(),
            host_path: path.to_owned(),
            guest_path: "/roots/home".into(),
            writable: true,
            per_principal,
            quota: None,
        }
    }

    #[test]
    fn each_principal_gets_its_own_directory_and_none_gets_nothing() {
        let base = tempfile::tempdir().unwrap();
        let shared = tempfile::tempdir().unwrap();
        let grants = [grant(base.path(), true), grant(shared.path(), false)];
        let ada = resolve(&grants, Some("ada")).unwrap();
        assert_eq!(ada[0].host_path, base.path().join("ada"));
        assert!(base.path().join("ada").is_dir());
        assert_eq!(ada[1].host_path, shared.path());
        let nobody = resolve(&grants, None).unwrap();
        assert_eq!(nobody.len(), 1);
        assert_eq!(nobody[0].host_path, shared.path());
    }

    #[test]
    fn a_symlink_or_a_path_in_its_place_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), base.path().join("mallory")).unwrap();
        let grants = [grant(base.path(), true)];
        let error = resolve(&grants, Some("mallory")).unwrap_err();
        assert!(format!("{error:#}").contains("not a directory"), "{error:#}");
        for bad in ["..", ".", "a/b", ""] {
            assert!(resolve(&grants, Some(bad)).is_err(), "{bad}");
        }
        std::fs::write(base.path().join("file"), "x").unwrap();
        assert!(resolve(&grants, Some("file")).is_err());
    }
}
