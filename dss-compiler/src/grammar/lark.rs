//! Lark (llguidance's dialect), printed from the grammar IR: `shorthand.lark` for the engines
//! that read Lark (llguidance, hence vLLM's `guidance` backend, SGLang's `llguidance` backend
//! and OpenAI's context-free-grammar custom tools), `dss prune --format lark`, and
//! dss-runtime's llguidance engine, which builds llguidance's grammar from the structure
//! ([`LarkGrammar`]) without printing any grammar text.
//!
//! The IR's rules are taken as the GBNF printer writes them ([`Grammar::to_gbnf`]): the
//! same names (the start rule `root`), the same structure, the terminals' definitions of
//! `Terminal::gbnf` (as `terminal` writes them: a test checks they agree), so the Lark
//! grammar says exactly what the GBNF says and names its rules alike. Only the lexer split
//! is a choice. llguidance lexes greedily and does not go back, so a text one lexeme reads
//! whole must not also be readable as a run of shorter lexemes elsewhere (`"5f1a"` as
//! `string` where a pattern's rules read it one character at a time: the lexer takes
//! `string` and the pattern's reading is lost). So these rules become lexemes: every non-recursive rule that reaches a character class
//! and no literal space or newline (`string`, `number`: `T_STRING: /…/`, one regex where the
//! rule references no other; a regular form's rules, one per automaton state:
//! `T_PATTERN: "\"" T_PATTERN_0`, their loops solved first: `solve_right_linear`), and
//! every rule such a lexeme reaches. Everything else stays a grammar rule whose literals
//! are lexemes. dss's notation separates elements by a literal space or newline, which no
//! such lexeme holds, so llguidance's greedy lexemes never swallow what follows them.
//! Regexes are written in the syntax of Rust's `regex` crate (`\x{2F}`), which llguidance
//! reads; repetition counts use llguidance's `{m,n}`.

use std::collections::{BTreeSet, HashMap};

use super::regular::smaller_form;
use super::{Grammar, Terminal, G};

/// A grammar IR that cannot be written as Lark: a bug of dss (the IR's rules refer to
/// each other by name; the GBNF printed from such an IR is broken alike).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LarkError {
    /// The grammar has no rule (no start rule).
    #[error("the grammar has no rules")]
    NoRules,
    /// Two rules (or a rule and a terminal) have the same name.
    #[error("rule `{0}` is defined twice")]
    DuplicateRule(String),
    /// A rule refers to a rule the grammar does not define.
    #[error("rule `{rule}` uses undefined rule `{missing}`")]
    UndefinedRule {
        /// The rule (GBNF's name for it).
        rule: String,
        /// The name it refers to.
        missing: String,
    },
}

/// The converter's expression: the IR's expressions as GBNF writes them (a class as it
/// is printed, in the smaller of its two forms: negated or not).
#[derive(Debug, Clone, PartialEq)]
enum Ex {
    Lit(String),
    /// A character class: (negated, ranges of chars, inclusive).
    Class(bool, Vec<(char, char)>),
    Ref(String),
    Seq(Vec<Ex>),
    Alt(Vec<Ex>),
    Rep(Box<Ex>, u32, Option<u32>),
}

/// The rules of `g` in the converter's form, named as the GBNF names them (the start rule
/// `root`, `_` written `-`, so the Lark names are those of the GBNF's rules), then the
/// definitions of the terminals they use ([`Terminal::gbnf`]'s, as [`terminal`] writes them).
fn rules_of(g: &Grammar) -> Vec<(String, Ex)> {
    let mut rules: Vec<(String, Ex)> = g
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let name = if i == 0 {
                "root".to_string()
            } else {
                ir_name(&r.name)
            };
            let mut v = Vec::new();
            items(&r.body, &mut v);
            (name, one(v))
        })
        .collect();
    rules.extend(
        g.terminals()
            .into_iter()
            .map(|t| (t.gbnf_name(), terminal(t))),
    );
    rules
}

/// A rule's name as the GBNF writes it.
fn ir_name(n: &str) -> String {
    n.replace('_', "-")
}

/// The never-matching alternative (an empty [`G::Alt`]): two NUL bytes, as the GBNF says
/// it.
fn never_items(out: &mut Vec<Ex>) {
    out.push(Ex::Class(false, vec![('\0', '\0')]));
    out.push(Ex::Class(false, vec![('\0', '\0')]));
}

/// Items of a sequence as one expression.
fn one(mut v: Vec<Ex>) -> Ex {
    if v.len() == 1 {
        v.remove(0)
    } else {
        Ex::Seq(v)
    }
}

/// Adds `g` to `out`, the items of the sequence it is in: one expression, but two for the
/// never-matching alternative, which the GBNF writes ungrouped (`[\x00] [\x00]`; a
/// repetition applies to its last), so that both grammars have the same structure.
fn items(g: &G, out: &mut Vec<Ex>) {
    match g {
        G::Lit(s) | G::Text(s) => out.push(Ex::Lit(s.clone())),
        G::Term(t) => out.push(Ex::Ref(t.gbnf_name())),
        G::Rule(n) => out.push(Ex::Ref(ir_name(n))),
        G::Seq(xs) => {
            let mut v = Vec::with_capacity(xs.len());
            for x in xs {
                crate::stack::deep(|| items(x, &mut v));
            }
            out.push(one(v));
        }
        G::Alt(xs) if xs.is_empty() => never_items(out),
        G::Alt(xs) => {
            let mut alts: Vec<Ex> = xs
                .iter()
                .map(|x| {
                    let mut v = Vec::new();
                    crate::stack::deep(|| items(x, &mut v));
                    one(v)
                })
                .collect();
            out.push(if alts.len() == 1 {
                alts.remove(0)
            } else {
                Ex::Alt(alts)
            });
        }
        G::Opt(x) => repeat(x, 0, Some(1), out),
        G::Star(x) => repeat(x, 0, None, out),
        G::Rep(x, min, max) => repeat(x, *min, *max, out),
        G::Class(ranges) => {
            let (negated, ranges) = smaller_form(ranges);
            out.push(Ex::Class(negated, ranges));
        }
    }
}

/// `x` repeated `min` to `max` times, added to `out` (see [`items`]).
fn repeat(x: &G, min: u32, max: Option<u32>, out: &mut Vec<Ex>) {
    let mut v = Vec::new();
    crate::stack::deep(|| items(x, &mut v));
    let last = v.pop().unwrap_or(Ex::Seq(Vec::new()));
    out.extend(v);
    out.push(Ex::Rep(Box::new(last), min, max));
}

/// A class of single characters.
fn chars(cs: &str) -> Ex {
    Ex::Class(false, cs.chars().map(|c| (c, c)).collect())
}

/// A class of ranges.
fn ranges(rs: &[(char, char)]) -> Ex {
    Ex::Class(false, rs.to_vec())
}

fn lit(s: &str) -> Ex {
    Ex::Lit(s.to_string())
}

