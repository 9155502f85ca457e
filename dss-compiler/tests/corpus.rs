//! Round-trip corpus tests over real-world schemas and instances.
//!
//! Each corpus (`maskbench`, `vega-lite`, `json-schema-test-suite`) is found by the
//! `dss-data` crate: the full corpus in the data directory (`DSS_DATA_DIR`, else
//! `../shared/data` beside the workspace) when it is there, else the small sample in the
//! workspace's `tests/fixtures/` (same layout, same assertions). Under `CI=true` a missing
//! full corpus fails the tests. Each test prints (stderr) which corpus it ran; the exact
//! file counts asserted are the fixture's, the full corpus must hold at least the subset
//! described in the data directory's `SOURCES.md`.
//!
//! For every instance `x` the schema accepts: `s = compress(x)` succeeds,
//! `expand(s) == x` (as JSON values: key order ignored, numbers compared as numbers), and
//! `compress(expand(s)) == s`. Every MaskBench instance marked invalid must be rejected by
//! `compress`. Panics are caught and count as failures; schemas may fail to compile only
//! with `CompileError::RemoteRef` (remote `$ref`s are never fetched).
//!
//! The files are spread over threads (one per core). Run with `-- --nocapture` to see the
//! summaries of passing runs; failing runs print them in the failure message.

use dss_compiler::codec::json_eq;
use dss_compiler::error::CompileError;
use dss_compiler::{compile, CompileOptions, CompiledSpec};
use dss_data::Corpus;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

// ── Data ─────────────────────────────────────────────────────────────────────

const WORKSPACE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// MaskBench files: at least this many in the full corpus (SOURCES.md), exactly this many
/// in the fixture.
const MASKBENCH_FILES: usize = 2842;
const MASKBENCH_FIXTURE_FILES: usize = 58;
/// Vega-Lite examples (full corpus: at least; fixture: exactly).
const VEGA_LITE_EXAMPLES: usize = 435;
const VEGA_LITE_FIXTURE_EXAMPLES: usize = 13;
/// JSON-Schema-Test-Suite keyword files per draft in the fixture.
const SUITE_FIXTURE_FILES: usize = 18;

/// The fixture's exact counts of schemas (or test groups) and instances, which depend on
/// its data only (instances of schemas that did not compile are counted as skipped).
fn assert_fixture_counts(corpus: &Corpus, st: &Stats, schemas: usize, instances: usize) {
    if !corpus.is_full() {
        assert_eq!(
            (st.schemas, st.valid + st.invalid + st.skipped),
            (schemas, instances),
            "(schemas, instances) in the {corpus}"
        );
    }
}

/// The corpus `name` (full or fixture, see `dss_data::corpus`); under `CI=true` a missing
/// full corpus fails the test here, with the message saying what to set.
fn corpus(name: &str) -> Corpus {
    dss_data::corpus(name).unwrap_or_else(|e| panic!("{e}"))
}

/// A directory of the corpus that must exist.
fn corpus_dir(corpus: &Corpus, rel: &str) -> PathBuf {
    let dir = corpus.path().join(rel);
    assert!(
        dir.is_dir(),
        "{} is missing from the {corpus} (README \"Data\")",
        dir.display()
    );
    dir
}

/// Print which corpus ran, and check its size: exactly `fixture` files in the fixture, at
/// least `full` (the subset of SOURCES.md) in the full corpus.
fn announce(name: &str, corpus: &Corpus, files: usize, full: usize, fixture: usize) {
    eprintln!("{}", corpus.describe(name, files));
    if corpus.is_full() {
        assert!(
            files >= full,
            "{name}: {files} files in the {corpus}, expected at least {full}"
        );
    } else {
        assert_eq!(files, fixture, "{name}: files in the {corpus}");
    }
}

fn list_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    dss_data::sorted_files(dir, suffix)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("invalid JSON: {e}"))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// One test instance of a schema.
struct Instance {
    description: String,
    data: Value,
    valid: bool,
}

/// `tests: [{description?, data, valid}]` as used by MaskBench and the JSON-Schema-Test-Suite.
fn instances(tests: Option<&Value>) -> Result<Vec<Instance>, String> {
    let tests = tests.and_then(Value::as_array).ok_or("no `tests` array")?;
    tests
        .iter()
        .enumerate()
        .map(|(i, t)| {
            Ok(Instance {
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("test #{i}"), str::to_string),
                data: t
                    .get("data")
                    .cloned()
                    .ok_or(format!("test #{i}: no `data`"))?,
                valid: t
                    .get("valid")
                    .and_then(Value::as_bool)
                    .ok_or(format!("test #{i}: no boolean `valid`"))?,
            })
        })
        .collect()
}

