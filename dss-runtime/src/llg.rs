//! llguidance's grammar built directly from dss's Lark structure
//! ([`dss_compiler::grammar::lark::LarkGrammar`]), without printing Lark and having llguidance lex
//! and parse it again.
//!
//! Why: under pruning the grammar is rebuilt after every complete line, and in
//! llguidance 1.9 reading Lark text sets up a lexer for Lark's own syntax on every call:
//! about 40 % of a rebuild. The structure [`to_lark`](dss_compiler::grammar::Grammar::to_lark)
//! prints is handed to llguidance's public grammar API instead
//! ([`GrammarInit::Internal`]), lowered as llguidance's Lark compiler lowers the same text:
//! - every literal and regex of a rule is a greedy lexeme (llguidance merges lexemes with
//!   the same regex), and a terminal's name used in a rule is the lexeme of its regex;
//! - a terminal's body is one regex built from its parts (literals, regexes, other
//!   terminals), with no lexeme of its own for the parts;
//! - rules, alternatives and repetitions are grammar symbols; no `%ignore` (no skipped
//!   text), UTF-8 only.
//!
//! So the language and the lexemes are those of the printed Lark; a test below checks both
//! roads accept and reject the same texts on the bundled specs' grammars.

use std::collections::HashMap;

use dss_compiler::grammar::lark::{LarkBody, LarkExpr, LarkGrammar};
use llguidance::api::{GrammarInit, SkipSpec};
use llguidance::derivre::{ExprRef, RegexAst};
use llguidance::earley::lexerspec::{LexemeClass, LexerSpec};
use llguidance::earley::{Grammar, SymIdx, SymbolProps};

/// A Lark structure llguidance cannot take (a bad regex, an undefined or circular name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("llguidance grammar: {0}")]
pub(crate) struct LlgBuildError(pub String);

fn err(e: impl std::fmt::Display) -> LlgBuildError {
    LlgBuildError(e.to_string())
}

/// llguidance's grammar and lexer for `g`, ready for
/// [`ParserFactory::create_parser_from_init_default`](llguidance::ParserFactory::create_parser_from_init_default).
/// `lexer_fuel` is the factory's limit on the initial lexer's size
/// (`ParserLimits::initial_lexer_fuel`), checked as llguidance's own builder checks it.
///
/// # Errors
/// A regex llguidance rejects, a name with no definition, a terminal defined through
/// itself, or a grammar over the lexer limit.
pub(crate) fn grammar_init(g: &LarkGrammar, lexer_fuel: u64) -> Result<GrammarInit, LlgBuildError> {
    let mut spec = LexerSpec::new().map_err(err)?;
    let class = spec
        .setup_lexeme_class_with_skip(SkipSpec::unbounded(RegexAst::Or(Vec::new())))
        .map_err(err)?;
    spec.regex_builder.unicode(true);
    spec.regex_builder.utf8(true);
    let mut b = Builder {
        g: Grammar::new(None),
        spec,
        class,
        defs: g.items.iter().map(|i| (i.name.as_str(), &i.body)).collect(),
        rules: HashMap::new(),
        pending: Vec::new(),
        terminals: HashMap::new(),
        in_progress: Vec::new(),
        lexeme_nodes: HashMap::new(),
    };
    let start = b.node("start");
    b.g.sym_props_mut(start).is_start = true;
    let first = b.rule(&g.start)?;
    b.g.add_rule(start, vec![first]).map_err(err)?;
    while let Some((sym, name)) = b.pending.pop() {
        let Some(LarkBody::Rule(body)) = b.defs.get(name).copied() else {
            return Err(err(format!("`{name}` is not a rule")));
        };
        match body {
            LarkExpr::Alt(alts) => {
                for a in alts {
                    let rhs = b.seq(a)?;
                    b.g.add_rule(sym, rhs).map_err(err)?;
                }
            }
            other => {
                let rhs = b.seq(other)?;
                b.g.add_rule(sym, rhs).map_err(err)?;
            }
        }
    }
    if b.spec.cost() > lexer_fuel {
        return Err(err(format!(
            "initial lexer configuration (grammar) too big (limit for this grammar: {lexer_fuel})"
        )));
    }
    Ok(GrammarInit::Internal(b.g, b.spec))
}

