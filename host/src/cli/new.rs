//! `mcpbox new NAME [--lang rust|python|js]`: a plugin project that builds with one command.
//! Each template's code is an example of this repository (`examples/`), which the tests create,
//! build and call through mcpbox, so the templates and the guides cannot rot.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// The language of a new plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Lang {
    /// Rust with the mcpbox SDK (`cargo build --release --target wasm32-wasip2`).
    Rust,
    /// Python with componentize-py (`./build.sh`).
    Python,
    /// JavaScript with componentize-js (`npm install && npm run build`).
    #[value(alias = "javascript")]
    Js,
}

/// Creates `dir/name/` with a small plugin in `lang`. Rust plugins depend on the SDK at `sdk`,
/// or by default on a copy of the SDK this binary carries, written into the project
/// (`mcpbox-sdk/`), so that an installed mcpbox needs no checkout; Python and JavaScript ones
/// get the helper module and the WIT package as files of their own.
pub(crate) fn create(name: &str, dir: &Path, lang: Lang, sdk: Option<&Path>) -> Result<()> {
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_alphabetic());
    if !valid {
        bail!("`{name}` is not a valid plugin name: use letters, digits, `-` and `_`, starting with a letter");
    }
    let root = dir.join(name);
    if root.exists() {
        bail!("{} exists already", root.display());
    }
    let (files, next_steps) = match lang {
        Lang::Rust => rust(name, sdk)?,
        Lang::Python => python(name),
        Lang::Js => javascript(name),
    };
    for (file, contents) in files {
        let path = root.join(file);
        let parent = path.parent().unwrap_or(&root);
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        std::fs::write(&path, contents).with_context(|| format!("cannot write {}", path.display()))?;
        if file.ends_with(".sh") {
            make_executable(&path)?;
        }
    }
    println!("created {}", root.display());
    println!("build it:  cd {} && {}", root.display(), next_steps.build);
    println!("serve it:  mcpbox serve {}", root.join(&next_steps.output).display());
    Ok(())
}

struct NextSteps {
    build: &'static str,
    output: String,
}

