//! A small parser for Python call expressions as the Grammar Pruning data writes them:
//! APIMix gold calls (`AddToPlaylist(playlist='x', music_item=None)`) and the authors'
//! FoodOrdering outputs (`[BurgerOrder(number=1, toppings=[Topping(name='bacon')])]`).
//!
//! Values: calls with keyword arguments, lists, single- or double-quoted strings (escapes
//! `\\ \' \" \n \t \r \0 \xHH \uHHHH`), integers, floats, `True`, `False`, `None`.
//! Whitespace is free between tokens (`music_item = 'x'`). A trailing comma is allowed in
//! lists and argument lists. Positional arguments are an error: the data only uses names.

use std::fmt;

/// A parsed Python value.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    /// `Name(key=value, ...)`, arguments in written order.
    Call {
        /// The callee.
        name: String,
        /// Keyword arguments in written order.
        args: Vec<(String, PyValue)>,
    },
    /// `[a, b]`.
    List(Vec<PyValue>),
    /// A string literal.
    Str(String),
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
}

/// A syntax error: 1-based character column and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct PyParseError {
    /// 1-based column (in characters).
    pub column: usize,
    /// What was expected and what was found.
    pub message: String,
}

/// Parses one value that must fill the whole text (surrounding whitespace allowed).
pub fn parse(text: &str) -> Result<PyValue, PyParseError> {
    let (v, rest) = parse_prefix(text)?;
    if rest.trim().is_empty() {
        Ok(v)
    } else {
        let column = text.chars().count() - rest.chars().count() + 1;
        Err(PyParseError {
            column,
            message: format!("expected the end of the text, found {:?}", rest),
        })
    }
}

/// Parses one value at the start of `text`; returns it and the text after it.
pub fn parse_prefix(text: &str) -> Result<(PyValue, &str), PyParseError> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut p = Parser {
        chars: &chars,
        pos: 0,
    };
    let v = p.value()?;
    let byte = chars.get(p.pos).map(|c| c.0).unwrap_or(text.len());
    Ok((v, &text[byte..]))
}

