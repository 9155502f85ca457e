//! Readers for alias files and catalogs.

use std::path::Path;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::{Entry, ExtractError};

fn read_text(path: &Path) -> Result<String, ExtractError> {
    let bytes = std::fs::read(path).map_err(|source| ExtractError::Io {
        path: path.to_owned(),
        source: source.into(),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        ExtractError::NotUtf8 {
            path: path.to_owned(),
            line,
        }
    })
}

fn file_error(path: &Path, line: usize, message: impl Into<String>) -> ExtractError {
    ExtractError::File {
        path: path.to_owned(),
        line,
        message: message.into(),
    }
}

/// Splits `LABEL(value)` into the label and its values; `LABEL(Or(a,b))` gives both values.
fn parse_target(t: &str) -> Option<(&str, Vec<&str>)> {
    let t = t.trim();
    let open = t.find('(')?;
    if !t.ends_with(')') || open == 0 {
        return None;
    }
    let label = &t[..open];
    if !label.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let inner = t[open + 1..t.len() - 1].trim();
    let values: Vec<&str> = match inner.strip_prefix("Or(").and_then(|r| r.strip_suffix(')')) {
        Some(list) => list.split(',').map(str::trim).collect(),
        None => vec![inner],
    };
    if values
        .iter()
        .any(|v| v.is_empty() || v.contains(['(', ')']))
    {
        return None;
    }
    Some((label, values))
}

/// Reads a FoodOrdering alias file: one `phrase<TAB>LABEL(value)` a line (blank lines
/// skipped; `LABEL(Or(a,b))` maps the phrase to both values; a line whose tab was typed as a
/// space is read when its last word is `LABEL(value)`). Each (label, value) becomes one
/// [`Entry`] with the label as its site and the phrases as aliases, in file order.
///
/// # Errors
/// [`ExtractError::Io`] or [`ExtractError::NotUtf8`] when the file cannot be read, and
/// [`ExtractError::File`] naming the line when a line is not `phrase<TAB>LABEL(value)`.
pub fn read_alias_tsv(path: impl AsRef<Path>) -> Result<Vec<Entry>, ExtractError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let mut entries: Vec<Entry> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let (phrase, target) = match line.split_once('\t') {
            Some(pt) => pt,
            None => line
                .trim_end()
                .rsplit_once(char::is_whitespace)
                .ok_or_else(|| {
                    file_error(
                        path,
                        i + 1,
                        format!("expected `phrase<TAB>LABEL(value)`, found `{line}`"),
                    )
                })?,
        };
        let (label, values) = parse_target(target).ok_or_else(|| {
            file_error(
                path,
                i + 1,
                format!(
                    "expected `LABEL(value)` after the phrase, found `{}`",
                    target.trim()
                ),
            )
        })?;
        let phrase = phrase.trim();
        if phrase.is_empty() {
            return Err(file_error(path, i + 1, "empty phrase"));
        }
        for v in values {
            let value = Value::String(v.to_owned());
            match entries
                .iter_mut()
                .find(|e| e.site == label && e.value == value)
            {
                Some(e) => e.aliases.push(phrase.to_owned()),
                None => entries.push(Entry::new(label, value).with_aliases([phrase])),
            }
        }
    }
    Ok(entries)
}

/// An ordered map read from YAML.
struct Ordered<K, V>(Vec<(K, V)>);

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for Ordered<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V2<K, V>(std::marker::PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for V2<K, V> {
            type Value = Ordered<K, V>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = m.next_entry()? {
                    out.push(kv);
                }
                Ok(Ordered(out))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Ordered(Vec::new()))
            }
        }
        d.deserialize_map(V2(std::marker::PhantomData))
    }
}

/// A value key in an alias YAML file: a string or a number.
#[derive(Deserialize)]
#[serde(untagged)]
enum Key {
    Num(serde_json::Number),
    Str(String),
}

/// Reads aliases in YAML: `site: {value: [phrase, …]}` (a value may have no phrases:
/// `value: []` or `value:`). Each value becomes one [`Entry`], in file order.
///
/// # Errors
/// [`ExtractError::Io`] or [`ExtractError::NotUtf8`] when the file cannot be read, and
/// [`ExtractError::File`] with the line of the YAML error.
pub fn read_alias_yaml(path: impl AsRef<Path>) -> Result<Vec<Entry>, ExtractError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let doc: Ordered<String, Ordered<Key, Option<Vec<String>>>> = serde_norway::from_str(&text)
        .map_err(|e| {
            let line = e.location().map_or(0, |l| l.line());
            file_error(
                path,
                line,
                format!("expected `site: {{value: [phrase, …]}}`: {e}"),
            )
        })?;
    let mut out = Vec::new();
    for (site, values) in doc.0 {
        for (key, phrases) in values.0 {
            let value = match key {
                Key::Num(n) => Value::Number(n),
                Key::Str(s) => Value::String(s),
            };
            out.push(Entry::new(&site, value).with_aliases(phrases.unwrap_or_default()));
        }
    }
    Ok(out)
}

