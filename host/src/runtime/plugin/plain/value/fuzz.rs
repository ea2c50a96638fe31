//! Fuzz target: JSON arguments to component values, for random WIT types. Each case builds a
//! component whose one import takes a parameter of a random type (records, variants, enums,
//! flags, options, results, tuples and lists, nested), compiles it, and converts random JSON
//! and JSON shaped like the type (often slightly wrong) to that type. The conversion never
//! panics, an error names a path that starts at the argument, and what converts comes back
//! from `to_json` as the same value.

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use wasm_encoder::{
    Component, ComponentImportSection, ComponentTypeRef, ComponentTypeSection, ComponentValType, InstanceType,
    PrimitiveValType, TypeBounds,
};
use wasmtime::component::types::{ComponentItem, Type};
use wasmtime::{Config, Engine};

use super::{to_json, to_val};
use crate::fuzzing::json_value;

/// A WIT type, as the fuzzer builds it.
#[derive(Debug, Clone)]
enum Wit {
    Primitive(PrimitiveValType),
    List(Box<Wit>),
    Option(Box<Wit>),
    Tuple(Vec<Wit>),
    Result(Option<Box<Wit>>, Option<Box<Wit>>),
    Record(Vec<Wit>),
    Variant(Vec<Option<Wit>>),
    Enum(usize),
    Flags(usize),
}

const PRIMITIVES: &[PrimitiveValType] = &[
    PrimitiveValType::Bool,
    PrimitiveValType::S8,
    PrimitiveValType::U8,
    PrimitiveValType::S16,
    PrimitiveValType::U16,
    PrimitiveValType::S32,
    PrimitiveValType::U32,
    PrimitiveValType::S64,
    PrimitiveValType::U64,
    PrimitiveValType::F32,
    PrimitiveValType::F64,
    PrimitiveValType::Char,
    PrimitiveValType::String,
];

fn wit() -> impl Strategy<Value = Wit> {
    let leaf = prop_oneof![
        4 => prop::sample::select(PRIMITIVES).prop_map(Wit::Primitive),
        1 => (1usize..5).prop_map(Wit::Enum),
        1 => (1usize..5).prop_map(Wit::Flags),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Wit::List(Box::new(t))),
            inner.clone().prop_map(|t| Wit::Option(Box::new(t))),
            prop::collection::vec(inner.clone(), 1..4).prop_map(Wit::Tuple),
            (prop::option::of(inner.clone()), prop::option::of(inner.clone()))
                .prop_map(|(ok, err)| Wit::Result(ok.map(Box::new), err.map(Box::new))),
            prop::collection::vec(inner.clone(), 1..4).prop_map(Wit::Record),
            prop::collection::vec(prop::option::of(inner), 1..4).prop_map(Wit::Variant),
        ]
    })
}

/// Names of fields, cases and flags: `n0`, `n1`, ...
fn names(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("n{i}")).collect()
}

/// Defines `wit` in `instance`, exporting the named kinds (records, variants, enums, flags) as
/// the component model requires of types in an interface, and returns how to refer to it.
fn define(instance: &mut InstanceType, wit: &Wit) -> ComponentValType {
    let refs =
        |instance: &mut InstanceType, items: &[Wit]| items.iter().map(|t| define(instance, t)).collect::<Vec<_>>();
    let named = matches!(wit, Wit::Record(_) | Wit::Variant(_) | Wit::Enum(_) | Wit::Flags(_));
    match wit {
        Wit::Primitive(p) => return ComponentValType::Primitive(*p),
        Wit::List(t) => {
            let t = define(instance, t);
            instance.ty().defined_type().list(t);
        }
        Wit::Option(t) => {
            let t = define(instance, t);
            instance.ty().defined_type().option(t);
        }
        Wit::Tuple(items) => {
            let items = refs(instance, items);
            instance.ty().defined_type().tuple(items);
        }
        Wit::Result(ok, err) => {
            let ok = ok.as_ref().map(|t| define(instance, t));
            let err = err.as_ref().map(|t| define(instance, t));
            instance.ty().defined_type().result(ok, err);
        }
        Wit::Record(fields) => {
            let types = refs(instance, fields);
            let names = names(types.len());
            instance.ty().defined_type().record(names.iter().map(String::as_str).zip(types));
        }
        Wit::Variant(cases) => {
            let types: Vec<_> = cases.iter().map(|c| c.as_ref().map(|t| define(instance, t))).collect();
            let names = names(types.len());
            instance.ty().defined_type().variant(names.iter().map(String::as_str).zip(types));
        }
        Wit::Enum(n) => instance.ty().defined_type().enum_type(names(*n).iter().map(String::as_str)),
        Wit::Flags(n) => instance.ty().defined_type().flags(names(*n).iter().map(String::as_str)),
    }
    let defined = instance.type_count() - 1;
    if named {
        instance.export(format!("t{defined}").as_str(), ComponentTypeRef::Type(TypeBounds::Eq(defined)));
        return ComponentValType::Type(instance.type_count() - 1);
    }
    ComponentValType::Type(defined)
}

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(&Config::new()).unwrap())
}

