//! The shared terminals of every grammar dss prints, and the lexers the decoder reads them
//! with. Each terminal is one [`Terminal`]; its renderings (pest, GBNF, Lark, readable BNF)
//! are exhaustive `match`es, so a new terminal cannot be forgotten by one syntax, and the
//! decoder's lexers sit beside the terminal they recognise.

/// Defines [`Terminal`] and [`Terminal::ALL`] from one list.
macro_rules! terminals {
    ($($(#[doc = $doc:literal])* $v:ident,)*) => {
        /// A terminal of the grammars (leaf rules shared by every schema's grammar).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub(crate) enum Terminal {
            $($(#[doc = $doc])* $v,)*
        }

        impl Terminal {
            /// Every terminal, in the order grammars list their definitions.
            pub(crate) const ALL: &'static [Terminal] = &[$(Terminal::$v,)*];
        }
    };
}

terminals! {
    /// A free string: quoted, or bare when one word.
    Text,
    /// A non-empty free string: quoted, or bare when one word.
    TextNonempty,
    /// A bare word (a string without quotes).
    Bare,
    /// A JSON string literal.
    String,
    /// A non-empty JSON string literal.
    NonEmpty,
    /// A quoted `YYYY-MM-DD`.
    Date,
    /// A quoted RFC 3339 date-time.
    DateTime,
    /// A JSON number.
    Number,
    /// A JSON number >= 0.
    NonnegNumber,
    /// An integer (also written `1.0` or `1e2`, which JSON Schema counts as integers).
    Integer,
    /// An integer >= 0.
    Natural,
    /// An integer >= 1.
    Positive,
    /// Any compact JSON value.
    JsonValue,
    /// A compact JSON object.
    JsonObject,
    /// A compact JSON array.
    JsonArray,
}

use crate::shape::{Lexical, Lower, NumPart, StrPart};
use Terminal::*;

/// Words that are never bare strings: they are the JSON literals.
const RESERVED: &[&str] = &["true", "false", "null"];

/// The pest rule of a word character, which ends every literal ending in one.
pub(crate) const WCH_PEST: &str =
    "WCH = _{ ASCII_ALPHANUMERIC | \"_\" | \"$\" | \".\" | \"-\" | \"/\" }\n";

impl Terminal {
    /// The terminal of a free number: bounds a grammar can say (`minimum` 0 or 1).
    pub(crate) fn of_number(n: &NumPart) -> Terminal {
        match (n.integer, n.lower) {
            (true, None) => Integer,
            (true, Some(Lower::NonNegative)) => Natural,
            (true, Some(Lower::Positive)) => Positive,
            (false, None) => Number,
            (false, Some(_)) => NonnegNumber,
        }
    }

    /// The terminal of a free string; `quoted`: never a bare word here.
    pub(crate) fn of_string(s: &StrPart, quoted: bool) -> Terminal {
        match (&s.lexical, quoted) {
            // Its rules are the grammar's own (`grammar/regular.rs`); as a terminal (the
            // readable grammar, sites), a date, a date-time or a quoted string.
            (Some(Lexical::Regular(checks)), _) => match checks.first() {
                Some(c) if c.keyword == "format" && c.source == "date" => Date,
                Some(c) if c.keyword == "format" && c.source == "date-time" => DateTime,
                _ => String,
            },
            (None, true) => String,
            (None, false) => Text,
            (Some(Lexical::NonEmpty), true) => NonEmpty,
            (Some(Lexical::NonEmpty), false) => TextNonempty,
            (Some(Lexical::Date), _) => Date,
            (Some(Lexical::DateTime), _) => DateTime,
        }
    }

    /// The rule name (pest; GBNF writes `_` as `-`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Text => "text",
            TextNonempty => "text_nonempty",
            Bare => "bare",
            String => "string",
            NonEmpty => "nonempty",
            Date => "date",
            DateTime => "date_time",
            Number => "number",
            NonnegNumber => "nonneg_number",
            Integer => "integer",
            Natural => "natural",
            Positive => "positive",
            JsonValue => "json_value",
            JsonObject => "json_object",
            JsonArray => "json_array",
        }
    }

    /// The terminals this one's definition refers to (a grammar that uses it defines them
    /// too). Terminals without any are single lexemes.
    pub(crate) fn deps(self) -> &'static [Terminal] {
        match self {
            Text => &[String, Bare],
            TextNonempty => &[NonEmpty, Bare],
            JsonValue => &[JsonObject, JsonArray, String, Number],
            JsonObject => &[String, JsonValue],
            JsonArray => &[JsonValue],
            Bare | String | NonEmpty | Date | DateTime | Number | NonnegNumber | Integer
            | Natural | Positive => &[],
        }
    }

    /// The pest definition, after `name = `.
    pub(crate) fn pest(self) -> &'static str {
        match self {
            Text => "{ string | bare }",
            TextNonempty => "{ nonempty | bare }",
            NonEmpty => {
                r#"@{ "\"" ~ (!("\"" | "\\" | '\u{00}'..'\u{1F}') ~ ANY | "\\" ~ ("\"" | "\\" | "/" | "b" | "f" | "n" | "r" | "t" | "u" ~ ASCII_HEX_DIGIT{4}))+ ~ "\"" }"#
            }
            Date => {
                r#"@{ "\"" ~ ASCII_DIGIT{4} ~ "-" ~ ASCII_DIGIT{2} ~ "-" ~ ASCII_DIGIT{2} ~ "\"" }"#
            }
            DateTime => {
                r#"@{ "\"" ~ ASCII_DIGIT{4} ~ "-" ~ ASCII_DIGIT{2} ~ "-" ~ ASCII_DIGIT{2} ~ ("T" | "t" | " ") ~ ASCII_DIGIT{2} ~ ":" ~ ASCII_DIGIT{2} ~ ":" ~ ASCII_DIGIT{2} ~ ("." ~ ASCII_DIGIT+)? ~ ("Z" | "z" | ("+" | "-") ~ ASCII_DIGIT{2} ~ ":" ~ ASCII_DIGIT{2}) ~ "\"" }"#
            }
            NonnegNumber => {
                r#"@{ ("0" | ASCII_NONZERO_DIGIT ~ ASCII_DIGIT*) ~ ("." ~ ASCII_DIGIT+)? ~ (("e" | "E") ~ ("+" | "-")? ~ ASCII_DIGIT+)? }"#
            }
            Natural => {
                r#"@{ ("0" | ASCII_NONZERO_DIGIT ~ ASCII_DIGIT*) ~ ("." ~ "0"+)? ~ (("e" | "E") ~ "+"? ~ ASCII_DIGIT+)? }"#
            }
            Positive => {
                r#"@{ ASCII_NONZERO_DIGIT ~ ASCII_DIGIT* ~ ("." ~ "0"+)? ~ (("e" | "E") ~ "+"? ~ ASCII_DIGIT+)? }"#
            }
            Bare => r#"@{ (ASCII_ALPHA | "_" | "$") ~ WCH* }"#,
            String => {
                r#"@{ "\"" ~ (!("\"" | "\\" | '\u{00}'..'\u{1F}') ~ ANY | "\\" ~ ("\"" | "\\" | "/" | "b" | "f" | "n" | "r" | "t" | "u" ~ ASCII_HEX_DIGIT{4}))* ~ "\"" }"#
            }
            Number => {
                r#"@{ "-"? ~ ("0" | ASCII_NONZERO_DIGIT ~ ASCII_DIGIT*) ~ ("." ~ ASCII_DIGIT+)? ~ (("e" | "E") ~ ("+" | "-")? ~ ASCII_DIGIT+)? }"#
            }
            Integer => {
                r#"@{ "-"? ~ ("0" | ASCII_NONZERO_DIGIT ~ ASCII_DIGIT*) ~ ("." ~ "0"+)? ~ (("e" | "E") ~ "+"? ~ ASCII_DIGIT+)? }"#
            }
            JsonValue => {
                r#"{ json_object | json_array | string | number | "true" | "false" | "null" }"#
            }
            JsonObject => {
                r#"{ "{" ~ (string ~ ":" ~ json_value ~ ("," ~ string ~ ":" ~ json_value)*)? ~ "}" }"#
            }
            JsonArray => r#"{ "[" ~ (json_value ~ ("," ~ json_value)*)? ~ "]" }"#,
        }
    }

    /// The GBNF definition, after `name ::= ` (the Lark printer takes it as `lark.rs`'s
    /// `terminal` writes it; a test there checks the two agree).
    pub(crate) fn gbnf(self) -> &'static str {
        match self {
            Text => "string | bare",
            TextNonempty => "nonempty | bare",
            NonEmpty => {
                r#""\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )+ "\"""#
            }
            Date => r#""\"" [0-9]{4} "-" [0-9]{2} "-" [0-9]{2} "\"""#,
            DateTime => {
                r#""\"" [0-9]{4} "-" [0-9]{2} "-" [0-9]{2} [Tt ] [0-9]{2} ":" [0-9]{2} ":" [0-9]{2} ( "." [0-9]+ )? ( [Zz] | [-+] [0-9]{2} ":" [0-9]{2} ) "\"""#
            }
            NonnegNumber => r#"( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?"#,
            Natural => r#"( "0" | [1-9] [0-9]* ) ( "." "0"+ )? ( [eE] "+"? [0-9]+ )?"#,
            Positive => r#"[1-9] [0-9]* ( "." "0"+ )? ( [eE] "+"? [0-9]+ )?"#,
            Bare => "[A-Za-z_$] [A-Za-z0-9_$./-]*",
            String => {
                r#""\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\"""#
            }
            Number => r#""-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?"#,
            Integer => r#""-"? ( "0" | [1-9] [0-9]* ) ( "." "0"+ )? ( [eE] "+"? [0-9]+ )?"#,
            JsonValue => {
                r#"json-object | json-array | string | number | "true" | "false" | "null""#
            }
            JsonObject => r#""{" ( string ":" json-value ( "," string ":" json-value )* )? "}""#,
            JsonArray => r#""[" ( json-value ( "," json-value )* )? "]""#,
        }
    }

    /// The GBNF rule name.
    pub(crate) fn gbnf_name(self) -> std::string::String {
        self.name().replace('_', "-")
    }

    /// The name the Lark printer (`lark.rs`) gives this terminal: a lexeme
    /// (`T_STRING`) when it refers to no other rule, else a rule (`r_text`).
    #[cfg(test)]
    pub(crate) fn lark_name(self) -> std::string::String {
        if self.deps().is_empty() {
            format!("T_{}", self.name().to_ascii_uppercase())
        } else {
            format!("r_{}", self.name())
        }
    }

    /// The Lark (llguidance) definition, after `name: `: a regex for a lexeme, a rule over
    /// other terminals' Lark names otherwise.
    #[cfg(test)]
    pub(crate) fn lark(self) -> &'static str {
        match self {
            Text => "T_STRING | T_BARE",
            TextNonempty => "T_NONEMPTY | T_BARE",
            NonEmpty => r#"/"([^"\\\x00-\x1F]|\\(["\\\/bfnrt]|u[0-9a-fA-F]{4}))+"/"#,
            Date => r#"/"[0-9]{4}-[0-9]{2}-[0-9]{2}"/"#,
            DateTime => {
                r#"/"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[-+][0-9]{2}:[0-9]{2})"/"#
            }
            NonnegNumber => r"/(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/",
            Natural => r"/(0|[1-9][0-9]*)(\.0+)?([eE]\+?[0-9]+)?/",
            Positive => r"/[1-9][0-9]*(\.0+)?([eE]\+?[0-9]+)?/",
            Bare => r"/[A-Za-z_$][A-Za-z0-9_$.\/-]*/",
            String => r#"/"([^"\\\x00-\x1F]|\\(["\\\/bfnrt]|u[0-9a-fA-F]{4}))*"/"#,
            Number => r"/-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/",
            Integer => r"/-?(0|[1-9][0-9]*)(\.0+)?([eE]\+?[0-9]+)?/",
            JsonValue => {
                r#"r_json_object | r_json_array | T_STRING | T_NUMBER | "true" | "false" | "null""#
            }
            JsonObject => {
                r#""{" (T_STRING ":" r_json_value ("," T_STRING ":" r_json_value)*)? "}""#
            }
            JsonArray => r#""[" (r_json_value ("," r_json_value)*)? "]""#,
        }
    }

    /// How the readable BNF for prompts writes it (it does not tell a non-empty string
    /// from any string).
    pub(crate) fn readable(self) -> &'static str {
        match self {
            Text | TextNonempty => "<string>",
            String | NonEmpty => "<\"string\">",
            Bare => "<key>",
            Date => "<date>",
            DateTime => "<date-time>",
            Number => "<number>",
            NonnegNumber => "<number>=0>",
            Integer => "<integer>",
            Natural => "<natural>",
            Positive => "<positive>",
            JsonValue | JsonObject | JsonArray => "<json>",
        }
    }

    /// The same value written always in quotes (a free string is bare when one word).
    pub(crate) fn quoted(self) -> Terminal {
        match self {
            Text => String,
            TextNonempty => NonEmpty,
            t => t,
        }
    }

    /// Compact JSON, written as is.
    pub(crate) fn is_json(self) -> bool {
        matches!(self, JsonValue | JsonObject | JsonArray)
    }
}

