//! The registry tests' support: a real OCI registry (Debian's docker-registry 2.8,
//! `scripts/setup-registry.sh`) started on loopback per test, with a login if asked, and a
//! workspace that runs `mcpbox` with its own store and Docker config.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

/// A registry on a loopback port of its own, its storage in a temporary directory; stopped
/// when dropped.
pub(super) struct Registry {
    child: Child,
    pub(super) host: String,
    dir: tempfile::TempDir,
    /// The htpasswd file of a registry that wants a login.
    _login: Option<tempfile::TempDir>,
}

impl Registry {
    pub(super) fn start() -> Registry {
        Registry::start_with("")
    }

    /// A registry that wants `user`'s `password` for every request (htpasswd, bcrypt).
    pub(super) fn start_with_login(user: &str, password: &str) -> Registry {
        // bcrypt from libcrypt through Python (the tests' Python SDK needs python3 anyway), at
        // the lowest cost: the registry checks it on every request.
        let hash = Command::new("python3")
            .args([
                "-W",
                "ignore",
                "-c",
                "import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))",
                password,
            ])
            .output()
            .unwrap();
        assert!(hash.status.success(), "{}", String::from_utf8_lossy(&hash.stderr));
        let dir = temp_dir();
        let htpasswd = dir.path().join("htpasswd");
        std::fs::write(&htpasswd, format!("{user}:{}", String::from_utf8(hash.stdout).unwrap())).unwrap();
        let mut registry = Registry::start_with(&format!(
            "auth: {{htpasswd: {{realm: mcpbox-test, path: {}}}}}\n",
            htpasswd.display()
        ));
        registry._login = Some(dir);
        registry
    }

