//! An mcpbox plugin in Rust: tools, a resource, a resource template and a prompt, each an
//! annotated function (the same plugin as the Python and JavaScript examples).

use mcpbox_sdk::prelude::*;

/// How enthusiastic a greeting is.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Style {
    #[default]
    Plain,
    Excited,
}

/// Arguments of `greet`; the doc comments become the input schema's descriptions.
#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
    /// How enthusiastic the greeting is.
    #[serde(default)]
    style: Style,
}

/// Arguments of `count`.
#[derive(Deserialize, JsonSchema)]
struct Count {
    /// The text to count.
    text: String,
}

/// The structured result of `count`; its schema becomes the tool's output schema.
#[derive(Serialize, JsonSchema)]
struct Counts {
    lines: usize,
    words: usize,
    characters: usize,
}

mcpbox_sdk::tools! {
    /// Greets someone by name.
    fn greet(args: Greet) -> Result<String, Error> {
        let end = match args.style {
            Style::Plain => ".",
            Style::Excited => "!",
        };
        Ok(format!("Hello, {}{end}", args.name))
    }

    /// Counts the lines, words and characters of a text.
    fn count(args: Count) -> Result<Json<Counts>, Error> {
        let text = &args.text;
        Ok(Json(Counts { lines: text.lines().count(), words: text.split_whitespace().count(), characters: text.chars().count() }))
    }
}

/// The variables of the `greeting` template.
#[derive(Deserialize)]
struct Name {
    name: String,
}

mcpbox_sdk::resources! {
    /// What this plugin is.
    #[resource("rust://about")]
    fn about() -> Result<String, Error> {
        Ok("An mcpbox plugin written in Rust with the mcpbox SDK.".into())
    }

    /// A greeting for anyone, by URI.
    #[resource("greeting://{name}")]
    fn greeting(vars: Name) -> Result<String, Error> {
        Ok(format!("Hello, {}.", vars.name))
    }
}

/// Arguments of `review`: prompt arguments are strings, optional ones `Option<String>`.
#[derive(Deserialize, JsonSchema)]
struct Review {
    /// The code to review.
    code: String,
    /// What to look at first.
    focus: Option<String>,
}

mcpbox_sdk::prompts! {
    /// Asks the model to review a piece of code.
    fn review(args: Review) -> Result<String, Error> {
        let focus = args.focus.as_deref().unwrap_or("correctness");
        Ok(format!("Review this code, looking at {focus} first:\n\n{}", args.code))
    }
}

fn plugin() -> Plugin {
    Plugin::new()
        .add(greet::tool().read_only())
        .add(count::tool().read_only())
        .add(about::resource())
        .add(greeting::resource())
        .add(review::prompt())
}

mcpbox_sdk::export_plugin!(plugin);