// ---------------------------------------------------------------------------------------
// Lexers: how the decoder finds the extent of a terminal's text (`Bare`, `String`,
// `Number`, `JsonValue`); it then reads the value with serde_json, which checks the rest.

/// A character that may start a bare word ([`Terminal::Bare`]).
pub(crate) fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$'
}

/// A character of a word: of a bare string, keyword or tag (pest's `WCH`).
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-' | '/')
}

/// Length in bytes of the word characters at the start of `s` (a keyword, tag or bare
/// string; also the start of a number).
pub(crate) fn word_len(s: &str) -> usize {
    s.find(|c: char| !is_word_char(c)).unwrap_or(s.len())
}

/// Length of the [`Terminal::Bare`] lexeme at the start of `s` (0: none).
pub(crate) fn bare_len(s: &str) -> usize {
    match s.chars().next() {
        Some(c) if is_word_start(c) => word_len(s),
        _ => 0,
    }
}

/// A string that can be written without quotes: one whole bare lexeme, not a JSON literal,
/// and not ending in `.` or `-` (which would read as the start of something longer).
pub(crate) fn is_word(s: &str) -> bool {
    let n = bare_len(s);
    n > 0 && n == s.len() && !RESERVED.contains(&s) && !s.ends_with(['.', '-'])
}

