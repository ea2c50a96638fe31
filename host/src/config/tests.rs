//! The config's parsing and checks, on files written to a temporary directory.

use std::path::Path;

use super::file::parse;
use super::*;
use crate::runtime::engine::CopyOnWrite;

/// `text` as a config file in a fresh temporary directory, and the arguments naming it.
fn config_file(text: &str) -> (tempfile::TempDir, PathBuf, ServeArgs) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcpbox.toml");
    std::fs::write(&path, text).unwrap();
    let args = ServeArgs { config: Some(path.clone()), ..Default::default() };
    (dir, path, args)
}

fn error_of(args: &ServeArgs) -> String {
    format!("{:#}", Settings::from_args(args).unwrap_err())
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let text = "plugins = [\"a\"]\n\n[limits]\ntimeout_ms = 5\nmemroy_mib = 3\n";
    let error = parse(Path::new("mcpbox.toml"), text).unwrap_err().to_string();
    assert!(error.starts_with("mcpbox.toml:5:1: unknown field `memroy_mib`"), "{error}");
}

#[test]
fn wrong_type_names_the_line() {
    let text = "[limits]\ntimeout_ms = \"soon\"\n";
    let error = parse(Path::new("c.toml"), text).unwrap_err().to_string();
    assert!(error.starts_with("c.toml:2:"), "{error}");
    assert!(error.contains("invalid type"), "{error}");
}

#[test]
fn the_documented_example_config_is_valid() {
    let readme = include_str!("../../../docs/config.md");
    let start = readme.find("```toml\n").expect("docs/config.md has a toml example") + "```toml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let config = parse(Path::new("docs/config.md"), &readme[start..end]).unwrap();
    assert_eq!(config.plugin["filesystem"].exclude_tools.as_deref(), Some(&["write_file".to_owned()][..]));
    assert_eq!(config.limits.max_output_mib.as_ref().map(|v| *v.get_ref()), Some(16));
}

#[test]
fn a_bad_network_entry_names_file_line_and_reason() {
    let (_dir, path, args) =
        config_file("[plugin.web]\nnetwork = [\n  \"https://ok.example\",\n  \"api.example.com\",\n]\n");
    let error = error_of(&args);
    assert!(error.starts_with(&format!("{}:4:3: in [plugin.web] network", path.display())), "{error}");
    assert!(error.contains("`api.example.com` needs a scheme"), "{error}");
}

#[test]
fn plugin_policies_parse() {
    // (A writable directory of its own, not the config's folder: the pins file is there.)
    let (dir, _path, args) = config_file(
        "[plugin.web]\nnetwork = [\"https://*.example.com\"]\nroots = false\nstub_ungranted = true\n\n\
         [[plugin.web.dirs]]\npath = \"data\"\nwritable = true\nwithin_client_roots = true\n",
    );
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let settings = Settings::from_args(&args).unwrap();
    let policy = &settings.plugin_configs["web"].policy;
    assert!(!policy.shared_roots && policy.stub_ungranted);
    assert!(policy.dirs[0].dir.writable && policy.dirs[0].within_client_roots);
    let network = policy.network.as_ref().unwrap();
    assert!(network.admits("https", "api.example.com", 443).is_some() && !network.allow_private);
    // A plugin without a section gets the defaults: shared roots, nothing else.
    assert!(!settings.plugin_configs.contains_key("other"));
}

/// `host_paths`, and a plugin directory created when missing (`create`), named from the home
/// directory (`~/`) or relative to the file.
#[test]
fn host_paths_and_created_directories_parse() {
    let (dir, _path, args) = config_file(
        "[plugin.filesystem]\nhost_paths = true\n\n[plugin.memory]\n[[plugin.memory.dirs]]\n\
         path = \"data/memory\"\nwritable = true\ncreate = true\n",
    );
    let settings = Settings::from_args(&args).unwrap();
    assert!(settings.plugin_configs["filesystem"].policy.host_paths);
    assert!(!settings.plugin_configs["memory"].policy.host_paths);
    assert!(dir.path().join("data/memory").is_dir(), "created at start-up");
    // Without `create`, a missing directory is still an error naming the key.
    let (_dir, path, args) = config_file("[plugin.memory]\n[[plugin.memory.dirs]]\npath = \"absent\"\n");
    let error = error_of(&args);
    assert!(error.starts_with(&format!("{}:3:8: in [[plugin.memory.dirs]] path", path.display())), "{error}");
    // `~/` is the home directory.
    let mut file = ConfigFile::default();
    file.base = "/elsewhere".into();
    let home = std::env::var("HOME").unwrap();
    assert_eq!(file.resolve(Path::new("~/.local/share/x")), Path::new(&home).join(".local/share/x"));
    assert_eq!(file.resolve(Path::new("data")), Path::new("/elsewhere/data"));
}

