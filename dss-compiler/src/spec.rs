//! Stage 6 — the compiled artifact and the entry points users call.
//!
//! The saved form and the compiled form are apart (as llguidance keeps its saved
//! `TopLevelGrammar` apart from the `CGrammar` it compiles it to): a [`SpecFile`] is what
//! `spec.json` holds (the schema and the notation settings it was compiled with,
//! versioned), nothing derived; a [`CompiledSpec`] builds from it the shapes and the
//! notation (as [`compile`] does, so loading costs what compiling costs) and, on first use,
//! what is never saved: the codec's lookup [`Tables`], the validator and the local checks.

use crate::checks::{build_validator, LocalChecks};
use crate::codec::{Decoder, Doc, EncodeError, Encoder, Tables, TextJson};
use crate::error::{CompileError, CompressError, ExpandError, SpecError};
use crate::grammar::{self, Grammar};
use crate::lint::{Lint, SchemaWarning};
use crate::notation::{self, Notation, NotationConfig};
use crate::schema::SchemaDoc;
use crate::shape::{self, Shapes};
use crate::tools::{self, ToolCalls, ToolsRead};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

/// Options for [`compile`].
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// User edits of the notation (from `dss init`'s YAML). `None` = the automatic design
    /// (compact for a schema, explicit for tool definitions; see [`crate::NotationStyle`]).
    pub notation: Option<NotationConfig>,
    /// Ignore a malformed keyword value (`"type": "integr"`) with a warning instead of
    /// failing with [`CompileError::Malformed`]: the keyword is removed from the schema the
    /// spec holds, so the grammars and the validator both do without it.
    pub lenient: bool,
    /// Where the input is tool definitions (OpenAI, Anthropic, MCP): whether a document is
    /// a list of calls (the default) or one call.
    pub calls: ToolCalls,
}

/// What `spec.json` holds: the saved form of a [`CompiledSpec`], the two inputs of the
/// design and nothing derived from them. Its shapes and notation are built again from
/// them when it is loaded ([`CompiledSpec::from_file`]), as [`compile`] builds them, so the
/// loaded notation is the compiled one and the file's format does not change when the
/// compiler's internals do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    /// The format version: [`SPEC_VERSION`] (versions 1 and 2 are converted when read, see
    /// [`CompiledSpec::from_json`]).
    pub dss_spec: u32,
    /// The schema the spec was compiled from, as compiled: tool definitions already turned
    /// into the schema of their calls, a malformed keyword a lenient compile ignored
    /// already removed.
    pub schema: Value,
    /// The notation settings the design ran with: the user's edits (`dss init`'s YAML) and
    /// the style, with what [`compile`] adds for tool definitions (the named style, calls
    /// named). Absent: the automatic design.
    #[serde(default)]
    pub notation: NotationConfig,
}

/// The `spec.json` format version this dss writes. Version 3 holds the schema and the
/// notation settings only; versions 1 and 2 (which also held the shapes and the designed
/// notation) are converted when read, and other versions are refused with a message
/// saying to recompile.
pub const SPEC_VERSION: u32 = 3;

/// The first error `validator` finds in `instance`, with its pointer and keyword.
fn first_error<'i, F: jsonschema::json::Json>(
    validator: &'i jsonschema::Validator<F>,
    instance: F::Node<'i>,
) -> Result<(), CompressError> {
    // The fast check allocates nothing; errors are collected only for invalid input.
    if validator.is_valid(instance.clone()) {
        return Ok(());
    }
    match validator.iter_errors(instance).next() {
        None => Ok(()),
        Some(e) => Err(CompressError::Invalid {
            pointer: e.instance_path().to_string(),
            keyword: e.kind().keyword().to_string(),
            message: e.to_string(),
        }),
    }
}

/// Only the version of a `spec.json`, read before the rest so a file of another version
/// gets a clear error rather than a complaint about its layout.
#[derive(Deserialize)]
struct VersionOnly {
    dss_spec: u32,
}

/// What a `spec.json` text says it is, read before the rest.
fn version_of(text: &str) -> Result<u32, SpecError> {
    serde_json::from_str::<VersionOnly>(text)
        .map(|v| v.dss_spec)
        .map_err(|e| SpecError::Format(format!("not a dss spec.json: {e}")))
}

impl SpecFile {
    /// Read a `spec.json` of the current version ([`SPEC_VERSION`]) as it is saved, without
    /// building anything (an older version is [`SpecError::Version`] here; use
    /// [`CompiledSpec::from_json`], which converts it).
    pub fn from_json(text: &str) -> Result<SpecFile, SpecError> {
        let found = version_of(text)?;
        if found != SPEC_VERSION {
            return Err(SpecError::Version {
                found,
                expected: SPEC_VERSION,
            });
        }
        serde_json::from_str(text)
            .map_err(|e| SpecError::Format(format!("not a dss spec.json: {e}")))
    }

    /// Write as `spec.json`.
    pub fn to_json(&self) -> Result<String, SpecError> {
        serde_json::to_string(self).map_err(|e| SpecError::Serialize {
            what: "spec.json",
            message: e.to_string(),
        })
    }
}

/// What a [`SpecFile`] builds: what [`compile`] designs from a schema and its settings.
pub(crate) struct Built {
    pub(crate) shapes: Shapes,
    pub(crate) notation: Notation,
    pub(crate) warnings: Vec<SchemaWarning>,
}

impl Built {
    /// The schema of a saved file linted as [`compile`] lints a schema it is given (it
    /// passes: `compile` saved it linted; a file edited by hand gets the compile error),
    /// and its shapes.
    pub(crate) fn shapes_of(
        schema: &mut Value,
    ) -> Result<(Shapes, Vec<SchemaWarning>), CompileError> {
        let warnings = Lint::run(schema, "", false, true)?;
        let shapes = shape::build(&SchemaDoc::new(schema))?;
        Ok((shapes, warnings))
    }

    /// `file`'s shapes and notation, built again.
    fn of(file: &mut SpecFile) -> Result<Built, CompileError> {
        let (shapes, warnings) = Built::shapes_of(&mut file.schema)?;
        let notation = notation::design(&shapes, Some(&file.notation))?;
        Ok(Built {
            shapes,
            notation,
            warnings,
        })
    }
}

/// A schema compiled to a shorthand notation. Load once, then compress/expand many times.
pub struct CompiledSpec {
    /// The saved form.
    file: SpecFile,
    /// Its shapes (stage 2), built from `file.schema`.
    shapes: Shapes,
    /// Its notation (stage 3), designed from the shapes under `file.notation`.
    notation: Notation,
    /// The codec's lookups, built on first use (never saved).
    tables: OnceLock<Tables>,
    /// Built on first use: designing the notation does not need it, and for a large schema
    /// (Vega-Lite) building it costs more than the whole compile.
    validator: OnceLock<Result<Validated, CompileError>>,
    /// Where the encoder validates: its local checks, built on first use (`None` if a
    /// keyword is malformed: the full validator then decides).
    checks: OnceLock<Option<LocalChecks>>,
    /// The validator and the local checks of documents read from text
    /// ([`CompiledSpec::compress_str`]), built on first use as the two above are.
    text_validator: OnceLock<Result<jsonschema::Validator<TextJson>, CompileError>>,
    text_checks: OnceLock<Option<LocalChecks<TextJson>>>,
    /// The prefixes of the site paths, for pruned grammars: built on first use, once (a
    /// request rebuilds its grammar after every line).
    pub(crate) site_prefixes: OnceLock<std::collections::HashSet<String>>,
    /// The sites ([`CompiledSpec::sites`]), built on first use, once: reading the lines
    /// of a document being written needs them after every line.
    site_list: OnceLock<Vec<crate::sites::Site>>,
    /// What the schema lint noticed in the schema (not saved; a loaded spec has what the
    /// lint of its saved schema notices).
    schema_warnings: Vec<SchemaWarning>,
    /// The tool definitions [`compile`] read, where its input was tools (not saved).
    tools: Option<ToolsRead>,
}

impl std::fmt::Debug for CompiledSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSpec")
            .field("root", &self.notation.root)
            .field("shapes", &self.shapes.exprs.len())
            .field("objects", &self.notation.objects.len())
            .finish()
    }
}

/// A second spec of the same saved form and design; what is built on first use is built
/// again on first use (the validator cannot be shared).
impl Clone for CompiledSpec {
    fn clone(&self) -> Self {
        let mut spec = CompiledSpec::of_built(
            self.file.clone(),
            Built {
                shapes: self.shapes.clone(),
                notation: self.notation.clone(),
                warnings: self.schema_warnings.clone(),
            },
        );
        spec.tools = self.tools.clone();
        spec
    }
}

/// The validator, and what had to be ignored in the schema to build it.
struct Validated {
    validator: jsonschema::Validator,
    warnings: Vec<String>,
}

/// A schema that breaks its own metaschema (e.g. `anyOf` given an object) is compiled the
/// way lenient validators treat it: the malformed keyword is ignored, with a warning.
fn repair<F: jsonschema::json::Json>(
    schema: &Value,
    warnings: &mut Vec<String>,
) -> Result<(Value, jsonschema::Validator<F>), CompileError> {
    let mut fixed = schema.clone();
    crate::schema::encode_refs(&mut fixed);
    for _ in 0..32 {
        match build_validator(&fixed, &fixed) {
            Ok(v) => return Ok((fixed, v)),
            Err(CompileError::Schema { pointer, message }) if !pointer.is_empty() => {
                let Some((parent, key)) = pointer.rsplit_once('/') else {
                    break;
                };
                let key = key.replace("~1", "/").replace("~0", "~");
                let removed = match fixed.pointer_mut(parent) {
                    Some(Value::Object(m)) => m.remove(&key).is_some(),
                    _ => false,
                };
                if !removed {
                    return Err(CompileError::Schema { pointer, message });
                }
                warnings.push(format!(
                    "ignored malformed keyword at {pointer}: {message}; validation does without it"
                ));
            }
            Err(e) => return Err(e),
        }
    }
    build_validator(&fixed, &fixed).map(|v| (fixed, v))
}

