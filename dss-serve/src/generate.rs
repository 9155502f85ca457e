//! One request through a server: the prompt as chat messages, the pruned grammar in the
//! server's field, and the answer expanded and validated as in process.

use crate::client::{clip, Client};
use crate::{Mode, ServeError, ServerKind};
use dss_compiler::error::ExpandError;
use dss_compiler::prompt::{system_message, Example, INSTRUCTION};
use dss_compiler::prune::{GrammarOptions, Pruning, Site};
use dss_compiler::CompiledSpec;
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

/// How requests are sent.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The server kind (which field carries the grammar).
    pub kind: ServerKind,
    /// One grammar per request, or one round trip per line.
    pub mode: Mode,
    /// The `model` field of each request (`None`: the first model `/v1/models` lists).
    pub model: Option<String>,
    /// The output token budget (`None`: sized from the examples, as in process).
    pub max_tokens: Option<usize>,
    /// What the grammars sent offer beyond the schema's declarations (by default
    /// undeclared properties only where the schema allows them explicitly).
    pub grammar: GrammarOptions,
    /// Time budget per request (`None`: none beyond the client's per-round-trip timeout),
    /// checked before each round trip: past it the request fails with
    /// [`ServeError::TimeBudget`].
    pub timeout: Option<Duration>,
}

/// Measurements of one served request.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ServedStats {
    /// Wall time of the whole request, in milliseconds.
    pub total_ms: f64,
    /// HTTP round trips (more than one in [`Mode::PerLine`]).
    pub rounds: usize,
    /// Prompt tokens, as the server counted them (first round).
    pub prompt_tokens: u64,
    /// Generated tokens, as the server counted them.
    pub generated_tokens: u64,
    /// Bytes of GBNF sent (all rounds).
    pub grammar_bytes: usize,
    /// The answer was cut before a line repeated within its section.
    pub cut_repetition: bool,
}

/// What a served request produced.
#[derive(Debug, Clone)]
pub struct Served {
    /// The expanded, validated JSON.
    pub value: Value,
    /// The shorthand the server wrote.
    pub text: String,
    /// Measurements.
    pub stats: ServedStats,
}

/// A spec, its prompt and a server: call [`generate`](Self::generate) from any number of
/// threads at once.
#[derive(Debug)]
pub struct ServedGenerator {
    client: Client,
    spec: CompiledSpec,
    sites: Vec<Site>,
    system: String,
    /// Worked examples: (request, shorthand answer).
    shots: Vec<(String, String)>,
    opts: ServeOptions,
    model: String,
    max_tokens: usize,
}

impl ServedGenerator {
    /// Prepares the prompt (the spec's readable grammar, the examples compressed to
    /// shorthand) and asks the server for its model name unless `opts.model` gives one.
    ///
    /// # Errors
    /// An example the spec cannot compress, per-line mode on a server that cannot continue
    /// a prefix, or a server that does not answer `/v1/models`.
    pub fn new(
        client: Client,
        spec: CompiledSpec,
        examples: &[Example],
        opts: ServeOptions,
    ) -> Result<Self, ServeError> {
        if opts.mode == Mode::PerLine && !opts.kind.continues_prefix() {
            return Err(ServeError::Config(format!(
                "--serve-mode per-line needs a server that continues a prefix (llama-server); a {} server takes --serve-mode single",
                opts.kind.name()
            )));
        }
        let mut shots = Vec::new();
        for ex in examples {
            let answer = spec.compress(&ex.output).map_err(|e| {
                ServeError::Config(format!(
                    "example {:?}: {}: {}",
                    ex.request,
                    e.pointer(),
                    e.message()
                ))
            })?;
            shots.push((ex.request.clone(), answer.trim_end().to_string()));
        }
        // In process the budget is 3x the longest example in tokens; without the
        // tokenizer, its length in bytes (about 3-4 bytes a token) is a budget as generous.
        let max_tokens = opts.max_tokens.unwrap_or_else(|| {
            shots
                .iter()
                .map(|(_, a)| a.len())
                .max()
                .map_or(512, |n| n.max(128))
        });
        let model = match &opts.model {
            Some(m) => m.clone(),
            None => first_model(&client)?,
        };
        Ok(Self {
            system: system_message(INSTRUCTION, &spec.prompt_grammar(opts.grammar)),
            sites: spec.sites(),
            client,
            spec,
            shots,
            opts,
            model,
            max_tokens,
        })
    }