struct Builder<'a> {
    g: Grammar,
    spec: LexerSpec,
    class: LexemeClass,
    defs: HashMap<&'a str, &'a LarkBody>,
    /// Each rule's symbol, made on first use.
    rules: HashMap<&'a str, SymIdx>,
    /// Rules whose productions are still to add.
    pending: Vec<(SymIdx, &'a str)>,
    /// Each terminal's regex, built on first use.
    terminals: HashMap<&'a str, ExprRef>,
    /// Terminals being built (a name seen again here is a cycle).
    in_progress: Vec<&'a str>,
    /// One grammar symbol per lexeme.
    lexeme_nodes: HashMap<ExprRef, SymIdx>,
}

impl<'a> Builder<'a> {
    fn node(&mut self, name: &str) -> SymIdx {
        self.g.fresh_symbol_ext(
            name,
            SymbolProps {
                grammar_id: self.class,
                ..Default::default()
            },
        )
    }

    fn rule(&mut self, name: &'a str) -> Result<SymIdx, LlgBuildError> {
        if let Some(&s) = self.rules.get(name) {
            return Ok(s);
        }
        let s = self.node(name);
        self.rules.insert(name, s);
        self.pending.push((s, name));
        Ok(s)
    }

    /// The symbol reading one lexeme of regex `rx`.
    fn lexeme(&mut self, name: &str, rx: RegexAst) -> Result<SymIdx, LlgBuildError> {
        let compiled = self.spec.regex_builder.mk(&rx).map_err(err)?;
        if let Some(&s) = self.lexeme_nodes.get(&compiled) {
            return Ok(s);
        }
        let label: String = name.chars().take(20).collect();
        let idx = self
            .spec
            .add_greedy_lexeme(
                label.clone(),
                RegexAst::ExprRef(compiled),
                false,
                None,
                usize::MAX,
            )
            .map_err(err)?;
        let s = self.node(&label);
        self.g.make_terminal(s, idx, &self.spec).map_err(err)?;
        self.lexeme_nodes.insert(compiled, s);
        Ok(s)
    }

    /// The symbols `e` reads in a rule, in order (none for the empty string).
    fn seq(&mut self, e: &'a LarkExpr) -> Result<Vec<SymIdx>, LlgBuildError> {
        Ok(match e {
            LarkExpr::Lit(s) if s.is_empty() => Vec::new(),
            LarkExpr::Lit(s) => vec![self.lexeme(s, RegexAst::Literal(s.clone()))?],
            LarkExpr::Regex(rx) => vec![self.lexeme(rx, RegexAst::Regex(rx.clone()))?],
            LarkExpr::Ref(n) => match self.defs.get(n.as_str()).copied() {
                Some(LarkBody::Rule(_)) => vec![self.rule(n)?],
                Some(_) => {
                    let rx = self.terminal(n)?;
                    vec![self.lexeme(n, RegexAst::ExprRef(rx))?]
                }
                None => return Err(err(format!("`{n}` is not defined"))),
            },
            LarkExpr::Seq(xs) => {
                let mut out = Vec::new();
                for x in xs {
                    out.extend(self.seq(x)?);
                }
                out
            }
            LarkExpr::Alt(xs) => {
                let s = self.node("alt");
                for x in xs {
                    let rhs = self.seq(x)?;
                    self.g.add_rule(s, rhs).map_err(err)?;
                }
                vec![s]
            }
            LarkExpr::Rep(x, min, max) => {
                let one = self.seq(x)?;
                let mut out = Vec::new();
                for _ in 0..*min {
                    out.extend(one.iter().copied());
                }
                match max {
                    // x* after the required copies: s -> ε | s x
                    None => {
                        let s = self.node("star");
                        self.g.add_rule(s, Vec::new()).map_err(err)?;
                        let mut more = vec![s];
                        more.extend(one.iter().copied());
                        self.g.add_rule(s, more).map_err(err)?;
                        out.push(s);
                    }
                    // Up to max - min optional copies: s_k -> ε | x s_{k-1}.
                    Some(max) => {
                        let mut tail: Option<SymIdx> = None;
                        for _ in *min..*max {
                            let s = self.node("opt");
                            self.g.add_rule(s, Vec::new()).map_err(err)?;
                            let mut rhs = one.clone();
                            rhs.extend(tail);
                            self.g.add_rule(s, rhs).map_err(err)?;
                            tail = Some(s);
                        }
                        out.extend(tail);
                    }
                }
                out
            }
        })
    }

