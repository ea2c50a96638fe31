//! Tool annotations the host vouches for. `readOnlyHint`, `destructiveHint` and
//! `openWorldHint` are a plugin's claims, but mcpbox knows what it granted: a plugin with no
//! writable directory and no network cannot change the world, one without network cannot
//! reach it, and one with either may (a POST changes the world). Where the grants decide, the
//! host's value replaces the plugin's (docs/config.md has the table); `idempotentHint` and
//! `title` stay the plugin's.

use crate::runtime::engine::bindings::tools::ToolAnnotations;
use crate::runtime::grants::policy::Policy;

/// What a plugin can reach beyond its sandbox, at most (a client's roots only narrow it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    /// Some directory it sees is writable.
    pub writes: bool,
    /// It may make outgoing HTTP requests.
    pub network: bool,
    /// It may call other served tools (`may_call`): what it reaches is also what they reach
    /// (`with_callees`), and never only reading, since which tools it calls is its own choice.
    pub composes: bool,
}

impl Reach {
    /// What `policy` lets a plugin reach; `shared_writable`: some shared root is writable.
    pub fn of(policy: &Policy, shared_writable: bool) -> Reach {
        Reach {
            writes: (policy.shared_roots && shared_writable) || policy.dirs.iter().any(|d| d.dir.writable),
            network: policy.network.as_ref().is_some_and(|n| !n.allow.is_empty()),
            composes: !policy.may_call.is_empty(),
        }
    }

    /// The reach of a plugin that may call tools of plugins reaching `callees`: the union.
    pub fn with_callees(self, callees: impl IntoIterator<Item = Reach>) -> Reach {
        if crate::switched_off!("compose.annotations-union") {
            return self;
        }
        callees.into_iter().fold(self, |reach, callee| Reach {
            writes: reach.writes || callee.writes,
            network: reach.network || callee.network,
            composes: reach.composes,
        })
    }
}

/// The annotations to list for a tool whose plugin can reach `reach`, and the hints where the
/// host's value replaced a claim the plugin made (`name: claimed → vouched`).
pub fn vouch(claimed: Option<&ToolAnnotations>, reach: Reach) -> (ToolAnnotations, Vec<String>) {
    let mut vouched = claimed.cloned().unwrap_or(ToolAnnotations {
        title: None,
        read_only_hint: None,
        destructive_hint: None,
        idempotent_hint: None,
        open_world_hint: None,
    });
    if crate::switched_off!("annotations.vouched") {
        return (vouched, Vec::new());
    }
    let mut replaced = Vec::new();
    let mut set = |name: &str, hint: &mut Option<bool>, value: bool| {
        if let Some(claim) = *hint
            && claim != value
        {
            replaced.push(format!("{name}: {claim} → {value}"));
        }
        *hint = Some(value);
    };
    let changes_world = reach.writes || reach.network;
    if !changes_world && !reach.composes {
        set("readOnlyHint", &mut vouched.read_only_hint, true);
    } else if !changes_world {
        // A composer whose callees only read: which tools it calls is its own choice.
        if vouched.read_only_hint == Some(true) {
            set("readOnlyHint", &mut vouched.read_only_hint, false);
        }
    } else {
        if vouched.read_only_hint == Some(true) {
            set("readOnlyHint", &mut vouched.read_only_hint, false);
        }
        if vouched.destructive_hint == Some(false) {
            set("destructiveHint", &mut vouched.destructive_hint, true);
        }
    }
    if !reach.network {
        set("openWorldHint", &mut vouched.open_world_hint, false);
    }
    (vouched, replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(read_only: Option<bool>, destructive: Option<bool>, open_world: Option<bool>) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("t".into()),
            read_only_hint: read_only,
            destructive_hint: destructive,
            idempotent_hint: Some(true),
            open_world_hint: open_world,
        }
    }

    fn hints(a: &ToolAnnotations) -> (Option<bool>, Option<bool>, Option<bool>) {
        (a.read_only_hint, a.destructive_hint, a.open_world_hint)
    }

    /// Each row of the table in docs/config.md.
    #[test]
    fn the_grants_decide_the_hints_they_can_and_the_plugin_keeps_the_rest() {
        let sealed = Reach { writes: false, network: false, composes: false };
        let writes = Reach { writes: true, network: false, composes: false };
        let network = Reach { writes: false, network: true, composes: false };
        // Nothing granted: read-only and closed world, whatever it claims.
        let (a, replaced) = vouch(Some(&claims(Some(false), Some(true), Some(true))), sealed);
        assert_eq!(hints(&a), (Some(true), Some(true), Some(false)));
        assert_eq!(replaced, ["readOnlyHint: false → true", "openWorldHint: true → false"]);
        assert_eq!((a.title.as_deref(), a.idempotent_hint), (Some("t"), Some(true)));
        assert_eq!(hints(&vouch(None, sealed).0), (Some(true), None, Some(false)));
        // A writable directory: never read-only, never "not destructive"; closed world.
        let (a, replaced) = vouch(Some(&claims(Some(true), Some(false), None)), writes);
        assert_eq!(hints(&a), (Some(false), Some(true), Some(false)));
        assert_eq!(replaced, ["readOnlyHint: true → false", "destructiveHint: false → true"]);
        // Network: the same, and open world stays the plugin's claim.
        let (a, _) = vouch(Some(&claims(Some(true), Some(false), Some(false))), network);
        assert_eq!(hints(&a), (Some(false), Some(true), Some(false)));
        let (a, replaced) = vouch(Some(&claims(None, None, Some(true))), network);
        assert_eq!((hints(&a), replaced.len()), ((None, None, Some(true)), 0));
        // Claims that agree with the grants are kept and not reported.
        let (_, replaced) = vouch(Some(&claims(Some(false), Some(true), Some(false))), writes);
        assert!(replaced.is_empty(), "{replaced:?}");
    }

    #[test]
    fn a_composer_reaches_what_its_callees_reach_and_is_never_read_only() {
        let composer = Reach { writes: false, network: false, composes: true };
        // Callees that only read: not read-only still, closed world.
        let (a, replaced) = vouch(Some(&claims(Some(true), None, Some(true))), composer.with_callees([]));
        assert_eq!(hints(&a), (Some(false), None, Some(false)));
        assert_eq!(replaced, ["readOnlyHint: true → false", "openWorldHint: true → false"]);
        // A callee that writes and one on the network: destructive and open world as they are.
        let callees = [
            Reach { writes: true, network: false, composes: false },
            Reach { writes: false, network: true, composes: false },
        ];
        let (a, _) = vouch(Some(&claims(None, Some(false), Some(true))), composer.with_callees(callees));
        assert_eq!(hints(&a), (None, Some(true), Some(true)));
    }
}
