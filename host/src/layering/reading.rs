//! Reading Rust text without a parser: comments and literals blanked (offsets kept), then
//! identifiers, inline modules, item definitions, `use` trees, paths and each type's members
//! found by pattern. Enough for this crate's code (no `#[path]`, no macros that make modules);
//! `imports.rs` builds the graph from what is found here, `map.rs` checks the map's names.

/// A module or item path, segment by segment.
pub(super) type ModulePath = Vec<String>;

/// `text` with comments, string and character literals blanked to spaces (newlines kept), so
/// that what remains is code at the same offsets.
pub(super) fn scrub(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to.min(bytes.len())] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|b| *b == b'\n').map_or(bytes.len(), |n| at + n);
            blank(&mut out, at, end);
            at = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut end) = (0usize, at);
            while end < bytes.len() {
                if bytes[end..].starts_with(b"/*") {
                    depth += 1;
                    end += 2;
                } else if bytes[end..].starts_with(b"*/") {
                    depth -= 1;
                    end += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    end += 1;
                }
            }
            blank(&mut out, at, end);
            at = end;
        } else if rest[0] == b'r'
            && (at == 0 || !ident(bytes[at - 1]) || (bytes[at - 1] == b'b' && (at < 2 || !ident(bytes[at - 2]))))
            && rest[1..].iter().take_while(|b| **b == b'#').count() + 1 < rest.len()
            && rest[1 + rest[1..].iter().take_while(|b| **b == b'#').count()] == b'"'
        {
            let hashes = rest[1..].iter().take_while(|b| **b == b'#').count();
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let open = at + 2 + hashes;
            let end = bytes[open..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(bytes.len(), |n| open + n + close.len());
            blank(&mut out, at + 1, end);
            at = end;
        } else if rest[0] == b'"' {
            let mut end = at + 1;
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, at, end + 1);
            at = end + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', or one multi-byte character), or a
            // lifetime ('a), which stays.
            let end = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|b| *b == b'\'').map(|n| at + 2 + n + 1)
            } else {
                let width = std::str::from_utf8(&rest[1..rest.len().min(5)]).map_or_else(
                    |e| {
                        std::str::from_utf8(&rest[1..1 + e.valid_up_to()])
                            .unwrap_or_default()
                            .chars()
                            .next()
                            .map_or(1, char::len_utf8)
                    },
                    |s| s.chars().next().map_or(1, char::len_utf8),
                );
                (rest.get(1 + width) == Some(&b'\'')).then_some(at + 2 + width)
            };
            match end {
                Some(end) => {
                    blank(&mut out, at, end);
                    at = end;
                }
                None => at += 1,
            }
        } else {
            at += 1;
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The identifiers of `code` with their offsets.
pub(super) fn identifiers(code: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at].is_ascii_alphabetic() || bytes[at] == b'_' {
            let end = bytes[at..]
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .map_or(bytes.len(), |n| at + n);
            found.push((at, &code[at..end]));
            at = end;
        } else {
            at += 1;
        }
    }
    found
}

/// Inline modules: `mod NAME {` to its closing brace.
pub(super) fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let words = identifiers(code);
    let mut found = Vec::new();
    for pair in words.windows(2) {
        let ((_, keyword), (at, name)) = (pair[0], pair[1]);
        let after = code[at + name.len()..].trim_start();
        if keyword == "mod" && after.starts_with('{') {
            let open = code.len() - after.len();
            let mut depth = 0usize;
            let close = code[open..].char_indices().find_map(|(n, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(open + n)
            });
            found.push((open, close.unwrap_or(code.len()), name.to_owned()));
        }
    }
    found
}

/// Items defined in `code`: offset, keyword and name.
pub(super) fn definitions(code: &str) -> Vec<(usize, &str, String)> {
    const KEYWORDS: &[&str] = &["fn", "struct", "enum", "trait", "type", "const", "static", "union", "macro_rules"];
    identifiers(code)
        .windows(2)
        .filter(|pair| KEYWORDS.contains(&pair[0].1))
        .map(|pair| (pair[1].0, pair[0].1, pair[1].1.to_owned()))
        .collect()
}

/// `use` declarations: where the tree starts and ends, and the tree without whitespace
/// (`crate::a::{b,c::D as E}`).
pub(super) fn use_trees(code: &str) -> Vec<(usize, usize, String)> {
    identifiers(code)
        .into_iter()
        .filter(|(at, word)| *word == "use" && !code[..*at].trim_end().ends_with("::"))
        .filter_map(|(at, _)| {
            let start = at + 3;
            let end = start + code[start..].find(';')?;
            let tree: String = code[start..end].split_whitespace().collect::<Vec<_>>().join(" ");
            Some((start, end, tree.replace(" as ", "@").replace(' ', "")))
        })
        .collect()
}

/// A use tree's imports: each path and the name it binds (`None` for a glob).
pub(super) fn flatten(tree: &str) -> Vec<(ModulePath, Option<String>)> {
    let mut found = Vec::new();
    flatten_into(&[], tree, &mut found);
    found
}

