//! Matching URIs against the simple RFC 6570 templates resources use (`test://item/{id}/data`,
//! `file:///{path}`). Only `{name}` expressions are recognised; that covers what MCP servers
//! publish in practice and keeps the guest small.

use crate::TemplateVars;

#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Var(String),
}

#[derive(Debug, Clone)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    pub(crate) fn parse(template: &str) -> Self {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let name = rest[open + 1..open + close].trim_start_matches(['+', '#', '/', '.', ';', '?', '&']);
            parts.push(Part::Var(name.to_owned()));
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        UriTemplate { parts }
    }

    /// The variables of `uri` if it matches. A variable takes the shortest non-empty text up to
    /// the next literal; a variable at the end takes everything left.
    pub(crate) fn matches(&self, uri: &str) -> Option<TemplateVars> {
        let mut vars = TemplateVars::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Part::Var(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.get(1..)?.find(next.as_str())? + 1,
                        _ => rest.len(),
                    };
                    if end == 0 {
                        return None;
                    }
                    vars.insert(name.clone(), rest[..end].to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_middle_and_trailing_variables() {
        let t = UriTemplate::parse("test://template/{id}/data");
        assert_eq!(t.matches("test://template/123/data").unwrap()["id"], "123");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/123/other").is_none());
        let f = UriTemplate::parse("file:///{path}");
        assert_eq!(f.matches("file:///roots/a/b.txt").unwrap()["path"], "roots/a/b.txt");
        assert!(f.matches("http://x").is_none());
    }
}
