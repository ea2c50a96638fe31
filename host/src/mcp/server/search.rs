//! Tool search for large catalogs (`--tool-search`, `tool_search = true`): instead of every
//! tool, `tools/list` shows two, `search_tools` (by name, title and description, ranked; no
//! model, no download) and `call_tool` (a found tool by name), so a client with hundreds of
//! tools does not put them all into its model's context. What a search finds is what the
//! principal may use (`admission.rs`'s list filter) and what a model may call (never an MCP App's
//! app-only tool, `compose::for_the_model`); `call_tool` is the client's own call of the named
//! tool, with every check a direct call gets (`handler.rs` unwraps it before anything else).
//! Tools stay callable by their own names for clients that know them.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::access::Kind;
use crate::mcp::call::checks::admission;
use crate::mcp::call::compose::for_the_model;
use crate::mcp::session::Session;
use crate::runtime::CallError;

/// The tool that searches.
pub(crate) const SEARCH_TOOL: &str = "search_tools";
/// The tool that calls a found tool.
pub(crate) const CALL_TOOL: &str = "call_tool";
/// Results a search returns unless asked for fewer or more.
const DEFAULT_RESULTS: usize = 10;
/// The most results a search returns.
const MAX_RESULTS: usize = 50;
/// The longest query taken, in characters.
const MAX_QUERY_CHARS: usize = 1_000;

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The two tools a client sees instead of the catalog.
pub(crate) fn host_tools() -> Vec<Tool> {
    let search = Tool::new(
        SEARCH_TOOL,
        "Searches this server's tools by what they do; returns the best matches with their input schemas. \
         Call a found tool with call_tool.",
        schema(json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What the tool should do, in a few words" },
                "limit": { "type": "integer", "minimum": 1, "maximum": MAX_RESULTS,
                           "description": "How many tools to return (default 10)" }
            },
            "required": ["query"]
        })),
    )
    .annotate(ToolAnnotations::new().read_only(true).open_world(false));
    let call = Tool::new(
        CALL_TOOL,
        "Calls a tool search_tools found, by its name, with its arguments.",
        schema(json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "description": "The tool's name, as search_tools gave it" },
                "arguments": { "type": "object", "description": "Its arguments, as its input schema says" }
            },
            "required": ["name"]
        })),
    );
    vec![search, call]
}

/// Lowercase words of `text`, `snake_case`, `kebab-case` and `dotted.names` split apart.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// How well `tool` matches the query's `wanted` words: a word in its name counts 3, in its
/// title 2, in its description 1 (each word once per field); a query word of three letters or
/// more that begins a word of the field (`read` for `reading`) counts half.
fn score(tool: &Tool, wanted: &[String]) -> f64 {
    let fields: [(Vec<String>, f64); 3] = [
        (words(&tool.name), 3.0),
        (tool.title.as_deref().map(words).unwrap_or_default(), 2.0),
        (tool.description.as_deref().map(words).unwrap_or_default(), 1.0),
    ];
    wanted
        .iter()
        .map(|word| {
            fields
                .iter()
                .map(|(field, weight)| {
                    if field.iter().any(|w| w == word) {
                        *weight
                    } else if word.len() >= 3 && field.iter().any(|w| w.starts_with(word.as_str())) {
                        weight / 2.0
                    } else {
                        0.0
                    }
                })
                .sum::<f64>()
        })
        .sum()
}

/// The tools that match `query` best, at most `limit`, best first (ties by name).
pub(crate) fn rank<'a>(tools: &'a [Tool], query: &str, limit: usize) -> Vec<&'a Tool> {
    let wanted = words(query);
    let mut scored: Vec<(f64, &Tool)> =
        tools.iter().map(|tool| (score(tool, &wanted), tool)).filter(|(score, _)| *score > 0.0).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored.into_iter().take(limit).map(|(_, tool)| tool).collect()
}