// ── Panics as failures ───────────────────────────────────────────────────────

thread_local! {
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Record panics inside [`guarded`] instead of printing them (thousands of identical
/// messages would drown the summary); other panics go to the default hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let payload = info.payload();
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic payload".into());
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
            } else {
                default(info);
            }
        }));
    });
}

/// Run `f`; `Err(message)` if it panicked.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_panic_hook();
    let prev = GUARDED.with(|g| g.replace(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(prev));
    r.map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "panic".into())
    })
}

// ── Parallelism ──────────────────────────────────────────────────────────────

/// Deep schemas and documents recurse deeply in an unoptimized build.
const WORKER_STACK: usize = 256 << 20;

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// `items.map(f)` over all cores, results in input order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads().min(items.len()).max(1) {
            std::thread::Builder::new()
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((i, r));
                })
                .expect("cannot spawn a test worker thread");
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Run `f` on a thread with a big stack (for a single large compile).
fn with_big_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(WORKER_STACK)
            .spawn_scoped(scope, f)
            .expect("cannot spawn a test worker thread")
            .join()
            .unwrap_or_else(|e| panic::resume_unwind(e))
    })
}

// ── Comparing JSON ───────────────────────────────────────────────────────────

fn short(s: &str) -> String {
    const MAX: usize = 400;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}… ({} chars)", s.chars().count())
    }
}

// ── Checking one schema ──────────────────────────────────────────────────────

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Panic,
    Compile,
    ValidRejected,
    RoundTrip,
    InvalidAccepted,
    Data,
    /// The compiled spec's `spec.json` does not load back as the same spec.
    Reload,
}

struct Failure {
    kind: Kind,
    file: String,
    test: String,
    error: String,
}

#[derive(Default)]
struct Stats {
    schemas: usize,
    compiled: usize,
    /// Schemas whose encoder checks are the whole validation (compress skips the validator).
    encoding_validates: usize,
    remote_ref: usize,
    valid: usize,
    valid_ok: usize,
    invalid: usize,
    invalid_rejected: usize,
    /// Instances not tried because their schema did not compile.
    skipped: usize,
    /// Invalid instances accepted where that is only reported (not MaskBench).
    invalid_accepted_info: usize,
    failures: Vec<Failure>,
    slowest: Vec<(Duration, String)>,
}

impl Stats {
    fn merge(&mut self, o: Stats) {
        self.schemas += o.schemas;
        self.compiled += o.compiled;
        self.encoding_validates += o.encoding_validates;
        self.remote_ref += o.remote_ref;
        self.valid += o.valid;
        self.valid_ok += o.valid_ok;
        self.invalid += o.invalid;
        self.invalid_rejected += o.invalid_rejected;
        self.skipped += o.skipped;
        self.invalid_accepted_info += o.invalid_accepted_info;
        self.failures.extend(o.failures);
        self.slowest.extend(o.slowest);
        self.slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
        self.slowest.truncate(5);
    }

    fn fail(&mut self, kind: Kind, file: &str, test: &str, error: String) {
        self.failures.push(Failure {
            kind,
            file: file.to_string(),
            test: test.to_string(),
            error,
        });
    }

    fn count(&self, kind: Kind) -> usize {
        self.failures.iter().filter(|f| f.kind == kind).count()
    }

    fn summary(&self, corpus: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "== {corpus}\n\
             schemas compiled:          {}/{} ({} remote-ref (not fetched), {} failed to compile; \
             {} validated by the encoder alone)\n\
             valid instances round-tripped: {}/{} ({} rejected by compress, {} round-trip mismatches; \
             {} more not tried: schema not compiled)\n\
             invalid instances rejected:    {}/{}{}\n\
             spec.json not loading back:    {}\n\
             panics: {}",
            self.compiled,
            self.schemas,
            self.remote_ref,
            self.count(Kind::Compile),
            self.encoding_validates,
            self.valid_ok,
            self.valid,
            self.count(Kind::ValidRejected),
            self.count(Kind::RoundTrip),
            self.skipped,
            self.invalid_rejected,
            self.invalid,
            if self.invalid_accepted_info > 0 {
                format!(
                    " ({} accepted; reported only, not a failure for this corpus)",
                    self.invalid_accepted_info
                )
            } else {
                String::new()
            },
            self.count(Kind::Reload),
            self.count(Kind::Panic),
        );
        if !self.failures.is_empty() {
            let _ = writeln!(
                s,
                "failures (first {} of {}):",
                self.failures.len().min(20),
                self.failures.len()
            );
            for f in self.failures.iter().take(20) {
                let _ = writeln!(
                    s,
                    "  [{:?}] {} :: {}\n      {}",
                    f.kind,
                    f.file,
                    f.test,
                    short(&f.error).replace('\n', "\n      ")
                );
            }
        }
        if !self.slowest.is_empty() {
            let _ = writeln!(s, "slowest:");
            for (d, what) in &self.slowest {
                let _ = writeln!(s, "  {:>8.1} ms  {what}", d.as_secs_f64() * 1e3);
            }
        }
        s
    }

    /// Print the summary; fail (with the summary) on any failure.
    fn assert_ok(&self, corpus: &str) {
        let summary = self.summary(corpus);
        assert!(
            self.failures.is_empty(),
            "{corpus}: {} failures\n{summary}",
            self.failures.len()
        );
        println!("{summary}");
    }
}

