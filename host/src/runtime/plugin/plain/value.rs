//! JSON arguments to component values by the function's WIT types, and component results back
//! to JSON. A conversion error names the path to the bad part (`route.points[1].x`), so a
//! model can correct its arguments.

use serde_json::{Map, Value, json};
use wasmtime::component::Val;
use wasmtime::component::types::{Enum, Flags, OptionType, Record, ResultType, Tuple, Type, Variant};

/// `value` as a component value of type `ty`; the error names the path to the bad part.
pub(super) fn to_val(ty: &Type, value: &Value, path: &str) -> Result<Val, String> {
    match ty {
        Type::Bool => value.as_bool().map(Val::Bool).ok_or_else(|| format!("`{path}` must be true or false")),
        Type::S8 | Type::U8 | Type::S16 | Type::U16 | Type::S32 | Type::U32 | Type::S64 | Type::U64 => {
            integer(ty, value, path)
        }
        Type::Float32 => {
            // A number past f32's range would become infinity, which JSON cannot even carry back
            // (found by the fuzz target `fuzz_plain_values`).
            let n = number(value, path)?;
            if n.abs() > f64::from(f32::MAX) {
                return Err(format!("`{path}` must be a number from {} to {}, not {value}", f32::MIN, f32::MAX));
            }
            Ok(Val::Float32(n as f32))
        }
        Type::Float64 => Ok(Val::Float64(number(value, path)?)),
        Type::Char => {
            let mut chars = value.as_str().unwrap_or_default().chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(Val::Char(c)),
                _ => Err(expected(path, "a string of one character", value)),
            }
        }
        Type::String => {
            value.as_str().map(|s| Val::String(s.to_owned())).ok_or_else(|| format!("`{path}` must be a string"))
        }
        Type::List(list) => Ok(Val::List(items(&list.ty(), value, path)?)),
        Type::FixedLengthList(list) => Ok(Val::FixedLengthList(items(&list.ty(), value, path)?)),
        Type::Record(record) => record_val(record, value, path),
        Type::Tuple(tuple) => tuple_val(tuple, value, path),
        Type::Variant(variant) => variant_val(variant, value, path),
        Type::Enum(names) => enum_val(names, value, path),
        Type::Option(option) => option_val(option, value, path),
        Type::Result(result) => result_val(result, value, path),
        Type::Flags(flags) => flags_val(flags, value, path),
        Type::Map(_) | Type::Own(_) | Type::Borrow(_) | Type::Future(_) | Type::Stream(_) | Type::ErrorContext => {
            Err(format!("`{path}` has a type tools cannot take"))
        }
    }
}

fn expected(path: &str, what: &str, value: &Value) -> String {
    format!("`{path}` must be {what}, not {value}")
}

fn number(value: &Value, path: &str) -> Result<f64, String> {
    value.as_f64().ok_or_else(|| format!("`{path}` must be a number"))
}

/// An integer of the WIT type `ty`, range-checked.
fn integer(ty: &Type, value: &Value, path: &str) -> Result<Val, String> {
    let (min, max): (i128, i128) = match ty {
        Type::S8 => (i8::MIN.into(), i8::MAX.into()),
        Type::U8 => (0, u8::MAX.into()),
        Type::S16 => (i16::MIN.into(), i16::MAX.into()),
        Type::U16 => (0, u16::MAX.into()),
        Type::S32 => (i32::MIN.into(), i32::MAX.into()),
        Type::U32 => (0, u32::MAX.into()),
        Type::S64 => (i64::MIN.into(), i64::MAX.into()),
        _ => (0, u64::MAX.into()),
    };
    let n = match value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from)) {
        Some(n) if (min..=max).contains(&n) => n,
        _ => return Err(format!("`{path}` must be an integer from {min} to {max}, not {value}")),
    };
    // In range for `ty`, checked above: the conversions cannot fail.
    let out_of_range = |_| format!("`{path}` is out of range");
    Ok(match ty {
        Type::S8 => Val::S8(i8::try_from(n).map_err(out_of_range)?),
        Type::U8 => Val::U8(u8::try_from(n).map_err(out_of_range)?),
        Type::S16 => Val::S16(i16::try_from(n).map_err(out_of_range)?),
        Type::U16 => Val::U16(u16::try_from(n).map_err(out_of_range)?),
        Type::S32 => Val::S32(i32::try_from(n).map_err(out_of_range)?),
        Type::U32 => Val::U32(u32::try_from(n).map_err(out_of_range)?),
        Type::S64 => Val::S64(i64::try_from(n).map_err(out_of_range)?),
        _ => Val::U64(u64::try_from(n).map_err(out_of_range)?),
    })
}

