//! `--audit PATH` and `[audit]` (docs/audit.md): the audit's file, what a line holds of the
//! arguments, the key that signs checkpoints and how often, rotation, `fsync`, and what calls do
//! when the audit cannot be written.

use std::time::Duration;

use anyhow::{Context, anyhow};

use super::args::ServeArgs;
use super::file::ConfigFile;
use super::problems::{Problems, spanned_limit};
use crate::audit::{Arguments, AuditSettings, Fsync, OnFailure};
use crate::registry::cosign::SigningKey;
use crate::runtime::grants::limits::{self, LimitError};

/// The audit as configured, `None` when neither `--audit` nor `[audit] path` is set.
pub(super) fn audit_settings(file: &ConfigFile, args: &ServeArgs, problems: &mut Problems) -> Option<AuditSettings> {
    let section = &file.config.audit;
    let path = args.audit.clone().or_else(|| section.path.as_ref().map(|p| file.resolve(p)));
    let Some(path) = path else {
        if section.key.is_some() || section.arguments.is_some() {
            problems.take::<()>(Err(anyhow!("{}: [audit] needs `path` (or --audit PATH)", file.path.display())));
        }
        return None;
    };
    let mut settings = AuditSettings::at(path);
    let key = |name: &str| format!("[audit] {name}");
    if let Some(arguments) = &section.arguments {
        match arguments.get_ref().as_str() {
            "digest" => settings.arguments = Arguments::Digest,
            "full" => settings.arguments = Arguments::Full,
            other => {
                problems.take::<()>(Err(anyhow!(
                    "{}: [audit] arguments must be \"digest\" or \"full\", not {other:?}",
                    file.at(arguments.span())
                )));
            }
        }
    }
    if let Some(on_failure) = &section.on_failure {
        match on_failure.get_ref().as_str() {
            "closed" => settings.on_failure = OnFailure::Closed,
            "open" => settings.on_failure = OnFailure::Open,
            other => {
                problems.take::<()>(Err(anyhow!(
                    "{}: [audit] on_failure must be \"closed\" or \"open\", not {other:?}",
                    file.at(on_failure.span())
                )));
            }
        }
    }
    if let Some(fsync) = &section.fsync {
        match fsync.get_ref().as_str() {
            "line" => settings.fsync = Fsync::Line,
            "checkpoint" => settings.fsync = Fsync::Checkpoint,
            other => {
                problems.take::<()>(Err(anyhow!(
                    "{}: [audit] fsync must be \"line\" or \"checkpoint\", not {other:?}",
                    file.at(fsync.span())
                )));
            }
        }
    }
    if let Some(path) = &section.key {
        let path = file.resolve(path);
        let read = SigningKey::read(&path).with_context(|| format!("{}: in [audit] key", file.path.display()));
        settings.key = problems.take(read).map(std::sync::Arc::new);
    }
    let count = |n: u64| if n == 0 { Err(LimitError::NotPositive("0".into())) } else { Ok(n) };
    if let Some(lines) =
        problems.take(spanned_limit(file, &section.checkpoint_lines, &key("checkpoint_lines"), count)).flatten()
    {
        settings.checkpoint_lines = lines;
    }
    let seconds = |n: u64| count(n).map(Duration::from_secs);
    if let Some(every) =
        problems.take(spanned_limit(file, &section.checkpoint_seconds, &key("checkpoint_seconds"), seconds)).flatten()
    {
        settings.checkpoint_every = every;
    }
    let rotate = |mib: u64| limits::tree_bytes_from_mib(mib);
    if let Some(bytes) = problems.take(spanned_limit(file, &section.rotate_mib, &key("rotate_mib"), rotate)).flatten() {
        settings.rotate_bytes = bytes;
    }
    settings.otlp_endpoint = section.otlp_endpoint.clone();
    Some(settings)
}
