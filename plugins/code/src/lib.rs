//! `code`: code mode. `run` executes a short JavaScript script the model writes, in which the
//! other served tools are async functions (`await tools.filesystem.list_directory({ path })`):
//! one call that lists, reads, filters and joins, returning only what matters, instead of a
//! round trip (and a context full of intermediate results) per tool. `describe` says which
//! tools the script may call and how, for the principal asking (the host's `callable-tools`),
//! so `run`'s own description stays the same for everyone and never goes stale.
//!
//! The script is only as safe as its sandbox, which is the plugin's: no filesystem, no network,
//! no environment of its own (the operator grants none), the call's time, memory and output
//! limits, and every tool it calls goes through the host (WIT 0.1.4 `call-tool`), checked as
//! if the client had called it: the operator's `may_call`, the principal's entitlements, the
//! person's yes, the callee's own grants. The engine is Boa (pure Rust, built with the other
//! bundled plugins); a script gets a fresh engine on every call, as the plugin a fresh instance.

use std::cell::RefCell;

use boa_engine::builtins::promise::PromiseState;
use boa_engine::native_function::NativeFunctionPointer;
use boa_engine::object::builtins::{JsArray, JsPromise};
use boa_engine::{
    Context, JsArgs, JsError, JsNativeError, JsResult, JsString, JsValue, NativeFunction, Source, js_string,
};
use mcpbox_sdk::IntoCallResult;
use mcpbox_sdk::host::{call_tool, callable_tools};
use mcpbox_sdk::prelude::*;

/// `tools`, `callTool` and `console`, defined before the script runs.
const PRELUDE: &str = include_str!("prelude.js");
/// The longest script `run` takes.
const MAX_SCRIPT_BYTES: usize = 256 * 1024;
/// What a script may log, in lines and bytes; the rest is counted.
const MAX_LOG_LINES: usize = 1_000;
const MAX_LOG_BYTES: usize = 256 * 1024;
/// How deep a script's calls may recurse: deep enough for real code, shallow enough that the
/// engine's own stack stays within the component's.
const MAX_RECURSION: usize = 512;

#[derive(Deserialize, JsonSchema)]
struct RunArgs {
    /// JavaScript, the body of an async function: `await tools.<plugin>.<tool>({...})` calls a
    /// served tool (`code.describe` lists them with their parameters) and returns its structured
    /// result, or its text; a tool's failure is thrown. `return` gives the result; `console.log`
    /// adds a line to the logs.
    script: String,
}

#[derive(Serialize, JsonSchema)]
struct Ran {
    /// What the script returned (JSON).
    result: serde_json::Value,
    /// What it logged, in order.
    logs: Vec<String>,
}

#[derive(Serialize, JsonSchema)]
struct Callable {
    /// How a script calls it.
    call: String,
    /// Its served name.
    name: String,
    description: Option<String>,
    /// The JSON Schema of its arguments.
    input_schema: serde_json::Value,
}

#[derive(Serialize, JsonSchema)]
struct Described {
    /// The tools a script may call for this caller.
    tools: Vec<Callable>,
}

/// The logs of the script running now (one script a call, one call an instance).
#[derive(Default)]
struct Logs {
    lines: Vec<String>,
    bytes: usize,
    dropped: usize,
}

thread_local! {
    static LOGS: RefCell<Logs> = RefCell::default();
}

/// `__mcpbox_call(name, argumentsJson)`: the host's `call-tool`; its refusal is thrown.
fn host_call(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let name = args.get_or_undefined(0).to_string(context)?.to_std_string_escaped();
    let arguments = args.get_or_undefined(1).to_string(context)?.to_std_string_escaped();
    let arguments: serde_json::Value = serde_json::from_str(&arguments)
        .map_err(|e| JsNativeError::typ().with_message(format!("the arguments of {name} are not JSON: {e}")))?;
    match call_tool(&name, &arguments) {
        Ok(result) => Ok(JsValue::from(JsString::from(result.to_string().as_str()))),
        Err(refusal) => Err(JsNativeError::error().with_message(refusal.message().to_owned()).into()),
    }
}

/// An argument as a Rust string.
fn string_arg(args: &[JsValue], at: usize, context: &mut Context) -> JsResult<String> {
    Ok(args.get_or_undefined(at).to_string(context)?.to_std_string_escaped())
}