type Files = Vec<(&'static str, String)>;

fn rust(name: &str, sdk: Option<&Path>) -> Result<(Files, NextSteps)> {
    let crate_name = name.replace('-', "_");
    let sdk_dependency = match sdk {
        Some(sdk) => sdk
            .canonicalize()
            .with_context(|| format!("the mcpbox SDK is not at {} (--sdk)", sdk.display()))?
            .display()
            .to_string(),
        None => SDK_COPY.to_owned(),
    };
    let mut files = vec![
        ("Cargo.toml", cargo_toml(name, &sdk_dependency)),
        ("src/lib.rs", RUST_LIB.to_owned()),
        (".gitignore", "/target\n".to_owned()),
        ("README.md", rust_readme(name, &crate_name)),
    ];
    if sdk.is_none() {
        files.extend(sdk_copy()?);
    }
    let output = format!("target/wasm32-wasip2/release/{crate_name}.wasm");
    Ok((files, NextSteps { build: "cargo build --release --target wasm32-wasip2", output }))
}

fn python(name: &str) -> (Files, NextSteps) {
    let files = vec![
        ("app.py", PYTHON_APP.to_owned()),
        ("mcpbox.py", PYTHON_HELPER.to_owned()),
        ("wit/plugin.wit", WIT.to_owned()),
        ("build.sh", PYTHON_BUILD.replace("{name}", name)),
        (".gitignore", ".venv/\n__pycache__/\n*.wasm\n".to_owned()),
        ("README.md", PYTHON_README.replace("{name}", name)),
    ];
    (files, NextSteps { build: "./build.sh", output: format!("{name}.wasm") })
}

fn javascript(name: &str) -> (Files, NextSteps) {
    let files = vec![
        ("app.js", JS_APP.to_owned()),
        ("mcpbox.js", JS_HELPER.to_owned()),
        ("build.mjs", JS_BUILD.to_owned()),
        // npm package names are lower case; the component keeps the plugin's name.
        ("package.json", JS_PACKAGE.replace("{package}", &name.to_lowercase()).replace("{name}", name)),
        ("wit/plugin.wit", WIT.to_owned()),
        (".gitignore", "node_modules/\n*.wasm\n".to_owned()),
        ("README.md", JS_README.replace("{name}", name)),
    ];
    (files, NextSteps { build: "npm install && npm run build", output: format!("{name}.wasm") })
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<()> {
    Ok(())
}

fn cargo_toml(name: &str, sdk: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

# A workspace of its own, so that it builds wherever it is created.
[workspace]

[lib]
crate-type = ["cdylib"]

[dependencies]
mcpbox-sdk = {{ path = "{sdk}" }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"

[profile.release]
# Small components compile faster in mcpbox and load faster from its cache.
opt-level = "s"
lto = true
codegen-units = 1
strip = "debuginfo"
"#,
    )
}

/// Where `mcpbox new` writes its copy of the SDK, inside the project.
const SDK_COPY: &str = "mcpbox-sdk";

/// The SDK's files for a project of its own: its sources, the WIT package its bindings are
/// generated from (`../wit` from the SDK), and a manifest with the guest workspace's pinned
/// dependency versions in place of `workspace = true`.
fn sdk_copy() -> Result<Files> {
    let mut files: Files = SDK_SOURCES.iter().map(|(file, text)| (*file, (*text).to_owned())).collect();
    files.push(("mcpbox-sdk/Cargo.toml", sdk_manifest()?));
    files.push(("wit/plugin.wit", WIT.to_owned()));
    Ok(files)
}

/// `sdk/Cargo.toml` without the repository's guest workspace: each `workspace = true`
/// dependency takes its version from `plugins/Cargo.toml`.
fn sdk_manifest() -> Result<String> {
    let mut manifest: toml::Table = toml::from_str(SDK_MANIFEST).context("sdk/Cargo.toml")?;
    let workspace: toml::Table = toml::from_str(GUEST_WORKSPACE).context("plugins/Cargo.toml")?;
    let pinned = workspace
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table)
        .context("plugins/Cargo.toml has no [workspace.dependencies]")?;
    if let Some(package) = manifest.get_mut("package").and_then(toml::Value::as_table_mut) {
        package.remove("workspace");
    }
    manifest.remove("lints");
    if let Some(dependencies) = manifest.get_mut("dependencies").and_then(toml::Value::as_table_mut) {
        for (name, dependency) in dependencies.iter_mut() {
            if dependency.get("workspace").and_then(toml::Value::as_bool) == Some(true) {
                *dependency = pinned.get(name).cloned().with_context(|| format!("no version of `{name}` pinned"))?;
            }
        }
    }
    let text = toml::to_string(&manifest).context("cannot write the SDK's manifest")?;
    Ok(format!("# The mcpbox SDK {}, copied by `mcpbox new`.\n{text}", env!("CARGO_PKG_VERSION")))
}

fn rust_readme(name: &str, crate_name: &str) -> String {
    format!(
        "# {name}\n\nAn mcpbox plugin.\n\n```sh\nrustup target add wasm32-wasip2    # once\ncargo build --release --target wasm32-wasip2\nmcpbox inspect target/wasm32-wasip2/release/{crate_name}.wasm\nmcpbox serve target/wasm32-wasip2/release/{crate_name}.wasm\n```\n\nTools, resources and prompts are annotated functions in `src/lib.rs` (`mcpbox_sdk::tools!`, `resources!`, `prompts!`).\n"
    )
}

const WIT: &str = include_str!("../../../wit/plugin.wit");
const SDK_MANIFEST: &str = include_str!("../../../sdk/Cargo.toml");
const GUEST_WORKSPACE: &str = include_str!("../../../plugins/Cargo.toml");
const SDK_SOURCES: [(&str, &str); 8] = [
    ("mcpbox-sdk/src/arguments.rs", include_str!("../../../sdk/src/arguments.rs")),
    ("mcpbox-sdk/src/described.rs", include_str!("../../../sdk/src/described.rs")),
    ("mcpbox-sdk/src/lib.rs", include_str!("../../../sdk/src/lib.rs")),
    ("mcpbox-sdk/src/macros.rs", include_str!("../../../sdk/src/macros.rs")),
    ("mcpbox-sdk/src/plugin.rs", include_str!("../../../sdk/src/plugin.rs")),
    ("mcpbox-sdk/src/tool.rs", include_str!("../../../sdk/src/tool.rs")),
    ("mcpbox-sdk/src/typed.rs", include_str!("../../../sdk/src/typed.rs")),
    ("mcpbox-sdk/src/uri_template.rs", include_str!("../../../sdk/src/uri_template.rs")),
];
const RUST_LIB: &str = include_str!("../../../examples/hello/src/lib.rs");
const PYTHON_APP: &str = include_str!("../../../examples/python/app.py");
const PYTHON_HELPER: &str = include_str!("../../../sdk/python/mcpbox.py");
const JS_APP: &str = include_str!("../../../examples/js/app.js");
const JS_HELPER: &str = include_str!("../../../sdk/js/mcpbox.js");
const JS_BUILD: &str = include_str!("../../../examples/js/build.mjs");

/// componentize-py's version is pinned: its output is what the tests check.
const PYTHON_BUILD: &str = r#"#!/bin/sh
# Builds app.py into {name}.wasm, a WebAssembly component for mcpbox. The first run installs
# componentize-py into .venv (from PyPI; after that it works offline).
set -eu
cd "$(dirname "$0")"
if [ ! -x .venv/bin/componentize-py ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check componentize-py==0.25.1
fi
# An app that exports `plugin.described_exports()` (`_meta`, icons, apps, instructions, skills)
# is built against the world that has them.
world=plugin
if grep -q "described_exports()" app.py; then world=described-plugin; fi
.venv/bin/componentize-py -d wit -w "$world" componentize app -o {name}.wasm
"#;

const PYTHON_README: &str = "# {name}

An mcpbox plugin in Python.

```sh
./build.sh                   # installs componentize-py into .venv once, then builds {name}.wasm
mcpbox inspect {name}.wasm
mcpbox serve {name}.wasm
```

Tools, resources and prompts are decorated functions in `app.py`; `mcpbox.py` is the helper
module (schemas from type hints, descriptions from docstrings). `wit/plugin.wit` is mcpbox's
plugin interface.
";

const JS_PACKAGE: &str = r#"{
  "name": "{package}",
  "private": true,
  "type": "module",
  "scripts": {
    "build": "node build.mjs {name}.wasm"
  },
  "devDependencies": {
    "@bytecodealliance/componentize-js": "0.23.0"
  }
}
"#;

const JS_README: &str = "# {name}

An mcpbox plugin in JavaScript.

```sh
npm install                  # once: componentize-js (from npm; after that it works offline)
npm run build                # builds {name}.wasm
mcpbox inspect {name}.wasm
mcpbox serve {name}.wasm
```

Tools, resources and prompts are functions registered in `app.js`; `mcpbox.js` is the helper
module (schema builders, argument checks, content blocks). `wit/plugin.wit` is mcpbox's
plugin interface.
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_javascript_project_gets_a_valid_npm_name_and_keeps_the_plugin_name() {
        let dir = tempfile::tempdir().unwrap();
        create("MyPlugin", dir.path(), Lang::Js, None).unwrap();
        let package: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("MyPlugin/package.json")).unwrap()).unwrap();
        assert_eq!(package["name"], "myplugin");
        assert_eq!(package["scripts"]["build"], "node build.mjs MyPlugin.wasm");
        assert!(dir.path().join("MyPlugin/wit/plugin.wit").is_file());
    }

    #[test]
    fn a_python_project_has_an_executable_build_script_and_names_are_checked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        create("tool-1", dir.path(), Lang::Python, None).unwrap();
        let build = dir.path().join("tool-1/build.sh");
        assert_eq!(std::fs::metadata(&build).unwrap().permissions().mode() & 0o111, 0o111);
        assert!(std::fs::read_to_string(&build).unwrap().contains("-o tool-1.wasm"));
        let error = create("1tool", dir.path(), Lang::Python, None).unwrap_err().to_string();
        assert!(error.contains("`1tool` is not a valid plugin name"), "{error}");
    }

    #[test]
    fn a_rust_project_carries_the_whole_sdk_with_pinned_versions() {
        let in_repo: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/src"))
            .unwrap()
            .map(|e| format!("mcpbox-sdk/src/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        for file in &in_repo {
            assert!(SDK_SOURCES.iter().any(|(copied, _)| copied == file), "{file} is not copied by `mcpbox new`");
        }
        let dir = tempfile::tempdir().unwrap();
        create("hello", dir.path(), Lang::Rust, None).unwrap();
        let project = dir.path().join("hello");
        let manifest: toml::Table =
            toml::from_str(&std::fs::read_to_string(project.join("mcpbox-sdk/Cargo.toml")).unwrap()).unwrap();
        assert!(manifest["package"].get("workspace").is_none() && manifest.get("lints").is_none());
        assert_eq!(manifest["dependencies"]["schemars"].as_str(), Some("1"));
        assert!(
            manifest["dependencies"]["serde_json"]["features"].as_array().unwrap().contains(&"preserve_order".into())
        );
        assert!(
            std::fs::read_to_string(project.join("Cargo.toml"))
                .unwrap()
                .contains("mcpbox-sdk = { path = \"mcpbox-sdk\" }")
        );
        assert!(project.join("wit/plugin.wit").is_file(), "the SDK's bindings are generated from ../wit");
    }
}
