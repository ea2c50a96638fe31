//! What a plugin may say about itself. Its descriptors (tools, resource templates, prompts)
//! reach every client and every model, so they are bounded and checked like its names: a
//! description, a title, a schema and the whole set each have a size limit, and no text a
//! client shows may carry control characters (a newline or tab in a description is fine) or
//! characters a person would not see (`readable::hidden`), in schemas' strings too.
//! A plugin over a limit is refused at load, naming the item and the limit.

use anyhow::{Result, bail};

use crate::runtime::engine::bindings::{prompts, resources, tools};

/// Longest name of a tool, prompt or template, prefix included.
pub const MAX_NAME_LEN: usize = 128;

/// Whether `name` may be an MCP tool, prompt or template name here.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Tools, resource templates or prompts one plugin may describe, each.
pub const MAX_ITEMS: usize = 1024;
/// A title (of a tool, its annotations, a template, a prompt or an argument).
pub const MAX_TITLE_BYTES: usize = 256;
/// A description.
pub const MAX_DESCRIPTION_BYTES: usize = 64 << 10;
/// An input or output schema, as JSON text.
pub const MAX_SCHEMA_BYTES: usize = 256 << 10;
/// A URI template, or a MIME type.
pub const MAX_URI_TEMPLATE_BYTES: usize = 2048;
/// Arguments of one prompt.
pub const MAX_PROMPT_ARGUMENTS: usize = 64;
/// Everything one plugin describes, in bytes of text.
pub const MAX_DESCRIPTOR_BYTES: usize = 4 << 20;

/// Adds up the text of one plugin's descriptors and checks each piece.
#[derive(Default)]
struct Checker {
    total: usize,
}

impl Checker {
    fn text(&mut self, what: &str, of: &str, text: &str, max: usize, multiline: bool) -> Result<()> {
        self.total += text.len();
        if text.len() > max {
            bail!("the {what} of {of} is {} bytes; the limit is {max}", text.len());
        }
        let control = text.chars().find(|c| c.is_control() && !(multiline && matches!(c, '\n' | '\r' | '\t')));
        if let Some(c) = control {
            bail!("the {what} of {of} contains the control character U+{:04X}", u32::from(c));
        }
        // What a person reviewing it (an approval, a pins diff) would not see, a model would
        // read: tag characters spelling a hidden instruction, bidirectional overrides, ...
        if let Some(c) = crate::readable::first_hidden(text, multiline)
            && !crate::switched_off!("descriptors.invisible-refused")
        {
            bail!("the {what} of {of} contains the invisible character U+{:04X}", u32::from(c));
        }
        Ok(())
    }

