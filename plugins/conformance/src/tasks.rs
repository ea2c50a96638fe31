//! The fixtures of the tasks extension's scenarios (`tasks-*` of 0.2.0-alpha.12, SEP-2663).
//! Which of them run as tasks is the operator's choice (`[plugin.conformance.tasks]` in the
//! test's config: every one but `greet`, at once; `failing_job` and `test_tool_with_task`
//! required); `test_tool_with_task` detaches by itself once it has its answer.

use std::thread::sleep;
use std::time::Duration;

use mcpbox_sdk::host::{Question, ask, ask_one, detach, progress};
use mcpbox_sdk::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// How long to work, in seconds.
    seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The file to delete (nothing is deleted: the fixture only asks).
    filename: String,
}

fn confirmation(message: &str) -> Question {
    let schema = json!({ "type": "object", "properties": { "confirm": { "type": "boolean" } } });
    Question::elicit(message, &schema)
}

pub(crate) fn fixtures(plugin: Plugin) -> Plugin {
    plugin
        .tool(Tool::new("greet", "Greets someone, at once (never a task)", |a: GreetArgs| {
            Ok(format!("Hello, {}!", a.name))
        }))
        .tool(Tool::new("slow_compute", "Works for `seconds` seconds, reporting progress", |a: SlowArgs| {
            let steps = (a.seconds * 10.0).ceil().max(0.0) as u32;
            for step in 0..steps {
                progress(f64::from(step), Some(f64::from(steps)), Some(&format!("step {step} of {steps}")));
                sleep(Duration::from_millis(100));
            }
            Ok(format!("computed for {} s ({})", a.seconds, a.label.unwrap_or_default()))
        }))
        .tool(Tool::new(
            "failing_job",
            "Fails as a tool (isError) after about a second",
            |_: NoArgs| -> Result<String, Error> {
                sleep(Duration::from_secs(1));
                Err(Error::failed("the job failed, as this fixture always does"))
            },
        ))
        .tool(Tool::new(
            "protocol_error_job",
            "Ends in a JSON-RPC error (invalid params)",
            |_: NoArgs| -> Result<String, Error> {
                sleep(Duration::from_millis(300));
                Err(Error::unknown_tool("protocol_error_job ends in a JSON-RPC error, as this fixture always does"))
            },
        ))
        .tool(Tool::new("confirm_delete", "Asks the user to confirm deleting a file", |a: DeleteArgs| {
            let answer = ask_one(confirmation(&format!("Delete {}?", a.filename)).key("confirm_delete"))?;
            let confirmed = answer["content"]["confirm"].as_bool().unwrap_or(false);
            Ok(format!("{} {}", if confirmed { "deleted" } else { "kept" }, a.filename))
        }))
        .tool(Tool::new("multi_input", "Asks two questions at once", |_: NoArgs| {
            let schema = json!({ "type": "object", "properties": { "name": { "type": "string" } } });
            let answers = ask(&[
                Question::elicit("First name?", &schema).key("first"),
                Question::elicit("Second name?", &schema).key("second"),
            ])?;
            let names: Vec<String> = answers
                .into_iter()
                .map(|a| a.map(|a| a["content"]["name"].as_str().unwrap_or_default().to_owned()))
                .collect::<Result<_, _>>()?;
            Ok(format!("got {}", names.join(" and ")))
        }))
        .tool(Tool::new(
            "test_tool_with_task",
            "Asks for a name (multi round-trip), then goes on as a task",
            |_: NoArgs| {
                let schema =
                    json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
                let answer = ask_one(Question::elicit("What is your name?", &schema).key("user_name"))?;
                let name = answer["content"]["name"].as_str().unwrap_or("stranger").to_owned();
                detach(Some(&format!("greeting {name}")))?;
                sleep(Duration::from_millis(500));
                Ok(format!("Hello, {name}, from a task!"))
            },
        ))
}