/// Compile a JSON Schema document, or tool definitions: an OpenAI `tools` array (or one
/// function), Anthropic tools, an MCP `tools/list` result. Tools compile to the schema of
/// their calls, `{"<tool name>": {<arguments>}}`, a list of them (one per line) or one
/// ([`CompileOptions::calls`]); [`CompiledSpec::tools`] says what was read.
///
/// The schema is linted first: a malformed keyword value is an error
/// ([`CompileError::Malformed`], or a warning with [`CompileOptions::lenient`]), and what
/// it probably says by mistake (a misspelled keyword, a data document given as the schema)
/// is a warning ([`CompiledSpec::schema_warnings`]).
///
/// ```
/// use dss_compiler::{compile, CompileOptions};
/// let tools = serde_json::json!([{"type": "function", "function": {
///     "name": "get_weather", "description": "Weather of a city",
///     "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
///                    "required": ["city"]}}}]);
/// let spec = compile(&tools, &CompileOptions::default())?;
/// assert_eq!(spec.tools().unwrap().to_string(), "read an OpenAI tools array: 1 tool (a list of calls, one per line)");
/// let calls = serde_json::json!([{"get_weather": {"city": "Paris"}}]);
/// let text = spec.compress(&calls)?;
/// assert_eq!(spec.expand(&text)?, calls);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compile(schema: &Value, opts: &CompileOptions) -> Result<CompiledSpec, CompileError> {
    compile_cow(Cow::Borrowed(schema), opts)
}

/// [`compile`] of a schema the caller gives away: the spec keeps it (linted) instead of a
/// copy, which for a large schema is a good part of the compile (Vega-Lite's 1.9 MB).
/// Same result and errors as `compile(&schema, opts)`.
///
/// ```
/// use dss_compiler::{compile, compile_owned, CompileOptions};
/// let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}}});
/// let spec = compile_owned(schema.clone(), &CompileOptions::default())?;
/// assert_eq!(spec.file(), compile(&schema, &CompileOptions::default())?.file());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compile_owned(schema: Value, opts: &CompileOptions) -> Result<CompiledSpec, CompileError> {
    compile_cow(Cow::Owned(schema), opts)
}

fn compile_cow(
    schema: Cow<'_, Value>,
    opts: &CompileOptions,
) -> Result<CompiledSpec, CompileError> {
    let mut warnings = Vec::new();
    let (schema, tools) = match tools::read(&schema)? {
        Some(mut read) => {
            for tool in &mut read.tools {
                warnings.extend(Lint::run(
                    &mut tool.parameters,
                    &tool.parameters_pointer,
                    opts.lenient,
                    false,
                )?);
            }
            let schema = tools::calls_schema(&read.tools, opts.calls)?;
            let summary = ToolsRead {
                form: read.form,
                names: read.tools.into_iter().map(|t| t.name).collect(),
                calls: opts.calls,
            };
            (schema, Some(summary))
        }
        None => {
            if !schema.is_object() && !schema.is_boolean() {
                return Err(CompileError::Schema {
                    pointer: String::new(),
                    message: "a schema must be an object or a boolean".into(),
                });
            }
            let mut schema = schema.into_owned();
            warnings.extend(Lint::run(&mut schema, "", opts.lenient, true)?);
            (schema, None)
        }
    };
    let shapes = shape::build(&SchemaDoc::new(&schema))?;
    // Tool calls are what a model writes: without edits they take the named style, every
    // argument announced by its parameter's name.
    let mut config = match (&tools, &opts.notation) {
        (Some(_), None) => NotationConfig::with_style(notation::NotationStyle::Named),
        (_, n) => n.clone().unwrap_or_default(),
    };
    // A call always writes its tool's name (an edit may ask it of any schema).
    config.name_calls |= tools.is_some();
    let notation = notation::design(&shapes, Some(&config))?;
    let file = SpecFile {
        dss_spec: SPEC_VERSION,
        schema,
        notation: config,
    };
    let mut spec = CompiledSpec::of_built(
        file,
        Built {
            shapes,
            notation,
            warnings,
        },
    );
    spec.tools = tools;
    Ok(spec)
}

impl CompiledSpec {
    /// The spec of a saved form: its shapes and notation built again from its schema and
    /// notation settings, as [`compile`] builds them (what is derived from those is built
    /// on first use). A file of another version, or whose schema or settings do not
    /// compile, is an error.
    pub fn from_file(mut file: SpecFile) -> Result<CompiledSpec, SpecError> {
        if file.dss_spec != SPEC_VERSION {
            return Err(SpecError::Version {
                found: file.dss_spec,
                expected: SPEC_VERSION,
            });
        }
        let built = Built::of(&mut file).map_err(|e| SpecError::Build(Box::new(e)))?;
        Ok(CompiledSpec::of_built(file, built))
    }

    /// The spec of a saved form and what it builds.
    pub(crate) fn of_built(file: SpecFile, built: Built) -> CompiledSpec {
        CompiledSpec {
            file,
            shapes: built.shapes,
            notation: built.notation,
            tables: OnceLock::new(),
            validator: OnceLock::new(),
            checks: OnceLock::new(),
            text_validator: OnceLock::new(),
            text_checks: OnceLock::new(),
            site_prefixes: OnceLock::new(),
            site_list: OnceLock::new(),
            schema_warnings: built.warnings,
            tools: None,
        }
    }

    /// The saved form (what [`Self::to_json`] writes).
    pub fn file(&self) -> &SpecFile {
        &self.file
    }

    /// The sites ([`CompiledSpec::sites`]), built on first use.
    pub(crate) fn cached_sites(&self) -> &[crate::sites::Site] {
        self.site_list
            .get_or_init(|| crate::sites::sites(self.shapes(), self.notation()))
    }

    /// The codec's lookup tables, built on first use.
    pub(crate) fn tables(&self) -> &Tables {
        self.tables
            .get_or_init(|| Tables::build(&self.shapes, &self.notation))
    }