fn name(s: &str) -> Ex {
    Ex::Ref(s.to_string())
}

fn rep(x: Ex, min: u32, max: Option<u32>) -> Ex {
    Ex::Rep(Box::new(x), min, max)
}

fn opt(x: Ex) -> Ex {
    rep(x, 0, Some(1))
}

fn digits() -> Ex {
    ranges(&[('0', '9')])
}

/// `[0-9]{n}`.
fn digits_n(n: u32) -> Ex {
    rep(digits(), n, Some(n))
}

/// A JSON string of at least `min` characters (0 or 1).
fn json_string(min: u32) -> Ex {
    let plain = Ex::Class(true, vec![('"', '"'), ('\\', '\\'), ('\0', '\u{1f}')]);
    let hex = ranges(&[('0', '9'), ('a', 'f'), ('A', 'F')]);
    let escape = Ex::Seq(vec![
        lit("\\"),
        Ex::Alt(vec![
            chars("\"\\/bfnrt"),
            Ex::Seq(vec![lit("u"), rep(hex, 4, Some(4))]),
        ]),
    ]);
    Ex::Seq(vec![
        lit("\""),
        rep(Ex::Alt(vec![plain, escape]), min, None),
        lit("\""),
    ])
}

/// A JSON number's parts: `"-"?` when `signed`, the integer part (`[1-9] [0-9]*` alone
/// when `positive`), a fraction of any digits or only zeros (`integral`), an exponent with
/// a sign (`-` only when not `integral`).
fn json_number(signed: bool, positive: bool, integral: bool) -> Ex {
    let mut parts = Vec::new();
    if signed {
        parts.push(opt(lit("-")));
    }
    let nonzero = || ranges(&[('1', '9')]);
    if positive {
        parts.push(nonzero());
        parts.push(rep(digits(), 0, None));
    } else {
        parts.push(Ex::Alt(vec![
            lit("0"),
            Ex::Seq(vec![nonzero(), rep(digits(), 0, None)]),
        ]));
    }
    let (fraction, sign) = if integral {
        (rep(lit("0"), 1, None), opt(lit("+")))
    } else {
        (rep(digits(), 1, None), opt(chars("-+")))
    };
    parts.push(opt(Ex::Seq(vec![lit("."), fraction])));
    parts.push(opt(Ex::Seq(vec![
        chars("eE"),
        sign,
        rep(digits(), 1, None),
    ])));
    Ex::Seq(parts)
}

/// A terminal's definition: [`Terminal::gbnf`] in the converter's form (a test prints it
/// back as that text).
fn terminal(t: Terminal) -> Ex {
    let date = || {
        vec![
            lit("\""),
            digits_n(4),
            lit("-"),
            digits_n(2),
            lit("-"),
            digits_n(2),
        ]
    };
    match t {
        Terminal::Text => Ex::Alt(vec![name("string"), name("bare")]),
        Terminal::TextNonempty => Ex::Alt(vec![name("nonempty"), name("bare")]),
        Terminal::NonEmpty => json_string(1),
        Terminal::String => json_string(0),
        Terminal::Date => {
            let mut d = date();
            d.push(lit("\""));
            Ex::Seq(d)
        }
        Terminal::DateTime => {
            let mut d = date();
            d.extend([
                chars("Tt "),
                digits_n(2),
                lit(":"),
                digits_n(2),
                lit(":"),
                digits_n(2),
                opt(Ex::Seq(vec![lit("."), rep(digits(), 1, None)])),
                Ex::Alt(vec![
                    chars("Zz"),
                    Ex::Seq(vec![chars("-+"), digits_n(2), lit(":"), digits_n(2)]),
                ]),
                lit("\""),
            ]);
            Ex::Seq(d)
        }
        Terminal::NonnegNumber => json_number(false, false, false),
        Terminal::Natural => json_number(false, false, true),
        Terminal::Positive => json_number(false, true, true),
        Terminal::Number => json_number(true, false, false),
        Terminal::Integer => json_number(true, false, true),
        Terminal::Bare => Ex::Seq(vec![
            Ex::Class(false, vec![('A', 'Z'), ('a', 'z'), ('_', '_'), ('$', '$')]),
            rep(
                Ex::Class(
                    false,
                    vec![
                        ('A', 'Z'),
                        ('a', 'z'),
                        ('0', '9'),
                        ('_', '_'),
                        ('$', '$'),
                        ('.', '.'),
                        ('/', '/'),
                        ('-', '-'),
                    ],
                ),
                0,
                None,
            ),
        ]),
        Terminal::JsonValue => Ex::Alt(vec![
            name("json-object"),
            name("json-array"),
            name("string"),
            name("number"),
            lit("true"),
            lit("false"),
            lit("null"),
        ]),
        Terminal::JsonObject => {
            let member = || vec![name("string"), lit(":"), name("json-value")];
            let mut first = member();
            let mut more = vec![lit(",")];
            more.extend(member());
            first.push(rep(Ex::Seq(more), 0, None));
            Ex::Seq(vec![lit("{"), opt(Ex::Seq(first)), lit("}")])
        }
        Terminal::JsonArray => Ex::Seq(vec![
            lit("["),
            opt(Ex::Seq(vec![
                name("json-value"),
                rep(Ex::Seq(vec![lit(","), name("json-value")]), 0, None),
            ])),
            lit("]"),
        ]),
    }
}

fn refs(e: &Ex, out: &mut BTreeSet<String>) {
    match e {
        Ex::Ref(n) => {
            out.insert(n.clone());
        }
        Ex::Seq(xs) | Ex::Alt(xs) => xs.iter().for_each(|x| refs(x, out)),
        Ex::Rep(x, _, _) => refs(x, out),
        Ex::Lit(_) | Ex::Class(..) => {}
    }
}

fn has_class(e: &Ex) -> bool {
    match e {
        Ex::Class(..) => true,
        Ex::Seq(xs) | Ex::Alt(xs) => xs.iter().any(has_class),
        Ex::Rep(x, _, _) => has_class(x),
        Ex::Lit(_) | Ex::Ref(_) => false,
    }
}

/// Whether a literal of `e` holds a space or a newline: the separators of dss's notation.
fn has_separator(e: &Ex) -> bool {
    match e {
        Ex::Lit(s) => s.contains([' ', '\n']),
        Ex::Seq(xs) | Ex::Alt(xs) => xs.iter().any(has_separator),
        Ex::Rep(x, _, _) => has_separator(x),
        Ex::Class(..) | Ex::Ref(_) => false,
    }
}

/// What a rule and the rules it reaches hold.
#[derive(Clone, Copy)]
struct Reach {
    /// It reaches no rule in progress (no recursion): it is a regular language.
    regular: bool,
    /// A character class somewhere.
    class: bool,
    /// A separator literal somewhere.
    separator: bool,
}

