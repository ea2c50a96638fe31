//! What a plugin may say about itself. Its descriptors (tools, resource templates, prompts)
//! reach every client and every model, so they are bounded and checked like its names: a
//! description, a title, a schema and the whole set each have a size limit, and no text a
//! client shows may carry control characters (a newline or tab in a description is fine).
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
        self.text("input schema", &of, &tool.input_schema, MAX_SCHEMA_BYTES, true)?;
        self.optional("output schema", &of, &tool.output_schema, MAX_SCHEMA_BYTES, true)
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
