//! Where the decoder puts what it reads: a [`serde_json::Value`] ([`ValueOut`]), or compact
//! JSON text written as it reads ([`TextOut`]), byte for byte what `serde_json::to_string`
//! writes of that value. Text needs no tree: no map per object, no string per key, no
//! second walk to serialize it.
//!
//! The decoder names each property before reading its value ([`Out::key`]), then hands the
//! value over ([`Out::insert`]); arrays announce each item ([`Out::item`]) before it is
//! read. Properties come in the order the decoder reads them, the order a `Value`'s map
//! keeps, so both outputs agree.

use serde_json::{Map, Number, Value};

/// What the decoder builds its values with.
pub(crate) trait Out {
    /// A value read.
    type V;
    /// An object being read.
    type Obj;
    /// An array being read.
    type Arr;

    fn null(&mut self) -> Self::V;
    fn bool(&mut self, b: bool) -> Self::V;
    fn number(&mut self, n: &Number) -> Self::V;
    fn str(&mut self, s: &str) -> Self::V;
    /// A string known to need no escape in JSON (read from a quoted string without one).
    fn plain_str(&mut self, s: &str) -> Self::V {
        self.str(s)
    }
    fn string(&mut self, s: String) -> Self::V;
    /// A value held whole (a const field's, a listed one).
    fn json(&mut self, v: &Value) -> Self::V;
    fn owned_json(&mut self, v: Value) -> Self::V;

    fn object(&mut self) -> Self::Obj;
    /// The next property's name.
    fn key(&mut self, o: &mut Self::Obj, k: &str);
    /// The next property's name, a declared field's: `json` is the name as a JSON string
    /// (quotes included), for outputs that write text.
    fn field_key(&mut self, o: &mut Self::Obj, name: &str, json: &str) {
        let _ = json;
        self.key(o, name);
    }
    /// The next property's name, kept for [`Out::has_own_key`]: undeclared properties
    /// and a tagged union's tag.
    fn own_key(&mut self, o: &mut Self::Obj, k: String);
    /// The value of the property just named.
    fn insert(&mut self, o: &mut Self::Obj, v: Self::V);
    /// Whether `o` has a property `k` named by [`Out::own_key`].
    fn has_own_key(&self, o: &Self::Obj, k: &str) -> bool;
    fn end_object(&mut self, o: Self::Obj) -> Self::V;

    fn array(&mut self) -> Self::Arr;
    /// Before each item.
    fn item(&mut self, a: &mut Self::Arr);
    fn push(&mut self, a: &mut Self::Arr, v: Self::V);
    fn items(&self, a: &Self::Arr) -> usize;
    fn end_array(&mut self, a: Self::Arr) -> Self::V;
}

/// Builds a [`Value`].
#[derive(Default)]
pub(crate) struct ValueOut;

/// An object being built: its map, and the name of the property whose value comes next.
pub(crate) struct ValueObj {
    map: Map<String, Value>,
    key: String,
}

impl Out for ValueOut {
    type V = Value;
    type Obj = ValueObj;
    type Arr = Vec<Value>;

    fn null(&mut self) -> Value {
        Value::Null
    }
    fn bool(&mut self, b: bool) -> Value {
        Value::Bool(b)
    }
    fn number(&mut self, n: &Number) -> Value {
        Value::Number(n.clone())
    }
    fn str(&mut self, s: &str) -> Value {
        Value::String(s.to_string())
    }
    fn string(&mut self, s: String) -> Value {
        Value::String(s)
    }
    fn json(&mut self, v: &Value) -> Value {
        v.clone()
    }
    fn owned_json(&mut self, v: Value) -> Value {
        v
    }
    fn object(&mut self) -> ValueObj {
        ValueObj {
            map: Map::new(),
            key: String::new(),
        }
    }
    fn key(&mut self, o: &mut ValueObj, k: &str) {
        o.key = k.to_string();
    }
    fn own_key(&mut self, o: &mut ValueObj, k: String) {
        o.key = k;
    }
    fn insert(&mut self, o: &mut ValueObj, v: Value) {
        o.map.insert(std::mem::take(&mut o.key), v);
    }
    fn has_own_key(&self, o: &ValueObj, k: &str) -> bool {
        o.map.contains_key(k)
    }
    fn end_object(&mut self, o: ValueObj) -> Value {
        Value::Object(o.map)
    }
    fn array(&mut self) -> Vec<Value> {
        Vec::new()
    }
    fn item(&mut self, _: &mut Vec<Value>) {}
    fn push(&mut self, a: &mut Vec<Value>, v: Value) {
        a.push(v);
    }
    fn items(&self, a: &Vec<Value>) -> usize {
        a.len()
    }
    fn end_array(&mut self, a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}

/// Writes compact JSON text as the decoder reads.
#[derive(Default)]
pub(crate) struct TextOut {
    pub(crate) text: String,
}

/// An object being written: whether a property was, and the names kept for
/// [`Out::has_own_key`] (none allocated for an object without undeclared properties).
pub(crate) struct TextObj {
    first: bool,
    own: Vec<String>,
}

impl TextOut {
    fn sep(&mut self, first: &mut bool) {
        if *first {
            *first = false;
        } else {
            self.text.push(',');
        }
    }

