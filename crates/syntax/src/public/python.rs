//! Python's own definitions where the public implementation leans on them:
//! which characters end a line (`str.splitlines`) and which are whitespace
//! (`str.strip`, `str.rstrip`). They are wider than Rust's: the file and
//! group separators U+001C–U+001E end lines, and U+001C–U+001F are
//! whitespace there, while U+200B and U+FEFF are neither.

/// True for a character Python's `str.isspace` accepts (Unicode's
/// whitespace, plus the separators U+001C–U+001F).
pub(super) fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{b}'
            | '\u{c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// True for a character that ends a line for `str.splitlines`.
fn ends_line(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// The lines of `text` as `str.splitlines()` gives them: `\r\n` ends one
/// line, and a break at the very end makes no empty last line.
pub(super) fn splitlines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !ends_line(c) {
            continue;
        }
        lines.push(&text[start..i]);
        start = i + c.len_utf8();
        if c == '\r' && chars.peek().map(|&(_, n)| n) == Some('\n') {
            chars.next();
            start += 1;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// `str.strip()`.
pub(super) fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// `str.rstrip()`.
pub(super) fn rstrip(text: &str) -> &str {
    text.trim_end_matches(is_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_where_python_ends_them() {
        assert_eq!(
            splitlines("a\r\nb\rc\u{1c}d\u{2028}e\n"),
            ["a", "b", "c", "d", "e"]
        );
        assert_eq!(splitlines("a\n\nb"), ["a", "", "b"]);
        assert_eq!(splitlines(""), Vec::<&str>::new());
        assert_eq!(splitlines("a\u{1f}b\u{200b}c"), ["a\u{1f}b\u{200b}c"]);
    }

    #[test]
    fn whitespace_is_python_s() {
        assert_eq!(strip("\u{1f}\u{a0} p1 \u{3000}\u{1c}"), "p1");
        assert_eq!(strip("\u{200b}p1\u{feff}"), "\u{200b}p1\u{feff}");
        assert_eq!(rstrip(" p1 \u{85}"), " p1");
    }
}
