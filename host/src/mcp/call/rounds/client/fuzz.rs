//! Fuzz target: the `inputResponses` of a 2026-07-28 request (multi round-trip), as the client
//! sends them, replayed to a guest asking random questions. A request whose params do not
//! parse is refused before any guest runs; otherwise every valid question gets exactly the
//! answer filed under its key when that answer fits the question and its key was asked that
//! question, or becomes a question for the client; nothing panics.

use proptest::prelude::*;
use rmcp::model::{CallToolRequestParams, ClientCapabilities};
use serde_json::{Value, json};

use super::{ReplayClient, client_question, fits};
use crate::fuzzing::json_value;
use crate::mcp::call::rounds::request_state::{Asked, question_digest};
use crate::runtime::sandbox::{ClientError, ClientMethod, ClientRequests, Question};

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        (prop::sample::select(&["sampling", "elicitation", "roots"][..]), 0usize..4)
            .prop_map(|(k, n)| format!("{k}-{n}")),
        ".{0,10}",
    ]
}

fn question() -> impl Strategy<Value = (ClientMethod, Value)> {
    let method = prop_oneof![Just(ClientMethod::Sample), Just(ClientMethod::Elicit), Just(ClientMethod::ListRoots)];
    let params = prop_oneof![
        Just(json!({ "messages": [], "maxTokens": 5 })),
        Just(json!({ "message": "name?", "requestedSchema": { "type": "object", "properties": {} } })),
        json_value(),
    ];
    (method, params)
}

proptest! {
    #[test]
    fn fuzz_input_responses(
        responses in prop_oneof![
            prop::collection::btree_map(key(), json_value(), 0..4).prop_map(|m| json!(m)),
            json_value(),
        ],
        questions in prop::collection::vec(question(), 0..5),
        bound in prop::collection::vec(any::<bool>(), 5),
        capable in any::<bool>(),
    ) {
        let params = json!({ "name": "t", "arguments": {}, "inputResponses": responses });
        let Ok(request) = serde_json::from_value::<CallToolRequestParams>(params) else {
            // rmcp refuses the request with invalid params; no guest runs.
            return Ok(());
        };
        let answers = request.input_responses.unwrap_or_default();
        let capabilities: ClientCapabilities = if capable {
            serde_json::from_value(json!({ "sampling": {}, "elicitation": {}, "roots": {} })).map_err(|e| TestCaseError::fail(e.to_string()))?
        } else {
            ClientCapabilities::default()
        };
        let kind = |method| match method {
            ClientMethod::Sample => "sampling",
            ClientMethod::Elicit => "elicitation",
            ClientMethod::ListRoots => "roots",
        };
        // Some keys were asked the question asked now, the others another one (or none).
        let valid = |method, params: &Value| client_question(method, params.clone()).ok();
        let asked: Asked = questions
            .iter()
            .enumerate()
            .filter(|(number, _)| bound[*number])
            .filter_map(|(number, (method, params))| {
                valid(*method, params).map(|request| (format!("{}-{number}", kind(*method)), question_digest(&request)))
            })
            .collect();
        let client = ReplayClient::new(Some(answers.clone()), asked.clone(), Some(capabilities), None);
        let mut unanswered = Vec::new();
        for (number, (method, params)) in questions.into_iter().enumerate() {
            let key = format!("{}-{number}", kind(method));
            let is_valid = valid(method, &params).is_some();
            let outcome = futures::executor::block_on(client.ask(vec![Question { key: None, method, params }]))
                .map(|mut answers| answers.remove(0));
            let fitting = answers.get(&key).filter(|answer| is_valid && asked.contains_key(&key) && fits(method, answer));
            match (outcome, fitting) {
                (Ok(Ok(answer)), Some(expected)) => prop_assert_eq!(&answer, expected),
                (Ok(Err(_)), None) => {}
                (Ok(answer), None) => prop_assert!(false, "{key} answered with {answer:?} from nowhere"),
                (Ok(Err(e)), Some(_)) => prop_assert!(false, "{key} refused although answered: {e}"),
                (Err(ClientError::MissingCapability(_)), _) => prop_assert!(!capable),
                (Err(ClientError::InputRequired), None) => unanswered.push(key),
                (Err(ClientError::Refused(_)), None) => {}
                (Err(other), answer) => prop_assert!(false, "{key}: {other:?} although answered with {answer:?}"),
            }
        }
        let mut asked: Vec<String> = client.take_questions().0.into_keys().collect();
        asked.sort();
        unanswered.sort();
        prop_assert_eq!(asked, unanswered);
    }
}
