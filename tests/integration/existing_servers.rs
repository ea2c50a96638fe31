//! Existing MCP servers made plugins by `mcpbox build` (issue 40): real servers from npm at
//! pinned versions, unmodified, built and then compared with the same server run natively by
//! the reference-compatibility harness (`reference_servers.rs`: the official Python SDK
//! client, the same tool schemas, the same results on recorded calls); servers that cannot
//! run sandboxed fail the build with their blockers; a built server's code gets exactly what
//! any plugin gets.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{owned, repo_root};
use crate::reference_servers::{compare_with, memory_spec, node_server, reference_servers};

/// The npm versions the builds pin: the reference servers the harness already runs natively.
const REFERENCE_VERSION: &str = "2026.8.31";

/// Runs `mcpbox build SOURCE -o DIR/NAME.wasm` with the tests' Node and toolchain directory;
/// `(succeeded, stdout and stderr, the report)`.
pub(crate) fn build(source: &str, dir: &Path, name: &str) -> (bool, String, Value) {
    build_with(source, dir, name, &[])
}

/// [`build`] with more environment for the build. Without any, the result may come from the
/// suite's build cache (`tests/clients/build_cache.py`: one build per source and run, shared
/// with the docs pages); with some, the build is the test's own (it tests the build itself).
fn build_with(source: &str, dir: &Path, name: &str, env: &[(&str, &Path)]) -> (bool, String, Value) {
    let out = dir.join(format!("{name}.wasm"));
    let mut command = match env {
        [] => {
            let mut cached = Command::new("python3");
            cached
                .arg(repo_root().join("tests/clients/build_cache.py"))
                .arg(env!("CARGO_BIN_EXE_mcpbox"))
                .env("MCPBOX_TEST_BUILD_CACHE", build_cache());
            cached
        }
        _ => Command::new(env!("CARGO_BIN_EXE_mcpbox")),
    };
    // The machine's Node.js runs the JavaScript toolchain, as in a user's build (and the docs
    // page's: the same build, so the cache has it once).
    let output = owned(&mut command)
        .args(["build", source, "-o"])
        .arg(&out)
        .current_dir(dir)
        .env("MCPBOX_BUILD_TOOLS", repo_root().join("target/build-tools"))
        // The suite's componentize-py (scripts/setup-componentize.sh), not a venv per toolchain.
        .env("MCPBOX_COMPONENTIZE_PY", repo_root().join("target/componentize-py/bin/componentize-py"))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("cannot run mcpbox build");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let report = std::fs::read_to_string(out.with_extension("compat.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (output.status.success(), text, report)
}

/// The suite's `mcpbox build` cache (`tests/clients/build_cache.py`).
pub(crate) fn build_cache() -> PathBuf {
    repo_root().join("target/test-built")
}

/// [`build`] that must succeed; the component's path and the report.
pub(crate) fn built(source: &str, dir: &Path, name: &str) -> (PathBuf, Value) {
    let (ok, text, report) = build(source, dir, name);
    assert!(ok, "mcpbox build {source} failed:\n{text}");
    (dir.join(format!("{name}.wasm")), report)
}

pub(crate) fn names(report: &Value, key: &str) -> Vec<String> {
    report[key].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect()
}

/// The memory server from npm, its graph in a granted directory named by its own variable
/// (`MEMORY_FILE_PATH`, which the report finds and suggests): every edit and query answers as
/// the native server's, and both files end byte for byte the same.
#[test]
fn the_memory_server_built_from_npm_matches_it_run_natively() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, report) =
        built(&format!("npm:@modelcontextprotocol/server-memory@{REFERENCE_VERSION}"), dir.path(), "memory");
    assert_eq!(report["sdk"]["package"], "@modelcontextprotocol/sdk", "{report:#}");
    assert!(names(&report, "tools").contains(&"create_entities".to_owned()), "{report:#}");
    assert!(report["environment"].to_string().contains("MEMORY_FILE_PATH"), "{report:#}");
    // What the section below sets, the report suggests: the variable, and one call at a time
    // (each call reads and rewrites the whole file; concurrent calls would lose writes).
    let suggested = report["suggested_config"].as_str().unwrap();
    assert!(suggested.contains("MEMORY_FILE_PATH") && suggested.contains("max_concurrency = 1"), "{suggested}");

    let (spec, ours) = memory_spec(dir.path());
    let section = format!(
        "roots = false\nmax_concurrency = 1\nenv = {{ MEMORY_FILE_PATH = \"/roots/data/memory.jsonl\" }}\n\n\
         [[plugin.memory.dirs]]\npath = {:?}\nname = \"data\"\nwritable = true\n",
        ours.display()
    );
    compare_with("memory", &wasm, dir.path(), &section, &[], spec);
}

