//! Typed entry points, for library users who start from Rust types: compile a type
//! through its [`schemars::JsonSchema`] derive (feature `schemars`, on by default), and
//! compress or expand Rust values through serde. The JSON in between is exactly what
//! [`CompiledSpec::compress`] and [`CompiledSpec::expand`] see, so validation and the
//! notation are the same as for a schema written by hand.

use crate::error::{CompressError, ExpandIntoError};
use crate::spec::CompiledSpec;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Compile the JSON Schema that `schemars` derives for `T` (draft 2020-12, with its
/// `$defs`), with the automatic notation. For notation edits, compile
/// `schemars::schema_for!(T)` with [`crate::compile`] and [`crate::CompileOptions`].
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, JsonSchema, PartialEq, Debug)]
/// #[serde(rename_all = "lowercase")]
/// enum Unit { Celsius, Fahrenheit }
///
/// /// A weather request.
/// #[derive(Serialize, Deserialize, JsonSchema, PartialEq, Debug)]
/// #[serde(deny_unknown_fields)]
/// struct Weather {
///     city: String,
///     #[serde(default, skip_serializing_if = "Option::is_none")]
///     unit: Option<Unit>,
/// }
///
/// let spec = dss_compiler::compile_type::<Weather>().unwrap();
/// let x = Weather { city: "Paris".into(), unit: Some(Unit::Celsius) };
/// let s = spec.compress_value(&x).unwrap();
/// assert_eq!(s, "Paris celsius");
/// assert_eq!(spec.expand_into::<Weather>(&s).unwrap(), x);
/// ```
#[cfg(feature = "schemars")]
pub fn compile_type<T: schemars::JsonSchema>() -> Result<CompiledSpec, crate::error::CompileError> {
    let schema = schemars::schema_for!(T).to_value();
    crate::compile(&schema, &crate::CompileOptions::default())
}

