//! A small S-expression reader for FoodOrdering targets such as
//! `(MAIN_DISH_ORDER (NUMBER 1 ) (TOPPING lettuce ) )`.
//!
//! Atoms are runs of characters other than whitespace and parentheses. A document is a
//! sequence of expressions. Errors give the 1-based column and what was expected.

use std::fmt;

/// One S-expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sexpr {
    /// A bare word.
    Atom(String),
    /// A parenthesized list.
    List(Vec<Sexpr>),
}

impl Sexpr {
    /// The head atom of a list, if it starts with one.
    pub fn head(&self) -> Option<&str> {
        match self {
            Sexpr::List(items) => match items.first() {
                Some(Sexpr::Atom(a)) => Some(a),
                _ => None,
            },
            Sexpr::Atom(_) => None,
        }
    }

    /// The items of a list after its head (empty for an atom).
    pub fn args(&self) -> &[Sexpr] {
        match self {
            Sexpr::List(items) if !items.is_empty() => &items[1..],
            _ => &[],
        }
    }
}

impl fmt::Display for Sexpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sexpr::Atom(a) => f.write_str(a),
            Sexpr::List(items) => {
                f.write_str("(")?;
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{it}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A syntax error: 1-based character column and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct SexprError {
    /// 1-based column (in characters).
    pub column: usize,
    /// What was expected and found.
    pub message: String,
}

/// Reads a sequence of S-expressions (the whole text must be consumed).
pub fn parse_all(text: &str) -> Result<Vec<Sexpr>, SexprError> {
    let chars: Vec<char> = text.chars().collect();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        skip_ws(&chars, &mut pos);
        if pos >= chars.len() {
            return Ok(out);
        }
        out.push(parse_one(&chars, &mut pos)?);
    }
}

fn skip_ws(chars: &[char], pos: &mut usize) {
    while *pos < chars.len() && chars[*pos].is_whitespace() {
        *pos += 1;
    }
}

fn parse_one(chars: &[char], pos: &mut usize) -> Result<Sexpr, SexprError> {
    skip_ws(chars, pos);
    match chars.get(*pos) {
        None => Err(SexprError {
            column: *pos + 1,
            message: "expected `(` or an atom, found the end of the text".into(),
        }),
        Some(')') => Err(SexprError {
            column: *pos + 1,
            message: "unbalanced `)`".into(),
        }),
        Some('(') => {
            let open = *pos;
            *pos += 1;
            let mut items = Vec::new();
            loop {
                skip_ws(chars, pos);
                match chars.get(*pos) {
                    None => {
                        return Err(SexprError {
                            column: open + 1,
                            message: "`(` is never closed".into(),
                        })
                    }
                    Some(')') => {
                        *pos += 1;
                        return Ok(Sexpr::List(items));
                    }
                    Some(_) => items.push(parse_one(chars, pos)?),
                }
            }
        }
        Some(_) => {
            let start = *pos;
            while *pos < chars.len()
                && !chars[*pos].is_whitespace()
                && !matches!(chars[*pos], '(' | ')')
            {
                *pos += 1;
            }
            Ok(Sexpr::Atom(chars[start..*pos].iter().collect()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atom(s: &str) -> Sexpr {
        Sexpr::Atom(s.into())
    }

    #[test]
    fn reads_nested_orders() {
        let v = parse_all("(A (NUMBER 1 ) (NOT (B (OR x y ) ) ) ) (C )").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].head(), Some("A"));
        assert_eq!(
            v[0].args()[1],
            Sexpr::List(vec![
                atom("NOT"),
                Sexpr::List(vec![
                    atom("B"),
                    Sexpr::List(vec![atom("OR"), atom("x"), atom("y")])
                ])
            ])
        );
        assert_eq!(v[1], Sexpr::List(vec![atom("C")]));
        assert_eq!(v[0].to_string(), "(A (NUMBER 1) (NOT (B (OR x y))))");
    }

    #[test]
    fn empty_text_is_no_expression() {
        assert_eq!(parse_all("  ").unwrap(), vec![]);
    }

    #[test]
    fn malformed_input_is_located() {
        let e = parse_all("(A (B 1 )").unwrap_err();
        assert_eq!(e.column, 1);
        assert!(e.message.contains("never closed"));
        let e = parse_all("(A) )").unwrap_err();
        assert_eq!(e.column, 5);
        assert!(e.message.contains("unbalanced"));
    }
}
