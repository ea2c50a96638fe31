//! The reference's Markdown: markdownify 1.2 (`heading_style=ATX`, its other defaults:
//! `*+-` bullets, `*` and `_` escaped, documents stripped of leading and trailing newlines),
//! ported for the trees `simplify` leaves: block elements and text.

use crate::dom::{Element, Node};
use crate::simplify::python_strip;

/// The ancestors of the element being converted, nearest last.
struct Context<'a> {
    ancestors: Vec<&'a Element>,
}

fn is_heading(name: &str) -> bool {
    name.len() >= 2 && name.starts_with('h') && name[1..].bytes().next().is_some_and(|b| b.is_ascii_digit())
}

fn heading_level(name: &str) -> Option<usize> {
    let digits: String = name[1..].chars().take_while(char::is_ascii_digit).collect();
    if name.starts_with('h') && !digits.is_empty() { digits.parse().ok() } else { None }
}

fn remove_whitespace_inside(name: Option<&str>) -> bool {
    name.is_some_and(|name| {
        is_heading(name)
            || [
                "p",
                "blockquote",
                "article",
                "div",
                "section",
                "ol",
                "ul",
                "li",
                "dl",
                "dt",
                "dd",
                "table",
                "thead",
                "tbody",
                "tfoot",
                "tr",
                "td",
                "th",
            ]
            .contains(&name)
    })
}

fn remove_whitespace_outside(name: Option<&str>) -> bool {
    remove_whitespace_inside(name) || name == Some("pre")
}

/// The Markdown of a simplified article (the `div` `simplify` returns).
pub(crate) fn markdownify(root: &Element) -> String {
    let document = Element::new("[document]", vec![Node::Element(root.clone())]);
    let mut context = Context { ancestors: Vec::new() };
    process_tag(&document, &mut context, &[])
}

fn process_tag<'a>(node: &'a Element, context: &mut Context<'a>, parent_tags: &[&str]) -> String {
    let inside = remove_whitespace_inside(Some(&node.name));
    let children = &node.children;
    let ignorable = |i: usize| match &children[i] {
        Node::Element(_) => false,
        Node::Text(text) if !python_strip(text).is_empty() => false,
        Node::Text(_) => {
            let previous = i.checked_sub(1).map(|j| &children[j]);
            let next = children.get(i + 1);
            (inside && (previous.is_none() || next.is_none()))
                || remove_whitespace_outside(previous.and_then(Node::name))
                || remove_whitespace_outside(next.and_then(Node::name))
        }
    };
    let mut tags: Vec<&str> = parent_tags.to_vec();
    tags.push(&node.name);
    if is_heading(&node.name) || node.name == "td" || node.name == "th" {
        tags.push("_inline");
    }
    if ["pre", "code", "kbd", "samp"].contains(&node.name.as_str()) {
        tags.push("_noformat");
    }
    context.ancestors.push(node);
    let mut strings: Vec<String> = Vec::new();
    for i in (0..children.len()).filter(|i| !ignorable(*i)) {
        let converted = match &children[i] {
            Node::Element(e) => process_tag(e, context, &tags),
            Node::Text(text) => process_text(text, node, i, &tags),
        };
        if !converted.is_empty() {
            strings.push(converted);
        }
    }
    context.ancestors.pop();
    let in_pre = node.name == "pre" || context.ancestors.iter().any(|a| a.name == "pre");
    let text = if in_pre {
        strings.concat()
    } else {
        // Newlines where two children meet: the larger count, at most two.
        let mut parts: Vec<String> = vec![String::new()];
        for string in strings {
            let (mut leading, content, trailing) = split_newlines(&string);
            if parts.last().is_some_and(|last| !last.is_empty()) && !leading.is_empty() {
                let previous = parts.pop().unwrap_or_default();
                leading = "\n".repeat(previous.len().max(leading.len()).min(2));
            }
            parts.extend([leading, content.to_owned(), trailing.to_owned()]);
        }
        parts.concat()
    };
    convert(node, text, context, parent_tags)
}

/// `(leading newlines, content, trailing newlines)`.
fn split_newlines(text: &str) -> (String, &str, &str) {
    let start = text.len() - text.trim_start_matches('\n').len();
    let rest = &text[start..];
    let end = rest.trim_end_matches('\n').len();
    ("\n".repeat(start), &rest[..end], &rest[end..])
}