/// The sequential-thinking server from npm: the same tool and the same answers, but for the
/// thought history it keeps in process memory, which a fresh instance per call starts empty
/// (the report says so for every build; `ThinkingBuilt` in reference_scenarios.py names the
/// two fields and leaves nothing else out).
#[test]
fn the_sequential_thinking_server_built_from_npm_matches_it_run_natively_but_for_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("npm:@modelcontextprotocol/server-sequential-thinking@{REFERENCE_VERSION}");
    let (wasm, report) = built(&source, dir.path(), "sequential-thinking");
    assert_eq!(names(&report, "tools"), ["sequentialthinking"], "{report:#}");
    assert!(report["notes"].to_string().contains("starts empty on every call"), "{report:#}");
    let (node, servers) = reference_servers();
    let reference = node_server(&node, &servers, "server-sequential-thinking", &[]);
    let spec = json!({ "reference": reference, "scenario": "sequential-thinking-built" });
    compare_with("sequential-thinking", &wasm, dir.path(), "roots = false\n", &[], spec);
}

/// The "everything" server from npm, the SDK's showcase: its tools, resources, templates and
/// prompts are listed; every tool whose result does not depend on a process outliving the
/// call or on the internet answers as natively (`Everything` in reference_scenarios.py names
/// the others and why), the files it reads next to its code embedded by the build.
#[test]
fn the_everything_server_built_from_npm_matches_it_run_natively_for_its_per_call_tools() {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("npm:@modelcontextprotocol/server-everything@{REFERENCE_VERSION}");
    let (wasm, report) = built(&source, dir.path(), "everything");
    for key in ["tools", "resources", "resource_templates", "prompts"] {
        assert!(!names(&report, key).is_empty(), "no {key} listed: {report:#}");
    }
    assert!(report["embedded"].to_string().contains("docs/"), "its docs are not embedded: {report:#}");
    assert!(report["stubs"].to_string().contains("express"), "{report:#}");
    assert!(report["blockers"].as_array().is_some_and(Vec::is_empty), "{report:#}");
    let (node, servers) = reference_servers();
    let reference = node_server(&node, &servers, "server-everything", &["stdio"]);
    // It imports fetch (one tool downloads a file): no network, the stub that refuses.
    compare_with(
        "everything",
        &wasm,
        dir.path(),
        "roots = false\nstub_ungranted = true\n",
        &[],
        json!({ "reference": reference }),
    );
}

