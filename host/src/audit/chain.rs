//! The hash chain: every line carries `prev`, the SHA-256 (hex) of the exact bytes of the line
//! before it, and `seq`, its number in the whole chain. Altering a line breaks the next line's
//! `prev`; removing or moving one breaks `seq` where it was. A checkpoint line signs
//! `"mcpbox audit checkpoint\n{seq}\n{prev}"` with the operator's key: its `prev` commits to
//! every line before it, so a chain rewritten consistently by someone without the key fails at
//! the first checkpoint after the rewrite. Only lines after the last checkpoint can be cut or
//! rewritten undetected: that window is what `checkpoint_lines` and `checkpoint_seconds` bound.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::registry::cosign::PublicKey;

/// The `prev` of the very first line.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The chain hash of a line (its bytes without the newline).
pub(crate) fn hash(line: &[u8]) -> String {
    crate::hex::hex(&Sha256::digest(line))
}

/// What a checkpoint at `seq` whose `prev` is `prev` signs.
pub(crate) fn checkpoint_message(seq: u64, prev: &str) -> String {
    format!("mcpbox audit checkpoint\n{seq}\n{prev}")
}

/// The files of the chain at `path`, oldest first: `PATH.1`, `PATH.2`, ..., then `PATH`.
pub(crate) fn files(path: &Path) -> Vec<PathBuf> {
    let mut numbered = Vec::new();
    for n in 1.. {
        let rotated = rotated(path, n);
        if !rotated.exists() {
            break;
        }
        numbered.push(rotated);
    }
    if path.exists() {
        numbered.push(path.to_owned());
    }
    numbered
}

/// The name of the `n`th file rotated away from `path`.
pub(crate) fn rotated(path: &Path, n: u64) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// The tail read to find the chain's last line on start.
const TAIL: u64 = 1 << 20;

/// The `seq` and `prev` of the next line: after the last line of `path`, or of the last file
/// rotated from it; the genesis for a new chain.
pub(crate) fn last_link(path: &Path) -> Result<(u64, String)> {
    let Some(last) = files(path).into_iter().rev().find(|f| f.metadata().is_ok_and(|m| m.len() > 0)) else {
        return Ok((0, GENESIS.to_owned()));
    };
    let mut file = File::open(&last).with_context(|| format!("cannot read the audit {}", last.display()))?;
    let len = file.metadata()?.len();
    if !file.metadata()?.is_file() {
        return Ok((0, GENESIS.to_owned()));
    }
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    let line = tail.strip_suffix(b"\n").unwrap_or(&tail);
    let line = line.rsplit(|b| *b == b'\n').next().unwrap_or_default();
    let seq = serde_json::from_slice::<Value>(line)
        .ok()
        .and_then(|v| v.get("seq").and_then(Value::as_u64))
        .ok_or_else(|| anyhow!("the last line of the audit {} is not an audit line: run `mcpbox audit verify` on it, then move it aside", last.display()))?;
    Ok((seq + 1, hash(line)))
}

/// A chain that verified: what it holds and what no signature covers.
#[derive(Debug)]
pub(crate) struct Verified {
    pub(crate) lines: u64,
    pub(crate) files: usize,
    pub(crate) checkpoints: u64,
    /// The last signed checkpoint: file and line.
    pub(crate) last_checkpoint: Option<(PathBuf, u64)>,
    /// Lines after it (all lines when there is none).
    pub(crate) uncovered: u64,
    /// The first line's `prev` is not the genesis: files before it were removed (rotated away
    /// and deleted), which the chain cannot tell from a cut.
    pub(crate) starts_mid_chain: bool,
}

/// Reads the chain at `path` (and the files rotated from it) and checks every link and, with
/// `key`, every checkpoint's signature; the error names the file and line of the first break.
pub(crate) fn verify(path: &Path, key: Option<&PublicKey>) -> Result<Verified> {
    let files = files(path);
    if files.is_empty() {
        return Err(anyhow!("{} does not exist", path.display()));
    }
    let mut verified = Verified {
        lines: 0,
        files: files.len(),
        checkpoints: 0,
        last_checkpoint: None,
        uncovered: 0,
        starts_mid_chain: false,
    };
    let mut previous: Option<(String, u64)> = None;
    for file in &files {
        let text = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        let mut lines = text.split(|b| *b == b'\n').peekable();
        let mut number = 0u64;
        while let Some(line) = lines.next() {
            if line.is_empty() && lines.peek().is_none() {
                break;
            }
            number += 1;
            let at = || format!("{} line {number}", file.display());
            if lines.peek().is_none() {
                return Err(anyhow!(
                    "{}: the line is not finished (no newline): the file was cut or is being written",
                    at()
                ));
            }
            let value: serde_json::Value =
                serde_json::from_slice(line).map_err(|e| anyhow!("{}: not a JSON line ({e}): altered", at()))?;
            let seq = value
                .get("seq")
                .and_then(serde_json::Value::as_u64)
                .ok_or_else(|| anyhow!("{}: no `seq`: altered", at()))?;
            let prev = value
                .get("prev")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| anyhow!("{}: no `prev`: altered", at()))?;
            match &previous {
                None => verified.starts_mid_chain = prev != GENESIS,
                Some((hash_before, seq_before)) => {
                    if seq != seq_before + 1 {
                        return Err(anyhow!(
                            "{}: seq {seq} follows seq {seq_before}: a line was removed or moved here",
                            at()
                        ));
                    }
                    if prev != hash_before {
                        return Err(match number {
                            1 => anyhow!(
                                "{}: its `prev` does not match the last line of the file before, which was altered",
                                at()
                            ),
                            _ => anyhow!(
                                "{} line {}: altered (the next line's `prev` does not match it)",
                                file.display(),
                                number - 1
                            ),
                        });
                    }
                }
            }
            if value.get("kind").and_then(serde_json::Value::as_str) == Some("checkpoint") {
                if let Some(key) = key {
                    let signature = value.get("signature").and_then(serde_json::Value::as_str).unwrap_or_default();
                    if !key.verifies(checkpoint_message(seq, prev).as_bytes(), signature) {
                        return Err(anyhow!(
                            "{}: the checkpoint's signature does not cover the lines before it: a line before it was altered, removed or moved, and the chain rewritten",
                            at()
                        ));
                    }
                }
                verified.checkpoints += 1;
                verified.last_checkpoint = Some((file.clone(), number));
                verified.uncovered = 0;
            } else {
                verified.uncovered += 1;
            }
            verified.lines += 1;
            previous = Some((hash(line), seq));
        }
    }
    Ok(verified)
}
