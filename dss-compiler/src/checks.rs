//! Local assertions, checked while encoding: the bounds, lengths, `pattern`, `format`… of
//! one schema node (see [`crate::schema::LOCAL_KEYWORDS`]), each compiled into a small
//! validator of its own. They keep the validator's exact semantics (number comparison,
//! ECMA regexes, format checkers), yet run only on the values at their node, during the
//! encoder's one walk of the document: where [`Shapes::encoding_validates`], compress
//! needs no second walk with the full validator.

use crate::error::CompileError;
use crate::shape::{ExprId, Shapes};
use serde_json::Value;

/// The validators of a spec's local assertions, by index in `Shapes::local_assertions`.
pub struct LocalChecks {
    validators: Vec<jsonschema::Validator>,
}

impl LocalChecks {
    /// Build one validator per distinct local assertion; fails if any keyword is malformed
    /// (the full validator then decides, ignoring it the way lenient validators do).
    pub fn build(shapes: &Shapes, root: &Value) -> Result<LocalChecks, CompileError> {
        let validators = shapes
            .local_assertions
            .iter()
            .map(|local| build_validator(root, local))
            .collect::<Result<_, _>>()?;
        Ok(LocalChecks { validators })
    }

    /// Whether `v`, a value at expression `expr`, meets that expression's local assertions.
    pub fn admits(&self, shapes: &Shapes, expr: ExprId, v: &Value) -> bool {
        match shapes.local_assertion(expr) {
            Some(i) => self.validators.get(i).is_some_and(|x| x.is_valid(v)),
            None => true,
        }
    }
}

/// A validator for `schema` with the options `root` (the schema document) calls for.
pub fn build_validator(
    root: &Value,
    schema: &Value,
) -> Result<jsonschema::Validator, CompileError> {
    let dialect = root.get("$schema").and_then(Value::as_str).unwrap_or("");
    let mut options =
        jsonschema::options().should_validate_formats(crate::schema::formats_assert(root));
    // Formats are checked by their latest definition whatever the draft (as most
    // validators do): `iri` only exists from draft-07 on.
    let legacy = ["draft-03", "draft-04", "draft-06"]
        .iter()
        .any(|d| dialect.contains(d));
    if legacy {
        options = options.with_format("iri", |s: &str| url::Url::parse(s).is_ok());
    }
    options.build(schema).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("Unresolvable")
            || msg.contains("resolve")
            || msg.contains("Failed to retrieve")
            || msg.contains("Unknown meta-schema")
        {
            CompileError::RemoteRef {
                pointer: e.schema_path().to_string(),
                reference: msg,
            }
        } else {
            CompileError::Schema {
                pointer: e.instance_path().to_string(),
                message: msg,
            }
        }
    })
}