/// A CA, and a certificate for `host` it signed (openssl, Debian's): a stand-in's.
/// `(ca.pem, server.crt, server.key)`.
pub(crate) fn standin_certificates(dir: &Path, host: &str) -> (PathBuf, PathBuf, PathBuf) {
    let (ca, ca_key) = (dir.join("ca.pem"), dir.join("ca.key"));
    let (cert, key, request) = (dir.join("server.crt"), dir.join("server.key"), dir.join("server.csr"));
    let extensions = dir.join("server.ext");
    std::fs::write(
        &extensions,
        format!("basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:{host}\n"),
    )
    .unwrap();
    let config = dir.join("openssl.cnf");
    std::fs::write(&config, "[req]\ndistinguished_name = dn\n[dn]\n").unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        let made = Command::new("openssl").args(args).output().unwrap();
        assert!(made.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&made.stderr));
    };
    let os = |s: &str| std::ffi::OsString::from(s);
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"].map(os);
    let mut args = vec![os("req"), os("-x509")];
    args.extend(ec.iter().cloned());
    args.extend(["-days", "1", "-subj", "/CN=mcpbox test CA", "-config"].map(os));
    args.extend([config.clone().into(), os("-keyout"), ca_key.clone().into(), os("-out"), ca.clone().into()]);
    args.extend(["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"].map(os));
    run(&args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
    let mut args = vec![os("req")];
    args.extend(ec.iter().cloned());
    args.extend([os("-subj"), os(&format!("/CN={host}")), os("-config")]);
    args.extend([config.into(), os("-keyout"), key.clone().into(), os("-out"), request.clone().into()]);
    run(&args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
    let mut args = vec![os("x509"), os("-req"), os("-in"), request.into(), os("-CA"), ca.clone().into()];
    args.extend([os("-CAkey"), ca_key.into(), os("-CAcreateserial"), os("-days"), os("1")]);
    args.extend([os("-extfile"), extensions.into(), os("-out"), cert.clone().into()]);
    run(&args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
    (ca, cert, key)
}

/// `unshare` arguments that run `command` in a network namespace of its own, whose
/// /etc/hosts points `host` at loopback, where the stand-in (`[python, script, cert, key,
/// log]`) listens on 443 while the command runs.
pub(crate) fn in_namespace(dir: &Path, host: &str, standin: [&Path; 5], command: &[String]) -> Vec<String> {
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, format!("127.0.0.1 localhost\n127.0.0.1 {host}\n")).unwrap();
    // The stand-in holds none of the harness's pipes (or reading the server's output would
    // wait for it too) and goes when the server does.
    let script = "ip link set lo up && mount --bind \"$1\" /etc/hosts || exit 1; \
                  \"$2\" \"$3\" 443 \"$4\" \"$5\" \"$6\" < /dev/null > \"$7\" 2>&1 & standin=$!; \
                  while ! grep -q ready \"$7\" 2> /dev/null; do sleep 0.05; done; \
                  shift 7; \"$@\"; status=$?; kill $standin; exit $status";
    let [python, script_path, cert, key, log] = standin;
    let ready = dir.join(format!("{host}-ready"));
    ["--mount", "--net", "--map-root-user", "sh", "-c", script, "sh"]
        .iter()
        .map(|s| s.to_string())
        .chain(
            [&hosts.as_path(), &python, &script_path, &cert, &key, &log, &ready.as_path()]
                .map(|p| p.display().to_string()),
        )
        .chain(command.iter().cloned())
        .collect()
}

/// A stand-in's process, stopped when the test ends, whether it passed or not.
pub(crate) struct Standin(std::process::Child);

impl Drop for Standin {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A stand-in (`script PORT CERT KEY LOG`) on this machine's loopback, once it is listening;
/// its process and its port.
pub(crate) fn start_standin(python: &str, script: &Path, cert: &Path, key: &Path, log: &Path) -> (Standin, u16) {
    let port = crate::common::free_port();
    let mut child = Command::new(python)
        .arg(script)
        .arg(port.to_string())
        .args([cert, key, log])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut ready).unwrap();
    assert_eq!(ready.trim(), "ready");
    (Standin(child), port)
}

/// A probe fixture's component (`tests/fixtures/existing/probe`, `.../python-probe`) served as
/// `probe` with arguments, a variable and a read-only grant holding `hello.txt`; two calls of
/// its `module_state` show that the module ran in each call with that call's environment and
/// arguments, and nothing of the host's. The config, the server and the granted directory.
pub(crate) fn serve_probe(out: &Path, dir: &Path) -> (crate::common::ConfigFile, crate::common::Server, PathBuf) {
    let data = dir.join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("hello.txt"), "hello from the grant").unwrap();
    let _ = std::fs::remove_file("/tmp/mcpbox-probe-escape");
    let config = crate::common::ConfigFile::new(&format!(
        "plugins = [{out:?}]\n[plugin.probe]\nprefix = \"\"\nroots = false\nargs = [\"--verbose\"]\n\
         env = {{ MCPBOX_PROBE_SECRET = \"from-config\" }}\n\n\
         [[plugin.probe.dirs]]\npath = {data:?}\nname = \"data\"\n"
    ));
    let mut server = config.serve();
    server.initialize("2025-06-18", json!({}));
    let state = |server: &mut crate::common::Server| -> Value {
        let result = crate::common::call_tool(server, "module_state", json!({}));
        serde_json::from_str(&crate::common::text(&result)).unwrap()
    };
    let (first, second) = (state(&mut server), state(&mut server));
    assert_eq!(first["secret"], "from-config", "{first}");
    assert_eq!(first["argv"], json!(["--verbose"]), "{first}");
    assert_eq!(first["home"], Value::Null, "the host's environment reached the guest: {first}");
    assert_ne!(first["instance"], second["instance"], "module-level state outlived its call");
    (config, server, data)
}

