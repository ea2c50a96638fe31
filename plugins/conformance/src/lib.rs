//! `conformance`: exactly the fixtures the official MCP conformance suite
//! (`@modelcontextprotocol/conformance` 0.1.16, and 0.2.0-alpha.12's in `input_required.rs` and `tasks.rs`)
//! expects of a server, so the suite can run against mcpbox itself. Serve it without a name prefix (`[plugins.conformance] prefix = ""`) for the
//! suite; the names below are what the suite calls.

use std::thread::sleep;
use std::time::Duration;

use mcpbox_sdk::host::{elicit, log, progress, sample_text};
use mcpbox_sdk::prelude::*;

mod input_required;
mod list_changes;
mod tasks;

/// A 1x1 transparent PNG.
const PNG: [u8; 70] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 31, 21, 196,
    137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 218, 99, 100, 96, 248, 95, 15, 0, 2, 135, 1, 128, 235, 71, 186, 146, 0, 0,
    0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// A WAV file of 100 ms of silence (8 kHz, 8-bit mono).
fn wav() -> Vec<u8> {
    let samples = 800u32;
    let mut w = Vec::with_capacity(44 + samples as usize);
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&(36 + samples).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes()); // PCM
    w.extend_from_slice(&1u16.to_le_bytes()); // mono
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&8000u32.to_le_bytes()); // bytes per second
    w.extend_from_slice(&1u16.to_le_bytes()); // block align
    w.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    w.extend_from_slice(b"data");
    w.extend_from_slice(&samples.to_le_bytes());
    w.resize(44 + samples as usize, 128);
    w
}

fn text_resource_contents(uri: &str, mime: &str, text: &str) -> Vec<ResourceContents> {
    vec![ResourceContents {
        uri: uri.to_owned(),
        mime_type: Some(mime.to_owned()),
        body: mcpbox_sdk::ResourceBody::Text(text.to_owned()),
    }]
}

#[derive(Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the client's model.
    prompt: String,
}

#[derive(Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

