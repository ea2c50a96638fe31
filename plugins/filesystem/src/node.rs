//! What the reference server (Node.js) prints, reproduced: its `fs` error messages, its
//! `formatSize`, `Date.prototype.toString`, `localeCompare`'s order and `pathToFileURL`.

use std::io;

use chrono::{DateTime, Utc};

/// A failed file operation as Node words it: `ENOENT: no such file or directory, open '/a/b'`.
pub(crate) fn error(e: &io::Error, syscall: &str, paths: &[&str]) -> String {
    use io::ErrorKind::*;
    let (code, words) = match e.kind() {
        NotFound => ("ENOENT", "no such file or directory"),
        IsADirectory => ("EISDIR", "illegal operation on a directory"),
        NotADirectory => ("ENOTDIR", "not a directory"),
        AlreadyExists => ("EEXIST", "file already exists"),
        PermissionDenied => ("EACCES", "permission denied"),
        ReadOnlyFilesystem => ("EROFS", "read-only file system"),
        DirectoryNotEmpty => ("ENOTEMPTY", "directory not empty"),
        CrossesDevices => ("EXDEV", "cross-device link not permitted"),
        InvalidFilename => ("ENAMETOOLONG", "name too long"),
        StorageFull => ("ENOSPC", "no space left on device"),
        _ => return format!("{e}, {syscall}"),
    };
    // Node names no path for a read on an open descriptor (EISDIR from readFile).
    match paths {
        _ if syscall == "read" => format!("{code}: {words}, read"),
        [] => format!("{code}: {words}, {syscall}"),
        [one] => format!("{code}: {words}, {syscall} '{one}'"),
        [from, to, ..] => format!("{code}: {words}, {syscall} '{from}' -> '{to}'"),
    }
}

/// The reference's `formatSize`: `0 B`, `24 B`, `2.93 KB`, `1.50 MB`.
pub(crate) fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    if bytes == 0 {
        return "0 B".to_owned();
    }
    let exponent = ((bytes as f64).ln() / 1024f64.ln()).floor() as usize;
    if exponent == 0 {
        return format!("{bytes} B");
    }
    let unit = exponent.min(UNITS.len() - 1);
    format!("{:.2} {}", bytes as f64 / 1024f64.powi(unit as i32), UNITS[unit])
}

/// `Date.prototype.toString()` in UTC (the sandbox's only time zone):
/// `Mon Nov 23 2026 21:50:00 GMT+0000 (Coordinated Universal Time)`.
pub(crate) fn date(at: DateTime<Utc>) -> String {
    at.format("%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)").to_string()
}

/// JavaScript's `padEnd`/`padStart` count UTF-16 code units.
pub(crate) fn pad_end(text: &str, width: usize) -> String {
    let len = text.encode_utf16().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(len)))
}

pub(crate) fn pad_start(text: &str, width: usize) -> String {
    let len = text.encode_utf16().count();
    format!("{}{text}", " ".repeat(width.saturating_sub(len)))
}

/// `a.localeCompare(b)` as Node's ICU orders file names (root collation): punctuation, then
/// digits, then letters; case and accents only break ties (lowercase first). Close to ICU for
/// Latin names, which is what directory listings hold; other scripts sort by code point.
pub(crate) fn locale_compare(a: &str, b: &str) -> std::cmp::Ordering {
    let primary = |s: &str| s.chars().map(|c| primary_weight(c).0).collect::<Vec<_>>();
    let accents = |s: &str| s.chars().map(|c| primary_weight(c).1).collect::<Vec<_>>();
    let case = |s: &str| s.chars().map(|c| c.is_uppercase()).collect::<Vec<_>>();
    primary(a)
        .cmp(&primary(b))
        .then_with(|| accents(a).cmp(&accents(b)))
        .then_with(|| case(a).cmp(&case(b)))
        .then_with(|| a.cmp(b))
}

/// ICU root's primary weight of a character, and whether it carries an accent.
fn primary_weight(c: char) -> (u32, bool) {
    const PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    if let Some(i) = PUNCTUATION.find(c) {
        return (1 + i as u32, false);
    }
    if c.is_ascii_digit() {
        return (100 + c as u32 - '0' as u32, false);
    }
    let (base, accented) = fold_accent(c);
    if base.is_ascii_alphabetic() {
        return (200 + base.to_ascii_lowercase() as u32 - 'a' as u32, accented);
    }
    (1000 + c as u32, false)
}

/// The letter under a Latin-1 accent: `é` is `e` with an accent.
fn fold_accent(c: char) -> (char, bool) {
    const FOLDS: [(&str, char); 12] = [
        ("àáâãäåÀÁÂÃÄÅ", 'a'),
        ("çÇ", 'c'),
        ("èéêëÈÉÊË", 'e'),
        ("ìíîïÌÍÎÏ", 'i'),
        ("ñÑ", 'n'),
        ("òóôõöøÒÓÔÕÖØ", 'o'),
        ("ùúûüÙÚÛÜ", 'u'),
        ("ýÿÝ", 'y'),
        ("ðÐ", 'd'),
        ("ß", 's'),
        ("æÆ", 'a'),
        ("þÞ", 't'),
    ];
    FOLDS.iter().find(|(set, _)| set.contains(c)).map_or((c, false), |(_, base)| (*base, true))
}

/// `pathToFileURL(path).href`: `file://` and the path with what a URL may not hold
/// percent-encoded (UTF-8 bytes).
pub(crate) fn file_url(path: &str) -> String {
    let mut url = String::from("file://");
    for byte in path.bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte);
        if keep {
            url.push(byte as char);
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_the_reference() {
        assert_eq!(format_size(0), "0 B");
        assert_eq!(format_size(24), "24 B");
        assert_eq!(format_size(3000), "2.93 KB");
        assert_eq!(format_size(1024), "1.00 KB");
        assert_eq!(format_size(3 * 1024 * 1024 / 2), "1.50 MB");
    }

    #[test]
    fn names_sort_like_icu() {
        let mut names = vec!["b.txt", "_x", "B.txt", "a.txt", "10", "2", "café.txt", "crlf.txt", "Zed", "-y"];
        names.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(names, ["_x", "-y", "10", "2", "a.txt", "b.txt", "B.txt", "café.txt", "crlf.txt", "Zed"]);
    }

    #[test]
    fn node_error_messages() {
        let missing = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(error(&missing, "open", &["/a"]), "ENOENT: no such file or directory, open '/a'");
        assert_eq!(error(&missing, "rename", &["/a", "/b"]), "ENOENT: no such file or directory, rename '/a' -> '/b'");
        let dir = io::Error::from(io::ErrorKind::IsADirectory);
        assert_eq!(error(&dir, "read", &["/a"]), "EISDIR: illegal operation on a directory, read");
    }

    #[test]
    fn file_urls_encode_like_node() {
        assert_eq!(file_url("/tmp/café b.bin"), "file:///tmp/caf%C3%A9%20b.bin");
    }
}
