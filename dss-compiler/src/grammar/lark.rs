//! GBNF → Lark (llguidance's dialect): `shorthand.lark` for the engines that read Lark
//! (llguidance, hence vLLM's `guidance` backend, SGLang's `llguidance` backend and OpenAI's
//! context-free-grammar custom tools), `dss prune --format lark`, and dss-runtime's
//! llguidance engine, which runs exactly the GBNF dss emits.
//!
//! Why convert GBNF rather than print Lark from the grammar IR: the GBNF is the portable
//! artifact (`shorthand.gbnf`, a pruned grammar), so every Lark grammar says exactly what a
//! GBNF grammar says, and any hand-written GBNF converts as well. The conversion is
//! structural; only the lexer split is a choice. llguidance lexes greedily and does not go
//! back, so a text one lexeme reads whole must not also be readable as a run of shorter
//! lexemes elsewhere (`"5f1a"` as `string` where a pattern's rules read it one character at
//! a time: the lexer takes `string` and the pattern's reading is lost). So these rules
//! become lexemes: every non-recursive rule that reaches a character class and no literal
//! space or newline (`string`, `number`: `T_STRING: /…/`, one regex where the rule
//! references no other; a regular form's rules, one per automaton state:
//! `T_PATTERN: "\"" T_PATTERN_0`, their loops solved first: `solve_right_linear`), and
//! every rule such a lexeme reaches. Everything else
//! stays a grammar rule whose literals are lexemes. dss's notation separates elements by a
//! literal space or newline, which no such lexeme holds, so llguidance's greedy lexemes never
//! swallow what follows them. Regexes are written in the syntax of Rust's `regex` crate
//! (`\x{2F}`), which llguidance reads; repetition counts use llguidance's `{m,n}`.

use std::collections::{BTreeSet, HashMap};

/// A GBNF text the converter cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("GBNF line {line}: {message}")]
#[non_exhaustive]
pub struct LarkError {
    /// The GBNF line (1-based).
    pub line: usize,
    /// What cannot be converted.
    pub message: String,
}

/// A GBNF expression.
#[derive(Debug, Clone, PartialEq)]
enum Ex {
    Lit(String),
    /// A character class: (negated, ranges of chars, inclusive).
    Class(bool, Vec<(char, char)>),
    Any,
    Ref(String),
    Seq(Vec<Ex>),
    Alt(Vec<Ex>),
    Rep(Box<Ex>, u32, Option<u32>),
}

struct Parser<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn line(&self) -> usize {
        self.text[..self.pos.min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }

