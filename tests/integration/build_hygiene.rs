//! `mcpbox build` takes nothing from the build machine (issue 58), attacked as a malicious
//! project or package would: links out of the project, imports of absolute paths, dependencies
//! from paths, git or another registry, requirements pip would build here, a dependency's
//! build code, and the builder's environment and paths in the component. Each project is made
//! by the test in a temporary directory (its links and absolute paths are this machine's);
//! nothing leaves the machine (registries named are loopback ports nobody serves).

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{owned, repo_root, temp_dir};

/// `mcpbox build PROJECT -o DIR/NAME.wasm ARGS`, run for real (never the suite's build cache:
/// these test the build itself): `(succeeded, what it printed, the report)`.
fn build(project: &Path, out_dir: &Path, name: &str, args: &[&str]) -> (bool, String, Value) {
    let out = out_dir.join(format!("{name}.wasm"));
    let output = owned(&mut Command::new(env!("CARGO_BIN_EXE_mcpbox")))
        .arg("build")
        .arg(project)
        .arg("-o")
        .arg(&out)
        .args(args)
        .env("MCPBOX_BUILD_TOOLS", repo_root().join("target/build-tools"))
        .env("MCPBOX_COMPONENTIZE_PY", repo_root().join("target/componentize-py/bin/componentize-py"))
        .output()
        .expect("cannot run mcpbox build");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let report = std::fs::read_to_string(out.with_extension("compat.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (output.status.success(), text, report)
}

/// The blocker at `at` whose `what` contains `what`, if the report has one.
fn blocker<'a>(report: &'a Value, at: &str, what: &str) -> Option<&'a Value> {
    report["blockers"]
        .as_array()?
        .iter()
        .find(|b| b["at"].as_str() == Some(at) && b["what"].as_str().is_some_and(|w| w.contains(what)))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A copy of a fixture project (`tests/fixtures/existing/NAME`) at `to`: a server that builds,
/// so that a protection switched off shows what it keeps out reaching the component.
fn fixture_project(name: &str, to: &Path) {
    let copied =
        Command::new("cp").arg("-r").arg(repo_root().join("tests/fixtures/existing").join(name)).arg(to).status();
    assert!(copied.unwrap().success());
}

/// The component at `path`, if one was written, holds `canary` (as it is, or as the build
/// embeds a file: base64 of a file that starts with it).
fn holds(path: &Path, canary: &str) -> bool {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(canary);
    // The whole groups of three bytes only: the last group depends on what follows.
    let encoded = &encoded[..canary.len() / 3 * 4];
    std::fs::read(path).is_ok_and(|bytes| {
        [canary, encoded].iter().any(|needle| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
    })
}

/// Finding 1: a project's links to `/proc/self/environ` and to a directory of keys are refused
/// by name (followed, what they point at would be embedded: the build's environment and the
/// key are in the component); a link inside the project is taken.
#[test]
fn a_javascript_projects_links_out_of_it_are_refused_naming_each() {
    let dir = temp_dir();
    let canary = format!("key-canary-{}", std::process::id());
    let outside = dir.path().join("outside");
    write(&outside.join(".ssh/id_ed25519"), &canary);
    let project = dir.path().join("proj");
    fixture_project("probe", &project);
    write(&project.join("data/ok.txt"), "inside\n");
    std::fs::create_dir_all(project.join("assets")).unwrap();
    symlink("/proc/self/environ", project.join("assets/env.txt")).unwrap();
    symlink(outside.join(".ssh"), project.join("assets/keys")).unwrap();
    symlink("../data/ok.txt", project.join("assets/ok.txt")).unwrap();
    let (ok, text, report) = build(&project, dir.path(), "links", &[]);
    assert!(!holds(&dir.path().join("links.wasm"), &canary), "the linked key is in the component");
    assert!(!ok && !dir.path().join("links.wasm").exists(), "{text}");
    assert!(blocker(&report, "assets/env.txt", "/proc/").is_some(), "{report:#}\n{text}");
    assert!(blocker(&report, "assets/keys", &outside.display().to_string()).is_some(), "{report:#}");
    assert!(blocker(&report, "assets/ok.txt", "").is_none(), "a link inside the project is the project's: {report:#}");
    assert!(text.contains("assets/keys") && text.contains("outside the project"), "{text}");
}

/// Finding 4: the same for a Python project: a module and a package linked from outside are
/// refused by name (copied, the credentials file would be compiled as Python into the
/// component).
#[test]
fn a_python_projects_links_out_of_it_are_refused_naming_each() {
    let dir = temp_dir();
    let canary = format!("token-canary-{}", std::process::id());
    let outside = dir.path().join("outside");
    write(&outside.join("settings.py"), &format!("TOKEN = \"{canary}\"\n"));
    write(&outside.join("otherpkg/__init__.py"), "SECRET = 1\n");
    let project = dir.path().join("proj");
    fixture_project("python-probe", &project);
    write(&project.join("pkg/__init__.py"), "");
    symlink(outside.join("settings.py"), project.join("pkg/settings.py")).unwrap();
    symlink(outside.join("otherpkg"), project.join("linked")).unwrap();
    let (ok, text, report) = build(&project, dir.path(), "links", &[]);
    assert!(!holds(&dir.path().join("links.wasm"), &canary), "the linked credentials are in the component");
    assert!(!ok && !dir.path().join("links.wasm").exists(), "{text}");
    assert!(blocker(&report, "pkg/settings.py", "settings.py").is_some(), "{report:#}\n{text}");
    assert!(blocker(&report, "linked", "otherpkg").is_some(), "{report:#}");
}

/// Finding 2: imports that resolve outside the project (an absolute path, a tsconfig `paths`
/// mapping to one) are refused with their file and line (bundled, the credentials would be in
/// the component).
#[test]
fn a_javascript_projects_imports_of_files_outside_it_are_refused_naming_file_and_line() {
    let dir = temp_dir();
    let canary = format!("credentials-canary-{}", std::process::id());
    let outside = dir.path().join("outside");
    write(&outside.join("credentials.json"), &format!("{{ \"token\": \"{canary}\" }}"));
    let project = dir.path().join("proj");
    fixture_project("probe", &project);
    write(
        &project.join("tsconfig.json"),
        &format!(
            r#"{{ "compilerOptions": {{ "baseUrl": ".", "paths": {{ "@creds/*": ["{}/*"] }} }} }}"#,
            outside.display()
        ),
    );
    write(
        &project.join("creds.js"),
        &format!(
            "import creds from '{}';\nimport more from '@creds/credentials.json';\nexport default [creds, more];\n",
            outside.join("credentials.json").display()
        ),
    );
    let server = std::fs::read_to_string(project.join("server.js")).unwrap();
    std::fs::write(
        project.join("server.js"),
        format!("{server}\nimport creds from './creds.js';\nconsole.error(creds.length);\n"),
    )
    .unwrap();
    let (ok, text, report) = build(&project, dir.path(), "imports", &[]);
    assert!(!holds(&dir.path().join("imports.wasm"), &canary), "the imported credentials are in the component");
    assert!(!ok && !dir.path().join("imports.wasm").exists(), "{text}");
    assert!(blocker(&report, "creds.js:1", "credentials.json").is_some(), "{report:#}\n{text}");
    assert!(blocker(&report, "creds.js:2", "@creds/credentials.json").is_some(), "{report:#}");
}

/// The sweep, JavaScript: dependencies from a path outside the project, a link, git, and a
/// lockfile entry resolved outside, and an `.npmrc` that picks a registry, are each refused
/// naming their line before npm runs; a `file:` dependency inside the project is taken.
#[test]
fn a_javascript_projects_dependencies_from_outside_git_or_another_registry_are_refused_naming_the_line() {
    let dir = temp_dir();
    let outside = dir.path().join("outside/creds");
    write(&outside.join("package.json"), r#"{ "name": "creds", "version": "1.0.0" }"#);
    let project = dir.path().join("proj");
    write(&project.join("vendor/ok/package.json"), r#"{ "name": "ok", "version": "1.0.0" }"#);
    write(
        &project.join("package.json"),
        &format!(
            "{{\n  \"name\": \"deps\",\n  \"version\": \"1.0.0\",\n  \"dependencies\": {{\n    \"creds\": \"file:{0}\",\n    \"keys\": \"link:{0}\",\n    \"tool\": \"git+ssh://git@127.0.0.1:1/tool.git\",\n    \"ok\": \"file:./vendor/ok\"\n  }}\n}}\n",
            outside.display()
        ),
    );
    write(&project.join(".npmrc"), "save-exact=true\nregistry=http://127.0.0.1:1/\n");
    write(
        &project.join("package-lock.json"),
        &format!(
            "{{\n  \"lockfileVersion\": 3,\n  \"packages\": {{\n    \"node_modules/x\": {{ \"resolved\": \"file:{}\", \"link\": true }}\n  }}\n}}\n",
            outside.display()
        ),
    );
    let (ok, text, report) = build(&project, dir.path(), "deps", &[]);
    assert!(!ok && !dir.path().join("deps.wasm").exists(), "{text}");
    assert!(blocker(&report, "package.json:5", "creds").is_some(), "{report:#}\n{text}");
    assert!(blocker(&report, "package.json:6", "keys").is_some(), "{report:#}");
    assert!(blocker(&report, "package.json:7", "git+ssh").is_some(), "{report:#}");
    assert!(blocker(&report, ".npmrc:2", "registry").is_some(), "{report:#}");
    assert!(blocker(&report, "package-lock.json:4", "node_modules/x").is_some(), "{report:#}");
    let named = report["blockers"].as_array().unwrap().iter().any(|b| b["what"].as_str().unwrap_or("").contains("ok:"));
    assert!(!named, "a dependency inside the project is the project's: {report:#}");
}

/// A package whose PEP 517 build backend writes `marker` when pip runs it: what pip would run
/// on the build machine to build a dependency from a path.
fn evil_package(at: &Path, marker: &Path) {
    write(
        &at.join("pyproject.toml"),
        "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n",
    );
    write(
        &at.join("backend.py"),
        &format!(
            "open({:?}, 'w').write('ran')\ndef get_requires_for_build_wheel(config_settings=None): return []\n",
            marker.display().to_string()
        ),
    );
}

/// Finding 3 and the sweep, Python: requirement lines that name a path, a `file:` URL, an
/// editable install, another index or a git repository are refused naming their line, and so
/// are the same in PEP 723 metadata, a pyproject's path source and a `pypi:` source; pip never
/// runs the package's build backend.
#[test]
fn python_requirements_pip_would_build_here_or_take_from_elsewhere_are_refused_naming_the_line() {
    let dir = temp_dir();
    let marker = dir.path().join("backend-ran");
    let evil = dir.path().join("outside/evilpkg");
    evil_package(&evil, &marker);
    let server = "from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('reqs')\n";
    let project = dir.path().join("proj");
    write(&project.join("server.py"), server);
    write(
        &project.join("requirements.txt"),
        &format!(
            "evilpkg @ file://{0}\n{0}\n-e ./evilpkg\n--index-url http://127.0.0.1:1/simple\ngit+ssh://git@127.0.0.1:1/x.git\nhttpx>=0.27\n",
            evil.display()
        ),
    );
    let (ok, text, report) = build(&project, dir.path(), "reqs", &[]);
    assert!(!ok, "{text}");
    for (line, what) in
        [(1, "evilpkg @ file://"), (2, "evilpkg"), (3, "-e ./evilpkg"), (4, "--index-url"), (5, "git+ssh")]
    {
        assert!(
            blocker(&report, &format!("requirements.txt:{line}"), what).is_some(),
            "line {line}: {report:#}\n{text}"
        );
    }
    assert!(blocker(&report, "requirements.txt:6", "").is_none(), "a requirement by name is taken: {report:#}");

    // PEP 723 metadata of a lone file.
    let lone = dir.path().join("lone");
    write(
        &lone.join("tool.py"),
        &format!(
            "# /// script\n# dependencies = [\n#   \"evilpkg @ file://{}\",\n# ]\n# ///\n{server}",
            evil.display()
        ),
    );
    let (ok, text, report) = build(&lone.join("tool.py"), dir.path(), "lone", &[]);
    assert!(!ok && blocker(&report, "tool.py:3", "evilpkg").is_some(), "{report:#}\n{text}");

    // A pyproject's path source (uv), which would otherwise be fetched by name from the index.
    let sourced = dir.path().join("sourced");
    write(&sourced.join("server.py"), server);
    write(
        &sourced.join("pyproject.toml"),
        &format!(
            "[project]\nname = \"sourced\"\nversion = \"1\"\ndependencies = [\"evilpkg\"]\n\n[tool.uv.sources]\nevilpkg = {{ path = \"{}\" }}\n",
            evil.display()
        ),
    );
    let (ok, text, report) = build(&sourced, dir.path(), "sourced", &[]);
    assert!(!ok && blocker(&report, "pyproject.toml:7", "evilpkg").is_some(), "{report:#}\n{text}");

    // A `pypi:` source that is no package of the index.
    let (ok, text, report) = build(Path::new(&format!("pypi:file://{}", evil.display())), dir.path(), "pypi", &[]);
    assert!(!ok && report["blockers"].to_string().contains("file://"), "{report:#}\n{text}");
    assert!(!marker.exists(), "a package's build backend ran on the build machine");
}

/// A wheel whose metadata names a dependency by path (from an index the user named, here a
/// local one): pip would build that dependency here; its build backend never runs.
#[test]
fn a_dependency_named_by_path_in_a_wheels_metadata_runs_no_build_code() {
    let dir = temp_dir();
    let marker = dir.path().join("backend-ran");
    let evil = dir.path().join("outside/evilpkg");
    evil_package(&evil, &marker);
    // A local index (PEP 503) with one wheel, `shim`, that requires evilpkg from its path.
    let index = dir.path().join("index/simple/shim");
    std::fs::create_dir_all(&index).unwrap();
    let wheel = index.join("shim-1.0-py3-none-any.whl");
    let made = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, zipfile\n\
             with zipfile.ZipFile(sys.argv[1], 'w') as z:\n\
             \x20   z.writestr('shim/__init__.py', '')\n\
             \x20   z.writestr('shim-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: shim\\nVersion: 1.0\\nRequires-Dist: evilpkg @ file://' + sys.argv[2] + '\\n')\n\
             \x20   z.writestr('shim-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
             \x20   z.writestr('shim-1.0.dist-info/RECORD', '')\n",
        )
        .arg(&wheel)
        .arg(&evil)
        .status()
        .unwrap();
    assert!(made.success());
    write(
        &index.join("index.html"),
        "<html><body><a href=\"shim-1.0-py3-none-any.whl\">shim-1.0-py3-none-any.whl</a></body></html>\n",
    );
    let project = dir.path().join("proj");
    write(&project.join("server.py"), "from mcp.server.fastmcp import FastMCP\nmcp = FastMCP('deep')\n");
    write(&project.join("requirements.txt"), "shim==1.0\n");
    let index_url = format!("file://{}", dir.path().join("index/simple").display());
    let (ok, text, _) = build(&project, dir.path(), "deep", &["--index-url", &index_url]);
    assert!(!marker.exists(), "a dependency's build backend ran on the build machine:\n{text}");
    assert!(!ok && text.contains("pip would run a package's build code"), "{text}");
}

/// A builder whose machine a component must not betray: a `HOME` whose path holds a canary,
/// with mcpbox's build toolchain where a user's would be (`~/.cache/mcpbox/build`, hard links of
/// the suite's), a `TMPDIR` inside it, a user name holding the canary, a `NODE_OPTIONS` that
/// would run code of the builder's and an `~/.npmrc` and `pip.conf` that would pick another
/// registry, and a Python of the builder's own first on `PATH` (a venv, as an activated one
/// is) whose site-packages hold a module `mcpbox_builder_site` that no server's dependencies
/// provide. `apply` gives a build command that environment; `assert_clean` searches a
/// component for every trace of it, and the builder's site-packages for anything written.
pub(crate) struct CanaryBuilder {
    _dir: tempfile::TempDir,
    pub(crate) canary: String,
    home: std::path::PathBuf,
    marker: std::path::PathBuf,
    /// The builder's Python (`bin/python3`, `site-packages`) and what its site-packages held.
    python: std::path::PathBuf,
    site: std::path::PathBuf,
    site_before: Vec<std::path::PathBuf>,
}

/// Every path under `dir`, sorted.
fn tree(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap().map(Result::unwrap) {
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            }
            found.push(entry.path());
        }
    }
    found.sort();
    found
}

impl CanaryBuilder {
    pub(crate) fn new() -> CanaryBuilder {
        let dir = temp_dir();
        let canary = format!("mcpboxcanary{}", std::process::id());
        let home = dir.path().join(format!("home-{canary}"));
        let tools = home.join(".cache/mcpbox/build");
        std::fs::create_dir_all(tools.parent().unwrap()).unwrap();
        let suite = repo_root().join("target/build-tools");
        if suite.exists() {
            let copied = Command::new("cp").arg("-al").arg(&suite).arg(&tools).status().unwrap();
            assert!(copied.success(), "cannot copy the build toolchain");
        }
        std::fs::create_dir_all(home.join("tmp")).unwrap();
        let marker = dir.path().join("builder-code-ran");
        write(
            &home.join("hook.cjs"),
            &format!("require('fs').writeFileSync({:?}, 'ran');\n", marker.display().to_string()),
        );
        write(&home.join(".npmrc"), "registry=http://127.0.0.1:1/\n");
        write(&home.join(".config/pip/pip.conf"), "[global]\nindex-url = http://127.0.0.1:1/simple\n");
        // With pip: the build's driver runs on the Python `python3` names, and its pip guard
        // drives that Python's pip.
        let python = dir.path().join("builder-python");
        let made = Command::new("python3").args(["-m", "venv"]).arg(&python).status().unwrap();
        assert!(made.success(), "cannot make the builder's venv");
        let lib = python.join("lib");
        let version =
            std::fs::read_dir(&lib).unwrap().map(|e| e.unwrap().path()).find(|p| p.join("site-packages").is_dir());
        let site = version.expect("the venv has no site-packages").join("site-packages");
        write(&site.join("mcpbox_builder_site.py"), &format!("VALUE = {:?}\n", format!("{canary}-site")));
        let site_before = tree(&site);
        CanaryBuilder { _dir: dir, canary, home, marker, python, site, site_before }
    }

    /// The builder's environment on `command` (a `mcpbox build`).
    pub(crate) fn apply<'a>(&self, command: &'a mut Command) -> &'a mut Command {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::iter::once(self.python.join("bin")).chain(std::env::split_paths(&path));
        command
            .env("HOME", &self.home)
            .env("TMPDIR", self.home.join("tmp"))
            .env("USER", format!("{}user", self.canary))
            .env("LOGNAME", format!("{}user", self.canary))
            .env("MCPBOX_BUILD_TOOLS", self.home.join(".cache/mcpbox/build"))
            .env("MCPBOX_BUILD_CANARY", format!("{}-variable", self.canary))
            .env("NODE_OPTIONS", format!("--require {}", self.home.join("hook.cjs").display()))
            .env("PATH", std::env::join_paths(path).unwrap())
    }

    /// Nothing of the builder in `component`, and none of the builder's code ran.
    pub(crate) fn assert_clean(&self, component: &Path) {
        assert!(!self.marker.exists(), "the builder's NODE_OPTIONS ran code in the build");
        let bytes = std::fs::read(component).unwrap();
        let found = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(
            !found(&self.canary),
            "the component names the builder's home, user or a variable of theirs, or carries their Python's libraries"
        );
        let written: Vec<_> = tree(&self.site).into_iter().filter(|p| !self.site_before.contains(p)).collect();
        assert!(written.is_empty(), "the build wrote into the builder's Python libraries: {written:?}");
        // The machine's own name, where it is one (not a generic name a runtime may spell).
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let host = host.trim();
        if host.len() >= 8 && !["localhost", "debian", "ubuntu"].contains(&host) {
            assert!(!found(host), "the component names the build machine ({host})");
        }
    }
}
