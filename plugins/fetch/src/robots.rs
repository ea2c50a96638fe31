//! robots.txt as the reference reads it with Protego 0.7: groups of `User-agent` lines and
//! their rules; the group whose product token matches the user agent best (longest, at a token
//! boundary; `*` last); the longest matching rule wins, `Allow` on ties; `*` and a final `$` in
//! patterns.

pub(crate) struct Robots {
    groups: Vec<(Vec<String>, Vec<Rule>)>,
}

struct Rule {
    allow: bool,
    pattern: String,
}

impl Robots {
    pub(crate) fn parse(text: &str) -> Robots {
        let mut groups: Vec<(Vec<String>, Vec<Rule>)> = Vec::new();
        let mut last_was_agent = false;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or_default();
            let Some((field, value)) = line.split_once(':') else { continue };
            let (field, value) = (field.trim().to_ascii_lowercase(), value.trim());
            match field.as_str() {
                "user-agent" | "useragent" | "user agent" => {
                    let agent = value.to_lowercase();
                    if !last_was_agent || groups.is_empty() {
                        groups.push((Vec::new(), Vec::new()));
                    }
                    if let Some(group) = groups.last_mut() {
                        if agent != "*" && agent.contains('*') {
                            group.0.push(agent.replace('*', ""));
                        }
                        group.0.push(agent);
                    }
                    last_was_agent = true;
                }
                "allow" | "disallow" | "dissallow" | "dissalow" | "disalow" | "diasllow" | "disallaw" => {
                    last_was_agent = false;
                    if let Some(group) = groups.last_mut()
                        && !value.is_empty()
                    {
                        group.1.push(Rule { allow: field == "allow", pattern: value.to_owned() });
                    }
                }
                _ => last_was_agent = false,
            }
        }
        Robots { groups }
    }

    /// Whether `user_agent` may fetch the page whose path (and query) is `path`.
    pub(crate) fn can_fetch(&self, path: &str, user_agent: &str) -> bool {
        if path == "/robots.txt" {
            return true;
        }
        let robot = user_agent.trim().to_lowercase();
        let score = |agent: &str| -> usize {
            if agent == "*" {
                return 1;
            }
            let mut from = 0;
            while let Some(found) = robot[from..].find(agent) {
                let at = from + found;
                let before = robot[..at].chars().next_back();
                if at == 0 || !before.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_') {
                    return agent.len();
                }
                from = at + 1;
            }
            0
        };
        let best = self
            .groups
            .iter()
            .flat_map(|(agents, rules)| agents.iter().filter(|a| !a.is_empty()).map(move |a| (score(a), rules)))
            .filter(|(s, _)| *s > 0)
            .max_by_key(|(s, _)| *s);
        let Some((_, rules)) = best else { return true };
        let mut verdict: Option<(usize, bool)> = None;
        for rule in rules {
            if matches(&rule.pattern, path) {
                let length = rule.pattern.len();
                verdict = match verdict {
                    Some((l, allow)) if l > length || (l == length && allow) => Some((l, allow)),
                    _ => Some((length, rule.allow)),
                };
            }
        }
        verdict.is_none_or(|(_, allow)| allow)
    }
}

/// A robots.txt pattern against a path: a prefix match, `*` any run, `$` the end.
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    fn go(pattern: &[u8], path: &[u8], anchored: bool) -> bool {
        match pattern.split_first() {
            None => !anchored || path.is_empty(),
            Some((b'*', rest)) => (0..=path.len()).any(|i| go(rest, &path[i..], anchored)),
            Some((c, rest)) => path.first() == Some(c) && go(rest, &path[1..], anchored),
        }
    }
    go(pattern.as_bytes(), path.as_bytes(), anchored)
}

#[cfg(test)]
mod tests {
    use super::*;

    const UA: &str = "ModelContextProtocol/1.0 (Autonomous; +https://github.com/modelcontextprotocol/servers)";

    #[test]
    fn groups_rules_and_patterns() {
        let robots = Robots::parse(
            "User-agent: *\nDisallow: /private/\nAllow: /private/ok\n\nUser-agent: otherbot\nDisallow: /\n\n\
             User-agent: modelcontextprotocol\nDisallow: /no-mcp\nDisallow: /*.pdf$\n",
        );
        assert!(!robots.can_fetch("/no-mcp/page", UA), "the matching group wins");
        assert!(robots.can_fetch("/private/x", UA), "only the best group applies");
        assert!(!robots.can_fetch("/files/a.pdf", UA));
        assert!(robots.can_fetch("/files/a.pdf?x", UA));
        let star = Robots::parse("User-agent: *\nDisallow: /private/\nAllow: /private/ok\n");
        assert!(!star.can_fetch("/private/x", UA));
        assert!(star.can_fetch("/private/ok/y", UA), "the longer rule wins");
        assert!(star.can_fetch("/robots.txt", UA));
        assert!(Robots::parse("").can_fetch("/anything", UA));
    }
}
