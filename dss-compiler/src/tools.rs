//! Tool definitions read as schemas: an OpenAI `tools` array (or one function, with or
//! without its `{"type": "function", "function": …}` wrapper), Anthropic tools
//! (`input_schema`) and an MCP `tools/list` result (`inputSchema`, also inside its JSON-RPC
//! envelope) each become one JSON Schema whose instances are tool calls.
//!
//! A call is an object tagged by the tool's name, holding that tool's arguments:
//! `{"get_weather": {"city": "Paris"}}`, the shape the APIMix suites use (see
//! `dss-eval/src/apimix.rs`): dss writes it `get_weather city Paris`, and a list of calls one
//! per line. The schema of a list of calls is
//!
//! ```json
//! {"type": "array", "minItems": 1, "items": {"oneOf": [
//!   {"type": "object", "description": "<tool's description>",
//!    "properties": {"<name>": <parameters>}, "required": ["<name>"],
//!    "additionalProperties": false}, …]}}
//! ```
//!
//! and of one call the `oneOf` alone (the branch alone for a single tool). Every `$ref`
//! into a tool's own parameters (`#/$defs/…`, `#/definitions/…`, `#`) is rebased to where
//! the parameters now sit, so it keeps naming the same subschema.

use crate::schema::{escape_token, keyword, Holds};
use serde_json::{json, Map, Value};
use std::fmt;
use thiserror::Error;

/// What a document of tool calls holds: one call, or a list of calls (one per line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolCalls {
    /// A list of one or more calls, written one per line (the default).
    #[default]
    List,
    /// Exactly one call.
    One,
}

/// The form tool definitions were read in (for messages: `read an OpenAI tools array`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolsForm {
    /// `[{"type": "function", "function": {"name", "description", "parameters"}}, …]`
    /// (the flat Responses-API form `{"type": "function", "name", …}` too).
    OpenAiTools,
    /// An array of bare function objects `[{"name", "description", "parameters"}, …]`.
    OpenAiFunctions,
    /// One OpenAI function, with or without its `{"type": "function", …}` wrapper.
    OpenAiFunction,
    /// `[{"name", "description", "input_schema"}, …]`.
    AnthropicTools,
    /// One Anthropic tool.
    AnthropicTool,
    /// An MCP `tools/list` result `{"tools": [{"name", "description", "inputSchema"}, …]}`.
    McpToolsList,
    /// The same inside its JSON-RPC response `{"result": {"tools": […]}}`.
    McpResponse,
    /// An array of MCP tools, or one.
    McpTools,
}

impl fmt::Display for ToolsForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ToolsForm::OpenAiTools => "an OpenAI tools array",
            ToolsForm::OpenAiFunctions => "an OpenAI functions array",
            ToolsForm::OpenAiFunction => "an OpenAI function",
            ToolsForm::AnthropicTools => "an Anthropic tools array",
            ToolsForm::AnthropicTool => "an Anthropic tool",
            ToolsForm::McpToolsList => "an MCP tools/list result",
            ToolsForm::McpResponse => "an MCP tools/list response",
            ToolsForm::McpTools => "MCP tools",
        })
    }
}

/// What [`crate::compile`] read when its input was tool definitions
/// ([`crate::CompiledSpec::tools`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolsRead {
    /// The form the definitions were in.
    pub form: ToolsForm,
    /// The tools' names, in the order given.
    pub names: Vec<String>,
    /// Whether a document is one call or a list of calls.
    pub calls: ToolCalls,
}

impl fmt::Display for ToolsRead {
    /// `read an OpenAI tools array: 3 tools (a list of calls, one per line)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.names.len();
        let plural = if n == 1 { "" } else { "s" };
        let calls = match self.calls {
            ToolCalls::List => "a list of calls, one per line",
            ToolCalls::One => "one call",
        };
        write!(f, "read {}: {n} tool{plural} ({calls})", self.form)
    }
}

