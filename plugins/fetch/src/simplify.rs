//! The reference's HTML simplification: readabilipy's pure-Python `simple_tree_from_html_string`
//! (the mode `mcp-server-fetch` runs in without Node.js), pass by pass, on an owned tree. It keeps
//! the text and the block structure (headings, paragraphs, lists, tables, quotes, code blocks)
//! and drops everything else: scripts, styles, navigation, forms, media, links and inline
//! formatting (their text stays).

use unicode_normalization::UnicodeNormalization;

use crate::dom::{self, Element, Node};

const DELETE: &[&str] = &[
    "button", "datalist", "fieldset", "form", "input", "label", "legend", "meter", "optgroup", "option", "output",
    "progress", "select", "textarea", "area", "img", "map", "picture", "source", "audio", "track", "video", "embed",
    "iframe", "math", "object", "param", "svg", "details", "dialog", "summary", "canvas", "noscript", "script",
    "template", "data", "link", "style", "nav",
];
const REPLACE_WITH_CONTENTS: &[&str] = &[
    "a", "abbr", "address", "b", "bdi", "bdo", "center", "cite", "code", "del", "dfn", "em", "i", "ins", "kbs", "mark",
    "rb", "ruby", "rp", "rt", "rtc", "s", "samp", "small", "span", "strong", "time", "u", "var", "wbr",
];
const SPECIAL: &[&str] = &["q", "sub", "sup"];
pub(crate) const BLOCK_WHITELIST: &[&str] = &[
    "article",
    "aside",
    "blockquote",
    "caption",
    "colgroup",
    "col",
    "div",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "td",
    "th",
    "ul",
];
const STRUCTURAL: &[&str] = &["html", "head", "body"];
const METADATA: &[&str] = &["meta", "link", "base", "title"];
const LINEBREAK: &[&str] = &["br", "hr"];
/// Block elements a paragraph may not hold, in the order the reference splits them out.
const ILLEGAL_IN_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "canvas",
    "dd",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "noscript",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tfoot",
    "ul",
    "video",
];
const BREAK: &str = "|BREAK_HERE|";

fn known(name: &str) -> bool {
    [STRUCTURAL, METADATA, LINEBREAK, DELETE, REPLACE_WITH_CONTENTS, SPECIAL, BLOCK_WHITELIST]
        .iter()
        .any(|set| set.contains(&name))
}

/// The simplified article: a `div` holding the page's text in block elements.
pub(crate) fn simplify(html: &str) -> Element {
    let html = html.replace("<!---->", "<!-- -->");
    let mut soup = Element::new("[document]", dom::parse(&html));
    each_element(&mut soup, &mut |e| e.attrs.retain(|(name, _)| name != "class" && name != "style"));
    soup.children = rebuild(std::mem::take(&mut soup.children), &|node| match node {
        Node::Element(e) if DELETE.contains(&e.name.as_str()) => Vec::new(),
        Node::Element(e) if REPLACE_WITH_CONTENTS.contains(&e.name.as_str()) => e.children,
        node => vec![node],
    });
    soup.children = rebuild(std::mem::take(&mut soup.children), &|node| match node {
        Node::Element(e) if e.name == "q" => {
            [vec![Node::Text("\"".into())], e.children, vec![Node::Text("\"".into())]].concat()
        }
        Node::Element(e) if e.name == "sub" => [vec![Node::Text("_".into())], e.children].concat(),
        Node::Element(e) if e.name == "sup" => [vec![Node::Text("^".into())], e.children].concat(),
        node => vec![node],
    });
    soup.children = rebuild(std::mem::take(&mut soup.children), &|node| match node {
        Node::Element(e) if !known(&e.name) => e.children,
        node => vec![node],
    });
    consolidate(&mut soup);
    remove_empty_strings(&mut soup);
    unnest_paragraphs(&mut soup);
    insert_paragraph_breaks(&mut soup);
    wrap_bare_text(&mut soup);
    each_element(&mut soup, &mut |e| {
        for child in &mut e.children {
            if let Node::Text(text) = child {
                *text = normalise_text(text);
            }
        }
    });
    soup.children.retain_mut(prune);
    while let Some(Node::Element(first)) = soup.children.first()
        && STRUCTURAL.contains(&first.name.as_str())
    {
        let Node::Element(first) = soup.children.remove(0) else { break };
        soup.children.splice(0..0, first.children);
    }
    if let [Node::Element(only)] = soup.children.as_slice()
        && only.name == "div"
    {
        return only.clone();
    }
    Element::new("div", soup.children)
}

