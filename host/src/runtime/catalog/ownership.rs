//! Who owns a resource URI. A URI belongs to the plugin whose resource template matches it, or
//! else to the one plugin that lists it; templates that could match the same URI across plugins
//! are contested (`contests`): served by neither, and a URI only they match belongs to nobody,
//! whoever lists it, so ownership never depends on the order of files. Only the owner is asked
//! to read a URI, and only the owner may announce that it changed: a plugin cannot answer, or
//! announce updates, for another plugin's resources.
//!
//! Template expressions (`{x}`, `{+path}`, ...) are taken to match any text, so a collision is
//! reported whenever two templates could match one URI (possibly more often, never less).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The literal text of `template` before its first expression, and after its last; `None`
/// for a template without expressions (it matches itself only).
fn literal_ends(template: &str) -> Option<(&str, &str)> {
    let first = template.find('{')?;
    let last = template.rfind('}')?;
    Some((&template[..first], &template[last + 1..]))
}

/// Whether `uri` matches `template`, expressions matching any text.
pub(crate) fn template_matches(template: &str, uri: &str) -> bool {
    let mut literals = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        literals.push(&rest[..open]);
        rest = rest[open..].find('}').map_or("", |close| &rest[open + close + 1..]);
    }
    if literals.is_empty() {
        return template == uri;
    }
    literals.push(rest);
    let (first, last) = (literals[0], literals[literals.len() - 1]);
    let Some(mut middle) = uri.strip_prefix(first) else { return false };
    let Some(end) = middle.len().checked_sub(last.len()).filter(|&end| middle[end..] == *last) else {
        return false;
    };
    middle = &middle[..end];
    literals[1..literals.len() - 1].iter().all(|literal| match middle.find(literal) {
        Some(at) => {
            middle = &middle[at + literal.len()..];
            true
        }
        None => false,
    })
}

/// Whether some URI could match both templates.
pub(crate) fn templates_overlap(a: &str, b: &str) -> bool {
    match (literal_ends(a), literal_ends(b)) {
        (None, None) => a == b,
        (None, Some(_)) => template_matches(b, a),
        (Some(_), None) => template_matches(a, b),
        (Some((a_start, a_end)), Some((b_start, b_end))) => {
            (a_start.starts_with(b_start) || b_start.starts_with(a_start))
                && (a_end.ends_with(b_end) || b_end.ends_with(a_end))
        }
    }
}

/// Who listed a URI that no template owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lister {
    /// One plugin (its index in the catalog).
    One(usize),
    /// Several: nobody serves it.
    Several,
}

/// The URIs plugins listed, as far as the catalog has seen their listings.
#[derive(Debug, Default)]
pub(crate) struct Listed(Mutex<HashMap<String, Lister>>);

impl Listed {
    /// Records that `plugin` lists `uri`; false if another plugin lists it too (then neither
    /// serves it).
    pub(crate) fn record(&self, plugin: usize, uri: &str) -> bool {
        let mut listed = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = listed.entry(uri.to_owned()).or_insert(Lister::One(plugin));
        match *entry {
            Lister::One(owner) if owner == plugin => true,
            _ => {
                *entry = Lister::Several;
                false
            }
        }
    }

    /// The one plugin that lists `uri`, if the catalog has seen one.
    pub(crate) fn owner(&self, uri: &str) -> Option<usize> {
        match self.0.lock().unwrap_or_else(PoisonError::into_inner).get(uri) {
            Some(Lister::One(plugin)) => Some(*plugin),
            _ => None,
        }
    }
}

/// Who owns which URI in one catalog: its templates (by plugin index), the templates two
/// plugins contested (whose URIs nobody owns), and what was listed.
#[derive(Debug, Default)]
pub(crate) struct Owners {
    templates: Vec<(String, usize)>,
    withheld: Vec<String>,
    listed: Listed,
}

