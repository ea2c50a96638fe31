//! The proof's list stays true: every fail point of `tests/protections.toml` is still at a check
//! in the source (and every one in the source is in the list), every guarding test exists,
//! every protection row of SECURITY.md has an entry or an exemption with its reason; and a
//! fail-point build is never a product (it says what it is, refuses to run outside the tests,
//! the build script stops an `--all-features` build, `build-image.sh` refuses it, and the
//! product check that `run.sh` and `build-image.sh` run on every release binary finds its fail
//! points).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use crate::common::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    protection: Vec<Protection>,
    exempt: Vec<Exempt>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Protection {
    name: String,
    failpoint: String,
    row: Option<String>,
    tests: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Exempt {
    row: String,
    reason: String,
}

fn table() -> Table {
    toml::from_str(&std::fs::read_to_string(repo_root().join("tests/protections.toml")).unwrap()).unwrap()
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The fail points the code under `dir` evaluates (`switched_off!("NAME")` outside comments),
/// with the file of each.
fn failpoints_in(dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let mut found = BTreeMap::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let code = line.split("//").next().unwrap_or_default();
            for (at, _) in code.match_indices("switched_off!(\"") {
                let rest = &code[at + "switched_off!(\"".len()..];
                let name = &rest[..rest.find('"').unwrap()];
                found.insert(name.to_owned(), file.clone());
            }
        }
    }
    found
}

/// The first cells of SECURITY.md's tables "Who is trusted" and "What each protection
/// defends" (the second: the protections every one of which needs an entry or an exemption).
fn security_rows() -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(repo_root().join("SECURITY.md")).unwrap();
    let mut tables: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut section = "";
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading;
        } else if let Some(row) = line.strip_prefix("| ") {
            let first = row.split(" | ").next().unwrap().trim().to_owned();
            if first != "protection" && first != "party" && !first.starts_with("---") {
                tables.entry(section).or_default().push(first);
            }
        }
    }
    let trusted = tables.remove("Who is trusted").expect("SECURITY.md has a table under `## Who is trusted`");
    let protections = tables
        .remove("What each protection defends")
        .expect("SECURITY.md has a table under `## What each protection defends`");
    (trusted, protections)
}

