//! Grammars as data: the grammar IR every printed grammar comes from ([`Grammar`]: a
//! spec's grammar from [`CompiledSpec::grammar`](crate::CompiledSpec::grammar), a pruned
//! one from [`CompiledSpec::pruned_grammar`](crate::CompiledSpec::pruned_grammar)), its
//! Lark form as a structure ([`lark`]), literals quoted as the printed grammars quote them
//! ([`quote_lit`]) and the assertions of a schema that no grammar says ([`GrammarGap`]).

// Stage 5 — grammars. One grammar IR is built from the notation ([`build`]) and printed as
// pest ([`Grammar::to_pest`]), GBNF ([`Grammar::to_gbnf`]) and Lark ([`Grammar::to_lark`]),
// so all describe exactly the language the codec reads and writes. A readable BNF for prompts ([`readable`]) is printed
// from the notation directly (shorter, with the schema's descriptions as comments, like the
// DSS paper's Appendix C). The terminals all of them share, and the decoder's lexers for
// them, are one table: [`Terminal`].
//
// The IR is deterministic with one token of lookahead, so PEG (pest) and CFG (GBNF) read
// it the same way. Optional fields in a fixed order use a chain of rules
// (`R_j ::= o_j (" " R_j+1)? | R_j+1`) rather than `o? o? o?` chains, which are slow in
// llama.cpp and need separators that depend on what was present.
//
// The Lark grammar (llguidance's dialect: vLLM's `guidance` backend, SGLang's `llguidance`
// backend, OpenAI's CFG custom tools) is printed from the IR as the GBNF printer writes its
// rules ([`lark`], [`Grammar::to_lark`], [`Grammar::to_lark_grammar`]), so it says exactly
// what the GBNF says; only its lexer split (which rules are lexemes) is its own.
//
// Files: `build.rs` (notation -> IR), `names.rs` (rule names from schema locations),
// `print.rs` (the printer both machine syntaxes share), `pest.rs`, `gbnf.rs`, `lark.rs`,
// `readable.rs`, `terminal.rs`, `regular.rs` (regular forms: `pattern`, `format`, lengths,
// integer ranges, as one rule per automaton state).

mod build;
mod gbnf;
mod json_prune;
pub mod lark;
mod names;
mod pest;
mod print;
pub(crate) mod prune;
mod readable;
mod regular;
#[cfg(test)]
pub(crate) mod sample;
pub(crate) mod terminal;

pub use crate::gaps::GrammarGap;
pub(crate) use build::{build, build_generation, build_pruned};
pub use print::quote_lit;
pub(crate) use prune::{Consume, Restriction, Resume, SpanPolicy, ValueForm};
pub(crate) use readable::readable;
pub(crate) use terminal::Terminal;

use crate::notation::{is_section, FieldLayout, FieldMode, RecordLayout};
use crate::shape::Shapes;
use std::collections::BTreeSet;

/// A grammar expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum G {
    /// Literal text.
    Lit(String),
    /// One of the shared terminals.
    Term(Terminal),
    /// A rule of this grammar, by name.
    Rule(String),
    /// In sequence.
    Seq(Vec<G>),
    /// One of (none: matches nothing).
    Alt(Vec<G>),
    /// Optional.
    Opt(Box<G>),
    /// Zero or more.
    Star(Box<G>),
    /// Literal text inside a lexeme (a regular form's rules): unlike [`G::Lit`], pest
    /// does not ask for a word boundary after it.
    Text(String),
    /// Between `min` and `max` (`None`: unbounded) repetitions.
    Rep(Box<G>, u32, Option<u32>),
    /// One character of these ranges (sorted, disjoint), for the rules of regular forms
    /// (`regular.rs`).
    Class(Vec<(char, char)>),
}

/// A rule of the grammar.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    /// Its name (the first rule is printed as the start rule of each syntax).
    pub name: String,
    /// What it matches.
    pub body: G,
    /// The schema's description of what it matches, printed above it in pest.
    pub comment: Option<String>,
}

/// The grammar IR: rules in order, `document` first. Printed as GBNF
/// ([`to_gbnf`](Self::to_gbnf)), Lark ([`to_lark`](Self::to_lark), or as a structure:
/// [`to_lark_grammar`](Self::to_lark_grammar)) and pest ([`to_pest`](Self::to_pest)).
#[derive(Debug, Clone)]
pub struct Grammar {
    /// The rules, the start rule first.
    pub(crate) rules: Vec<Rule>,
}

impl G {
    /// Adds the terminals this expression refers to.
    fn terminals(&self, out: &mut BTreeSet<Terminal>) {
        match self {
            G::Term(t) => {
                out.insert(*t);
            }
            G::Lit(_) | G::Text(_) | G::Rule(_) | G::Class(_) => {}
            G::Seq(xs) | G::Alt(xs) => xs.iter().for_each(|x| x.terminals(out)),
            G::Opt(x) | G::Star(x) | G::Rep(x, _, _) => x.terminals(out),
        }
    }
}

impl Grammar {
    /// The terminals to define: those the rules use and those their definitions use, in
    /// [`Terminal::ALL`] order.
    fn terminals(&self) -> Vec<Terminal> {
        let mut used = BTreeSet::new();
        for r in &self.rules {
            r.body.terminals(&mut used);
        }
        let mut todo: Vec<Terminal> = used.iter().copied().collect();
        while let Some(t) = todo.pop() {
            for &d in t.deps() {
                if used.insert(d) {
                    todo.push(d);
                }
            }
        }
        Terminal::ALL
            .iter()
            .copied()
            .filter(|t| used.contains(t))
            .collect()
    }
}

/// The fields of a block document in the order they are written: plain lines first, then
/// sections (see `Encoder::block`); const fields are not written.
pub(crate) fn block_fields<'r>(shapes: &Shapes, r: &'r RecordLayout) -> Vec<&'r FieldLayout> {
    let (sections, plain): (Vec<&FieldLayout>, Vec<&FieldLayout>) = r
        .fields
        .iter()
        .filter(|f| !matches!(f.mode, FieldMode::Const(_)))
        .partition(|f| is_section(shapes, f.expr));
    plain.into_iter().chain(sections).collect()
}
