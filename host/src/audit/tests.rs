//! The audit's writer and reader together, on real files: rotation keeps the chain, a restart
//! goes on with it, checkpoints verify with the public key and fail with another, and a file
//! left with half a line refuses to be written on until someone looks at it.

use serde_json::{Map, Value, json};

use super::*;
use crate::registry::cosign::{PublicKey, SigningKey};

fn record(n: usize) -> Map<String, Value> {
    json!({"kind": "call", "target": format!("tool{n}"), "padding": "x".repeat(100)}).as_object().cloned().unwrap()
}

fn keys(dir: &std::path::Path) -> (SigningKey, PublicKey) {
    let (private, public) = SigningKey::generate().unwrap();
    std::fs::write(dir.join("k.key"), private).unwrap();
    std::fs::write(dir.join("k.pub"), public).unwrap();
    (SigningKey::read(&dir.join("k.key")).unwrap(), PublicKey::read(&dir.join("k.pub")).unwrap())
}

#[tokio::test]
async fn rotated_files_and_restarts_keep_one_chain_that_only_the_right_key_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keys(dir.path());
    let path = dir.path().join("audit.jsonl");
    let mut settings = AuditSettings::at(path.clone());
    settings.key = Some(std::sync::Arc::new(key));
    settings.checkpoint_lines = 4;
    settings.rotate_bytes = 1500;
    for run in 0..2 {
        let sink = AuditSink::open(settings.clone(), "r1").unwrap();
        for n in 0..12 {
            sink.write(record(run * 100 + n)).await.unwrap();
        }
        sink.close().await;
    }
    let files = chain::files(&path);
    assert!(files.len() >= 3, "rotated: {files:?}");
    let verified = verify(&path, Some(&public)).unwrap();
    assert_eq!(verified.files, files.len());
    assert_eq!(verified.uncovered, 0, "every file ends signed, and so does a clean stop");
    assert!(!verified.starts_mid_chain);
    // 2 starts + 24 calls + checkpoints.
    assert!(verified.lines >= 26 + verified.checkpoints);
    let (_, other) = keys(tempfile::tempdir().unwrap().path());
    let wrong = verify(&path, Some(&other)).unwrap_err().to_string();
    assert!(wrong.contains("signature"), "{wrong}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[tokio::test]
async fn half_a_line_is_found_and_the_writer_will_not_chain_onto_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let sink = AuditSink::open(AuditSettings::at(path.clone()), "r1").unwrap();
    sink.write(record(1)).await.unwrap();
    sink.close().await;
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut file, b"{\"seq\":2,\"ki").unwrap();
    let found = verify(&path, None).unwrap_err().to_string();
    assert!(found.contains("line 3") && found.contains("not finished"), "{found}");
    let refused = AuditSink::open(AuditSettings::at(path.clone()), "r1").err().unwrap().to_string();
    assert!(refused.contains("audit verify"), "{refused}");
}
