//! How `dss compile` and `dss init` read their input: a JSON Schema or tool definitions
//! (OpenAI, Anthropic, MCP), strictly or leniently; and what they say about it on stderr.

use clap::{Args, ValueEnum};
use dss_compiler::error::CompileError;
use dss_compiler::tools::ToolCalls;
use dss_compiler::{CompiledSpec, NotationStyle};
use std::path::Path;

/// The flags of `compile` and `init` that say how the input is read.
#[derive(Args, Clone, Copy, Debug, Default)]
pub(crate) struct ReadArgs {
    /// Ignore a malformed keyword value (e.g. `"type": "integr"`, `"required": "x"`) with a
    /// warning instead of failing: the grammar does without it.
    #[arg(long)]
    pub(crate) lenient: bool,
    /// When the input is tool definitions (an OpenAI `tools` array, Anthropic tools, an MCP
    /// `tools/list` result): a document is a list of calls, one per line, or one call.
    #[arg(long, value_enum, value_name = "list|one", default_value_t = Calls::List)]
    pub(crate) calls: Calls,
    /// How fields are written: `compact` (fewest tokens: choice words alone, single values
    /// as flags), `explicit` (every optional field `keyword value`) or `named` (every
    /// field `keyword value`, required ones too: what a small model fills a tool's
    /// parameters most reliably in). Overrides a --notation file's `style:`.
    #[arg(long, value_name = "compact|explicit|named", value_parser = parse_style)]
    pub(crate) style: Option<NotationStyle>,
}

fn parse_style(s: &str) -> Result<NotationStyle, String> {
    NotationStyle::from_name(s)
        .ok_or_else(|| format!("unknown style `{s}` (compact, explicit, named)"))
}

/// `--calls`.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Calls {
    /// A list of calls, one per line.
    #[default]
    List,
    /// Exactly one call.
    One,
}

impl ReadArgs {
    /// The library's options for these flags.
    pub(crate) fn calls(self) -> ToolCalls {
        match self.calls {
            Calls::List => ToolCalls::List,
            Calls::One => ToolCalls::One,
        }
    }
}

/// What was read (tool definitions) and what the schema lint found, on stderr.
pub(crate) fn report(spec: &CompiledSpec, path: &Path) {
    if let Some(tools) = spec.tools() {
        crate::streams::report(&format!("note: {}: {tools}", path.display()));
    }
    for w in spec.schema_warnings() {
        crate::streams::report(&format!("warning: {}: {w}", path.display()));
    }
}

/// The hint a compile error gets on the command line.
pub(crate) fn hint(e: &CompileError) -> &'static str {
    match e {
        CompileError::Malformed { .. } => " (--lenient ignores it with a warning)",
        _ => "",
    }
}
