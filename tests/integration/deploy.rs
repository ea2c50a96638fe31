//! What operators deploy (docs/deploy.md): the Kubernetes manifests, validated offline against
//! the Kubernetes schemas (kubernetes-validate, strict) and checked for what a team relies on,
//! their mcpbox.toml and arguments accepted by `mcpbox check`; and the container image, built
//! with buildah and mmdebstrap (`scripts/build-image.sh`) and run from its own root filesystem,
//! read-only, as its non-root user.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::operations_support::*;
use crate::common::*;

/// The manifests the kustomization lists (and the Secret's example), as JSON documents.
fn manifests() -> (Vec<String>, Vec<Value>) {
    let dir = repo_root().join("deploy/kubernetes");
    let load = "import json, sys, yaml; print(json.dumps([d for f in sys.argv[1:] for d in yaml.safe_load_all(open(f)) if d]))";
    let read = |files: &[String]| -> Vec<Value> {
        let output = Command::new(tool("PYTHON")).arg("-c").arg(load).args(files).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let kustomization = read(&[dir.join("kustomization.yaml").display().to_string()]).remove(0);
    let mut files: Vec<String> = kustomization["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| dir.join(file.as_str().unwrap()).display().to_string())
        .collect();
    files.push(dir.join("secret.example.yaml").display().to_string());
    let documents = read(&files);
    (files, documents)
}

fn find<'a>(documents: &'a [Value], kind: &str, name: &str) -> &'a Value {
    documents
        .iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in deploy/kubernetes"))
}

#[test]
fn the_kubernetes_manifests_validate_and_their_config_and_arguments_pass_mcpbox_check() {
    let (files, documents) = manifests();
    // The oldest Kubernetes still supported upstream and the newest the schemas know.
    for version in ["1.31.0", "1.37.0"] {
        let output = Command::new(tool("PYTHON"))
            .args(["-m", "kubernetes_validate", "--strict", "-k", version])
            .args(&files)
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "kubernetes-validate {version}:\n{said}");
        assert_eq!(said.matches(" passed for resource ").count(), documents.len(), "{said}");
    }

    let deployment = find(&documents, "Deployment", "mcpbox");
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(container["securityContext"]["allowPrivilegeEscalation"], false);
    assert!(
        container["resources"]["requests"]["memory"].is_string()
            && container["resources"]["limits"]["memory"].is_string()
    );
    assert_eq!(pod["automountServiceAccountToken"], false);
    let names: Vec<&str> = container["ports"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["http", "metrics"]);
    // Every Secret key the pod reads exists in the Secret's shape.
    let secret = find(&documents, "Secret", "mcpbox-secrets");
    for env in container["env"].as_array().unwrap() {
        if let Some(key) = env["valueFrom"]["secretKeyRef"]["key"].as_str() {
            assert!(secret["stringData"][key].is_string(), "the Secret has no {key}");
        }
    }
    // The drain and the grace fit in the pod's termination grace period.
    let config_map = find(&documents, "ConfigMap", "mcpbox-config");
    let toml = config_map["data"]["mcpbox.toml"].as_str().unwrap();
    let seconds = |key: &str| -> u64 {
        let line = toml.lines().find(|l| l.trim_start().starts_with(key)).unwrap();
        line.split('=').nth(1).unwrap().trim().parse().unwrap()
    };
    let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
    assert!(seconds("drain_delay_seconds") + seconds("shutdown_grace_seconds") < grace, "{toml}");
    let hpa = find(&documents, "HorizontalPodAutoscaler", "mcpbox");
    assert_eq!(hpa["spec"]["scaleTargetRef"]["name"], "mcpbox");
    let pdb = find(&documents, "PodDisruptionBudget", "mcpbox");
    assert_eq!(pdb["spec"]["selector"]["matchLabels"], deployment["spec"]["selector"]["matchLabels"]);
    let service = find(&documents, "Service", "mcpbox");
    assert_eq!(service["spec"]["selector"], deployment["spec"]["selector"]["matchLabels"]);

    // The pod's arguments and config, with its mounts pointing into a directory here, pass
    // `mcpbox check` (serve's arguments are check's).
    let dir = temp_dir();
    let at = |mount: &str| dir.path().join(mount.trim_start_matches('/'));
    std::fs::create_dir_all(at("/var/lib/mcpbox/plugins")).unwrap();
    std::fs::copy(fixture("echo"), at("/var/lib/mcpbox/plugins/echo.wasm")).unwrap();
    std::fs::create_dir_all(at("/etc/mcpbox/secrets")).unwrap();
    let localized = toml.replace("/var/lib/mcpbox", &at("/var/lib/mcpbox").display().to_string());
    std::fs::write(at("/etc/mcpbox/mcpbox.toml"), localized).unwrap();
    std::fs::write(at("/etc/mcpbox/secrets/state.keys"), "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n").unwrap();
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|a| a.as_str().unwrap().replace("/etc/mcpbox", &at("/etc/mcpbox").display().to_string()))
        .collect();
    assert_eq!(container["args"][0], "serve");
    let checked = mcpbox("check").args(&args).env("MCPBOX_STORE", "redis://127.0.0.1:6379").output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&checked.stdout), String::from_utf8_lossy(&checked.stderr));
    assert!(checked.status.success(), "mcpbox check {args:?}:\n{said}");
    assert!(said.contains("echo"), "{said}");
}

