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
    /// The format version: [`SpecFile::VERSION`] (versions 1 and 2 are converted when
    /// read, see [`CompiledSpec::from_json`]).
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

/// [`SpecFile::VERSION`].
pub(crate) const SPEC_VERSION: u32 = 3;

impl SpecFile {
    /// The `spec.json` format version this dss writes. Version 3 holds the schema and the
    /// notation settings only; versions 1 and 2 (which also held the shapes and the
    /// designed notation) are converted when read, and other versions are refused with a
    /// message saying to recompile.
    pub const VERSION: u32 = SPEC_VERSION;
}

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
    /// Read a `spec.json` of the current version ([`SpecFile::VERSION`]) as it is saved, without
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
#[path = "spec_tests.rs"]
mod tests;