    fn err(&self, message: impl Into<String>) -> LarkError {
        LarkError {
            line: self.line(),
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// Skips spaces and comments; newlines too when `newlines`.
    fn space(&mut self, newlines: bool) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' if newlines => self.pos += 1,
                b'#' => {
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn name(&mut self) -> Option<String> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            self.pos += 1;
        }
        (self.pos > start).then(|| self.text[start..self.pos].to_string())
    }

    /// The next char of the source (UTF-8 aware).
    fn next_char(&mut self) -> Result<char, LarkError> {
        let c = self.text[self.pos..]
            .chars()
            .next()
            .ok_or_else(|| self.err("unexpected end of grammar"))?;
        self.pos += c.len_utf8();
        Ok(c)
    }

    fn hex(&mut self, digits: usize) -> Result<char, LarkError> {
        let end = self.pos + digits;
        let hex = self
            .text
            .get(self.pos..end)
            .ok_or_else(|| self.err("truncated escape"))?;
        let v = u32::from_str_radix(hex, 16).map_err(|_| self.err("bad hex escape"))?;
        self.pos = end;
        char::from_u32(v).ok_or_else(|| self.err("escape is not a Unicode scalar"))
    }

    /// One char of a literal or class, with GBNF escapes.
    fn char_escaped(&mut self) -> Result<char, LarkError> {
        let c = self.next_char()?;
        if c != '\\' {
            return Ok(c);
        }
        let e = self.next_char()?;
        Ok(match e {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            '0' => '\0',
            'x' => self.hex(2)?,
            'u' => self.hex(4)?,
            'U' => self.hex(8)?,
            other => other,
        })
    }

    fn rule(&mut self) -> Result<Option<(String, Ex)>, LarkError> {
        self.space(true);
        if self.peek().is_none() {
            return Ok(None);
        }
        let name = self
            .name()
            .ok_or_else(|| self.err("expected a rule name"))?;
        self.space(false);
        if !self.text[self.pos..].starts_with("::=") {
            return Err(self.err(format!("expected ::= after `{name}`")));
        }
        self.pos += 3;
        let body = self.alternatives(false)?;
        Ok(Some((name, body)))
    }

    fn alternatives(&mut self, nested: bool) -> Result<Ex, LarkError> {
        let mut alts = vec![self.sequence(nested)?];
        while self.peek() == Some(b'|') {
            self.pos += 1;
            self.space(true);
            alts.push(self.sequence(nested)?);
        }
        Ok(if alts.len() == 1 {
            alts.remove(0)
        } else {
            Ex::Alt(alts)
        })
    }

    fn sequence(&mut self, nested: bool) -> Result<Ex, LarkError> {
        let mut items = Vec::new();
        loop {
            self.space(nested);
            let Some(b) = self.peek() else { break };
            let atom = match b {
                b'"' => {
                    self.pos += 1;
                    let mut s = String::new();
                    loop {
                        match self.peek() {
                            None => return Err(self.err("unterminated literal")),
                            Some(b'"') => {
                                self.pos += 1;
                                break;
                            }
                            Some(_) => s.push(self.char_escaped()?),
                        }
                    }
                    Ex::Lit(s)
                }
                b'[' => {
                    self.pos += 1;
                    let negated = self.peek() == Some(b'^');
                    if negated {
                        self.pos += 1;
                    }
                    let mut ranges = Vec::new();
                    loop {
                        match self.peek() {
                            None => return Err(self.err("unterminated character class")),
                            Some(b']') => {
                                self.pos += 1;
                                break;
                            }
                            Some(_) => {
                                let lo = self.char_escaped()?;
                                let hi = if self.peek() == Some(b'-')
                                    && self.src.get(self.pos + 1) != Some(&b']')
                                {
                                    self.pos += 1;
                                    self.char_escaped()?
                                } else {
                                    lo
                                };
                                if hi < lo {
                                    return Err(self.err("reversed range in character class"));
                                }
                                ranges.push((lo, hi));
                            }
                        }
                    }
                    Ex::Class(negated, ranges)
                }
                b'.' => {
                    self.pos += 1;
                    Ex::Any
                }
                b'(' => {
                    self.pos += 1;
                    self.space(true);
                    let inner = self.alternatives(true)?;
                    self.space(true);
                    if self.peek() != Some(b')') {
                        return Err(self.err("expected )"));
                    }
                    self.pos += 1;
                    inner
                }
                b if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' => {
                    let n = self.name().ok_or_else(|| self.err("expected a name"))?;
                    // `name ::=` starts the next rule: this sequence is over.
                    let save = self.pos;
                    self.space(false);
                    if self.text[self.pos..].starts_with("::=") {
                        self.pos = save - n.len();
                        break;
                    }
                    self.pos = save;
                    Ex::Ref(n)
                }
                _ => break,
            };
            items.push(self.postfix(atom)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Ex::Seq(items)
        })
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.text[start..self.pos].parse().ok()
    }

    fn postfix(&mut self, mut atom: Ex) -> Result<Ex, LarkError> {
        loop {
            atom = match self.peek() {
                Some(b'*') => Ex::Rep(Box::new(atom), 0, None),
                Some(b'+') => Ex::Rep(Box::new(atom), 1, None),
                Some(b'?') => Ex::Rep(Box::new(atom), 0, Some(1)),
                Some(b'{') => {
                    self.pos += 1;
                    self.space(false);
                    let min = self.number().ok_or_else(|| self.err("expected a count"))?;
                    self.space(false);
                    let max = if self.peek() == Some(b',') {
                        self.pos += 1;
                        self.space(false);
                        self.number()
                    } else {
                        Some(min)
                    };
                    self.space(false);
                    if self.peek() != Some(b'}') {
                        return Err(self.err("expected }"));
                    }
                    if max.is_some_and(|m| m < min) {
                        return Err(self.err("repetition maximum below minimum"));
                    }
                    Ex::Rep(Box::new(atom), min, max)
                }
                _ => return Ok(atom),
            };
            self.pos += 1;
        }
    }
}

