//! Plain components: a component that does not implement the `mcpbox:plugin` world but exports
//! functions (at its root or in exported interfaces), as components made for other WebAssembly
//! tool hosts do. Each function becomes a tool: its input schema is derived from the WIT
//! parameter types, its arguments are converted from JSON to component values by those types,
//! and its result comes back as JSON (text and `structuredContent`); an `err` of a WIT `result`
//! becomes an `isError` result.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use wasmtime::component::types::{ComponentItem, Type};
use wasmtime::component::{Component, Instance, Val};
use wasmtime::{Engine, Store};

use crate::bindings::{tools, types};
use crate::sandbox::HostState;

/// One exported function served as a tool.
#[derive(Clone)]
pub struct PlainFunction {
    /// The exported interface holding it (`None`: exported at the component's root).
    pub interface: Option<String>,
    pub function: String,
    params: Vec<(String, Type)>,
    results: Vec<Type>,
}

/// The doc comments of a component's exported functions, where the component carries them: the
/// `package-docs` custom section that wit-component writes for a WIT package (a version byte,
/// then JSON), which tools such as `wit-docs-inject` add to components, as other WebAssembly
/// tool hosts read it. Compilers of guest code (rustc's wasm-component-ld, componentize-py)
/// leave it out, so most components have none.
#[derive(Debug, Default)]
pub struct FunctionDocs {
    /// (interface name without package and version, or `None` at the root; function) → docs.
    docs: HashMap<(Option<String>, String), String>,
}

impl FunctionDocs {
    pub fn from_component(bytes: &[u8]) -> FunctionDocs {
        let mut found = FunctionDocs::default();
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            let Ok(payload) = payload else { break };
            if let wasmparser::Payload::CustomSection(section) = payload
                && section.name() == "package-docs"
                && let Some((_version, json)) = section.data().split_first()
                && let Ok(package) = serde_json::from_slice::<Value>(json)
            {
                found.add_package(&package);
            }
        }
        found
    }

    fn add_package(&mut self, package: &Value) {
        let mut add_funcs = |interface: Option<&str>, funcs: &Value| {
            for (function, meta) in funcs.as_object().into_iter().flatten() {
                if let Some(docs) = meta["docs"].as_str() {
                    self.docs.insert((interface.map(str::to_owned), function.clone()), docs.trim().to_owned());
                }
            }
        };
        for (interface, meta) in package["interfaces"].as_object().into_iter().flatten() {
            add_funcs(Some(interface), &meta["funcs"]);
        }
        for world in package["worlds"].as_object().into_iter().flat_map(|worlds| worlds.values()) {
            // `funcs` holds a world's imported functions, and its exported ones when nothing
            // of that name is imported; `func_exports` the rest.
            add_funcs(None, &world["funcs"]);
            add_funcs(None, &world["func_exports"]);
            for (interface, meta) in world["interface_exports"].as_object().into_iter().flatten() {
                add_funcs(Some(interface), &meta["funcs"]);
            }
        }
    }

    fn get(&self, interface: Option<&str>, function: &str) -> Option<&str> {
        self.docs.get(&(interface.map(str::to_owned), function.to_owned())).map(String::as_str)
    }
}