    fn start_with(extra_config: &str) -> Registry {
        let setup = Command::new("bash").arg(repo_root().join("scripts/setup-registry.sh")).output().unwrap();
        assert!(setup.status.success(), "setting up the registry failed: {}", String::from_utf8_lossy(&setup.stderr));
        let binary = String::from_utf8(setup.stdout).unwrap().trim().to_owned();
        let dir = temp_dir();
        let port = free_port();
        let host = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: warn}}\nstorage: {{filesystem: {{rootdirectory: {}}}, delete: {{enabled: true}}}}\nhttp: {{addr: {host}}}\n{extra_config}",
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
        let registry = Registry { child, host, dir, _login: None };
        let deadline = Instant::now() + WAIT;
        while std::net::TcpStream::connect(&registry.host).is_err() {
            assert!(Instant::now() < deadline, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    pub(super) fn reference(&self, repository: &str) -> String {
        format!("oci://{}/{repository}", self.host)
    }

    /// The files of blob `digest` in the registry's storage.
    pub(super) fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir.path().join(format!("data/docker/registry/v2/blobs/sha256/{}/{hex}/data", &hex[..2]))
    }

    /// Copies the manifest tagged `from` to the tag `to` in `repository`, as a registry could.
    pub(super) fn copy_manifest(&self, repository: &str, from: &str, to: &str) {
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

    /// Copies the manifest tagged `tag` in `repository`, with its blobs, to `mirror`, byte for
    /// byte (as `crane copy` or `oras cp` would).
    pub(super) fn copy_to(&self, mirror: &Registry, repository: &str, tag: &str) {
        let kind = "application/vnd.oci.image.manifest.v1+json";
        tokio::runtime::Runtime::new().unwrap().block_on(async {
            let client = http_client();
            let from = format!("http://{}/v2/{repository}", self.host);
            let to = format!("http://{}/v2/{repository}", mirror.host);
            let manifest = client.get(format!("{from}/manifests/{tag}")).header("accept", kind).send().await.unwrap();
            assert!(manifest.status().is_success(), "{}", manifest.status());
            let manifest = manifest.bytes().await.unwrap();
            let parsed: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
            let layers = parsed["layers"].as_array().unwrap().iter();
            for digest in layers.chain([&parsed["config"]]).map(|blob| blob["digest"].as_str().unwrap()) {
                let blob = client.get(format!("{from}/blobs/{digest}")).send().await.unwrap().bytes().await.unwrap();
                // A monolithic upload: open a session, then PUT the whole blob to it.
                let session = client.post(format!("{to}/blobs/uploads/")).send().await.unwrap();
                assert_eq!(session.status().as_u16(), 202);
                let location = session.headers()["location"].to_str().unwrap().to_owned();
                let location =
                    if location.starts_with("http") { location } else { format!("http://{}{location}", mirror.host) };
                let separator = if location.contains('?') { '&' } else { '?' };
                let upload = client
                    .put(format!("{location}{separator}digest={digest}"))
                    .header("content-type", "application/octet-stream")
                    .body(blob)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(upload.status().as_u16(), 201);
            }
            let put = client
                .put(format!("{to}/manifests/{tag}"))
                .header("content-type", kind)
                .body(manifest)
                .send()
                .await
                .unwrap();
            assert!(put.status().is_success(), "{}", put.status());
        });
    }

    pub(super) fn stop(&mut self) {
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
pub(super) struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    pub(super) fn new() -> Workspace {
        Workspace { dir: temp_dir() }
    }

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `mcpbox ARGS` with this workspace's store and no Docker credentials of the machine.
    pub(super) fn run(&self, args: &[&str]) -> Output {
        guests();
        owned(&mut Command::new(env!("CARGO_BIN_EXE_mcpbox")))
            .args(args)
            .current_dir(self.dir.path())
            .env("MCPBOX_CACHE_DIR", self.path("cache"))
            .env("DOCKER_CONFIG", self.path("docker"))
            .output()
            .unwrap()
    }

    pub(super) fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(output.status.success(), "mcpbox {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// Publishes the component `file` at `reference`; returns its manifest digest.
    pub(super) fn publish(&self, file: PathBuf, reference: &str) -> String {
        let printed = self.ok(&["publish", file.to_str().unwrap(), reference]);
        printed.lines().find_map(|line| line.strip_prefix("digest ")).expect("a digest line").to_owned()
    }

    pub(super) fn keygen(&self, name: &str) -> PathBuf {
        self.ok(&["keygen", self.path(name).to_str().unwrap()]);
        self.path(&format!("{name}.pub"))
    }

    pub(super) fn sign(&self, repository: &str, digest: &str, key: &str) {
        self.ok(&[
            "sign",
            &format!("{repository}@{digest}"),
            "--key",
            self.path(&format!("{key}.key")).to_str().unwrap(),
        ]);
    }

    /// Writes `mcpbox.toml` here.
    pub(super) fn config(&self, text: &str) -> PathBuf {
        let path = self.path("mcpbox.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `mcpbox serve --no-watch --config mcpbox.toml EXTRA` from this workspace.
    pub(super) fn serve(&self, extra: &[&str]) -> Server {
        let mut args = vec!["--no-watch"];
        args.extend_from_slice(extra);
        self.serve_watching(&args)
    }

    /// `mcpbox serve --config mcpbox.toml EXTRA` from this workspace, following its lock.
    pub(super) fn serve_watching(&self, extra: &[&str]) -> Server {
        let config = self.path("mcpbox.toml");
        let mut args = vec!["--config", config.to_str().unwrap()];
        args.extend_from_slice(extra);
        let cache = self.path("cache");
        let docker = self.path("docker");
        Server::start_with_env(
            &args,
            &[("MCPBOX_CACHE_DIR", cache.to_str().unwrap()), ("DOCKER_CONFIG", docker.to_str().unwrap())],
        )
    }

    pub(super) fn lock(&self) -> String {
        std::fs::read_to_string(self.path("mcpbox.lock")).unwrap_or_default()
    }
}

/// The tag cosign keeps the signatures of `digest` under.
pub(super) fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

pub(super) fn call_echo(server: &mut Server, text: &str) -> serde_json::Value {
    server.result("tools/call", modern(json!({ "name": "echo.echo", "arguments": { "text": text } })))
}

pub(super) fn tool_names(server: &mut Server) -> Vec<String> {
    let listed = server.result("tools/list", modern(json!({})));
    listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

/// Waits for the server to have resolved and loaded its plugins, then returns its log.
pub(super) fn loaded(server: &mut Server) -> String {
    assert!(server.wait_for_log("plugins loaded", WAIT), "{}", server.stderr());
    server.stderr()
}

/// The `echo` fixture published at `tools/echo:TAG` in a registry of its own, signed by a key
/// pair `signer` made in the workspace (none: unsigned).
pub(super) struct Published {
    pub(super) registry: Registry,
    pub(super) work: Workspace,
    /// `oci://HOST/tools/echo`.
    pub(super) repository: String,
    /// `oci://HOST/tools/echo:TAG`.
    pub(super) reference: String,
    pub(super) digest: String,
}

pub(super) fn echo_published(tag: &str, signer: Option<&str>) -> Published {
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
