//! Skills (the `io.modelcontextprotocol/skills` extension) from an operator's directory,
//! through the real host over stdio: the entries and digests the host computes, the files and
//! directories as resources, what breaks the rules left out by name, and a change on disk
//! followed (digests computed again, clients told). The conformance suite's three skills
//! scenarios run against the same fixture in `http.rs`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::{ConfigFile, fixture, repo_root, temp_dir};

/// Copies the fixture skills into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// The resource entry of `uri` in a skill entry.
fn listed<'a>(skill: &'a Value, uri: &str) -> &'a Value {
    skill["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == uri)
        .unwrap_or_else(|| panic!("{uri} in {skill}"))
}

#[test]
fn skills_are_served_with_the_hosts_digests_and_follow_their_files() {
    let dir = temp_dir();
    let skills = dir.path().join("skills");
    copy_tree(&repo_root().join("tests/fixtures/skills"), &skills);
    // Two that break the rules: a name outside the naming rules, a name that is not its
    // directory's.
    std::fs::create_dir_all(skills.join("Bad_Name")).unwrap();
    std::fs::write(skills.join("Bad_Name/SKILL.md"), "---\nname: Bad_Name\ndescription: x\n---\n").unwrap();
    // A link out of the skill (to a file beside the skills): never part of it.
    std::fs::write(dir.path().join("secret.txt"), "not for clients\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), skills.join("pdf-processing/secret.txt")).unwrap();
    std::fs::create_dir_all(skills.join("mismatch")).unwrap();
    std::fs::write(skills.join("mismatch/SKILL.md"), "---\nname: other\ndescription: x\n---\n").unwrap();
    let config = ConfigFile::new(&format!(
        "plugins = [{:?}]\ninstructions = \"Use the team's skills before writing code.\"\n\n\
         [[skills]]\npath = {skills:?}\nprefix = \"team\"\n",
        fixture("hello")
    ));
    let mut server = config.serve();
    let init = server.initialize("2025-11-25", json!({}));
    assert_eq!(init["capabilities"]["extensions"]["io.modelcontextprotocol/skills"], json!({ "directoryRead": true }));
    assert!(init["capabilities"]["resources"].is_object(), "{init}");
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.starts_with("Use the team's skills before writing code."), "{instructions}");
    assert!(
        instructions.contains("skill://team/pdf-processing/SKILL.md: Extract, fill, and assemble PDF documents"),
        "{instructions}"
    );

    let list = server.result("skills/list", json!({}));
    let uris: Vec<&str> = list["skills"].as_array().unwrap().iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["skill://team/git-workflow/SKILL.md", "skill://team/pdf-processing/SKILL.md"]);
    let stderr = server.stderr();
    assert!(stderr.contains("skill://team/Bad_Name/SKILL.md") && stderr.contains("naming rules"), "{stderr}");
    assert!(stderr.contains("skill://team/mismatch/SKILL.md") && stderr.contains("frontmatter name"), "{stderr}");

    // The entry: the frontmatter as written, every file with the digest of its bytes.
    let pdf = &list["skills"][1];
    assert_eq!(
        pdf["frontmatter"],
        json!({ "name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
            "license": "Apache-2.0", "metadata": { "version": 2, "owner": "docs-team" } })
    );
    let files: Vec<&str> = pdf["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(files.len(), 5, "{files:?}");
    let forms = skills.join("pdf-processing/references/FORMS.md");
    let forms_uri = "skill://team/pdf-processing/references/FORMS.md";
    let bytes = std::fs::read(&forms).unwrap();
    assert_eq!(listed(pdf, forms_uri)["digest"], digest(&bytes));
    assert_eq!(listed(pdf, forms_uri)["size"], bytes.len());
    assert_eq!(server.result("skills/get", json!({ "uri": pdf["uri"] }))["skill"], *pdf);
    let unknown = server.call("skills/get", json!({ "uri": "skill://team/nothing/SKILL.md" }));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    // Files are resources: listed, read as they are, nothing outside the skills.
    let resources = server.result("resources/list", json!({}));
    let manifest = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "skill://team/pdf-processing/SKILL.md")
        .unwrap_or_else(|| panic!("{resources}"));
    assert_eq!(manifest["name"], "pdf-processing");
    assert_eq!(manifest["description"], "Extract, fill, and assemble PDF documents");
    assert_eq!(manifest["mimeType"], "text/markdown");
    let read = server.result("resources/read", json!({ "uri": forms_uri }));
    assert_eq!(read["contents"][0]["text"], String::from_utf8(bytes).unwrap());
    assert_eq!(read["contents"][0]["mimeType"], "text/markdown");
    for outside in [
        "skill://team/pdf-processing/secret.txt",
        "skill://team/Bad_Name/SKILL.md",
        "skill://team/pdf-processing/../../secret",
        "skill://team/README.md",
    ] {
        let refused = server.call("resources/read", json!({ "uri": outside }));
        assert!(refused.get("error").is_some(), "{outside}: {refused}");
    }

    // Directories: direct children, subdirectories marked.
    let templates =
        server.result("resources/directory/read", json!({ "uri": "skill://team/pdf-processing/templates" }));
    let children: Vec<(&str, &str)> = templates["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        children,
        [("invoice.md", "text/markdown"), ("purchase-order.md", "text/markdown"), ("regional", "inode/directory")]
    );
    let not_a_directory = server.call("resources/directory/read", json!({ "uri": forms_uri }));
    assert_eq!(not_a_directory["error"]["code"], -32602, "{not_a_directory}");

    // A change on disk: the entry follows with the new digest, a new skill appears, and the
    // client is told the resources changed.
    std::fs::write(&forms, "# Forms\n\nEvery field, now.\n").unwrap();
    std::fs::create_dir_all(skills.join("release-notes")).unwrap();
    std::fs::write(skills.join("release-notes/SKILL.md"), "---\nname: release-notes\ndescription: Notes\n---\n")
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let skill = server.result("skills/get", json!({ "uri": pdf["uri"] }))["skill"].clone();
        let listed_now = server.result("skills/list", json!({}))["skills"].as_array().unwrap().len();
        if listed(&skill, forms_uri)["digest"] == digest(b"# Forms\n\nEvery field, now.\n") && listed_now == 3 {
            break;
        }
        assert!(Instant::now() < deadline, "the skills did not follow their files: {skill}");
        std::thread::sleep(Duration::from_millis(100));
    }
    server.read_until(|m| m["method"] == "notifications/resources/list_changed");
}