fn refs(e: &Ex, out: &mut BTreeSet<String>) {
    match e {
        Ex::Ref(n) => {
            out.insert(n.clone());
        }
        Ex::Seq(xs) | Ex::Alt(xs) => xs.iter().for_each(|x| refs(x, out)),
        Ex::Rep(x, _, _) => refs(x, out),
        Ex::Lit(_) | Ex::Class(..) | Ex::Any => {}
    }
}

fn has_class(e: &Ex) -> bool {
    match e {
        Ex::Class(..) | Ex::Any => true,
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
        Ex::Class(..) | Ex::Any | Ex::Ref(_) => false,
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
        Ex::Lit(_) | Ex::Class(..) | Ex::Any | Ex::Ref(_) => 1,
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
        Ex::Lit(_) | Ex::Class(..) | Ex::Any | Ex::Ref(_) => 0,
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

impl super::Grammar {
    /// The Lark grammar (llguidance's dialect; start rule `start`): the GBNF of
    /// [`to_gbnf`](Self::to_gbnf) converted, so both say the same language.
    pub fn to_lark(&self) -> Result<String, LarkError> {
        gbnf_to_lark(&self.to_gbnf(), "root")
    }
}

/// Converts a GBNF grammar with start rule `root` to llguidance's Lark (start rule `start`).
pub fn gbnf_to_lark(gbnf: &str, root: &str) -> Result<String, LarkError> {
    Ok(gbnf_to_lark_grammar(gbnf, root)?.to_string())
}

/// llguidance's Lark as a structure: exactly what [`gbnf_to_lark`] prints (its
/// [`Display`](std::fmt::Display) is that text), for engines that build llguidance's grammar
/// from it directly instead of having llguidance parse the text again (dss-runtime does, so
/// a rebuild under pruning does not pay for lexing and parsing Lark).
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
            "// Converted by dss from GBNF: Lark as llguidance reads it. Start rule: start."
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
        Ex::Class(..) | Ex::Any => LarkExpr::Regex(regex(e, 0)),
        Ex::Ref(n) => LarkExpr::Ref(names.get(n).cloned().unwrap_or_else(|| n.clone())),
        Ex::Seq(xs) => LarkExpr::Seq(xs.iter().map(|x| to_lark_expr(x, names)).collect()),
        Ex::Alt(xs) => LarkExpr::Alt(xs.iter().map(|x| to_lark_expr(x, names)).collect()),
        Ex::Rep(x, min, max) => LarkExpr::Rep(Box::new(to_lark_expr(x, names)), *min, *max),
    }
}

