//! `dss generate --backend openai` against a real llama.cpp `llama-server` on 127.0.0.1,
//! started by each test with the small CI model (SmolLM2-135M) and killed when it ends.
//!
//! The server binary comes from `scripts/llama-server` (built once into the cache; or
//! `DSS_LLAMA_SERVER`). Without it or without the model: under CI (`CI=true`) the tests
//! fail, elsewhere they are skipped with the reason (`dss_data::skip`). With
//! `DSS_SKIP_MODEL_TESTS` set they are skipped before the server is built.
//!
//! `bench_served_throughput` (ignored by default; `cargo test --release --test serve --
//! --ignored --nocapture`) prints requests per second at concurrency 1, 2 and 4 and in
//! process, for README's table.

mod common;
use common::{stdout_lines, tiny_spec};

use std::io::Read;
#[cfg(feature = "runtime")]
use std::io::Write;
#[cfg(feature = "runtime")]
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DSS: &str = env!("CARGO_BIN_EXE_dss");
const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Skips the running test (says why, counted by `scripts/test`) or, under CI, fails.
fn unavailable(why: &str) -> Option<Prereqs> {
    assert!(
        !dss_data::under_ci(),
        "under CI the served tests must run: {why}"
    );
    dss_data::skip(&dss_data::current_test(), why);
    None
}

struct Prereqs {
    server: PathBuf,
    model: PathBuf,
    /// Held for the whole test: one test at a time runs servers and model processes.
    /// On a 2-core machine, four tests each with a 2-thread llama-server made requests
    /// slow enough to hit their timeouts before the event a test waits for.
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The llama-server binary and the model, or why not (the skip is recorded for the
/// running test). The model is looked for first: building the server takes minutes.
fn prereqs() -> Option<Prereqs> {
    if dss_data::skip_model_test(&dss_data::current_test(), "smollm2-135m") {
        return None;
    }
    // A test that failed while holding the lock poisons it; the next still runs.
    let guard = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = match std::env::var_os("DSS_MODEL_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")));
            match cache {
                Some(c) => c.join("dss").join("models"),
                None => return unavailable("no cache directory for the model"),
            }
        }
    };
    let model = dir.join(MODEL_FILE);
    if !model.is_file() {
        return unavailable(&format!(
            "the model {} is missing (dss model fetch smollm2-135m)",
            model.display()
        ));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(root.join("scripts/llama-server"))
        .stderr(Stdio::inherit())
        .output();
    let server = match out {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        Ok(o) => {
            return unavailable(&format!(
                "llama-server is not available: scripts/llama-server failed ({}; it needs \
                 cmake and pip, or set DSS_LLAMA_SERVER to a llama-server binary)",
                o.status
            ))
        }
        Err(e) => {
            return unavailable(&format!(
                "llama-server is not available: scripts/llama-server did not run ({e})"
            ))
        }
    };
    Some(Prereqs {
        server,
        model,
        _one_at_a_time: guard,
    })
}

