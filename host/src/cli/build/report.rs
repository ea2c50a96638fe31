//! The compatibility report of `mcpbox build`: what the toolchain's scan found (the JSON the
//! language driver writes), what the built plugin serves (listed by loading it), and the
//! `[plugin.NAME]` section that grants what the code needs. Written as `OUT.compat.json`,
//! printed as text.

use std::fmt::Write as _;

use serde_json::{Value, json};

/// Names of environment variables that hold a secret: better set at the door by the host
/// (`[[plugin.NAME.credentials]]`) than handed to the guest in `env`.
fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"].iter().any(|word| upper.contains(word))
}

fn strings<'a>(report: &'a Value, key: &str, field: &str) -> Vec<(&'a str, &'a str)> {
    report[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| Some((item[field].as_str()?, item["at"].as_str().unwrap_or(""))))
        .collect()
}

/// The `[plugin.NAME]` section a user starts from: the network the code names, its
/// environment (secrets as credentials instead), a writable directory if it uses files.
pub(crate) fn suggested_config(name: &str, report: &Value) -> String {
    let mut out = String::new();
    let hosts = strings(report, "hosts", "origin");
    let environment = strings(report, "environment", "name");
    let (secrets, plain): (Vec<_>, Vec<_>) = environment.iter().partition(|(variable, _)| is_secret(variable));
    let _ = writeln!(out, "[plugin.{name}]");
    if !hosts.is_empty() {
        let list: Vec<String> = hosts.iter().map(|(origin, _)| format!("{origin:?}")).collect();
        let _ = writeln!(out, "network = [{}]", list.join(", "));
    }
    if hosts.is_empty() && report["uses_fetch"].as_bool() == Some(true) {
        let _ = writeln!(out, "# the code uses fetch but names no host: allow what it reaches, or refuse it all");
        let _ = writeln!(out, "stub_ungranted = true");
    }
    if !plain.is_empty() {
        let pairs: Vec<String> = plain.iter().map(|(variable, _)| format!("{variable} = \"...\"")).collect();
        let _ = writeln!(out, "env = {{ {} }}", pairs.join(", "));
    }
    if report["writes_files"].as_bool() == Some(true) {
        // A native server is one process; a built server's calls run side by side, each in a
        // fresh instance: one at a time keeps its read-modify-write of a file whole.
        let _ = writeln!(out, "max_concurrency = 1             # its calls read and rewrite files: one at a time");
        let _ = writeln!(out, "\n# the code writes files: a directory of its own, at /roots/data in the guest");
        let _ =
            writeln!(out, "[[plugin.{name}.dirs]]\npath = \"data\"\nname = \"data\"\nwritable = true\ncreate = true");
    }
    for (variable, at) in &secrets {
        let secret = variable.to_ascii_lowercase();
        let origin = hosts.first().map_or("https://api.example.com", |(origin, _)| origin);
        let _ =
            writeln!(out, "\n# {variable} ({at}) is a secret: the host sets it at the door instead of handing it to");
        let _ = writeln!(
            out,
            "# the code (leave {variable} unset; the request gets the header). Check the header the API wants."
        );
        let _ = writeln!(out, "[secrets.{secret}]\nenv = {variable:?}");
        let _ = writeln!(out, "[[plugin.{name}.credentials]]\nhost = {origin:?}\nheader = \"Authorization\"");
        let _ = writeln!(out, "value = \"Bearer {{secrets.{secret}}}\"");
    }
    out
}

/// The whole report as text.
pub(crate) fn render(name: &str, report: &Value) -> String {
    let mut out = String::new();
    let sdk = &report["sdk"];
    let _ = writeln!(
        out,
        "compatibility report for {} ({})",
        report["package"]["name"].as_str().unwrap_or(name),
        report["source"].as_str().unwrap_or("")
    );
    if let Some(package) = sdk["package"].as_str() {
        let flavour = report["flavour"].as_str().map(|f| format!(" ({f})")).unwrap_or_default();
        let _ = writeln!(out, "  sdk: {package} {}{flavour}", sdk["version"].as_str().unwrap_or("?"));
    }
    if let Some(entry) = report["entry"].as_str() {
        let _ = writeln!(out, "  entry: {entry}");
    }
    for (key, label) in [
        ("tools", "tools"),
        ("resources", "resources"),
        ("resource_templates", "resource templates"),
        ("prompts", "prompts"),
    ] {
        let names: Vec<&str> = report[key].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if !names.is_empty() {
            let _ = writeln!(out, "  {label} ({}): {}", names.len(), names.join(", "));
        }
    }
    for (key, field, label) in [
        ("environment", "name", "reads the environment variable"),
        ("hosts", "origin", "names the host"),
        ("shims", "module", "uses mcpbox's shim of"),
        ("stubs", "module", "imports (calling it throws)"),
    ] {
        for (what, at) in strings(report, key, field) {
            let _ = writeln!(out, "  {label} {what} ({at})");
        }
    }
    for note in report["notes"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        let _ = writeln!(out, "  note: {note}");
    }
    let blockers = report["blockers"].as_array().map_or(0, Vec::len);
    if blockers > 0 {
        let _ = writeln!(out, "  blockers ({blockers}):");
        for blocker in report["blockers"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "    {}: {} {}",
                blocker["at"].as_str().unwrap_or(""),
                blocker["what"].as_str().unwrap_or(""),
                blocker["why"].as_str().unwrap_or("")
            );
        }
    }
    if let Some(config) = report["suggested_config"].as_str() {
        let _ = writeln!(out, "\nsuggested config (mcpbox.toml):\n{config}");
    }
    out
}

/// What the build adds to the driver's report: the plugin's offer and the suggested section.
pub(crate) fn complete(report: &mut Value, name: &str, offer: Value) {
    for key in ["tools", "resources", "resource_templates", "prompts"] {
        report[key] = offer[key].clone();
    }
    report["plugin"] = json!(name);
    let config = suggested_config(name, report);
    report["suggested_config"] = json!(config);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_in_the_environment_is_suggested_as_a_credential_and_the_rest_as_env() {
        let report = json!({
            "hosts": [{"origin": "https://api.github.com", "at": "dist/index.js:3"}],
            "environment": [
                {"name": "GITHUB_PERSONAL_ACCESS_TOKEN", "at": "dist/common/utils.js:28"},
                {"name": "MEMORY_FILE_PATH", "at": "dist/index.js:14"}
            ],
            "writes_files": true,
        });
        let config = suggested_config("github", &report);
        assert!(config.contains("network = [\"https://api.github.com\"]"), "{config}");
        assert!(config.contains("env = { MEMORY_FILE_PATH = \"...\" }"), "{config}");
        assert!(!config.contains("GITHUB_PERSONAL_ACCESS_TOKEN = "), "{config}");
        assert!(config.contains("[[plugin.github.credentials]]\nhost = \"https://api.github.com\""), "{config}");
        assert!(config.contains("[[plugin.github.dirs]]"), "{config}");
        let parsed: toml::Value = toml::from_str(&config).expect("the suggestion is valid TOML");
        assert!(parsed.get("plugin").is_some());
    }
}
