//! `mcpbox new NAME`: a Rust plugin project that builds with one command.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The SDK of the checkout this binary was built from.
fn default_sdk() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk")
}

/// Creates `dir/name/` with a one-tool plugin depending on the SDK at `sdk`.
pub fn create(name: &str, dir: &Path, sdk: Option<&Path>) -> Result<()> {
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.starts_with(|c: char| c.is_ascii_alphabetic());
    if !valid {
        bail!("`{name}` is not a valid plugin name: use letters, digits, `-` and `_`, starting with a letter");
    }
    let sdk = sdk.map(Path::to_owned).unwrap_or_else(default_sdk);
    let sdk = sdk
        .canonicalize()
        .with_context(|| format!("the mcpbox SDK is not at {} (give its directory with --sdk)", sdk.display()))?;
    let root = dir.join(name);
    if root.exists() {
        bail!("{} exists already", root.display());
    }
    std::fs::create_dir_all(root.join("src")).with_context(|| format!("cannot create {}", root.display()))?;
    let crate_name = name.replace('-', "_");
    let files = [
        ("Cargo.toml", cargo_toml(name, &sdk)),
        ("src/lib.rs", LIB_RS.to_owned()),
        (".gitignore", "/target\n".to_owned()),
        ("README.md", readme(name, &crate_name)),
    ];
    for (file, contents) in files {
        let path = root.join(file);
        std::fs::write(&path, contents).with_context(|| format!("cannot write {}", path.display()))?;
    }
    println!("created {}", root.display());
    println!("build it:  cd {} && cargo build --release --target wasm32-wasip2", root.display());
    println!("serve it:  mcpbox serve {}/target/wasm32-wasip2/release/{crate_name}.wasm", root.display());
    Ok(())
}

fn cargo_toml(name: &str, sdk: &Path) -> String {
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
        sdk = sdk.display()
    )
}

/// The template's code is the `hello` example, which the tests build and call.
const LIB_RS: &str = include_str!("../../examples/hello/src/lib.rs");

fn readme(name: &str, crate_name: &str) -> String {
    format!(
        "# {name}\n\nAn mcpbox plugin.\n\n```sh\nrustup target add wasm32-wasip2    # once\ncargo build --release --target wasm32-wasip2\nmcpbox inspect target/wasm32-wasip2/release/{crate_name}.wasm\nmcpbox serve target/wasm32-wasip2/release/{crate_name}.wasm\n```\n\nAdd tools in `src/lib.rs` (`mcpbox_sdk::tools!`), resources and prompts with the `Plugin` builder.\n"
    )
}
