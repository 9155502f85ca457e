//! Helpers the served-backend tests share (tests/serve.rs, tests/serve_vllm.rs): a server's
//! `/health`, the two-field spec whose answers are known in advance, and `--jsonl` output.
// Each test crate that includes this module uses only some of it.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// Whether the server on 127.0.0.1:`port` answers `GET /health` with 200 (within `timeout`).
pub(crate) fn healthy(port: u16, timeout: Duration) -> bool {
    let Ok(mut c) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = c.set_read_timeout(Some(timeout));
    let req =
        format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if c.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut resp = String::new();
    let _ = c.read_to_string(&mut resp);
    resp.starts_with("HTTP/1.1 200")
}

/// A small spec whose answers a 135M model writes in a few tokens: a color and a size,
/// each pruned to the one the request names, so every answer is known in advance.
pub(crate) fn tiny_spec(dir: &Path) -> PathBuf {
    let schema = dir.join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type": "object",
            "properties": {"color": {"enum": ["red", "green", "blue"]},
                           "size": {"enum": ["small", "large"]}},
            "required": ["color", "size"], "additionalProperties": false}"#,
    )
    .unwrap();
    let out = dir.join("spec");
    let o = Command::new(env!("CARGO_BIN_EXE_dss"))
        .arg("compile")
        .arg(&schema)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Each stdout line of `o` as JSON (a `--jsonl` run's records).
pub(crate) fn stdout_lines(o: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}
