//! Plugins from a real OCI registry (Debian's docker-registry 2.8, `scripts/setup-registry.sh`)
//! started on loopback for each test: publish, sign, pull, pin, trust, serve and call.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

/// A registry on a loopback port of its own, its storage in a temporary directory; stopped
/// when dropped.
struct Registry {
    child: Child,
    host: String,
    dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
        let setup = Command::new("bash").arg(repo_root().join("scripts/setup-registry.sh")).output().unwrap();
        assert!(setup.status.success(), "setting up the registry failed: {}", String::from_utf8_lossy(&setup.stderr));
        let binary = String::from_utf8(setup.stdout).unwrap().trim().to_owned();
        let dir = temp_dir();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let host = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: warn}}\nstorage: {{filesystem: {{rootdirectory: {}}}, delete: {{enabled: true}}}}\nhttp: {{addr: {host}}}\n",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new(binary)
            .args(["serve".as_ref(), config.as_os_str()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let registry = Registry { child, host, dir };
        let deadline = Instant::now() + WAIT;
        while std::net::TcpStream::connect(&registry.host).is_err() {
            assert!(Instant::now() < deadline, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    fn reference(&self, repository: &str) -> String {
        format!("oci://{}/{repository}", self.host)
    }

    /// The files of blob `digest` in the registry's storage.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir.path().join(format!("data/docker/registry/v2/blobs/sha256/{}/{hex}/data", &hex[..2]))
    }

    /// Copies the manifest tagged `from` to the tag `to` in `repository`, as a registry could.
    fn copy_manifest(&self, repository: &str, from: &str, to: &str) {
        let base = format!("http://{}/v2/{repository}/manifests", self.host);
        let kind = "application/vnd.oci.image.manifest.v1+json";
        tokio::runtime::Runtime::new().unwrap().block_on(async {
            let client = http_client();
            let manifest = client.get(format!("{base}/{from}")).header("accept", kind).send().await.unwrap();
            assert!(manifest.status().is_success(), "{}", manifest.status());
            let bytes = manifest.bytes().await.unwrap();
            let put = client.put(format!("{base}/{to}")).header("content-type", kind).body(bytes).send().await.unwrap();
            assert!(put.status().is_success(), "{}", put.status());
        });
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A publisher's or operator's working directory: keys, the config, the lock, a cache.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        Workspace { dir: temp_dir() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `mcpbox ARGS` with this workspace's store and no Docker credentials of the machine.
    fn run(&self, args: &[&str]) -> Output {
        guests();
        Command::new(env!("CARGO_BIN_EXE_mcpbox"))
            .args(args)
            .current_dir(self.dir.path())
            .env("MCPBOX_CACHE_DIR", self.path("cache"))
            .env("DOCKER_CONFIG", self.path("docker"))
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(output.status.success(), "mcpbox {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// Publishes the component `file` at `reference`; returns its manifest digest.
    fn publish(&self, file: PathBuf, reference: &str) -> String {
        let printed = self.ok(&["publish", file.to_str().unwrap(), reference]);
        printed.lines().find_map(|line| line.strip_prefix("digest ")).expect("a digest line").to_owned()
    }

    fn keygen(&self, name: &str) -> PathBuf {
        self.ok(&["keygen", self.path(name).to_str().unwrap()]);
        self.path(&format!("{name}.pub"))
    }

    fn sign(&self, repository: &str, digest: &str, key: &str) {
        self.ok(&[
            "sign",
            &format!("{repository}@{digest}"),
            "--key",
            self.path(&format!("{key}.key")).to_str().unwrap(),
        ]);
    }

    /// Writes `mcpbox.toml` here.
    fn config(&self, text: &str) -> PathBuf {
        let path = self.path("mcpbox.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `mcpbox serve --config mcpbox.toml EXTRA` from this workspace.
    fn serve(&self, extra: &[&str]) -> Server {
        let config = self.path("mcpbox.toml");
        let mut args = vec!["--no-watch", "--config", config.to_str().unwrap()];
        args.extend_from_slice(extra);
        let cache = self.path("cache");
        let docker = self.path("docker");
        Server::start_with_env(
            &args,
            &[("MCPBOX_CACHE_DIR", cache.to_str().unwrap()), ("DOCKER_CONFIG", docker.to_str().unwrap())],
        )
    }

    fn lock(&self) -> String {
        std::fs::read_to_string(self.path("mcpbox.lock")).unwrap_or_default()
    }
}

/// The tag cosign keeps the signatures of `digest` under.
fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

fn call_echo(server: &mut Server, text: &str) -> serde_json::Value {
    server.result("tools/call", modern(json!({ "name": "echo.echo", "arguments": { "text": text } })))
}

fn tool_names(server: &mut Server) -> Vec<String> {
    let listed = server.result("tools/list", modern(json!({})));
    listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// Waits for the server to have resolved and loaded its plugins, then returns its log.
fn loaded(server: &mut Server) -> String {
    assert!(server.wait_for_log("plugins loaded", WAIT), "{}", server.stderr());
    server.stderr()
}

/// The `echo` fixture published at `tools/echo:TAG` in a registry of its own, signed by a key
/// pair `signer` made in the workspace (none: unsigned).
struct Published {
    registry: Registry,
    work: Workspace,
    /// `oci://HOST/tools/echo`.
    repository: String,
    /// `oci://HOST/tools/echo:TAG`.
    reference: String,
    digest: String,
}

fn echo_published(tag: &str, signer: Option<&str>) -> Published {
    let registry = Registry::start();
    let work = Workspace::new();
    let repository = registry.reference("tools/echo");
    let reference = format!("{repository}:{tag}");
    let digest = work.publish(fixture("echo"), &reference);
    if let Some(signer) = signer {
        work.keygen(signer);
        work.sign(&repository, &digest, signer);
    }
    Published { registry, work, repository, reference, digest }
}

#[test]
fn a_signed_component_is_published_pulled_pinned_and_called() {
    let Published { registry: _registry, work, repository, digest, .. } = echo_published("1.0", Some("publisher"));
    work.config(&format!("plugins = [\"{repository}:1.0\"]\n[trust]\nkeys = [\"publisher.pub\"]\n"));
    let mut server = work.serve(&[]);
    let log = loaded(&mut server);
    assert!(log.contains("is signed by") && log.contains("publisher.pub"), "{log}");
    let result = call_echo(&mut server, "from the registry");
    assert_eq!(text(&result), "from the registry");
    // The tag is pinned to the digest in the lock beside the config.
    let lock = work.lock();
    assert!(lock.contains(&format!("reference = \"{repository}:1.0\"")) && lock.contains(&digest), "{lock}");
}

#[test]
fn unsigned_wrongly_signed_and_untrusted_components_are_refused_by_name() {
    let Published { registry, work, repository, reference, digest } = echo_published("1.0", None);
    work.keygen("trusted");
    work.keygen("stranger");
    // A local plugin beside it serves whatever happens to the registry's.
    let local = fixture("hello");
    let config = format!("plugins = [\"{reference}\", \"{}\"]\n[trust]\nkeys = [\"trusted.pub\"]\n", local.display());
    work.config(&config);

    // Unsigned: refused, naming the reference, the digest and what to do.
    let mut server = work.serve(&[]);
    let log = loaded(&mut server);
    let refusal = format!("refused {reference} ({digest}): it has no signature");
    assert!(log.contains(&refusal), "{log}");
    assert!(log.contains("mcpbox sign") && log.contains("[trust] unsigned"), "{log}");
    let names = tool_names(&mut server);
    assert!(
        !names.iter().any(|n| n.starts_with("echo.")) && names.iter().any(|n| n.starts_with("hello.")),
        "{names:?}"
    );
    drop(server);

    // Signed by a key the operator does not trust: refused.
    work.sign(&repository, &digest, "stranger");
    let mut server = work.serve(&[]);
    let log = loaded(&mut server);
    assert!(log.contains("none of its 1 signature(s) is by a trusted key"), "{log}");
    drop(server);

    // The trusted key's signature of another digest, copied where this digest's signatures go
    // (what a registry or a man in the middle could do), does not sign this one.
    let other = work.publish(fixture("hello"), &format!("{repository}:other"));
    work.sign(&repository, &other, "trusted");
    registry.copy_manifest("tools/echo", &signature_tag(&other), &signature_tag(&digest));
    let mut server = work.serve(&[]);
    let log = loaded(&mut server);
    assert!(log.contains(&format!("refused {reference} ({digest}): none of its 1 signature(s)")), "{log}");
    drop(server);

    // The operator's explicit opt-out for this reference serves it unsigned, with a warning.
    work.config(&format!("{config}unsigned = [\"{reference}\"]\n"));
    let mut server = work.serve(&[]);
    assert!(loaded(&mut server).contains("serves unsigned"));
    assert_eq!(text(&call_echo(&mut server, "opted out")), "opted out");
    drop(server);

    // Signed by the trusted key now: serves without the opt-out.
    work.sign(&repository, &digest, "trusted");
    work.config(&config);
    let mut server = work.serve(&[]);
    assert!(loaded(&mut server).contains("trusted.pub"));
    assert_eq!(text(&call_echo(&mut server, "signed")), "signed");
}

#[test]
fn a_moved_tag_still_serves_the_locked_digest_and_locked_refuses_what_is_not_pinned() {
    let Published { registry: _registry, work, repository, reference, digest: first } =
        echo_published("latest", Some("publisher"));
    let config = format!("plugins = [\"{reference}\"]\n[trust]\nkeys = [\"publisher.pub\"]\n");
    work.config(&config);
    work.ok(&["pull", "--config", "mcpbox.toml"]);
    assert!(work.lock().contains(&first));

    // The tag moves to another component, signed too; the lock keeps the first.
    let second = work.publish(fixture("hello"), &reference);
    work.sign(&repository, &second, "publisher");
    let mut server = work.serve(&["--locked"]);
    loaded(&mut server);
    let names = tool_names(&mut server);
    assert!(names.iter().any(|n| n == "echo.echo"), "{names:?}");
    drop(server);
    assert!(work.lock().contains(&first) && !work.lock().contains(&second));

    // --locked refuses a reference the lock does not pin, and says how to pin it.
    work.config(&format!("plugins = [\"{reference}\", \"{repository}:new\"]\n[trust]\nkeys = [\"publisher.pub\"]\n"));
    let mut server = work.serve(&["--locked"]);
    let log = loaded(&mut server);
    assert!(log.contains(&format!("{repository}:new is not pinned in")) && log.contains("mcpbox pull"), "{log}");
}

#[test]
fn pulled_plugins_serve_with_the_registry_down_and_tampered_blobs_are_refused() {
    let Published { mut registry, work, reference, digest, .. } = echo_published("1.0", Some("publisher"));

    // A component changed in the registry's storage is refused by digest on the way in.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(registry.blob_file(&digest)).unwrap()).unwrap();
    let component = manifest["layers"][0]["digest"].as_str().unwrap().to_owned();
    let original = std::fs::read(registry.blob_file(&component)).unwrap();
    let mut tampered = original.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    std::fs::write(registry.blob_file(&component), &tampered).unwrap();
    work.config(&format!("plugins = [\"{reference}\"]\n[trust]\nkeys = [\"publisher.pub\"]\n"));
    let output = work.run(&["pull", "--config", "mcpbox.toml"]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains(&reference) && error.contains(&component), "{error}");
    std::fs::write(registry.blob_file(&component), &original).unwrap();

    // Pulled once, it serves with the registry gone.
    work.ok(&["pull", "--config", "mcpbox.toml"]);
    registry.stop();
    let mut server = work.serve(&[]);
    loaded(&mut server);
    assert_eq!(text(&call_echo(&mut server, "offline")), "offline");
    drop(server);

    // A blob changed in the store is refused on the next start, and removed.
    let stored = work.path(&format!("cache/oci/blobs/sha256/{}", component.strip_prefix("sha256:").unwrap()));
    std::fs::write(&stored, &tampered).unwrap();
    let mut server = work.serve(&[]);
    let log = loaded(&mut server);
    assert!(log.contains(&format!("blob {component}")) && log.contains("changed on disk"), "{log}");
    assert!(!stored.exists());
}

#[test]
fn a_component_over_the_size_limit_is_refused_while_it_downloads() {
    let registry = Registry::start();
    let work = Workspace::new();
    let reference = format!("{}:1.0", registry.reference("tools/time"));
    work.publish(plugin("time"), &reference);
    work.config(&format!("plugins = [\"{reference}\"]\n[trust]\nunsigned = [\"{reference}\"]\n"));
    let output = work.run(&["pull", "--config", "mcpbox.toml", "--max-plugin-mib", "1"]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("larger than the plugin size limit"), "{error}");
    // Only the manifest was stored, never a byte of the component.
    assert_eq!(std::fs::read_dir(work.path("cache/oci/blobs/sha256")).unwrap().count(), 1);
}

#[test]
fn bad_references_and_keys_are_named() {
    let work = Workspace::new();
    work.config("plugins = [\"oci://127.0.0.1:1/Bad/Name:1\"]\n[trust]\nkeys = [\"missing.pub\"]\n");
    let output = work.run(&["serve", "--config", "mcpbox.toml"]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("oci://127.0.0.1:1/Bad/Name:1")
            && error.contains("missing.pub")
            && error.contains("mcpbox.toml:"),
        "{error}"
    );
    let output = work.run(&["sign", "oci://127.0.0.1:1/tools/echo:1.0", "--key", "none.key"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("sign a digest, not a tag"));
}