/// Tool definitions that cannot be read. Each names where (a JSON pointer into the input).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ToolsError {
    /// A tool has no `name`, or it is not a non-empty string.
    #[error("tool at {}: {message}", at(pointer))]
    Name {
        /// Where the tool is.
        pointer: String,
        /// What is wrong with its name.
        message: String,
    },
    /// A tool's parameters are not an object schema.
    #[error("tool `{tool}` at {}: its parameters must be an object schema (a JSON object with `\"type\": \"object\"` or no `type`), found {found}", at(pointer))]
    Parameters {
        /// Where the parameters are.
        pointer: String,
        /// The tool's name.
        tool: String,
        /// What was found there.
        found: String,
    },
    /// Two tools have the same name: a call could not say which one it is.
    #[error(
        "tool at {}: the name `{name}` is already the name of the tool at {}",
        at(pointer),
        at(first)
    )]
    Duplicate {
        /// Where the second tool is.
        pointer: String,
        /// The name.
        name: String,
        /// Where the first one is.
        first: String,
    },
    /// No tool at all.
    #[error("{}: an empty list of tools", at(pointer))]
    Empty {
        /// Where the list is.
        pointer: String,
    },
    /// A list mixes tool formats, or holds something that is not a tool.
    #[error("{}: expected {expected}, found {found}", at(pointer))]
    NotATool {
        /// Where the element is.
        pointer: String,
        /// The form the list's first tool has.
        expected: String,
        /// What the element looks like.
        found: String,
    },
    /// A `$ref` in a tool's parameters points outside them (or nowhere): rebased into the
    /// list of calls, it could not name the same subschema.
    #[error(
        "tool `{tool}` at {}: $ref `{reference}` does not point into the tool's own parameters",
        at(pointer)
    )]
    Reference {
        /// Where the `$ref` is.
        pointer: String,
        /// The tool's name.
        tool: String,
        /// The reference as written.
        reference: String,
    },
}

impl ToolsError {
    /// Where in the input the error is (a JSON pointer; "" is the document root).
    pub fn pointer(&self) -> &str {
        match self {
            ToolsError::Name { pointer, .. }
            | ToolsError::Parameters { pointer, .. }
            | ToolsError::Duplicate { pointer, .. }
            | ToolsError::Empty { pointer }
            | ToolsError::NotATool { pointer, .. }
            | ToolsError::Reference { pointer, .. } => pointer,
        }
    }
}