/// `Reach` of `name`, memoized in `marks` (`None`: in progress).
fn reach<'a>(
    name: &'a str,
    bodies: &HashMap<&'a str, &'a Ex>,
    marks: &mut HashMap<&'a str, Option<Reach>>,
) -> Reach {
    match marks.get(name) {
        Some(Some(r)) => return *r,
        // On a cycle: not regular.
        Some(None) => {
            return Reach {
                regular: false,
                class: false,
                separator: false,
            }
        }
        None => {}
    }
    let Some(body) = bodies.get(name) else {
        return Reach {
            regular: false,
            class: false,
            separator: false,
        };
    };
    marks.insert(name, None);
    let mut r = Reach {
        regular: true,
        class: has_class(body),
        separator: has_separator(body),
    };
    let mut used = BTreeSet::new();
    refs(body, &mut used);
    for u in &used {
        let Some((&key, _)) = bodies.get_key_value(u.as_str()) else {
            continue;
        };
        let sub = crate::stack::deep(|| reach(key, bodies, marks));
        r.regular &= sub.regular;
        r.class |= sub.class;
        r.separator |= sub.separator;
    }
    marks.insert(name, Some(r));
    r
}

/// The rules that become lexemes: the non-recursive rules (with `solved`'s bodies for
/// right-linear recursion) that reach a character class and no separator (`string`,
/// `number`; a regular form's rules, one per automaton state: one lexeme, so it competes
/// with `string` as a whole), and every rule these reach.
fn lexemes(rules: &[(String, Ex)], solved: &HashMap<String, Ex>) -> BTreeSet<String> {
    let bodies: HashMap<&str, &Ex> = rules
        .iter()
        .map(|(n, b)| (n.as_str(), solved.get(n).unwrap_or(b)))
        .collect();
    let mut marks = HashMap::new();
    let mut out = BTreeSet::new();
    let mut todo: Vec<&str> = Vec::new();
    for (name, _) in rules {
        let r = reach(name, &bodies, &mut marks);
        if r.regular && r.class && !r.separator {
            todo.push(name);
        }
    }
    while let Some(name) = todo.pop() {
        if !out.insert(name.to_string()) {
            continue;
        }
        let mut used = BTreeSet::new();
        if let Some(body) = bodies.get(name) {
            refs(body, &mut used);
        }
        for u in used {
            if let Some((&key, _)) = bodies.get_key_value(u.as_str()) {
                todo.push(key);
            }
        }
    }
    out
}

/// The largest expression (in nodes) a right-linear rule is solved into; beyond it the
/// rules stay grammar rules.
const SOLVED_MAX_NODES: usize = 2000;

fn nodes(e: &Ex) -> usize {
    match e {
        Ex::Seq(xs) | Ex::Alt(xs) => 1 + xs.iter().map(nodes).sum::<usize>(),
        Ex::Rep(x, _, _) => 1 + nodes(x),
        Ex::Lit(_) | Ex::Class(..) | Ex::Ref(_) => 1,
    }
}

/// The strongly connected components of the rule graph (Tarjan), as rule indexes; only
/// those that are recursive (several rules, or one that references itself).
fn recursive_components(rules: &[(String, Ex)]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        edges: Vec<Vec<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
        _rules: &'a [(String, Ex)],
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for w in self.edges[v].clone() {
                match self.index[w] {
                    None => {
                        crate::stack::deep(|| self.visit(w));
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                let recursive = component.len() > 1 || self.edges[v].contains(&v);
                if recursive {
                    component.sort_unstable();
                    self.out.push(component);
                }
            }
        }
    }
    let at: HashMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.as_str(), i))
        .collect();
    let edges = rules
        .iter()
        .map(|(_, body)| {
            let mut used = BTreeSet::new();
            refs(body, &mut used);
            used.iter()
                .filter_map(|u| at.get(u.as_str()).copied())
                .collect()
        })
        .collect();
    let n = rules.len();
    let mut t = Tarjan {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
        _rules: rules,
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.out
}

/// One rule of a right-linear component as an equation: `X = Σ coef[j] X_j | rest`.
struct Equation {
    coef: Vec<(usize, Ex)>,
    rest: Option<Ex>,
}

fn alt(a: Option<Ex>, b: Ex) -> Ex {
    match a {
        None => b,
        Some(Ex::Alt(mut xs)) => {
            xs.push(b);
            Ex::Alt(xs)
        }
        Some(a) => Ex::Alt(vec![a, b]),
    }
}

fn seq(a: Ex, b: Ex) -> Ex {
    match (a, b) {
        (Ex::Lit(s), b) if s.is_empty() => b,
        (a, Ex::Lit(s)) if s.is_empty() => a,
        (Ex::Seq(mut xs), Ex::Seq(ys)) => {
            xs.extend(ys);
            Ex::Seq(xs)
        }
        (Ex::Seq(mut xs), b) => {
            xs.push(b);
            Ex::Seq(xs)
        }
        (a, Ex::Seq(mut ys)) => {
            ys.insert(0, a);
            Ex::Seq(ys)
        }
        (a, b) => Ex::Seq(vec![a, b]),
    }
}

impl Equation {
    /// `body` as an equation over the component's members (`members[name]`: its place),
    /// if every reference to a member ends an alternative.
    fn of(body: &Ex, members: &HashMap<&str, usize>) -> Option<Self> {
        let alts: &[Ex] = match body {
            Ex::Alt(xs) => xs,
            other => std::slice::from_ref(other),
        };
        let mentions = |e: &Ex| {
            let mut used = BTreeSet::new();
            refs(e, &mut used);
            used.iter().any(|u| members.contains_key(u.as_str()))
        };
        let mut eq = Equation {
            coef: Vec::new(),
            rest: None,
        };
        for a in alts {
            let (prefix, last): (&[Ex], &Ex) = match a {
                Ex::Seq(xs) => xs.split_last().map(|(l, p)| (p, l))?,
                other => (&[], other),
            };
            match last {
                Ex::Ref(r) if members.contains_key(r.as_str()) => {
                    if prefix.iter().any(mentions) {
                        return None;
                    }
                    let j = members[r.as_str()];
                    let p = match prefix {
                        [] => Ex::Lit(String::new()),
                        [one] => one.clone(),
                        many => Ex::Seq(many.to_vec()),
                    };
                    match eq.coef.iter_mut().find(|(k, _)| *k == j) {
                        Some((_, c)) => *c = alt(Some(c.clone()), p),
                        None => eq.coef.push((j, p)),
                    }
                }
                _ if mentions(a) => return None,
                _ => eq.rest = Some(alt(eq.rest.take(), a.clone())),
            }
        }
        Some(eq)
    }
}