fn each_element(element: &mut Element, f: &mut impl FnMut(&mut Element)) {
    f(element);
    for child in &mut element.children {
        if let Node::Element(e) = child {
            each_element(e, f);
        }
    }
}

/// Rebuilds a list of nodes, each replaced by what `f` makes of it, parents before their children.
fn rebuild(nodes: Vec<Node>, f: &dyn Fn(Node) -> Vec<Node>) -> Vec<Node> {
    let mut out = Vec::new();
    for node in nodes {
        // Parents first, as the reference's document-order passes see them: an element's
        // replacement (its children) is then rebuilt in turn.
        let replaced = f(node);
        for node in replaced {
            match node {
                Node::Element(mut e) => {
                    e.children = rebuild(std::mem::take(&mut e.children), f);
                    out.push(Node::Element(e));
                }
                text => out.push(text),
            }
        }
    }
    out
}

/// Adjacent strings joined into one, everywhere.
fn consolidate(element: &mut Element) {
    let mut merged: Vec<Node> = Vec::new();
    for child in std::mem::take(&mut element.children) {
        match (merged.last_mut(), child) {
            (Some(Node::Text(previous)), Node::Text(text)) => previous.push_str(&text),
            (_, child) => merged.push(child),
        }
    }
    element.children = merged;
    for child in &mut element.children {
        if let Node::Element(e) = child {
            consolidate(e);
        }
    }
}

fn remove_empty_strings(element: &mut Element) {
    element.children.retain(|child| !matches!(child, Node::Text(text) if normalise_text(text).is_empty()));
    for child in &mut element.children {
        if let Node::Element(e) = child {
            remove_empty_strings(e);
        }
    }
}

fn contains(element: &Element, name: &str) -> bool {
    element.children.iter().any(|c| matches!(c, Node::Element(e) if e.name == name || contains(e, name)))
}

/// Splits out block elements a paragraph holds directly (the HTML parser already closes a
/// paragraph before most of them; `unnest_paragraphs`).
fn unnest_paragraphs(element: &mut Element) {
    for name in ILLEGAL_IN_P {
        while split_first_paragraph(element, name) {}
    }
}

/// The first `p` (document order) holding a `name`: replaced by a `p` of what came before the
/// first such element (nearest first, as the reference appends them), the element, and a `p`
/// of what came after. True if one was split.
fn split_first_paragraph(element: &mut Element, name: &str) -> bool {
    for i in 0..element.children.len() {
        let Node::Element(child) = &mut element.children[i] else { continue };
        if child.name == "p" && contains(child, name) {
            let p = std::mem::replace(child, Element::new("p", Vec::new()));
            let pieces = split_paragraph(p, name);
            element.children.splice(i..=i, pieces);
            return true;
        }
        if split_first_paragraph(child, name) {
            return true;
        }
    }
    false
}

fn split_paragraph(mut p: Element, name: &str) -> Vec<Node> {
    // The nested element's own siblings, wherever it sits; the rest of `p` goes with `p`.
    fn take(element: &mut Element, name: &str) -> Option<(Vec<Node>, Node, Vec<Node>)> {
        let index = element.children.iter().position(|c| c.name() == Some(name))?;
        let after = element.children.split_off(index + 1);
        let nested = element.children.pop()?;
        let before = std::mem::take(&mut element.children);
        Some((before, nested, after))
    }
    fn find(element: &mut Element, name: &str) -> Option<(Vec<Node>, Node, Vec<Node>)> {
        if let Some(found) = take(element, name) {
            return Some(found);
        }
        element.children.iter_mut().find_map(|c| match c {
            Node::Element(e) if contains(e, name) || e.name == name => find(e, name),
            _ => None,
        })
    }
    match find(&mut p, name) {
        Some((mut before, nested, after)) => {
            before.reverse();
            vec![Node::Element(Element::new("p", before)), nested, Node::Element(Element::new("p", after))]
        }
        None => vec![Node::Element(p)],
    }
}