impl Session {
    /// The tools the request's principal may use and a model may call.
    fn model_tools(&self, context: &RequestContext<RoleServer>) -> Result<Vec<Tool>, McpError> {
        let catalog = self.state.catalog();
        let lists = self.state.lists(&catalog)?;
        let tools = match self.list_filter(context) {
            None => lists.tools.clone(),
            Some(filter) => {
                admission::visible(&filter, &catalog, catalog.tools(), &lists.tools, Kind::Tool, |e| &e.name)
            }
        };
        Ok(tools.into_iter().filter(|tool| for_the_model(tool.meta.as_ref())).collect())
    }

    /// `search_tools`: the best matches, with what a model needs to call them.
    pub(crate) fn search_tools(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let arguments = request.arguments.clone().unwrap_or_default();
        let Some(query) = arguments.get("query").and_then(Value::as_str) else {
            return Err(McpError::invalid_params("search_tools needs a `query` string", None));
        };
        let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
        let limit = match arguments.get("limit") {
            None => DEFAULT_RESULTS,
            Some(limit) => match limit.as_u64() {
                Some(n @ 1..) => (n as usize).min(MAX_RESULTS),
                _ => return Err(McpError::invalid_params("search_tools: `limit` is an integer from 1 to 50", None)),
            },
        };
        let tools = self.model_tools(context)?;
        let found: Vec<Value> = rank(&tools, &query, limit)
            .into_iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "title": tool.title,
                    "description": tool.description,
                    "inputSchema": tool.input_schema,
                })
            })
            .collect();
        let found = json!({ "tools": found });
        let mut result = CallToolResult::success(vec![ContentBlock::text(found.to_string())]);
        result.structured_content = Some(found);
        Ok(result)
    }

    /// `call_tool`'s request as the call of the tool it names (every check of a direct call
    /// follows); a tool a model may not call is as unknown as an absent one.
    pub(crate) fn unwrap_call_tool(
        &self,
        mut request: CallToolRequestParams,
    ) -> Result<CallToolRequestParams, McpError> {
        let mut arguments = request.arguments.take().unwrap_or_default();
        let Some(Value::String(name)) = arguments.remove("name") else {
            return Err(McpError::invalid_params("call_tool needs the `name` of a tool search_tools found", None));
        };
        let inner = match arguments.remove("arguments") {
            None | Some(Value::Null) => JsonObject::new(),
            Some(Value::Object(inner)) => inner,
            Some(_) => return Err(McpError::invalid_params("call_tool: `arguments` must be an object", None)),
        };
        let catalog = self.state.catalog();
        let lists = self.state.lists(&catalog)?;
        let listed = lists.tools.iter().find(|tool| tool.name == name.as_str());
        if listed.is_some_and(|tool| !for_the_model(tool.meta.as_ref())) || name == SEARCH_TOOL || name == CALL_TOOL {
            return Err(crate::mcp::wire::errors::request_error(CallError::UnknownTool { name }));
        }
        request.name = name.into();
        request.arguments = Some(inner);
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Tool {
        Tool::new(name.to_owned(), description.to_owned(), schema(json!({ "type": "object" })))
    }

    #[test]
    fn names_count_most_then_titles_then_descriptions() {
        let tools = [
            tool("github.list_issues", "Lists the open issues of a repository"),
            tool("filesystem.read_text_file", "Reads a file as text"),
            tool("textstats.stats", "Counts the words of a file or of every text file under a directory"),
            tool("time.get_current_time", "The current time in a time zone"),
        ];
        let names = |query: &str| rank(&tools, query, 10).into_iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
        assert_eq!(names("read file"), ["filesystem.read_text_file", "textstats.stats"]);
        assert_eq!(names("issues"), ["github.list_issues"]);
        assert_eq!(names("count words"), ["textstats.stats"]);
        assert_eq!(names("what time is it"), ["time.get_current_time"]);
        assert!(names("nothing matches this").is_empty());
        assert_eq!(rank(&tools, "file", 1).len(), 1);
    }
}