/// [`gbnf_to_lark`] as a structure (see [`LarkGrammar`]).
pub fn gbnf_to_lark_grammar(gbnf: &str, root: &str) -> Result<LarkGrammar, LarkError> {
    let mut p = Parser {
        src: gbnf.as_bytes(),
        text: gbnf,
        pos: 0,
    };
    let mut rules: Vec<(String, Ex)> = Vec::new();
    while let Some((name, body)) = p.rule()? {
        if rules.iter().any(|(n, _)| *n == name) {
            return Err(p.err(format!("rule `{name}` is defined twice")));
        }
        rules.push((name, body));
    }
    let defined: HashMap<&str, &Ex> = rules.iter().map(|(n, b)| (n.as_str(), b)).collect();
    if !defined.contains_key(root) {
        return Err(LarkError {
            line: 0,
            message: format!("no rule `{root}`"),
        });
    }
    for (name, body) in &rules {
        let mut used = BTreeSet::new();
        refs(body, &mut used);
        if let Some(missing) = used.iter().find(|u| !defined.contains_key(u.as_str())) {
            return Err(LarkError {
                line: 0,
                message: format!("rule `{name}` uses undefined rule `{missing}`"),
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
        start: names[root].clone(),
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
        Ex::Any => "(?s:.)".into(),
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
    use super::*;

    #[test]
    fn converts_rules_literals_and_terminals() {
        let gbnf = r#"# comment
root ::= "fields:\n" (item "\n")* tail?
item ::= string (" " agg)?
agg ::= "sum" | "avg"
tail ::= "chart: " ( "bar"
   | "line" ) "\n"
string ::= "\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
"#;
        let lark = gbnf_to_lark(gbnf, "root").expect("converts");
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
        let gbnf = r#"root ::= (id "\n")* | list | pair
id ::= "\"" id-0
id-0 ::= [0-9a-f] id-1 | sign id-1
id-1 ::= [0-9a-f] "\""
sign ::= "+" | "-"
list ::= "[" ( [0-9] | list ) "]"
pair ::= [a-z] " " [a-z]
"#;
        let lark = gbnf_to_lark(gbnf, "root").expect("converts");
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
        let gbnf = r#"root ::= (id "\n")*
id ::= "\"" s0
s0 ::= [a-z] s1 | [0-9] s0
s1 ::= "-" s0 | "\""
"#;
        let lark = gbnf_to_lark(gbnf, "root").expect("converts");
        assert!(lark.contains("r_root: (T_ID \"\\n\")*\n"), "{lark}");
        assert!(lark.contains("T_ID: \"\\\"\" T_S0\n"), "{lark}");
        // s1 = "-" s0 | "\"", so s0 = ([0-9] | [a-z] "-")* [a-z] "\"" (the last state is
        // eliminated first).
        assert!(
            lark.contains("T_S0: /(?:[0-9]|[a-z](?:\\x{2D}))*[a-z](?:\\x{22})/\n"),
            "{lark}"
        );
        assert!(lark.contains("T_S1: \"-\" T_S0 | \"\\\"\"\n"), "{lark}");
        // Recursion that is not right-linear stays a grammar rule.
        let lark = gbnf_to_lark("root ::= \"(\" root \")\" | [a-z]", "root").expect("converts");
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
        let mut gbnf = String::from("root ::= (host \"\\n\")*\nhost ::= \"\\\"\" s0\n");
        gbnf.push_str("s0 ::= [a-z] s1\n");
        for k in 0..40 {
            let (odd, even) = (2 * k + 1, 2 * k + 2);
            let more = if k < 39 {
                format!("\"-\" s{even} | [a-z] s{} | ", even + 1)
            } else {
                String::new()
            };
            gbnf.push_str(&format!("s{odd} ::= {more}\".\" s0 | \"\\\"\"\n"));
            if k < 39 {
                gbnf.push_str(&format!("s{even} ::= [a-z] s{}\n", even + 1));
            }
        }
        let lark = gbnf_to_lark(&gbnf, "root").expect("converts");
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
        let mut body = String::from("[a-z]");
        for _ in 0..12 {
            body = format!("( \"x\" {body} )?");
        }
        let lark =
            gbnf_to_lark(&format!("root ::= w \"\\n\"\nw ::= {body}\n"), "root").expect("converts");
        assert!(lark.contains("T_W: "), "{lark}");
        assert!(lark.contains("T_W_PART1: "), "{lark}");
        for line in lark.lines() {
            assert!(line.matches('(').count() <= HOIST_DEPTH, "{line}");
        }
    }

    #[test]
    fn reports_bad_gbnf_with_line() {
        let e = gbnf_to_lark("root ::= \"a\"\nx ::= (\"b\"", "root").expect_err("bad");
        assert_eq!(e.line, 2, "{e}");
        let e = gbnf_to_lark("root ::= item", "root").expect_err("undefined");
        assert!(e.message.contains("item"), "{e}");
        let e = gbnf_to_lark("start ::= \"a\"", "root").expect_err("no root");
        assert!(e.message.contains("root"), "{e}");
        assert!(gbnf_to_lark("root ::= [b-a]", "root").is_err());
        assert!(gbnf_to_lark("root ::= \"a", "root").is_err());
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
    }
}