/// Outcome of a compile under the corpus rules.
enum Compiled {
    Ok(Box<CompiledSpec>),
    RemoteRef,
    Failed(Kind, String),
}

fn try_compile(schema: &Value) -> Compiled {
    match guarded(|| compile(schema, &CompileOptions::default())) {
        Err(panic) => Compiled::Failed(Kind::Panic, format!("compile panicked: {panic}")),
        // The validator is built lazily; a remote `$ref` or metaschema shows up there.
        Ok(Ok(spec)) => match spec.check_validator() {
            Ok(()) => Compiled::Ok(Box::new(spec)),
            Err(CompileError::RemoteRef { .. }) => Compiled::RemoteRef,
            Err(e) => Compiled::Failed(Kind::Compile, format!("validator: {e}")),
        },
        Ok(Err(CompileError::RemoteRef { .. })) => Compiled::RemoteRef,
        Ok(Err(e)) => Compiled::Failed(Kind::Compile, format!("compile failed: {e}")),
    }
}

/// The spec's `spec.json` loads back, and writes the same `spec.json`.
fn reload(spec: &CompiledSpec) -> Result<(), String> {
    let text = spec.to_json().map_err(|e| format!("to_json: {e}"))?;
    let back =
        CompiledSpec::from_json(&text).map_err(|e| format!("spec.json does not load: {e}"))?;
    match back.to_json() {
        Ok(again) if again == text => Ok(()),
        Ok(_) => Err("spec.json loads as another spec".into()),
        Err(e) => Err(format!("to_json after loading: {e}")),
    }
}

/// The round trip of one valid instance.
fn check_valid(spec: &CompiledSpec, x: &Value) -> Result<(), (Kind, String)> {
    let panic = |what: &str, p: String| (Kind::Panic, format!("{what} panicked: {p}"));
    let s = match guarded(|| spec.compress(x)) {
        Err(p) => return Err(panic("compress", p)),
        Ok(Err(e)) => {
            return Err((
                Kind::ValidRejected,
                format!("compress rejected a valid instance: {e}\ninstance: {x}"),
            ))
        }
        Ok(Ok(s)) => s,
    };
    let y = match guarded(|| spec.expand(&s)) {
        Err(p) => return Err(panic("expand", p)),
        Ok(Err(e)) => {
            return Err((
                Kind::RoundTrip,
                format!("expand failed on compress's output: {e}\nshorthand:\n{s}"),
            ))
        }
        Ok(Ok(y)) => y,
    };
    if !json_eq(x, &y) {
        return Err((
            Kind::RoundTrip,
            format!("expand(compress(x)) != x\nx:        {x}\nexpanded: {y}\nshorthand:\n{s}"),
        ));
    }
    // Expanded straight to text: what serde_json writes of the expanded value.
    let text = serde_json::to_string(&y).unwrap_or_default();
    match guarded(|| spec.expand_unvalidated_json(&s)) {
        Err(p) => return Err(panic("expand_unvalidated_json", p)),
        Ok(Ok(t)) if t == text => {}
        Ok(other) => {
            return Err((
                Kind::RoundTrip,
                format!("expand_unvalidated_json(s) != the expanded value's JSON\nexpected: {text}\nfound:    {other:?}\nshorthand:\n{s}"),
            ))
        }
    }
    match guarded(|| spec.compress(&y)) {
        Err(p) => Err(panic("compress", p)),
        Ok(Err(e)) => Err((
            Kind::RoundTrip,
            format!("compress(expand(s)) failed: {e}\nshorthand:\n{s}"),
        )),
        Ok(Ok(s2)) if s2 != s => Err((
            Kind::RoundTrip,
            format!("compress(expand(s)) != s\ns:\n{s}\ncompress(expand(s)):\n{s2}"),
        )),
        Ok(Ok(_)) => Ok(()),
    }
}

