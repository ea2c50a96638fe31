//! Plain components (exported functions, no mcpbox WIT): each function is a tool whose input
//! schema comes from its WIT types; JSON arguments become component values and back.

use serde_json::{Value, json};

use crate::common::*;

#[test]
fn exported_functions_are_tools_with_schemas_from_their_types() {
    let mut server = Server::start(&[fixture("plain")]);
    server.initialize("2025-06-18", json!({}));
    let listed = server.result("tools/list", json!({}));
    assert_schema("2025-06-18", "ListToolsResult", &listed);
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["plain.area", "plain.describe", "plain.divide", "plain.text.transform", "plain.text.words"]);
    let transform = &listed["tools"][3]["inputSchema"];
    assert_eq!(transform["properties"]["options"]["properties"]["style"]["enum"], json!(["upper", "lower"]));
    assert_eq!(transform["required"], json!(["input", "options"]));

    // Variants: a case with a payload is an object, one without is its name.
    let area = |server: &mut Server, shape: Value| text(&call_tool(server, "plain.area", json!({ "shape": shape })));
    assert!(area(&mut server, json!({ "circle": 1.0 })).starts_with("3.14159"));
    assert_eq!(area(&mut server, json!({ "rectangle": [2, 3.5] })), "7.0");
    assert_eq!(area(&mut server, json!("point")), "0.0");

    // A WIT result: ok is the value, err an isError result.
    let quotient = call_tool(&mut server, "plain.divide", json!({ "a": 6, "b": 3 }));
    assert_eq!(quotient["structuredContent"], json!({ "result": 2.0 }));
    let by_zero = call_tool(&mut server, "plain.divide", json!({ "a": 1, "b": 0 }));
    assert_eq!(by_zero["isError"], true);
    assert_eq!(text(&by_zero), "division by zero");

    // Flags, lists and options (an absent option is none).
    let limited = call_tool(
        &mut server,
        "plain.describe",
        json!({ "permissions": ["read", "exec"], "tags": ["a", "b", "c"], "limit": 2 }),
    );
    assert_eq!(text(&limited), "can read+exec; tags a,b");
    let all = call_tool(&mut server, "plain.describe", json!({ "permissions": [], "tags": ["x"] }));
    assert_eq!(text(&all), "can ; tags x");

    // Records and enums inside an exported interface.
    let shout = call_tool(
        &mut server,
        "plain.text.transform",
        json!({ "input": "Hi", "options": { "style": "upper", "repeat": 2 } }),
    );
    assert_eq!(text(&shout), "HIHI");
    let words = call_tool(&mut server, "plain.text.words", json!({ "input": "one two  three" }));
    assert_eq!(words["structuredContent"], json!({ "result": ["one", "two", "three"] }));

    // Arguments that do not fit the types are the model's to correct, with the reason.
    for (tool, arguments, reason) in [
        (
            "plain.text.transform",
            json!({ "input": "x", "options": { "style": "loud" } }),
            "`options.style` must be one of upper, lower",
        ),
        ("plain.area", json!({ "shape": { "hexagon": 1 } }), "`hexagon` is not one of circle, rectangle, point"),
        ("plain.describe", json!({ "permissions": ["fly"], "tags": [] }), "\"fly\" is not one of read, write, exec"),
        (
            "plain.text.transform",
            json!({ "input": "x", "options": { "style": "upper", "repeat": 300 } }),
            "from 0 to 255",
        ),
        ("plain.divide", json!({ "a": 1, "b": 2, "c": 3 }), "unknown argument `c`"),
    ] {
        let result = call_tool(&mut server, tool, arguments);
        assert_eq!(result["isError"], true, "{result}");
        assert!(text(&result).contains(reason), "{tool}: {result}");
    }
}

/// A custom section, as the binary format encodes it: id 0, size, name, data.
pub fn custom_section(name: &str, data: &[u8]) -> Vec<u8> {
    fn leb128(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            out.push(if n == 0 { byte } else { byte | 0x80 });
            if n == 0 {
                break;
            }
        }
    }
    let mut body = Vec::new();
    leb128(name.len(), &mut body);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(data);
    let mut section = vec![0];
    leb128(body.len(), &mut section);
    section.extend(body);
    section
}

#[test]
fn doc_comments_a_component_carries_become_descriptions() {
    // The `package-docs` section wit-component encodes for the fixture's WIT (version byte,
    // then JSON), as docs-injecting tools add it to components: a world function export and
    // an interface function. rustc's component linker leaves it out, so the test adds it.
    let docs = json!({
        "worlds": { "plain": { "func_exports": { "divide": { "docs": "Divides `a` by `b`; fails on division by zero." } } } },
        "interfaces": { "text": { "funcs": { "words": { "docs": "Splits a text into words." } } } },
    });
    let mut section = vec![1];
    section.extend(docs.to_string().into_bytes());
    let dir = temp_dir();
    let documented = dir.path().join("plain.wasm");
    let mut bytes = std::fs::read(fixture("plain")).unwrap();
    bytes.extend(custom_section("package-docs", &section));
    std::fs::write(&documented, bytes).unwrap();

    let mut server = Server::start(&[&documented]);
    server.initialize("2025-06-18", json!({}));
    let listed = server.result("tools/list", json!({}));
    let description = |name: &str| {
        let tool = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap();
        tool["description"].as_str().unwrap().to_owned()
    };
    assert_eq!(description("plain.divide"), "Divides `a` by `b`; fails on division by zero.");
    assert_eq!(description("plain.text.words"), "Splits a text into words.");
    // Functions without docs keep the generic description.
    assert_eq!(description("plain.area"), "`area`, a function the component exports");
}