/// Right-linear recursion (a regular form's automaton: `s1 ::= [a-z] s1 | "\""`) solved
/// into rules that reference only rules after them (Arden's rule, state by state:
/// `s1 ::= [a-z]* "\""`), so they can be lexemes. Returns the new bodies by rule name, and
/// new rules to add; components that are not right-linear, or would grow too large, are
/// left out.
fn solve_right_linear(rules: &[(String, Ex)]) -> (HashMap<String, Ex>, Vec<(String, Ex)>) {
    let mut solved = HashMap::new();
    let mut added = Vec::new();
    let mut taken: BTreeSet<String> = rules.iter().map(|(n, _)| n.clone()).collect();
    for component in recursive_components(rules) {
        // Automaton states are numbered from the start state and loop back to earlier
        // ones: eliminating the last state first keeps the expressions small. The other
        // order is tried when that one grows too large, then a cut through one state.
        let reversed: Vec<usize> = component.iter().rev().copied().collect();
        let by_elimination = [reversed, component.clone()]
            .iter()
            .find_map(|order| solve_component(rules, order));
        if let Some(bodies) = by_elimination {
            solved.extend(bodies);
        } else if let Some((bodies, new)) = solve_by_cut(rules, &component, &mut taken) {
            solved.extend(bodies);
            added.extend(new);
        }
    }
    (solved, added)
}

/// A rule: its name and body.
type NamedEx = (String, Ex);

/// A right-linear component every cycle of which passes through one state `c` (a long
/// automaton whose states all loop back to its start: `hostname`'s labels): each other
/// state `d` is split into the paths that reach `c` (`d--to-cut`) and those that end
/// (`d--exit`), two rules over the same of the states after it, so nothing is copied;
/// `c ::= (c's paths back to c)* (c's paths that end)`, `d ::= d--to-cut c | d--exit`. Only
/// for components that reference no other rule and hold no separator (their rules all
/// become lexemes, the new ones with them).
fn solve_by_cut(
    rules: &[(String, Ex)],
    component: &[usize],
    taken: &mut BTreeSet<String>,
) -> Option<(Vec<NamedEx>, Vec<NamedEx>)> {
    let members: HashMap<&str, usize> = component
        .iter()
        .enumerate()
        .map(|(k, &i)| (rules[i].0.as_str(), k))
        .collect();
    for &i in component {
        let mut used = BTreeSet::new();
        refs(&rules[i].1, &mut used);
        if has_separator(&rules[i].1) || used.iter().any(|u| !members.contains_key(u.as_str())) {
            return None;
        }
    }
    let eqs = component
        .iter()
        .map(|&i| Equation::of(&rules[i].1, &members))
        .collect::<Option<Vec<_>>>()?;
    let n = eqs.len();
    // The cut: the state most others go to, if the rest has no cycle.
    let mut incoming = vec![0usize; n];
    for eq in &eqs {
        for (j, _) in &eq.coef {
            incoming[*j] += 1;
        }
    }
    let cut = (0..n).max_by_key(|&k| (incoming[k], std::cmp::Reverse(k)))?;
    // The others in an order where each comes after every state it goes to (Kahn).
    let mut out_degree: Vec<usize> = eqs
        .iter()
        .enumerate()
        .map(|(k, eq)| {
            if k == cut {
                0
            } else {
                eq.coef.iter().filter(|(j, _)| *j != cut).count()
            }
        })
        .collect();
    let mut ready: Vec<usize> = (0..n).filter(|&k| k != cut && out_degree[k] == 0).collect();
    let mut order = Vec::new();
    while let Some(k) = ready.pop() {
        order.push(k);
        for (d, eq) in eqs.iter().enumerate() {
            if d == cut || d == k {
                continue;
            }
            let edges = eq.coef.iter().filter(|(j, _)| *j == k).count();
            if edges > 0 {
                out_degree[d] -= edges;
                if out_degree[d] == 0 {
                    ready.push(d);
                }
            }
        }
    }
    if order.len() != n - 1 {
        return None;
    }
    let mut fresh = |base: String| {
        let mut name = base.clone();
        let mut k = 1;
        while !taken.insert(name.clone()) {
            k += 1;
            name = format!("{base}-{k}");
        }
        name
    };
    let name_of = |k: usize| rules[component[k]].0.clone();
    // Per state: the rules of its paths to the cut and of its paths that end.
    let mut to_cut: Vec<Option<String>> = vec![None; n];
    let mut exit: Vec<Option<String>> = vec![None; n];
    let mut added = Vec::new();
    // `(paths to the cut, paths that end)` of an equation, over the states' new rules.
    let split = |eq: &Equation, to_cut: &[Option<String>], exit: &[Option<String>]| {
        let (mut p, mut e): (Option<Ex>, Option<Ex>) = (None, eq.rest.clone());
        for (j, c) in &eq.coef {
            if *j == cut {
                p = Some(alt(p, c.clone()));
                continue;
            }
            if let Some(t) = &to_cut[*j] {
                p = Some(alt(p, seq(c.clone(), Ex::Ref(t.clone()))));
            }
            if let Some(x) = &exit[*j] {
                e = Some(alt(e, seq(c.clone(), Ex::Ref(x.clone()))));
            }
        }
        (p, e)
    };
    let mut bodies = Vec::new();
    for &d in &order {
        let (p, e) = split(&eqs[d], &to_cut, &exit);
        let mut body = None;
        if let Some(p) = p {
            let name = fresh(format!("{}--to-cut", name_of(d)));
            added.push((name.clone(), p));
            body = Some(seq(Ex::Ref(name.clone()), Ex::Ref(name_of(cut))));
            to_cut[d] = Some(name);
        }
        if let Some(e) = e {
            let name = fresh(format!("{}--exit", name_of(d)));
            added.push((name.clone(), e));
            body = Some(alt(body, Ex::Ref(name.clone())));
            exit[d] = Some(name);
        }
        bodies.push((
            name_of(d),
            body.unwrap_or(Ex::Class(true, vec![('\0', char::MAX)])),
        ));
    }
    let (l, r) = split(&eqs[cut], &to_cut, &exit);
    let never = Ex::Class(true, vec![('\0', char::MAX)]);
    let cut_body = match (l, r) {
        (Some(l), Some(r)) => seq(Ex::Rep(Box::new(l), 0, None), r),
        (None, Some(r)) => r,
        (_, None) => never,
    };
    bodies.push((name_of(cut), cut_body));
    Some((bodies, added))
}