fn flatten_into(prefix: &[String], tree: &str, found: &mut Vec<(ModulePath, Option<String>)>) {
    let tree = tree.trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let mut path = prefix.to_vec();
        path.extend(tree[..open].split("::").filter(|s| !s.is_empty()).map(str::to_owned));
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        for part in split_top(inner) {
            flatten_into(&path, part, found);
        }
        return;
    }
    let (tree, alias) = tree.split_once('@').map_or((tree, None), |(t, a)| (t, Some(a.to_owned())));
    let mut path = prefix.to_vec();
    path.extend(tree.split("::").filter(|s| !s.is_empty()).map(str::to_owned));
    match path.last().map(String::as_str) {
        Some("*") => {
            path.pop();
            found.push((path, None));
        }
        Some("self") => {
            path.pop();
            let name = alias.or_else(|| path.last().cloned());
            found.push((path, name));
        }
        Some(last) => {
            let name = alias.unwrap_or_else(|| last.to_owned());
            found.push((path, Some(name)));
        }
        None => {}
    }
}

/// The parts of a group (`a,b::{c,d},e`) split at its top-level commas.
fn split_top(group: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&group[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// Paths of two or more segments in code (`a::b`, `super::c::D`), each from its first segment.
pub(super) fn code_paths(code: &str) -> Vec<(usize, ModulePath)> {
    let words = identifiers(code);
    let mut found = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let (start, first) = words[at];
        let mut path = vec![first.to_owned()];
        let mut next = at + 1;
        let mut end = start + first.len();
        while next < words.len() && &code[end..words[next].0] == "::" {
            path.push(words[next].1.to_owned());
            end = words[next].0 + words[next].1.len();
            next += 1;
        }
        if path.len() > 1 && !code[..start].ends_with("::") {
            found.push((start, path));
        }
        at = next;
    }
    found
}

/// The members each type gets in `code` (scrubbed): the fields of its struct, the functions of
/// its impls (inherent or of a trait) and of its trait declaration, not those nested in their
/// bodies. For the map's `Type::member` names (`map.rs`).
pub(super) fn type_members(code: &str) -> Vec<(String, Vec<String>)> {
    let words = identifiers(code);
    let mut found = Vec::new();
    for (i, (at, word)) in words.iter().enumerate() {
        let Some((_, next)) = words.get(i + 1) else { continue };
        let (owner, ends) = match *word {
            "impl" => (impl_target(&code[at + 4..]), &['{', ';'][..]),
            "trait" => (Some((*next).to_owned()), &['{', ';'][..]),
            // A tuple struct's fields have no names.
            "struct" => (Some((*next).to_owned()), &['{', ';', '('][..]),
            _ => continue,
        };
        let Some(owner) = owner else { continue };
        let Some(open) = code[*at..].find(ends).map(|n| at + n).filter(|open| code[*open..].starts_with('{')) else {
            continue;
        };
        let members = if *word == "struct" { block_fields(&code[open..]) } else { block_functions(&code[open..]) };
        found.push((owner, members));
    }
    found
}

/// The type an `impl` header is for (`impl<T> Trait for Foo<T> {` → `Foo`).
fn impl_target(header: &str) -> Option<String> {
    let header = &header[..header.find(['{', ';'])?];
    let header = header.trim_start();
    // The impl's own generics.
    let header = if header.starts_with('<') { &header[closing(header, '<', '>')? + 1..] } else { header };
    let target = header.rsplit_once(" for ").map_or(header, |(_, after)| after);
    let target = target.split(" where ").next()?;
    let path = target.trim().trim_start_matches('&').trim_start_matches("dyn ").split('<').next()?;
    let name = path.rsplit("::").next()?.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// The offset of the `close` that closes the `open` `text` starts with (an arrow's `>` is
/// none).
pub(super) fn closing(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close && !(c == '>' && text[..at].ends_with('-')) {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(at);
            }
        }
    }
    None
}

/// The functions declared directly in the block `code` starts with (not those nested in their
/// bodies).
fn block_functions(code: &str) -> Vec<String> {
    let mut depth = 0usize;
    let mut found = Vec::new();
    let words = identifiers(code);
    let mut next_word = 0;
    for (at, c) in code.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        while next_word < words.len() && words[next_word].0 < at {
            next_word += 1;
        }
        if depth == 1 && words.get(next_word).is_some_and(|(start, word)| *start == at && *word == "fn") {
            found.extend(words.get(next_word + 1).map(|(_, name)| (*name).to_owned()));
        }
    }
    found
}

/// The fields of the struct body `code` starts with: in each piece between commas at its top
/// level, the last word before the first lone `:`.
fn block_fields(code: &str) -> Vec<String> {
    let mut depth = 0usize;
    let mut pieces = Vec::new();
    let mut start = 1;
    for (at, c) in code.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    pieces.push(&code[start..at]);
                    break;
                }
            }
            ',' if depth == 1 => {
                pieces.push(&code[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    pieces
        .into_iter()
        .filter_map(|piece| {
            let colon = piece
                .char_indices()
                .find(|(at, c)| *c == ':' && !piece[at + 1..].starts_with(':') && !piece[..*at].ends_with(':'))?;
            identifiers(&piece[..colon.0]).last().map(|(_, word)| (*word).to_owned())
        })
        .collect()
}