/// Check one schema with its instances. `invalid_must_fail`: an accepted invalid
/// instance is a failure (else it is only counted).
fn check_schema(file: &str, schema: &Value, tests: &[Instance], invalid_must_fail: bool) -> Stats {
    let mut st = Stats {
        schemas: 1,
        ..Stats::default()
    };
    let start = Instant::now();
    let spec = match try_compile(schema) {
        Compiled::Ok(spec) => spec,
        Compiled::RemoteRef => {
            st.remote_ref += 1;
            st.skipped += tests.len();
            return st;
        }
        Compiled::Failed(kind, e) => {
            st.fail(kind, file, "(schema)", e);
            st.skipped += tests.len();
            return st;
        }
    };
    st.compiled += 1;
    // Its `spec.json` loads back, the same spec: the load's checks (shapes and notation
    // designed again) refuse only tampered files, never what `dss compile` wrote.
    match guarded(|| reload(&spec)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => st.fail(Kind::Reload, file, "(spec.json)", e),
        Err(p) => st.fail(
            Kind::Panic,
            file,
            "(spec.json)",
            format!("reload panicked: {p}"),
        ),
    }
    if spec.encoder_validates() {
        // compress trusts the encoder's checks here (structure and local assertions): they
        // must reject everything the validator rejects, on every instance of the corpus
        // (valid or not).
        st.encoding_validates += 1;
        for t in tests {
            let encoded = guarded(|| spec.encode_validating(&t.data).map(|r| r.is_ok()));
            if encoded == Ok(Some(true)) && spec.validate(&t.data).is_err() {
                st.fail(
                    Kind::InvalidAccepted,
                    file,
                    &t.description,
                    format!(
                        "the schema is marked `encoding_validates`, but the encoder accepts \
                         an instance the validator rejects\ninstance: {}",
                        t.data
                    ),
                );
            }
        }
    }
    for t in tests {
        if t.valid {
            st.valid += 1;
            match check_valid(&spec, &t.data) {
                Ok(()) => st.valid_ok += 1,
                Err((kind, e)) => st.fail(kind, file, &t.description, e),
            }
        } else {
            st.invalid += 1;
            match guarded(|| spec.compress(&t.data)) {
                Err(p) => st.fail(
                    Kind::Panic,
                    file,
                    &t.description,
                    format!("compress panicked on an invalid instance: {p}"),
                ),
                Ok(Err(_)) => st.invalid_rejected += 1,
                Ok(Ok(s)) if invalid_must_fail => st.fail(
                    Kind::InvalidAccepted,
                    file,
                    &t.description,
                    format!(
                        "compress accepted an invalid instance\ninstance: {}\nshorthand:\n{s}",
                        t.data
                    ),
                ),
                Ok(Ok(_)) => st.invalid_accepted_info += 1,
            }
        }
    }
    st.slowest.push((start.elapsed(), file.to_string()));
    st
}

// ── Corpora ──────────────────────────────────────────────────────────────────

#[test]
fn maskbench_round_trip() {
    let mb = corpus("maskbench");
    let files = list_files(&corpus_dir(&mb, "data"), ".json");
    announce(
        "maskbench",
        &mb,
        files.len(),
        MASKBENCH_FILES,
        MASKBENCH_FIXTURE_FILES,
    );
    let mut total = Stats::default();
    for st in par_map(&files, |path| {
        let name = file_name(path);
        let parsed = read_json(path).and_then(|doc| {
            let schema = doc.get("schema").cloned().ok_or("no `schema`")?;
            Ok((schema, instances(doc.get("tests"))?))
        });
        match parsed {
            Ok((schema, tests)) => check_schema(&name, &schema, &tests, true),
            Err(e) => {
                let mut st = Stats::default();
                st.fail(Kind::Data, &name, "(data file)", e);
                st
            }
        }
    }) {
        total.merge(st);
    }
    total.assert_ok("MaskBench (maskbench/data/*.json)");
    assert_fixture_counts(&mb, &total, MASKBENCH_FIXTURE_FILES, 185);
}

