//! Text a person reads that others wrote (a plugin's names, a model's arguments, a plugin's
//! definitions in a diff): escaped so that it cannot hide or reorder what follows, and cut.

/// `text` safe to show a person: control characters, bidirectional and invisible formatting
/// characters written as `\u{..}` (so text cannot hide or reorder what follows), cut at `limit`
/// characters with a note of how much is not shown. Line breaks stay (pretty-printed JSON has
/// them; inside JSON strings they are escaped already).
pub(crate) fn readable(text: &str, limit: usize) -> String {
    let mut shown = String::new();
    let mut count = 0;
    let mut rest = 0;
    for c in text.chars() {
        let escaped = match c {
            '\n' => None,
            c if c.is_control() || invisible(c) => Some(format!("\\u{{{:04x}}}", c as u32)),
            _ => None,
        };
        let width = escaped.as_ref().map_or(1, String::len);
        if count + width > limit {
            rest += 1;
            continue;
        }
        count += width;
        match escaped {
            Some(escaped) => shown.push_str(&escaped),
            None => shown.push(c),
        }
    }
    if rest > 0 {
        shown.push_str(&format!("… ({rest} more characters not shown)"));
    }
    shown
}

/// Formatting characters that change how the text around them reads: bidirectional marks,
/// embeddings, overrides and isolates, zero-width characters, line and paragraph separators.
fn invisible(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn what_a_person_reads_cannot_be_hidden_or_reordered() {
        let shown = readable("rm \u{202e}txt.exe\u{1b}[2J\u{200b}ok", 100);
        assert_eq!(shown, "rm \\u{202e}txt.exe\\u{001b}[2J\\u{200b}ok");
        let cut = readable(&"a".repeat(30), 10);
        assert_eq!(cut, format!("{}… (20 more characters not shown)", "a".repeat(10)));
        assert_eq!(readable("line\nnext", 100), "line\nnext");
    }
}
