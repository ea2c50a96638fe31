//! Plugins from a real OCI registry (Debian's docker-registry 2.8, `scripts/setup-registry.sh`)
//! started on loopback for each test: publish, sign, pull, pin, trust, serve and call.

use super::registry_support::{
    Published, Registry, Workspace, call_echo, echo_published, loaded, signature_tag, tool_names,
};
use crate::common::*;

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
    // Its definitions pinned too, as `--locked` requires (docs/approvals.md).
    work.ok(&["accept", "--config", "mcpbox.toml"]);

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