/// Percent-encode the characters of `$ref` strings that a URI may not hold (the Vega-Lite
/// schema has refs like `#/definitions/MarkPropDef<(Gradient|string|null)>`), so that
/// the reference validator accepts them (RFC 6901 section 6).
fn percent_encode_refs(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(r) if key == "$ref" => {
                        let mut out = String::with_capacity(r.len());
                        for c in r.chars() {
                            if c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/?#%".contains(c) {
                                out.push(c);
                            } else {
                                let mut buf = [0u8; 4];
                                for b in c.encode_utf8(&mut buf).bytes() {
                                    out.push_str(&format!("%{b:02X}"));
                                }
                            }
                        }
                        *r = out;
                    }
                    _ => percent_encode_refs(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(percent_encode_refs),
        _ => {}
    }
}

/// A Vega-Lite example, classified by an independent validator, and what dss did with it.
enum Example {
    /// Valid: the round trip.
    Valid(Result<(), (Kind, String)>),
    /// Invalid: `Ok` if compress rejected it.
    Invalid(Result<(), (Kind, String)>),
    Unreadable(String),
}

#[test]
fn vega_lite_round_trip() {
    let vl = corpus("vega-lite");
    let dir = vl.path();
    let schema_path = dir.join("vega-lite-schema.json");
    let schema =
        read_json(&schema_path).unwrap_or_else(|e| panic!("{}: {e}", schema_path.display()));
    let examples = list_files(&corpus_dir(&vl, "examples"), ".vl.json");
    announce(
        "vega-lite",
        &vl,
        examples.len(),
        VEGA_LITE_EXAMPLES,
        VEGA_LITE_FIXTURE_EXAMPLES,
    );

    let mut st = Stats {
        schemas: 1,
        ..Stats::default()
    };
    let start = Instant::now();
    let compiled = with_big_stack(|| try_compile(&schema));
    st.slowest
        .push((start.elapsed(), "compile vega-lite-schema.json".into()));
    match compiled {
        Compiled::Ok(spec) => {
            st.compiled += 1;
            let start = Instant::now();
            if let Err(e) = with_big_stack(|| reload(&spec)) {
                st.fail(Kind::Reload, "vega-lite-schema.json", "(spec.json)", e);
            }
            st.slowest.push((
                start.elapsed(),
                "vega-lite-schema.json: save and load spec.json".into(),
            ));
            // Some upstream examples (`*_future.vl.json`) are not valid against the schema:
            // an independent validator decides which examples are valid instances.
            let mut encoded = schema.clone();
            percent_encode_refs(&mut encoded);
            let reference = jsonschema::validator_for(&encoded)
                .unwrap_or_else(|e| panic!("jsonschema cannot load the Vega-Lite schema: {e}"));
            for (name, outcome) in par_map(&examples, |path| {
                let name = format!("examples/{}", file_name(path));
                let outcome = match read_json(path) {
                    Err(e) => Example::Unreadable(e),
                    Ok(x) if reference.is_valid(&x) => Example::Valid(check_valid(&spec, &x)),
                    Ok(x) => Example::Invalid(match guarded(|| spec.compress(&x)) {
                        Err(p) => Err((Kind::Panic, format!("compress panicked: {p}"))),
                        Ok(Err(_)) => Ok(()),
                        Ok(Ok(sh)) => Err((
                            Kind::InvalidAccepted,
                            format!(
                                "compress accepted an example the schema rejects\nshorthand:\n{sh}"
                            ),
                        )),
                    }),
                };
                (name, outcome)
            }) {
                let file = "vega-lite-schema.json";
                match outcome {
                    Example::Valid(r) => {
                        st.valid += 1;
                        match r {
                            Ok(()) => st.valid_ok += 1,
                            Err((kind, e)) => st.fail(kind, file, &name, e),
                        }
                    }
                    Example::Invalid(r) => {
                        st.invalid += 1;
                        match r {
                            Ok(()) => st.invalid_rejected += 1,
                            Err((kind, e)) => st.fail(kind, file, &name, e),
                        }
                    }
                    Example::Unreadable(e) => st.fail(Kind::Data, file, &name, e),
                }
            }
        }
        Compiled::RemoteRef => {
            st.remote_ref += 1;
            st.fail(
                Kind::Compile,
                "vega-lite-schema.json",
                "(schema)",
                "RemoteRef: the Vega-Lite schema has no remote $ref".into(),
            );
        }
        Compiled::Failed(kind, e) => st.fail(kind, "vega-lite-schema.json", "(schema)", e),
    }
    st.assert_ok("Vega-Lite (vega-lite-schema.json + examples/*.vl.json)");
}

const DRAFT7: &str = "http://json-schema.org/draft-07/schema#";

/// A test group: its label, and its schema with its instances (or why it is unreadable).
type Group = (String, Result<(Value, Vec<Instance>), String>);