/// The wasmtime type of `wit`, read back from a compiled component that imports a function
/// taking it.
fn wasmtime_type(wit: &Wit) -> Type {
    let mut instance = InstanceType::new();
    let param = define(&mut instance, wit);
    instance.ty().function().params([("x", param)]).result(None);
    instance.export("f", ComponentTypeRef::Func(instance.type_count() - 1));
    let mut types = ComponentTypeSection::new();
    types.instance(&instance);
    let mut imports = ComponentImportSection::new();
    imports.import("fuzz:types/i", ComponentTypeRef::Instance(0));
    let mut component = Component::new();
    component.section(&types).section(&imports);
    let compiled = wasmtime::component::Component::new(engine(), component.finish()).unwrap();
    let ty = compiled.component_type();
    let ComponentItem::ComponentInstance(instance) = ty.imports(engine()).next().unwrap().1.ty else { unreachable!() };
    let ComponentItem::ComponentFunc(func) = instance.exports(engine()).find(|(name, _)| *name == "f").unwrap().1.ty
    else {
        unreachable!()
    };
    func.params().next().unwrap().1
}

/// JSON shaped like `wit`, with values of every range (some out of it).
fn fitting(wit: &Wit) -> BoxedStrategy<Value> {
    let names_of = |n: usize| prop::sample::select(names(n));
    match wit {
        Wit::Primitive(PrimitiveValType::Bool) => any::<bool>().prop_map(Value::from).boxed(),
        Wit::Primitive(PrimitiveValType::F32 | PrimitiveValType::F64) => prop_oneof![
            any::<f32>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        ]
        .boxed(),
        Wit::Primitive(PrimitiveValType::Char) => {
            prop_oneof![any::<char>().prop_map(|c| json!(c.to_string())), ".{0,3}".prop_map(Value::from)].boxed()
        }
        Wit::Primitive(PrimitiveValType::String) => ".{0,8}".prop_map(Value::from).boxed(),
        Wit::Primitive(_) => prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-300i64..300).prop_map(Value::from),
        ]
        .boxed(),
        Wit::List(t) => prop::collection::vec(fitting(t), 0..4).prop_map(Value::Array).boxed(),
        Wit::Option(t) => prop_oneof![Just(Value::Null), fitting(t)].boxed(),
        Wit::Tuple(items) => items.iter().map(fitting).collect::<Vec<_>>().prop_map(Value::Array).boxed(),
        Wit::Result(ok, err) => {
            let arm = |t: &Option<Box<Wit>>| t.as_deref().map_or_else(|| Just(Value::Null).boxed(), fitting);
            prop_oneof![arm(ok).prop_map(|v| json!({ "ok": v })), arm(err).prop_map(|v| json!({ "err": v }))].boxed()
        }
        Wit::Record(fields) => {
            let fields: Vec<_> = fields.iter().map(fitting).collect();
            fields
                .prop_map(|values| Value::Object(names(values.len()).into_iter().zip(values).collect::<Map<_, _>>()))
                .boxed()
        }
        Wit::Variant(cases) => {
            let arms: Vec<BoxedStrategy<Value>> = cases
                .iter()
                .enumerate()
                .map(|(i, case)| match case {
                    None => Just(json!(format!("n{i}"))).boxed(),
                    Some(t) => fitting(t).prop_map(move |v| json!({ format!("n{i}"): v })).boxed(),
                })
                .collect();
            prop::sample::select((0..arms.len()).collect::<Vec<_>>()).prop_flat_map(move |i| arms[i].clone()).boxed()
        }
        Wit::Enum(n) => names_of(*n).prop_map(Value::from).boxed(),
        Wit::Flags(n) => prop::collection::vec(names_of(*n), 0..3).prop_map(|f| json!(f)).boxed(),
    }
}

/// A type and JSON for it: shaped like it, or random, or shaped like it with one part swapped
/// for random JSON.
fn case() -> impl Strategy<Value = (Wit, Value)> {
    wit().prop_flat_map(|wit| {
        let json = prop_oneof![4 => fitting(&wit), 1 => json_value()];
        (Just(wit), json)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::fuzzing::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn fuzz_plain_values((wit, json) in case()) {
        let ty = wasmtime_type(&wit);
        match to_val(&ty, &json, "x") {
            Ok(val) => {
                let back = to_json(&val);
                let again = to_val(&ty, &back, "x");
                prop_assert_eq!(again.as_ref(), Ok(&val), "{} came back as {}", json, back);
            }
            Err(message) => prop_assert!(message.starts_with("`x"), "the error names the path: {}", message),
        }
    }
}