/// Reads a catalog: a JSON array of strings and numbers (when the file starts with `[`), or
/// one value a line (a string each; blank lines skipped, surrounding white space trimmed).
///
/// # Errors
/// [`ExtractError::Io`] or [`ExtractError::NotUtf8`] when the file cannot be read;
/// [`ExtractError::File`] naming the line of a JSON syntax error or of an item that is not a
/// string or a number.
pub fn read_catalog(path: impl AsRef<Path>) -> Result<Vec<Value>, ExtractError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    let trimmed = text.trim_start_matches('\u{feff}');
    if trimmed.trim_start().starts_with('[') {
        let items: Vec<Value> = serde_json::from_str(trimmed).map_err(|e| {
            file_error(
                path,
                e.line(),
                format!("expected a JSON array of strings and numbers: {e}"),
            )
        })?;
        for (i, v) in items.iter().enumerate() {
            if !(v.is_string() || v.is_number()) {
                let line = json_item_line(trimmed, i);
                return Err(file_error(
                    path,
                    line,
                    format!("item {i} is {v}, not a string or a number"),
                ));
            }
        }
        return Ok(items);
    }
    Ok(trimmed
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| Value::String(l.to_owned()))
        .collect())
}

/// The line where item `index` of a top-level JSON array starts.
fn json_item_line(text: &str, index: usize) -> usize {
    let (mut depth, mut in_str, mut esc, mut item, mut line) =
        (0usize, false, false, 0usize, 1usize);
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        if depth == 1 && item == index && !c.is_whitespace() && c != ',' {
            return line;
        }
        match c {
            '"' => in_str = true,
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => item += 1,
            _ => {}
        }
    }
    line
}

/// One entry per catalog value, all at `site`, without aliases.
pub fn catalog_entries(site: &str, values: impl IntoIterator<Item = Value>) -> Vec<Entry> {
    values.into_iter().map(|v| Entry::new(site, v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(content: &[u8], ext: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new()
            .suffix(ext)
            .tempfile()
            .expect("temp file");
        f.write_all(content).expect("write");
        f
    }

    #[test]
    fn alias_tsv() {
        let f = file(b"coke\tDRINK_TYPE(coca_cola)\ncokes\tDRINK_TYPE(coca_cola)\n\nlittle\t quantity(light)\ncinamon TOPPING(cinnamon)\nbeans\tBEAN_FILLING(Or(black_beans,pinto_beans))\n", ".txt");
        let e = read_alias_tsv(f.path()).expect("reads");
        assert_eq!(e.len(), 5);
        assert_eq!(
            e[0],
            Entry::new("DRINK_TYPE", "coca_cola".into()).with_aliases(["coke", "cokes"])
        );
        assert_eq!(e[1].site, "quantity");
        assert_eq!(
            e[2],
            Entry::new("TOPPING", "cinnamon".into()).with_aliases(["cinamon"])
        );
        assert_eq!(e[3].value, "black_beans");
        assert_eq!(e[4].value, "pinto_beans");
        let bad = file(
            b"coke\tDRINK_TYPE(coca_cola)\nfanta\tDRINK_TYPE fanta\n",
            ".txt",
        );
        let err = read_alias_tsv(bad.path())
            .expect_err("bad line")
            .to_string();
        assert!(err.contains(":2:") && err.contains("LABEL(value)"), "{err}");
        let err = read_alias_tsv("/nonexistent/alias.txt")
            .expect_err("missing")
            .to_string();
        assert!(err.contains("/nonexistent/alias.txt"), "{err}");
        let latin1 = file(b"ok\tA(b)\ncaf\xe9\tA(c)\n", ".txt");
        let err = read_alias_tsv(latin1.path())
            .expect_err("not utf-8")
            .to_string();
        assert!(err.contains(":2:") && err.contains("UTF-8"), "{err}");
    }

    #[test]
    fn alias_yaml() {
        let f = file(b"/fields/*/aggregate:\n  sum: [total, summed]\n  mean: [average, avg]\n  count:\n/limit:\n  10: [ten]\n", ".yaml");
        let e = read_alias_yaml(f.path()).expect("reads");
        assert_eq!(e.len(), 4);
        assert_eq!(
            e[0],
            Entry::new("/fields/*/aggregate", "sum".into()).with_aliases(["total", "summed"])
        );
        assert!(e[2].aliases.is_empty());
        assert_eq!(e[3].value, serde_json::json!(10));
        let bad = file(b"site:\n  sum: [total]\n  mean: {a: b}\n", ".yaml");
        let err = read_alias_yaml(bad.path()).expect_err("bad").to_string();
        assert!(err.contains(":3:"), "{err}");
    }

    #[test]
    fn catalogs() {
        let f = file(b"Sales\n  Order Date \n\nRegion\n", ".txt");
        assert_eq!(
            read_catalog(f.path()).expect("reads"),
            vec![Value::from("Sales"), "Order Date".into(), "Region".into()]
        );
        let f = file(b"[\"a\", 2,\n \"c\"]", ".json");
        assert_eq!(
            read_catalog(f.path()).expect("reads"),
            vec![Value::from("a"), 2.into(), "c".into()]
        );
        let f = file(b"[\"a\",\n \"b\",\n {\"x\": 1}]", ".json");
        let err = read_catalog(f.path()).expect_err("object item").to_string();
        assert!(err.contains(":3:") && err.contains("item 2"), "{err}");
        let f = file(b"[\"a\",\n \"b\"\n \"c\"]", ".json");
        let err = read_catalog(f.path()).expect_err("syntax").to_string();
        assert!(err.contains(":3:"), "{err}");
        assert_eq!(
            catalog_entries("/x", vec![Value::from("a")]),
            vec![Entry::new("/x", "a".into())]
        );
    }

    #[test]
    fn errors_clone_and_display_the_same() {
        use std::error::Error as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let e = read_catalog(dir.path().join("missing.txt")).expect_err("no such file");
        assert!(matches!(e, ExtractError::Io { .. }));
        let c = e.clone();
        assert_eq!(c.to_string(), e.to_string());
        assert!(c.source().is_some());
        let e = crate::spec::SpecIndexError::from(e);
        assert_eq!(e.clone().to_string(), c.to_string());
    }
}
