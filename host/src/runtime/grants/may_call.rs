//! Which served tools a plugin may call through the host (`[plugin.NAME] may_call`, WIT 0.1.4
//! `host.call-tool`): none unless the operator names them, by the names clients see (prefix
//! included), a trailing `*` matching any rest (`["github.*", "textstats.stats"]`). A tool
//! named here is still called as the client would call it: the principal's entitlements, the
//! person's yes and the callee's own grants all apply (`mcp/compose.rs`).

/// The served tools one plugin may call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MayCall(Vec<String>);

impl MayCall {
    /// The operator's patterns, as written.
    pub fn new(patterns: Vec<String>) -> MayCall {
        MayCall(patterns)
    }

    /// Whether the plugin may call the tool served as `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        if crate::switched_off!("compose.may-call") {
            return true;
        }
        self.0.iter().any(|pattern| match pattern.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => pattern == tool,
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
        assert!(may.allows("github.list_issues") && may.allows("textstats.stats"));
        assert!(!may.allows("textstats.stats_all") && !may.allows("githubx.y") && !may.allows("filesystem.read"));
        assert!(!MayCall::default().allows("anything") && MayCall::default().is_empty());
    }
}
