//! Which of the catalog's tools, prompts and resources a principal may use, from the operator's
//! `[[auth.entitlements]]` (docs/authorization.md): a scope or a claim grants plugins (all they
//! serve) or names; nothing is granted that no entitlement names. A refusal names the scope of
//! the first entitlement in the file that would allow the request (MCP `basic/authorization`
//! §Scope Challenge Handling), unless every entitlement that would is hidden: then the name is
//! as unknown as a name nobody serves.

use super::principal::Principal;
use crate::config::{Entitlement, Grantee};

/// What kind of thing a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    /// A resource URI, or a resource template's URI template.
    Resource,
}

impl Kind {
    fn patterns(self, entitlement: &Entitlement) -> &[String] {
        match self {
            Kind::Tool => &entitlement.tools,
            Kind::Prompt => &entitlement.prompts,
            Kind::Resource => &entitlement.resources,
        }
    }

    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }
}

/// One thing a request names: its kind, its name (or URI) and the plugin serving it (`None`
/// when no plugin is known to serve it yet).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item<'a> {
    pub(crate) kind: Kind,
    pub(crate) name: &'a str,
    pub(crate) plugin: Option<&'a str>,
}

/// Whether a principal may use an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Allowed,
    /// Not with this token; `scope`, if any, would allow it (a claim-only grant names none).
    Refused {
        scope: Option<String>,
    },
    /// Not, and not to be told it exists.
    Hidden,
}

/// The operator's entitlements, in the file's order.
pub(crate) struct Entitlements(Vec<Entitlement>);

impl Entitlements {
    pub(crate) fn new(rules: Vec<Entitlement>) -> Entitlements {
        Entitlements(rules)
    }

    /// Whether any are configured (without any, a valid token may use everything).
    pub(crate) fn any(&self) -> bool {
        !self.0.is_empty()
    }

    /// Whether `principal` may use `item`.
    pub(crate) fn verdict(&self, principal: &Principal, item: Item<'_>) -> Verdict {
        if self.0.is_empty() || crate::switched_off!("access.entitlements") {
            return Verdict::Allowed;
        }
        let mut granting = self.0.iter().filter(|e| grants(e, item)).peekable();
        if granting.peek().is_none() {
            return Verdict::Hidden;
        }
        let mut step_up = None;
        for entitlement in granting {
            if holds(principal, &entitlement.grantee) {
                return Verdict::Allowed;
            }
            if !entitlement.hidden {
                step_up.get_or_insert(&entitlement.grantee);
            }
        }
        match step_up {
            Some(Grantee::Scope(scope)) => Verdict::Refused { scope: Some(scope.clone()) },
            Some(Grantee::Claim { .. }) => Verdict::Refused { scope: None },
            None => Verdict::Hidden,
        }
    }
}

fn holds(principal: &Principal, grantee: &Grantee) -> bool {
    match grantee {
        Grantee::Scope(scope) => principal.has_scope(scope),
        Grantee::Claim { name, value } => principal.has_claim(name, value),
    }
}

fn grants(entitlement: &Entitlement, item: Item<'_>) -> bool {
    item.plugin.is_some_and(|plugin| entitlement.plugins.iter().any(|p| matches(p, plugin)))
        || item.kind.patterns(entitlement).iter().any(|p| matches(p, item.name))
}

/// `pattern` is a name, or a start followed by `*`.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(start) => name.starts_with(start),
        None => pattern == name,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn rule(grantee: Grantee, plugins: &[&str], tools: &[&str], hidden: bool) -> Entitlement {
        Entitlement {
            grantee,
            plugins: plugins.iter().map(|s| s.to_string()).collect(),
            tools: tools.iter().map(|s| s.to_string()).collect(),
            prompts: Vec::new(),
            resources: Vec::new(),
            hidden,
        }
    }

    fn principal(scopes: &[&str], groups: &[&str]) -> Principal {
        Principal::new(
            "https://id.example".into(),
            "ada".into(),
            scopes.iter().map(|s| s.to_string()).collect(),
            u64::MAX,
            BTreeMap::from([("groups".into(), groups.iter().map(|s| s.to_string()).collect())]),
        )
    }

    fn tool<'a>(name: &'a str, plugin: &'a str) -> Item<'a> {
        Item { kind: Kind::Tool, name, plugin: Some(plugin) }
    }

    #[test]
    fn a_scope_or_claim_allows_what_it_names_and_a_refusal_names_the_first_scope_that_would() {
        let rules = Entitlements::new(vec![
            rule(Grantee::Scope("echo:call".into()), &[], &["echo.*"], false),
            rule(Grantee::Scope("admin".into()), &["*"], &[], false),
            rule(Grantee::Claim { name: "groups".into(), value: "staff".into() }, &["files"], &[], false),
            rule(Grantee::Scope("secret".into()), &[], &["vault.open"], true),
        ]);
        let nobody = principal(&[], &[]);
        assert_eq!(rules.verdict(&principal(&["echo:call"], &[]), tool("echo.echo", "echo")), Verdict::Allowed);
        assert_eq!(rules.verdict(&principal(&["admin"], &[]), tool("files.read", "files")), Verdict::Allowed);
        assert_eq!(rules.verdict(&principal(&[], &["staff"]), tool("files.read", "files")), Verdict::Allowed);
        assert_eq!(
            rules.verdict(&nobody, tool("echo.echo", "echo")),
            Verdict::Refused { scope: Some("echo:call".into()) }
        );
        // Allowed by `admin`'s `*` too, which is not hidden: the challenge names it.
        assert_eq!(
            rules.verdict(&nobody, tool("vault.open", "vault")),
            Verdict::Refused { scope: Some("admin".into()) }
        );
        // Only a hidden entitlement, or none, names it: unknown.
        let hidden_only = Entitlements::new(vec![rule(Grantee::Scope("secret".into()), &[], &["vault.open"], true)]);
        assert_eq!(hidden_only.verdict(&nobody, tool("vault.open", "vault")), Verdict::Hidden);
        assert_eq!(hidden_only.verdict(&nobody, tool("echo.echo", "echo")), Verdict::Hidden);
        assert_eq!(hidden_only.verdict(&principal(&["secret"], &[]), tool("vault.open", "vault")), Verdict::Allowed);
        // A plugin pattern needs the plugin known; a name pattern does not.
        let unowned = Item { kind: Kind::Tool, name: "files.read", plugin: None };
        assert_eq!(rules.verdict(&principal(&[], &["staff"]), unowned), Verdict::Hidden);
        let unowned = Item { kind: Kind::Tool, name: "echo.echo", plugin: None };
        assert_eq!(rules.verdict(&principal(&["echo:call"], &[]), unowned), Verdict::Allowed);
        // A claim-only grant: refused, with no scope to step up to.
        let staff_only = Entitlements::new(vec![rule(
            Grantee::Claim { name: "groups".into(), value: "staff".into() },
            &["files"],
            &[],
            false,
        )]);
        assert_eq!(staff_only.verdict(&nobody, tool("files.read", "files")), Verdict::Refused { scope: None });
        // No entitlements: everything.
        assert_eq!(Entitlements::new(Vec::new()).verdict(&nobody, tool("x", "y")), Verdict::Allowed);
    }
}
