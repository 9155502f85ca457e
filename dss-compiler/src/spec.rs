//! The compiled artifact: schema + shapes + notation, and the entry points users call.
use crate::error::{CompileError, CompressError, ExpandError, SpecError};
use crate::notation::NotationConfig;
use serde_json::Value;

/// Options for [`compile`].
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// User edits of the notation (from `dss init`'s YAML). `None` = the automatic design.
    pub notation: Option<NotationConfig>,
}

/// A schema compiled to a shorthand notation. Cheap to clone? No: load once, use many times.
pub struct CompiledSpec {
    // filled in by the implementation
}

/// Compile a JSON Schema document.
pub fn compile(_schema: &Value, _opts: &CompileOptions) -> Result<CompiledSpec, CompileError> {
    todo!()
}

impl CompiledSpec {
    /// JSON -> shorthand. Validates the instance against the schema first.
    pub fn compress(&self, _instance: &Value) -> Result<String, CompressError> {
        todo!()
    }
    /// Shorthand -> JSON.
    pub fn expand(&self, _text: &str) -> Result<Value, ExpandError> {
        todo!()
    }
    /// Readable CFG with the schema's descriptions as comments (for prompts).
    pub fn grammar_bnf(&self) -> String {
        todo!()
    }
    /// pest grammar; the start rule is `document`.
    pub fn grammar_pest(&self) -> String {
        todo!()
    }
    /// GBNF for llama.cpp; the start rule is `root`.
    pub fn grammar_gbnf(&self) -> String {
        todo!()
    }
    /// The notation design as editable YAML (what `dss init` prints).
    pub fn notation_yaml(&self) -> String {
        todo!()
    }
    /// Serialize as `spec.json`.
    pub fn to_json(&self) -> String {
        todo!()
    }
    /// Load a `spec.json`.
    pub fn from_json(_text: &str) -> Result<Self, SpecError> {
        todo!()
    }
}