fn at(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the document root"
    } else {
        pointer
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vendor {
    OpenAi,
    Anthropic,
    Mcp,
}

/// One tool definition, as found in the input.
#[derive(Debug, Clone)]
pub(crate) struct Tool {
    /// Where the tool is in the input.
    pub pointer: String,
    pub name: String,
    pub description: Option<String>,
    /// Its parameters' schema (`{"type": "object"}` where it declares none).
    pub parameters: Value,
    /// Where the parameters are in the input (the tool's own pointer where it has none).
    pub parameters_pointer: String,
}

/// The tools of a document, if it is tool definitions.
#[derive(Debug, Clone)]
pub(crate) struct Tools {
    pub form: ToolsForm,
    pub tools: Vec<Tool>,
}

/// What a JSON object looks like, as a tool: which vendor's, with the pointer (relative to
/// the object) of its definition (the `function` member of OpenAI's wrapper).
fn tool_kind(v: &Value) -> Option<(Vendor, &'static str)> {
    let m = v.as_object()?;
    let ty = m.get("type");
    if ty == Some(&json!("function")) {
        if m.get("function").is_some_and(Value::is_object) {
            return Some((Vendor::OpenAi, "/function"));
        }
        if m.contains_key("name") || m.contains_key("parameters") {
            return Some((Vendor::OpenAi, ""));
        }
        return None;
    }
    if ty.is_some() || !m.contains_key("name") {
        return None;
    }
    if m.contains_key("input_schema") {
        Some((Vendor::Anthropic, ""))
    } else if m.contains_key("inputSchema") {
        Some((Vendor::Mcp, ""))
    } else if m.contains_key("parameters") {
        Some((Vendor::OpenAi, ""))
    } else {
        None
    }
}

/// For the schema lint: what a tool definition given where a schema is expected looks like
/// (`an OpenAI tool`, …) and where its schema is, relative to it.
pub(crate) fn looks_like_tool(v: &Value) -> Option<(&'static str, &'static str)> {
    let (vendor, def) = tool_kind(v)?;
    Some(match (vendor, def) {
        (Vendor::OpenAi, "/function") => ("an OpenAI tool", "/function/parameters"),
        (Vendor::OpenAi, _) => ("an OpenAI function", "/parameters"),
        (Vendor::Anthropic, _) => ("an Anthropic tool", "/input_schema"),
        (Vendor::Mcp, _) => ("an MCP tool", "/inputSchema"),
    })
}

fn describe(v: &Value) -> String {
    match tool_kind(v) {
        Some((Vendor::OpenAi, _)) => "an OpenAI tool".into(),
        Some((Vendor::Anthropic, _)) => "an Anthropic tool".into(),
        Some((Vendor::Mcp, _)) => "an MCP tool".into(),
        None => {
            let text = v.to_string();
            if text.chars().count() > 60 {
                format!("{}…", text.chars().take(60).collect::<String>())
            } else {
                text
            }
        }
    }
}

/// The tool definitions of `input`, or `None` where it is not tool definitions (a schema).
pub(crate) fn read(input: &Value) -> Result<Option<Tools>, ToolsError> {
    // The form of a list by its tools' vendor; `mcp`: the form an MCP list is in.
    let list = |items: &[Value], at: &str, mcp: ToolsForm| {
        read_list(items, at).map(|(vendor, tools, bare)| {
            let form = match (vendor, bare) {
                (Vendor::OpenAi, true) => ToolsForm::OpenAiFunctions,
                (Vendor::OpenAi, false) => ToolsForm::OpenAiTools,
                (Vendor::Anthropic, _) => ToolsForm::AnthropicTools,
                (Vendor::Mcp, _) => mcp,
            };
            Some(Tools { form, tools })
        })
    };
    match input {
        // A JSON Schema is an object or a boolean: an array can only be tools.
        Value::Array(items) => list(items, "", ToolsForm::McpTools),
        Value::Object(m) => {
            // `{"tools": […]}` with nothing else a schema would say: a tools/list result
            // (or a request body holding OpenAI or Anthropic tools).
            if let Some(Value::Array(items)) = m.get("tools") {
                if m.keys().all(|k| keyword(k).is_none()) {
                    return list(items, "/tools", ToolsForm::McpToolsList);
                }
            }
            // The JSON-RPC response: `jsonrpc`, `id` (a draft-04 keyword) and `result`.
            if let Some(Value::Array(items)) = m.get("result").and_then(|r| r.get("tools")) {
                if m.keys()
                    .all(|k| ["jsonrpc", "id", "result"].contains(&k.as_str()))
                {
                    return list(items, "/result/tools", ToolsForm::McpResponse);
                }
            }
            let Some((vendor, _)) = tool_kind(input) else {
                return Ok(None);
            };
            let tool = read_tool(input, "")?;
            let form = match vendor {
                Vendor::OpenAi => ToolsForm::OpenAiFunction,
                Vendor::Anthropic => ToolsForm::AnthropicTool,
                Vendor::Mcp => ToolsForm::McpTools,
            };
            Ok(Some(Tools {
                form,
                tools: vec![tool],
            }))
        }
        _ => Ok(None),
    }
}

/// The tools of a list: its vendor, the tools, whether OpenAI's are bare functions.
fn read_list(items: &[Value], at: &str) -> Result<(Vendor, Vec<Tool>, bool), ToolsError> {
    let Some(first) = items.first() else {
        return Err(ToolsError::Empty {
            pointer: at.to_string(),
        });
    };
    let pointer = |i: usize| format!("{at}/{i}");
    let Some((vendor, def)) = tool_kind(first) else {
        return Err(ToolsError::NotATool {
            pointer: pointer(0),
            expected:
                "a tool (an object with `name` and `parameters`, `input_schema` or `inputSchema`)"
                    .into(),
            found: describe(first),
        });
    };
    let bare = vendor == Vendor::OpenAi && first.get("type").is_none() && def.is_empty();
    let mut tools: Vec<Tool> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if tool_kind(item).map(|(v, _)| v) != Some(vendor) {
            let expected = match vendor {
                Vendor::OpenAi => ToolsForm::OpenAiFunction.to_string(),
                Vendor::Anthropic => ToolsForm::AnthropicTool.to_string(),
                Vendor::Mcp => "an MCP tool".to_string(),
            };
            return Err(ToolsError::NotATool {
                pointer: pointer(i),
                expected: format!("{expected}, as the first tool is"),
                found: describe(item),
            });
        }
        let tool = read_tool(item, &pointer(i))?;
        if let Some(other) = tools.iter().find(|t| t.name == tool.name) {
            return Err(ToolsError::Duplicate {
                pointer: tool.pointer,
                name: tool.name,
                first: other.pointer.clone(),
            });
        }
        tools.push(tool);
    }
    Ok((vendor, tools, bare))
}