#[test]
fn every_failpoint_of_the_table_is_in_the_source_and_every_protection_row_is_proved_or_exempt() {
    let table = table();
    let root = repo_root();
    let mut problems = Vec::new();

    // Fail points: the table's and the source's are the same set; names are unique.
    let in_source = failpoints_in(&root.join("host/src"));
    let mut named = BTreeSet::new();
    for protection in &table.protection {
        if !named.insert(protection.failpoint.as_str()) {
            problems.push(format!("fail point `{}` is named twice", protection.failpoint));
        }
        if protection.tests.is_empty() {
            problems.push(format!("`{}` has no guarding test", protection.name));
        }
        if let Some(guest) = protection.failpoint.strip_prefix("guest.") {
            // A guest's: a cargo feature of the plugin, used in its source, built by build-guests.sh.
            let (plugin, point) = guest.split_once('.').unwrap_or((guest, ""));
            let feature = format!("failpoint-{point}");
            let manifest =
                std::fs::read_to_string(root.join(format!("plugins/{plugin}/Cargo.toml"))).unwrap_or_default();
            let mut sources = Vec::new();
            rust_files(&root.join(format!("plugins/{plugin}/src")), &mut sources);
            let used = sources
                .iter()
                .any(|file| std::fs::read_to_string(file).unwrap().contains(&format!("feature = \"{feature}\"")));
            let built = std::fs::read_to_string(root.join("scripts/build-guests.sh"))
                .unwrap()
                .contains(&format!("{plugin}:{point}"));
            if !manifest.contains(&format!("{feature} = [")) || !used || !built {
                problems.push(format!(
                    "guest fail point `{}`: plugins/{plugin} must declare and use the feature `{feature}`, \
                     and build-guests.sh must build `{plugin}:{point}`",
                    protection.failpoint
                ));
            }
        } else if !in_source.contains_key(&protection.failpoint) {
            problems.push(format!(
                "fail point `{}` ({}) is no longer in host/src: put it back at the protection's check, or update the table",
                protection.failpoint, protection.name
            ));
        }
    }
    for (name, file) in &in_source {
        if !named.contains(name.as_str()) {
            problems.push(format!("{}: fail point `{name}` has no entry in tests/protections.toml", file.display()));
        }
    }

    // Rows: each entry's and exemption's phrase begins exactly one row; every protection row
    // is proved or exempt, never both.
    let (trusted, protections) = security_rows();
    let matching = |phrase: &str| -> Vec<&String> {
        trusted.iter().chain(&protections).filter(|row| row.starts_with(phrase)).collect()
    };
    let mut covered: BTreeSet<&String> = BTreeSet::new();
    for protection in &table.protection {
        let Some(phrase) = &protection.row else { continue };
        match matching(phrase)[..] {
            [row] => {
                covered.insert(row);
            }
            ref rows => problems.push(format!(
                "`{}`: row `{phrase}` matches {} rows of SECURITY.md, not one",
                protection.name,
                rows.len()
            )),
        }
    }
    for exempt in &table.exempt {
        assert!(exempt.reason.len() > 20, "the exemption of `{}` needs its reason", exempt.row);
        match matching(&exempt.row)[..] {
            [row] if covered.contains(row) => problems.push(format!("row `{}` is both proved and exempt", exempt.row)),
            [row] => {
                covered.insert(row);
            }
            ref rows => {
                problems.push(format!("exemption `{}` matches {} rows of SECURITY.md, not one", exempt.row, rows.len()))
            }
        }
    }
    for row in &protections {
        if !covered.contains(row) {
            problems.push(format!("SECURITY.md's protection `{row:.80}` has neither an entry nor an exemption"));
        }
    }

    // Guarding tests: each integration test exists in this binary; each of the library's
    // (`lib:a::b::tests::name`) is a `fn name(` in its module's file, `host/src/a/b.rs` or
    // `a/b/mod.rs` (scripts/check-protections.py lists the library's binary too, but only at the
    // end of a run: a module moved must fail here, with the suite).
    let listed = Command::new(std::env::current_exe().unwrap()).args(["--list", "--format", "terse"]).output().unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    let tests: BTreeSet<&str> = listed.lines().filter_map(|line| line.strip_suffix(": test")).collect();
    for protection in &table.protection {
        for test in &protection.tests {
            let found = match test.strip_prefix("lib:") {
                Some(test) => in_library(&root, test),
                None => tests.contains(test.as_str()),
            };
            if !found {
                problems.push(format!("`{}`: no test `{test}`", protection.name));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "tests/protections.toml disagrees with the source or SECURITY.md:\n{}",
        problems.join("\n")
    );
}

/// Whether the library's unit test `a::b::tests::name` is a `fn name(` in `host/src/a/b.rs` or
/// `a/b/mod.rs` under `root`.
fn in_library(root: &Path, test: &str) -> bool {
    let (module, name) = test.rsplit_once("::").unwrap_or(("", test));
    let module = module.strip_suffix("::tests").unwrap_or(module).replace("::", "/");
    [format!("host/src/{module}.rs"), format!("host/src/{module}/mod.rs")]
        .iter()
        .filter_map(|file| std::fs::read_to_string(root.join(file)).ok())
        .any(|source| source.contains(&format!("fn {name}(")))
}

#[test]
fn the_check_finds_failpoints_and_rows() {
    let dir = temp_dir();
    std::fs::write(
        dir.path().join("a.rs"),
        "if x && !crate::switched_off!(\"a.b\") {}\n// switched_off!(\"in.a.comment\")\nlet y = switched_off!(\"c.d\") || z;\n",
    )
    .unwrap();
    assert_eq!(failpoints_in(dir.path()).into_keys().collect::<Vec<_>>(), ["a.b", "c.d"]);
    // A library test is found where its module lives, and not at a path its module left (the
    // move that stopped a run in its protections, 2026-11-29).
    let root = repo_root();
    assert!(in_library(
        &root,
        "mcp::call::checks::shown_arguments::tests::what_a_call_touches_is_shown_first_and_whole"
    ));
    assert!(!in_library(&root, "mcp::shown_arguments::tests::what_a_call_touches_is_shown_first_and_whole"));
    assert!(!in_library(&root, "mcp::call::checks::shown_arguments::tests::no_such_test"));
    let (trusted, protections) = security_rows();
    assert!(trusted.iter().any(|row| row == "registries"), "{trusted:?}");
    assert!(protections.iter().any(|row| row == "wasm stack limit"), "{protections:?}");
}

/// Whether this test process's mcpbox is the test suite's fail-point build.
fn failpoint_build() -> bool {
    cfg!(feature = "failpoints")
}

#[test]
fn a_failpoint_build_says_what_it_is_and_runs_only_in_the_tests() {
    let version = Command::new(env!("CARGO_BIN_EXE_mcpbox")).arg("--version").output().unwrap();
    let version = String::from_utf8(version.stdout).unwrap();
    if !failpoint_build() {
        assert!(!version.contains("fail-point"), "{version}");
        return;
    }
    assert!(version.contains("fail-point build: for the test suite only"), "{version}");

    // Without the test suite's variable it refuses to run, whatever the command.
    for args in [&["serve", "--no-watch"][..], &["check", "."], &["inspect", "x.wasm"]] {
        let refused = owned(&mut Command::new(env!("CARGO_BIN_EXE_mcpbox")))
            .args(args)
            .env_remove("MCPBOX_TEST_FAILPOINTS")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {said}");
        assert!(said.contains("fail-point build") && said.contains("MCPBOX_TEST_FAILPOINTS=1"), "{said}");
        assert!(refused.stdout.is_empty());
    }
    // With it, it says so at start, and which fail points are armed.
    let mut server = Server::start_with_env(&[fixture("echo")], &[("FAILPOINTS", "sandbox.deadline=return")]);
    server.initialize("2025-06-18", serde_json::json!({}));
    let log = server.stderr();
    assert!(
        log.contains("a fail-point build, for the test suite only") && log.contains("armed: sandbox.deadline"),
        "{log}"
    );
}

#[test]
fn the_product_check_finds_the_failpoints_of_a_failpoint_build() {
    // scripts/no-failpoints.sh guards every release binary run.sh and build-image.sh make; here
    // it must find this process's fail-point build out (and pass a build without the feature).
    let checked = Command::new("bash")
        .arg(repo_root().join("scripts/no-failpoints.sh"))
        .arg(env!("CARGO_BIN_EXE_mcpbox"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&checked.stderr);
    if failpoint_build() {
        assert!(!checked.status.success(), "{said}");
        assert!(said.contains("is a fail-point build") && said.contains("fail::"), "{said}");
    } else {
        assert!(checked.status.success(), "{said}");
    }
}

#[test]
fn build_image_refuses_a_failpoint_build() {
    if !failpoint_build() {
        return;
    }
    let dir = temp_dir();
    let built = Command::new(repo_root().join("scripts/build-image.sh"))
        .arg(dir.path().join("image.tar"))
        .env("MCPBOX", env!("CARGO_BIN_EXE_mcpbox"))
        .env_remove("MCPBOX_TEST_FAILPOINTS")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&built.stderr);
    assert!(!built.status.success(), "{said}");
    assert!(said.contains("fail-point"), "{said}");
    assert!(!dir.path().join("image.tar").exists());
}

/// mcpbox's build script (the newest cargo built): what every build of mcpbox runs first.
fn build_script() -> PathBuf {
    let built = repo_root().join("target/debug/build");
    std::fs::read_dir(&built)
        .unwrap()
        .filter_map(|entry| {
            let script = entry.ok()?.path().join("build-script-build");
            let name = script.parent()?.file_name()?.to_str()?.to_owned();
            Some((std::fs::metadata(&script).ok()?.modified().ok()?, script)).filter(|_| name.starts_with("mcpbox-"))
        })
        .max()
        .map(|(_, script)| script)
        .expect("mcpbox's build script is built")
}

#[test]
fn the_build_script_stops_an_all_features_build_outside_the_test_suite() {
    // What `cargo build --all-features` or `cargo install --all-features` runs before compiling
    // mcpbox: the build script, with the feature on and no MCPBOX_TEST_FAILPOINTS. Its
    // `cargo::error` fails the build (run here alone: a whole `--all-features` build resolves
    // features apart from the suite's and recompiles minutes of dependencies first).
    let run = |feature: bool, allowed: bool| {
        let mut script = Command::new(build_script());
        script.env("CARGO_CFG_TARGET_OS", "linux").env("CARGO_CFG_TARGET_ENV", "gnu");
        script.env_remove("CARGO_FEATURE_FAILPOINTS").env_remove("MCPBOX_TEST_FAILPOINTS");
        if feature {
            script.env("CARGO_FEATURE_FAILPOINTS", "1");
        }
        if allowed {
            script.env("MCPBOX_TEST_FAILPOINTS", "1");
        }
        let output = script.output().unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    let refused = run(true, false);
    assert!(refused.contains("cargo::error=the `failpoints` feature builds a test-only mcpbox"), "{refused}");
    assert!(!run(true, true).contains("cargo::error"));
    let product = run(false, false);
    assert!(!product.contains("cargo::error") && !product.contains("MCPBOX_TEST_FAILPOINTS"), "{product}");
}