/// A llama-server child process, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    /// Starts llama-server on a free port with `slots` parallel slots and waits until it
    /// answers /health.
    fn start(p: &Prereqs, slots: usize) -> Server {
        Server::start_with(p, slots, &[])
    }

    /// [`Server::start`] with more llama-server flags.
    fn start_with(p: &Prereqs, slots: usize, extra: &[&str]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let child = Command::new(&p.server)
            .args(["-m"])
            .arg(&p.model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-c", &(4096 * slots).to_string(), "-np", &slots.to_string()])
            .args(["-t", "2", "--seed", "0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("llama-server starts");
        let mut s = Server { child, port };
        let t = Instant::now();
        while !s.healthy() {
            if let Ok(Some(status)) = s.child.try_wait() {
                panic!("llama-server exited at start: {status}");
            }
            assert!(
                t.elapsed() < Duration::from_secs(180),
                "llama-server not ready"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        s
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn healthy(&self) -> bool {
        common::healthy(self.port, Duration::from_secs(2))
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

const COLORS: [&str; 3] = ["red", "green", "blue"];
const SIZES: [&str; 2] = ["small", "large"];

/// Request `i` and the JSON it must give.
fn request(i: usize) -> (String, serde_json::Value) {
    let (c, s) = (COLORS[i % 3], SIZES[(i / 3) % 2]);
    (
        format!("{s} {c} #{i}"),
        serde_json::json!({"color": c, "size": s}),
    )
}

/// In a temporary directory: the tiny spec and a file of the first `n` requests.
fn tiny_load(n: usize) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tiny_spec(tmp.path());
    let input = requests_file(tmp.path(), (0..n).map(|i| request(i).0));
    (tmp, spec, input)
}

fn requests_file(dir: &Path, lines: impl Iterator<Item = String>) -> PathBuf {
    let p = dir.join("requests.jsonl");
    let text: String = lines
        .map(|r| serde_json::to_string(&r).unwrap() + "\n")
        .collect();
    std::fs::write(&p, text).unwrap();
    p
}

/// `o` succeeded with one line per request of [`tiny_load`]'s `n`, each the answer to its
/// request, in request order.
fn assert_every_answer_in_order(o: &std::process::Output, n: usize, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lines = stdout_lines(o);
    assert_eq!(lines.len(), n, "{what}: one line per request");
    for (i, got) in lines.iter().enumerate() {
        assert_eq!(got, &request(i).1, "{what}, line {}", i + 1);
    }
}

fn served(url: &str, spec: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(DSS);
    c.args(["generate", "--spec"])
        .arg(spec)
        .args(["--backend", "openai", "--url", url, "--retries", "1"])
        .args(extra);
    c
}

#[test]
fn load_at_concurrency_1_2_4_keeps_order_and_loses_nothing() {
    let Some(p) = prereqs() else { return };
    // 200 in `bench_served_throughput` (README); fewer here, for CI time: order and loss are what is checked.
    let n = 60;
    let (_tmp, spec, input) = tiny_load(n);
    let server = Server::start(&p, 4);
    for conc in ["1", "2", "4"] {
        let t = Instant::now();
        let o = served(&server.url(), &spec, &["--jsonl", "--input"])
            .arg(&input)
            .args(["--concurrency", conc, "--errors", "inline"])
            .output()
            .unwrap();
        let secs = t.elapsed().as_secs_f64();
        assert_every_answer_in_order(&o, n, &format!("concurrency {conc}"));
        eprintln!(
            "concurrency {conc}: {n} requests in {secs:.1} s ({:.1} req/s)",
            n as f64 / secs
        );
    }
    // The requests piped in (`--input -`, and no `--input`: standard input both times).
    for input_args in [&["--input", "-"][..], &[][..]] {
        let o = served(&server.url(), &spec, &["--jsonl"])
            .args(input_args)
            .args(["--concurrency", "2", "--errors", "inline"])
            .stdin(std::fs::File::open(&input).unwrap())
            .output()
            .unwrap();
        assert_every_answer_in_order(&o, n, &format!("{input_args:?} from stdin"));
    }
}

#[test]
fn a_killed_server_turns_every_later_request_into_an_error_record_and_a_rerun_completes_them() {
    let Some(p) = prereqs() else { return };
    // Fewer requests than the bench's 200, for CI time.
    let n = 60;
    let (tmp, spec, input) = tiny_load(n);
    let mut server = Server::start(&p, 2);
    let url = server.url();
    let mut child = served(&url, &spec, &["--jsonl", "--input"])
        .arg(&input)
        .args([
            "--concurrency",
            "2",
            "--errors",
            "inline",
            "--timeout",
            "60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first answers, then kill the server in the middle of the run.
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    let mut newlines = 0;
    while newlines < 20 && stdout.read(&mut byte).unwrap_or(0) == 1 {
        seen.push(byte[0]);
        newlines += usize::from(byte[0] == b'\n');
    }
    server.kill();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    seen.extend(rest);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "some requests failed: exit code 1");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&seen)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), n, "every request answered or reported");
    let first_error = lines
        .iter()
        .position(|l| l.get("dss_error").is_some())
        .expect("requests after the kill fail");
    assert!(
        first_error >= 20,
        "the first 20 were answered before the kill, but line {} is {}",
        first_error + 1,
        lines[first_error]
    );
    let mut failed = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        match l.get("dss_error") {
            None => {
                assert!(
                    i < first_error + 2,
                    "line {}: an answer after the kill",
                    i + 1
                );
                assert_eq!(l, &request(i).1, "line {}", i + 1);
            }
            Some(e) => {
                assert_eq!(e["line"], i + 1);
                let kind = e["kind"].as_str().unwrap_or_default();
                assert!(kind == "connect", "line {}: {e}", i + 1);
                failed.push(i);
            }
        }
    }
    assert!(failed.len() >= n - first_error - 2);
    // The failed lines again, against a new server, with --keep-going: all complete.
    let server = Server::start(&p, 2);
    let rerun = requests_file(tmp.path(), failed.iter().map(|&i| request(i).0));
    let o = served(
        &server.url(),
        &spec,
        &["--jsonl", "--keep-going", "--input"],
    )
    .arg(&rerun)
    .args(["--concurrency", "2"])
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = stdout_lines(&o);
    assert_eq!(lines.len(), failed.len());
    for (got, &i) in lines.iter().zip(&failed) {
        assert_eq!(got, &request(i).1);
    }
}

#[test]
fn bad_conditions_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tiny_spec(tmp.path());
    // Nothing listens: refused, retried, reported with the URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let o = served(&url, &spec, &["--server-model", "m", "a red small one"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("cannot connect to {url}/v1/chat/completions")),
        "{err}"
    );
    assert!(err.contains("after 2 attempt(s)"), "{err}");
    // An unset key variable is named before anything is sent.
    let o = served(&url, &spec, &["--api-key-env", "DSS_TEST_NO_SUCH_KEY", "x"])
        .env_remove("DSS_TEST_NO_SUCH_KEY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("DSS_TEST_NO_SUCH_KEY is not set"), "{err}");
    // --jsonl: every request an error record, the exit code 1.
    let input = requests_file(tmp.path(), (0..3).map(|i| request(i).0));
    let o = served(
        &url,
        &spec,
        &["--server-model", "m", "--jsonl", "--keep-going"],
    )
    .arg("--input")
    .arg(&input)
    .args(["--concurrency", "2"])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let records: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(records.len(), 3, "{records:?}");
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["line"], i + 1);
        assert_eq!(r["kind"], "connect");
    }
}