fn process_text(text: &str, parent: &Element, index: usize, parent_tags: &[&str]) -> String {
    let mut text = text.to_owned();
    if !parent_tags.contains(&"pre") {
        text = collapse_whitespace(&text);
    }
    if !parent_tags.contains(&"_noformat") {
        text = text.replace('*', "\\*").replace('_', "\\_");
    }
    let previous = index.checked_sub(1).and_then(|i| parent.children[i].name());
    let next = parent.children.get(index + 1).and_then(Node::name);
    let inside = remove_whitespace_inside(Some(&parent.name));
    if remove_whitespace_outside(previous) || (inside && index == 0) {
        text = text.trim_start_matches([' ', '\t', '\r', '\n']).to_owned();
    }
    if remove_whitespace_outside(next) || (inside && index + 1 == parent.children.len()) {
        text = text.trim_end_matches(char::is_whitespace).to_owned();
    }
    text
}

/// markdownify without `wrap`: runs of whitespace holding a newline become one newline, other
/// runs of spaces and tabs one space.
fn collapse_whitespace(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let flush = |out: &mut String, run: &mut String| {
        if run.contains(['\r', '\n']) {
            out.push('\n');
        } else if !run.is_empty() {
            out.push(' ');
        }
        run.clear();
    };
    for c in text.chars() {
        if matches!(c, ' ' | '\t' | '\r' | '\n') {
            run.push(c);
        } else {
            flush(&mut out, &mut run);
            out.push(c);
        }
    }
    flush(&mut out, &mut run);
    out
}

fn collapse_all_whitespace(text: &str) -> String {
    text.split([' ', '\t', '\r', '\n']).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Each line with content prefixed (markdownify's `re_line_with_content`).
fn indent_lines(text: &str, prefix: &str, empty: &str) -> String {
    text.split('\n')
        .map(|line| if line.is_empty() { empty.to_owned() } else { format!("{prefix}{line}") })
        .collect::<Vec<_>>()
        .join("\n")
}

fn convert(node: &Element, text: String, context: &Context, parent_tags: &[&str]) -> String {
    let inline = parent_tags.contains(&"_inline");
    match node.name.as_str() {
        "[document]" => text.trim_matches('\n').to_owned(),
        "div" | "article" | "section" | "dl" => {
            if inline {
                return format!(" {} ", python_strip(&text));
            }
            let text = python_strip(&text);
            if text.is_empty() { String::new() } else { format!("\n\n{text}\n\n") }
        }
        "p" => {
            let text = text.trim_matches([' ', '\t', '\r', '\n']);
            if inline {
                format!(" {text} ")
            } else if text.is_empty() {
                String::new()
            } else {
                format!("\n\n{text}\n\n")
            }
        }
        "blockquote" => {
            let text = text.trim_matches([' ', '\t', '\r', '\n']);
            if inline {
                return format!(" {text} ");
            }
            if text.is_empty() {
                return "\n".into();
            }
            let quoted = text
                .split('\n')
                .map(|l| if l.is_empty() { ">".to_owned() } else { format!("> {l}") })
                .collect::<Vec<_>>()
                .join("\n");
            format!("\n{quoted}\n\n")
        }
        "ul" | "ol" => {
            let next = next_block_sibling(node, context);
            let before_paragraph = next.is_some_and(|n| !["ul", "ol"].contains(&n));
            if parent_tags.contains(&"li") {
                format!("\n{}", text.trim_end())
            } else {
                format!("\n\n{text}{}", if before_paragraph { "\n" } else { "" })
            }
        }
        "li" => convert_li(node, &text, context),
        "pre" => {
            if text.is_empty() {
                return String::new();
            }
            // strip_pre: the leading blank lines (up to their last newline), then trailing
            // spaces and newlines.
            let blank = text.len() - text.trim_start_matches([' ', '\n']).len();
            let start = text[..blank].rfind('\n').map_or(0, |i| i + 1);
            let text = text[start..].trim_end_matches([' ', '\n']);
            format!("\n\n```\n{text}\n```\n\n")
        }
        "table" => format!("\n\n{}\n\n", python_strip(&text)),
        "caption" => format!("{}\n\n", python_strip(&text)),
        "figcaption" => format!("\n\n{}\n\n", python_strip(&text)),
        "td" | "th" => format!(" {}{}", python_strip(&text).replace('\n', " "), " |".repeat(colspan(node))),
        "tr" => convert_tr(node, &text, context),
        "dt" => {
            let text = collapse_all_whitespace(python_strip(&text));
            if inline {
                format!(" {text} ")
            } else if text.is_empty() {
                "\n".into()
            } else {
                format!("\n\n{text}\n")
            }
        }
        "dd" => {
            let text = python_strip(&text);
            if inline {
                return format!(" {text} ");
            }
            if text.is_empty() {
                return "\n".into();
            }
            let indented = indent_lines(text, "    ", "");
            format!(":{}\n", &indented[1..])
        }
        name => match heading_level(name) {
            Some(_) if inline => text,
            Some(level) => {
                format!("\n\n{} {}\n\n", "#".repeat(level.clamp(1, 6)), collapse_all_whitespace(python_strip(&text)))
            }
            None => text,
        },
    }
}

fn colspan(cell: &Element) -> usize {
    cell.attr("colspan")
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse().ok())
        .map_or(1, |n: usize| n.clamp(1, 1000))
}

/// The element's parent and its index there.
fn position<'a>(node: &Element, context: &Context<'a>) -> Option<(&'a Element, usize)> {
    let parent = *context.ancestors.last()?;
    let index = parent.children.iter().position(|c| matches!(c, Node::Element(e) if std::ptr::eq(e, node)))?;
    Some((parent, index))
}