/// The corpus, and all `{description, schema, tests}` groups of a JSON-Schema-Test-Suite
/// draft folder (not its `optional/` subfolder). Draft-7 files do not name their draft, so
/// `$schema` is added to their object schemas that lack it.
fn suite_groups(draft: &str) -> (Corpus, Vec<Group>) {
    let suite = corpus("json-schema-test-suite");
    let dir = corpus_dir(&suite, &format!("tests/{draft}"));
    let files = list_files(&dir, ".json");
    let full = if draft == "draft7" { 37 } else { 46 };
    announce(
        &format!("json-schema-test-suite/tests/{draft}"),
        &suite,
        files.len(),
        full,
        SUITE_FIXTURE_FILES,
    );
    let mut groups = Vec::new();
    for path in files {
        let name = format!("{draft}/{}", file_name(&path));
        let doc = match read_json(&path) {
            Ok(Value::Array(groups)) => groups,
            Ok(_) => {
                groups.push((name, Err("not an array of test groups".into())));
                continue;
            }
            Err(e) => {
                groups.push((name, Err(e)));
                continue;
            }
        };
        for g in doc {
            let label = format!(
                "{name} [{}]",
                g.get("description").and_then(Value::as_str).unwrap_or("?")
            );
            let parsed = (|| {
                let mut schema = g.get("schema").cloned().ok_or("no `schema`")?;
                if draft == "draft7" {
                    if let Value::Object(map) = &mut schema {
                        map.entry("$schema")
                            .or_insert_with(|| Value::String(DRAFT7.into()));
                    }
                }
                Ok((schema, instances(g.get("tests"))?))
            })();
            groups.push((label, parsed));
        }
    }
    (suite, groups)
}

fn json_schema_test_suite(draft: &str) {
    let (suite, groups) = suite_groups(draft);
    let mut total = Stats::default();
    for st in par_map(&groups, |(label, parsed)| match parsed {
        Ok((schema, tests)) => check_schema(label, schema, tests, false),
        Err(e) => {
            let mut st = Stats::default();
            st.fail(Kind::Data, label, "(data file)", e.clone());
            st
        }
    }) {
        total.merge(st);
    }
    total.assert_ok(&format!(
        "JSON-Schema-Test-Suite {draft} (tests/{draft}/*.json, optional/ skipped)"
    ));
    let (groups, instances) = if draft == "draft7" {
        (171, 584)
    } else {
        (149, 540)
    };
    assert_fixture_counts(&suite, &total, groups, instances);
}

#[test]
fn json_schema_test_suite_draft7_round_trip() {
    json_schema_test_suite("draft7");
}

#[test]
fn json_schema_test_suite_draft2020_12_round_trip() {
    json_schema_test_suite("draft2020-12");
}

// ── The emitted pest grammar accepts what compress writes ────────────────────

#[derive(Default)]
struct PestStats {
    grammars: usize,
    documents: usize,
    parsed: usize,
    /// Instances skipped because compress failed (the round-trip tests report those).
    not_compressed: usize,
    failures: Vec<(String, String)>,
}

impl PestStats {
    fn merge(&mut self, o: PestStats) {
        self.grammars += o.grammars;
        self.documents += o.documents;
        self.parsed += o.parsed;
        self.not_compressed += o.not_compressed;
        self.failures.extend(o.failures);
    }
}

/// `L:C: message`, with the text around the column (lines of grammars can be huge).
fn pest_error<R: pest::RuleType>(e: &pest::error::Error<R>) -> String {
    let (line, col) = match e.line_col {
        pest::error::LineColLocation::Pos(p) => p,
        pest::error::LineColLocation::Span(p, _) => p,
    };
    let text: Vec<char> = e.line().chars().collect();
    let from = col.saturating_sub(60);
    let to = (col + 60).min(text.len());
    let excerpt: String = text.get(from..to).unwrap_or_default().iter().collect();
    format!(
        "{line}:{col}: {}
  near: {}{excerpt}{}",
        e.variant.message(),
        if from > 0 { "…" } else { "" },
        if to < text.len() { "…" } else { "" }
    )
}

/// Does the expression end with `EOI` (`... ~ EOI`)?
fn ends_with_eoi(e: &pest_meta::optimizer::OptimizedExpr) -> bool {
    use pest_meta::optimizer::OptimizedExpr as E;
    match e {
        E::Seq(_, last) => ends_with_eoi(last),
        E::RestoreOnErr(inner) => ends_with_eoi(inner),
        E::Ident(name) => name == "EOI",
        _ => false,
    }
}

