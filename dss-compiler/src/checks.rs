//! Local assertions, checked while encoding: the bounds, lengths, `pattern`, `format`… of
//! one schema node (see [`crate::schema::KeywordClass::Local`]), each compiled into a small
//! validator of its own. They keep the validator's exact semantics (number comparison,
//! ECMA regexes, format checkers), yet run only on the values at their node, during the
//! encoder's one walk of the document: where [`Shapes::encoding_validates`], compress
//! needs no second walk with the full validator.

use crate::error::CompileError;
use crate::shape::{ExprId, Shapes};
use jsonschema::json::{Json, SerdeJson};
use serde_json::Value;

/// The validators of a spec's local assertions, by index in `Shapes::local_assertions`,
/// for the JSON representation `F` (a `serde_json::Value` by default).
pub(crate) struct LocalChecks<F: Json = SerdeJson> {
    validators: Vec<jsonschema::Validator<F>>,
}

impl<F: Json> LocalChecks<F> {
    /// Build one validator per distinct local assertion; fails if any keyword is malformed
    /// (the full validator then decides, ignoring it the way lenient validators do).
    pub(crate) fn build(shapes: &Shapes, root: &Value) -> Result<LocalChecks<F>, CompileError> {
        let validators = shapes
            .local_assertions
            .iter()
            .map(|local| build_validator(root, local))
            .collect::<Result<_, _>>()?;
        Ok(LocalChecks { validators })
    }

    /// Whether `v`, a value at expression `expr`, meets that expression's local assertions.
    pub(crate) fn admits(&self, shapes: &Shapes, expr: ExprId, v: F::Node<'_>) -> bool {
        match shapes.local_assertion(expr) {
            Some(i) => self.validators.get(i).is_some_and(|x| x.is_valid(v)),
            None => true,
        }
    }
}

/// A validator for `schema`, of instances in the JSON representation `F`, with the options
/// `root` (the schema document) calls for.
pub(crate) fn build_validator<F: Json>(
    root: &Value,
    schema: &Value,
) -> Result<jsonschema::Validator<F>, CompileError> {
    let dialect = root.get("$schema").and_then(Value::as_str).unwrap_or("");
    let mut options =
        jsonschema::options_for::<F>().should_validate_formats(crate::schema::formats_assert(root));
    // Formats are checked by their latest definition whatever the draft (as most
    // validators do): `iri` only exists from draft-07 on.
    let legacy = ["draft-03", "draft-04", "draft-06"]
        .iter()
        .any(|d| dialect.contains(d));
    if legacy {
        options = options.with_format("iri", |s: &str| url::Url::parse(s).is_ok());
    }
    // Every draft's metaschemas ship with the validator, not only the schema's own draft:
    // a `$ref` to any of them resolves without fetching.
    options
        .with_registry(&referencing::SPECIFICATIONS)
        .build(schema)
        .map_err(|e| classify(&e))
}

/// A schema the validator cannot build: a document it would have to fetch (a remote
/// `$ref`, an unknown `$schema`, a reference that does not resolve against its base) is
/// [`CompileError::RemoteRef`]; anything else is malformed at the pointer into the schema.
fn classify(e: &jsonschema::ValidationError<'_>) -> CompileError {
    use jsonschema::error::ValidationErrorKind;
    use referencing::{Error as RefError, UriError};
    let remote = match e.kind() {
        ValidationErrorKind::Referencing(r) => match r {
            RefError::Unretrievable { uri, .. } => Some(uri.clone()),
            RefError::UnknownSpecification { specification } => Some(specification.clone()),
            RefError::InvalidUri(UriError::Resolve { uri, .. }) => Some(uri.clone()),
            _ => None,
        },
        _ => None,
    };
    match remote {
        Some(reference) => CompileError::RemoteRef {
            pointer: e.schema_path().to_string(),
            reference,
        },
        None => CompileError::Schema {
            pointer: e.instance_path().to_string(),
            message: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Build failures are told apart by the validator's error kind: a document it would
    /// have to fetch is a remote reference (named by its URI), anything else a malformed
    /// schema.
    #[test]
    fn build_errors_are_classified_by_kind() {
        let remote = json!({"properties": {"a": {"$ref": "http://example.com/a.json"}}});
        match build_validator::<SerdeJson>(&remote, &remote) {
            Err(CompileError::RemoteRef { reference, .. }) => {
                assert_eq!(reference, "http://example.com/a.json")
            }
            other => panic!("{other:?}"),
        }
        let unknown = json!({"$schema": "http://example.com/meta", "type": "string"});
        match build_validator::<SerdeJson>(&unknown, &unknown) {
            Err(CompileError::RemoteRef { reference, .. }) => {
                assert_eq!(reference, "http://example.com/meta")
            }
            other => panic!("{other:?}"),
        }
        let malformed = json!({"properties": {"a": {"minimum": "three"}}});
        match build_validator::<SerdeJson>(&malformed, &malformed) {
            Err(CompileError::Schema { pointer, .. }) => {
                assert_eq!(pointer, "/properties/a/minimum")
            }
            other => panic!("{other:?}"),
        }
    }
}
