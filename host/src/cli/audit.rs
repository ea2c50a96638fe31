//! `mcpbox audit verify PATH [--key PUB]`: the audit's chain read back (`audit/chain.rs`),
//! each finding with its file and line; exits non-zero on the first break.

use std::path::Path;

use anyhow::Result;

use crate::registry::cosign::PublicKey;

pub(crate) fn verify(path: &Path, key: Option<&Path>) -> Result<()> {
    let key = key.map(PublicKey::read).transpose()?;
    let verified = crate::audit::verify(path, key.as_ref())?;
    println!(
        "{}: {} lines in {} file{}, the chain is whole",
        path.display(),
        verified.lines,
        verified.files,
        if verified.files == 1 { "" } else { "s" }
    );
    if verified.starts_mid_chain {
        println!(
            "the first line follows lines that are no longer here (rotated files removed): the chain is checked from it on"
        );
    }
    match (&key, &verified.last_checkpoint) {
        (None, _) => println!(
            "no key given: {} checkpoints not checked; anyone who can write the file could rewrite the whole chain (give --key)",
            verified.checkpoints
        ),
        (Some(_), None) => println!("no signed checkpoint: no line is covered by a signature"),
        (Some(_), Some((file, line))) => println!(
            "{} checkpoints signed, the last at {} line {line}; lines after it, not covered by a signature: {}",
            verified.checkpoints,
            file.display(),
            verified.uncovered
        ),
    }
    Ok(())
}