/// Who a URI belongs to by the templates.
enum ByTemplate {
    /// The plugin whose served template matches it.
    Plugin(usize),
    /// Only a withheld (contested) template matches it: nobody, whoever lists it.
    Nobody,
    /// No template matches it: whoever alone lists it.
    Unclaimed,
}

impl Owners {
    /// Owners by `templates`, as (URI template, plugin index), no two of them overlapping
    /// across plugins (`contests` withholds those); `withheld` are the contested ones.
    pub(crate) fn new(templates: Vec<(String, usize)>, withheld: Vec<String>) -> Owners {
        Owners { templates, withheld, listed: Listed::default() }
    }

    fn claim(&self, uri: &str) -> ByTemplate {
        let served = self.templates.iter().find(|(template, _)| template_matches(template, uri));
        match served {
            Some((_, plugin)) => ByTemplate::Plugin(*plugin),
            None if self.withheld.iter().any(|template| template_matches(template, uri)) => ByTemplate::Nobody,
            None => ByTemplate::Unclaimed,
        }
    }

    fn by_template(&self, uri: &str) -> Option<usize> {
        match self.claim(uri) {
            ByTemplate::Plugin(plugin) => Some(plugin),
            _ => None,
        }
    }

    /// The plugin that owns `uri`: its template matches, or (failing that) it alone listed it.
    pub(crate) fn owner_of(&self, uri: &str) -> Option<usize> {
        if crate::switched_off!("catalog.reads-go-to-owner") {
            return self.by_template(uri).or(Some(0));
        }
        match self.claim(uri) {
            ByTemplate::Plugin(plugin) => Some(plugin),
            ByTemplate::Nobody => None,
            ByTemplate::Unclaimed => self.listed.owner(uri),
        }
    }

    /// Records that `plugin` listed `uri`, unless a template (served or contested) claims it.
    pub(crate) fn note_listing(&self, plugin: usize, uri: &str) {
        if matches!(self.claim(uri), ByTemplate::Unclaimed) {
            self.listed.record(plugin, uri);
        }
    }
}

/// The URIs one plugin may announce as updated: those it owns. Cloned into each of its calls'
/// scopes (a reference count, nothing computed per call).
#[derive(Debug, Clone)]
pub struct OwnedUris {
    owners: Arc<Owners>,
    plugin: usize,
}

impl OwnedUris {
    pub(crate) fn new(owners: Arc<Owners>, plugin: usize) -> OwnedUris {
        OwnedUris { owners, plugin }
    }

    /// Whether the plugin owns `uri`.
    pub(crate) fn contains(&self, uri: &str) -> bool {
        self.owners.owner_of(uri) == Some(self.plugin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_and_overlap() {
        assert!(template_matches("file:///{path}", "file:///roots/a/b.txt"));
        assert!(!template_matches("file:///{path}", "files:///x"));
        assert!(template_matches("test://template/{id}/data", "test://template/7/data"));
        assert!(!template_matches("test://template/{id}/data", "test://template/7/other"));
        assert!(template_matches("a://{x}-{y}.txt", "a://1-2.txt"));
        assert!(!template_matches("a://{x}-{y}.txt", "a://12.txt"));
        assert!(templates_overlap("file:///{path}", "file:///{x}/notes"));
        assert!(templates_overlap("file:///{path}", "file:///etc/passwd"));
        assert!(!templates_overlap("file:///{path}", "greeting://{name}"));
        assert!(!templates_overlap("test://template/{id}/data", "test://template/{id}/meta"));
    }

    #[test]
    fn a_uri_listed_by_two_plugins_has_no_owner() {
        let listed = Listed::default();
        assert!(listed.record(0, "x://a"));
        assert!(listed.record(0, "x://a"));
        assert_eq!(listed.owner("x://a"), Some(0));
        assert!(!listed.record(1, "x://a"));
        assert_eq!(listed.owner("x://a"), None);
    }
}