fn plugin() -> Plugin {
    list_changes::hooks(tasks::fixtures(input_required::fixtures(Plugin::new())))
        .tool(Tool::new("test_sampling", "Asks the client's model (sampling)", |a: SamplingArgs| {
            Ok(format!("LLM response: {}", sample_text(&a.prompt, 100)?))
        }))
        .tool(Tool::new("test_elicitation", "Asks the user for a username and email (elicitation)", |a: ElicitationArgs| {
            let schema = json!({
                "type": "object",
                "properties": { "username": { "type": "string" }, "email": { "type": "string" } },
                "required": ["username", "email"]
            });
            Ok(format!("User response: {}", elicit(&a.message, &schema)?))
        }))
        .tool(Tool::new(
            "test_missing_capability",
            "Asks the client's model; a 2026-07-28 request that does not declare sampling gets MissingRequiredClientCapability",
            |_: NoArgs| Ok(format!("LLM response: {}", sample_text("Say hello", 10)?)),
        ))
        .tool(Tool::new("test_elicitation_sep1034_defaults", "Elicitation whose schema has defaults (SEP-1034)", |_: NoArgs| {
            let schema = json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "default": "John Doe" },
                    "age": { "type": "integer", "default": 30 },
                    "score": { "type": "number", "default": 95.5 },
                    "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
                    "verified": { "type": "boolean", "default": true }
                }
            });
            Ok(format!("Elicitation completed: {}", elicit("Please review and update the form fields with defaults", &schema)?))
        }))
        .tool(Tool::new("test_elicitation_sep1330_enums", "Elicitation with the five enum schema variants (SEP-1330)", |_: NoArgs| {
            let schema = json!({
                "type": "object",
                "properties": {
                    "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                    "titledSingle": { "type": "string", "oneOf": [
                        { "const": "value1", "title": "First Option" },
                        { "const": "value2", "title": "Second Option" },
                        { "const": "value3", "title": "Third Option" }
                    ] },
                    "legacyEnum": { "type": "string", "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"] },
                    "untitledMulti": { "type": "array", "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                    "titledMulti": { "type": "array", "items": { "anyOf": [
                        { "const": "value1", "title": "First Choice" },
                        { "const": "value2", "title": "Second Choice" },
                        { "const": "value3", "title": "Third Choice" }
                    ] } }
                }
            });
            Ok(format!("Elicitation completed: {}", elicit("Please select options from the enum fields", &schema)?))
        }))
        .tool(Tool::new("test_simple_text", "Returns a simple text response", |_: NoArgs| {
            Ok("This is a simple text response for testing.")
        }))
        .tool(Tool::new("test_image_content", "Returns a 1x1 PNG image", |_: NoArgs| Ok(vec![image(PNG, "image/png")])))
        .tool(Tool::new("test_audio_content", "Returns a short WAV clip", |_: NoArgs| {
            Ok(vec![audio(wav(), "audio/wav")])
        }))
        .tool(Tool::new("test_embedded_resource", "Returns an embedded text resource", |_: NoArgs| {
            Ok(vec![text_resource("test://embedded-resource", "text/plain", "This is an embedded resource content.")])
        }))
        .tool(Tool::new("test_multiple_content_types", "Returns text, an image and a resource", |_: NoArgs| {
            Ok(vec![
                text("Multiple content types test:"),
                image(PNG, "image/png"),
                text_resource("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
            ])
        }))
        .tool(Tool::new("test_tool_with_logging", "Sends three log messages while it runs", |_: NoArgs| {
            log(LogLevel::Info, "Tool execution started");
            sleep(Duration::from_millis(50));
            log(LogLevel::Info, "Tool processing data");
            sleep(Duration::from_millis(50));
            log(LogLevel::Info, "Tool execution completed");
            Ok("Tool with logging executed successfully")
        }))
        .tool(Tool::new("test_error_handling", "Always fails", |_: NoArgs| {
            Ok(CallResult::error("This tool intentionally returns an error for testing"))
        }))
        .tool(Tool::new("test_tool_with_progress", "Reports progress 0, 50, 100 of 100", |_: NoArgs| {
            progress(0.0, Some(100.0), None);
            sleep(Duration::from_millis(50));
            progress(50.0, Some(100.0), None);
            sleep(Duration::from_millis(50));
            progress(100.0, Some(100.0), None);
            Ok("Progress test completed")
        }))
        .tool(
            Tool::new("json_schema_2020_12_tool", "Takes a schema with $defs and $ref", |args: serde_json::Value| {
                Ok(format!("Received: {args}"))
            })
            .input_schema(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {
                        "$anchor": "addressDef",
                        "type": "object",
                        "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
                    }
                },
                "properties": {
                    "name": { "type": "string" },
                    "address": { "$ref": "#/$defs/address" },
                    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                    "phone": { "type": "string" },
                    "email": { "type": "string" }
                },
                "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
                "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
                "then": { "required": ["phone"] },
                "else": { "required": ["email"] },
                "additionalProperties": false
            })),
        )
        .tool(
            Tool::new("test_custom_header", "Takes a region that travels in the Mcp-Param-Region header too (SEP-2243)", |args: serde_json::Value| {
                Ok(format!("Region: {}", args["region"].as_str().unwrap_or_default()))
            })
            .input_schema(json!({
                "type": "object",
                "properties": { "region": { "type": "string", "x-mcp-header": "Region" } },
                "required": ["region"]
            })),
        )
        .resource(
            Resource::new("test://static-text", "static-text")
                .description("A static text resource")
                .mime_type("text/plain"),
            |uri| Ok(text_resource_contents(uri, "text/plain", "This is the content of the static text resource.")),
        )
        .resource(
            Resource::new("test://static-binary", "static-binary").description("A static PNG").mime_type("image/png"),
            |uri| {
                Ok(vec![ResourceContents {
                    uri: uri.to_owned(),
                    mime_type: Some("image/png".into()),
                    body: mcpbox_sdk::ResourceBody::Blob(PNG.to_vec()),
                }])
            },
        )
        .resource(
            Resource::new("test://watched-resource", "watched-resource")
                .description("A resource clients may subscribe to")
                .mime_type("text/plain"),
            |uri| Ok(text_resource_contents(uri, "text/plain", "Watched resource content")),
        )
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template")
                .description("Data for an ID")
                .mime_type("application/json"),
            |uri, vars| {
                let id = &vars["id"];
                let body = json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
                Ok(text_resource_contents(uri, "application/json", &body.to_string()))
            },
        )
        .prompt(Prompt::new("test_simple_prompt", "A prompt without arguments"), |_| {
            Ok(PromptResult::user(text("This is a simple prompt for testing.")))
        })
        .prompt(
            Prompt::new("test_prompt_with_arguments", "A prompt with two arguments")
                .argument("arg1", "First argument", true)
                .argument("arg2", "Second argument", true),
            |args| {
                let (a, b) = (args.get("arg1").unwrap_or_default(), args.get("arg2").unwrap_or_default());
                Ok(PromptResult::user(text(format!("Prompt with arguments: arg1='{a}', arg2='{b}'"))))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_embedded_resource", "A prompt embedding a resource").argument(
                "resourceUri",
                "URI of the resource to embed",
                true,
            ),
            |args| {
                let uri = args.get("resourceUri").unwrap_or_default();
                Ok(PromptResult::user_messages(vec![
                    text_resource(uri, "text/plain", "Embedded resource content for testing."),
                    text("Please process the embedded resource above."),
                ]))
            },
        )
        .prompt(Prompt::new("test_prompt_with_image", "A prompt with an image"), |_| {
            Ok(PromptResult::user_messages(vec![image(PNG, "image/png"), text("Please analyze the image above.")]))
        })
        .completion(|request| {
            let candidates = ["paris", "park", "test", "testing", "tested"];
            candidates.iter().filter(|c| c.starts_with(&request.argument_value)).map(|c| c.to_string()).collect()
        })
}

mcpbox_sdk::export_plugin!(plugin);