/// One tool (`v` is known to be one, see [`tool_kind`]).
fn read_tool(v: &Value, at: &str) -> Result<Tool, ToolsError> {
    let Some((vendor, def)) = tool_kind(v) else {
        return Err(ToolsError::NotATool {
            pointer: at.to_string(),
            expected: "a tool".into(),
            found: describe(v),
        });
    };
    let def_at = format!("{at}{def}");
    let body = v.pointer(def).unwrap_or(v);
    let name = match body.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(other) => {
            return Err(ToolsError::Name {
                pointer: format!("{def_at}/name"),
                message: format!("its name must be a non-empty string, found {other}"),
            })
        }
        None => {
            return Err(ToolsError::Name {
                pointer: def_at,
                message: "a tool without a name (`name`)".into(),
            })
        }
    };
    let description = body
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_string);
    let member = match vendor {
        Vendor::OpenAi => "parameters",
        Vendor::Anthropic => "input_schema",
        Vendor::Mcp => "inputSchema",
    };
    let parameters_pointer = format!("{def_at}/{member}");
    let parameters = match body.get(member) {
        // OpenAI lets a function without arguments leave its parameters out.
        None if vendor == Vendor::OpenAi => {
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        }
        Some(p @ Value::Object(m)) if object_schema(m) => p.clone(),
        found => {
            return Err(ToolsError::Parameters {
                pointer: parameters_pointer,
                tool: name,
                found: found.map_or_else(|| "nothing".to_string(), describe),
            })
        }
    };
    Ok(Tool {
        pointer: at.to_string(),
        name,
        description,
        parameters,
        parameters_pointer,
    })
}

/// Whether a schema object describes objects: its `type` (if any) is or includes "object".
fn object_schema(m: &Map<String, Value>) -> bool {
    match m.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        Some(_) => false,
    }
}

/// The schema of the calls to `tools` (see the module's documentation). Each tool's
/// parameters must already be checked (the schema lint); their `$schema`, where they declare
/// one, moves to the root when all agree.
pub(crate) fn calls_schema(tools: &[Tool], calls: ToolCalls) -> Result<Value, ToolsError> {
    let mut dialects: Vec<Value> = Vec::new();
    let at_branch = |i: usize| match calls {
        ToolCalls::List => format!("/items/oneOf/{i}"),
        ToolCalls::One if tools.len() == 1 => String::new(),
        ToolCalls::One => format!("/oneOf/{i}"),
    };
    let mut branches = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let mut params = tool.parameters.clone();
        if let Some(d) = params.as_object_mut().and_then(|m| m.remove("$schema")) {
            if !dialects.contains(&d) {
                dialects.push(d);
            }
        }
        let target = format!("{}/properties/{}", at_branch(i), escape_token(&tool.name));
        // A resource with its own `$id` resolves its `#…` references itself.
        if !has_own_id(&params) {
            rebase(&mut params, &tool.parameters, &uri_fragment(&target), tool)?;
        }
        // The readable grammar documents a call by its arguments' description.
        if let (Some(d), Some(m)) = (&tool.description, params.as_object_mut()) {
            m.entry("description").or_insert_with(|| json!(d));
        }
        let mut branch = Map::new();
        branch.insert("type".into(), json!("object"));
        if let Some(d) = &tool.description {
            branch.insert("description".into(), json!(d));
        }
        branch.insert("properties".into(), json!({ tool.name.clone(): params }));
        branch.insert("required".into(), json!([tool.name]));
        branch.insert("additionalProperties".into(), json!(false));
        branches.push(Value::Object(branch));
    }
    let mut root = Map::new();
    if let [dialect] = dialects.as_slice() {
        root.insert("$schema".into(), dialect.clone());
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    match calls {
        ToolCalls::List => {
            root.insert(
                "description".into(),
                json!(format!(
                    "Calls to the tools {}, one per line.",
                    names.join(", ")
                )),
            );
            root.insert("type".into(), json!("array"));
            root.insert("minItems".into(), json!(1));
            root.insert("items".into(), json!({ "oneOf": branches }));
        }
        ToolCalls::One if branches.len() == 1 => {
            if let Some(Value::Object(branch)) = branches.pop() {
                root.extend(branch);
            }
        }
        ToolCalls::One => {
            root.insert(
                "description".into(),
                json!(format!("One call to a tool: {}.", names.join(", "))),
            );
            root.insert("oneOf".into(), Value::Array(branches));
        }
    }
    Ok(Value::Object(root))
}

fn has_own_id(schema: &Value) -> bool {
    ["$id", "id"].iter().any(|k| {
        schema
            .get(k)
            .and_then(Value::as_str)
            .is_some_and(|id| !id.starts_with('#'))
    })
}

