//! What a plugin describes is bounded and checked like its names: each way the `bad-schema`
//! fixture breaks the rules is refused at load, naming the plugin, the item and the limit.

use crate::common::*;

/// `mcpbox check` of the fixture as the plugin `x` with `BAD` set to `mode`; its output.
fn check_with(mode: &str) -> (bool, String) {
    let dir = temp_dir();
    std::fs::copy(fixture("bad_schema"), dir.path().join("x.wasm")).unwrap();
    let config = dir.path().join("mcpbox.toml");
    std::fs::write(&config, format!("plugins = [\"x.wasm\"]\n[plugin.x]\nenv = {{ BAD = \"{mode}\" }}\n")).unwrap();
    let output = mcpbox("check").arg("--config").arg(&config).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

#[test]
fn descriptors_over_a_limit_or_with_control_characters_are_refused_at_load() {
    let (fine, output) = check_with("fine");
    assert!(fine, "the control case loads: {output}");
    for (mode, expected) in [
        ("control-title", "plugin `x` (...): the title of tool `echo` contains the control character U+001B"),
        ("long-description", "plugin `x` (...): the description of tool `echo` is 1048576 bytes; the limit is 65536"),
        ("many-tools", "plugin `x` (...): it describes 2000 tools; the limit is 1024"),
        ("bad-argument", "plugin `x` (...): argument name `the question` of prompt `ask` is invalid"),
    ] {
        let (loaded, output) = check_with(mode);
        assert!(!loaded, "{mode}: {output}");
        let line = output.lines().find(|l| l.starts_with("x ")).unwrap_or_else(|| panic!("{mode}: {output}"));
        let (head, tail) = expected.split_once("(...)").unwrap();
        assert!(line.contains(head) && line.contains(tail), "{mode}: {line}");
    }
}