/// The functions `component` exports that can be tools, with their descriptors (described by
/// `docs` where it has theirs), and the ones that cannot (resources, async types), with why.
pub fn discover(
    engine: &Engine,
    component: &Component,
    docs: &FunctionDocs,
) -> (Vec<(PlainFunction, tools::Tool)>, Vec<String>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut add = |interface: Option<&str>, name: &str, func: wasmtime::component::types::ComponentFunc| {
        let params: Vec<(String, Type)> = func.params().map(|(n, t)| (n.to_owned(), t)).collect();
        let results: Vec<Type> = func.results().collect();
        let mut properties = Map::new();
        let mut required = Vec::new();
        for (param, ty) in &params {
            match schema(ty) {
                Ok(s) => {
                    properties.insert(param.clone(), s);
                }
                Err(why) => {
                    skipped.push(format!("{name}: parameter `{param}` {why}"));
                    return;
                }
            }
            if !matches!(ty, Type::Option(_)) {
                required.push(Value::String(param.clone()));
            }
        }
        if let Some(why) = results.iter().find_map(|t| schema(t).err()) {
            skipped.push(format!("{name}: its result {why}"));
            return;
        }
        let short = interface.map(|i| interface_short_name(i).to_owned());
        let tool_name = match &short {
            Some(short) => format!("{short}.{name}"),
            None => name.to_owned(),
        };
        let input =
            json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false });
        let descriptor = tools::Tool {
            name: tool_name,
            title: None,
            description: Some(match (docs.get(short.as_deref(), name), interface) {
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
        found.push((function, descriptor));
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

/// `test:plain/text@0.1.0` → `text`.
fn interface_short_name(name: &str) -> &str {
    let name = name.split('@').next().unwrap_or(name);
    name.rsplit(['/', ':']).next().unwrap_or(name)
}

/// The JSON schema of values of `ty`, as a tool argument or result.
fn schema(ty: &Type) -> Result<Value, String> {
    let int = |min: i128, max: i128| json!({ "type": "integer", "minimum": min, "maximum": max });
    Ok(match ty {
        Type::Bool => json!({ "type": "boolean" }),
        Type::S8 => int(i8::MIN.into(), i8::MAX.into()),
        Type::U8 => int(0, u8::MAX.into()),
        Type::S16 => int(i16::MIN.into(), i16::MAX.into()),
        Type::U16 => int(0, u16::MAX.into()),
        Type::S32 => int(i32::MIN.into(), i32::MAX.into()),
        Type::U32 => int(0, u32::MAX.into()),
        Type::S64 => int(i64::MIN.into(), i64::MAX.into()),
        Type::U64 => int(0, u64::MAX.into()),
        Type::Float32 | Type::Float64 => json!({ "type": "number" }),
        Type::Char => json!({ "type": "string", "minLength": 1, "maxLength": 1 }),
        Type::String => json!({ "type": "string" }),
        Type::List(list) => json!({ "type": "array", "items": schema(&list.ty())? }),
        Type::FixedLengthList(list) => json!({ "type": "array", "items": schema(&list.ty())? }),
        Type::Record(record) => {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for field in record.fields() {
                properties.insert(field.name.to_owned(), schema(&field.ty)?);
                if !matches!(field.ty, Type::Option(_)) {
                    required.push(field.name.to_owned());
                }
            }
            json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
        }
        Type::Tuple(tuple) => {
            let items = tuple.types().map(|t| schema(&t)).collect::<Result<Vec<_>, _>>()?;
            json!({ "type": "array", "prefixItems": items, "minItems": items.len(), "maxItems": items.len() })
        }
        Type::Variant(variant) => {
            // A case without payload is its name; a case with one is `{ "<case>": payload }`.
            let mut one_of = Vec::new();
            for case in variant.cases() {
                one_of.push(match &case.ty {
                    None => json!({ "const": case.name }),
                    Some(ty) => json!({ "type": "object", "properties": { case.name: schema(ty)? },
                        "required": [case.name], "additionalProperties": false }),
                });
            }
            json!({ "oneOf": one_of })
        }
        Type::Enum(names) => json!({ "type": "string", "enum": names.names().collect::<Vec<_>>() }),
        Type::Option(option) => json!({ "anyOf": [schema(&option.ty())?, { "type": "null" }] }),
        Type::Result(result) => {
            let arm = |ty: Option<Type>| ty.map_or(Ok(json!({ "type": "null" })), |t| schema(&t));
            json!({ "oneOf": [
                { "type": "object", "properties": { "ok": arm(result.ok())? }, "required": ["ok"] },
                { "type": "object", "properties": { "err": arm(result.err())? }, "required": ["err"] },
            ] })
        }
        Type::Flags(flags) => {
            json!({ "type": "array", "items": { "type": "string", "enum": flags.names().collect::<Vec<_>>() }, "uniqueItems": true })
        }
        Type::Map(_) => return Err("is a map, which tools cannot take yet".into()),
        Type::Own(_) | Type::Borrow(_) => return Err("is a resource handle, which JSON cannot carry".into()),
        Type::Future(_) | Type::Stream(_) | Type::ErrorContext => return Err("is an async type".into()),
    })
}

/// `value` as a component value of type `ty`; the error names the path to the bad part.
fn to_val(ty: &Type, value: &Value, path: &str) -> Result<Val, String> {
    let bad = |expected: &str| Err(format!("`{path}` must be {expected}, not {value}"));
    let int = |min: i128, max: i128| -> Result<i128, String> {
        match value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from)) {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(format!("`{path}` must be an integer from {min} to {max}, not {value}")),
        }
    };
    Ok(match ty {
        Type::Bool => Val::Bool(value.as_bool().ok_or_else(|| format!("`{path}` must be true or false"))?),
        Type::S8 => Val::S8(int(i8::MIN.into(), i8::MAX.into())? as i8),
        Type::U8 => Val::U8(int(0, u8::MAX.into())? as u8),
        Type::S16 => Val::S16(int(i16::MIN.into(), i16::MAX.into())? as i16),
        Type::U16 => Val::U16(int(0, u16::MAX.into())? as u16),
        Type::S32 => Val::S32(int(i32::MIN.into(), i32::MAX.into())? as i32),
        Type::U32 => Val::U32(int(0, u32::MAX.into())? as u32),
        Type::S64 => Val::S64(int(i64::MIN.into(), i64::MAX.into())? as i64),
        Type::U64 => Val::U64(int(0, u64::MAX.into())? as u64),
        Type::Float32 => Val::Float32(value.as_f64().ok_or_else(|| format!("`{path}` must be a number"))? as f32),
        Type::Float64 => Val::Float64(value.as_f64().ok_or_else(|| format!("`{path}` must be a number"))?),
        Type::Char => {
            let mut chars = value.as_str().unwrap_or_default().chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Val::Char(c),
                _ => return bad("a string of one character"),
            }
        }
        Type::String => Val::String(value.as_str().ok_or_else(|| format!("`{path}` must be a string"))?.to_owned()),
        Type::List(_) | Type::FixedLengthList(_) if !value.is_array() => return bad("an array"),
        Type::List(_) | Type::FixedLengthList(_) => {
            let item = match ty {
                Type::List(list) => list.ty(),
                Type::FixedLengthList(list) => list.ty(),
                _ => unreachable!("matched above"),
            };
            let items = value
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, v)| to_val(&item, v, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?;
            if matches!(ty, Type::List(_)) { Val::List(items) } else { Val::FixedLengthList(items) }
        }
        Type::Record(record) => {
            let Some(object) = value.as_object() else { return bad("an object") };
            let mut fields = Vec::new();
            for field in record.fields() {
                let v = object.get(field.name).unwrap_or(&Value::Null);
                fields.push((field.name.to_owned(), to_val(&field.ty, v, &format!("{path}.{}", field.name))?));
            }
            if let Some(unknown) = object.keys().find(|k| !record.fields().any(|f| f.name == k.as_str())) {
                return Err(format!("`{path}` has no field `{unknown}`"));
            }
            Val::Record(fields)
        }
        Type::Tuple(tuple) => {
            let Some(items) = value.as_array().filter(|a| a.len() == tuple.types().len()) else {
                return bad(&format!("an array of {} items", tuple.types().len()));
            };
            Val::Tuple(
                tuple
                    .types()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (t, v))| to_val(&t, v, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            )
        }
        Type::Variant(variant) => {
            let (name, payload) = match value {
                Value::String(name) => (name.as_str(), None),
                Value::Object(object) if object.len() == 1 => {
                    let (name, payload) = object.iter().next().expect("one entry");
                    (name.as_str(), Some(payload))
                }
                _ => return bad("a case name, or an object with one case and its payload"),
            };
            let Some(case) = variant.cases().find(|c| c.name == name) else {
                let names: Vec<&str> = variant.cases().map(|c| c.name).collect();
                return Err(format!("`{path}`: `{name}` is not one of {}", names.join(", ")));
            };
            let payload = match (&case.ty, payload) {
                (None, None) => None,
                (Some(ty), Some(v)) => Some(Box::new(to_val(ty, v, &format!("{path}.{name}"))?)),
                (Some(_), None) => return Err(format!("`{path}`: case `{name}` needs a payload")),
                (None, Some(_)) => return Err(format!("`{path}`: case `{name}` takes no payload")),
            };
            Val::Variant(name.to_owned(), payload)
        }
        Type::Enum(names) => match value.as_str() {
            Some(name) if names.names().any(|n| n == name) => Val::Enum(name.to_owned()),
            _ => return bad(&format!("one of {}", names.names().collect::<Vec<_>>().join(", "))),
        },
        Type::Option(option) => match value {
            Value::Null => Val::Option(None),
            v => Val::Option(Some(Box::new(to_val(&option.ty(), v, path)?))),
        },
        Type::Result(result) => {
            let arm = |ty: Option<Type>, v: &Value, key: &str| -> Result<Option<Box<Val>>, String> {
                ty.map(|t| to_val(&t, v, &format!("{path}.{key}")).map(Box::new)).transpose()
            };
            match value.as_object() {
                Some(o) if o.contains_key("ok") => Val::Result(Ok(arm(result.ok(), &o["ok"], "ok")?)),
                Some(o) if o.contains_key("err") => Val::Result(Err(arm(result.err(), &o["err"], "err")?)),
                _ => return bad("`{\"ok\": ...}` or `{\"err\": ...}`"),
            }
        }
        Type::Flags(flags) => {
            let Some(items) = value.as_array() else { return bad("an array of flag names") };
            let mut set = Vec::new();
            for item in items {
                match item.as_str() {
                    Some(name) if flags.names().any(|n| n == name) => set.push(name.to_owned()),
                    _ => {
                        return Err(format!(
                            "`{path}`: {item} is not one of {}",
                            flags.names().collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
            }
            Val::Flags(set)
        }
        Type::Map(_) | Type::Own(_) | Type::Borrow(_) | Type::Future(_) | Type::Stream(_) | Type::ErrorContext => {
            return Err(format!("`{path}` has a type tools cannot take"));
        }
    })
}

/// A component value as JSON, the inverse of [`to_val`].
fn to_json(value: &Val) -> Value {
    match value {
        Val::Bool(b) => json!(b),
        Val::S8(n) => json!(n),
        Val::U8(n) => json!(n),
        Val::S16(n) => json!(n),
        Val::U16(n) => json!(n),
        Val::S32(n) => json!(n),
        Val::U32(n) => json!(n),
        Val::S64(n) => json!(n),
        Val::U64(n) => json!(n),
        Val::Float32(n) => json!(n),
        Val::Float64(n) => json!(n),
        Val::Char(c) => json!(c.to_string()),
        Val::String(s) => json!(s),
        Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => items.iter().map(to_json).collect(),
        Val::Record(fields) => fields.iter().map(|(k, v)| (k.clone(), to_json(v))).collect::<Map<_, _>>().into(),
        Val::Variant(name, None) | Val::Enum(name) => json!(name),
        Val::Variant(name, Some(payload)) => json!({ name: to_json(payload) }),
        Val::Option(None) => Value::Null,
        Val::Option(Some(v)) => to_json(v),
        Val::Result(Ok(v)) => json!({ "ok": v.as_deref().map_or(Value::Null, to_json) }),
        Val::Result(Err(v)) => json!({ "err": v.as_deref().map_or(Value::Null, to_json) }),
        Val::Flags(names) => json!(names),
        Val::Map(pairs) => pairs.iter().map(|(k, v)| json!([to_json(k), to_json(v)])).collect(),
        Val::Resource(_) | Val::Future(_) | Val::Stream(_) | Val::ErrorContext(_) => Value::Null,
    }
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
pub async fn call(
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