/// The bodies of the rules of one right-linear component (`order`: rule indexes, in the
/// order they are eliminated; each refers only to those after it), or `None`.
fn solve_component(rules: &[(String, Ex)], order: &[usize]) -> Option<Vec<(String, Ex)>> {
    let members: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(k, &i)| (rules[i].0.as_str(), k))
        .collect();
    let mut eqs = order
        .iter()
        .map(|&i| Equation::of(&rules[i].1, &members))
        .collect::<Option<Vec<_>>>()?;
    for k in 0..eqs.len() {
        // Arden: X_k = L X_k | R  =>  X_k = L* R.
        if let Some(pos) = eqs[k].coef.iter().position(|(j, _)| *j == k) {
            let (_, l) = eqs[k].coef.remove(pos);
            let star = Ex::Rep(Box::new(l), 0, None);
            for (_, c) in &mut eqs[k].coef {
                *c = seq(star.clone(), c.clone());
            }
            eqs[k].rest = eqs[k].rest.take().map(|r| seq(star.clone(), r));
        }
        // X_k into every later equation.
        let (done, later) = eqs.split_at_mut(k + 1);
        let xk = &done[k];
        for eq in later {
            let Some(pos) = eq.coef.iter().position(|(j, _)| *j == k) else {
                continue;
            };
            let (_, t) = eq.coef.remove(pos);
            for (j, c) in &xk.coef {
                let term = seq(t.clone(), c.clone());
                match eq.coef.iter_mut().find(|(m, _)| m == j) {
                    Some((_, e)) => *e = alt(Some(e.clone()), term),
                    None => eq.coef.push((*j, term)),
                }
            }
            if let Some(r) = &xk.rest {
                eq.rest = Some(alt(eq.rest.take(), seq(t.clone(), r.clone())));
            }
            let size = eq.coef.iter().map(|(_, c)| nodes(c)).sum::<usize>()
                + eq.rest.as_ref().map_or(0, nodes);
            if size > SOLVED_MAX_NODES {
                return None;
            }
        }
    }
    let mut out = Vec::new();
    for (k, eq) in eqs.into_iter().enumerate() {
        let mut body: Option<Ex> = None;
        for (j, c) in eq.coef {
            body = Some(alt(body, seq(c, Ex::Ref(rules[order[j]].0.clone()))));
        }
        // No alternative left: the rule matches nothing.
        let body = match eq.rest {
            Some(r) => alt(body, r),
            None => body.unwrap_or(Ex::Class(true, vec![('\0', char::MAX)])),
        };
        out.push((rules[order[k]].0.clone(), body));
    }
    Some(out)
}

/// How deep a lexeme's expression may nest before its inner parts become lexemes of their
/// own (llguidance's Lark parser takes 30 levels of nesting).
const HOIST_DEPTH: usize = 8;

/// The nesting of groups in `e`.
fn depth(e: &Ex) -> usize {
    match e {
        Ex::Seq(xs) | Ex::Alt(xs) => 1 + xs.iter().map(depth).max().unwrap_or(0),
        Ex::Rep(x, _, _) => 1 + depth(x),
        Ex::Lit(_) | Ex::Class(..) | Ex::Ref(_) => 0,
    }
}

/// `e` (part of lexeme `name`, at nesting `level`) with what is nested deeper than
/// [`HOIST_DEPTH`] moved into lexemes of their own (`parts`: their names, not in `taken`,
/// and bodies), referenced by name.
fn hoist(
    e: &Ex,
    name: &str,
    level: usize,
    taken: &mut BTreeSet<String>,
    parts: &mut Vec<(String, Ex)>,
) -> Ex {
    if level >= HOIST_DEPTH && depth(e) > 0 {
        let mut n = parts.len() + 1;
        let mut part = format!("{name}_PART{n}");
        while !taken.insert(part.clone()) {
            n += 1;
            part = format!("{name}_PART{n}");
        }
        let slot = parts.len();
        parts.push((part.clone(), Ex::Lit(String::new())));
        let body = crate::stack::deep(|| hoist(e, name, 0, taken, parts));
        parts[slot].1 = body;
        return Ex::Ref(part);
    }
    let mut inner = |x: &Ex| crate::stack::deep(|| hoist(x, name, level + 1, taken, parts));
    match e {
        Ex::Seq(xs) => Ex::Seq(xs.iter().map(&mut inner).collect()),
        Ex::Alt(xs) => Ex::Alt(xs.iter().map(&mut inner).collect()),
        Ex::Rep(x, min, max) => Ex::Rep(Box::new(inner(x)), *min, *max),
        other => other.clone(),
    }
}

impl Grammar {
    /// The Lark grammar (llguidance's dialect; start rule `start`), printed from the IR as
    /// [`to_gbnf`](Self::to_gbnf) prints GBNF: both say the same language.
    pub fn to_lark(&self) -> Result<String, LarkError> {
        Ok(self.to_lark_grammar()?.to_string())
    }

    /// [`to_lark`](Self::to_lark) as a structure, which dss-runtime's llguidance engine
    /// builds llguidance's grammar from (see [`LarkGrammar`]).
    pub fn to_lark_grammar(&self) -> Result<LarkGrammar, LarkError> {
        convert(rules_of(self))
    }
}

/// llguidance's Lark as a structure: exactly what [`Grammar::to_lark`] prints (its
/// [`Display`](std::fmt::Display) is that text), for engines that build llguidance's grammar
/// from it directly instead of having llguidance parse the text again (dss-runtime does, so
/// a rebuild under pruning prints no grammar text and parses none).
#[derive(Debug, Clone, PartialEq)]
pub struct LarkGrammar {
    /// The rule `start` expands to (`start: NAME`).
    pub start: String,
    /// Rules and terminals, in the order they are printed.
    pub items: Vec<LarkItem>,
}

/// One Lark definition.
#[derive(Debug, Clone, PartialEq)]
pub struct LarkItem {
    /// Its Lark name: `r_…` for a rule, upper case for a terminal.
    pub name: String,
    /// What it expands to.
    pub body: LarkBody,
}

/// The right-hand side of a Lark definition.
#[derive(Debug, Clone, PartialEq)]
pub enum LarkBody {
    /// A grammar rule: its literals and regexes are lexemes, its names rules or terminals.
    Rule(LarkExpr),
    /// A terminal written as one regex (the syntax of Rust's `regex` crate).
    Regex(String),
    /// A terminal written as Lark writes terminals: literals, regexes, other terminals.
    Terminal(LarkExpr),
}

/// A Lark expression.
#[derive(Debug, Clone, PartialEq)]
pub enum LarkExpr {
    /// A string literal (empty: the empty string).
    Lit(String),
    /// A regex (`/…/`, the syntax of Rust's `regex` crate).
    Regex(String),
    /// A rule's or terminal's name.
    Ref(String),
    /// A sequence (empty: the empty string).
    Seq(Vec<LarkExpr>),
    /// Alternatives.
    Alt(Vec<LarkExpr>),
    /// `min` to `max` (`None`: unbounded) repetitions.
    Rep(Box<LarkExpr>, u32, Option<u32>),
}

impl LarkGrammar {
    /// The definition named `name`, if any.
    pub fn item(&self, name: &str) -> Option<&LarkItem> {
        self.items.iter().find(|i| i.name == name)
    }
}

impl std::fmt::Display for LarkGrammar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "// Generated by dss from a JSON Schema: Lark as llguidance reads it. Start rule: start."
        )?;
        writeln!(f, "start: {}", self.start)?;
        for item in &self.items {
            match &item.body {
                LarkBody::Rule(e) | LarkBody::Terminal(e) => {
                    writeln!(f, "{}: {}", item.name, lark_expr(e, 0))?
                }
                LarkBody::Regex(rx) => writeln!(f, "{}: /{rx}/", item.name)?,
            }
        }
        Ok(())
    }
}