/// `spec`'s emitted pest grammar, loaded into pest_vm. It must have a `document` rule
/// ending with `EOI` (else a parse may accept a prefix of the text).
fn pest_vm_for(spec: &CompiledSpec) -> Result<pest_vm::Vm, String> {
    let grammar =
        guarded(|| spec.grammar_pest()).map_err(|p| format!("grammar_pest panicked: {p}"))?;
    let rules = match pest_meta::parse_and_optimize(&grammar) {
        Ok((_, rules)) => rules,
        Err(errors) => {
            return Err(format!(
                "the emitted pest grammar does not compile ({} errors); first: {}",
                errors.len(),
                errors.first().map(pest_error).unwrap_or_default()
            ))
        }
    };
    match rules.iter().find(|r| r.name == "document") {
        None => return Err("the emitted pest grammar has no `document` rule".into()),
        Some(r) if !ends_with_eoi(&r.expr) => {
            return Err(
                "the `document` rule of the emitted pest grammar does not end with EOI".into(),
            )
        }
        Some(_) => {}
    }
    Ok(pest_vm::Vm::new(rules))
}

/// Parse the shorthand of each instance with the emitted pest grammar `vm`, requiring the
/// parse of `document` to consume the whole text.
fn check_pest(
    label: &str,
    spec: &CompiledSpec,
    vm: &pest_vm::Vm,
    values: &[(usize, &Value)],
) -> PestStats {
    let mut st = PestStats::default();
    for (i, x) in values {
        let s = match guarded(|| spec.compress(x)) {
            Ok(Ok(s)) => s,
            _ => {
                st.not_compressed += 1;
                continue;
            }
        };
        st.documents += 1;
        let what = format!("{label} #{i}");
        match guarded(|| {
            vm.parse("document", &s)
                .map(|pairs| pairs.map(|p| p.as_span().end()).max().unwrap_or(0))
        }) {
            Err(p) => st
                .failures
                .push((what, format!("pest_vm panicked: {p}\nshorthand:\n{s}"))),
            Ok(Err(e)) => st.failures.push((
                what,
                format!(
                    "the pest grammar rejects compress's output at {}\nshorthand:\n{s}",
                    pest_error(&e)
                ),
            )),
            Ok(Ok(end)) if end != s.len() => st.failures.push((
                what,
                format!(
                    "`document` stopped at byte {end} of {} (no EOI at the end of `document`?)\nshorthand:\n{s}",
                    s.len()
                ),
            )),
            Ok(Ok(_)) => st.parsed += 1,
        }
    }
    st
}

/// One grammar checked over many documents, the documents spread over the threads.
fn check_pest_all(label: &str, spec: &CompiledSpec, values: &[Value]) -> PestStats {
    let vm = match pest_vm_for(spec) {
        Ok(vm) => vm,
        Err(e) => {
            return PestStats {
                failures: vec![(label.to_string(), e)],
                ..PestStats::default()
            }
        }
    };
    let indexed: Vec<(usize, &Value)> = values.iter().enumerate().collect();
    let chunk = indexed.len().div_ceil(threads()).max(1);
    let chunks: Vec<&[(usize, &Value)]> = indexed.chunks(chunk).collect();
    let mut total = PestStats {
        grammars: 1,
        ..PestStats::default()
    };
    for st in par_map(&chunks, |c| check_pest(label, spec, &vm, c)) {
        total.merge(st);
    }
    total
}