    /// The compiled spec.
    pub fn spec(&self) -> &CompiledSpec {
        &self.spec
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The output budget per request.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The chat messages for `request`: the system message (instruction and readable
    /// grammar), the worked examples as user/assistant turns, the request last. The same
    /// turns the in-process prompt renders with the model's template.
    pub fn messages(&self, request: &str) -> Value {
        let mut m = vec![json!({"role": "system", "content": self.system})];
        for (r, a) in &self.shots {
            m.push(json!({"role": "user", "content": r}));
            m.push(json!({"role": "assistant", "content": a}));
        }
        m.push(json!({"role": "user", "content": request}));
        Value::Array(m)
    }

    /// Generates the JSON for `request` (what the prompt carries, e.g. with the items
    /// found) under the grammar pruned to `pruning`, or the full grammar with `None`.
    ///
    /// # Errors
    /// The transport's ([`ServeError::Connect`], [`ServeError::Http`]…) or the answer's
    /// ([`ServeError::Length`], [`ServeError::NotShorthand`], [`ServeError::Invalid`]).
    pub fn generate(&self, request: &str, pruning: Option<&Pruning>) -> Result<Served, ServeError> {
        let start = Instant::now();
        let mut stats = ServedStats::default();
        let text = match (self.opts.mode, pruning) {
            (Mode::PerLine, Some(p)) => {
                let deadline = self.opts.timeout.and_then(|t| start.checked_add(t));
                self.per_line(request, p, deadline, &mut stats)?
            }
            (_, p) => {
                let gbnf = match p {
                    Some(p) => p
                        .pruner(&self.spec, self.opts.grammar)
                        .start_grammar()
                        .to_gbnf(),
                    None => self.spec.generation_grammar(self.opts.grammar).to_gbnf(),
                };
                self.chat(request, &gbnf, &mut stats)?
            }
        };
        let value = self.finish(&text)?;
        stats.total_ms = start.elapsed().as_secs_f64() * 1e3;
        Ok(Served { value, text, stats })
    }

    /// One chat request under `gbnf`: the answer's text.
    fn chat(
        &self,
        request: &str,
        gbnf: &str,
        stats: &mut ServedStats,
    ) -> Result<String, ServeError> {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("messages".into(), self.messages(request));
        body.insert("temperature".into(), json!(0.0));
        body.insert("max_tokens".into(), json!(self.max_tokens));
        body.insert("stream".into(), json!(false));
        self.opts.kind.put_grammar(&mut body, gbnf);
        stats.grammar_bytes += gbnf.len();
        let path = "/v1/chat/completions";
        let v = self.client.post(path, &Value::Object(body))?;
        stats.rounds += 1;
        let bad = |message: String| ServeError::BadResponse {
            url: path.to_string(),
            message,
        };
        let choice = v
            .get("choices")
            .and_then(|c| c.get(0))
            .ok_or_else(|| bad(format!("no choices: {}", clip(&v.to_string()))))?;
        let text = choice
            .pointer("/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("no message content: {}", clip(&choice.to_string()))))?
            .to_string();
        if let Some(u) = v.get("usage") {
            stats.prompt_tokens = u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0);
            stats.generated_tokens = u
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
        }
        // As in process: a line repeated within its section ends the document before it,
        // if what comes before is complete (a server cannot stop there: it goes on to
        // its token limit, and the repetition is cut here).
        if let Some(head) = self.before_repetition(&text) {
            stats.cut_repetition = true;
            return Ok(head);
        }
        if choice.get("finish_reason").and_then(Value::as_str) == Some("length") {
            return Err(self.cut_error(text, stats.generated_tokens.max(self.max_tokens as u64)));
        }
        Ok(text)
    }

    /// The failure of a chat answer cut by the token limit. While the complete lines of
    /// `text` begin a document of the spec (read by the prefix decoder,
    /// [`CompiledSpec::progress`]), the budget was short: [`ServeError::Length`]. Lines no
    /// grammar of the spec could have produced mean the server ignored the grammar (sent in
    /// a field it does not read) and the answer ran unconstrained to the limit:
    /// [`ServeError::NotShorthand`] with `cut`, naming the kind and `--server-kind`. Only
    /// complete lines are judged (a last line cut mid-way is not, so an answer without a
    /// newline stays a `Length`), and only text the decoder found against the grammar
    /// counts, not lines that merely stop early.
    fn cut_error(&self, text: String, tokens: u64) -> ServeError {
        let judged = if text.contains('\n') {
            self.spec.progress(&text, &self.sites).err()
        } else {
            None
        };
        match judged {
            Some(e @ ExpandError::Syntax { .. }) if !matches!(&e, ExpandError::Syntax { found, .. } if found == "end of input") => {
                ServeError::NotShorthand {
                    kind: self.opts.kind,
                    message: e.to_string(),
                    output: text,
                    cut: Some(tokens),
                }
            }
            _ => ServeError::Length {
                tokens,
                partial: text,
            },
        }
    }

    /// llama-server, one round trip per line: the templated prompt plus the lines so far
    /// is continued under the grammar of the rest, up to the next newline.
    fn per_line(
        &self,
        request: &str,
        pruning: &Pruning,
        deadline: Option<Instant>,
        stats: &mut ServedStats,
    ) -> Result<String, ServeError> {
        let v = self.client.post(
            "/apply-template",
            &json!({"messages": self.messages(request)}),
        )?;
        let prompt = text_field(&v, "/apply-template", "prompt")?;
        let pruner = pruning.pruner(&self.spec, self.opts.grammar);
        let initial = pruner.start_grammar().to_gbnf();
        let mut text = String::new();
        let mut gbnf = initial.clone();
        let mut used = 0u64;
        // The text after the last line at which it was a complete document: the grammar
        // of the rest after a root's only line can admit one more (seen with a one-line
        // root), and the answer then ends there rather than fail.
        let mut complete: Option<String> = None;
        loop {
            if let (Some(d), Some(t)) = (deadline, self.opts.timeout) {
                if Instant::now() >= d {
                    return Err(ServeError::TimeBudget {
                        secs: t.as_secs_f64(),
                        partial: text,
                    });
                }
            }
            let budget = (self.max_tokens as u64).saturating_sub(used);
            if budget == 0 {
                return Err(ServeError::Length {
                    tokens: used,
                    partial: text,
                });
            }
            let round = self.complete(&format!("{prompt}{text}"), &gbnf, budget, true, stats)?;
            used += round.tokens;
            text.push_str(&round.content);
            match round.stop.as_str() {
                "word" => {
                    text.push('\n');
                    // Values are used once inside a line too (as in-process decoding).
                    if let Some(fixed) = pruner.deduplicated_line(&text) {
                        text = fixed;
                    }
                    if self.spec.expand_any_order(&text).is_ok() {
                        complete = Some(text.clone());
                    }
                    if let Some(head) = self.before_repetition(&text) {
                        stats.cut_repetition = true;
                        return Ok(head);
                    }
                }
                "limit" => {
                    return Err(ServeError::Length {
                        tokens: used,
                        partial: text,
                    })
                }
                _ => break,
            }
            // The grammar of the rest, with what the lines used consumed.
            let next = pruner
                .after_lines(&text)
                .ok()
                .flatten()
                .map(|rest| rest.grammar.to_gbnf());
            match next {
                Some(g) => gbnf = g,
                None => {
                    // These lines cannot be resumed after: if they are a whole document
                    // that is the answer, else the request is sent again in one piece
                    // under its first grammar (single mode).
                    return match complete {
                        Some(c) if c == text => Ok(c),
                        _ => self.chat(request, &initial, stats),
                    };
                }
            }
        }
        match complete {
            Some(c) if self.spec.expand_any_order(&text).is_err() => Ok(c),
            _ => Ok(text),
        }
    }

    /// One `/completion` round: greedy under `gbnf`, stopping at a newline if `line`.
    fn complete(
        &self,
        prompt: &str,
        gbnf: &str,
        n_predict: u64,
        line: bool,
        stats: &mut ServedStats,
    ) -> Result<Round, ServeError> {
        let mut body = json!({
            "prompt": prompt,
            "grammar": gbnf,
            "n_predict": n_predict,
            "temperature": 0.0,
            "cache_prompt": true,
            "stream": false,
        });
        if line {
            body["stop"] = json!(["\n"]);
        }
        stats.grammar_bytes += gbnf.len();
        let v = self.client.post("/completion", &body)?;
        stats.rounds += 1;
        let content = text_field(&v, "/completion", "content")?;
        let tokens = v
            .get("tokens_predicted")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if stats.rounds == 1 || stats.prompt_tokens == 0 {
            stats.prompt_tokens = v
                .get("tokens_evaluated")
                .and_then(Value::as_u64)
                .unwrap_or(0);
        }
        stats.generated_tokens += tokens;
        let stop = v
            .get("stop_type")
            .and_then(Value::as_str)
            .unwrap_or("eos")
            .to_string();
        Ok(Round {
            content,
            tokens,
            stop,
        })
    }

    /// The text before the first line that repeats an earlier line of its section, if
    /// that text is a complete document (dss-runtime's repetition cut, applied afterwards).
    fn before_repetition(&self, text: &str) -> Option<String> {
        let cut = first_repeated_line(text)?;
        let head = &text[..cut];
        self.spec
            .expand_any_order(head)
            .is_ok()
            .then(|| head.to_string())
    }

    /// Expands the answer (fields in any order, as a pruned grammar allows) and validates it.
    fn finish(&self, text: &str) -> Result<Value, ServeError> {
        let value = self.spec.expand_any_order(text).map_err(|e| match e {
            ExpandError::Syntax { .. } => ServeError::NotShorthand {
                kind: self.opts.kind,
                message: e.to_string(),
                output: text.to_string(),
                cut: None,
            },
            _ => ServeError::Invalid {
                message: e.to_string(),
                output: text.to_string(),
            },
        })?;
        self.spec
            .validate(&value)
            .map_err(|e| ServeError::Invalid {
                message: e.describe(),
                output: text.to_string(),
            })?;
        Ok(value)
    }
}

/// Where the first complete line that repeats an earlier line of its section (since the
/// last `…:` header line) starts.
fn first_repeated_line(text: &str) -> Option<usize> {
    let mut section: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b != b'\n' {
            continue;
        }
        let line = &text[start..i];
        if line.ends_with(':') {
            section.clear();
        } else if !line.is_empty() {
            if section.contains(&line) {
                return Some(start);
            }
            section.push(line);
        }
        start = i + 1;
    }
    None
}

/// One `/completion` answer.
struct Round {
    content: String,
    tokens: u64,
    /// `eos`, `word` (the newline), `limit`.
    stop: String,
}

/// The first model `GET /v1/models` lists.
fn first_model(client: &Client) -> Result<String, ServeError> {
    let v = client.get("/v1/models")?;
    v.pointer("/data/0/id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ServeError::BadResponse {
            url: "/v1/models".into(),
            message: format!(
                "no model listed (pass --server-model NAME): {}",
                clip(&v.to_string())
            ),
        })
}

