//! The fixtures of the 2026-07-28 suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12):
//! multi round-trip requests with the keys the suite expects (`input-required-result-*`,
//! SEP-2322) and the diagnostic tools of `server-stateless` (SEP-2575). Each asks through
//! `host::ask` under its own keys; the host turns unanswered questions into an
//! `InputRequiredResult` and seals what the plugin saved into its `requestState`.

use mcpbox_sdk::host::{ClientMethod, Question, ask, ask_one, can_ask, log, progress, save_state, saved_state};
use mcpbox_sdk::prelude::*;

fn name_schema() -> serde_json::Value {
    json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] })
}

fn what_is_your_name(message: &str) -> Question {
    Question::elicit(message, &name_schema())
}

fn confirm() -> Question {
    let schema = json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] });
    Question::elicit("Please confirm", &schema).key("confirm")
}

/// The text of a sampling answer.
fn sampled(answer: &serde_json::Value) -> String {
    answer["content"]["text"].as_str().unwrap_or_default().to_owned()
}

/// The URIs of a `roots/list` answer.
fn root_uris(answer: &serde_json::Value) -> Vec<String> {
    let roots = answer["roots"].as_array().map(Vec::as_slice).unwrap_or_default();
    roots.iter().filter_map(|r| r["uri"].as_str().map(str::to_owned)).collect()
}

/// What the plugin saves before asking for confirmation, and expects back on the retry.
const STATE: &[u8] = b"confirm-pending";

/// `test_input_required_result_request_state` and `..._tampered_state`: the state saved in
/// round 1 comes back, sealed, in round 2.
fn confirmed() -> Result<String, Error> {
    let carried = saved_state();
    save_state(STATE)?;
    let answer = ask_one(confirm())?;
    let state = if carried.as_deref() == Some(STATE) { "state-ok" } else { "state-missing" };
    Ok(format!("{state}: confirmed {}", answer["content"]["ok"]))
}

pub(crate) fn fixtures(plugin: Plugin) -> Plugin {
    plugin
        .tool(Tool::new("test_input_required_result_elicitation", "Asks for a name under the key user_name", |_: NoArgs| {
            let answer = ask_one(what_is_your_name("What is your name?").key("user_name"))?;
            Ok(format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("stranger")))
        }))
        .tool(Tool::new("test_input_required_result_sampling", "Asks the model under the key capital_question", |_: NoArgs| {
            let answer = ask_one(Question::sample_text("What is the capital of France?", 100).key("capital_question"))?;
            Ok(format!("The model says: {}", sampled(&answer)))
        }))
        .tool(Tool::new("test_input_required_result_list_roots", "Asks for the client's roots under the key client_roots", |_: NoArgs| {
            let answer = ask_one(Question::list_roots().key("client_roots"))?;
            Ok(format!("Client roots: {}", root_uris(&answer).join(", ")))
        }))
        .tool(Tool::new("test_input_required_result_request_state", "Saves a state, asks to confirm, checks the state", |_: NoArgs| {
            confirmed()
        }))
        .tool(Tool::new("test_input_required_result_tampered_state", "Like request_state; the host refuses altered state", |_: NoArgs| {
            confirmed()
        }))
        .tool(Tool::new("test_input_required_result_multiple_inputs", "Asks three questions in one round", |_: NoArgs| {
            let answers = ask(&[
                what_is_your_name("What is your name?").key("user_name"),
                Question::sample_text("Generate a greeting", 50).key("greeting"),
                Question::list_roots().key("client_roots"),
            ])?;
            let mut answers = answers.into_iter();
            let mut next = || answers.next().unwrap_or_else(|| Err(Error::failed("missing answer")));
            let (name, greeting, roots) = (next()?, next()?, next()?);
            Ok(format!(
                "{} {}, roots: {}",
                sampled(&greeting),
                name["content"]["name"].as_str().unwrap_or_default(),
                root_uris(&roots).join(", ")
            ))
        }))
        .tool(Tool::new("test_input_required_result_multi_round", "Asks step1, then step2 in a second round", |_: NoArgs| {
            // Round 2 saves step 1's answer; round 3 resumes from it instead of asking again.
            let name = match saved_state() {
                Some(name) => String::from_utf8_lossy(&name).into_owned(),
                None => {
                    let answer = ask_one(what_is_your_name("Step 1: What is your name?").key("step1"))?;
                    let name = answer["content"]["name"].as_str().unwrap_or_default().to_owned();
                    save_state(name.as_bytes())?;
                    name
                }
            };
            let schema = json!({ "type": "object", "properties": { "color": { "type": "string" } }, "required": ["color"] });
            let color = ask_one(Question::elicit("Step 2: What is your favorite color?", &schema).key("step2"))?;
            Ok(format!("{name} likes {}", color["content"]["color"].as_str().unwrap_or_default()))
        }))
        .tool(Tool::new("test_input_required_result_capabilities", "Asks only what the client declared it can answer", |_: NoArgs| {
            let mut questions = Vec::new();
            if can_ask(ClientMethod::Sample) {
                questions.push(Question::sample_text("Summarize the weather", 20).key("summary"));
            }
            if can_ask(ClientMethod::Elicit) {
                questions.push(what_is_your_name("What is your name?").key("user_name"));
            }
            let answers = ask(&questions)?;
            Ok(format!("{} answers", answers.len()))
        }))
        .tool(Tool::new("test_streaming_elicitation", "Reports progress, then asks for a name", |_: NoArgs| {
            progress(1.0, Some(2.0), Some("about to ask"));
            let answer = ask_one(what_is_your_name("What is your name?"))?;
            Ok(format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("stranger")))
        }))
        .tool(Tool::new("test_logging_tool", "Logs a message (sent only to requests that set a log level)", |_: NoArgs| {
            log(LogLevel::Info, "test_logging_tool ran");
            Ok("logged")
        }))
        .prompt(Prompt::new("test_input_required_result_prompt", "A prompt that asks the user for context first"), |_| {
            let schema = json!({ "type": "object", "properties": { "context": { "type": "string" } }, "required": ["context"] });
            let answer = ask_one(Question::elicit("What context should the prompt use?", &schema).key("user_context"))?;
            let context = answer["content"]["context"].as_str().unwrap_or_default().to_owned();
            Ok(PromptResult::user(text(format!("Use this context: {context}"))))
        })
}