    /// A schema's text and every string in it (keys, descriptions, enum values): a JSON escape
    /// (`\\udb40\\udc41` for U+E0041) hides a character from a check of the text alone.
    fn schema(&mut self, what: &str, of: &str, text: &str) -> Result<()> {
        self.text(what, of, text, MAX_SCHEMA_BYTES, true)?;
        fn strings<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
            match value {
                serde_json::Value::String(s) => out.push(s),
                serde_json::Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
                serde_json::Value::Object(map) => map.iter().for_each(|(key, item)| {
                    out.push(key);
                    strings(item, out);
                }),
                _ => {}
            }
        }
        let Ok(parsed) = serde_json::from_str::<serde_json::Value>(text) else { return Ok(()) };
        let mut found = Vec::new();
        strings(&parsed, &mut found);
        for text in found {
            if let Some(c) = crate::readable::first_hidden(text, true)
                && !crate::switched_off!("descriptors.invisible-refused")
            {
                bail!("the {what} of {of} contains the invisible character U+{:04X}", u32::from(c));
            }
        }
        Ok(())
    }

    fn optional(&mut self, what: &str, of: &str, text: &Option<String>, max: usize, multiline: bool) -> Result<()> {
        text.as_deref().map_or(Ok(()), |text| self.text(what, of, text, max, multiline))
    }

    fn count(what: &str, count: usize, max: usize) -> Result<()> {
        if count > max {
            bail!("it describes {count} {what}; the limit is {max}");
        }
        Ok(())
    }

    fn tool(&mut self, tool: &tools::Tool) -> Result<()> {
        let of = format!("tool `{}`", tool.name);
        self.optional("title", &of, &tool.title, MAX_TITLE_BYTES, false)?;
        let annotated = tool.annotations.as_ref().and_then(|a| a.title.clone());
        self.optional("annotations' title", &of, &annotated, MAX_TITLE_BYTES, false)?;
        self.optional("description", &of, &tool.description, MAX_DESCRIPTION_BYTES, true)?;
        self.schema("input schema", &of, &tool.input_schema)?;
        tool.output_schema.as_deref().map_or(Ok(()), |schema| self.schema("output schema", &of, schema))
    }

    fn template(&mut self, template: &resources::ResourceTemplate) -> Result<()> {
        let of = format!("resource template `{}`", template.name);
        self.text("URI template", &of, &template.uri_template, MAX_URI_TEMPLATE_BYTES, false)?;
        if template.uri_template.chars().any(char::is_whitespace) {
            bail!("the URI template of {of} contains white space");
        }
        self.optional("title", &of, &template.title, MAX_TITLE_BYTES, false)?;
        self.optional("description", &of, &template.description, MAX_DESCRIPTION_BYTES, true)?;
        self.optional("MIME type", &of, &template.mime_type, MAX_URI_TEMPLATE_BYTES, false)
    }

    fn prompt(&mut self, prompt: &prompts::Prompt) -> Result<()> {
        let of = format!("prompt `{}`", prompt.name);
        self.optional("title", &of, &prompt.title, MAX_TITLE_BYTES, false)?;
        self.optional("description", &of, &prompt.description, MAX_DESCRIPTION_BYTES, true)?;
        Self::count(&format!("arguments of {of}"), prompt.arguments.len(), MAX_PROMPT_ARGUMENTS)?;
        for argument in &prompt.arguments {
            if !valid_name(&argument.name) {
                bail!(
                    "argument name `{}` of {of} is invalid: use 1 to 128 characters of [A-Za-z0-9_.-]",
                    argument.name.escape_debug()
                );
            }
            let of = format!("argument `{}` of {of}", argument.name);
            self.optional("title", &of, &argument.title, MAX_TITLE_BYTES, false)?;
            self.optional("description", &of, &argument.description, MAX_DESCRIPTION_BYTES, true)?;
        }
        Ok(())
    }
}

/// Checks that a plugin names each of its tools, prompts and resource templates (by name and
/// by URI template) once: served twice, a client could not tell which one it calls, and the
/// pins (one per name) would vouch for the last one only, serving the first unpinned.
pub(crate) fn unique(
    tools: &[tools::Tool],
    templates: &[resources::ResourceTemplate],
    prompts: &[prompts::Prompt],
) -> Result<()> {
    fn once<'a>(what: &str, names: impl Iterator<Item = &'a str>) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for name in names {
            if !seen.insert(name) {
                bail!("it lists the {what} `{}` twice", name.escape_debug());
            }
        }
        Ok(())
    }
    once("tool", tools.iter().map(|t| t.name.as_str()))?;
    once("prompt", prompts.iter().map(|p| p.name.as_str()))?;
    once("resource template", templates.iter().map(|t| t.name.as_str()))?;
    once("URI template", templates.iter().map(|t| t.uri_template.as_str()))
}

/// Checks what a plugin describes against the limits above.
pub(crate) fn check(
    tools: &[tools::Tool],
    templates: &[resources::ResourceTemplate],
    prompts: &[prompts::Prompt],
) -> Result<()> {
    Checker::count("tools", tools.len(), MAX_ITEMS)?;
    Checker::count("resource templates", templates.len(), MAX_ITEMS)?;
    Checker::count("prompts", prompts.len(), MAX_ITEMS)?;
    let mut checker = Checker::default();
    tools.iter().try_for_each(|tool| checker.tool(tool))?;
    templates.iter().try_for_each(|template| checker.template(template))?;
    prompts.iter().try_for_each(|prompt| checker.prompt(prompt))?;
    if checker.total > MAX_DESCRIPTOR_BYTES {
        bail!("its descriptors are {} bytes in all; the limit is {MAX_DESCRIPTOR_BYTES}", checker.total);
    }
    Ok(())
}
