//! What can go wrong with one request to a server.

use crate::ServerKind;

/// One request's failure: each says what happened and, where dss can tell, what to change.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// No connection: refused, reset, unknown host (retried before this is reported).
    #[error("cannot connect to {url}: {message} (after {attempts} attempt(s); is the server running there?)")]
    Connect {
        /// The URL requested.
        url: String,
        /// The system's message (e.g. "Connection refused").
        message: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// The server did not answer within the per-request timeout.
    #[error("{url}: no answer within {secs} s (after {attempts} attempt(s); --timeout SECS sets the limit)")]
    Timeout {
        /// The URL requested.
        url: String,
        /// The timeout.
        secs: f64,
        /// How many attempts were made.
        attempts: u32,
    },
    /// HTTP 401/403: the API key is missing or wrong.
    #[error("the server refused the API key (HTTP {status}: {message}); {hint}")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// The server's message.
        message: String,
        /// Where the key comes from.
        hint: String,
    },
    /// Any other HTTP error status, with the server's message (5xx and 429 are retried
    /// before this is reported).
    #[error("{url}: HTTP {status}: {message}{}", if *attempts > 1 { format!(" (after {attempts} attempts)") } else { String::new() })]
    Http {
        /// The URL requested.
        url: String,
        /// The status code.
        status: u16,
        /// The server's error message (or its body).
        message: String,
        /// How many attempts were made.
        attempts: u32,
    },
    /// The answer is not what an OpenAI-compatible server sends.
    #[error("{url}: unexpected answer: {message}")]
    BadResponse {
        /// The URL requested.
        url: String,
        /// What was wrong.
        message: String,
    },
    /// The server stopped at its token limit (`finish_reason: "length"`) before the
    /// document was complete.
    #[error("the answer was cut by the token limit after {tokens} tokens (finish_reason \"length\"; raise --max-tokens, or the server's own limit such as llama-server's -n); partial answer: {partial:?}")]
    Length {
        /// Tokens generated.
        tokens: u64,
        /// What was written.
        partial: String,
    },
    /// The request's time budget ran out between two round trips before the document was
    /// complete (`--serve-mode per-line`; one round trip is bounded by the HTTP timeout).
    #[error("generation took longer than its time budget of {secs} s before the document was complete (raise --timeout); partial answer: {partial:?}")]
    TimeBudget {
        /// The time budget in seconds.
        secs: f64,
        /// What was written.
        partial: String,
    },
    /// The answer is not shorthand of this spec: the server most likely did not apply the
    /// grammar (it was sent in a field this server does not read). Also what an answer cut
    /// by the token limit is when its complete lines already leave the grammar's language
    /// (`cut`): an unconstrained answer usually runs to the budget, and more tokens would
    /// not help.
    #[error("{}", not_shorthand_message(*kind, message, output, *cut))]
    NotShorthand {
        /// The kind the grammar was sent for.
        kind: ServerKind,
        /// The expander's message (line:column, expected, found).
        message: String,
        /// The answer (when `cut`, what was written before the limit).
        output: String,
        /// `Some(tokens)`: the answer was cut by the token limit (`finish_reason: "length"`)
        /// after that many tokens.
        cut: Option<u64>,
    },
    /// The answer expands but the JSON is not valid under the schema (a constraint the
    /// grammar does not express).
    #[error("the output does not validate: {message}; output: {output:?}")]
    Invalid {
        /// Where and what.
        message: String,
        /// The answer.
        output: String,
    },
    /// The request cannot be run as configured.
    #[error("{0}")]
    Config(String),
}

impl From<dss_compiler::prompt::ExamplesError> for ServeError {
    /// An examples file that cannot be read is the configuration's fault.
    fn from(e: dss_compiler::prompt::ExamplesError) -> Self {
        ServeError::Config(e.to_string())
    }
}

/// [`ServeError::NotShorthand`]'s message: what did not expand, the kind the grammar was
/// sent for, and the flag that sends it elsewhere.
fn not_shorthand_message(
    kind: ServerKind,
    message: &str,
    output: &str,
    cut: Option<u64>,
) -> String {
    let kinds = ServerKind::ALL
        .iter()
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join("|");
    let kind = kind.name();
    match cut {
        None => format!(
            "the answer is not shorthand of this spec ({message}): did the {kind} server apply the grammar? --server-kind {kinds} sends it where that server reads it; answer: {output:?}"
        ),
        Some(tokens) => format!(
            "the answer was cut by the token limit after {tokens} tokens (finish_reason \"length\") and its lines are not shorthand of this spec ({message}): the {kind} server probably ignored the grammar (an unconstrained answer runs to the limit; a larger --max-tokens will not help); --server-kind {kinds} sends it where that server reads it; partial answer: {output:?}"
        ),
    }
}

impl ServeError {
    /// Whether the failure is the answer's (the grammar, the model, the token limit)
    /// rather than the transport's: only those are worth a second try under the full
    /// grammar.
    pub fn is_answer(&self) -> bool {
        matches!(
            self,
            ServeError::Length { .. }
                | ServeError::NotShorthand { .. }
                | ServeError::Invalid { .. }
        )
    }

    /// A short machine-readable name of the failure (`connect`, `timeout`, `unauthorized`,
    /// `http`, `bad_response`, `length`, `time_budget`, `not_shorthand`, `invalid`,
    /// `config`).
    pub fn kind(&self) -> &'static str {
        match self {
            ServeError::Connect { .. } => "connect",
            ServeError::Timeout { .. } => "timeout",
            ServeError::Unauthorized { .. } => "unauthorized",
            ServeError::Http { .. } => "http",
            ServeError::BadResponse { .. } => "bad_response",
            ServeError::Length { .. } => "length",
            ServeError::TimeBudget { .. } => "time_budget",
            ServeError::NotShorthand { .. } => "not_shorthand",
            ServeError::Invalid { .. } => "invalid",
            ServeError::Config(_) => "config",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_change() {
        let e = ServeError::NotShorthand {
            kind: ServerKind::Vllm,
            message: "1:1: expected a field".into(),
            output: "{\"a\": 1}".into(),
            cut: None,
        };
        let m = e.to_string();
        assert!(m.contains("vllm server"), "{m}");
        assert!(
            m.contains("--server-kind llama-server|vllm|vllm-legacy|sglang"),
            "{m}"
        );
        assert!(e.is_answer());
        let e = ServeError::NotShorthand {
            kind: ServerKind::VllmLegacy,
            message: "1:1: expected a color".into(),
            output: "Sure! The".into(),
            cut: Some(171),
        };
        assert_eq!(
            e.to_string(),
            "the answer was cut by the token limit after 171 tokens (finish_reason \"length\") \
             and its lines are not shorthand of this spec (1:1: expected a color): the \
             vllm-legacy server probably ignored the grammar (an unconstrained answer runs to \
             the limit; a larger --max-tokens will not help); --server-kind \
             llama-server|vllm|vllm-legacy|sglang sends it where that server reads it; partial \
             answer: \"Sure! The\""
        );
        assert_eq!(e.kind(), "not_shorthand");
        let e = ServeError::Http {
            url: "http://x/v1/chat/completions".into(),
            status: 503,
            message: "Loading model".into(),
            attempts: 3,
        };
        assert_eq!(
            e.to_string(),
            "http://x/v1/chat/completions: HTTP 503: Loading model (after 3 attempts)"
        );
        assert!(!e.is_answer());
        assert_eq!(e.kind(), "http");
    }
}
