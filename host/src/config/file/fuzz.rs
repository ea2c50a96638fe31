//! Fuzz target: config files. Whatever a file says, mcpbox either takes it or refuses it with
//! a message naming the file; it never panics. Documents are built from the real tables and
//! keys with values of every TOML type (often the wrong one, out of range or huge), plus keys
//! nobody knows and raw text.

use proptest::prelude::*;

use crate::config::{ServeArgs, Settings};

/// Tables and the keys each knows (`[[roots]]` and `[[plugin.NAME.dirs]]` are arrays of tables).
const TABLES: &[(&str, &[&str])] = &[
    ("", &["plugins", "watch", "copy_on_write"]),
    ("[limits]", &["timeout_ms", "memory_mib", "max_output_mib", "max_message_bytes", "page_size"]),
    ("[cache]", &["dir", "enabled"]),
    ("[[roots]]", &["path", "name", "writable"]),
    (
        "[plugin.p]",
        &[
            "prefix",
            "tools",
            "exclude_tools",
            "timeout_ms",
            "memory_mib",
            "max_output_mib",
            "max_concurrency",
            "prepared",
            "env",
            "env_from_host",
            "roots",
            "network",
            "allow_private_network",
            "stub_ungranted",
            "host_paths",
        ],
    ),
    ("[[plugin.p.dirs]]", &["path", "name", "writable", "within_client_roots", "create"]),
];

/// A TOML value as text: any type, edge-case numbers, strings with escapes.
fn toml_value() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        prop::sample::select(
            &["0", "-1", "1", "4096", "4097", "1024", "18446744073709551615", "9e99", "nan", "inf"][..]
        )
        .prop_map(str::to_owned),
        any::<bool>().prop_map(|b| b.to_string()),
        ".{0,12}".prop_map(|s| format!("{s:?}")),
        prop::sample::select(
            &["\"on\"", "\"off\"", "\"auto\"", "\"https://example.com\"", "\"*.x\"", "\"..\"", "\"/\""][..]
        )
        .prop_map(str::to_owned),
    ];
    scalar.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|items| format!("[{}]", items.join(", "))),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..3).prop_map(|pairs| {
                let members: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
                format!("{{ {} }}", members.join(", "))
            }),
        ]
    })
}

/// One table of a document: its header and a few `key = value` lines.
fn table() -> impl Strategy<Value = String> {
    (0..TABLES.len())
        .prop_flat_map(|t| {
            let (header, keys) = TABLES[t];
            let key = prop_oneof![4 => prop::sample::select(keys).prop_map(str::to_owned), 1 => "[a-z_]{1,8}"];
            (Just(header), prop::collection::vec((key, toml_value()), 0..5))
        })
        .prop_map(|(header, lines)| {
            let body: Vec<String> = lines.into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("{header}\n{}\n", body.join("\n"))
        })
}

proptest! {
    #[test]
    fn fuzz_config_file(text in prop_oneof![
        4 => prop::collection::vec(table(), 0..5).prop_map(|tables| tables.concat()),
        1 => ".{0,80}",
    ]) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let path = dir.path().join("fuzz.toml");
        std::fs::write(&path, &text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let args = ServeArgs { config: Some(path.clone()), ..Default::default() };
        if let Err(error) = Settings::from_args(&args) {
            let message = format!("{error:#}");
            prop_assert!(message.contains(&*path.to_string_lossy()), "the error names the file: {}", message);
        }
    }
}