struct Parser<'a> {
    chars: &'a [(usize, char)],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).map(|c| c.1)
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn err<T>(&self, expected: &str) -> Result<T, PyParseError> {
        let found = match self.peek() {
            Some(c) => format!("{c:?}"),
            None => "the end of the text".into(),
        };
        Err(PyParseError {
            column: self.pos + 1,
            message: format!("expected {expected}, found {found}"),
        })
    }

    fn eat(&mut self, c: char) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.ws();
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c == '_' || c.is_alphanumeric() || (self.pos > start && c == '.'))
        {
            if self.pos == start && self.peek().is_some_and(|c| c.is_ascii_digit()) {
                break;
            }
            self.pos += 1;
        }
        (self.pos > start).then(|| self.chars[start..self.pos].iter().map(|c| c.1).collect())
    }

    fn value(&mut self) -> Result<PyValue, PyParseError> {
        self.ws();
        match self.peek() {
            Some('[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    if self.eat(']') {
                        return Ok(PyValue::List(items));
                    }
                    items.push(self.value()?);
                    if !self.eat(',') {
                        if self.eat(']') {
                            return Ok(PyValue::List(items));
                        }
                        return self.err("`,` or `]`");
                    }
                }
            }
            Some(q @ ('\'' | '"')) => {
                self.pos += 1;
                self.string(q).map(PyValue::Str)
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => self.number(),
            Some(c) if c == '_' || c.is_alphabetic() => {
                let start = self.pos;
                let Some(name) = self.ident() else {
                    return self.err("a name");
                };
                self.ws();
                if self.peek() == Some('(') {
                    self.pos += 1;
                    return self.call_args(name);
                }
                match name.as_str() {
                    "True" => Ok(PyValue::Bool(true)),
                    "False" => Ok(PyValue::Bool(false)),
                    "None" => Ok(PyValue::None),
                    _ => {
                        self.pos = start;
                        self.err("a call, a list, a string, a number, True, False or None")
                    }
                }
            }
            _ => self.err("a call, a list, a string, a number, True, False or None"),
        }
    }

    fn call_args(&mut self, name: String) -> Result<PyValue, PyParseError> {
        let mut args: Vec<(String, PyValue)> = Vec::new();
        loop {
            if self.eat(')') {
                return Ok(PyValue::Call { name, args });
            }
            let at = self.pos;
            let Some(key) = self.ident() else {
                return self.err("a keyword argument `name=value` or `)`");
            };
            if !self.eat('=') {
                return self.err("`=` (positional arguments are not supported)");
            }
            if args.iter().any(|(k, _)| *k == key) {
                self.pos = at;
                return Err(PyParseError {
                    column: at + 1,
                    message: format!("keyword argument `{key}` repeated"),
                });
            }
            let v = self.value()?;
            args.push((key, v));
            if !self.eat(',') {
                if self.eat(')') {
                    return Ok(PyValue::Call { name, args });
                }
                return self.err("`,` or `)`");
            }
        }
    }

    fn string(&mut self, quote: char) -> Result<String, PyParseError> {
        let mut s = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err(&format!("the closing {quote}"));
            };
            self.pos += 1;
            match c {
                c if c == quote => return Ok(s),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return self.err("an escaped character");
                    };
                    self.pos += 1;
                    match e {
                        '\\' | '\'' | '"' => s.push(e),
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        'r' => s.push('\r'),
                        '0' => s.push('\0'),
                        'x' => s.push(self.hex(2)?),
                        'u' => s.push(self.hex(4)?),
                        '\n' => {}
                        _ => {
                            self.pos -= 1;
                            return self
                                .err("one of the escapes \\\\ \\' \\\" \\n \\t \\r \\0 \\x \\u");
                        }
                    }
                }
                '\n' => {
                    self.pos -= 1;
                    return self.err(&format!("the closing {quote} before the end of the line"));
                }
                c => s.push(c),
            }
        }
    }

    fn hex(&mut self, n: usize) -> Result<char, PyParseError> {
        let start = self.pos;
        let digits: String = self.chars[start..(start + n).min(self.chars.len())]
            .iter()
            .map(|c| c.1)
            .collect();
        match u32::from_str_radix(&digits, 16)
            .ok()
            .filter(|_| digits.len() == n)
            .and_then(char::from_u32)
        {
            Some(c) => {
                self.pos += n;
                Ok(c)
            }
            None => self.err(&format!("{n} hexadecimal digits")),
        }
    }

    fn number(&mut self) -> Result<PyValue, PyParseError> {
        let start = self.pos;
        if matches!(self.peek(), Some('-' | '+')) {
            self.pos += 1;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '_'))
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .map(|c| c.1)
            .filter(|c| *c != '_')
            .collect();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(PyValue::Int(i));
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(PyValue::Float(f)),
            _ => {
                self.pos = start;
                self.err("a number")
            }
        }
    }
}