/// Line breaks: one `br` is a space, two or more (and every `hr`) end a paragraph.
fn insert_paragraph_breaks(element: &mut Element) {
    mark_breaks(element);
    consolidate(element);
    // The document itself is no `p`: nothing follows it.
    let _ = split_breaks(element);
}

fn mark_breaks(element: &mut Element) {
    let mut out: Vec<Node> = Vec::new();
    let mut run = 0;
    let flush = |out: &mut Vec<Node>, run: &mut usize| {
        match *run {
            0 => {}
            1 => out.push(Node::Text(" ".into())),
            _ => out.push(Node::Text(BREAK.into())),
        }
        *run = 0;
    };
    for child in std::mem::take(&mut element.children) {
        match child {
            Node::Element(e) if e.name == "br" => run += 1,
            child => {
                flush(&mut out, &mut run);
                out.push(child);
            }
        }
    }
    flush(&mut out, &mut run);
    for child in &mut out {
        match child {
            Node::Element(e) if e.name == "hr" => *child = Node::Text(BREAK.into()),
            Node::Element(e) => mark_breaks(e),
            Node::Text(_) => {}
        }
    }
    element.children = out;
}

/// Splits the strings holding break markers; returns the paragraphs that follow `element` (a
/// `p` split in several).
fn split_breaks(element: &mut Element) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    let mut following: Vec<Node> = Vec::new();
    for child in std::mem::take(&mut element.children) {
        match child {
            Node::Text(text) if text.contains(BREAK) => {
                let mut fragments = text.split(BREAK).map(|s| Node::Text(python_strip(s).to_owned()));
                out.extend(fragments.next());
                if element.name == "p" {
                    following.extend(fragments.map(|f| Node::Element(Element::new("p", vec![f]))));
                } else {
                    out.extend(fragments);
                }
            }
            Node::Element(mut e) => {
                let after = split_breaks(&mut e);
                out.push(Node::Element(e));
                out.extend(after);
            }
            text => out.push(text),
        }
    }
    element.children = out;
    following
}

/// Text not alone in a block element goes into a `p` of its own.
fn wrap_bare_text(element: &mut Element) {
    let alone_in_block = BLOCK_WHITELIST.contains(&element.name.as_str()) && element.children.len() == 1;
    for child in &mut element.children {
        match child {
            Node::Text(text) if !alone_in_block => {
                *child = Node::Element(Element::new("p", vec![Node::Text(std::mem::take(text))]));
            }
            Node::Element(e) => wrap_bare_text(e),
            Node::Text(_) => {}
        }
    }
}

/// Keeps an element only if some text remains in it.
fn prune(node: &mut Node) -> bool {
    match node {
        Node::Text(_) => true,
        Node::Element(e) => {
            e.children.retain_mut(prune);
            e.children.iter().any(|c| match c {
                Node::Text(text) => !text.is_empty(),
                Node::Element(_) => true,
            })
        }
    }
}

/// readabilipy's `normalise_text`: control characters out, NFKC, whitespace runs to one space,
/// trimmed.
pub(crate) fn normalise_text(text: &str) -> String {
    let kept: String = text.chars().filter(|c| !is_control(*c)).collect();
    let normal: String = kept.nfkc().collect();
    normal.split(char::is_whitespace).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Python's `str.strip()`: Unicode whitespace at both ends.
pub(crate) fn python_strip(text: &str) -> &str {
    text.trim_matches(char::is_whitespace)
}

/// Unicode categories Cc, Cf, Co (and the noncharacters of Cn) but tab, newline, CR and form feed.
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r' | '\u{c}') {
        return false;
    }
    let n = c as u32;
    matches!(n,
        0x00..=0x1F | 0x7F..=0x9F // Cc
        | 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
        | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F // Cf
        | 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD // Co
        | 0xFDD0..=0xFDEF) // noncharacters (Cn)
        || (n & 0xFFFE) == 0xFFFE
}
