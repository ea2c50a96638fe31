//! Which of a plugin's tools need the person's yes before each call (`[plugin.NAME] approve`):
//! none unless the operator names them, by the plugin's own tool names, a trailing `*` matching
//! any rest, or all of them. The question itself is the protocol layer's (`mcp/call/checks/approval.rs`).

/// The tools of one plugin that need an approval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Approve {
    /// None (the default).
    #[default]
    None,
    /// Every tool of the plugin (`approve = true`).
    All,
    /// These names; one ending in `*` matches every name it begins (`approve = ["delete_*"]`).
    Tools(Vec<String>),
}

impl Approve {
    /// Whether a call of the tool the plugin calls `tool` needs an approval.
    pub fn needs(&self, tool: &str) -> bool {
        match self {
            Approve::None => false,
            Approve::All => true,
            Approve::Tools(patterns) => patterns.iter().any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => tool.starts_with(prefix),
                None => pattern == tool,
            }),
        }
    }

    /// The names that match no tool of `offered` (a typo would leave a risky tool unguarded).
    pub fn unmatched<'a>(&'a self, offered: &[&str]) -> Vec<&'a str> {
        let Approve::Tools(patterns) = self else { return Vec::new() };
        patterns
            .iter()
            .filter(|pattern| !offered.iter().any(|tool| Approve::Tools(vec![(*pattern).clone()]).needs(tool)))
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Approve;

    #[test]
    fn names_and_trailing_stars_match_the_plugins_own_tool_names() {
        let approve = Approve::Tools(vec!["delete_*".into(), "send_mail".into()]);
        assert!(approve.needs("delete_file") && approve.needs("delete_") && approve.needs("send_mail"));
        assert!(!approve.needs("send_mail_later") && !approve.needs("undelete_file") && !approve.needs("read"));
        assert!(Approve::All.needs("anything") && !Approve::None.needs("anything"));
        assert_eq!(approve.unmatched(&["delete_file", "read"]), ["send_mail"]);
        assert!(Approve::Tools(vec!["*".into()]).needs("x"));
    }
}
