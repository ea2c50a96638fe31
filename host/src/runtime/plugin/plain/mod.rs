//! Plain components: a component that does not implement the `mcpbox:plugin` world but exports
//! functions (at its root or in exported interfaces), as components made for other WebAssembly
//! tool hosts do. Each function becomes a tool: its input schema is derived from the WIT
//! parameter types, its arguments are converted from JSON to component values by those types,
//! and its result comes back as JSON (text and `structuredContent`); an `err` of a WIT `result`
//! becomes an `isError` result.
//!
//! - `docs`: function descriptions from the component's `package-docs` section;
//! - `schema`: WIT types to JSON Schema;
//! - `value`: JSON to component values and back.

mod docs;
mod schema;
mod value;

use serde_json::{Map, Value, json};
use wasmtime::component::types::{ComponentFunc, ComponentItem, Type};
use wasmtime::component::{Component, Instance, Val};
use wasmtime::{Engine, Store};

pub(crate) use docs::FunctionDocs;
use schema::schema;
use value::{to_json, to_val};

use crate::runtime::engine::bindings::{tools, types};
use crate::runtime::sandbox::HostState;

/// One exported function served as a tool.
#[derive(Clone)]
pub(crate) struct PlainFunction {
    /// The exported interface holding it (`None`: exported at the component's root).
    interface: Option<String>,
    function: String,
    params: Vec<(String, Type)>,
    results: Vec<Type>,
}

/// The functions `component` exports that can be tools, with their descriptors (described by
/// `docs` where it has theirs), and the ones that cannot (resources, async types), with why.
pub(crate) fn discover(
    engine: &Engine,
    component: &Component,
    docs: &FunctionDocs,
) -> (Vec<(PlainFunction, tools::Tool)>, Vec<String>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut add = |interface: Option<&str>, name: &str, func: ComponentFunc| match as_tool(interface, name, &func, docs)
    {
        Ok(tool) => found.push(tool),
        Err(why) => skipped.push(format!("{name}: {why}")),
    };
    for (name, item) in component.component_type().exports(engine) {
        match item.ty {
            ComponentItem::ComponentFunc(func) => add(None, name, func),
            // WASI worlds a component may also export (`wasi:cli/run`, an HTTP handler) are
            // entry points of other hosts, not tools.
            ComponentItem::ComponentInstance(_) if name.starts_with("wasi:") => {}
            ComponentItem::ComponentInstance(instance) => {
                for (function, item) in instance.exports(engine) {
                    if let ComponentItem::ComponentFunc(func) = item.ty {
                        add(Some(name), function, func);
                    }
                }
            }
            _ => {}
        }
    }
    (found, skipped)
}

/// The exported function `name` (of `interface`, or at the root) as a tool, or why it cannot
/// be one.
fn as_tool(
    interface: Option<&str>,
    name: &str,
    func: &ComponentFunc,
    docs: &FunctionDocs,
) -> Result<(PlainFunction, tools::Tool), String> {
    let params: Vec<(String, Type)> = func.params().map(|(n, t)| (n.to_owned(), t)).collect();
    let results: Vec<Type> = func.results().collect();
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (param, ty) in &params {
        properties.insert(param.clone(), schema(ty).map_err(|why| format!("parameter `{param}` {why}"))?);
        if !matches!(ty, Type::Option(_)) {
            required.push(Value::String(param.clone()));
        }
    }
    if let Some(why) = results.iter().find_map(|t| schema(t).err()) {
        return Err(format!("its result {why}"));
    }
    let short = interface.map(interface_short_name);
    let input =
        json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false });
    let descriptor = tools::Tool {
        name: short.map_or_else(|| name.to_owned(), |short| format!("{short}.{name}")),
        title: None,
        description: Some(match (docs.get(short, name), interface) {
            (Some(docs), _) => docs.to_owned(),
            (None, Some(i)) => format!("`{name}` of the component's `{i}` interface"),
            (None, None) => format!("`{name}`, a function the component exports"),
        }),
        input_schema: input.to_string(),
        output_schema: None,
        annotations: None,
    };
    let function =
        PlainFunction { interface: interface.map(str::to_owned), function: name.to_owned(), params, results };
    Ok((function, descriptor))
}

/// `test:plain/text@0.1.0` → `text`.
fn interface_short_name(name: &str) -> &str {
    let name = name.split('@').next().unwrap_or(name);
    name.rsplit(['/', ':']).next().unwrap_or(name)
}

fn text_result(value: Value, is_error: bool) -> tools::CallResult {
    let text = match &value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    tools::CallResult {
        content: vec![types::ContentBlock::Text(types::TextContent { text, annotations: None })],
        // Structured content must be an object: wrap anything else.
        structured_content: (!is_error).then(|| json!({ "result": value }).to_string()),
        is_error,
    }
}

/// Calls `function` in `instance` with the JSON `arguments`.
pub(crate) async fn call(
    store: &mut Store<HostState>,
    instance: &Instance,
    function: &PlainFunction,
    arguments: &str,
) -> wasmtime::Result<Result<tools::CallResult, tools::ToolError>> {
    let arguments: Map<String, Value> = match serde_json::from_str(arguments) {
        Ok(Value::Object(map)) => map,
        _ => return Ok(Err(tools::ToolError::InvalidArguments("the arguments must be a JSON object".into()))),
    };
    let mut params = Vec::with_capacity(function.params.len());
    for (name, ty) in &function.params {
        match to_val(ty, arguments.get(name).unwrap_or(&Value::Null), name) {
            Ok(val) => params.push(val),
            Err(why) => return Ok(Err(tools::ToolError::InvalidArguments(why))),
        }
    }
    if let Some(unknown) = arguments.keys().find(|k| !function.params.iter().any(|(n, _)| n == *k)) {
        return Ok(Err(tools::ToolError::InvalidArguments(format!("unknown argument `{unknown}`"))));
    }
    let parent = match &function.interface {
        Some(interface) => Some(
            instance
                .get_export_index(&mut *store, None, interface)
                .ok_or_else(|| wasmtime::format_err!("the component has no export `{interface}`"))?,
        ),
        None => None,
    };
    let index = instance
        .get_export_index(&mut *store, parent.as_ref(), &function.function)
        .ok_or_else(|| wasmtime::format_err!("the component has no function `{}`", function.function))?;
    let func = instance
        .get_func(&mut *store, index)
        .ok_or_else(|| wasmtime::format_err!("`{}` is not a function", function.function))?;
    let mut results = vec![Val::Bool(false); function.results.len()];
    func.call_async(&mut *store, &params, &mut results).await?;
    Ok(Ok(match results.as_slice() {
        [] => text_result(Value::Null, false),
        [Val::Result(Err(error))] => text_result(error.as_deref().map_or(Value::Null, to_json), true),
        [Val::Result(Ok(value))] => text_result(value.as_deref().map_or(Value::Null, to_json), false),
        [one] => text_result(to_json(one), false),
        many => text_result(many.iter().map(to_json).collect(), false),
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_interface_names() {
        assert_eq!(super::interface_short_name("test:plain/text@0.1.0"), "text");
        assert_eq!(super::interface_short_name("wasi:cli/run"), "run");
        assert_eq!(super::interface_short_name("local"), "local");
    }
}