impl fmt::Display for PyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyValue::Call { name, args } => {
                write!(f, "{name}(")?;
                for (i, (k, v)) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}={v}")?;
                }
                f.write_str(")")
            }
            PyValue::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            PyValue::Str(s) => {
                f.write_str("'")?;
                for c in s.chars() {
                    match c {
                        '\'' => f.write_str("\\'")?,
                        '\\' => f.write_str("\\\\")?,
                        '\n' => f.write_str("\\n")?,
                        c => write!(f, "{c}")?,
                    }
                }
                f.write_str("'")
            }
            PyValue::Int(i) => write!(f, "{i}"),
            PyValue::Float(x) => write!(f, "{x:?}"),
            PyValue::Bool(true) => f.write_str("True"),
            PyValue::Bool(false) => f.write_str("False"),
            PyValue::None => f.write_str("None"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: Vec<(&str, PyValue)>) -> PyValue {
        PyValue::Call {
            name: name.into(),
            args: args.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }

    #[test]
    fn reads_apimix_calls() {
        let v = parse("AddToPlaylist(playlist='x y', music_item=None)").unwrap();
        assert_eq!(
            v,
            call(
                "AddToPlaylist",
                vec![
                    ("playlist", PyValue::Str("x y".into())),
                    ("music_item", PyValue::None)
                ]
            )
        );
        // Spaces around `=`, no space after `,` (both occur in APIMixSNIPS).
        let v = parse("F(a = 'p',b='q')").unwrap();
        assert_eq!(
            v,
            call(
                "F",
                vec![
                    ("a", PyValue::Str("p".into())),
                    ("b", PyValue::Str("q".into()))
                ]
            )
        );
        assert_eq!(parse("F()").unwrap(), call("F", vec![]));
    }

    #[test]
    fn reads_quotes_and_escapes() {
        let v = parse(r#"F(a='it\'s', b="say \"hi\"", c='\\', d='\u00e9\x41')"#).unwrap();
        let PyValue::Call { args, .. } = v else {
            panic!("not a call")
        };
        assert_eq!(args[0].1, PyValue::Str("it's".into()));
        assert_eq!(args[1].1, PyValue::Str("say \"hi\"".into()));
        assert_eq!(args[2].1, PyValue::Str("\\".into()));
        assert_eq!(args[3].1, PyValue::Str("éA".into()));
    }

    #[test]
    fn reads_paper_orders() {
        let v = parse("[BurgerOrder(number=1, toppings=[Topping(name='bacon', negation=True), ]), DrinkOrder(number=2,)]").unwrap();
        let PyValue::List(items) = &v else {
            panic!("not a list")
        };
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0],
            call(
                "BurgerOrder",
                vec![
                    ("number", PyValue::Int(1)),
                    (
                        "toppings",
                        PyValue::List(vec![call(
                            "Topping",
                            vec![
                                ("name", PyValue::Str("bacon".into())),
                                ("negation", PyValue::Bool(true))
                            ]
                        )])
                    )
                ]
            )
        );
        assert_eq!(parse("[]").unwrap(), PyValue::List(vec![]));
        assert_eq!(v.to_string(), "[BurgerOrder(number=1, toppings=[Topping(name='bacon', negation=True)]), DrinkOrder(number=2)]");
    }

    #[test]
    fn trailing_text_is_returned_by_parse_prefix_and_an_error_for_parse() {
        let s = "AddToPlaylist(artist='a')\",";
        let (v, rest) = parse_prefix(s).unwrap();
        assert_eq!(
            v,
            call("AddToPlaylist", vec![("artist", PyValue::Str("a".into()))])
        );
        assert_eq!(rest, "\",");
        let e = parse(s).unwrap_err();
        assert_eq!(e.column, 26);
        assert!(e.message.contains("end of the text"), "{e}");
    }

    #[test]
    fn malformed_input_is_located() {
        let e = parse("F(a='x)").unwrap_err();
        assert!(e.message.contains("closing '"), "{e}");
        let e = parse("F(a='x' b='y')").unwrap_err();
        assert_eq!(e.column, 9);
        assert!(e.message.contains("`,` or `)`"), "{e}");
        let e = parse("F('x')").unwrap_err();
        assert!(e.message.contains("keyword argument"), "{e}");
        let e = parse("F(a='1', a='2')").unwrap_err();
        assert!(e.message.contains("repeated"), "{e}");
        let e = parse("F(a=maybe)").unwrap_err();
        assert_eq!(e.column, 5);
        let e = parse("F(a='\\q')").unwrap_err();
        assert!(e.message.contains("escapes"), "{e}");
        assert!(parse("").is_err());
        assert!(parse("[1, 2").is_err());
    }
}