/// A JSON pointer as a URI fragment: characters a fragment may not hold are
/// percent-encoded.
fn uri_fragment(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for c in pointer.chars() {
        if c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/".contains(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// Rebase every document-relative `$ref` (`#`, `#/…`) of the schema `v` (the parameters of
/// `tool`, whose original is `original`) under `target` (a URI fragment). Only schema
/// positions are visited: `enum`, `const`, `default`, `examples` hold data; a subschema with
/// its own `$id` keeps its references.
fn rebase(v: &mut Value, original: &Value, target: &str, tool: &Tool) -> Result<(), ToolsError> {
    rebase_at(v, original, target, tool, &tool.parameters_pointer)
}

fn rebase_at(
    v: &mut Value,
    original: &Value,
    target: &str,
    tool: &Tool,
    at: &str,
) -> Result<(), ToolsError> {
    let Value::Object(map) = v else { return Ok(()) };
    for (key, value) in map.iter_mut() {
        let here = format!("{at}/{}", escape_token(key));
        if key == "$ref" {
            if let Value::String(r) = value {
                if let Some(fragment) = r.strip_prefix('#') {
                    if fragment.is_empty() || fragment.starts_with('/') {
                        let decoded = crate::schema::percent_decode(fragment);
                        if original.pointer(&decoded).is_none() {
                            return Err(ToolsError::Reference {
                                pointer: here,
                                tool: tool.name.clone(),
                                reference: r.clone(),
                            });
                        }
                        *r = format!("#{target}{fragment}");
                    }
                }
            }
            continue;
        }
        let holds = keyword(key).map(|k| k.holds);
        if holds == Some(Holds::Data) {
            continue;
        }
        let nested = |child: &mut Value, child_at: &str| -> Result<(), ToolsError> {
            if has_own_id(child) {
                return Ok(());
            }
            crate::stack::deep(|| rebase_at(child, original, target, tool, child_at))
        };
        match value {
            Value::Object(children) if holds.is_some_and(Holds::schema_map) => {
                for (name, child) in children.iter_mut() {
                    nested(child, &format!("{here}/{}", escape_token(name)))?;
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter_mut().enumerate() {
                    nested(child, &format!("{here}/{i}"))?;
                }
            }
            Value::Object(_) => nested(value, &here)?,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CompileError;
    use crate::{compile, CompileOptions, CompiledSpec};

    fn weather() -> Value {
        json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"enum": ["celsius", "fahrenheit"]}
        }, "required": ["city"]})
    }

    fn search() -> Value {
        json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
    }

    fn spec(input: &Value, calls: ToolCalls) -> CompiledSpec {
        let opts = CompileOptions {
            calls,
            ..Default::default()
        };
        match compile(input, &opts) {
            Ok(spec) => spec,
            Err(e) => panic!("{input}: {e}"),
        }
    }

    /// compress then expand gives the value back, and compress of that the same text.
    fn round_trip(spec: &CompiledSpec, value: &Value) -> String {
        let text = spec
            .compress(value)
            .unwrap_or_else(|e| panic!("{value}: {e}"));
        assert_eq!(&spec.expand(&text).unwrap(), value, "{text}");
        assert_eq!(spec.compress(&spec.expand(&text).unwrap()).unwrap(), text);
        text
    }

    #[test]
    fn every_input_form_is_read() {
        let openai = json!([
            {"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": weather()}},
            {"type": "function", "function": {"name": "search", "parameters": search()}}
        ]);
        let flat = json!([{"type": "function", "name": "get_weather", "parameters": weather()},
                          {"type": "function", "name": "search", "parameters": search()}]);
        let bare = json!([{"name": "get_weather", "parameters": weather()},
                          {"name": "search", "parameters": search()}]);
        let anthropic = json!([{"name": "get_weather", "description": "Weather", "input_schema": weather()},
                               {"name": "search", "input_schema": search()}]);
        let mcp = json!([{"name": "get_weather", "inputSchema": weather()},
                         {"name": "search", "inputSchema": search()}]);
        let cases = [
            (openai.clone(), ToolsForm::OpenAiTools),
            (flat, ToolsForm::OpenAiTools),
            (bare, ToolsForm::OpenAiFunctions),
            (anthropic, ToolsForm::AnthropicTools),
            (json!({"tools": mcp.clone()}), ToolsForm::McpToolsList),
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": mcp.clone()}}),
                ToolsForm::McpResponse,
            ),
            (mcp, ToolsForm::McpTools),
            // An OpenAI request body: its `tools` are OpenAI's.
            (
                json!({"model": "m", "tools": openai.clone()}),
                ToolsForm::OpenAiTools,
            ),
        ];
        let calls = json!([{"get_weather": {"city": "Paris", "unit": "celsius"}}, {"search": {"query": "rust"}}]);
        let mut texts = Vec::new();
        for (input, form) in cases {
            let spec = spec(&input, ToolCalls::List);
            let read = spec.tools().unwrap();
            assert_eq!(
                (read.form, read.names.clone()),
                (form, vec!["get_weather".into(), "search".into()]),
                "{input}"
            );
            texts.push(round_trip(&spec, &calls));
        }
        // Every form gives the same notation: one call per line, tagged by the tool's name.
        assert!(texts.iter().all(|t| t == &texts[0]), "{texts:?}");
        assert_eq!(texts[0].lines().count(), 2, "{}", texts[0]);
        assert!(
            texts[0].starts_with("get_weather city Paris"),
            "{}",
            texts[0]
        );
        assert_eq!(
            spec(&openai, ToolCalls::List).tools().unwrap().to_string(),
            "read an OpenAI tools array: 2 tools (a list of calls, one per line)"
        );

        // One tool alone, wrapped or not.
        for (input, form) in [
            (
                json!({"type": "function", "function": {"name": "get_weather", "parameters": weather()}}),
                ToolsForm::OpenAiFunction,
            ),
            (
                json!({"name": "get_weather", "description": "d", "parameters": weather()}),
                ToolsForm::OpenAiFunction,
            ),
            (
                json!({"name": "get_weather", "input_schema": weather()}),
                ToolsForm::AnthropicTool,
            ),
            (
                json!({"name": "get_weather", "inputSchema": weather()}),
                ToolsForm::McpTools,
            ),
        ] {
            let spec = spec(&input, ToolCalls::One);
            assert_eq!(spec.tools().unwrap().form, form);
            round_trip(&spec, &json!({"get_weather": {"city": "Oslo"}}));
            assert!(spec
                .compress(&json!([{"get_weather": {"city": "Oslo"}}]))
                .is_err());
        }
        // A schema is not tools.
        let schema = compile(&weather(), &CompileOptions::default()).unwrap();
        assert!(schema.tools().is_none());
    }

    #[test]
    fn one_call_or_a_list_of_calls() {
        let tools = json!([{"name": "get_weather", "parameters": weather()},
                           {"name": "search", "parameters": search()}]);
        let one = spec(&tools, ToolCalls::One);
        assert!(one.tools().unwrap().to_string().ends_with("(one call)"));
        let text = round_trip(&one, &json!({"search": {"query": "rust"}}));
        assert_eq!(text.lines().count(), 1);
        assert!(one
            .compress(&json!({"search": {"query": "a"}, "get_weather": {"city": "b"}}))
            .is_err());
        assert!(one.compress(&json!({"nope": {}})).is_err());
        let list = spec(&tools, ToolCalls::List);
        assert!(
            list.compress(&json!([])).is_err(),
            "a list holds at least one call"
        );
        assert!(
            list.compress(&json!([{"search": {}}])).is_err(),
            "query is required"
        );
        // The tool's description documents its call in the readable grammar.
        let described =
            json!([{"name": "search", "description": "Search the web", "parameters": search()}]);
        assert!(spec(&described, ToolCalls::List)
            .grammar_bnf()
            .contains("Search the web"));
    }

    fn accepts(spec: &CompiledSpec, text: &str) -> bool {
        use pest_meta::{optimizer, parser};
        let grammar = spec.grammar_pest();
        let pairs = parser::parse(parser::Rule::grammar_rules, &grammar).expect("pest parses");
        let ast = parser::consume_rules(pairs).expect("pest rules");
        pest_vm::Vm::new(optimizer::optimize(ast))
            .parse("document", text)
            .is_ok_and(|p| p.as_str().len() == text.len())
    }

    #[test]
    fn a_call_writes_its_tools_name_also_when_there_is_one_tool() {
        // Without its name, a model took the first field for it (`create_event` as a title).
        let one = json!([{"name": "get_weather", "parameters": weather()}]);
        let call = json!({"get_weather": {"city": "Oslo", "unit": "celsius"}});
        for calls in [ToolCalls::List, ToolCalls::One] {
            let spec = spec(&one, calls);
            let value = match calls {
                ToolCalls::List => json!([call.clone(), {"get_weather": {"city": "Rome"}}]),
                ToolCalls::One => call.clone(),
            };
            let text = round_trip(&spec, &value);
            assert!(
                text.lines().all(|l| l.starts_with("get_weather ")),
                "{text}"
            );
            assert!(accepts(&spec, &text), "{}\n{text}", spec.grammar_pest());
            // The name is required: a line without it is no call.
            let bare = text.replace("get_weather ", "");
            assert!(!accepts(&spec, &bare), "{}\n{bare}", spec.grammar_pest());
            assert!(spec.expand(&bare).is_err(), "{bare}");
            assert!(spec.compress(&json!({})).is_err());
            // `city` is required: the arguments are never the empty object `()`.
            assert!(
                !accepts(&spec, "get_weather ()\n"),
                "{}",
                spec.grammar_pest()
            );
        }
        // A schema that is not tool definitions keeps its design: one required field is
        // positional.
        let plain = compile(
            &json!({"type": "object", "additionalProperties": false, "required": ["get_weather"],
                    "properties": {"get_weather": weather()}}),
            &CompileOptions::default(),
        )
        .expect("compiles");
        let text = plain.compress(&call).expect("compresses");
        assert!(!text.contains("get_weather"), "{text}");
    }

    #[test]
    fn a_function_without_parameters_takes_none() {
        let tools = json!([{"type": "function", "function": {"name": "now"}},
                           {"type": "function", "function": {"name": "search", "parameters": search()}}]);
        let spec = spec(&tools, ToolCalls::List);
        round_trip(&spec, &json!([{"now": {}}, {"search": {"query": "x"}}]));
        assert!(spec.compress(&json!([{"now": {"x": 1}}])).is_err());
    }

    #[test]
    fn references_into_a_tools_definitions_are_rebased() {
        let params = json!({
            "type": "object",
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}},
            "definitions": {"Color": {"enum": ["red", "blue"]}},
            "properties": {
                "at": {"$ref": "#/$defs/Point"},
                "color": {"$ref": "#/definitions/Color"},
                "then": {"$ref": "#"},
                "names": {"enum": [{"$ref": "#/data/not/a/ref"}]}
            },
            "required": ["at"]
        });
        let tools = json!([{"type": "function", "function": {"name": "draw", "parameters": params.clone()}},
                           {"type": "function", "function": {"name": "erase", "parameters": params}}]);
        let spec = spec(&tools, ToolCalls::List);
        let schema = spec.schema();
        let second = &schema["items"]["oneOf"][1]["properties"]["erase"];
        assert_eq!(
            second["properties"]["at"]["$ref"],
            json!("#/items/oneOf/1/properties/erase/$defs/Point")
        );
        assert_eq!(
            second["properties"]["then"]["$ref"],
            json!("#/items/oneOf/1/properties/erase")
        );
        // Data is never rewritten.
        assert_eq!(
            second["properties"]["names"]["enum"][0]["$ref"],
            json!("#/data/not/a/ref")
        );
        let call = json!([
            {"draw": {"at": {"x": 1, "y": 2}, "color": "red", "then": {"at": {"x": 3, "y": 4}}}},
            {"erase": {"at": {"x": 0, "y": 0}}}
        ]);
        round_trip(&spec, &call);
        assert!(spec.compress(&json!([{"draw": {"at": {"x": 1}}}])).is_err());
        assert!(spec
            .compress(&json!([{"draw": {"at": {"x": 1, "y": 2}, "color": "green"}}]))
            .is_err());

        // A tool name that needs escaping in a pointer, and one call alone.
        let odd = json!({"name": "a/b c", "parameters": {"$defs": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/n"}}}});
        let spec = crate::tools::tests::spec(&odd, ToolCalls::One);
        assert_eq!(
            spec.schema()["properties"]["a/b c"]["properties"]["n"]["$ref"],
            json!("#/properties/a~1b%20c/$defs/n")
        );
        round_trip(&spec, &json!({"a/b c": {"n": 3}}));
        assert!(spec.compress(&json!({"a/b c": {"n": "3"}})).is_err());

        // Parameters with their own `$id` resolve their references themselves.
        let own = json!({"name": "f", "parameters": {"$id": "https://example.com/f.json", "$defs": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/n"}}}});
        let spec = crate::tools::tests::spec(&own, ToolCalls::One);
        assert_eq!(
            spec.schema()["properties"]["f"]["properties"]["n"]["$ref"],
            json!("#/$defs/n")
        );
        round_trip(&spec, &json!({"f": {"n": 3}}));
    }

    #[test]
    fn dialects_move_to_the_root() {
        let p = |s: &str| json!({"$schema": s, "type": "object", "properties": {"a": {"type": "string"}}});
        let d7 = "http://json-schema.org/draft-07/schema#";
        let tools =
            json!([{"name": "f", "inputSchema": p(d7)}, {"name": "g", "inputSchema": p(d7)}]);
        let spec = spec(&tools, ToolCalls::List);
        assert_eq!(spec.schema()["$schema"], json!(d7));
        assert!(spec.schema()["items"]["oneOf"][0]["properties"]["f"]
            .get("$schema")
            .is_none());
        let mixed = json!([{"name": "f", "inputSchema": p(d7)}, {"name": "g", "inputSchema": p("https://json-schema.org/draft/2020-12/schema")}]);
        assert!(crate::tools::tests::spec(&mixed, ToolCalls::List)
            .schema()
            .get("$schema")
            .is_none());
    }

    fn tools_error(input: Value) -> ToolsError {
        match compile(&input, &CompileOptions::default()) {
            Err(CompileError::Tools(e)) => e,
            other => panic!("{input}: {other:?}"),
        }
    }

    #[test]
    fn bad_tools_are_errors_with_their_pointer() {
        let ok = json!({"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}});
        let cases = [
            (
                json!([ok, {"type": "function", "function": {"parameters": {}}}]),
                "/1/function",
                "without a name",
            ),
            (
                json!([{"name": 3, "parameters": {}}]),
                "/0/name",
                "non-empty string",
            ),
            (
                json!([{"name": "f", "parameters": {"type": "string"}}]),
                "/0/parameters",
                "object schema",
            ),
            (
                json!([{"name": "f", "input_schema": [1]}]),
                "/0/input_schema",
                "object schema",
            ),
            (
                json!({"name": "f", "inputSchema": null}),
                "/inputSchema",
                "object schema",
            ),
            (
                json!([{"name": "f", "parameters": {}}, {"name": "f", "parameters": {}}]),
                "/1",
                "already the name of the tool at /0",
            ),
            (json!([]), "", "empty list"),
            (json!({"tools": []}), "/tools", "empty list"),
            (
                json!([{"name": "f", "parameters": {}}, {"name": "g", "input_schema": {}}]),
                "/1",
                "an Anthropic tool",
            ),
            (json!([{"type": "object"}]), "/0", "expected a tool"),
            (
                json!([{"name": "f", "parameters": {"properties": {"a": {"$ref": "#/$defs/missing"}}}}]),
                "/0/parameters/properties/a/$ref",
                "does not point into",
            ),
        ];
        for (input, pointer, message) in cases {
            let e = tools_error(input.clone());
            assert_eq!(e.pointer(), pointer, "{input}: {e}");
            assert!(e.to_string().contains(message), "{input}: {e}");
        }
    }

    #[test]
    fn the_lint_names_places_in_the_tool_definitions() {
        let tools = json!([{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"n": {"type": "integr"}, "m": {"minimun": 1}}}}}]);
        match compile(&tools, &CompileOptions::default()) {
            Err(CompileError::Malformed { pointer, .. }) => {
                assert_eq!(pointer, "/0/function/parameters/properties/n/type")
            }
            other => panic!("{other:?}"),
        }
        let lenient = CompileOptions {
            lenient: true,
            ..Default::default()
        };
        let spec = compile(&tools, &lenient).unwrap();
        let w: Vec<String> = spec
            .schema_warnings()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("/0/function/parameters/properties/n/type: ignored malformed"),
            "{w:?}"
        );
        assert!(
            w[1].starts_with("/0/function/parameters/properties/m: unknown keyword \"minimun\""),
            "{w:?}"
        );
        round_trip(&spec, &json!([{"f": {"n": [1], "m": 0}}]));
    }

    #[test]
    fn a_schema_with_tools_inside_is_still_a_schema() {
        // `tools` beside schema keywords is a property, not a tools/list result.
        let schema = json!({"type": "object", "properties": {"tools": {"type": "array"}}});
        assert!(read(&schema).unwrap().is_none());
        let schema = json!({"tools": [1], "type": "object"});
        assert!(read(&schema).unwrap().is_none());
        assert!(read(&json!(true)).unwrap().is_none());
        assert_eq!(uri_fragment("/a b/é"), "/a%20b/%C3%A9");
    }
}