#[test]
fn prefixes_and_roots_parse() {
    let text = "[[roots]]\npath = \".\"\nwritable = true\n\n[plugin.conformance]\nprefix = \"\"\n";
    let config = parse(Path::new("c.toml"), text).unwrap();
    assert!(config.roots[0].writable);
    assert_eq!(config.plugin["conformance"].prefix.as_deref(), Some(""));
}

#[test]
fn copy_on_write_comes_from_the_file_or_the_command_line() {
    let (_dir, path, args) = config_file("copy_on_write = \"on\"\n");
    assert!(Settings::from_args(&args).unwrap().engine.copy_on_write);
    let args = ServeArgs { copy_on_write: Some(CopyOnWrite::Off), ..args };
    assert!(!Settings::from_args(&args).unwrap().engine.copy_on_write);
    std::fs::write(&path, "copy_on_write = \"sometimes\"\n").unwrap();
    let error = error_of(&ServeArgs { config: Some(path), ..Default::default() });
    assert!(error.contains(":1:17:") && error.contains("unknown variant `sometimes`"), "{error}");
}

#[test]
fn absurd_limits_name_the_flag() {
    let cases: [(ServeArgs, &str); 5] = [
        (ServeArgs { timeout: Some(1e20), ..Default::default() }, "--timeout must be at most 86400 seconds"),
        (ServeArgs { timeout: Some(1e19), ..Default::default() }, "--timeout must be at most 86400 seconds"),
        (ServeArgs { timeout: Some(f64::NAN), ..Default::default() }, "--timeout must be a positive number"),
        (ServeArgs { memory: Some(u64::MAX), ..Default::default() }, "--memory must be at most 4096 MiB"),
        (
            ServeArgs { max_message_bytes: Some(500), ..Default::default() },
            "--max-message-bytes must be at least 1024 bytes, not 500 bytes",
        ),
    ];
    for (args, expected) in cases {
        let error = error_of(&args);
        assert!(error.starts_with(expected), "{error}");
    }
}

