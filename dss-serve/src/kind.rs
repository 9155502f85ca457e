//! Which server dss talks to, and the request field each one reads a grammar from.

use serde_json::{json, Map, Value};

/// An OpenAI-compatible server that constrains decoding with a grammar sent in the request.
/// Each reads the grammar from its own field of `/v1/chat/completions`; a server sent the
/// wrong field ignores it and answers unconstrained (the answer then fails to expand, and
/// the error names the kind, see [`crate::ServeError::NotShorthand`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerKind {
    /// llama.cpp's `llama-server`: `"grammar"` (GBNF) in `/v1/chat/completions` and in
    /// `/completion` (tools/server/README.md of llama.cpp, "POST /completion" options:
    /// `grammar`; the OpenAI-compatible endpoint takes the same sampling options).
    /// Also the only kind that continues a prefix: `POST /apply-template` renders the chat
    /// template, `/completion` continues it ([`crate::Mode::PerLine`]).
    #[default]
    LlamaServer,
    /// vLLM ≥ 0.10: `"structured_outputs": {"grammar": …}` (docs.vllm.ai, "Structured
    /// Outputs": the `guided_*` fields were removed in v0.12.0, `guided_grammar` became
    /// `structured_outputs.grammar`). Its xgrammar backend reads GBNF.
    Vllm,
    /// vLLM before the `structured_outputs` field: `"guided_grammar"` (docs.vllm.ai v0.9,
    /// "Structured Outputs": `guided_grammar`: the output will follow the context free
    /// grammar).
    VllmLegacy,
    /// SGLang: `"ebnf"` (docs.sglang.io, "Structured Outputs": one of `json_schema`,
    /// `regex` or `ebnf` per request; its default XGrammar backend reads the GGML BNF
    /// format, i.e. GBNF).
    Sglang,
}

impl ServerKind {
    /// Every kind with its command-line name.
    pub const ALL: [(ServerKind, &'static str); 4] = [
        (ServerKind::LlamaServer, "llama-server"),
        (ServerKind::Vllm, "vllm"),
        (ServerKind::VllmLegacy, "vllm-legacy"),
        (ServerKind::Sglang, "sglang"),
    ];

    /// The kind named `name` (`llama-server`, `vllm`, `vllm-legacy`, `sglang`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("llama-server", |(_, n)| n)
    }

    /// Puts `gbnf` into a chat-completions request body, in the field this server reads.
    pub fn put_grammar(self, body: &mut Map<String, Value>, gbnf: &str) {
        match self {
            ServerKind::LlamaServer => {
                body.insert("grammar".into(), json!(gbnf));
            }
            ServerKind::Vllm => {
                body.insert("structured_outputs".into(), json!({ "grammar": gbnf }));
            }
            ServerKind::VllmLegacy => {
                body.insert("guided_grammar".into(), json!(gbnf));
            }
            ServerKind::Sglang => {
                body.insert("ebnf".into(), json!(gbnf));
            }
        }
    }

    /// Whether the server continues a prefix (`/apply-template` + `/completion`), which
    /// [`crate::Mode::PerLine`] needs.
    pub fn continues_prefix(self) -> bool {
        self == ServerKind::LlamaServer
    }
}

/// How the grammar is used over one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// One chat request under the request's pruned grammar (every kind). The values a line
    /// uses are not consumed: a value found once may be written twice.
    #[default]
    Single,
    /// One round trip per line (llama-server only): the chat-templated prompt
    /// (`/apply-template`) plus the lines so far is continued by `/completion` under the
    /// grammar of the rest, with the values the written lines used consumed, as the
    /// in-process generator does after each line. The server's prompt cache keeps the
    /// prefix, so a round costs the new line only.
    PerLine,
}

impl Mode {
    /// The mode named `name` (`single`, `per-line`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "single" => Some(Mode::Single),
            "per-line" => Some(Mode::PerLine),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Single => "single",
            Mode::PerLine => "per-line",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (k, n) in ServerKind::ALL {
            assert_eq!(ServerKind::from_name(n), Some(k));
            assert_eq!(k.name(), n);
        }
        assert_eq!(ServerKind::from_name("ollama"), None);
        assert_eq!(Mode::from_name("per-line"), Some(Mode::PerLine));
        assert_eq!(Mode::PerLine.name(), "per-line");
    }

    #[test]
    fn each_kind_puts_the_grammar_where_it_reads_it() {
        let field = |k: ServerKind| {
            let mut m = Map::new();
            k.put_grammar(&mut m, "root ::= \"a\"");
            Value::Object(m)
        };
        assert_eq!(
            field(ServerKind::LlamaServer),
            json!({"grammar": "root ::= \"a\""})
        );
        assert_eq!(
            field(ServerKind::Vllm),
            json!({"structured_outputs": {"grammar": "root ::= \"a\""}})
        );
        assert_eq!(
            field(ServerKind::VllmLegacy),
            json!({"guided_grammar": "root ::= \"a\""})
        );
        assert_eq!(field(ServerKind::Sglang), json!({"ebnf": "root ::= \"a\""}));
        assert!(ServerKind::LlamaServer.continues_prefix());
        assert!(!ServerKind::Vllm.continues_prefix());
    }
}