/// The bytes of `component` hold no `secret` (a variable of the build's shell).
pub(crate) fn assert_absent(component: &Path, secret: &str) {
    let bytes = std::fs::read(component).unwrap();
    assert!(
        !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "a variable of the build's shell is in the component"
    );
}

/// What reached a stand-in: one JSON object per request.
pub(crate) fn requests(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The archived GitHub server (its last npm version), unmodified, against a loopback stand-in
/// of the GitHub API: natively, inside a network namespace whose /etc/hosts points
/// api.github.com at the stand-in, its token in its environment as its README says; built, through
/// mcpbox's `[network] hosts` and `ca_file` (the operator's routes), its token set at the door
/// by the host from a secret (`[[plugin.github.credentials]]`), never in the plugin's
/// environment. Same tools, same answers; the right token reached the stand-in each time.
#[test]
fn the_github_server_built_from_npm_reaches_a_stand_in_with_the_token_the_host_sets() {
    let dir = tempfile::tempdir().unwrap();
    let (wasm, report) = built("npm:@modelcontextprotocol/server-github@2025.4.8", dir.path(), "github");
    assert!(report["hosts"].to_string().contains("https://api.github.com"), "{report:#}");
    assert_eq!(report["uses_fetch"], true, "{report:#}");
    let suggested = report["suggested_config"].as_str().unwrap();
    assert!(
        suggested.contains("[[plugin.github.credentials]]") && !suggested.contains("GITHUB_PERSONAL_ACCESS_TOKEN = "),
        "the token must be suggested as a credential, not as env: {suggested}"
    );

    let (ca, cert, key) = standin_certificates(dir.path(), "api.github.com");
    let (node, servers) = reference_servers();
    let python = format!("{servers}/venv/bin/python");
    let standin = repo_root().join("tests/clients/github_standin.py");
    // The stand-in the built server reaches, on this machine's loopback.
    let ours_log = dir.path().join("ours.jsonl");
    let (ours, port) = start_standin(&python, &standin, &cert, &key, &ours_log);

    // The native server and its own stand-in in a network namespace (nothing leaves the
    // machine either way).
    let entry = format!("{servers}/node_modules/@modelcontextprotocol/server-github/dist/index.js");
    let theirs_log = dir.path().join("theirs.jsonl");
    let args = in_namespace(
        dir.path(),
        "api.github.com",
        [Path::new(&python), &standin, &cert, &key, &theirs_log],
        &[node, entry],
    );
    let reference = json!({
        "command": "unshare",
        "args": args,
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "native-token", "NODE_EXTRA_CA_CERTS": ca},
    });
    let token = dir.path().join("github-token");
    std::fs::write(&token, "host-token").unwrap();
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let section = format!(
        "network = [\"https://api.github.com\"]\n\n\
         [[plugin.github.credentials]]\nhost = \"https://api.github.com\"\nheader = \"Authorization\"\n\
         value = \"Bearer {{secrets.github}}\"\n\n\
         [secrets.github]\nfile = {token:?}\n\n\
         [network]\nhosts = {{ \"api.github.com\" = \"127.0.0.1:{port}\" }}\nca_file = {ca:?}\n"
    );
    compare_with("github", &wasm, dir.path(), &section, &[], json!({ "reference": reference }));
    drop(ours);

    let theirs = requests(&theirs_log);
    let ours = requests(&ours_log);
    assert!(!theirs.is_empty() && theirs.len() == ours.len(), "native {theirs:?}\nbuilt {ours:?}");
    assert!(theirs.iter().all(|r| r["authorization"] == "Bearer native-token"), "{theirs:?}");
    assert!(ours.iter().all(|r| r["authorization"] == "Bearer host-token"), "{ours:?}");
    let paths = |log: &[Value]| log.iter().map(|r| r["path"].clone()).collect::<Vec<_>>();
    assert_eq!(paths(&theirs), paths(&ours));
}