    fn write_key(&mut self, o: &mut TextObj, k: &str) {
        self.sep(&mut o.first);
        write_escaped(k, &mut self.text);
        self.text.push(':');
    }
}

/// A JSON string as `serde_json` writes it: `"`, `\` and control characters escaped,
/// nothing else.
pub(crate) fn write_escaped(s: &str, out: &mut String) {
    if needs_escape(s.as_bytes()) {
        out.push_str(&serde_json::to_string(s).unwrap_or_default());
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// Whether JSON escapes anything in `s`: a `"`, a `\` or a control character. Eight bytes
/// at a time (names and values are mostly short ASCII).
pub(crate) fn needs_escape(s: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte of `x` is zero (exact as a whole: a borrow only follows a byte that is).
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    let mut chunks = s.chunks_exact(8);
    for chunk in &mut chunks {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let x = u64::from_ne_bytes(bytes);
        // A byte below 0x20 (exact as a whole for the same reason).
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
        if control
            || has_zero(x ^ (ONES * u64::from(b'"')))
            || has_zero(x ^ (ONES * u64::from(b'\\')))
        {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

impl Out for TextOut {
    type V = ();
    type Obj = TextObj;
    /// Items so far.
    type Arr = usize;

    fn null(&mut self) {
        self.text.push_str("null");
    }
    fn bool(&mut self, b: bool) {
        self.text.push_str(if b { "true" } else { "false" });
    }
    fn number(&mut self, n: &Number) {
        // `Number`'s `Display` is its serialization (itoa, or the shortest float form).
        use std::fmt::Write;
        let _ = write!(self.text, "{n}");
    }
    fn str(&mut self, s: &str) {
        write_escaped(s, &mut self.text);
    }
    fn plain_str(&mut self, s: &str) {
        self.text.push('"');
        self.text.push_str(s);
        self.text.push('"');
    }
    fn string(&mut self, s: String) {
        write_escaped(&s, &mut self.text);
    }
    fn json(&mut self, v: &Value) {
        self.text
            .push_str(&serde_json::to_string(v).unwrap_or_default());
    }
    fn owned_json(&mut self, v: Value) {
        self.json(&v);
    }
    fn object(&mut self) -> TextObj {
        self.text.push('{');
        TextObj {
            first: true,
            own: Vec::new(),
        }
    }
    fn key(&mut self, o: &mut TextObj, k: &str) {
        self.write_key(o, k);
    }
    fn field_key(&mut self, o: &mut TextObj, _: &str, json: &str) {
        self.sep(&mut o.first);
        self.text.push_str(json);
        self.text.push(':');
    }
    fn own_key(&mut self, o: &mut TextObj, k: String) {
        self.write_key(o, &k);
        o.own.push(k);
    }
    fn insert(&mut self, _: &mut TextObj, _: ()) {}
    fn has_own_key(&self, o: &TextObj, k: &str) -> bool {
        o.own.iter().any(|x| x == k)
    }
    fn end_object(&mut self, _: TextObj) {
        self.text.push('}');
    }
    fn array(&mut self) -> usize {
        self.text.push('[');
        0
    }
    fn item(&mut self, a: &mut usize) {
        if *a > 0 {
            self.text.push(',');
        }
        *a += 1;
    }
    fn push(&mut self, _: &mut usize, _: ()) {}
    fn items(&self, a: &usize) -> usize {
        *a
    }
    fn end_array(&mut self, _: usize) {
        self.text.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The word-at-a-time check agrees with the byte-by-byte one, at every position.
    #[test]
    fn needs_escape_finds_every_escaped_byte() {
        for len in 0..20 {
            let clean = "aé~ \u{7f}xyzABCDEFGHIJKLMNOP".as_bytes();
            let base: Vec<u8> = clean.iter().copied().cycle().take(len).collect();
            assert!(!needs_escape(&base), "{base:?}");
            for at in 0..len {
                for b in [0u8, 0x1f, b'"', b'\\', b'\n'] {
                    let mut x = base.clone();
                    x[at] = b;
                    assert!(needs_escape(&x), "{x:?}");
                }
                for b in [0x20u8, 0x21, 0x7f, 0x80, 0xff, b'#', b'[', b']'] {
                    let mut x = base.clone();
                    x[at] = b;
                    assert!(!needs_escape(&x), "{x:?}");
                }
            }
        }
    }

    /// Text written through [`TextOut`] is what `serde_json::to_string` writes.
    #[test]
    fn text_is_what_serde_json_writes() {
        let mut t = TextOut::default();
        let mut o = t.object();
        t.key(&mut o, "a\"b");
        t.number(&Number::from_f64(1.5e300).unwrap());
        t.insert(&mut o, ());
        t.own_key(&mut o, "c".into());
        let mut a = t.array();
        for s in ["x\ny", "é\u{7f}", "plain"] {
            t.item(&mut a);
            t.string(s.to_string());
        }
        t.item(&mut a);
        t.json(&json!({"k": [1, null, -0.0]}));
        t.item(&mut a);
        t.str("p q");
        t.end_array(a);
        assert!(t.has_own_key(&o, "c") && !t.has_own_key(&o, "a\"b"));
        t.end_object(o);
        let expected = json!({"a\"b": 1.5e300,
            "c": ["x\ny", "é\u{7f}", "plain", {"k": [1, null, -0.0]}, "p q"]});
        assert_eq!(t.text, serde_json::to_string(&expected).unwrap());
    }
}