fn valid_instances(doc: &Value) -> Vec<Value> {
    doc.get("tests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t.get("valid") == Some(&Value::Bool(true)))
        .filter_map(|t| t.get("data").cloned())
        .collect()
}

/// The bundled specs (`specs/*.json` of the workspace), each with its examples: the
/// values of its root `examples` keyword, and each `examples/*.json` file that it accepts.
fn bundled_specs() -> Vec<(String, Value, Vec<Value>)> {
    let root = Path::new(WORKSPACE_DIR);
    let specs_dir = root.join("specs");
    let examples_dir = root.join("examples/viz");
    let example_files: Vec<(String, Value)> = if examples_dir.is_dir() {
        list_files(&examples_dir, ".json")
            .iter()
            .filter_map(|p| Some((file_name(p), read_json(p).ok()?)))
            .collect()
    } else {
        Vec::new()
    };
    if !specs_dir.is_dir() {
        return Vec::new();
    }
    list_files(&specs_dir, ".json")
        .iter()
        .filter_map(|p| {
            let schema = read_json(p).ok()?;
            let mut examples: Vec<Value> = schema
                .get("examples")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            examples.extend(example_files.iter().map(|(_, v)| v.clone()));
            Some((format!("specs/{}", file_name(p)), schema, examples))
        })
        .collect()
}

#[test]
fn pest_grammar_accepts_compressed_shorthand() {
    let mut total = PestStats::default();
    let mut notes = Vec::new();

    // Every 10th MaskBench file's valid instances.
    let mb = corpus("maskbench");
    let all = list_files(&corpus_dir(&mb, "data"), ".json");
    announce(
        "maskbench",
        &mb,
        all.len(),
        MASKBENCH_FILES,
        MASKBENCH_FIXTURE_FILES,
    );
    let files: Vec<PathBuf> = all.into_iter().step_by(10).collect();
    for st in par_map(&files, |path| {
        let name = format!("maskbench/{}", file_name(path));
        let Ok(doc) = read_json(path) else {
            return PestStats::default();
        };
        let Some(schema) = doc.get("schema") else {
            return PestStats::default();
        };
        let Compiled::Ok(spec) = try_compile(schema) else {
            // Compile failures are reported by the round-trip tests.
            return PestStats::default();
        };
        match pest_vm_for(&spec) {
            Ok(vm) => {
                let values = valid_instances(&doc);
                let indexed: Vec<(usize, &Value)> = values.iter().enumerate().collect();
                PestStats {
                    grammars: 1,
                    ..check_pest(&name, &spec, &vm, &indexed)
                }
            }
            Err(e) => PestStats {
                failures: vec![(name, e)],
                ..PestStats::default()
            },
        }
    }) {
        total.merge(st);
    }
    let maskbench_docs = total.documents;
    notes.push(format!(
        "maskbench (every 10th file): {} grammars, {maskbench_docs} documents",
        total.grammars
    ));

    // All Vega-Lite examples.
    let vl_corpus = corpus("vega-lite");
    let vl = vl_corpus.path();
    if let Ok(schema) = read_json(&vl.join("vega-lite-schema.json")) {
        if let Compiled::Ok(spec) = with_big_stack(|| try_compile(&schema)) {
            let examples: Vec<Value> = list_files(&vl.join("examples"), ".vl.json")
                .iter()
                .filter_map(|p| read_json(p).ok())
                .collect();
            eprintln!("{}", vl_corpus.describe("vega-lite", examples.len()));
            let vl_stats = check_pest_all("vega-lite", &spec, &examples);
            notes.push(format!("vega-lite: {} documents", vl_stats.documents));
            total.merge(vl_stats);
        } else {
            notes.push("vega-lite: schema does not compile (see vega_lite_round_trip)".into());
        }
    }

    // The bundled specs with their examples.
    let bundled = bundled_specs();
    for (name, schema, examples) in &bundled {
        match with_big_stack(|| try_compile(schema)) {
            Compiled::Ok(spec) => {
                let st = check_pest_all(name, &spec, examples);
                notes.push(format!(
                    "{name}: {} of {} examples fit the spec",
                    st.documents,
                    examples.len()
                ));
                total.merge(st);
            }
            _ => total
                .failures
                .push((name.clone(), "the bundled spec does not compile".into())),
        }
    }
    if bundled.is_empty() {
        notes.push("no bundled specs found in specs/".into());
    }

    let mut summary = format!(
        "== pest grammar check (pest_meta + pest_vm)\n\
         grammars loaded (each with `document = {{ ... ~ EOI }}`): {}\n\
         documents parsed whole: {}/{} ({} instances skipped: compress failed)\n",
        total.grammars, total.parsed, total.documents, total.not_compressed
    );
    for n in &notes {
        let _ = writeln!(summary, "  {n}");
    }
    if !total.failures.is_empty() {
        let _ = writeln!(
            summary,
            "failures (first {} of {}):",
            total.failures.len().min(20),
            total.failures.len()
        );
        for (what, e) in total.failures.iter().take(20) {
            let _ = writeln!(
                summary,
                "  {what}\n      {}",
                short(e).replace('\n', "\n      ")
            );
        }
    }
    assert!(
        total.failures.is_empty(),
        "{} pest failures\n{summary}",
        total.failures.len()
    );
    println!("{summary}");
}

#[test]
fn json_eq_compares_numbers_by_value() {
    use serde_json::json;
    assert!(json_eq(
        &json!({"a": 1, "b": [1.0, 2]}),
        &json!({"b": [1, 2.0], "a": 1.0})
    ));
    assert!(!json_eq(&json!({"a": 1}), &json!({"a": 1, "b": null})));
    assert!(!json_eq(&json!([1]), &json!([1, 1])));
    assert!(!json_eq(&json!("1"), &json!(1)));
    assert!(json_eq(&json!(u64::MAX), &json!(u64::MAX)));
}