/// Length in bytes of the JSON string literal ([`Terminal::String`]) at the start of `s`
/// (which starts with `"`); `None` when it is not closed on this line.
pub(crate) fn quoted_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            b'\n' => return None,
            _ => i += 1,
        }
    }
    None
}

/// Length of the JSON number ([`Terminal::Number`] and its bounded forms) at the start of
/// `s`.
pub(crate) fn number_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
        .unwrap_or(s.len())
}

/// Length of the compact JSON value ([`Terminal::JsonValue`]) at the start of `s` (strings
/// and brackets balanced, on one line).
pub(crate) fn json_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    match bytes.first()? {
        b'"' => quoted_len(s),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => i += quoted_len(&s[i..])? - 1,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    b'\n' => return None,
                    _ => {}
                }
                i += 1;
            }
            None
        }
        b'-' | b'0'..=b'9' => Some(number_len(s)),
        _ => {
            let n = s
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(s.len());
            (n > 0).then_some(n)
        }
    }
}

/// Offset of the first whitespace outside strings in the JSON value `s` (as [`json_len`]
/// delimits it). The grammars' JSON is compact (no whitespace between its tokens), and
/// serde_json would take a space, tab or CR there: the decoder refuses what this finds.
pub(crate) fn json_space(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i += quoted_len(&s[i..])?,
            b' ' | b'\t' | b'\r' | b'\n' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rendering_refers_to_its_deps() {
        for &t in Terminal::ALL {
            for d in t.deps() {
                assert!(t.pest().contains(d.name()), "pest {t:?} -> {d:?}");
                assert!(t.gbnf().contains(&d.gbnf_name()), "gbnf {t:?} -> {d:?}");
                assert!(t.lark().contains(&d.lark_name()), "lark {t:?} -> {d:?}");
            }
            // A lexeme is one regex in Lark and uses a character class in GBNF (what makes
            // the Lark printer turn it into a regex lexeme).
            let lexeme = t.deps().is_empty();
            assert_eq!(t.lark().starts_with('/'), lexeme, "{t:?}");
            let class = t.gbnf().starts_with('[') || t.gbnf().contains(" [");
            assert_eq!(class, lexeme, "{t:?}");
        }
    }

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<&str> = Terminal::ALL.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Terminal::ALL.len());
    }

    #[test]
    fn words() {
        assert!(is_word("a.b/c-d"));
        assert!(is_word("$ref"));
        assert!(!is_word("true"));
        assert!(!is_word("a-"));
        assert!(!is_word("1a"));
        assert!(!is_word(""));
        assert!(!is_word("é"));
        assert_eq!(bare_len("ab c"), 2);
        assert_eq!(word_len("12x y"), 3);
    }

    #[test]
    fn lexeme_lengths() {
        assert_eq!(quoted_len(r#""a\"b" x"#), Some(6));
        assert_eq!(quoted_len("\"a\nb\""), None);
        assert_eq!(number_len("-1.5e+3 x"), 7);
        assert_eq!(json_len(r#"{"a":[1,"]"]} x"#), Some(13));
        assert_eq!(json_len("null x"), Some(4));
        assert_eq!(json_len("[1\n]"), None);
        assert_eq!(json_space(r#"{"a b":[1,"\" "]}"#), None);
        assert_eq!(json_space("[ ]"), Some(1));
        assert_eq!(json_space("[1,\t2]"), Some(3));
        assert_eq!(json_space("{\"a\":1\r}"), Some(6));
        assert_eq!(json_space("\" x \""), None);
    }
}
