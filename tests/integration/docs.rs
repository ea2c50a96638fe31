//! Docs as tests: every fenced block in `README.md`, `SECURITY.md`, `docs/*.md` and
//! `docs/plugins/*.md` is run as
//! written, compared with the file it shows, or marked not runnable with the reason, and every
//! message `docs/troubleshooting.md` quotes is produced and compared. A stale doc fails here.
//!
//! A block's marker is an HTML comment on the line before its fence (`docs/README.md` lists the
//! modes for contributors): `<!-- doc-test: run -->`, `run, fails`, `output`, `file PATH`,
//! `same-as PATH`, `background`, `python`, `json`, `skip REASON`. The language
//! guides are run by `languages.rs`, which then calls the plugins they build.

mod blocks;
mod messages;
pub mod runner;

use blocks::{Mode, blocks};
pub use runner::run_document;

use crate::common::repo_root;

/// The guides `languages.rs` runs (each builds a plugin it then calls).
pub const GUIDES: [&str; 3] = ["docs/rust.md", "docs/python.md", "docs/javascript.md"];

/// Every Markdown page of the docs.
fn documents() -> Vec<String> {
    let mut files = vec!["README.md".to_owned(), "SECURITY.md".to_owned()];
    let pages = |dir: &str| -> Vec<String> {
        std::fs::read_dir(repo_root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .map(|p| format!("{dir}/{}", p.file_name().unwrap().to_string_lossy()))
            .collect()
    };
    // The bundled plugins' pages too.
    let mut docs: Vec<String> = pages("docs").into_iter().chain(pages("docs/plugins")).collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn every_block_of_the_docs_is_run_or_marked_not_runnable() {
    let (mut run, mut skipped, mut problems) = (0, Vec::new(), Vec::new());
    for document in documents() {
        for block in blocks(&repo_root(), &document) {
            match &block.mode {
                Some(Ok(Mode::Skip(reason))) => skipped.push(format!("{}: {reason}", block.at())),
                Some(Ok(_)) => run += 1,
                Some(Err(why)) => problems.push(format!("{}: {why}", block.at())),
                None => problems.push(format!("{}: no `<!-- doc-test: ... -->` marker before this block", block.at())),
            }
        }
    }
    assert!(problems.is_empty(), "docs blocks without a valid marker:\n{}", problems.join("\n"));
    eprintln!("docs: {run} blocks run or compared, {} marked not runnable:\n{}", skipped.len(), skipped.join("\n"));
}

#[test]
fn the_readme_runs_as_written() {
    run_document("README.md");
}

#[test]
fn the_config_reference_runs_as_written() {
    run_document("docs/config.md");
}

/// Apart from the other pages, so that it runs beside them.
#[test]
fn the_credentials_page_runs_as_written() {
    run_document("docs/credentials.md");
}

/// Apart, so that it runs beside the others.
#[test]
fn the_audit_page_runs_as_written() {
    run_document("docs/audit.md");
}

/// Apart, so that it runs beside the others.
#[test]
fn the_apps_page_runs_as_written() {
    run_document("docs/apps.md");
}

/// Apart, so that it runs beside the others.
#[test]
fn the_skills_page_runs_as_written() {
    run_document("docs/skills.md");
}

/// Apart too: it builds a server from npm and serves it.
#[test]
fn the_existing_servers_page_runs_as_written() {
    run_document("docs/existing-servers.md");
}

/// Apart: they serve the bundled plugins and a script engine, each page a minute or so; beside
/// the other pages, not after them.
#[test]
fn the_composition_and_code_mode_pages_run_as_written() {
    run_document("docs/composition.md");
    run_document("docs/code-mode.md");
}

#[test]
fn the_other_pages_run_as_written() {
    for document in documents() {
        let apart = ["README.md", "docs/config.md", "docs/credentials.md", "docs/existing-servers.md", "docs/audit.md"];
        let apart = [apart.as_slice(), &["docs/skills.md", "docs/apps.md", "docs/composition.md", "docs/code-mode.md"]]
            .concat();
        if !GUIDES.contains(&document.as_str()) && !apart.contains(&document.as_str()) {
            run_document(&document);
        }
    }
}