fn next_block_sibling<'a>(node: &Element, context: &Context<'a>) -> Option<&'a str> {
    let (parent, index) = position(node, context)?;
    parent.children[index + 1..]
        .iter()
        .find_map(|c| match c {
            Node::Element(e) => Some(Some(e.name.as_str())),
            Node::Text(t) if !python_strip(t).is_empty() => Some(None),
            Node::Text(_) => None,
        })?
        .or(Some("#text"))
}

fn convert_li(node: &Element, text: &str, context: &Context) -> String {
    let text = python_strip(text);
    if text.is_empty() {
        return "\n".into();
    }
    let parent = context.ancestors.last();
    let bullet = match parent {
        Some(parent) if parent.name == "ol" => {
            let start = parent
                .attr("start")
                .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_numeric()))
                .and_then(|s| s.parse::<usize>().ok())
                .unwrap_or(1);
            let earlier = position(node, context)
                .map_or(0, |(p, i)| p.children[..i].iter().filter(|c| c.name() == Some("li")).count());
            format!("{}.", start + earlier)
        }
        _ => {
            let depth = context.ancestors.iter().filter(|a| a.name == "ul").count().saturating_sub(1);
            ["*", "+", "-"][depth % 3].to_owned()
        }
    };
    let bullet = format!("{bullet} ");
    let width = bullet.chars().count();
    let indented = indent_lines(text, &" ".repeat(width), "");
    format!("{bullet}{}\n", indented.chars().skip(width).collect::<String>())
}

fn descendants_named<'a>(element: &'a Element, names: &[&str], out: &mut Vec<&'a Element>) {
    for child in &element.children {
        if let Node::Element(e) = child {
            if names.contains(&e.name.as_str()) {
                out.push(e);
            }
            descendants_named(e, names, out);
        }
    }
}

fn convert_tr(node: &Element, text: &str, context: &Context) -> String {
    let mut cells = Vec::new();
    descendants_named(node, &["td", "th"], &mut cells);
    let (parent, index) = match position(node, context) {
        Some(found) => found,
        None => return format!("|{text}\n"),
    };
    let grandparent = context.ancestors.len().checked_sub(2).map(|i| context.ancestors[i]);
    let is_first_row = !parent.children[..index].iter().any(|c| matches!(c, Node::Element(_)));
    let mut parent_rows = Vec::new();
    descendants_named(parent, &["tr"], &mut parent_rows);
    let is_headrow = cells.iter().all(|c| c.name == "th") || (parent.name == "thead" && parent_rows.len() == 1);
    let grandparent_theads = grandparent.map_or(0, |g| {
        let mut theads = Vec::new();
        descendants_named(g, &["thead"], &mut theads);
        theads.len()
    });
    // markdownify: the first row, unless it opens a tbody that follows a thead.
    let is_head_row_missing = is_first_row && (parent.name != "tbody" || grandparent_theads < 1);
    let full_colspan: usize = cells.iter().map(|c| colspan(c)).sum();
    let parent_has_previous_element = grandparent.is_some_and(|g| {
        let at = g.children.iter().position(|c| matches!(c, Node::Element(e) if std::ptr::eq(e, parent)));
        at.is_some_and(|at| g.children[..at].iter().any(|c| matches!(c, Node::Element(_))))
    });
    let mut overline = String::new();
    let mut underline = String::new();
    if is_headrow && is_first_row {
        underline = format!("| {} |\n", vec!["---"; full_colspan].join(" | "));
    } else if is_head_row_missing
        || (is_first_row && (parent.name == "table" || (parent.name == "tbody" && !parent_has_previous_element)))
    {
        overline.push_str(&format!("| {} |\n", vec![""; full_colspan].join(" | ")));
        overline.push_str(&format!("| {} |\n", vec!["---"; full_colspan].join(" | ")));
    }
    format!("{overline}|{text}\n{underline}")
}
