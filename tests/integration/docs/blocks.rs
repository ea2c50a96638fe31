//! The fenced blocks of a Markdown file and the `doc-test` marker each carries: an HTML comment
//! on the line before the fence, invisible when the page is rendered.

use std::path::{Path, PathBuf};

/// What the docs test does with a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// `run`: a shell block, run in the document's workspace; it must succeed.
    Run,
    /// `run, fails`: a shell block that must fail (it shows an error).
    RunFails,
    /// `output`: what the previous block printed, line by line in order (`...` matches anything).
    Output,
    /// `file PATH`: written to PATH, relative to the current directory of the workspace.
    File(String),
    /// `same-as PATH`: equal to the repository's file PATH.
    SameAs(String),
    /// `written PATH`: equal to the file PATH the blocks before it wrote in the workspace (a
    /// config a command edited, shown to the reader).
    Written(String),
    /// `background`: a shell block started for the rest of the document (a server).
    Background,
    /// `python`: run with the official MCP Python SDK's interpreter.
    Python,
    /// `json`: must parse as JSON.
    Json,
    /// `skip REASON`: not runnable, and why.
    Skip(String),
}

/// One fenced block.
#[derive(Debug, Clone)]
pub struct Block {
    pub file: PathBuf,
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The fence's info string (`sh`, `toml`, ...).
    pub info: String,
    pub text: String,
    /// `None`: unmarked, which the coverage test refuses.
    pub mode: Option<Result<Mode, String>>,
}

impl Block {
    /// `file:line`, for messages.
    pub fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

const MARKER: &str = "<!-- doc-test:";

fn parse_mode(marker: &str) -> Result<Mode, String> {
    let body = marker.trim().strip_prefix(MARKER).and_then(|m| m.strip_suffix("-->")).ok_or("not a marker")?.trim();
    let (word, rest) = body.split_once(' ').map_or((body, ""), |(w, r)| (w, r.trim()));
    let argument =
        |what: &str| if rest.is_empty() { Err(format!("`{word}` needs {what}")) } else { Ok(rest.to_owned()) };
    Ok(match word {
        "run" => Mode::Run,
        "run," if rest == "fails" => Mode::RunFails,
        "output" => Mode::Output,
        "file" => Mode::File(argument("a path")?),
        "same-as" => Mode::SameAs(argument("a path")?),
        "written" => Mode::Written(argument("a path")?),
        "background" => Mode::Background,
        "python" => Mode::Python,
        "json" => Mode::Json,
        "skip" if rest.split_whitespace().count() >= 3 => Mode::Skip(rest.to_owned()),
        "skip" => return Err("`skip` needs a reason of a few words".to_owned()),
        other => return Err(format!("unknown doc-test mode `{other}`")),
    })
}

/// Every fenced block of `path` (relative to the repository root `root`), in order.
pub fn blocks(root: &Path, path: &str) -> Vec<Block> {
    let text = std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let start = i;
        let end = (start + 1..lines.len()).find(|&j| lines[j].trim_end() == "```").unwrap_or(lines.len());
        let body: Vec<&str> = lines[start + 1..end.min(lines.len())].to_vec();
        let marker = lines[..start].iter().rev().find(|l| !l.trim().is_empty());
        let mode = marker.filter(|m| m.trim_start().starts_with(MARKER)).map(|m| parse_mode(m));
        found.push(Block {
            file: PathBuf::from(path),
            line: start + 1,
            info: info.trim().to_owned(),
            text: body.join("\n") + "\n",
            mode,
        });
        i = end + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_parse() {
        assert_eq!(parse_mode("<!-- doc-test: run -->"), Ok(Mode::Run));
        assert_eq!(parse_mode("<!-- doc-test: run, fails -->"), Ok(Mode::RunFails));
        assert_eq!(parse_mode("<!-- doc-test: file mcpbox.toml -->"), Ok(Mode::File("mcpbox.toml".into())));
        assert!(parse_mode("<!-- doc-test: skip later -->").is_err());
        assert!(parse_mode("<!-- doc-test: runn -->").is_err());
    }
}