/// `e` as a Lark expression: names mapped by `names` (a name not in it stays as it is),
/// character classes as regexes.
fn to_lark_expr(e: &Ex, names: &HashMap<String, String>) -> LarkExpr {
    match e {
        Ex::Lit(s) => LarkExpr::Lit(s.clone()),
        Ex::Class(..) => LarkExpr::Regex(regex(e, 0)),
        Ex::Ref(n) => LarkExpr::Ref(names.get(n).cloned().unwrap_or_else(|| n.clone())),
        Ex::Seq(xs) => LarkExpr::Seq(xs.iter().map(|x| to_lark_expr(x, names)).collect()),
        Ex::Alt(xs) => LarkExpr::Alt(xs.iter().map(|x| to_lark_expr(x, names)).collect()),
        Ex::Rep(x, min, max) => LarkExpr::Rep(Box::new(to_lark_expr(x, names)), *min, *max),
    }
}

/// The Lark structure of `rules` (the first the start rule).
fn convert(mut rules: Vec<(String, Ex)>) -> Result<LarkGrammar, LarkError> {
    let root = rules.first().ok_or(LarkError::NoRules)?.0.clone();
    let mut defined: HashMap<&str, &Ex> = HashMap::with_capacity(rules.len());
    for (name, body) in &rules {
        if defined.insert(name.as_str(), body).is_some() {
            return Err(LarkError::DuplicateRule(name.clone()));
        }
    }
    for (name, body) in &rules {
        let mut used = BTreeSet::new();
        refs(body, &mut used);
        if let Some(missing) = used.iter().find(|u| !defined.contains_key(u.as_str())) {
            return Err(LarkError::UndefinedRule {
                rule: name.clone(),
                missing: missing.clone(),
            });
        }
    }
    // Lark names: rules lower-case, lexemes upper-case, all unique.
    let (solved, added) = solve_right_linear(&rules);
    rules.extend(added);
    let lexemes = lexemes(&rules, &solved);
    let mut names: HashMap<String, String> = HashMap::new();
    let mut taken = BTreeSet::new();
    for (name, _) in &rules {
        let terminal = lexemes.contains(name);
        let base: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let base = if terminal {
            format!("T_{}", base.to_ascii_uppercase())
        } else {
            format!("r_{base}")
        };
        let mut candidate = base.clone();
        let mut n = 1;
        while !taken.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{base}_{n}");
        }
        names.insert(name.clone(), candidate);
    }
    let mut items = Vec::new();
    for (name, body) in &rules {
        let lark_name = &names[name];
        if !lexemes.contains(name) {
            items.push(LarkItem {
                name: lark_name.clone(),
                body: LarkBody::Rule(to_lark_expr(body, &names)),
            });
            continue;
        }
        // A lexeme is written with its recursion solved (a grammar rule keeps its own): one
        // regex where it references no other rule and is shallow, else as Lark writes
        // terminals (literals, regexes, other lexemes' names), its deep parts named apart.
        let body = solved.get(name).unwrap_or(body);
        let mut used = BTreeSet::new();
        refs(body, &mut used);
        if used.is_empty() && depth(body) <= HOIST_DEPTH {
            items.push(LarkItem {
                name: lark_name.clone(),
                body: LarkBody::Regex(regex(body, 0)),
            });
            continue;
        }
        let mut parts = Vec::new();
        let top = hoist(body, lark_name, 0, &mut taken, &mut parts);
        items.push(LarkItem {
            name: lark_name.clone(),
            body: LarkBody::Terminal(to_lark_expr(&top, &names)),
        });
        for (part, e) in &parts {
            items.push(LarkItem {
                name: part.clone(),
                body: LarkBody::Terminal(to_lark_expr(e, &names)),
            });
        }
    }
    Ok(LarkGrammar {
        start: names[&root].clone(),
        items,
    })
}

/// A Lark string literal. Every control char (and DEL, which llguidance's string lexer
/// rejects raw) is escaped.
fn lark_lit(s: &str) -> String {
    super::print::quote_lit(s, |c| {
        ((c as u32) < 0x20 || c == '\u{7f}').then(|| format!("\\u{:04x}", c as u32))
    })
}

fn rep_suffix(min: u32, max: Option<u32>) -> String {
    match (min, max) {
        (0, None) => "*".into(),
        (1, None) => "+".into(),
        (0, Some(1)) => "?".into(),
        (m, None) => format!("{{{m},}}"),
        (m, Some(n)) if m == n => format!("{{{m}}}"),
        (m, Some(n)) => format!("{{{m},{n}}}"),
    }
}

/// Precedence: 0 alternatives, 1 sequence, 2 atom.
fn lark_expr(e: &LarkExpr, prec: u8) -> String {
    let group = |s: String, at: u8| if prec > at { format!("({s})") } else { s };
    match e {
        LarkExpr::Lit(s) if s.is_empty() => "\"\"".into(),
        LarkExpr::Lit(s) => lark_lit(s),
        LarkExpr::Regex(rx) => format!("/{rx}/"),
        LarkExpr::Ref(n) => n.clone(),
        LarkExpr::Seq(xs) if xs.is_empty() => "\"\"".into(),
        LarkExpr::Seq(xs) => group(
            xs.iter()
                .map(|x| lark_expr(x, 2))
                .collect::<Vec<_>>()
                .join(" "),
            1,
        ),
        LarkExpr::Alt(xs) => group(
            xs.iter()
                .map(|x| lark_expr(x, 1))
                .collect::<Vec<_>>()
                .join(" | "),
            0,
        ),
        LarkExpr::Rep(x, min, max) => format!("{}{}", lark_expr(x, 2), rep_suffix(*min, *max)),
    }
}

/// A regex char, escaped so nothing in it is special (also not `/`).
fn rx_char(c: char) -> String {
    if c.is_ascii_alphanumeric() || c == ' ' || c == '_' {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", c as u32)
    }
}

