//! An owned HTML tree: what html5ever (the WHATWG parsing algorithm html5lib implements, the
//! reference's parser) builds, without comments and doctypes, which the reference removes first.

use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    Element(Element),
    Text(String),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) attrs: Vec<(String, String)>,
    pub(crate) children: Vec<Node>,
}

impl Element {
    pub(crate) fn new(name: &str, children: Vec<Node>) -> Element {
        Element { name: name.to_owned(), attrs: Vec::new(), children }
    }

    pub(crate) fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

impl Node {
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            Node::Element(e) => Some(&e.name),
            Node::Text(_) => None,
        }
    }
}

/// The document's children (the `html` element, after the parser's fixes).
pub(crate) fn parse(html: &str) -> Vec<Node> {
    // html5lib parses with scripting off: a `noscript` holds markup, not raw text.
    let options = html5ever::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts { scripting_enabled: false, ..Default::default() },
        ..Default::default()
    };
    let dom = html5ever::parse_document(RcDom::default(), options).one(html);
    convert_children(&dom.document)
}

fn convert_children(handle: &Handle) -> Vec<Node> {
    handle.children.borrow().iter().filter_map(convert).collect()
}

fn convert(handle: &Handle) -> Option<Node> {
    match &handle.data {
        NodeData::Text { contents } => Some(Node::Text(contents.borrow().to_string())),
        NodeData::Element { name, attrs, template_contents, .. } => {
            // A template's content lives apart; the reference deletes templates anyway.
            let children = match template_contents.borrow().as_ref() {
                Some(content) => convert_children(content),
                None => convert_children(handle),
            };
            let attrs = attrs.borrow().iter().map(|a| (a.name.local.to_string(), a.value.to_string())).collect();
            Some(Node::Element(Element { name: name.local.to_string(), attrs, children }))
        }
        _ => None,
    }
}
