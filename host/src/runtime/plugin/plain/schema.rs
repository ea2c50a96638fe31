//! WIT types to JSON Schema: the input schema of a plain component's tool, derived from its
//! function's parameter types.

use serde_json::{Map, Value, json};
use wasmtime::component::types::Type;

/// The JSON schema of values of `ty`, as a tool argument or result.
pub(super) fn schema(ty: &Type) -> Result<Value, String> {
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
