//! `edit_file`: the reference's `applyFileEdits` (an exact match first, else a match line by
//! line ignoring indentation, keeping the file's indentation) and the git-style diff its
//! jsdiff `createTwoFilesPatch` writes (4 lines of context, `\ No newline at end of file`).

use similar::{DiffOp, TextDiff};

/// jsdiff's default context.
const CONTEXT: usize = 4;

pub(crate) fn normalize_line_endings(text: &str) -> String {
    text.replace("\r\n", "\n")
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The content after every edit, or the reference's error for the first that does not match.
pub(crate) fn apply(content: &str, edits: &[(String, String)]) -> Result<String, String> {
    let mut modified = content.to_owned();
    for (old_text, new_text) in edits {
        let old = normalize_line_endings(old_text);
        let new = normalize_line_endings(new_text);
        if modified.contains(&old) {
            modified = modified.replacen(&old, &new, 1);
            continue;
        }
        let old_lines: Vec<&str> = old.split('\n').collect();
        let content_lines: Vec<String> = modified.split('\n').map(str::to_owned).collect();
        let found = (0..=content_lines.len().saturating_sub(old_lines.len()))
            .filter(|_| content_lines.len() >= old_lines.len())
            .find(|&i| old_lines.iter().zip(&content_lines[i..]).all(|(o, c)| o.trim() == c.trim()));
        let Some(i) = found else {
            return Err(format!("Could not find exact match for edit:\n{old_text}"));
        };
        let original_indent = indent(&content_lines[i]).to_owned();
        let new_lines: Vec<String> = new
            .split('\n')
            .enumerate()
            .map(|(j, line)| {
                if j == 0 {
                    return format!("{original_indent}{}", line.trim_start());
                }
                let old_indent = old_lines.get(j).map_or("", |l| indent(l));
                let new_indent = indent(line);
                if !old_indent.is_empty() && !new_indent.is_empty() {
                    let relative = new_indent.chars().count().saturating_sub(old_indent.chars().count());
                    format!("{original_indent}{}{}", " ".repeat(relative), line.trim_start())
                } else {
                    line.to_owned()
                }
            })
            .collect();
        let mut lines = content_lines;
        lines.splice(i..i + old_lines.len(), new_lines);
        modified = lines.join("\n");
    }
    Ok(modified)
}

/// `createTwoFilesPatch(path, path, old, new, 'original', 'modified')`, fenced in as many
/// backticks as it takes, as the reference returns it.
pub(crate) fn fenced_diff(path: &str, old: &str, new: &str) -> String {
    let diff = unified_diff(path, old, new);
    let mut ticks = 3;
    while diff.contains(&"`".repeat(ticks)) {
        ticks += 1;
    }
    let fence = "`".repeat(ticks);
    format!("{fence}diff\n{diff}{fence}\n\n")
}

fn unified_diff<'a>(path: &str, old: &'a str, new: &'a str) -> String {
    let mut out = format!(
        "Index: {path}\n===================================================================\n--- {path}\toriginal\n+++ {path}\tmodified\n"
    );
    let diff = TextDiff::from_lines(old, new);
    let old_lines: Vec<&'a str> = diff.old_slices().to_vec();
    let new_lines: Vec<&'a str> = diff.new_slices().to_vec();
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        // Unified diff's quirk: an empty range names the line before it.
        let start = |range: &std::ops::Range<usize>| if range.is_empty() { range.start } else { range.start + 1 };
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            start(&old_range),
            old_range.len(),
            start(&new_range),
            new_range.len()
        ));
        for op in &group {
            let tagged = |lines: &[&'a str], tag: char| lines.iter().map(move |l| (*l, tag)).collect::<Vec<_>>();
            let tag_lines = match *op {
                DiffOp::Equal { old_index, len, .. } => tagged(&old_lines[old_index..old_index + len], ' '),
                DiffOp::Delete { old_index, old_len, .. } => tagged(&old_lines[old_index..old_index + old_len], '-'),
                DiffOp::Insert { new_index, new_len, .. } => tagged(&new_lines[new_index..new_index + new_len], '+'),
                DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                    let mut lines = tagged(&old_lines[old_index..old_index + old_len], '-');
                    lines.extend(tagged(&new_lines[new_index..new_index + new_len], '+'));
                    lines
                }
            };
            for (line, tag) in tag_lines {
                out.push(tag);
                match line.strip_suffix('\n') {
                    Some(line) => {
                        out.push_str(line);
                        out.push('\n');
                    }
                    None => {
                        out.push_str(line);
                        out.push_str("\n\\ No newline at end of file\n");
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_keep_the_files_indentation() {
        let content = "fn main() {\n    let a = 1;\n        let b = 2;\n}\n";
        let edits = [("let a = 1;\n    let b = 2;".to_owned(), "let a = 10;\n      let b = 20;".to_owned())];
        assert_eq!(
            apply(content, &edits).unwrap(),
            "fn main() {\n    let a = 1;\n        let b = 2;\n}\n"
                .replace("let a = 1;\n        let b = 2;", "let a = 10;\n      let b = 20;")
        );
        assert!(
            apply(content, &[("missing".into(), "x".into())]).unwrap_err().starts_with("Could not find exact match")
        );
    }

    #[test]
    fn whitespace_insensitive_match_reindents() {
        let content = "  alpha\n  beta\n";
        let edits = [("alpha\nbeta".to_owned(), "ALPHA\n  BETA".to_owned())];
        assert_eq!(apply(content, &edits).unwrap(), "  ALPHA\n  BETA\n");
    }

    #[test]
    fn diffs_read_like_jsdiff() {
        let diff = unified_diff("/p", "alpha\nbeta\n", "alpha\nBETA\n");
        assert!(diff.ends_with("@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n"), "{diff}");
        let diff = unified_diff("/p", "one\ntwo", "one\n2");
        assert!(
            diff.ends_with(
                "@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+2\n\\ No newline at end of file\n"
            ),
            "{diff}"
        );
    }
}