    /// The regex of terminal `name`.
    fn terminal(&mut self, name: &'a str) -> Result<ExprRef, LlgBuildError> {
        if let Some(&rx) = self.terminals.get(name) {
            return Ok(rx);
        }
        if self.in_progress.contains(&name) {
            return Err(err(format!("terminal `{name}` is defined through itself")));
        }
        self.in_progress.push(name);
        let ast = match self.defs.get(name).copied() {
            Some(LarkBody::Regex(rx)) => RegexAst::Regex(rx.clone()),
            Some(LarkBody::Terminal(e)) => self.regex(e)?,
            Some(LarkBody::Rule(_)) => {
                return Err(err(format!("rule `{name}` used inside a terminal")))
            }
            None => return Err(err(format!("`{name}` is not defined"))),
        };
        let rx = self.spec.regex_builder.mk(&ast).map_err(err)?;
        self.in_progress.pop();
        self.terminals.insert(name, rx);
        Ok(rx)
    }

    /// `e`, part of a terminal, as a regex.
    fn regex(&mut self, e: &'a LarkExpr) -> Result<RegexAst, LlgBuildError> {
        Ok(match e {
            LarkExpr::Lit(s) => RegexAst::Literal(s.clone()),
            LarkExpr::Regex(rx) => RegexAst::Regex(rx.clone()),
            LarkExpr::Ref(n) => RegexAst::ExprRef(self.terminal(n)?),
            LarkExpr::Seq(xs) => {
                RegexAst::Concat(xs.iter().map(|x| self.regex(x)).collect::<Result<_, _>>()?)
            }
            LarkExpr::Alt(xs) => {
                RegexAst::Or(xs.iter().map(|x| self.regex(x)).collect::<Result<_, _>>()?)
            }
            LarkExpr::Rep(x, min, max) => {
                RegexAst::Repeat(Box::new(self.regex(x)?), *min, max.unwrap_or(u32::MAX))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dss_compiler::prune::{Restriction, Resume};
    use llguidance::api::TopLevelGrammar;
    use llguidance::{Matcher, ParserFactory};
    use serde_json::Value;
    use std::path::{Path, PathBuf};
    use toktrie::{ApproximateTokEnv, TokEnv, TokenId};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// The grammars: the bundled specs' full grammars, each pruned to every bundled example
    /// (its own values) and to nothing, and schemas shaped to reach the Lark forms of
    /// regular forms (right-linear lexemes from patterns, a cut automaton from `hostname`,
    /// a nested pattern), bounded arrays and recursion. With texts each must accept.
    fn grammars() -> Vec<(String, LarkGrammar, Vec<String>)> {
        let lark = |g: dss_compiler::grammar::Grammar| g.to_lark_grammar().expect("prints");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(root().join("grammars")).expect("grammars/") {
            let dir = entry.expect("entry").path();
            let Ok(text) = std::fs::read_to_string(dir.join("spec.json")) else {
                continue;
            };
            let spec = dss_compiler::CompiledSpec::from_json(&text).expect("spec.json loads");
            let name = dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let texts: Vec<String> = std::fs::read_to_string(dir.join("examples.jsonl"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|v| spec.compress(&v["output"]).ok())
                .collect();
            assert!(!texts.is_empty(), "{name}: no example");
            out.push((name.clone(), lark(spec.grammar()), texts.clone()));
            let sites = spec.sites();
            for (i, text) in texts.iter().enumerate() {
                let lines = format!("{}\n", text.trim_end_matches('\n'));
                let Ok(progress) = spec.progress(&lines, &sites) else {
                    continue;
                };
                let mut r = Restriction::default();
                for (site, value) in progress.used {
                    r.candidates.entry(site).or_default().push(value);
                }
                let g = spec.pruned_grammar(&r, Resume::Start);
                out.push((format!("{name} pruned {i}"), lark(g), vec![text.clone()]));
            }
            let g = spec.pruned_grammar(&Restriction::default(), Resume::Start);
            out.push((format!("{name} pruned to nothing"), lark(g), Vec::new()));
        }
        let nested = (0..12).fold("[a-z]".to_string(), |inner, _| format!("(x{inner})?"));
        let synthetic = [
            (
                "strings and repetitions",
                serde_json::json!({
                    "type": "object",
                    "properties": {
                        "fields": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 3,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "agg": {"enum": ["sum", "avg"]}
                                },
                                "required": ["name"]
                            }
                        },
                        "chart": {"enum": ["bar", "line"]},
                        "code": {"type": "string", "pattern": "^[0-9]{2,4}$"}
                    },
                    "required": ["fields"]
                }),
                vec![
                    serde_json::json!({"fields": [{"name": "a b", "agg": "sum"}, {"name": "é"}],
                        "chart": "bar", "code": "123"}),
                ],
            ),
            (
                "automata and recursion",
                serde_json::json!({
                    "$defs": {
                        "node": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string", "pattern": "^([0-9]|[a-z]-)*[a-z]$"},
                                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                            },
                            "required": ["id"]
                        }
                    },
                    "$ref": "#/$defs/node"
                }),
                vec![serde_json::json!({"id": "12a-b", "children": [{"id": "x"}]})],
            ),
            (
                "cut automaton",
                serde_json::json!({
                    "type": "object",
                    "properties": {"host": {"type": "string", "format": "hostname"}},
                    "required": ["host"]
                }),
                vec![serde_json::json!({"host": "ab-c.d"})],
            ),
            (
                "nested pattern",
                serde_json::json!({
                    "type": "object",
                    "properties": {"w": {"type": "string", "pattern": format!("^{nested}$")}},
                    "required": ["w"]
                }),
                vec![
                    serde_json::json!({"w": "xx"}),
                    serde_json::json!({"w": format!("{}q", "x".repeat(12))}),
                ],
            ),
        ];
        for (name, schema, instances) in synthetic {
            let spec = dss_compiler::compile(&schema, &Default::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let texts = instances
                .iter()
                .map(|x| spec.compress(x).unwrap_or_else(|e| panic!("{name}: {e}")))
                .collect();
            out.push((name.to_string(), lark(spec.grammar()), texts));
        }
        // The cut automaton is reached.
        let all: String = out.iter().map(|(_, g, _)| g.to_string()).collect();
        assert!(all.contains("__TO_CUT"), "no grammar has a cut automaton");
        out
    }

    /// The allowed next bytes (and end) under `m`, as a list of token ids.
    fn mask(m: &mut Matcher) -> Vec<u32> {
        m.compute_mask().map(|v| v.to_list()).unwrap_or_default()
    }

    /// Both matchers along `path` (or, with `seed`, a random walk from the start of
    /// `steps` bytes): the first position where their allowed next bytes differ.
    fn disagreement(
        a: &Matcher,
        b: &Matcher,
        path: &[TokenId],
        seed: Option<u64>,
        steps: usize,
    ) -> Option<String> {
        let (mut a, mut b) = (a.deep_clone(), b.deep_clone());
        let mut state = seed.unwrap_or(1) | 1;
        let mut walked = Vec::new();
        for i in 0..steps.max(path.len()) {
            let (ma, mb) = (mask(&mut a), mask(&mut b));
            if ma != mb {
                return Some(format!(
                    "after {:?}: structure allows {} bytes, Lark text {}",
                    String::from_utf8_lossy(&walked),
                    ma.len(),
                    mb.len()
                ));
            }
            let next = if seed.is_some() {
                let bytes: Vec<u32> = ma.iter().copied().filter(|&t| t < 256).collect();
                if bytes.is_empty() {
                    return None;
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                bytes[(state % bytes.len() as u64) as usize]
            } else if let Some(&t) = path.get(i) {
                t
            } else {
                return None;
            };
            let (ra, rb) = (a.consume_token(next).is_ok(), b.consume_token(next).is_ok());
            if ra != rb || !ra {
                return Some(format!("byte {next}: accepted {ra} vs {rb}"));
            }
            walked.push(next as u8);
        }
        (a.is_accepting().ok() != b.is_accepting().ok()).then(|| "end".to_string())
    }

    /// The grammar built from the Lark structure and the one llguidance builds from the
    /// printed Lark allow the same next bytes at every point of every text and of random
    /// walks, on every grammar above; each text is a sentence of both.
    #[test]
    fn the_structure_and_the_lark_text_give_the_same_language() {
        let tok_env: TokEnv = ApproximateTokEnv::single_byte_env();
        let mut factory = ParserFactory::new_simple(&tok_env).expect("parser factory");
        factory.quiet();
        let fuel = factory.limits().initial_lexer_fuel;
        let (mut checked, mut failures) = (0, Vec::new());
        for (name, lark, texts) in grammars() {
            let direct =
                factory.create_parser_from_init_default(grammar_init(&lark, fuel).expect("builds"));
            let from_text = factory.create_parser(TopLevelGrammar::from_lark(lark.to_string()));
            let (a, b) = (Matcher::new(direct), Matcher::new(from_text));
            assert!(a.get_error().is_none(), "{name}: {:?}", a.get_error());
            assert!(b.get_error().is_none(), "{name}: {:?}", b.get_error());
            for text in &texts {
                let tokens = tok_env.tokenize_bytes(text.as_bytes());
                if let Some(d) = disagreement(&a, &b, &tokens, None, 0) {
                    failures.push(format!("{name}, text {text:?}: {d}"));
                }
                let mut m = a.deep_clone();
                assert!(
                    m.consume_tokens(&tokens).is_ok() && m.is_accepting().unwrap_or(false),
                    "{name}: {text:?} is not a sentence of the built grammar"
                );
            }
            for seed in 1..=12u64 {
                if let Some(d) = disagreement(&a, &b, &[], Some(seed * 7919), 160) {
                    failures.push(format!("{name}, walk {seed}: {d}"));
                }
            }
            checked += 1;
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(checked >= 8, "{checked} grammars");
    }

    #[test]
    fn bad_structures_are_errors() {
        let rule = |name: &str, e: LarkExpr| LarkGrammar {
            start: name.into(),
            items: vec![dss_compiler::grammar::lark::LarkItem {
                name: name.into(),
                body: LarkBody::Rule(e),
            }],
        };
        let mut g = rule(
            "r_root",
            LarkExpr::Seq(vec![
                LarkExpr::Rep(Box::new(LarkExpr::Regex("[a-z]".into())), 1, None),
                LarkExpr::Lit("\n".into()),
            ]),
        );
        assert!(grammar_init(&g, u64::MAX).is_ok());
        g.start = "r_missing".into();
        let Err(e) = grammar_init(&g, u64::MAX) else {
            panic!("no such rule")
        };
        assert!(e.to_string().contains("r_missing"), "{e}");
        let g2 = LarkGrammar {
            start: "r_a".into(),
            items: vec![
                dss_compiler::grammar::lark::LarkItem {
                    name: "r_a".into(),
                    body: LarkBody::Rule(LarkExpr::Ref("T_X".into())),
                },
                dss_compiler::grammar::lark::LarkItem {
                    name: "T_X".into(),
                    body: LarkBody::Terminal(LarkExpr::Seq(vec![
                        LarkExpr::Lit("a".into()),
                        LarkExpr::Ref("T_X".into()),
                    ])),
                },
            ],
        };
        let Err(e) = grammar_init(&g2, u64::MAX) else {
            panic!("a cycle")
        };
        assert!(e.to_string().contains("T_X"), "{e}");
        let g3 = LarkGrammar {
            start: "r_a".into(),
            items: vec![dss_compiler::grammar::lark::LarkItem {
                name: "r_a".into(),
                body: LarkBody::Rule(LarkExpr::Regex("[".into())),
            }],
        };
        assert!(grammar_init(&g3, u64::MAX).is_err(), "a bad regex");
        let big = rule(
            "r_root",
            LarkExpr::Seq(vec![
                LarkExpr::Lit("abc".into()),
                LarkExpr::Rep(Box::new(LarkExpr::Regex("[a-z]".into())), 3, Some(3)),
            ]),
        );
        assert!(grammar_init(&big, 0).is_err(), "over the lexer limit");
    }
}