fn items(item: &Type, value: &Value, path: &str) -> Result<Vec<Val>, String> {
    let Some(array) = value.as_array() else { return Err(expected(path, "an array", value)) };
    array.iter().enumerate().map(|(i, v)| to_val(item, v, &format!("{path}[{i}]"))).collect()
}

fn record_val(record: &Record, value: &Value, path: &str) -> Result<Val, String> {
    let Some(object) = value.as_object() else { return Err(expected(path, "an object", value)) };
    let mut fields = Vec::new();
    for field in record.fields() {
        let v = object.get(field.name).unwrap_or(&Value::Null);
        fields.push((field.name.to_owned(), to_val(&field.ty, v, &format!("{path}.{}", field.name))?));
    }
    if let Some(unknown) = object.keys().find(|k| !record.fields().any(|f| f.name == k.as_str())) {
        return Err(format!("`{path}` has no field `{unknown}`"));
    }
    Ok(Val::Record(fields))
}

fn tuple_val(tuple: &Tuple, value: &Value, path: &str) -> Result<Val, String> {
    let Some(items) = value.as_array().filter(|a| a.len() == tuple.types().len()) else {
        return Err(expected(path, &format!("an array of {} items", tuple.types().len()), value));
    };
    let values = tuple.types().zip(items).enumerate().map(|(i, (t, v))| to_val(&t, v, &format!("{path}[{i}]")));
    Ok(Val::Tuple(values.collect::<Result<_, _>>()?))
}

/// A case without payload is its name; a case with one is `{ "<case>": payload }`.
fn variant_val(variant: &Variant, value: &Value, path: &str) -> Result<Val, String> {
    let (name, payload) = match value {
        Value::String(name) => (name.as_str(), None),
        Value::Object(object) if object.len() == 1 => match object.iter().next() {
            Some((name, payload)) => (name.as_str(), Some(payload)),
            None => return Err(expected(path, "an object with one case", value)),
        },
        _ => return Err(expected(path, "a case name, or an object with one case and its payload", value)),
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
    Ok(Val::Variant(name.to_owned(), payload))
}

fn enum_val(names: &Enum, value: &Value, path: &str) -> Result<Val, String> {
    match value.as_str() {
        Some(name) if names.names().any(|n| n == name) => Ok(Val::Enum(name.to_owned())),
        _ => Err(expected(path, &format!("one of {}", names.names().collect::<Vec<_>>().join(", ")), value)),
    }
}

fn option_val(option: &OptionType, value: &Value, path: &str) -> Result<Val, String> {
    match value {
        Value::Null => Ok(Val::Option(None)),
        v => Ok(Val::Option(Some(Box::new(to_val(&option.ty(), v, path)?)))),
    }
}

fn result_val(result: &ResultType, value: &Value, path: &str) -> Result<Val, String> {
    let arm = |ty: Option<Type>, v: &Value, key: &str| -> Result<Option<Box<Val>>, String> {
        ty.map(|t| to_val(&t, v, &format!("{path}.{key}")).map(Box::new)).transpose()
    };
    match value.as_object() {
        Some(o) if o.contains_key("ok") => Ok(Val::Result(Ok(arm(result.ok(), &o["ok"], "ok")?))),
        Some(o) if o.contains_key("err") => Ok(Val::Result(Err(arm(result.err(), &o["err"], "err")?))),
        _ => Err(expected(path, "`{\"ok\": ...}` or `{\"err\": ...}`", value)),
    }
}

fn flags_val(flags: &Flags, value: &Value, path: &str) -> Result<Val, String> {
    let Some(items) = value.as_array() else { return Err(expected(path, "an array of flag names", value)) };
    let mut set = Vec::new();
    for item in items {
        match item.as_str() {
            Some(name) if flags.names().any(|n| n == name) => set.push(name.to_owned()),
            _ => {
                let names = flags.names().collect::<Vec<_>>().join(", ");
                return Err(format!("`{path}`: {item} is not one of {names}"));
            }
        }
    }
    Ok(Val::Flags(set))
}

/// A component value as JSON, the inverse of [`to_val`].
pub(super) fn to_json(value: &Val) -> Value {
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

#[cfg(test)]
mod fuzz;