#[test]
fn a_server_key_a_grammar_ignored_and_a_token_limit_are_named() {
    let Some(p) = prereqs() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let spec = tiny_spec(tmp.path());
    let server = Server::start_with(&p, 1, &["--api-key", "right-key"]);
    let url = server.url();
    // `dss generate` with the key `key` in $DSS_TEST_KEY (`--api-key-env DSS_TEST_KEY`).
    let keyed = |key: &str, flags: &[&str]| {
        let mut c = served(
            &url,
            &spec,
            &[&["--api-key-env", "DSS_TEST_KEY"], flags].concat(),
        );
        c.env("DSS_TEST_KEY", key);
        c
    };
    // A wrong key: 401 with the server's message and where the key came from.
    let o = keyed("wrong-key", &["--server-model", "m"])
        .arg("a red small one")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("refused the API key (HTTP 401"), "{err}");
    assert!(err.contains("$DSS_TEST_KEY"), "{err}");
    // The right key works.
    let o = keyed("right-key", &["--compact"])
        .arg("a small red one")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        r#"{"color":"red","size":"small"}"#
    );
    // One round trip per line (llama-server continues the templated prompt).
    let o = keyed("right-key", &["--compact"])
        .args(["--serve-mode", "per-line", "--stats", "a large blue one"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        r#"{"color":"blue","size":"large"}"#
    );
    assert!(err.contains(r#""serve_mode":"per-line""#), "{err}");
    // Per-line needs a server that continues a prefix.
    let o = served(
        &url,
        &spec,
        &["--server-kind", "vllm", "--serve-mode", "per-line"],
    )
    .arg("x")
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--serve-mode per-line needs a server that continues a prefix"),
        "{err}"
    );
    // The grammar sent where llama-server does not read it (as if it were SGLang): the
    // unconstrained answer does not expand, and the error names the kind and the flag.
    let o = keyed("right-key", &["--server-kind", "sglang"])
        .args(["--no-prune", "--max-tokens", "40"])
        .arg("a small red one")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("did the sglang server apply the grammar? --server-kind")
            || err.contains("cut by the token limit"),
        "{err}"
    );
    // A budget of one token: cut, said so.
    let o = keyed("right-key", &["--no-prune"])
        .args(["--max-tokens", "1"])
        .arg("a small red one")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cut by the token limit"), "{err}");
}