fn regex(e: &Ex, prec: u8) -> String {
    let group = |s: String, at: u8| if prec > at { format!("(?:{s})") } else { s };
    match e {
        Ex::Lit(s) => group(s.chars().map(rx_char).collect(), 1),
        Ex::Class(negated, ranges) => {
            let mut out = String::from(if *negated { "[^" } else { "[" });
            for &(lo, hi) in ranges {
                out.push_str(&rx_char(lo));
                if hi != lo {
                    out.push('-');
                    out.push_str(&rx_char(hi));
                }
            }
            out.push(']');
            out
        }
        // Terminal rules reference no rules (checked by the caller).
        Ex::Ref(_) => "[^\\x{0}-\\x{10FFFF}]".into(),
        Ex::Seq(xs) => group(xs.iter().map(|x| regex(x, 2)).collect(), 1),
        Ex::Alt(xs) => group(
            xs.iter().map(|x| regex(x, 1)).collect::<Vec<_>>().join("|"),
            0,
        ),
        Ex::Rep(x, min, max) => format!("{}{}", regex(x, 3), rep_suffix(*min, *max)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Rule;
    use super::*;

    /// A grammar of these rules, the first the start rule.
    fn grammar(rules: Vec<(&str, G)>) -> Grammar {
        Grammar {
            rules: rules
                .into_iter()
                .map(|(name, body)| Rule {
                    name: name.to_string(),
                    body,
                    comment: None,
                })
                .collect(),
        }
    }

    fn lit_g(s: &str) -> G {
        G::Lit(s.to_string())
    }

    fn rule_g(n: &str) -> G {
        G::Rule(n.to_string())
    }

    fn class_g(ranges: &[(char, char)]) -> G {
        G::Class(ranges.to_vec())
    }

    fn lark_of(rules: Vec<(&str, G)>) -> String {
        grammar(rules).to_lark().expect("converts")
    }

    /// `e` written as [`Terminal::gbnf`] writes terminals (groups `( … )`, classes with
    /// `\xHH` for control characters); `prec` as in the GBNF printer.
    fn gbnf_text(e: &Ex, prec: u8) -> String {
        let group = |s: String, at: u8| {
            if prec > at {
                format!("( {s} )")
            } else {
                s
            }
        };
        match e {
            Ex::Lit(s) => format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
            Ex::Class(negated, ranges) => {
                let ch = |c: char| match c {
                    '\\' => "\\\\".to_string(),
                    c if (c as u32) < 0x20 => format!("\\x{:02X}", c as u32),
                    c => c.to_string(),
                };
                let mut out = String::from(if *negated { "[^" } else { "[" });
                for &(lo, hi) in ranges {
                    out.push_str(&ch(lo));
                    if hi != lo {
                        out.push('-');
                        out.push_str(&ch(hi));
                    }
                }
                out + "]"
            }
            Ex::Ref(n) => n.clone(),
            Ex::Seq(xs) => group(
                xs.iter()
                    .map(|x| gbnf_text(x, 2))
                    .collect::<Vec<_>>()
                    .join(" "),
                1,
            ),
            Ex::Alt(xs) => group(
                xs.iter()
                    .map(|x| gbnf_text(x, 1))
                    .collect::<Vec<_>>()
                    .join(" | "),
                0,
            ),
            Ex::Rep(x, min, max) => format!("{}{}", gbnf_text(x, 3), rep_suffix(*min, *max)),
        }
    }

    #[test]
    fn terminals_are_defined_as_their_gbnf_says() {
        for &t in Terminal::ALL {
            assert_eq!(gbnf_text(&terminal(t), 0), t.gbnf(), "{t:?}");
        }
    }

    #[test]
    fn converts_rules_literals_and_terminals() {
        let lark = lark_of(vec![
            (
                "document",
                G::Seq(vec![
                    lit_g("fields:\n"),
                    G::Star(Box::new(G::Seq(vec![rule_g("item"), lit_g("\n")]))),
                    G::Opt(Box::new(rule_g("tail"))),
                ]),
            ),
            (
                "item",
                G::Seq(vec![
                    G::Term(Terminal::String),
                    G::Opt(Box::new(G::Seq(vec![lit_g(" "), rule_g("agg")]))),
                ]),
            ),
            ("agg", G::Alt(vec![lit_g("sum"), lit_g("avg")])),
            (
                "tail",
                G::Seq(vec![
                    lit_g("chart: "),
                    G::Alt(vec![lit_g("bar"), lit_g("line")]),
                    lit_g("\n"),
                ]),
            ),
        ]);
        assert!(lark.starts_with("// Generated by dss"), "{lark}");
        assert!(lark.contains("start: r_root\n"), "{lark}");
        assert!(
            lark.contains("r_root: \"fields:\\n\" (r_item \"\\n\")* r_tail?"),
            "{lark}"
        );
        assert!(lark.contains("r_agg: \"sum\" | \"avg\""), "{lark}");
        assert!(lark.contains("T_STRING: /"), "{lark}");
        assert!(lark.contains("{4}"), "{lark}");
        assert!(lark.contains("r_item: T_STRING (\" \" r_agg)?"), "{lark}");
    }

    #[test]
    fn regular_rules_become_one_lexeme() {
        // A pattern's automaton (one rule per state, a literal-only rule reached from it),
        // a recursive rule, and a rule with a separator.
        let hex = || class_g(&[('0', '9'), ('a', 'f')]);
        let lark = lark_of(vec![
            (
                "document",
                G::Alt(vec![
                    G::Star(Box::new(G::Seq(vec![rule_g("id"), lit_g("\n")]))),
                    rule_g("list"),
                    rule_g("pair"),
                ]),
            ),
            ("id", G::Seq(vec![G::Text("\"".into()), rule_g("id_0")])),
            (
                "id_0",
                G::Alt(vec![
                    G::Seq(vec![hex(), rule_g("id_1")]),
                    G::Seq(vec![rule_g("sign"), rule_g("id_1")]),
                ]),
            ),
            ("id_1", G::Seq(vec![hex(), G::Text("\"".into())])),
            ("sign", G::Alt(vec![lit_g("+"), lit_g("-")])),
            (
                "list",
                G::Seq(vec![
                    lit_g("["),
                    G::Alt(vec![class_g(&[('0', '9')]), rule_g("list")]),
                    lit_g("]"),
                ]),
            ),
            (
                "pair",
                G::Seq(vec![
                    class_g(&[('a', 'z')]),
                    lit_g(" "),
                    class_g(&[('a', 'z')]),
                ]),
            ),
        ]);
        assert!(lark.contains("T_ID: \"\\\"\" T_ID_0\n"), "{lark}");
        assert!(
            lark.contains("T_ID_0: /[0-9a-f]/ T_ID_1 | T_SIGN T_ID_1\n"),
            "{lark}"
        );
        assert!(lark.contains("T_ID_1: /[0-9a-f](?:\\x{22})/\n"), "{lark}");
        assert!(lark.contains("T_SIGN: /\\x{2B}|\\x{2D}/\n"), "{lark}");
        assert!(
            lark.contains("r_list: \"[\" (/[0-9]/ | r_list) \"]\"\n"),
            "{lark}"
        );
        assert!(lark.contains("r_pair: /[a-z]/ \" \" /[a-z]/\n"), "{lark}");
        assert!(
            lark.contains("r_root: (T_ID \"\\n\")* | r_list | r_pair\n"),
            "{lark}"
        );
    }

    #[test]
    fn right_linear_recursion_is_solved_into_lexemes() {
        // An automaton with a loop through two states, and a self-loop.
        let lark = lark_of(vec![
            (
                "document",
                G::Star(Box::new(G::Seq(vec![rule_g("id"), lit_g("\n")]))),
            ),
            ("id", G::Seq(vec![G::Text("\"".into()), rule_g("s0")])),
            (
                "s0",
                G::Alt(vec![
                    G::Seq(vec![class_g(&[('a', 'z')]), rule_g("s1")]),
                    G::Seq(vec![class_g(&[('0', '9')]), rule_g("s0")]),
                ]),
            ),
            (
                "s1",
                G::Alt(vec![
                    G::Seq(vec![G::Text("-".into()), rule_g("s0")]),
                    G::Text("\"".into()),
                ]),
            ),
        ]);
        assert!(lark.contains("r_root: (T_ID \"\\n\")*\n"), "{lark}");
        assert!(lark.contains("T_ID: \"\\\"\" T_S0\n"), "{lark}");
        // s1 = "-" s0 | "\"", so s0 = ([0-9] | [a-z] "-")* [a-z] "\"" (the last state is
        // eliminated first).
        assert!(
            lark.contains("T_S0: /(?:[0-9]|[a-z](?:\\x{2D}))*[a-z](?:\\x{22})/\n"),
            "{lark}"
        );
        assert!(lark.contains("T_S1: \"-\" T_S0 | \"\\\"\"\n"), "{lark}");
        // Recursion that is not right-linear stays a grammar rule (the start rule is
        // referred to by its name, `root` in both grammars).
        let lark = lark_of(vec![(
            "root",
            G::Alt(vec![
                G::Seq(vec![lit_g("("), rule_g("root"), lit_g(")")]),
                class_g(&[('a', 'z')]),
            ]),
        )]);
        assert!(
            lark.contains("r_root: \"(\" r_root \")\" | /[a-z]/"),
            "{lark}"
        );
    }

    #[test]
    fn a_long_automaton_is_cut_at_its_start() {
        // hostname's shape (labels of letters and inner dashes, up to 40 letters, joined
        // by "."): every label state goes back to the start; too large to solve by
        // elimination.
        let letter = || class_g(&[('a', 'z')]);
        let s = |k: usize| rule_g(&format!("s{k}"));
        let mut rules = vec![
            (
                "document".to_string(),
                G::Star(Box::new(G::Seq(vec![rule_g("host"), lit_g("\n")]))),
            ),
            ("host".into(), G::Seq(vec![G::Text("\"".into()), s(0)])),
            ("s0".into(), G::Seq(vec![letter(), s(1)])),
        ];
        for k in 0..40 {
            let (odd, even) = (2 * k + 1, 2 * k + 2);
            let mut alts = Vec::new();
            if k < 39 {
                alts.push(G::Seq(vec![G::Text("-".into()), s(even)]));
                alts.push(G::Seq(vec![letter(), s(even + 1)]));
            }
            alts.push(G::Seq(vec![G::Text(".".into()), s(0)]));
            alts.push(G::Text("\"".into()));
            rules.push((format!("s{odd}"), G::Alt(alts)));
            if k < 39 {
                rules.push((format!("s{even}"), G::Seq(vec![letter(), s(even + 1)])));
            }
        }
        let lark = lark_of(rules.iter().map(|(n, g)| (n.as_str(), g.clone())).collect());
        assert!(lark.contains("r_root: (T_HOST \"\\n\")*\n"), "{lark}");
        assert!(lark.contains("T_S0: "), "{lark}");
        assert!(lark.contains("T_S1__TO_CUT: "), "{lark}");
        assert!(
            lark.contains("T_S1: T_S1__TO_CUT T_S0 | T_S1__EXIT\n"),
            "{lark}"
        );
        assert!(!lark.contains("r_s"), "every state is a lexeme: {lark}");
    }

    #[test]
    fn deep_lexemes_are_split() {
        // Twelve nested groups: deeper than llguidance's Lark parser reads in one rule.
        let mut body = class_g(&[('a', 'z')]);
        for _ in 0..12 {
            body = G::Opt(Box::new(G::Seq(vec![G::Text("x".into()), body])));
        }
        let lark = lark_of(vec![
            ("document", G::Seq(vec![rule_g("w"), lit_g("\n")])),
            ("w", body),
        ]);
        assert!(lark.contains("T_W: "), "{lark}");
        assert!(lark.contains("T_W_PART1: "), "{lark}");
        for line in lark.lines() {
            assert!(line.matches('(').count() <= HOIST_DEPTH, "{line}");
        }
    }

    #[test]
    fn the_never_matching_alternative_matches_two_nul_bytes() {
        // An empty alternative is written `[\x00] [\x00]` in GBNF (never valid shorthand):
        // the Lark says the same, a repetition of it applying to its last class.
        let lark = lark_of(vec![
            (
                "document",
                G::Seq(vec![
                    lit_g("a"),
                    G::Alt(Vec::new()),
                    G::Opt(Box::new(G::Alt(Vec::new()))),
                    lit_g("\n"),
                ]),
            ),
            ("none", G::Alt(Vec::new())),
        ]);
        assert!(
            lark.contains("r_root: \"a\" /[\\x{0}]/ /[\\x{0}]/ /[\\x{0}]/ /[\\x{0}]/? \"\\n\"\n"),
            "{lark}"
        );
        assert!(lark.contains("T_NONE: /[\\x{0}][\\x{0}]/\n"), "{lark}");
    }

    #[test]
    fn an_undefined_or_repeated_rule_is_an_error() {
        let e = grammar(vec![("document", rule_g("item"))])
            .to_lark()
            .expect_err("undefined");
        assert_eq!(
            e,
            LarkError::UndefinedRule {
                rule: "root".into(),
                missing: "item".into()
            }
        );
        let e = grammar(vec![
            ("document", lit_g("a")),
            ("x", lit_g("b")),
            ("x", lit_g("c")),
        ])
        .to_lark()
        .expect_err("twice");
        assert_eq!(e, LarkError::DuplicateRule("x".into()));
        assert_eq!(
            grammar(Vec::new()).to_lark().expect_err("empty"),
            LarkError::NoRules
        );
    }

    #[test]
    fn escapes_for_lark() {
        assert_eq!(
            lark_lit("a\"b\\\n\u{1}\u{7f}"),
            "\"a\\\"b\\\\\\n\\u0001\\u007f\""
        );
        assert_eq!(rx_char('/'), "\\x{2F}");
        assert_eq!(
            regex(&Ex::Class(true, vec![('"', '"'), ('\0', '\u{1f}')]), 0),
            "[^\\x{22}\\x{0}-\\x{1F}]"
        );
        // A class the IR writes as its complement is negated in Lark as in GBNF.
        let lark = lark_of(vec![(
            "document",
            G::Seq(vec![class_g(&[('\0', '!'), ('#', char::MAX)]), lit_g("\n")]),
        )]);
        assert!(lark.contains("/[^\\x{22}]/"), "{lark}");
    }
}