#[test]
fn absurd_limits_in_the_file_name_file_line_and_key() {
    let (_dir, path, args) = config_file("[limits]\ntimeout_ms = 9223372036854775807\n");
    let error = error_of(&args);
    assert!(error.starts_with(&format!("{}:2:14: [limits] timeout_ms must be at most", path.display())), "{error}");
    let (_dir, path, args) = config_file("[plugin.big]\nmemory_mib = 999999\n");
    let error = error_of(&args);
    assert!(
        error.starts_with(&format!("{}:2:14: [plugin.big] memory_mib must be at most 4096 MiB", path.display())),
        "{error}"
    );
    let (_dir, path, args) = config_file("[plugin.warm]\nprepared = 100\n");
    let error = error_of(&args);
    assert!(
        error.starts_with(&format!("{}:2:12: [plugin.warm] prepared must be at most 16", path.display())),
        "{error}"
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let (_dir, path, args) = config_file(
        "[[roots]]\npath = \"missing-root\"\n\n[limits]\ntimeout_ms = 0\n\n[plugin.fs]\n\
         env_from_host = [\"MCPBOX_SURELY_UNSET\"]\n\n[[plugin.fs.dirs]]\npath = \"data\"\n",
    );
    let args = ServeArgs { memory: Some(99_999), ..args };
    let error = error_of(&args);
    assert!(error.starts_with("5 problems in the configuration:\n  "), "{error}");
    for expected in [
        "--memory must be at most 4096 MiB".to_owned(),
        format!("{}:5:14: [limits] timeout_ms must be a positive number", path.display()),
        "[plugin.fs] env_from_host names `MCPBOX_SURELY_UNSET`".to_owned(),
        format!("{}:11:8: in [[plugin.fs.dirs]] path", path.display()),
        format!("{}: in [[roots]]", path.display()),
    ] {
        assert!(error.contains(&expected), "missing `{expected}` in:\n{error}");
    }
}

#[test]
fn http_transports_from_the_file_and_the_flags_over_them() {
    let http = Some("127.0.0.1:0".parse().unwrap());
    let (_dir, _path, mut args) =
        config_file("[http]\nwebsocket = false\nlegacy_sse = true\nlegacy_sse_path = \"/old\"\nheartbeat_ms = 0\n");
    args.http = http;
    args.http_path = "/mcp".into();
    let options = Settings::from_args(&args).unwrap().http.unwrap();
    assert_eq!(options.ws_path, None);
    let legacy = options.legacy_sse.unwrap();
    assert_eq!((legacy.stream.as_str(), legacy.messages.as_str()), ("/old", "/old/messages"));
    assert_eq!(options.heartbeat, None);
    args.ws_path = Some("/socket".into());
    args.heartbeat_ms = Some(2500);
    let options = Settings::from_args(&args).unwrap().http.unwrap();
    assert_eq!(options.ws_path.as_deref(), Some("/socket"), "a flag overrides the file");
    assert_eq!(options.heartbeat, Some(std::time::Duration::from_millis(2500)));
    let defaults = ServeArgs { http, http_path: "/mcp".into(), ..Default::default() };
    let options = Settings::from_args(&defaults).unwrap().http.unwrap();
    assert_eq!((options.ws_path.as_deref(), options.legacy_sse.is_none()), (Some("/ws"), true));
    assert_eq!(options.heartbeat, Some(std::time::Duration::from_secs(15)));
}

#[test]
fn bad_transport_settings_name_the_flag_or_the_line() {
    let http = Some("127.0.0.1:0".parse().unwrap());
    let (_dir, path, mut args) = config_file("[http]\nheartbeat_ms = 5\n");
    args.http = http;
    args.http_path = "/mcp".into();
    let error = error_of(&args);
    assert!(error.contains(&format!("{}:2:", path.display())) && error.contains("heartbeat_ms"), "{error}");
    assert!(error.contains("0 (off) or 100 to 3600000"), "{error}");
    let clash = ServeArgs { http, http_path: "/mcp".into(), ws_path: Some("/mcp".into()), ..Default::default() };
    let error = error_of(&clash);
    assert!(error.contains("WebSocket endpoint /mcp is already the path of --http-path"), "{error}");
    let bad = ServeArgs { http, http_path: "/mcp".into(), legacy_sse_path: Some("sse".into()), ..Default::default() };
    assert!(error_of(&bad).contains("--legacy-sse-path must be a path starting with `/`"), "{}", error_of(&bad));
    let slow = ServeArgs { http, http_path: "/mcp".into(), heartbeat_ms: Some(7_200_000), ..Default::default() };
    assert!(error_of(&slow).starts_with("--heartbeat-ms must be"), "{}", error_of(&slow));
}

#[test]
fn an_audit_file_where_plugins_may_write_is_refused() {
    let (dir, _, args) = config_file("");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let text = format!("[[roots]]\npath = {data:?}\nwritable = true\n[audit]\npath = {:?}\n", data.join("audit.jsonl"));
    std::fs::write(args.config.as_ref().unwrap(), text).unwrap();
    let error = error_of(&args);
    assert!(error.contains("inside") && error.contains("[[roots]] (or --root-rw) lets plugins write"), "{error}");
    let beside = format!("[[roots]]\npath = {data:?}\nwritable = true\n[audit]\npath = \"audit.jsonl\"\n");
    std::fs::write(args.config.as_ref().unwrap(), beside).unwrap();
    assert!(Settings::from_args(&args).unwrap().audit.is_some());
}