/// `dss generate` in process on the same spec and requests, with SmolLM2.
#[cfg(feature = "runtime")]
fn in_process(p: &Prereqs, spec: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(DSS);
    c.args(["generate", "--spec"])
        .arg(spec)
        .arg("--model")
        .arg(&p.model)
        .args(["--threads", "2", "--no-prefix-cache"])
        .args(extra);
    c
}

/// `POST path` with a JSON body to the server on 127.0.0.1:`port`: the answer's body.
#[cfg(feature = "runtime")]
fn post(port: u16, path: &str, body: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    c.write_all(req.as_bytes()).unwrap();
    let mut resp = String::new();
    c.read_to_string(&mut resp).unwrap();
    resp.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// The server is given exactly the in-process prompt: the chat messages dss sends,
/// rendered by llama-server's template (`/apply-template`), are the text `dss generate
/// --print-prompt` shows in process. Then greedy outputs are compared in the server's
/// conditions (one grammar for the whole request: `--consume off --split-lines`;
/// llama.cpp's own grammar sampler, every token sampled: `--engine gbnf
/// --no-fast-forward`) and the agreement printed: they are equal where the two llama.cpp
/// builds (llama-cpp-sys-2's and the server's, built for this CPU) give the same greedy
/// token, and may part at a near tie (README "Serving").
#[cfg(feature = "runtime")]
#[test]
fn the_served_prompt_is_the_in_process_prompt() {
    let Some(p) = prereqs() else { return };
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars/viz");
    let server = Server::start(&p, 1);
    let requests = [
        "average profit per month over the last year",
        "sales by region",
    ];
    let mut same = 0;
    for r in requests {
        let local = in_process(&p, &spec, &["--print-prompt", r])
            .output()
            .unwrap();
        assert!(
            local.status.success(),
            "{}",
            String::from_utf8_lossy(&local.stderr)
        );
        let messages = served("http://127.0.0.1:9", &spec, &["--print-prompt", r])
            .output()
            .unwrap();
        assert!(
            messages.status.success(),
            "{}",
            String::from_utf8_lossy(&messages.stderr)
        );
        let body = format!(
            "{{\"messages\": {}}}",
            String::from_utf8_lossy(&messages.stdout)
        );
        let answer: serde_json::Value =
            serde_json::from_str(&post(server.port, "/apply-template", &body)).unwrap();
        assert_eq!(
            answer["prompt"].as_str().unwrap_or_default(),
            String::from_utf8_lossy(&local.stdout),
            "{r}: the server's prompt (left) vs in process (right)"
        );
        let common = ["--shorthand", "--compact", "--max-tokens", "120"];
        let local = in_process(&p, &spec, &common)
            .args(["--engine", "gbnf", "--no-fast-forward"])
            .args(["--consume", "off", "--split-lines", r])
            .output()
            .unwrap();
        let remote = served(&server.url(), &spec, &common)
            .arg(r)
            .output()
            .unwrap();
        let equal = remote.stdout == local.stdout;
        same += usize::from(equal);
        eprintln!(
            "{r}: {}\n  server: {:?}\n  in process: {:?}",
            if equal {
                "same output"
            } else {
                "outputs differ"
            },
            String::from_utf8_lossy(&remote.stdout),
            String::from_utf8_lossy(&local.stdout)
        );
    }
    eprintln!(
        "greedy outputs equal on {same} of {} requests",
        requests.len()
    );
}

/// Requests per second through llama-server at concurrency 1, 2 and 4, and in process, on
/// the same 200 requests (README's table). Ignored by default: a measurement, not a check.
#[cfg(feature = "runtime")]
#[test]
#[ignore]
fn bench_served_throughput() {
    let Some(p) = prereqs() else { return };
    let n = 200;
    let (_tmp, spec, input) = tiny_load(n);
    let mut rows = Vec::new();
    {
        let server = Server::start(&p, 4);
        // One request first, so the model and the prompt prefix are warm.
        let _ = served(&server.url(), &spec, &["red small"]).output();
        for conc in ["1", "2", "4"] {
            let t = Instant::now();
            let o = served(&server.url(), &spec, &["--jsonl", "--input"])
                .arg(&input)
                .args(["--concurrency", conc])
                .output()
                .unwrap();
            assert!(o.status.success());
            rows.push((format!("llama-server, concurrency {conc}"), t.elapsed()));
        }
    }
    let t = Instant::now();
    let o = in_process(&p, &spec, &["--jsonl", "--input"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    rows.push(("in process (one model, sequential)".into(), t.elapsed()));
    for (what, d) in rows {
        println!(
            "| {what} | {:.1} s | {:.2} req/s |",
            d.as_secs_f64(),
            n as f64 / d.as_secs_f64()
        );
    }
}

/// `dss eval --backend openai`: a suite evaluated on the served model, cases in flight at
/// once and reported in case order; conditions that run in process only are refused.
#[cfg(feature = "runtime")]
#[test]
fn eval_takes_the_same_backend_flags() {
    let Some(p) = prereqs() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = tmp.path().join("atis");
    let o = Command::new(DSS)
        .args(["eval", "import", "apimix"])
        .arg(root.join(dss_data::FIXTURES_DIR).join("APIMixATIS"))
        .arg("-o")
        .arg(&suite)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let server = Server::start(&p, 2);
    let out = tmp.path().join("out");
    let o = Command::new(DSS)
        .arg("eval")
        .arg(&suite)
        .args([
            "--backend",
            "openai",
            "--url",
            &server.url(),
            "--concurrency",
            "2",
        ])
        .args([
            "--limit",
            "4",
            "--conditions",
            "gp,cd",
            "--max-tokens",
            "24",
        ])
        .args(["--format", "json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["suite"], "apimix-atis", "{report}");
    let items = std::fs::read_to_string(out.join("items.jsonl")).unwrap();
    let items: Vec<serde_json::Value> = items
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Every case under both conditions, in case order, each an answer or an error.
    assert_eq!(items.len(), 8);
    let cases = std::fs::read_to_string(suite.join("cases.jsonl")).unwrap();
    let ids: Vec<String> = cases
        .lines()
        .take(4)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
        .collect();
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item["id"].to_string(), ids[i / 2], "{item}");
        assert_eq!(item["condition"], ["gp", "cd"][i % 2], "{item}");
        assert!(
            item["output"].is_null() != item["error"].is_null(),
            "{item}"
        );
    }
    // The served model answered (an ATIS call list is within SmolLM2's reach, if not right).
    let valid: u64 = ["gp", "cd"]
        .iter()
        .map(|c| report["results"][c]["valid"].as_u64().unwrap_or(0))
        .sum();
    assert!(valid > 0, "{report}\n{items:?}");
    // The report names the served model (llama-server lists its file's name).
    let model = report["model"].as_str().unwrap_or_default();
    assert!(model.contains("SmolLM2"), "{report}");
    let o = Command::new(DSS)
        .arg("eval")
        .arg(&suite)
        .args(["--backend", "openai", "--url", &server.url()])
        .args(["--limit", "1", "--conditions", "free"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`free` runs in process only"), "{err}");
}
