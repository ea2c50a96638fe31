//! A registry plugin's life after publishing, against the real registry of `registry.rs`:
//! `mcpbox add` (config and lock), `mcpbox update` (what changed, refused when unsigned), a
//! running server following the lock, `check` and `compile` taking references, the requested
//! policy travelling as an annotation, and credentials from a Docker config.

use std::time::{Duration, Instant};

use super::registry_support::{
    Published, Registry, Workspace, call_echo, echo_published, loaded, signature_tag, tool_names,
};
use crate::common::*;

/// Publishes the `hello` example as the next version of `reference`, with a requested policy
/// in a `.policy.toml` beside it; returns the digest.
fn publish_hello_with_policy(work: &Workspace, reference: &str) -> String {
    let file = work.path("hello.wasm");
    std::fs::copy(fixture("hello"), &file).unwrap();
    std::fs::write(
        work.path("hello.policy.toml"),
        "network = [\"https://api.example.com\"]\nreason = \"greets\\nby name\"\n",
    )
    .unwrap();
    work.publish(file, reference)
}

/// Polls the server's tool names until `done` holds for them, for 10 s: following the lock
/// takes well under a second (the new version is in the store already; compiling the small
/// fixture is the rest), and a shorter wait than `WAIT` keeps the proof that switches
/// following off (`registry.server-follows-lock`) from idling.
fn wait_for_tools(server: &mut Server, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let names = tool_names(server);
        if done(&names) || Instant::now() > deadline {
            return names;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn add_then_update_moves_the_lock_and_a_running_server_follows_it() {
    let Published { registry: _registry, work, repository, reference, digest: first } =
        echo_published("1", Some("publisher"));
    std::fs::write(work.path("mcpbox.toml"), "# the team's tools\n[limits]\ntimeout_ms = 5000\n").unwrap();

    // add: pulled, verified under the key given, then written to the config and the lock.
    let added = work.ok(&["add", &reference, "--trust-key", "publisher.pub"]);
    assert!(
        added.contains("as plugin `echo`") && added.contains(&first) && added.contains("tools: echo.echo"),
        "{added}"
    );
    let config = std::fs::read_to_string(work.path("mcpbox.toml")).unwrap();
    assert!(config.contains("# the team's tools") && config.contains("timeout_ms = 5000"), "{config}");
    let parsed: toml::Value = toml::from_str(&config).unwrap();
    assert_eq!(parsed["plugins"][0].as_str(), Some(reference.as_str()), "{config}");
    assert_eq!(parsed["trust"]["plugin"]["echo"]["keys"][0].as_str(), Some("publisher.pub"), "{config}");
    assert!(work.lock().contains(&first));
    // Added twice: refused, the config as it was.
    let again = work.run(&["add", &reference]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already names"), "{again:?}");
    assert_eq!(std::fs::read_to_string(work.path("mcpbox.toml")).unwrap(), config);

    let mut server = work.serve_watching(&[]);
    loaded(&mut server);
    assert_eq!(text(&call_echo(&mut server, "version one")), "version one");

    // The tag moves to an unsigned component: update refuses it, the lock and server keep v1.
    let second = publish_hello_with_policy(&work, &reference);
    let refused = work.run(&["update"]);
    let out = String::from_utf8_lossy(&refused.stdout);
    assert!(!refused.status.success() && out.contains("not updated") && out.contains(&second), "{out}");
    assert!(work.lock().contains(&first) && !work.lock().contains(&second));

    // Signed: update moves the lock and says what changed, the requested grants included (they
    // travelled as an annotation: the store has no `.policy.toml` of the publisher's).
    work.sign(&repository, &second, "publisher");
    let updated = work.ok(&["update", "echo"]);
    assert!(updated.contains(&format!("digest: {first} → {second}")), "{updated}");
    assert!(updated.contains("+echo.greet") && updated.contains("-echo.echo"), "{updated}");
    assert!(updated.contains("requests network: - → https://api.example.com"), "{updated}");
    assert!(work.lock().contains(&second) && !work.lock().contains(&first));
    // What the model would read is new: shown, and withheld by a serving mcpbox until accepted.
    assert!(updated.contains("withheld until `mcpbox accept echo`"), "{updated}");
    assert!(updated.contains("tool `greet` of plugin `echo` is new since it was pinned"), "{updated}");

    // The server follows the lock: the old version is gone, the new tool withheld...
    let names = wait_for_tools(&mut server, |names| !names.iter().any(|n| n == "echo.echo"));
    assert!(names.is_empty(), "{names:?}");
    assert!(server.wait_for_log("withheld until accepted", WAIT), "{}", server.stderr());
    // ...until the operator accepts it.
    let accepted = work.ok(&["accept", "echo", "--config", "mcpbox.toml"]);
    assert!(accepted.contains("accepted tool `greet`"), "{accepted}");
    let names = wait_for_tools(&mut server, |names| names.iter().any(|n| n == "echo.greet"));
    assert!(names.iter().any(|n| n == "echo.greet") && !names.iter().any(|n| n == "echo.echo"), "{names:?}");
    assert!(server.wait_for_log("plugin added", LOGGED), "{}", server.stderr());
    drop(server);

    let again = work.ok(&["update"]);
    assert!(again.contains(&format!("echo: up to date ({second})")), "{again}");
    let unknown = work.run(&["update", "nope"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("has no registry plugin `nope` (it has: echo)"));
}

#[test]
fn check_and_compile_take_registry_references() {
    let Published { registry, work, reference, digest, .. } = echo_published("1", Some("publisher"));
    let unsigned = format!("{}:1", registry.reference("tools/stranger"));
    work.publish(fixture("hello"), &unsigned);
    work.config(&format!("plugins = [\"{reference}\", \"{unsigned}\"]\n[trust]\nkeys = [\"publisher.pub\"]\n"));

    // check: a row per reference, the unsigned one refused by name, and a failing exit.
    let output = work.run(&["check", "--config", "mcpbox.toml"]);
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{table}");
    let echo_row = table.lines().find(|line| line.starts_with("echo ")).unwrap_or_default();
    assert!(echo_row.contains(&digest.replace("sha256:", "")) && echo_row.ends_with(" -"), "{table}");
    let stranger_row = table.lines().find(|line| line.starts_with("stranger ")).unwrap_or_default();
    assert!(stranger_row.contains(&format!("refused {unsigned}")), "{table}");

    // compile: the signed one compiled into the cache, the refused one named.
    let output = work.run(&["compile", "--config", "mcpbox.toml"]);
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && log.contains("compiled 1 of 1") && log.contains(&unsigned), "{log}");
    let signed_only = format!("plugins = [\"{reference}\"]\n[trust]\nkeys = [\"publisher.pub\"]\n");
    work.config(&signed_only);
    let output = work.run(&["compile", "--config", "mcpbox.toml"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn credentials_come_from_the_docker_config() {
    let registry = Registry::start_with_login("ada", "lovelace");
    let work = Workspace::new();
    let reference = format!("{}:1", registry.reference("tools/echo"));
    let echo = fixture("echo");

    // No credentials: refused with what to do.
    let output = work.run(&["publish", echo.to_str().unwrap(), &reference]);
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{error}");
    assert!(
        error.contains("wants credentials and the Docker config has none") && error.contains("docker login"),
        "{error}"
    );

    // Wrong ones: refused, saying so.
    let docker = work.path("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let login = |secret: &str| {
        use base64::Engine;
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("ada:{secret}"));
        std::fs::write(
            docker.join("config.json"),
            format!("{{\"auths\": {{\"{}\": {{\"auth\": \"{auth}\"}}}}}}", registry.host),
        )
        .unwrap();
    };
    login("babbage");
    let output = work.run(&["publish", echo.to_str().unwrap(), &reference]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("refused the credentials"), "{output:?}");

    // The right ones: publish, sign, add and serve all use them.
    login("lovelace");
    let digest = work.publish(echo, &reference);
    work.keygen("publisher");
    work.sign(&registry.reference("tools/echo"), &digest, "publisher");
    work.ok(&["add", &reference, "--trust-key", "publisher.pub"]);
    let mut server = work.serve(&[]);
    loaded(&mut server);
    assert_eq!(text(&call_echo(&mut server, "logged in")), "logged in");
}

#[test]
fn a_mirror_serves_the_upstream_reference_with_the_publishers_signature() {
    let Published { registry: mut upstream, work, reference, digest, .. } = echo_published("1", Some("publisher"));
    let mirror = Registry::start();
    // The artifact and its signatures copied byte for byte: the digest, and so the publisher's
    // signature, are the same on the mirror.
    upstream.copy_to(&mirror, "tools/echo", "1");
    upstream.copy_to(&mirror, "tools/echo", &signature_tag(&digest));
    upstream.stop();
    let config = format!("plugins = [\"{reference}\"]\n[trust]\nkeys = [\"publisher.pub\"]\n");

    // Without the mirror, the upstream being down is the end of it.
    work.config(&config);
    let output = work.run(&["pull", "--config", "mcpbox.toml"]);
    assert!(!output.status.success());

    // Through the mirror: pinned under the upstream reference, signed by the publisher.
    work.config(&format!("{config}[registries.mirrors]\n\"{}\" = [\"{}\"]\n", upstream.host, mirror.host));
    work.ok(&["pull", "--config", "mcpbox.toml"]);
    let lock = work.lock();
    assert!(lock.contains(&format!("reference = \"{reference}\"")) && lock.contains(&digest), "{lock}");
    let mut server = work.serve(&[]);
    let log = loaded(&mut server);
    assert!(log.contains("is signed by") && log.contains("publisher.pub"), "{log}");
    assert_eq!(text(&call_echo(&mut server, "mirrored")), "mirrored");
    drop(server);

    // A mirror that is no registry is named with the file and the key.
    work.config(&format!("{config}[registries.mirrors]\n\"{}\" = [\"not a host\"]\n", upstream.host));
    let output = work.run(&["pull", "--config", "mcpbox.toml"]);
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("[registries.mirrors]") && error.contains("`not a host` is not a registry"), "{error}");
}