    fn encoder<N: crate::codec::JsonNode>(&self) -> Encoder<'_, N> {
        Encoder::new(&self.shapes, &self.notation, self.tables())
    }

    fn validated(&self) -> Result<&Validated, &CompileError> {
        self.validator
            .get_or_init(|| {
                let mut warnings = Vec::new();
                repair(&self.file.schema, &mut warnings).map(|(_, validator)| Validated {
                    validator,
                    warnings,
                })
            })
            .as_ref()
    }

    /// Build the validator now (it is otherwise built on first use) and report whether
    /// the schema can validate instances: remote `$ref`s, for instance, cannot.
    pub fn check_validator(&self) -> Result<(), CompileError> {
        self.validated().map(|_| ()).map_err(CompileError::clone)
    }

    /// Check an instance against the schema; the first error names the JSON pointer and keyword.
    pub fn validate(&self, instance: &Value) -> Result<(), CompressError> {
        let v = self
            .validated()
            .map_err(|e| CompressError::Schema(e.clone()))?;
        first_error(&v.validator, instance)
    }

    /// [`Self::validate`] of a document read from text, by the validator of such
    /// documents (the same schema, repaired the same way).
    fn validate_doc(&self, doc: &Doc<'_>) -> Result<(), CompressError> {
        let validator = self
            .text_validator
            .get_or_init(|| repair(&self.file.schema, &mut Vec::new()).map(|(_, v)| v))
            .as_ref()
            .map_err(|e| CompressError::Schema(e.clone()))?;
        first_error(validator, doc)
    }

    /// JSON -> shorthand. Validates the instance against the schema first (by the encoder
    /// itself where its checks are the whole validation, see [`Self::encoder_validates`]).
    ///
    /// ```
    /// use dss_compiler::error::CompressError;
    /// use dss_compiler::{compile, CompileOptions};
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    ///     "required": ["name", "age"]
    /// });
    /// let spec = compile(&schema, &CompileOptions::default())?;
    /// let text = spec.compress(&serde_json::json!({"name": "Ada", "age": 36}))?;
    /// assert_eq!(spec.expand(&text)?, serde_json::json!({"name": "Ada", "age": 36}));
    /// // An instance the schema rejects is refused, with where and why.
    /// let err = spec.compress(&serde_json::json!({"name": "Ada", "age": -1})).unwrap_err();
    /// assert!(matches!(err, CompressError::Invalid { .. }), "{err}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compress(&self, instance: &Value) -> Result<String, CompressError> {
        let notation_error = |e: EncodeError| CompressError::Unencodable {
            pointer: e.pointer,
            message: e.message,
        };
        if let Some(encoded) = self.encode_validating(instance) {
            // The encoder checks everything this schema asserts: one walk instead of two.
            // A rejected instance still gets the validator's error (pointer and keyword).
            return encoded.or_else(|e| {
                self.validate(instance)?;
                Err(notation_error(e))
            });
        }
        self.validate(instance)?;
        self.encoder().document(instance).map_err(notation_error)
    }

    /// JSON text -> shorthand: exactly [`Self::compress`] of the value `serde_json` reads
    /// from `json` (the same text, or the same error), without building that value: the
    /// document is read with its strings borrowed from the text, and validated and encoded
    /// as it is. Like `compress`, it does not check that numbers are read exactly (see
    /// [`crate::codec::check_numbers`]).
    ///
    /// ```
    /// use dss_compiler::{compile, CompileOptions};
    /// let schema = serde_json::json!({"type": "object", "properties": {
    ///     "city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]});
    /// let spec = compile(&schema, &CompileOptions::default())?;
    /// let json = r#"{"city": "Paris", "days": 3}"#;
    /// assert_eq!(spec.compress_str(json)?, "Paris days 3");
    /// assert_eq!(spec.compress_str(json)?, spec.compress(&serde_json::from_str(json)?)?);
    /// assert!(spec.compress_str(r#"{"city": "Paris""#).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Self::compress`], and [`CompressError::Json`] where `json` is not JSON.
    pub fn compress_str(&self, json: &str) -> Result<String, CompressError> {
        let doc = Doc::parse(json).map_err(|e| CompressError::json(&e))?;
        let notation_error = |e: EncodeError| CompressError::Unencodable {
            pointer: e.pointer,
            message: e.message,
        };
        if let Some(checks) = self.text_checks() {
            return self
                .encoder()
                .with_checks(checks)
                .document(&doc)
                .or_else(|e| {
                    self.validate_doc(&doc)?;
                    Err(notation_error(e))
                });
        }
        self.validate_doc(&doc)?;
        self.encoder().document(&doc).map_err(notation_error)
    }

    fn text_checks(&self) -> Option<&LocalChecks<TextJson>> {
        if !self.shapes.encoding_validates {
            return None;
        }
        self.text_checks
            .get_or_init(|| LocalChecks::build(&self.shapes, &self.file.schema).ok())
            .as_ref()
    }

    /// Whether compress validates by encoding alone (see [`Self::encode_validating`]).
    pub fn encoder_validates(&self) -> bool {
        self.local_checks().is_some()
    }

    fn local_checks(&self) -> Option<&LocalChecks> {
        if !self.shapes.encoding_validates {
            return None;
        }
        self.checks
            .get_or_init(|| LocalChecks::build(&self.shapes, &self.file.schema).ok())
            .as_ref()
    }

    /// Encode with the encoder's own checks as the whole validation: structure through the
    /// shapes, local assertions (bounds, patterns, formats) checked as values are written.
    /// `None` where that would not be a complete validation (the schema asserts something
    /// the shapes cannot check, or the spec is a version-1 file); compress then runs the
    /// full validator first. Public so tests can hold it to the validator.
    pub fn encode_validating(&self, instance: &Value) -> Option<Result<String, EncodeError>> {
        let checks = self.local_checks()?;
        Some(self.encoder().with_checks(checks).document(instance))
    }

    /// Shorthand -> JSON (exactly the JSON that was compressed), validated against the
    /// schema (Windows line endings read as `\n`): text the grammars admit can still break an assertion no grammar says (a
    /// `maximum`, a `pattern`, `uniqueItems`), and expand never returns JSON its schema
    /// rejects. Where the encoder's checks are the whole validation (see
    /// [`Self::encoder_validates`]), they validate; else the validator does.
    /// [`Self::expand_unvalidated`] skips this.
    ///
    /// ```
    /// use dss_compiler::error::ExpandError;
    /// use dss_compiler::{compile, CompileOptions};
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]},
    ///         "days": {"type": "integer", "maximum": 7}},
    ///     "required": ["city"]
    /// });
    /// let spec = compile(&schema, &CompileOptions::default())?;
    /// assert_eq!(spec.expand("Paris celsius")?, serde_json::json!({"city": "Paris", "unit": "celsius"}));
    /// // Text the notation cannot read is an error at line:column.
    /// let err = spec.expand("Paris kelvin").unwrap_err();
    /// assert_eq!(err.location(), Some((1, 7)));
    /// // JSON the schema rejects is an error at its pointer.
    /// let err = spec.expand("Paris days 9").unwrap_err();
    /// assert!(matches!(err, ExpandError::Invalid { .. }));
    /// assert_eq!(err.pointer(), Some("/days"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn expand(&self, text: &str) -> Result<Value, ExpandError> {
        let value = self.expand_unvalidated(text)?;
        self.check_expanded(&value)?;
        Ok(value)
    }

    /// Shorthand -> JSON without validating the result against the schema (faster): the
    /// text is read as strictly as by [`Self::expand`] (what the grammars say, numbers
    /// exactly), but an assertion no grammar says is not checked.
    pub fn expand_unvalidated(&self, text: &str) -> Result<Value, ExpandError> {
        let text = unix_lines(text);
        Decoder::new(&text, &self.shapes, &self.notation, self.tables()).document()
    }

    /// [`Self::expand_unvalidated`] written straight to compact JSON text: exactly what
    /// `serde_json::to_string` writes of the value it returns, without building the value
    /// (no map per object, no string per property name) or walking it again to write it.
    /// For output that is text anyway (`dss expand --no-validate --compact`, a pipeline).
    ///
    /// ```
    /// use dss_compiler::{compile, CompileOptions};
    /// let schema = serde_json::json!({"type": "object", "properties": {
    ///     "city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]});
    /// let spec = compile(&schema, &CompileOptions::default())?;
    /// let text = "Paris days 3";
    /// assert_eq!(spec.expand_unvalidated_json(text)?, r#"{"city":"Paris","days":3}"#);
    /// assert_eq!(
    ///     spec.expand_unvalidated_json(text)?,
    ///     serde_json::to_string(&spec.expand_unvalidated(text)?)?
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Self::expand_unvalidated`].
    pub fn expand_unvalidated_json(&self, text: &str) -> Result<String, ExpandError> {
        let text = unix_lines(text);
        Decoder::text(&text, &self.shapes, &self.notation, self.tables()).document_text()
    }

    /// [`Self::expand`] of text whose records' optional fields may come in any order (each
    /// once): what a model writes under a grammar pruned for its request, which offers the
    /// fields it found in any order (`CompiledSpec::pruned_grammar`). Validated like
    /// `expand`; [`Self::compress`] of the result gives the notation's own order.
    ///
    /// # Errors
    /// As [`Self::expand`], and a field given twice.
    pub fn expand_any_order(&self, text: &str) -> Result<Value, ExpandError> {
        let text = unix_lines(text);
        let value = Decoder::new(&text, &self.shapes, &self.notation, self.tables())
            .any_order()
            .document()?;
        self.check_expanded(&value)?;
        Ok(value)
    }

    /// An expanded value is valid: by the encoder's checks where they are the whole
    /// validation (one walk, no full validator to build), else by the validator.
    fn check_expanded(&self, value: &Value) -> Result<(), ExpandError> {
        if let Some(Ok(_)) = self.encode_validating(value) {
            return Ok(());
        }
        self.validate(value).map_err(|e| match e {
            CompressError::Invalid {
                pointer,
                keyword,
                message,
            } => ExpandError::Invalid {
                pointer,
                keyword,
                message,
            },
            CompressError::Schema(e) => ExpandError::Schema(e),
            other => ExpandError::Invalid {
                pointer: other.pointer().to_string(),
                keyword: String::new(),
                message: other.message().into_owned(),
            },
        })
    }

    /// Readable CFG with the schema's descriptions as comments (for prompts).
    pub fn grammar_bnf(&self) -> String {
        grammar::readable(&self.shapes, &self.notation, &self.file.schema, true)
    }
    /// The readable CFG a prompt shows beside the grammar a model writes under: undeclared
    /// properties only where `opts` lets the model write them (see
    /// [`GrammarOptions::allow_undeclared`](crate::prune::GrammarOptions::allow_undeclared)).
    pub fn prompt_grammar(&self, opts: crate::request::GrammarOptions) -> String {
        grammar::readable(
            &self.shapes,
            &self.notation,
            &self.file.schema,
            opts.allow_undeclared,
        )
    }
    /// pest grammar; the start rule is `document`.
    pub fn grammar_pest(&self) -> String {
        grammar::build(&self.shapes, &self.notation).to_pest()
    }
    /// The grammar IR of the notation, which every grammar dialect is printed from
    /// ([`Grammar::to_gbnf`], [`Grammar::to_lark`], [`Grammar::to_pest`]); dss-runtime's
    /// engines take it as it is.
    pub fn grammar(&self) -> Grammar {
        grammar::build(&self.shapes, &self.notation)
    }
    /// GBNF for llama.cpp; the start rule is `root`. XGrammar (vLLM's and SGLang's default
    /// structured-output backend) reads it as it is (`Grammar.from_ebnf(text, "root")`).
    pub fn grammar_gbnf(&self) -> String {
        grammar::build(&self.shapes, &self.notation).to_gbnf()
    }
    /// Lark for llguidance (vLLM's `guidance` backend, SGLang's `llguidance` backend,
    /// OpenAI's CFG custom tools); the start rule is `start`. It is printed from the same
    /// grammar IR as the GBNF ([`crate::grammar::lark`]), so it says the same language.
    pub fn grammar_lark(&self) -> Result<String, SpecError> {
        Ok(grammar::build(&self.shapes, &self.notation).to_lark()?)
    }
    /// The notation design as editable YAML (what `dss init` prints).
    pub fn notation_yaml(&self) -> Result<String, SpecError> {
        let cfg = notation::to_config(&self.notation, &self.shapes);
        let body = serde_norway::to_string(&cfg).map_err(|e| SpecError::Serialize {
            what: "notation YAML",
            message: e.to_string(),
        })?;
        Ok(format!(
            "# dss notation. Edit and pass back with: dss compile SCHEMA --notation THIS_FILE -o DIR\n\
             # root: block (a line per field of the root object: `keyword value`, or a section `keyword:`\n\
             #   with one item per line; plain lines first, then sections; `positional` there means\n\
             #   required) | line (one line) | lines (array: item per line) | value\n\
             # objects: by schema location; fields in written order. mode: positional (required, no key),\n\
             #   const (required, single value: not written), keyed (`keyword value`), flag (optional,\n\
             #   single value: `keyword` alone), keyless (value alone; only when its first word cannot\n\
             #   start anything after it). abbrev: enum value -> written word. style: compact (default)\n\
             #   | explicit (the fields not listed are all written `keyword value`). name_calls: true\n\
             #   writes an object of one required property `name` as `name …`, as tool calls are.\n\
             {body}"
        ))
    }
    /// What validation had to ignore in the schema (malformed keywords), for the user to see.
    pub fn warnings(&self) -> Vec<String> {
        self.validated()
            .map(|v| v.warnings.clone())
            .unwrap_or_default()
    }
    /// Every assertion of the schema the grammars do not say, by JSON pointer: checked
    /// only after generation (by the validator in [`Self::expand`]). Empty when the
    /// grammar says everything a schema's nodes assert (see `gaps.rs` for what counts).
    pub fn grammar_gaps(&self) -> Vec<crate::grammar::GrammarGap> {
        let schema = self.schema();
        crate::gaps::gaps(schema, crate::schema::formats_assert(schema))
    }
    /// What [`compile`] noticed in the schema: misspelled keywords, malformed values it
    /// ignored (compiled leniently, or annotations), a data document or a tool definition
    /// given as a schema; each says what it means for the grammar. Empty for a spec loaded
    /// from `spec.json`.
    pub fn schema_warnings(&self) -> &[SchemaWarning] {
        &self.schema_warnings
    }
    /// The tool definitions [`compile`] read, where its input was tools (`None`: a schema,
    /// or a spec loaded from `spec.json`).
    pub fn tools(&self) -> Option<&ToolsRead> {
        self.tools.as_ref()
    }
    /// The schema this spec was compiled from: for tool definitions, the schema of their
    /// calls; compiled leniently, without the malformed keywords it ignored.
    pub fn schema(&self) -> &Value {
        &self.file.schema
    }
    /// The shapes of the schema (stage 2).
    pub(crate) fn shapes(&self) -> &Shapes {
        &self.shapes
    }
    /// The notation designed for them (stage 3).
    pub(crate) fn notation(&self) -> &Notation {
        &self.notation
    }
    /// The files `dss compile -o DIR` writes, by name: `spec.json`, `shorthand.bnf`,
    /// `shorthand.pest`, `shorthand.gbnf`, `shorthand.lark`.
    pub fn artifacts(&self) -> Result<Vec<(&'static str, String)>, SpecError> {
        let g = grammar::build(&self.shapes, &self.notation);
        Ok(vec![
            ("spec.json", self.to_json()?),
            ("shorthand.bnf", self.grammar_bnf()),
            ("shorthand.pest", g.to_pest()),
            ("shorthand.gbnf", g.to_gbnf()),
            ("shorthand.lark", g.to_lark()?),
        ])
    }

    /// Serialize as `spec.json` (the [`SpecFile`]).
    pub fn to_json(&self) -> Result<String, SpecError> {
        self.file.to_json()
    }
    /// Load a `spec.json`: its schema and notation settings are compiled again
    /// ([`Self::from_file`]). A file of version 1 or 2 (which also saved the shapes and
    /// the designed notation) is converted: its notation settings are found among the
    /// automatic styles and the edits its saved notation reads back as, and the file
    /// loads if they design exactly that notation again; else it is
    /// [`SpecError::Unconvertible`]. Any other version is [`SpecError::Version`].
    ///
    /// ```
    /// use dss_compiler::error::SpecError;
    /// use dss_compiler::CompiledSpec;
    /// // The bundled viz spec, as `dss compile` wrote it.
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../grammars/viz/spec.json");
    /// let spec = CompiledSpec::from_json(&std::fs::read_to_string(path)?)?;
    /// let x = serde_json::json!({"fields": [{"fieldName": "Sales"}]});
    /// assert_eq!(spec.expand(&spec.compress(&x)?)?, x);
    /// // Anything else is refused with a clear error.
    /// assert!(CompiledSpec::from_json("{}").is_err());
    /// let future = CompiledSpec::from_json(r#"{"dss_spec": 9, "schema": {}}"#).unwrap_err();
    /// assert!(matches!(future, SpecError::Version { found: 9, .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json(text: &str) -> Result<Self, SpecError> {
        match version_of(text)? {
            found @ (1 | 2) => {
                let (file, built) = crate::spec_legacy::convert(found, text)?;
                Ok(CompiledSpec::of_built(file, built))
            }
            _ => CompiledSpec::from_file(SpecFile::from_json(text)?),
        }
    }
}

