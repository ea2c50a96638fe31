//! Text a person reads that others wrote (a plugin's names, a model's arguments, a plugin's
//! definitions in a diff): escaped so that it cannot hide or reorder what follows, and cut. The
//! same test of what a person would not see refuses such characters in what a plugin describes
//! at load (`runtime/plugin/descriptors.rs`).

/// `text` safe to show a person: control characters and every character that shows nothing or
/// changes how the text around it reads ([`hidden`]) written as `\u{..}` (so text cannot hide
/// or reorder what follows), cut at `limit` characters with a note of how much is not shown.
/// Line breaks stay (pretty-printed JSON has them; inside JSON strings they are escaped
/// already).
pub(crate) fn readable(text: &str, limit: usize) -> String {
    let mut shown = String::new();
    let mut count = 0;
    let mut rest = 0;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let (before, after) = (i.checked_sub(1).map(|b| chars[b]), chars.get(i + 1).copied());
        let escaped = match c {
            '\n' => None,
            c if hidden(before, c, after) => Some(format!("\\u{{{:04x}}}", c as u32)),
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

/// The first character of `text` a person would not see as written (see [`hidden`]); line
/// breaks and tabs count as seen where `multiline` text may have them.
pub(crate) fn first_hidden(text: &str, multiline: bool) -> Option<char> {
    let chars: Vec<char> = text.chars().collect();
    chars.iter().enumerate().find_map(|(i, &c)| {
        let seen = multiline && matches!(c, '\n' | '\r' | '\t');
        let (before, after) = (i.checked_sub(1).map(|b| chars[b]), chars.get(i + 1).copied());
        (!seen && hidden(before, c, after)).then_some(c)
    })
}

/// Whether `c` (between `before` and `after`) shows nothing, or changes how the text around it
/// reads: control characters; format characters (bidirectional marks, embeddings, overrides
/// and isolates, zero-width characters, soft hyphens, the tag characters that can spell a
/// whole hidden text, interlinear annotations); private-use and unassigned code points; line,
/// paragraph and space separators other than the plain space; and the rest of Unicode's
/// default-ignorable code points (the Hangul fillers, U+034F, U+17B4, the variation
/// selectors). Emoji keep what draws them: a variation selector 15 or 16 right after a symbol,
/// and a zero-width joiner between two symbols; any other variation selector (a run of them can
/// encode a hidden text) is hidden.
pub(crate) fn hidden(before: Option<char>, c: char, after: Option<char>) -> bool {
    use unicode_general_category::{GeneralCategory as G, get_general_category};
    let symbol = |c: Option<char>| c.is_some_and(|c| get_general_category(c) == G::OtherSymbol);
    match c {
        ' ' => false,
        '\u{fe0e}' | '\u{fe0f}' => !symbol(before),
        '\u{200d}' => !(symbol(before) && symbol(after)),
        '\u{034f}'
        | '\u{115f}'
        | '\u{1160}'
        | '\u{17b4}'
        | '\u{17b5}'
        | '\u{180b}'..='\u{180f}'
        | '\u{3164}'
        | '\u{fe00}'..='\u{fe0d}'
        | '\u{ffa0}'
        | '\u{e0000}'..='\u{e0fff}' => true,
        c => matches!(
            get_general_category(c),
            G::Control
                | G::Format
                | G::PrivateUse
                | G::Unassigned
                | G::Surrogate
                | G::LineSeparator
                | G::ParagraphSeparator
                | G::SpaceSeparator
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn invisible_characters_are_shown_as_escapes_and_emoji_as_drawn() {
        // Round four: the tag characters (here spelling "hi"), the soft hyphen, the Hangul filler,
        // the Mongolian vowel separator, U+206A, the interlinear annotation marks, the combining
        // grapheme joiner, a lone variation selector and the Khmer vowel inherent.
        let sneaky =
            "a\u{e0068}\u{e0069}\u{00ad}\u{3164}\u{180e}\u{206a}\u{fff9}\u{fffa}\u{fffb}\u{034f}x\u{fe0f}\u{17b4}b";
        let shown = readable(sneaky, 1000);
        assert!(shown.is_ascii(), "{shown}");
        for escape in ["e0068", "e0069", "00ad", "3164", "180e", "206a", "fff9", "fffa", "fffb", "034f", "fe0f", "17b4"]
        {
            assert!(shown.contains(&format!("\\u{{{escape}}}")), "{escape}: {shown}");
        }
        // Emoji as written: a presentation selector after a symbol, a joiner between symbols.
        assert_eq!(readable("⚠\u{fe0f} \u{1f468}\u{200d}\u{1f469}", 100), "⚠\u{fe0f} \u{1f468}\u{200d}\u{1f469}");
        assert_eq!(readable("a\u{200d}b\u{fe01}", 100), "a\\u{200d}b\\u{fe01}");
        assert_eq!(super::first_hidden("tab\there\nnext", true), None);
        assert_eq!(super::first_hidden("a\u{e0041}", false), Some('\u{e0041}'));
    }

    #[test]
    fn what_a_person_reads_cannot_be_hidden_or_reordered() {
        let shown = readable("rm \u{202e}txt.exe\u{1b}[2J\u{200b}ok", 100);
        assert_eq!(shown, "rm \\u{202e}txt.exe\\u{001b}[2J\\u{200b}ok");
        let cut = readable(&"a".repeat(30), 10);
        assert_eq!(cut, format!("{}… (20 more characters not shown)", "a".repeat(10)));
        assert_eq!(readable("line\nnext", 100), "line\nnext");
    }
}