/// The string `field` of the answer `v` to `url`; its absence is a bad response.
fn text_field(v: &Value, url: &str, field: &str) -> Result<String, ServeError> {
    v.get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ServeError::BadResponse {
            url: url.into(),
            message: format!("no {field}: {}", clip(&v.to_string())),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_examples;

    #[test]
    fn a_repeated_line_is_found_within_its_section_only() {
        assert_eq!(first_repeated_line("a\nb\na\n"), Some(4));
        assert_eq!(first_repeated_line("s:\na\nt:\na\n"), None);
        assert_eq!(first_repeated_line("a\nb\na"), None, "an incomplete line");
        assert_eq!(first_repeated_line("x\n\n\n"), None, "empty lines");
    }

    /// A server on 127.0.0.1 that answers each of `answers` (a chat completion's text and
    /// finish reason) to one request, in turn; the request bodies come back on the channel.
    fn fake_server(
        answers: Vec<(&'static str, &'static str)>,
    ) -> (String, std::sync::mpsc::Receiver<Value>) {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for (content, finish) in answers {
                let (stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        if k.eq_ignore_ascii_case("content-length") {
                            length = v.trim().parse().unwrap();
                        }
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let _ = tx.send(serde_json::from_slice(&body).unwrap_or(Value::Null));
                let answer = json!({
                    "choices": [{"message": {"role": "assistant", "content": content},
                                 "finish_reason": finish}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 40}
                })
                .to_string();
                let mut stream = reader.into_inner();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        (url, rx)
    }

    #[test]
    fn an_answer_cut_by_the_limit_outside_the_grammar_says_the_server_ignored_it() {
        let schema = json!({
            "type": "object",
            "properties": {"color": {"enum": ["red", "green", "blue"]},
                           "size": {"enum": ["small", "large"]}},
            "required": ["color", "size"], "additionalProperties": false
        });
        let spec =
            dss_compiler::compile(&schema, &dss_compiler::CompileOptions::default()).unwrap();
        let doc = spec
            .compress(&json!({"color": "red", "size": "small"}))
            .unwrap();
        // The document cut in its last line: a beginning the grammar allows.
        let short: &'static str = Box::leak(doc.trim_end()[..doc.trim_end().len() - 2].into());
        let (url, requests) = fake_server(vec![
            // Free text with complete lines, to the limit: the grammar was not applied.
            (
                "Sure! Here is a small red one.\nThe color is red and the size is small, as you",
                "length",
            ),
            (short, "length"),
            ("Sure! Here is a small red one.\n", "stop"),
        ]);
        let opts = ServeOptions {
            kind: ServerKind::VllmLegacy,
            mode: Mode::Single,
            model: Some("m".into()),
            max_tokens: Some(40),
            grammar: GrammarOptions::default(),
            timeout: None,
        };
        let mut cfg = crate::ServerConfig::new(&url);
        cfg.retries = 0;
        let g = ServedGenerator::new(Client::new(cfg), spec, &[], opts).unwrap();

        let e = g.generate("a small red one", None).unwrap_err();
        let m = e.to_string();
        assert_eq!(e.kind(), "not_shorthand", "{m}");
        assert!(e.is_answer());
        assert!(
            m.starts_with("the answer was cut by the token limit after 40 tokens"),
            "{m}"
        );
        assert!(
            m.contains("the vllm-legacy server probably ignored the grammar"),
            "{m}"
        );
        assert!(
            m.contains("--server-kind llama-server|vllm|vllm-legacy|sglang sends it"),
            "{m}"
        );
        assert!(m.contains("partial answer: \"Sure! Here is"), "{m}");
        // The grammar went in the field this kind names.
        let sent = requests.recv().unwrap();
        assert!(sent["guided_grammar"].is_string(), "{sent}");

        // A beginning of a document cut by the limit: the budget was short.
        let e = g.generate("a small red one", None).unwrap_err();
        assert_eq!(e.kind(), "length", "{e}");
        assert!(e.to_string().contains("raise --max-tokens"), "{e}");

        // Not cut, not shorthand: the error it always was.
        let e = g.generate("a small red one", None).unwrap_err();
        assert_eq!(e.kind(), "not_shorthand", "{e}");
        assert!(
            e.to_string()
                .contains("did the vllm-legacy server apply the grammar?"),
            "{e}"
        );
    }

    #[test]
    fn examples_are_read_and_bad_lines_named() {
        let dir = std::env::temp_dir().join(format!("dss-serve-ex-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("examples.jsonl");
        std::fs::write(&p, "{\"request\": \"r\", \"output\": {\"a\": 1}}\n\n").unwrap();
        assert_eq!(
            load_examples(&p).unwrap(),
            vec![Example {
                request: "r".into(),
                output: json!({"a": 1})
            }]
        );
        std::fs::write(&p, "{\"request\": \"r\"}\n").unwrap();
        let e = load_examples(&p).unwrap_err().to_string();
        assert!(e.contains("line 1: expected"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