/// `split`'s limit: `undefined` is 2^32 - 1, as the spec says.
fn limit_arg(args: &[JsValue], at: usize, context: &mut Context) -> JsResult<usize> {
    match args.get_or_undefined(at) {
        value if value.is_undefined() => Ok(u32::MAX as usize),
        value => Ok(value.to_u32(context)? as usize),
    }
}

fn js_array(items: impl IntoIterator<Item = JsValue>, context: &mut Context) -> JsValue {
    JsArray::from_iter(items, context).into()
}

/// A regular expression from a `RegExp`'s source and flags (`g`, `y`, `d` are the caller's).
fn regex_arg(args: &[JsValue], context: &mut Context) -> JsResult<regress::Regex> {
    let source = string_arg(args, 1, context)?;
    let flags: String = string_arg(args, 2, context)?.chars().filter(|c| !matches!(c, 'g' | 'y' | 'd')).collect();
    regress::Regex::with_flags(&source, flags.as_str())
        .map_err(|e| JsNativeError::syntax().with_message(format!("invalid regular expression /{source}/: {e}")).into())
}

/// `__mcpbox_split(string, separator, limit)`: `String.prototype.split` with a string
/// separator, in linear time.
fn host_split(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let text = string_arg(args, 0, context)?;
    let separator = string_arg(args, 1, context)?;
    let limit = limit_arg(args, 2, context)?;
    let pieces: Vec<JsValue> = if separator.is_empty() {
        text.encode_utf16().take(limit).map(|unit| JsValue::from(JsString::from(&[unit][..]))).collect()
    } else {
        text.split(separator.as_str()).take(limit).map(|piece| JsValue::from(JsString::from(piece))).collect()
    };
    Ok(js_array(pieces, context))
}

/// `__mcpbox_regex_split(string, source, flags, limit)`: `split` by a regular expression, its
/// captures spliced in, an empty match never splitting at the last split's end (the spec's
/// `@@split`), in linear time.
fn host_regex_split(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let text = string_arg(args, 0, context)?;
    let regex = regex_arg(args, context)?;
    let limit = limit_arg(args, 3, context)?;
    let mut pieces = Vec::new();
    if limit == 0 {
        return Ok(js_array(pieces, context));
    }
    if text.is_empty() {
        if regex.find(&text).is_none() {
            pieces.push(JsValue::from(JsString::from("")));
        }
        return Ok(js_array(pieces, context));
    }
    let mut last = 0;
    for found in regex.find_iter(&text) {
        let range = found.range();
        if range.start >= text.len() || (range.is_empty() && range.start == last) {
            continue;
        }
        pieces.push(JsValue::from(JsString::from(&text[last..range.start])));
        if pieces.len() == limit {
            return Ok(js_array(pieces, context));
        }
        for group in found.groups().skip(1) {
            pieces.push(group.map_or_else(JsValue::undefined, |group| JsString::from(&text[group]).into()));
            if pieces.len() == limit {
                return Ok(js_array(pieces, context));
            }
        }
        last = range.end;
    }
    pieces.push(JsValue::from(JsString::from(&text[last..])));
    Ok(js_array(pieces, context))
}

/// `__mcpbox_match_all(string, source, flags)`: what a global `match` returns (every match's
/// text), or `null` when there is none, in linear time.
fn host_match_all(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let text = string_arg(args, 0, context)?;
    let regex = regex_arg(args, context)?;
    let found: Vec<JsValue> =
        regex.find_iter(&text).map(|found| JsValue::from(JsString::from(&text[found.range()]))).collect();
    if found.is_empty() {
        return Ok(JsValue::null());
    }
    Ok(js_array(found, context))
}

/// JSON numbers as a person writes them: a whole number the engine holds as a float
/// (`4999950000.0`) becomes an integer.
fn whole_numbers(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(number) => match number.as_f64() {
            Some(float) if number.is_f64() && float.fract() == 0.0 && float.abs() < 9_007_199_254_740_992.0 => {
                Value::from(float as i64)
            }
            _ => Value::Number(number),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(whole_numbers).collect()),
        Value::Object(members) => Value::Object(members.into_iter().map(|(k, v)| (k, whole_numbers(v))).collect()),
        other => other,
    }
}

