//! Which served tools a plugin may call through the host (`[plugin.NAME] may_call`, WIT 0.1.4
//! `host.call-tool`): none unless the operator names them, by the names clients see (prefix
//! included), a trailing `*` matching any rest (`["github.*", "textstats.stats"]`). A pattern
//! names a plugin's tools through its prefix (the served name's part the operator chose), never
//! through what a plugin calls its own tools: a plugin served without a prefix that names a
//! tool `time.exfil` is not `time.*` (and the catalog withholds it beside a plugin `time`:
//! `catalog/contests.rs`). A tool
//! named here is still called as the client would call it: the principal's entitlements, the
//! person's yes and the callee's own grants all apply (`mcp/call/compose.rs`).

/// The served tools one plugin may call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MayCall(Vec<String>);

impl MayCall {
    /// The operator's patterns, as written.
    pub fn new(patterns: Vec<String>) -> MayCall {
        MayCall(patterns)
    }

    /// Whether the plugin may call the tool served as `tool` by the plugin whose prefix is
    /// `prefix` (as configured, `"fs."` by default; `""`: served without one).
    pub fn allows(&self, tool: &str, prefix: &str) -> bool {
        if crate::switched_off!("compose.may-call") {
            return true;
        }
        self.0.iter().any(|pattern| {
            let fixed = pattern.strip_suffix('*').unwrap_or(pattern);
            let name = if fixed.len() < pattern.len() { tool.starts_with(fixed) } else { pattern == tool };
            // The pattern's fixed part reaches into the callee's namespace through its prefix
            // (`time.*`, `gh_*`), or is wider than it (`t*`, `*`). A tool of a plugin without a
            // prefix is named only by a pattern without a dot: the dot is the operator's
            // separator, not the plugin's.
            let plugin = if prefix.is_empty() {
                !fixed.contains('.')
            } else {
                fixed.starts_with(prefix) || prefix.starts_with(fixed)
            };
            name && (plugin || crate::switched_off!("compose.may-call-by-plugin"))
        })
    }

    /// Whether it may call no tool at all (the default).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The patterns, as the operator wrote them.
    pub fn patterns(&self) -> &[String] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::MayCall;

    #[test]
    fn served_names_and_trailing_stars() {
        let may = MayCall::new(vec!["github.*".into(), "textstats.stats".into()]);
        assert!(may.allows("github.list_issues", "github.") && may.allows("textstats.stats", "textstats."));
        assert!(!may.allows("textstats.stats_all", "textstats.") && !may.allows("githubx.y", "githubx."));
        assert!(!may.allows("filesystem.read", "filesystem."));
        assert!(!MayCall::default().allows("anything", "") && MayCall::default().is_empty());
    }

    /// Round four: a plugin served without a prefix names a tool `time.exfil`: not `time.*`.
    #[test]
    fn a_pattern_names_the_plugin_not_a_dotted_string() {
        let may = MayCall::new(vec!["time.*".into()]);
        assert!(may.allows("time.get_current_time", "time."));
        assert!(MayCall::new(vec!["gh_*".into()]).allows("gh_issues", "gh_"), "a prefix of the operator's own");
        assert!(!may.allows("time.exfil", ""), "a tool of a plugin without a prefix");
        assert!(MayCall::new(vec!["*".into()]).allows("time.exfil", ""));
        assert!(
            MayCall::new(vec!["echo".into()]).allows("echo", "")
                && !MayCall::new(vec!["echo".into()]).allows("echo", "x.")
        );
    }
}
