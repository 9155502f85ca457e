//! Stage 6 — the compiled artifact (`spec.json`): the schema, its shapes and notation, and
//! the entry points users call. Loading a spec rebuilds only the validator.

use crate::codec::{Decoder, Encoder};
use crate::error::{CompileError, CompressError, ExpandError, SpecError};
use crate::notation::{self, Notation, NotationConfig};
use crate::schema::SchemaDoc;
use crate::shape::{self, Shapes};
use crate::grammar;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Options for [`compile`].
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// User edits of the notation (from `dss init`'s YAML). `None` = the automatic design.
    pub notation: Option<NotationConfig>,
}

/// The serialized part of a compiled spec.
#[derive(Serialize, Deserialize)]
struct SpecFile {
    dss_spec: u32,
    schema: Value,
    shapes: Shapes,
    notation: Notation,
}

const SPEC_VERSION: u32 = 1;

/// A schema compiled to a shorthand notation. Load once, then compress/expand many times.
pub struct CompiledSpec {
    schema: Value,
    shapes: Shapes,
    notation: Notation,
    validator: jsonschema::Validator,
}

fn build_validator(schema: &Value) -> Result<jsonschema::Validator, CompileError> {
    jsonschema::options().should_validate_formats(false).build(schema).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("Unresolvable") || msg.contains("resolve") || msg.contains("Failed to retrieve") {
            CompileError::RemoteRef { pointer: e.schema_path().to_string(), reference: msg }
        } else {
            CompileError::Schema { pointer: e.schema_path().to_string(), message: msg }
        }
    })
}

/// Compile a JSON Schema document.
pub fn compile(schema: &Value, opts: &CompileOptions) -> Result<CompiledSpec, CompileError> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err(CompileError::Schema { pointer: String::new(), message: "a schema must be an object or a boolean".into() });
    }
    let doc = SchemaDoc::new(schema);
    let shapes = shape::build(&doc)?;
    let notation = notation::design(&shapes, opts.notation.as_ref())?;
    let validator = build_validator(schema)?;
    Ok(CompiledSpec { schema: schema.clone(), shapes, notation, validator })
}

impl CompiledSpec {
    /// Check an instance against the schema; the first error names the JSON pointer and keyword.
    pub fn validate(&self, instance: &Value) -> Result<(), CompressError> {
        match self.validator.iter_errors(instance).next() {
            None => Ok(()),
            Some(e) => Err(CompressError {
                pointer: e.instance_path().to_string(),
                keyword: e.kind().keyword().to_string(),
                message: e.to_string(),
            }),
        }
    }

    /// JSON -> shorthand. Validates the instance against the schema first.
    pub fn compress(&self, instance: &Value) -> Result<String, CompressError> {
        self.validate(instance)?;
        Encoder::new(&self.shapes, &self.notation).document(instance).map_err(|e| CompressError {
            pointer: e.pointer,
            keyword: "notation".into(),
            message: e.message,
        })
    }

    /// Shorthand -> JSON (exactly the JSON that was compressed).
    pub fn expand(&self, text: &str) -> Result<Value, ExpandError> {
        Decoder::new(text, &self.shapes, &self.notation).document()
    }

    /// Readable CFG with the schema's descriptions as comments (for prompts).
    pub fn grammar_bnf(&self) -> String {
        grammar::readable(&self.shapes, &self.notation)
    }
    /// pest grammar; the start rule is `document`.
    pub fn grammar_pest(&self) -> String {
        grammar::build(&self.shapes, &self.notation).to_pest()
    }
    /// GBNF for llama.cpp; the start rule is `root`.
    pub fn grammar_gbnf(&self) -> String {
        grammar::build(&self.shapes, &self.notation).to_gbnf()
    }
    /// The notation design as editable YAML (what `dss init` prints).
    pub fn notation_yaml(&self) -> String {
        let cfg = notation::to_config(&self.notation);
        let body = serde_yaml::to_string(&cfg).unwrap_or_default();
        format!(
            "# dss notation. Edit and pass back with: dss compile SCHEMA --notation THIS_FILE -o DIR\n\
             # root: block (one `key:` line per field) | line (one line) | lines (array: item per line) | value\n\
             # objects: by schema location; fields in written order. mode: positional (required, no key),\n\
             #   const (required, single value: not written), keyed (`keyword value`), keyless (value alone;\n\
             #   only when its first word cannot start anything after it). abbrev: enum value -> written word.\n\
             {body}"
        )
    }
    /// The schema this spec was compiled from.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
    pub fn shapes(&self) -> &Shapes {
        &self.shapes
    }
    pub fn notation(&self) -> &Notation {
        &self.notation
    }
    /// Serialize as `spec.json`.
    pub fn to_json(&self) -> String {
        let file = SpecFileRef { dss_spec: SPEC_VERSION, schema: &self.schema, shapes: &self.shapes, notation: &self.notation };
        serde_json::to_string(&file).unwrap_or_default()
    }
    /// Load a `spec.json`.
    pub fn from_json(text: &str) -> Result<Self, SpecError> {
        let file: SpecFile = serde_json::from_str(text).map_err(|e| SpecError::Format(format!("not a dss spec.json: {e}")))?;
        if file.dss_spec != SPEC_VERSION {
            return Err(SpecError::Format(format!(
                "spec version {} is not supported (this dss reads version {SPEC_VERSION}); recompile with `dss compile`",
                file.dss_spec
            )));
        }
        let validator = build_validator(&file.schema)?;
        Ok(CompiledSpec { schema: file.schema, shapes: file.shapes, notation: file.notation, validator })
    }
}

#[derive(Serialize)]
struct SpecFileRef<'a> {
    dss_spec: u32,
    schema: &'a Value,
    shapes: &'a Shapes,
    notation: &'a Notation,
}