/// Windows line endings (`\r\n`) read as `\n`: the columns of every error stay those of the
/// text given (a `\r` ends its line). A lone `\r` is left, for the decoder to name.
fn unix_lines(text: &str) -> std::borrow::Cow<'_, str> {
    // A byte search (memchr) first: most text has no carriage return at all.
    if text.as_bytes().contains(&b'\r') && text.contains("\r\n") {
        std::borrow::Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::check_numbers;
    use crate::notation::NotationStyle;
    use serde_json::json;

    fn viz() -> Value {
        json!({
            "type": "object",
            "properties": {
                "fields": {"type": "array", "items": {"$ref": "#/$defs/field"}},
                "chart": {"enum": ["bar", "line"]}
            },
            "required": ["fields"],
            "additionalProperties": false,
            "$defs": {"field": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Field name."},
                    "agg": {"enum": ["sum", "avg"]},
                    "relative-date": {"type": "integer"},
                    "kind": {"const": "field"}
                },
                "required": ["name", "kind"],
                "additionalProperties": false
            }}
        })
    }

    /// `schema` compiled under the notation `cfg`.
    fn compile_with(schema: &Value, cfg: NotationConfig) -> Result<CompiledSpec, CompileError> {
        compile(
            schema,
            &CompileOptions {
                notation: Some(cfg),
                ..Default::default()
            },
        )
    }

    #[test]
    fn paper_like_notation_round_trips() {
        let spec = compile(&viz(), &CompileOptions::default()).unwrap();
        let x = json!({"fields": [{"name": "Sales", "agg": "sum", "kind": "field"}, {"name": "Region", "kind": "field", "relative-date": 3}], "chart": "bar"});
        let s = spec.compress(&x).unwrap();
        // A line item's leading free string is quoted, so a keyword-like line (`limit 5`)
        // is never read as an item.
        assert_eq!(
            s,
            "chart bar\nfields:\n\"Sales\" sum\n\"Region\" relative-date 3\n"
        );
        assert_eq!(spec.expand(&s).unwrap(), x);
        let bare = "chart bar\nfields:\nSales sum\n";
        let e = spec.expand(bare).unwrap_err();
        assert_eq!(e.location(), Some((3, 1)), "{e}");
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        assert!(pest_vm::Vm::new(rules).parse("document", bare).is_err());
        // The final newline may be left out.
        assert_eq!(spec.expand(s.trim_end()).unwrap(), x);
    }

    /// Compress of a JSON text gives what compress of the value read from it gives: the
    /// same shorthand, or the same error (pointer, keyword, message), whether the encoder
    /// validates or the validator does.
    #[test]
    fn compress_of_text_is_compress_of_its_value() {
        let validating = compile(&viz(), &CompileOptions::default()).unwrap();
        let mut bounded = viz();
        bounded["properties"]["chart"] = json!({"enum": ["bar", "line"], "not": {"const": "line"}});
        let validated = compile(&bounded, &CompileOptions::default()).unwrap();
        assert!(!validated.shapes().encoding_validates);
        for spec in [&validating, &validated] {
            for text in [
                r#"{"fields": [{"name": "Sales", "agg": "sum", "kind": "field"}], "chart": "bar"}"#,
                r#"{"chart": "bar", "fields": [{"kind": "field", "name": "a\"b"}]}"#,
                r#"{"fields": [{"name": 1, "kind": "field"}]}"#,
                r#"{"fields": [], "extra": 1}"#,
                r#"{"fields": [], "chart": "line"}"#,
                r#"{"fields": [], "chart": "bar", "chart": "pie"}"#,
                r#"[1, 2]"#,
            ] {
                let value: Value = serde_json::from_str(text).unwrap();
                let (a, b) = (spec.compress_str(text), spec.compress(&value));
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{text}");
            }
        }
        let e = validating.compress_str(r#"{"fields": ["#).unwrap_err();
        assert!(
            matches!(
                e,
                CompressError::Json {
                    line: 1,
                    column: 12,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "invalid JSON at line 1 column 12: EOF while parsing a list"
        );
    }

    #[test]
    fn compress_names_pointer_and_keyword() {
        let spec = compile(&viz(), &CompileOptions::default()).unwrap();
        // The encoder alone validates this schema; its rejections still get the
        // validator's pointer and keyword.
        assert!(spec.shapes().encoding_validates);
        let e = spec
            .compress(&json!({"fields": [{"name": 1, "kind": "field"}]}))
            .unwrap_err();
        assert_eq!(e.pointer(), "/fields/0/name");
        assert_eq!(e.keyword(), Some("type"));
        let e = spec
            .compress(&json!({"fields": [], "extra": 1}))
            .unwrap_err();
        assert_eq!(e.keyword(), Some("additionalProperties"));
        // A bound the shapes do not capture: the validator runs first.
        let mut bounded = viz();
        bounded["$defs"]["field"]["properties"]["chart"] = json!({"allOf": [{"minimum": 1}]});
        bounded["$defs"]["field"]["properties"]["relative-date"]["maximum"] = json!(10);
        let spec = compile(&bounded, &CompileOptions::default()).unwrap();
        assert!(!spec.encoder_validates());
        let e = spec
            .compress(&json!({"fields": [{"name": "a", "kind": "field", "relative-date": 11}]}))
            .unwrap_err();
        assert_eq!(
            (e.pointer(), e.keyword()),
            ("/fields/0/relative-date", Some("maximum"))
        );
    }

    /// Local assertions (bounds, lengths, patterns, formats…) are checked by the encoder,
    /// each at its own node, with the validator's semantics; its rejections still get the
    /// validator's pointer and keyword.
    #[test]
    fn encoder_checks_local_assertions() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                // Equal shapes (free strings) share a canonical expression in the
                // notation; each keeps its own assertions.
                "plain": {"type": "string"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "mail": {"type": "string", "format": "email"},
                "qty": {"$ref": "#/definitions/qty"},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 3},
                         "uniqueItems": true},
                "meta": {"type": "object", "additionalProperties": {"type": "integer",
                         "multipleOf": 5}}
            },
            "definitions": {"qty": {"type": "integer", "minimum": 1, "maximum": 9}}
        });
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(spec.encoder_validates());
        let ok = json!({"plain": "anything", "code": "ABC", "mail": "a@b.org", "qty": 3,
                        "tags": ["x", "yz"], "meta": {"a": 10}});
        let s = spec.compress(&ok).unwrap();
        assert_eq!(spec.expand(&s).unwrap(), ok);
        for (change, pointer, keyword) in [
            (json!({"code": "abc"}), "/code", "pattern"),
            (json!({"mail": "not an address"}), "/mail", "format"),
            (json!({"qty": 10}), "/qty", "maximum"),
            (json!({"tags": ["x", "long"]}), "/tags/1", "maxLength"),
            (json!({"tags": ["x", "x"]}), "/tags", "uniqueItems"),
            (json!({"meta": {"a": 7}}), "/meta/a", "multipleOf"),
        ] {
            let mut bad = ok.clone();
            for (k, v) in change.as_object().unwrap() {
                bad[k] = v.clone();
            }
            assert!(
                matches!(spec.encode_validating(&bad), Some(Err(_))),
                "{bad}"
            );
            let e = spec.compress(&bad).unwrap_err();
            assert_eq!((e.pointer(), e.keyword()), (pointer, Some(keyword)));
        }
        // A spec file keeps the assertions.
        let loaded = CompiledSpec::from_json(&spec.to_json().unwrap()).unwrap();
        assert!(loaded.encoder_validates());
        assert!(loaded.compress(&json!({"qty": 0})).is_err());
    }

    /// A union of branches with disjoint JSON types (`X` or `null`) is exact: the value's
    /// type selects the branch, and so which local assertions apply. Overlapping branches
    /// leave the validation to the validator.
    #[test]
    fn disjoint_unions_are_checked_by_the_encoder() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]},
                "size": {"oneOf": [{"$ref": "#/$defs/box"}, {"type": "integer", "minimum": 3}]}
            },
            "$defs": {"box": {"type": "object", "properties": {
                "w": {"type": "number", "exclusiveMinimum": 0}
            }, "required": ["w"]}}
        });
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(spec.encoder_validates());
        for ok in [
            json!({"name": "ab", "size": 3}),
            json!({"name": null, "size": {"w": 1.5}}),
        ] {
            let s = spec.compress(&ok).unwrap();
            assert_eq!(spec.expand(&s).unwrap(), ok);
        }
        for (bad, pointer) in [
            (json!({"name": "abc"}), "/name"),
            (json!({"size": 2}), "/size"),
            (json!({"size": {"w": 0}}), "/size"),
            (json!({"size": "big"}), "/size"),
        ] {
            assert!(
                matches!(spec.encode_validating(&bad), Some(Err(_))),
                "{bad}"
            );
            assert_eq!(spec.compress(&bad).unwrap_err().pointer(), pointer, "{bad}");
        }
        let overlapping = json!({"anyOf": [{"type": "integer", "maximum": 1}, {"type": "number"}]});
        let spec = compile(&overlapping, &CompileOptions::default()).unwrap();
        assert!(!spec.encoder_validates());
        assert!(spec.compress(&json!(7.5)).is_ok());
    }

    /// Closed object branches that declare different property names (one function call
    /// of several): the merged record checks each property against its own branch, and
    /// the union's check which branch's names the object has.
    #[test]
    fn keyed_object_unions_are_checked_by_the_encoder() {
        let call = |name: &str, arg: Value| {
            json!({"type": "object", "properties": {name: {"type": "object",
                "properties": {"n": arg}, "required": ["n"], "additionalProperties": false}},
                "required": [name], "additionalProperties": false})
        };
        for key in ["anyOf", "oneOf"] {
            let schema = json!({key: [
                call("get", json!({"type": "integer", "maximum": 5})),
                call("put", json!({"type": "string"})),
                {"type": "object", "properties": {"x": {"type": "string"}},
                 "additionalProperties": false}
            ]});
            let spec = compile(&schema, &CompileOptions::default()).unwrap();
            assert!(spec.encoder_validates(), "{key}");
            for ok in [
                json!({"get": {"n": 5}}),
                json!({"put": {"n": "a"}}),
                json!({"x": "y"}),
            ] {
                let s = spec.compress(&ok).unwrap();
                assert_eq!(spec.expand(&s).unwrap(), ok);
            }
            for bad in [
                json!({"get": {"n": 6}}),
                json!({"get": {"n": 1}, "put": {"n": "a"}}),
                json!({"get": {"n": 1}, "x": "y"}),
                json!({"put": {"n": 1}}),
            ] {
                assert!(
                    matches!(spec.encode_validating(&bad), Some(Err(_))),
                    "{key} {bad}"
                );
                assert!(spec.compress(&bad).is_err(), "{key} {bad}");
            }
            // `{}` is the third branch only (the others require their key).
            assert!(spec.compress(&json!({})).is_ok(), "{key}");
        }
        // A name declared by two branches, or an open branch: the validator decides.
        for schema in [
            json!({"anyOf": [call("get", json!({"type": "integer"})), call("get", json!({}))]}),
            json!({"anyOf": [call("get", json!({"type": "integer"})), {"type": "object"}]}),
        ] {
            let spec = compile(&schema, &CompileOptions::default()).unwrap();
            assert!(!spec.encoder_validates(), "{schema}");
        }
    }

    /// `patternProperties` is checked whole at its object: a declared property matching a
    /// pattern must satisfy both schemas, an undeclared one the schemas of the patterns it
    /// matches, or else `additionalProperties`.
    #[test]
    fn pattern_properties_are_checked_by_the_encoder() {
        // Draft-07: a draft-04 schema with integers is checked by the validator (its
        // integers have no fraction; see `draft_04_integers_have_no_fraction`).
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"x_id": {"type": "integer"}},
            "patternProperties": {"^x_": {"type": "integer", "minimum": 0}},
            "additionalProperties": {"type": "string"}
        });
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(spec.encoder_validates());
        let ok = json!({"x_id": 1, "x_n": 2, "name": "a"});
        let s = spec.compress(&ok).unwrap();
        assert_eq!(spec.expand(&s).unwrap(), ok);
        for (bad, keyword) in [
            (json!({"x_id": -1}), "minimum"),
            (json!({"x_n": "two"}), "type"),
            (json!({"name": 3}), "type"),
        ] {
            assert!(
                matches!(spec.encode_validating(&bad), Some(Err(_))),
                "{bad}"
            );
            assert_eq!(
                spec.compress(&bad).unwrap_err().keyword(),
                Some(keyword),
                "{bad}"
            );
        }
        // A pattern schema that refers elsewhere: the validator decides.
        let mut referring = schema.clone();
        referring["patternProperties"]["^x_"] = json!({"$ref": "#/definitions/n"});
        referring["definitions"] = json!({"n": {"type": "integer"}});
        let spec = compile(&referring, &CompileOptions::default()).unwrap();
        assert!(!spec.encoder_validates());
    }

    /// A malformed keyword value is an error; compiled leniently it is removed, so the
    /// shapes, the local checks and the validator all do without it.
    #[test]
    fn malformed_values_are_errors_or_removed_when_lenient() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": "three"},
            "s": {"type": "string", "maxLength": 2}
        }});
        match compile(&schema, &CompileOptions::default()) {
            Err(CompileError::Malformed { pointer, .. }) => {
                assert_eq!(pointer, "/properties/n/minimum")
            }
            other => panic!("{other:?}"),
        }
        let lenient = CompileOptions {
            lenient: true,
            ..Default::default()
        };
        let spec = compile(&schema, &lenient).unwrap();
        assert_eq!(spec.schema_warnings().len(), 1);
        assert!(spec.schema()["properties"]["n"].get("minimum").is_none());
        assert!(spec.encoder_validates());
        assert!(spec.compress(&json!({"n": -5})).is_ok());
        assert!(spec.warnings().is_empty());
    }

    /// A malformed local keyword the lint does not see (a draft-04 form in another draft) is
    /// ignored by the full validator (as lenient validators do), so it decides.
    #[test]
    fn the_full_validator_decides_where_local_checks_cannot() {
        // A boolean `exclusiveMinimum` is draft-04's; under the default draft (2020-12) the
        // validator's meta-schema rejects it.
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 3, "exclusiveMinimum": true},
            "s": {"type": "string", "maxLength": 2}
        }});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(spec.shapes().encoding_validates);
        assert!(!spec.encoder_validates());
        // The grammar reads the boolean as its author meant it (draft-04's exclusive
        // flag: above 3), a stricter reading than the validator's, which ignores it.
        assert!(spec.compress(&json!({"n": 4})).is_ok());
        assert_eq!(spec.warnings().len(), 1, "{:?}", spec.warnings());
        assert_eq!(
            spec.compress(&json!({"s": "abc"})).unwrap_err().keyword(),
            Some("maxLength")
        );
    }

    #[test]
    fn expand_errors_say_where_and_what() {
        let spec = compile(&viz(), &CompileOptions::default()).unwrap();
        let e = spec.expand("fields:\n\"Sales\" mean\n").unwrap_err();
        assert_eq!(e.location(), Some((2, 9)));
        assert_eq!(e.found(), Some("`mean`"));
        let e = spec.expand("fields:\n\"Sales\" sum \n").unwrap_err();
        assert_eq!(e.location(), Some((2, 13)));
        let e = spec.expand("chart bar\n").unwrap_err();
        assert!(e.expected().is_some_and(|x| x.contains("fields:")), "{e}");
        let e = spec.expand("chart bar\nfields:\n\"Sales\n").unwrap_err();
        assert_eq!(e.location().map(|l| l.0), Some(3));
    }

    #[test]
    fn notation_edits_are_honoured() {
        let auto = compile(&viz(), &CompileOptions::default()).unwrap();
        let mut cfg: NotationConfig =
            serde_norway::from_str(&auto.notation_yaml().unwrap()).unwrap();
        let field = cfg.objects.get_mut("#/$defs/field").unwrap();
        for f in &mut field.fields {
            if f.name == "agg" {
                f.mode = "keyed".into();
                f.keyword = Some("by".into());
                f.abbrev.insert("avg".into(), "mean".into());
            }
        }
        let spec = compile_with(&viz(), cfg).unwrap();
        let x = json!({"fields": [{"name": "Sales", "agg": "avg", "kind": "field"}]});
        let s = spec.compress(&x).unwrap();
        assert_eq!(s, "fields:\n\"Sales\" by mean\n");
        assert_eq!(spec.expand(&s).unwrap(), x);
    }

    #[test]
    fn explicit_style_writes_every_optional_field_with_its_keyword() {
        let schema = json!({
            "type": "array",
            "items": {"type": "object", "additionalProperties": false,
              "required": ["Book"],
              "properties": {"Book": {"type": "object", "additionalProperties": false,
                "properties": {
                  "city": {"enum": ["denver", "paris"]},
                  "time": {"enum": ["monday"]},
                  "near": {"enum": ["close", "distant"]}}}}}
        });
        let x = json!([{"Book": {"city": "denver", "time": "monday", "near": "close"}}]);
        let compact = compile(&schema, &CompileOptions::default()).unwrap();
        let c = compact.compress(&x).unwrap();
        // Compact: the single value is a flag, a choice word may stand alone.
        assert!(c.contains(" time") && !c.contains("monday"), "{c}");
        let yaml = compact.notation_yaml().unwrap();
        assert!(yaml.contains("mode: flag"), "{yaml}");

        let explicit =
            compile_with(&schema, NotationConfig::with_style(NotationStyle::Explicit)).unwrap();
        let e = explicit.compress(&x).unwrap();
        assert_eq!(e, "(city denver time monday near close)\n");
        assert_eq!(explicit.expand(&e).unwrap(), x);
        // The flag form is not part of the explicit language, in the grammar and the decoder.
        assert!(explicit.expand("(time)\n").is_err());
        assert!(
            explicit.grammar_gbnf().contains("\"time \""),
            "{}",
            explicit.grammar_gbnf()
        );
        // Its YAML reproduces it: `keyed` on a single-valued field writes the value.
        let cfg: NotationConfig =
            serde_norway::from_str(&explicit.notation_yaml().unwrap()).unwrap();
        let again = compile_with(&schema, cfg).unwrap();
        assert_eq!(again.compress(&x).unwrap(), e);
        // And the compact YAML reproduces the flag.
        let cfg: NotationConfig = serde_norway::from_str(&yaml).unwrap();
        let again = compile_with(&schema, cfg).unwrap();
        assert_eq!(again.compress(&x).unwrap(), c);
        // `flag` on a field with several values is refused.
        let bad = yaml.replacen(
            "name: city\n      mode: keyless",
            "name: city\n      mode: flag",
            1,
        );
        assert_ne!(bad, yaml);
        let cfg: NotationConfig = serde_norway::from_str(&bad).unwrap();
        let err = compile_with(&schema, cfg).unwrap_err();
        assert!(err.to_string().contains("single possible value"), "{err}");
    }

    #[test]
    fn the_named_style_writes_required_fields_by_name_in_their_place() {
        let schema = json!({"type": "object", "additionalProperties": false,
            "required": ["title", "minutes"],
            "properties": {
                "title": {"type": "string"},
                "minutes": {"type": "integer"},
                "room": {"type": "string"}}});
        let x = json!({"title": "Budget review", "minutes": 30, "room": "B2"});
        let named =
            compile_with(&schema, NotationConfig::with_style(NotationStyle::Named)).unwrap();
        let text = named.compress(&x).unwrap();
        assert_eq!(text, "title \"Budget review\" minutes 30 room B2");
        assert_eq!(named.expand(&text).unwrap(), x);
        // The keyword is part of the language: the value alone, or the fields out of
        // their order, are not.
        let err = named.expand("\"Budget review\" minutes 30\n").unwrap_err();
        assert!(err.to_string().contains("`title …`"), "{err}");
        assert!(named.expand("minutes 30 title x\n").is_err());
        let gbnf = named.grammar_gbnf();
        assert!(
            gbnf.contains("\"title \" text \" minutes \" integer"),
            "{gbnf}"
        );
        assert!(
            named.grammar_bnf().contains("title <string>"),
            "{}",
            named.grammar_bnf()
        );
        // Its YAML says `named` and reproduces it; the spec file loads back.
        let yaml = named.notation_yaml().unwrap();
        assert!(yaml.contains("mode: named"), "{yaml}");
        let cfg: NotationConfig = serde_norway::from_str(&yaml).unwrap();
        assert_eq!(
            compile_with(&schema, cfg).unwrap().compress(&x).unwrap(),
            text
        );
        let back = CompiledSpec::from_json(&named.to_json().unwrap()).unwrap();
        assert_eq!(back.compress(&x).unwrap(), text);
        // `named` on an optional field is refused, as `positional` is.
        let bad = yaml.replacen(
            "name: room\n      mode: keyed",
            "name: room\n      mode: named",
            1,
        );
        assert_ne!(bad, yaml, "{yaml}");
        let cfg: NotationConfig = serde_norway::from_str(&bad).unwrap();
        assert!(compile_with(&schema, cfg).is_err());
        // The compact style keeps required fields positional.
        let compact = compile(&schema, &CompileOptions::default()).unwrap();
        assert_eq!(
            compact.compress(&x).unwrap(),
            "\"Budget review\" 30 room B2"
        );
    }

    #[test]
    fn tool_calls_take_the_named_style_by_default() {
        let tools = json!([{"type": "function", "function": {"name": "book_room",
            "parameters": {"type": "object", "required": ["title"],
                "properties": {"title": {"type": "string"}, "minutes": {"type": "integer"}}}}}]);
        let spec = compile(&tools, &CompileOptions::default()).unwrap();
        let x = json!([{"book_room": {"title": "Standup", "minutes": 15}}]);
        let text = spec.compress(&x).unwrap();
        assert_eq!(text, "book_room title Standup minutes 15\n");
        assert_eq!(spec.expand(&text).unwrap(), x);
    }

    #[test]
    fn ambiguous_edits_are_rejected() {
        let auto = compile(&viz(), &CompileOptions::default()).unwrap();
        let base: NotationConfig = serde_norway::from_str(&auto.notation_yaml().unwrap()).unwrap();
        let edit = |name: &str, mode: &str, keyword: Option<&str>| {
            let mut cfg = base.clone();
            for f in &mut cfg.objects.get_mut("#/$defs/field").unwrap().fields {
                if f.name == name {
                    f.mode = mode.into();
                    f.keyword = keyword.map(str::to_string);
                }
            }
            compile_with(&viz(), cfg).err().map(|e| e.to_string())
        };
        // An optional field cannot be positional.
        assert!(edit("agg", "positional", None)
            .unwrap()
            .contains("cannot be positional"));
        // A keyword equal to a value of a later keyless field would be read as that value.
        let mut cfg = base.clone();
        let fields = &mut cfg.objects.get_mut("#/$defs/field").unwrap().fields;
        let rd = fields
            .iter()
            .position(|f| f.name == "relative-date")
            .unwrap();
        let agg = fields.iter().position(|f| f.name == "agg").unwrap();
        fields[rd].mode = "keyed".into();
        fields[rd].keyword = Some("sum".into());
        let moved = fields.remove(rd);
        fields.insert(agg, moved);
        let e = compile_with(&viz(), cfg).unwrap_err();
        assert!(e.to_string().contains("keyword `sum`"), "{e}");
        // Unknown object names are reported.
        let mut cfg = base.clone();
        cfg.objects.insert("#/nope".into(), Default::default());
        assert!(compile_with(&viz(), cfg)
            .unwrap_err()
            .to_string()
            .contains("#/nope"));
        // A single-valued field cannot be keyless (it would be invisible).
        assert!(edit("kind", "keyless", None).is_some());
    }

    #[test]
    fn keyless_conflicts_are_detected() {
        let schema = json!({"type": "object", "properties": {
            "a": {"enum": ["x", "y"]},
            "b": {"enum": ["y", "z"]}
        }, "additionalProperties": false});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        // `y` could be either field, so neither is keyless.
        let x = json!({"b": "y"});
        // A one-line document has no final newline.
        assert_eq!(spec.compress(&x).unwrap(), "b y");
        assert_eq!(spec.expand("b y\n").unwrap(), x);
        let mut cfg: NotationConfig =
            serde_norway::from_str(&spec.notation_yaml().unwrap()).unwrap();
        for f in &mut cfg.objects.get_mut("#").unwrap().fields {
            f.mode = "keyless".into();
            f.keyword = None;
        }
        let e = compile_with(&schema, cfg).unwrap_err();
        assert!(matches!(e, CompileError::Ambiguous(_)), "{e}");
    }

    #[test]
    fn spec_json_round_trips() {
        let spec = compile(&viz(), &CompileOptions::default()).unwrap();
        let loaded = CompiledSpec::from_json(&spec.to_json().unwrap()).unwrap();
        let x = json!({"fields": [{"name": "Sales", "kind": "field"}]});
        assert_eq!(loaded.compress(&x).unwrap(), spec.compress(&x).unwrap());
        assert_eq!(loaded.to_json().unwrap(), spec.to_json().unwrap());
        assert!(CompiledSpec::from_json("{}").is_err());
    }

    /// A `spec.json` holds the schema and the notation settings, nothing derived; a file
    /// of another version is refused with an error naming the version found and the one
    /// read, and saying to recompile, whatever its layout.
    #[test]
    fn a_spec_file_of_another_version_is_refused() {
        let spec = compile(&viz(), &CompileOptions::default()).unwrap();
        let text = spec.to_json().unwrap();
        let saved: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = saved.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["dss_spec", "schema", "notation"]);
        assert_eq!(saved["dss_spec"], json!(SPEC_VERSION));
        for found in [SPEC_VERSION + 1, 0, 999_999] {
            let future = json!({"dss_spec": found, "spec": {}}).to_string();
            for e in [
                CompiledSpec::from_json(&future).unwrap_err(),
                SpecFile::from_json(&future).unwrap_err(),
            ] {
                assert!(
                    matches!(e, SpecError::Version { found: f, expected: SPEC_VERSION } if f == found),
                    "{e}"
                );
                assert_eq!(
                    e.to_string(),
                    format!("spec file: version {found} is not supported (this dss reads version {SPEC_VERSION}, and converts versions 1 and 2); recompile with `dss compile`")
                );
            }
        }
        let e = CompiledSpec::from_json(r#"{"schema": {}}"#).unwrap_err();
        assert!(e.to_string().contains("not a dss spec.json"), "{e}");
        // A `SpecFile` given to `from_file` is checked too.
        let mut file = spec.file().clone();
        file.dss_spec = 2;
        assert!(matches!(
            CompiledSpec::from_file(file),
            Err(SpecError::Version { found: 2, .. })
        ));
    }

    /// What is derivable is not saved: a derived table in the file is an unknown field, an
    /// edited schema is the spec's schema (compiled again), edits that do not compile are
    /// the compile error.
    #[test]
    fn a_spec_file_is_its_schema_and_settings() {
        let spec = compile(&viz(), &CompileOptions::default()).unwrap();
        let good: Value = serde_json::from_str(&spec.to_json().unwrap()).unwrap();
        let mut v = good.clone();
        v["shapes"] = json!({});
        let e = CompiledSpec::from_json(&v.to_string()).unwrap_err();
        assert!(e.to_string().contains("unknown field `shapes`"), "{e}");

        let mut v = good.clone();
        v["schema"]["properties"]["chart"] = json!({"enum": ["pie"]});
        let edited = CompiledSpec::from_json(&v.to_string()).unwrap();
        let x = json!({"fields": [{"name": "Sales", "kind": "field"}], "chart": "pie"});
        assert_eq!(edited.expand(&edited.compress(&x).unwrap()).unwrap(), x);

        let mut v = good.clone();
        v["notation"]["objects"] = json!({"#/nope": {}});
        let e = CompiledSpec::from_json(&v.to_string()).unwrap_err();
        assert!(matches!(e, SpecError::Build(_)), "{e}");
        assert!(e.to_string().contains("#/nope"), "{e}");

        let mut v = good.clone();
        v["schema"]["properties"]["chart"] = json!({"type": "integr"});
        let e = CompiledSpec::from_json(&v.to_string()).unwrap_err();
        assert!(
            matches!(&e, SpecError::Build(c) if matches!(**c, CompileError::Malformed { .. })),
            "{e}"
        );

        // Without settings: the automatic design.
        let mut v = good;
        v.as_object_mut().unwrap().remove("notation");
        let auto = CompiledSpec::from_json(&v.to_string()).unwrap();
        assert_eq!(auto.grammar_gbnf(), spec.grammar_gbnf());
    }

    /// A spec loaded is the spec compiled: the same notation, byte for byte, under each
    /// style and under edits.
    #[test]
    fn a_loaded_spec_designs_the_compiled_notation() {
        let auto = compile(&viz(), &CompileOptions::default()).unwrap();
        let mut edited: NotationConfig =
            serde_norway::from_str(&auto.notation_yaml().unwrap()).unwrap();
        for f in &mut edited.objects.get_mut("#/$defs/field").unwrap().fields {
            if f.name == "agg" {
                f.mode = "keyed".into();
                f.keyword = Some("by".into());
                f.abbrev.insert("avg".into(), "mean".into());
            }
        }
        for cfg in [
            None,
            Some(NotationConfig::with_style(NotationStyle::Explicit)),
            Some(NotationConfig::with_style(NotationStyle::Named)),
            Some(edited),
        ] {
            let spec = compile(
                &viz(),
                &CompileOptions {
                    notation: cfg,
                    ..Default::default()
                },
            )
            .unwrap();
            let text = spec.to_json().unwrap();
            let back = CompiledSpec::from_json(&text).unwrap();
            let json = |n: &Notation| serde_json::to_string(n).unwrap();
            assert_eq!(json(back.notation()), json(spec.notation()));
            assert_eq!(back.to_json().unwrap(), text);
            assert_eq!(back.artifacts().unwrap(), spec.artifacts().unwrap());
            let copy = back.clone();
            assert_eq!(json(copy.notation()), json(spec.notation()));
        }
    }

    #[test]
    fn pest_grammar_loads_and_parses() {
        let spec = compile(&viz(), &CompileOptions::default()).unwrap();
        let pest = spec.grammar_pest();
        let (_, rules) =
            pest_meta::parse_and_optimize(&pest).unwrap_or_else(|e| panic!("{e:?}\n{pest}"));
        let vm = pest_vm::Vm::new(rules);
        let s = spec.compress(&json!({"fields": [{"name": "Sales", "agg": "sum", "kind": "field"}], "chart": "line"})).unwrap();
        assert!(vm.parse("document", &s).is_ok());
        assert!(vm.parse("document", "fields:\n\"Sales\" summ\n").is_err());
    }

    #[test]
    fn min_items_is_part_of_the_language() {
        // A model must not be able to write an array the schema rejects for being short:
        // the mapper, pest and the GBNF all demand `minItems` items.
        let schema = json!({"type": "object", "properties": {
            "fields": {"type": "array", "minItems": 2, "items": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"],
                "additionalProperties": false}},
            "box": {"type": "object", "properties": {"size": {"type": "array", "minItems": 1,
                "maxItems": 3, "items": {"type": "integer"}}}, "additionalProperties": false},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": false, "minItems": 2}
        }, "required": ["fields"], "additionalProperties": false});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        let vm = pest_vm::Vm::new(rules);
        let good = json!({"fields": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "box": {"size": [1]}, "pair": [1, "x"]});
        let s = spec.compress(&good).unwrap();
        assert_eq!(spec.expand(&s).unwrap(), good);
        assert!(vm.parse("document", &s).is_ok(), "{s}");
        // One field line too few.
        let one = s.replacen("\"b\"\n", "", 1).replacen("\"c\"\n", "", 1);
        assert!(one.contains("fields:\n\"a\"\n"), "{one}");
        let e = spec.expand(&one).unwrap_err().to_string();
        assert!(e.contains("at least 2 lines"), "{e}");
        assert!(vm.parse("document", &one).is_err());
        // An empty inline list.
        let empty = s.replace("[1]", "[]");
        assert_ne!(empty, s);
        let e = spec.expand(&empty).unwrap_err().to_string();
        assert!(e.contains("at least 1 items"), "{e}");
        assert!(vm.parse("document", &empty).is_err());
        // A tuple: its first two places are mandatory.
        let short = s.replace("[1 x]", "[1]");
        assert_ne!(short, s);
        assert!(spec.expand(&short).is_err());
        assert!(vm.parse("document", &short).is_err());
    }

    #[test]
    fn draft_04_integers_have_no_fraction() {
        // Found by fuzzing: `150.0` is an integer from draft 6 on, not in draft 4.
        let schema = json!({"$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object", "properties": {"n": {"type": "integer"}},
            "additionalProperties": false});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(spec.compress(&json!({"n": 150.0})).is_err());
        assert!(spec.expand("n 150.0\n").is_err());
        assert_eq!(spec.expand("n 150\n").unwrap(), json!({"n": 150}));
        let later = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let spec = compile(&later, &CompileOptions::default()).unwrap();
        assert!(spec.expand("n 150.0\n").is_ok());
    }

    #[test]
    fn a_spec_whose_positional_fields_share_a_keyword_loads_back() {
        // Found by fuzzing: required names that sanitize to one keyword (never written).
        let schema = json!({"required": ["foo\nbar", "foo\"bar", "foo\\bar", "foo\rbar"]});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let back = CompiledSpec::from_json(&spec.to_json().unwrap()).unwrap();
        assert_eq!(back.grammar_pest(), spec.grammar_pest());
    }

    #[test]
    fn max_items_is_part_of_the_language() {
        // Lines of a root list, a section's lines and an inline list stop at `maxItems`.
        let schema = json!({"type": "object", "properties": {
            "calls": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "object",
                "properties": {"name": {"type": "string"},
                    "tags": {"type": "array", "maxItems": 2, "items": {"type": "integer"}}},
                "required": ["name"], "additionalProperties": false}}
        }, "required": ["calls"], "additionalProperties": false});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        let vm = pest_vm::Vm::new(rules);
        let three = json!({"calls": [{"name": "a"}, {"name": "b", "tags": [1, 2]}, {"name": "c"}]});
        let s = spec.compress(&three).unwrap();
        assert_eq!(spec.expand(&s).unwrap(), three);
        assert!(vm.parse("document", &s).is_ok(), "{s}");
        let four = s.replacen("\"c\"\n", "\"c\"\n\"d\"\n", 1);
        assert_ne!(four, s);
        assert!(vm.parse("document", &four).is_err(), "{four}");
        let tags = s.replace("[1 2]", "[1 2 3]");
        assert_ne!(tags, s);
        assert!(vm.parse("document", &tags).is_err(), "{tags}");
        let bnf = spec.grammar_bnf();
        assert!(bnf.contains("{1,3}") && bnf.contains("{0,2}"), "{bnf}");
        // A root list of at most 2 lines.
        let spec = compile(
            &json!({"type": "array", "maxItems": 2, "items": {"type": "integer"}}),
            &CompileOptions::default(),
        )
        .unwrap();
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        let vm = pest_vm::Vm::new(rules);
        assert!(vm.parse("document", "1\n2\n").is_ok());
        assert!(vm.parse("document", "").is_ok());
        assert!(vm.parse("document", "1\n2\n3\n").is_err());
    }

    #[test]
    fn bounds_and_formats_are_part_of_the_grammar() {
        // What a grammar can say of `minimum`, `minLength` and an asserted `format`, it
        // says, so a model cannot write `0` for a limit or `"last spring"` for a date.
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1},
            "offset": {"type": "integer", "minimum": 0},
            "ratio": {"type": "number", "exclusiveMinimum": 0},
            "since": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"}
        }, "required": ["name"], "additionalProperties": false});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        let vm = pest_vm::Vm::new(rules);
        let x = json!({"name": "a b", "limit": 5, "offset": 0, "ratio": 0.5,
            "since": "2024-01-31", "at": "2024-01-31T10:00:00Z"});
        let s = spec.compress(&x).unwrap();
        assert_eq!(spec.expand(&s).unwrap(), x);
        assert!(vm.parse("document", &s).is_ok(), "{s}");
        for (from, to) in [
            ("\"a b\"", "\"\""),
            ("limit 5", "limit 0"),
            ("limit 5", "limit 5.5"),
            ("limit 5", "limit 50e-1"),
            ("offset 0", "offset -1"),
            ("offset 0", "offset -0"),
            ("ratio 0.5", "ratio -0.5"),
            ("since \"2024-01-31\"", "since \"January\""),
            ("since \"2024-01-31\"", "since Jan"),
            ("since \"2024-01-31\"", "since \"2024-1-31\""),
            ("\"2024-01-31T10:00:00Z\"", "\"2024-01-31\""),
            ("\"2024-01-31T10:00:00Z\"", "\"2024-01-31T10:00:00\""),
        ] {
            let bad = s.replace(from, to);
            assert_ne!(bad, s, "{from}");
            assert!(vm.parse("document", &bad).is_err(), "{bad}");
            // The mapper reads exactly what the grammars say, with a line:column error.
            let e = spec.expand_unvalidated(&bad).unwrap_err();
            assert!(e.location().is_some(), "{bad}: {e}");
        }
        // What the grammars admit, the mapper reads.
        for (from, to) in [
            ("limit 5", "limit 5.0"),
            ("limit 5", "limit 5e0"),
            (
                "\"2024-01-31T10:00:00Z\"",
                "\"2024-01-31t10:00:00.25+01:00\"",
            ),
        ] {
            let good = s.replace(from, to);
            assert!(vm.parse("document", &good).is_ok(), "{good}");
            assert!(spec.expand(&good).is_ok(), "{good}");
        }
        // The encoder writes each number in its terminal's form: `-0` where `>= 0`.
        let neg_zero: Value = serde_json::from_str(r#"{"name": "a", "offset": -0}"#).unwrap();
        let s = spec.compress(&neg_zero).unwrap();
        assert!(
            s.contains("offset 0") && vm.parse("document", &s).is_ok(),
            "{s}"
        );
        assert_eq!(spec.expand(&s).unwrap(), json!({"name": "a", "offset": 0}));
        let bnf = spec.grammar_bnf();
        assert!(
            bnf.contains("[since <date>]") && bnf.contains("[limit <positive>]"),
            "{bnf}"
        );
        // In 2020-12 `format` is an annotation, but the grammar still writes only valid
        // dates (so a model does too): a document with another string is not written.
        let mut annotated = schema.clone();
        annotated["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        let spec = compile(&annotated, &CompileOptions::default()).unwrap();
        let x = json!({"name": "a", "since": "January"});
        let e = spec.compress(&x).unwrap_err().to_string();
        assert!(e.contains("/since") && e.contains("`date`"), "{e}");
        let x = json!({"name": "a", "since": "2024-02-29"});
        let s = spec.compress(&x).unwrap();
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        assert!(pest_vm::Vm::new(rules).parse("document", &s).is_ok(), "{s}");
        assert!(spec.expand(&s.replace("02-29", "02-30")).is_err());
    }

    #[test]
    fn patterns_are_part_of_the_grammar() {
        // The model wrote `start_time` as "2pm": the grammar no longer admits it, and the
        // decoder says where and which pattern.
        let schema = json!({"type": "object", "properties": {
            "start_time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            "quote": {"type": "string", "pattern": "^a\"b"}
        }, "required": ["start_time"]});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let x = json!({"start_time": "09:30", "quote": "a\"b\n"});
        let s = spec.compress(&x).unwrap();
        assert_eq!(s, "\"09:30\" quote \"a\\\"b\\n\"");
        assert_eq!(spec.expand(&s).unwrap(), x);
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        let vm = pest_vm::Vm::new(rules);
        assert!(vm.parse("document", &s).is_ok(), "{s}");
        for bad in [
            "\"2pm\"",
            "09",
            // The same value spelled with another escape than the grammar's.
            "\"09:30\" quote \"a\\u0022b\"",
        ] {
            assert!(vm.parse("document", bad).is_err(), "{bad}");
            let e = spec.expand(bad).unwrap_err();
            assert!(e.location().is_some(), "{bad}: {e}");
        }
        let e = spec.expand("\"09:30\" quote \"a\\u0022b\"").unwrap_err();
        assert_eq!(e.location(), Some((1, 15)), "{e}");
        let e = spec.expand("\"2pm\"").unwrap_err();
        assert_eq!(e.location(), Some((1, 1)), "{e}");
        assert!(e.to_string().contains("^[0-2][0-9]:[0-5][0-9]$"), "{e}");
        assert!(spec.compress(&json!({"start_time": "2pm"})).is_err());
        assert!(spec.grammar_gbnf().contains("pattern-0 ::="));
    }

    #[test]
    fn expand_validates_what_no_grammar_says() {
        // The grammars cannot say `maximum` alone or a look-ahead: expand still never
        // returns JSON the schema rejects, and says where.
        let schema = json!({"type": "object", "properties": {
            "days": {"type": "integer", "maximum": 7},
            "code": {"type": "string", "pattern": "^(?!X)[A-Z]+$"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
        }, "additionalProperties": false});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(spec.encoder_validates());
        assert_eq!(
            spec.expand("days 3\ncode AB\n").unwrap(),
            json!({"days": 3, "code": "AB"})
        );
        for (text, pointer, keyword) in [
            ("days 9\n", "/days", "maximum"),
            ("code XA\n", "/code", "pattern"),
            ("tags:\na\na\n", "/tags", "uniqueItems"),
        ] {
            let e = spec.expand(text).unwrap_err();
            assert_eq!(
                (e.pointer(), e.keyword()),
                (Some(pointer), Some(keyword)),
                "{text}: {e}"
            );
            assert!(e.location().is_none());
            assert!(e.to_string().contains(pointer), "{e}");
            // Without validation the text is read as it is.
            assert!(spec.expand_unvalidated(text).is_ok(), "{text}");
        }
        // Where the encoder cannot validate alone (`not`), the validator decides.
        let schema = json!({"type": "array", "items": {"type": "integer", "not": {"const": 3}}});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(!spec.encoder_validates());
        assert_eq!(spec.expand("1\n2\n").unwrap(), json!([1, 2]));
        let e = spec.expand("1\n3\n").unwrap_err();
        assert_eq!((e.pointer(), e.keyword()), (Some("/1"), Some("not")), "{e}");
    }

    #[test]
    fn numbers_are_never_changed() {
        // serde_json reads numbers as 64-bit integers or doubles: a number it would round
        // is refused (with where), never changed.
        let spec = compile(&json!({"type": "integer"}), &CompileOptions::default()).unwrap();
        for text in ["18446744073709551617", "100000000000000000001", "1e400"] {
            let e = spec.expand(text).unwrap_err();
            assert_eq!(e.location(), Some((1, 1)), "{text}: {e}");
            let e = check_numbers(text).unwrap_err();
            assert!(matches!(e, CompressError::Inexact { .. }), "{e}");
            assert!(e.to_string().starts_with("(root): the number"), "{e}");
        }
        // What JSON carries exactly goes through, the same value.
        for text in [
            "18446744073709551615",
            "-9223372036854775808",
            "100000000000000000000",
        ] {
            check_numbers(text).unwrap();
            let x: Value = serde_json::from_str(text).unwrap();
            let s = spec.compress(&x).unwrap();
            let back = spec.expand(&s).unwrap();
            assert!(crate::codec::json_eq(&back, &x), "{text} -> {s} -> {back}");
        }
        let spec = compile(&json!({"type": "number"}), &CompileOptions::default()).unwrap();
        for text in ["1e-400", "0.30000000000000000001"] {
            assert!(spec.expand(text).is_err(), "{text}");
        }
        assert_eq!(spec.expand("0.1").unwrap(), json!(0.1));
        // Inside compact JSON (an unconstrained subtree) too, at the number's column.
        let spec = compile(
            &json!({"type": "object", "properties": {"x": {}}}),
            &CompileOptions::default(),
        )
        .unwrap();
        let e = spec
            .expand("x {\"a\":[1,100000000000000000001]}")
            .unwrap_err();
        assert_eq!(e.location(), Some((1, 11)), "{e}");
        let e = check_numbers(r#"{"x": {"a": [1, 1e-400]}}"#).unwrap_err();
        assert_eq!(e.pointer(), "/x/a/1");
    }

    /// Tool specs load back: one tool (its call named), several, one call, explicit and
    /// compact notations.
    #[test]
    fn tool_specs_load_back() {
        let tool = |name: &str, params: Value| json!({"type": "function", "function": {"name": name, "parameters": params}});
        let one = json!([tool(
            "get_weather",
            json!({"type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]},
                "days": {"type": "object", "properties": {"n": {"enum": ["one", "two"]}},
                    "required": ["n"], "additionalProperties": false}},
            "required": ["city", "days"]})
        )]);
        let mut several = one.clone();
        several
            .as_array_mut()
            .unwrap()
            .push(tool("stop", json!({"type": "object", "properties": {}})));
        for tools in [one, several] {
            for calls in [ToolCalls::List, ToolCalls::One] {
                for style in [
                    None,
                    Some(NotationStyle::Compact),
                    Some(NotationStyle::Explicit),
                ] {
                    let opts = CompileOptions {
                        notation: style.map(NotationConfig::with_style),
                        calls,
                        ..Default::default()
                    };
                    let spec = compile(&tools, &opts).unwrap();
                    let back = CompiledSpec::from_json(&spec.to_json().unwrap())
                        .unwrap_or_else(|e| panic!("{tools} {calls:?} {style:?}: {e}"));
                    assert_eq!(back.grammar_gbnf(), spec.grammar_gbnf());
                }
            }
        }
    }

    #[test]
    fn fallback_and_unions() {
        // Unconstrained subtrees are compact JSON; type unions are told apart by first token.
        let schema = json!({"type": "object", "properties": {
            "meta": {},
            "v": {"type": ["string", "number", "null", "array"], "items": {"type": "boolean"}}
        }, "required": ["v"]});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        for x in [
            json!({"v": "a", "meta": {"k": [1, {"z": null}]}}),
            json!({"v": 2.5}),
            json!({"v": null, "other": "x"}),
            json!({"v": [true, false]}),
        ] {
            let s = spec.compress(&x).unwrap();
            assert_eq!(spec.expand(&s).unwrap(), x, "{s}");
        }
    }

    /// A schema that cannot validate instances (an unknown `$schema`) compiles, but
    /// compressing (where the validator must run: `not`) says why nothing can be
    /// compressed; `check_validator` says it up front.
    #[test]
    fn unusable_schemas_are_their_own_compress_error() {
        let schema = json!({"$schema": "http://example.com/meta", "type": "string",
                            "not": {"const": "b"}});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let up_front = spec.check_validator().unwrap_err();
        assert!(
            matches!(up_front, CompileError::RemoteRef { .. }),
            "{up_front}"
        );
        for e in [
            spec.compress(&json!("a")).unwrap_err(),
            spec.validate(&json!("a")).unwrap_err(),
        ] {
            assert!(matches!(e, CompressError::Schema(_)), "{e}");
            assert_eq!((e.pointer(), e.keyword()), ("", None));
            assert_eq!(
                e.to_string(),
                format!("the schema cannot validate instances: {up_front}")
            );
        }
    }

    #[test]
    fn bad_schemas_are_clear_errors() {
        let e = compile(
            &json!({"$ref": "http://example.com/s.json"}),
            &CompileOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(e, CompileError::RemoteRef { .. }), "{e}");
        let e = compile(
            &json!({"$ref": "#/$defs/missing"}),
            &CompileOptions::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(compile(&json!(3), &CompileOptions::default()).is_err());
    }

    #[test]
    fn windows_line_endings_read_and_invisible_characters_named() {
        let schema = json!({"type": "object", "required": ["items"], "properties": {
            "title": {"type": "string"},
            "items": {"type": "array", "items": {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}}}});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let value =
            json!({"title": "Shopping", "items": [{"name": "milk", "n": 2}, {"name": "tea"}]});
        let text = spec.compress(&value).unwrap();
        assert!(text.contains('\n'), "{text}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(spec.expand(&crlf).unwrap(), value);
        assert_eq!(spec.expand_any_order(&crlf).unwrap(), value);
        // Any other invisible character is named, at its line:column.
        for (c, name) in [
            ('\u{A0}', "U+00A0 NO-BREAK SPACE"),
            ('\u{200B}', "U+200B ZERO WIDTH SPACE"),
            ('\t', "U+0009 CHARACTER TABULATION"),
            ('\r', "U+000D CARRIAGE RETURN"),
        ] {
            let bad = text.replacen(' ', &c.to_string(), 1);
            let e = spec.expand(&bad).unwrap_err();
            assert!(e.found().is_some_and(|f| f.contains(name)), "{c:?}: {e}");
        }
        // Inside what is quoted, by code point.
        let e = spec
            .expand(&text.replacen("milk", "mi\tlk", 1))
            .unwrap_err();
        assert!(e.to_string().contains("mi<U+0009>lk"), "{e}");
        let e = spec.expand(&format!("\u{FEFF}{text}")).unwrap_err();
        assert_eq!(e.location(), Some((1, 1)));
        assert!(e.to_string().contains("U+FEFF"), "{e}");
    }
}
