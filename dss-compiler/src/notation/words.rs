//! Word rules: which strings are written bare, how others are quoted, and the plain-word
//! keywords chosen for property names.

/// Words that would read as JSON literals.
const RESERVED: &[&str] = &["true", "false", "null"];

/// A string that can be written without quotes.
pub(crate) fn is_word(s: &str) -> bool {
    // Word characters are ASCII, so bytes suffice (a multi-byte character fails).
    let b = s.as_bytes();
    match b.first() {
        Some(&c) if is_word_start(c as char) => {}
        _ => return false,
    }
    b[1..].iter().all(|&c| is_word_char(c as char))
        && !RESERVED.contains(&s)
        && !s.ends_with(['.', '-'])
}

/// A character that may start a word.
pub(crate) fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$'
}

/// A character that may continue a word.
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-' | '/')
}

/// How a string is written as a token: bare if a word, else JSON-quoted.
pub(crate) fn render_word(s: &str) -> String {
    if is_word(s) {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// A plain-word keyword for a property name (`@type` -> `_type`).
pub(crate) fn keyword_for(name: &str) -> String {
    if is_word(name) {
        return name.to_string();
    }
    let mut k: String = name
        .chars()
        .map(|c| if is_word_char(c) { c } else { '_' })
        .collect();
    if !k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$') {
        k.insert(0, '_');
    }
    while k.ends_with(['.', '-']) {
        k.push('_');
    }
    if !is_word(&k) {
        k = format!("{k}_");
    }
    k.truncate(64);
    k
}