/// A server that cannot run sandboxed fails the build with every blocker and where it is: it
/// drives a browser, starts a process, loads a native extension. No component is written,
/// only the report; and its install script never ran on the build machine.
#[test]
fn a_server_that_needs_a_browser_a_process_and_a_native_extension_fails_the_build_naming_each() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join("tests/fixtures/existing/blocked");
    let marker = dir.path().join("postinstall-ran");
    let (ok, text, report) =
        build_with(source.to_str().unwrap(), dir.path(), "blocked", &[("MCPBOX_POSTINSTALL_MARKER", &marker)]);
    assert!(!marker.exists(), "the server's install script ran on the build machine");
    assert!(!ok, "a blocked server was built:\n{text}");
    assert!(!dir.path().join("blocked.wasm").exists(), "a component was written for a blocked server");
    let blockers = report["blockers"].as_array().cloned().unwrap_or_default();
    let has = |what: &str, at: &str| {
        blockers.iter().any(|b| b["what"].as_str().is_some_and(|w| w.contains(what)) && b["at"].as_str() == Some(at))
    };
    assert!(has("child_process: spawn", "server.js:12"), "{report:#}");
    assert!(has("puppeteer", "node_modules/puppeteer/index.js:1"), "{report:#}");
    assert!(has("native-thing", "node_modules/native-thing/index.js:1"), "{report:#}");
    assert!(
        text.contains("server.js:12") && text.contains("drives a browser"),
        "the printed report lists them:\n{text}"
    );
}

/// The code of a built server gets exactly what any plugin gets: the environment and
/// arguments the operator configured (read when a call runs, never at build time: a variable
/// of the build's shell is nowhere in the component; a module-level random id differs per
/// call), no process, no socket, no file outside its grants; writes only where granted.
#[test]
fn a_built_servers_code_reads_its_environment_per_call_and_gets_what_any_plugin_gets() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join("tests/fixtures/existing/probe");
    let shell_secret = format!("build-shell-{}", std::process::id());
    let (node, _) = reference_servers();
    let out = dir.path().join("probe.wasm");
    // Built by a builder whose home, user, variables and settings would show (build_hygiene.rs).
    let builder = crate::build_hygiene::CanaryBuilder::new();
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpbox"));
    owned(&mut command);
    let output = builder
        .apply(&mut command)
        .args(["build", source.to_str().unwrap(), "--node", &node, "-o"])
        .arg(&out)
        .env("MCPBOX_PROBE_SECRET", &shell_secret)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_absent(&out, &shell_secret);
    builder.assert_clean(&out);

    let (_config, mut server, data) = serve_probe(&out, dir.path());
    let attempt = |server: &mut crate::common::Server, what: &str| {
        crate::common::call_tool(server, "attempt", json!({ "what": what }))
    };
    for (what, refusal) in [
        ("spawn", "child_process.execSync is not available"),
        ("socket", "refused"),
        ("read_outside", "ENOENT"),
        ("write_outside", "ENOENT"),
        ("write_granted", "refused"),
    ] {
        let result = attempt(&mut server, what);
        assert_eq!(result["isError"], true, "{what}: {result}");
        assert!(crate::common::text(&result).contains(refusal), "{what}: {result}");
    }
    assert!(!Path::new("/tmp/mcpbox-probe-escape").exists(), "a write outside the grants reached the host");
    assert_eq!(std::fs::read_to_string(data.join("hello.txt")).unwrap(), "hello from the grant");
    let granted = attempt(&mut server, "read_granted");
    assert_eq!(crate::common::text(&granted), "hello from the grant", "{granted}");
}