/// `__mcpbox_log(line)`: kept within the bounds, the rest counted.
fn host_log(_: &JsValue, args: &[JsValue], context: &mut Context) -> JsResult<JsValue> {
    let line = args.get_or_undefined(0).to_string(context)?.to_std_string_escaped();
    LOGS.with_borrow_mut(|logs| {
        if logs.lines.len() < MAX_LOG_LINES && logs.bytes + line.len() <= MAX_LOG_BYTES {
            logs.bytes += line.len();
            logs.lines.push(line);
        } else {
            logs.dropped += 1;
        }
    });
    Ok(JsValue::undefined())
}

/// The logs so far, with a last line saying how many were dropped.
fn take_logs() -> Vec<String> {
    LOGS.with_borrow_mut(|logs| {
        let mut lines = std::mem::take(&mut logs.lines);
        if logs.dropped > 0 {
            lines.push(format!("({} more lines not kept)", logs.dropped));
        }
        *logs = Logs::default();
        lines
    })
}

/// How an error thrown by the script reads (`Error: message`).
fn thrown(error: &JsError, context: &mut Context) -> String {
    let fallback = error.to_string();
    match error.clone().into_opaque(context).map(|value| value.to_string(context)) {
        Ok(Ok(text)) => text.to_std_string_escaped(),
        _ => fallback,
    }
}

/// A failed run: what went wrong, then the logs.
fn failed(message: String) -> CallResult {
    let logs = take_logs();
    if logs.is_empty() {
        return CallResult::error(message);
    }
    CallResult::error(format!("{message}\nlogs:\n{}", logs.join("\n")))
}

fn run(args: RunArgs) -> Result<CallResult, Error> {
    if args.script.len() > MAX_SCRIPT_BYTES {
        return Err(Error::invalid_arguments(format!("a script is at most {MAX_SCRIPT_BYTES} bytes")));
    }
    take_logs();
    let mut context = Context::default();
    context.runtime_limits_mut().set_recursion_limit(MAX_RECURSION);
    let engine = |e: JsError| Error::failed(format!("the script engine failed to start: {e}"));
    context
        .register_global_callable(js_string!("__mcpbox_call"), 2, NativeFunction::from_fn_ptr(host_call))
        .map_err(engine)?;
    context
        .register_global_callable(js_string!("__mcpbox_log"), 1, NativeFunction::from_fn_ptr(host_log))
        .map_err(engine)?;
    let natives: [(JsString, usize, NativeFunctionPointer); 3] = [
        (js_string!("__mcpbox_split"), 3, host_split),
        (js_string!("__mcpbox_regex_split"), 4, host_regex_split),
        (js_string!("__mcpbox_match_all"), 3, host_match_all),
    ];
    for (name, length, function) in natives {
        context.register_global_callable(name, length, NativeFunction::from_fn_ptr(function)).map_err(engine)?;
    }
    context.eval(Source::from_bytes(PRELUDE)).map_err(engine)?;

    // The body of an async function: `await` and `return` work at its top level.
    let wrapped = format!("(async () => {{\n{}\n}})()", args.script);
    let promise = match context.eval(Source::from_bytes(wrapped.as_bytes())) {
        Ok(value) => value,
        Err(error) => return Ok(failed(thrown(&error, &mut context))),
    };
    if let Err(error) = context.run_jobs() {
        return Ok(failed(thrown(&error, &mut context)));
    }
    let promise = promise.as_object().and_then(|object| JsPromise::from_object(object.clone()).ok());
    let Some(promise) = promise else { return Ok(failed("the script did not run as an async function".into())) };
    match promise.state() {
        PromiseState::Fulfilled(value) => {
            let result = match value.to_json(&mut context) {
                Ok(json) => whole_numbers(json.unwrap_or(serde_json::Value::Null)),
                Err(error) => {
                    return Ok(failed(format!("the script's result is not JSON: {}", thrown(&error, &mut context))));
                }
            };
            Json(Ran { result, logs: take_logs() }).into_call_result()
        }
        PromiseState::Rejected(reason) => {
            let message = match reason.to_string(&mut context) {
                Ok(text) => text.to_std_string_escaped(),
                Err(_) => "the script threw".to_owned(),
            };
            Ok(failed(format!("Uncaught {message}")))
        }
        PromiseState::Pending => Ok(failed("the script awaited something that never settles".into())),
    }
}