impl CompiledSpec {
    /// Rust value -> shorthand: the value is serialized to JSON with serde, then
    /// [`compressed`](Self::compress) (validated against the schema, then encoded).
    ///
    /// ```
    /// use serde::Serialize;
    ///
    /// #[derive(Serialize)]
    /// struct Point { x: i64, y: i64 }
    ///
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "minimum": 0}},
    ///     "required": ["x", "y"],
    ///     "additionalProperties": false
    /// });
    /// let spec = dss_compiler::compile(&schema, &Default::default()).unwrap();
    /// assert_eq!(spec.compress_value(&Point { x: -1, y: 2 }).unwrap(), "-1 2");
    /// // An invalid value names the pointer and the keyword.
    /// let e = spec.compress_value(&Point { x: 1, y: -2 }).unwrap_err();
    /// assert_eq!((e.pointer(), e.keyword()), ("/y", Some("minimum")));
    /// ```
    pub fn compress_value<T: Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> Result<String, CompressError> {
        let json =
            serde_json::to_value(value).map_err(|e| CompressError::Serialize(e.to_string()))?;
        self.compress(&json)
    }

    /// Shorthand -> Rust value: the text is [`expanded`](Self::expand) to JSON, then
    /// deserialized with serde.
    ///
    /// ```
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, Debug, PartialEq)]
    /// struct Point { x: i64, y: i64 }
    ///
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
    ///     "required": ["x", "y"],
    ///     "additionalProperties": false
    /// });
    /// let spec = dss_compiler::compile(&schema, &Default::default()).unwrap();
    /// assert_eq!(spec.expand_into::<Point>("-1 2").unwrap(), Point { x: -1, y: 2 });
    /// // Text that is not shorthand of this notation says where.
    /// let e = spec.expand_into::<Point>("-1 two").unwrap_err();
    /// assert!(e.to_string().starts_with("1:4:"), "{e}");
    /// ```
    pub fn expand_into<T: DeserializeOwned>(&self, text: &str) -> Result<T, ExpandIntoError> {
        let json = self.expand(text)?;
        serde_json::from_value(json).map_err(|e| ExpandIntoError::Deserialize(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Pair {
        a: String,
        b: u8,
    }

    fn pair_spec() -> CompiledSpec {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": false
        });
        crate::compile(&schema, &Default::default()).unwrap()
    }

    #[test]
    fn typed_round_trip() {
        let spec = pair_spec();
        let x = Pair {
            a: "x y".into(),
            b: 7,
        };
        let s = spec.compress_value(&x).unwrap();
        assert_eq!(spec.expand_into::<Pair>(&s).unwrap(), x);
    }

    #[test]
    fn serde_failures_are_typed_errors() {
        let spec = pair_spec();
        // A map with non-string keys has no JSON form.
        let mut bad = BTreeMap::new();
        bad.insert(vec![1u8], 2u8);
        let e = spec.compress_value(&bad).unwrap_err();
        assert!(matches!(e, CompressError::Serialize(_)), "{e}");
        assert_eq!((e.pointer(), e.keyword()), ("", None));
        // Valid shorthand whose JSON the Rust type does not accept (`b` over 255).
        let e = spec.expand_into::<Pair>("x 300").unwrap_err();
        assert!(matches!(e, ExpandIntoError::Deserialize(_)), "{e}");
        let e = spec.expand_into::<Pair>("x").unwrap_err();
        assert!(matches!(e, ExpandIntoError::Expand(_)), "{e}");
    }

    /// What schemars 1.x emits for the usual shapes of Rust types (`$defs` and `$ref`,
    /// `oneOf` with `const` tags for enums with data, `["T", "null"]` and
    /// `anyOf [$ref, null]` for `Option`, `prefixItems` for tuples, `additionalProperties`
    /// for maps, integer ranges with `format`, recursion) compiles and round-trips.
    #[cfg(feature = "schemars")]
    #[test]
    fn schemars_output_compiles_and_round_trips() {
        use schemars::JsonSchema;
        use std::collections::HashMap;

        #[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq, Clone)]
        enum External {
            Unit,
            Tuple(u8, String),
            Struct { a: i32 },
        }
        #[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq, Clone)]
        #[serde(tag = "t", content = "c")]
        enum Adjacent {
            A(String),
            B { n: u16 },
        }
        #[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq, Clone)]
        #[serde(untagged)]
        enum Untagged {
            Num(f64),
            Text(String),
        }
        #[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq, Clone)]
        #[serde(tag = "kind")]
        enum Internal {
            Circle { r: f64 },
            Rect { w: f64, h: f64 },
        }
        #[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq, Clone)]
        struct Tree {
            label: String,
            children: Vec<Tree>,
            parent: Option<Box<Tree>>,
        }
        #[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq, Clone)]
        struct All {
            external: Vec<External>,
            adjacent: Adjacent,
            untagged: Vec<Untagged>,
            internal: Internal,
            tree: Tree,
            maybe: Option<String>,
            maybe_enum: Option<External>,
            pair: (bool, i64),
            map: HashMap<String, u32>,
            small: u8,
        }

        let spec = compile_type::<All>().expect("compiles");
        let leaf = |l: &str| Tree {
            label: l.into(),
            children: vec![],
            parent: None,
        };
        let x = All {
            external: vec![
                External::Unit,
                External::Tuple(7, "seven".into()),
                External::Struct { a: -3 },
            ],
            adjacent: Adjacent::B { n: 9 },
            untagged: vec![Untagged::Num(1.5), Untagged::Text("x".into())],
            internal: Internal::Rect { w: 2.0, h: 0.5 },
            tree: Tree {
                label: "root".into(),
                children: vec![leaf("a"), leaf("b")],
                parent: Some(Box::new(leaf("up"))),
            },
            maybe: None,
            maybe_enum: Some(External::Unit),
            pair: (true, -1),
            map: HashMap::from([("k".to_string(), 4)]),
            small: 255,
        };
        let s = spec.compress_value(&x).expect("compresses");
        assert_eq!(spec.expand_into::<All>(&s).expect("expands"), x, "{s}");
        let y = All {
            adjacent: Adjacent::A("a".into()),
            internal: Internal::Circle { r: 1.0 },
            maybe: Some("here".into()),
            maybe_enum: None,
            ..x.clone()
        };
        let s = spec.compress_value(&y).expect("compresses");
        assert_eq!(spec.expand_into::<All>(&s).expect("expands"), y, "{s}");
        // The integer range schemars derives for `u8` is checked.
        let mut json = serde_json::to_value(&x).unwrap();
        json["small"] = serde_json::json!(256);
        let e = spec.compress(&json).unwrap_err();
        assert_eq!((e.pointer(), e.keyword()), ("/small", Some("maximum")));
    }
}