/// Runs `mcpbox ARGS` from the image's root filesystem `rootfs`, mounted read-only, as the
/// image's user, with `plugins` at /var/lib/mcpbox/plugins and tmpfs where the image declares
/// volumes, feeding it `input`; returns what it wrote to stdout.
fn run_in_image(rootfs: &Path, plugins: &Path, user: &str, input: &str) -> String {
    let script = "r=$0; plugins=$1; user=$2; shift 2; \
        mount --bind \"$r\" \"$r\" && mount --bind \"$plugins\" \"$r/var/lib/mcpbox/plugins\" && \
        mount -t proc proc \"$r/proc\" && mount --rbind /dev \"$r/dev\" && \
        mount -t tmpfs -o size=64m tmpfs \"$r/tmp\" && \
        mount -t tmpfs -o size=256m,uid=65532 tmpfs \"$r/var/cache/mcpbox\" && \
        mount -o remount,bind,ro \"$r\" && exec chroot --userspec=\"$user\" \"$r\" \"$@\"";
    let mut child = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .arg(rootfs)
        .arg(plugins)
        .arg(user)
        .args(["/usr/local/bin/mcpbox", "serve", "/var/lib/mcpbox/plugins", "--no-watch"])
        .env("MCPBOX_CACHE_DIR", "/var/cache/mcpbox")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "mcpbox in the image failed:\n{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_image_builds_and_serves_from_a_read_only_root_as_its_non_root_user() {
    let dir = temp_dir();
    let archive = dir.path().join("mcpbox-image.tar");
    let built = Command::new(repo_root().join("scripts/build-image.sh"))
        .arg(&archive)
        .env("MCPBOX", env!("CARGO_BIN_EXE_mcpbox"))
        .output()
        .unwrap();
    assert!(built.status.success(), "build-image.sh failed:\n{}", String::from_utf8_lossy(&built.stderr));

    // Opened by buildah as any OCI image is: its config says who runs what.
    let buildah = tool("BUILDAH");
    let tools = buildah.ancestors().nth(3).unwrap().to_owned();
    let libraries = format!("{0}/usr/lib/x86_64-linux-gnu:{0}/lib/x86_64-linux-gnu", tools.display());
    let storage = dir.path().join("storage");
    let buildah = |args: &[&str]| -> String {
        let output = Command::new(&buildah)
            .args([
                "--root",
                &storage.display().to_string(),
                "--runroot",
                &dir.path().join("run").display().to_string(),
            ])
            .args(["--storage-driver", "vfs"])
            .args(args)
            .env("LD_LIBRARY_PATH", &libraries)
            .output()
            .unwrap();
        assert!(output.status.success(), "buildah {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    let policy = tools.join("etc/containers/policy.json").display().to_string();
    let source = format!("oci-archive:{}", archive.display());
    let container = buildah(&["from", "--quiet", "--signature-policy", &policy, &source]);
    let inspected: Value = serde_json::from_str(&buildah(&["inspect", &container])).unwrap();
    let config = &inspected["OCIv1"]["config"];
    assert_eq!(config["User"], "65532:65532", "{config}");
    assert_eq!(config["Entrypoint"], json!(["/usr/local/bin/mcpbox"]), "{config}");
    assert!(
        config["ExposedPorts"]["8080/tcp"].is_object() && config["ExposedPorts"]["9090/tcp"].is_object(),
        "{config}"
    );
    let rootfs = std::path::PathBuf::from(buildah(&["mount", &container]));
    // Nothing but mcpbox and the C library: no shell to get into.
    assert!(!rootfs.join("bin/sh").exists() && !rootfs.join("usr/bin/apt").exists());

    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::fs::copy(fixture("echo"), plugins.join("echo.wasm")).unwrap();
    let input = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": { "name": "image-test", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "echo.echo", "arguments": { "text": "from the image" } } }),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let answered = run_in_image(&rootfs, &plugins, "65532:65532", &input);
    let call: Value = serde_json::from_str(answered.lines().last().unwrap()).unwrap();
    assert_eq!(call["result"]["content"][0]["text"], "from the image", "{answered}");
}