/// A JSON Schema property's type as a script writer reads it.
fn type_of(schema: &serde_json::Value) -> String {
    match &schema["type"] {
        serde_json::Value::String(name) if name == "array" => format!("{}[]", type_of(&schema["items"])),
        serde_json::Value::String(name) if name == "integer" => "number".to_owned(),
        serde_json::Value::String(name) => name.clone(),
        serde_json::Value::Array(names) => {
            names.iter().filter_map(|n| n.as_str()).filter(|n| *n != "null").collect::<Vec<_>>().join(" | ")
        }
        _ if schema.get("enum").is_some() => "string".to_owned(),
        _ => "any".to_owned(),
    }
}

/// `{ path: string, head?: number }`: the arguments a tool takes.
fn signature(schema: &serde_json::Value) -> String {
    let Some(properties) = schema["properties"].as_object() else { return "{}".to_owned() };
    let required: Vec<&str> =
        schema["required"].as_array().map(|r| r.iter().filter_map(|n| n.as_str()).collect()).unwrap_or_default();
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, property)| {
            let optional = if required.contains(&name.as_str()) { "" } else { "?" };
            format!("{name}{optional}: {}", type_of(property))
        })
        .collect();
    if fields.is_empty() {
        return "{}".to_owned();
    }
    format!("{{ {} }}", fields.join(", "))
}

/// How a script calls the tool served as `name`: `tools.plugin.tool`, quoted where needed.
fn call_path(name: &str) -> String {
    let (plugin, tool) = name.split_once('.').unwrap_or(("", name));
    let part = |p: &str| {
        if !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !p.starts_with(char::is_numeric)
        {
            format!(".{p}")
        } else {
            format!("[{p:?}]")
        }
    };
    format!("tools{}{}", part(plugin), part(tool))
}

fn describe(_: NoArgs) -> Result<CallResult, Error> {
    // What a script may call is what `run` may: everything the host lists for this call but
    // `run` itself (a script calling it would be a cycle, refused), found by its name's last
    // part and its description (its served name depends on the operator's prefix).
    let tools: Vec<Callable> = callable_tools()
        .into_iter()
        .filter(|tool| {
            let local = tool.name.rsplit('.').next().unwrap_or_default();
            !(local == "run" && tool.description.as_deref() == Some(RUN_DESCRIPTION))
        })
        .map(|tool| Callable {
            call: call_path(&tool.name),
            input_schema: serde_json::from_str(&tool.input_schema).unwrap_or_default(),
            name: tool.name,
            description: tool.description,
        })
        .collect();
    let mut listing = if tools.is_empty() {
        "No tool may be called from a script here.".to_owned()
    } else {
        "A `code.run` script may call these (each `await`ed; arguments as one object):\n".to_owned()
    };
    for tool in &tools {
        listing.push_str(&format!("\nawait {}({})", tool.call, signature(&tool.input_schema)));
        if let Some(description) = &tool.description {
            listing.push_str(&format!("\n    {}", description.lines().next().unwrap_or_default()));
        }
    }
    let structured = serde_json::to_string(&Described { tools })?;
    Ok(CallResult { content: vec![text(listing)], structured_content: Some(structured), is_error: false })
}

/// `run`'s description (what `describe` knows it by).
const RUN_DESCRIPTION: &str = "Runs a JavaScript script that calls this server's tools and returns only what you need, \
     in one call instead of one per tool. The script is the body of an async function: \
     `await tools.<plugin>.<tool>({...})` calls a tool (call `code.describe` first to learn \
     which tools you may call and their parameters), `return` gives the result, \
     `console.log` adds to the logs. No filesystem, network or environment besides the tools.";

fn plugin() -> Plugin {
    Plugin::new().tool(Tool::new("run", RUN_DESCRIPTION, run)).tool(
        Tool::new(
            "describe",
            "Lists the tools a `code.run` script may call for you, with how to call each and its parameters.",
            describe,
        )
        .read_only(),
    )
}

mcpbox_sdk::export_plugin!(plugin);
