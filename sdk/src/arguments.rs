//! Arguments into the types a plugin's functions take, with errors a model can act on: the path
//! of the offending field and what is wrong with it
//! (`` `style`: unknown variant `loud`, expected `plain` or `excited` ``), never the parser's
//! line and column. Tools, prompts and template variables all go through here.

use serde::de::DeserializeOwned;

/// `text` (a tool's JSON arguments) as `A`.
pub(crate) fn from_json<A: DeserializeOwned>(text: &str) -> Result<A, String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = serde_path_to_error::deserialize(&mut deserializer).map_err(explain)?;
    deserializer.end().map_err(|e| format!("invalid arguments: {}", without_position(&e)))?;
    Ok(parsed)
}

/// `value` (prompt arguments, template variables) as `A`.
pub(crate) fn from_value<A: DeserializeOwned>(value: serde_json::Value) -> Result<A, String> {
    serde_path_to_error::deserialize(value).map_err(explain)
}

fn explain(error: serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = error.path().to_string();
    let problem = without_position(error.inner());
    if path == "." { format!("invalid arguments: {problem}") } else { format!("`{path}`: {problem}") }
}

/// serde_json's message without the " at line L column C" it appends.
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    message.strip_suffix(&suffix).map(str::to_owned).unwrap_or(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[expect(dead_code, reason = "only deserialized")]
    struct Greet {
        name: String,
        times: u8,
    }

    #[test]
    fn errors_name_the_field_not_the_offset() {
        assert_eq!(from_json::<Greet>("{}").unwrap_err(), "invalid arguments: missing field `name`");
        assert_eq!(
            from_json::<Greet>(r#"{"name":"a","times":300}"#).unwrap_err(),
            "`times`: invalid value: integer `300`, expected u8"
        );
        let value = serde_json::json!({ "name": "a", "times": "x" });
        assert_eq!(from_value::<Greet>(value).unwrap_err(), "`times`: invalid type: string \"x\", expected u8");
    }
}
