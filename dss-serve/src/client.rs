//! The HTTP side: one blocking agent shared by the threads, bounded retries with backoff on
//! connection failures, 429 and 5xx, a per-request timeout, the server's error message.

use crate::ServeError;
use serde_json::Value;
use std::time::Duration;

/// Where the server is and how to reach it.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The server's base URL (`http://127.0.0.1:8080`; a trailing `/v1` is accepted).
    pub url: String,
    /// The API key sent as `Authorization: Bearer …`, if any.
    pub api_key: Option<String>,
    /// The environment variable the key was read from (for messages).
    pub api_key_env: Option<String>,
    /// The limit for one HTTP request (connection, prompt, generation, answer).
    pub timeout: Duration,
    /// How many times a failed request is tried again (connection failures, HTTP 429 and
    /// 5xx; a timeout is not retried: the server may still be working on it).
    pub retries: u32,
    /// The wait before the first retry; doubled before each next one.
    pub backoff: Duration,
}

impl ServerConfig {
    /// A configuration for `url` with the defaults: no key, 300 s timeout, 2 retries from
    /// 500 ms.
    pub fn new(url: &str) -> Self {
        Self {
            url: url.to_string(),
            api_key: None,
            api_key_env: None,
            timeout: Duration::from_secs(300),
            retries: 2,
            backoff: Duration::from_millis(500),
        }
    }
}

/// A blocking HTTP client for one server, shared by every thread of a run.
#[derive(Debug)]
pub struct Client {
    agent: ureq::Agent,
    base: String,
    cfg: ServerConfig,
}

/// One attempt's failure: worth retrying or not.
enum Attempt {
    Retry(ServeError),
    Fatal(ServeError),
}

impl Client {
    /// A client for `cfg.url`.
    pub fn new(cfg: ServerConfig) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(cfg.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let base = cfg.url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base).to_string();
        Self { agent, base, cfg }
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.cfg
    }

    /// `GET path` (e.g. `/v1/models`), its JSON answer.
    pub fn get(&self, path: &str) -> Result<Value, ServeError> {
        self.with_retries(path, |url| {
            let mut req = self.agent.get(url);
            if let Some(k) = &self.cfg.api_key {
                req = req.header("Authorization", &format!("Bearer {k}"));
            }
            req.call()
        })
    }

    /// `POST path` with a JSON body, its JSON answer.
    pub fn post(&self, path: &str, body: &Value) -> Result<Value, ServeError> {
        let text = body.to_string();
        self.with_retries(path, |url| {
            let mut req = self.agent.post(url).content_type("application/json");
            if let Some(k) = &self.cfg.api_key {
                req = req.header("Authorization", &format!("Bearer {k}"));
            }
            req.send(text.as_str())
        })
    }

    fn with_retries(
        &self,
        path: &str,
        send: impl Fn(&str) -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Value, ServeError> {
        let url = format!("{}{path}", self.base);
        let mut wait = self.cfg.backoff;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.attempt(&url, attempts, &send) {
                Ok(v) => return Ok(v),
                Err(Attempt::Fatal(e)) => return Err(e),
                Err(Attempt::Retry(e)) if attempts > self.cfg.retries => return Err(e),
                Err(Attempt::Retry(_)) => {
                    std::thread::sleep(wait);
                    wait = wait.saturating_mul(2);
                }
            }
        }
    }

    fn attempt(
        &self,
        url: &str,
        attempts: u32,
        send: &impl Fn(&str) -> Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Value, Attempt> {
        let timeout = || {
            Attempt::Fatal(ServeError::Timeout {
                url: url.to_string(),
                secs: self.cfg.timeout.as_secs_f64(),
                attempts,
            })
        };
        let connect = |message: String| {
            Attempt::Retry(ServeError::Connect {
                url: url.to_string(),
                message,
                attempts,
            })
        };
        let mut resp = match send(url) {
            Ok(r) => r,
            Err(ureq::Error::Timeout(_)) => return Err(timeout()),
            Err(ureq::Error::Io(e)) => return Err(connect(e.to_string())),
            Err(ureq::Error::ConnectionFailed) => return Err(connect("connection failed".into())),
            Err(ureq::Error::HostNotFound) => return Err(connect("host not found".into())),
            Err(ureq::Error::Protocol(e)) => return Err(connect(format!("protocol error: {e}"))),
            Err(e) => {
                return Err(Attempt::Fatal(ServeError::BadResponse {
                    url: url.to_string(),
                    message: e.to_string(),
                }))
            }
        };
        let status = resp.status().as_u16();
        let body = match resp.body_mut().read_to_string() {
            Ok(b) => b,
            Err(ureq::Error::Timeout(_)) => return Err(timeout()),
            // The connection dropped while the answer was read (a server killed mid-answer).
            Err(e) => return Err(connect(format!("the answer was cut off: {e}"))),
        };
        if (200..300).contains(&status) {
            return serde_json::from_str(&body).map_err(|e| {
                Attempt::Fatal(ServeError::BadResponse {
                    url: url.to_string(),
                    message: format!("not JSON ({e}): {}", clip(&body)),
                })
            });
        }
        let message = server_message(&body);
        match status {
            401 | 403 => Err(Attempt::Fatal(ServeError::Unauthorized {
                status,
                message,
                hint: match &self.cfg.api_key_env {
                    Some(v) if self.cfg.api_key.is_some() => {
                        format!("check the key in ${v}")
                    }
                    Some(v) => format!("${v} is not set"),
                    None => "pass --api-key-env VAR naming the variable that holds the key".into(),
                },
            })),
            429 | 500..=599 => Err(Attempt::Retry(ServeError::Http {
                url: url.to_string(),
                status,
                message,
                attempts,
            })),
            _ => Err(Attempt::Fatal(ServeError::Http {
                url: url.to_string(),
                status,
                message,
                attempts,
            })),
        }
    }
}

/// The message of an error body: OpenAI's `{"error": {"message": …}}`, vLLM's
/// `{"message": …}`, FastAPI's `{"detail": …}`, else the body itself (clipped).
pub(crate) fn server_message(body: &str) -> String {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return clip(body.trim());
    };
    let pick = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o.get("message").and_then(Value::as_str).map(str::to_string),
            _ => None,
        }
    };
    v.get("error")
        .and_then(pick)
        .or_else(|| v.get("message").and_then(Value::as_str).map(str::to_string))
        .or_else(|| {
            v.get("detail")
                .map(|d| pick(d).unwrap_or_else(|| d.to_string()))
        })
        .unwrap_or_else(|| clip(body.trim()))
}

/// At most 300 characters of `s` (for messages).
pub(crate) fn clip(s: &str) -> String {
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_message_is_found_in_each_error_shape() {
        assert_eq!(
            server_message(
                r#"{"error": {"code": 400, "message": "Failed to parse grammar", "type": "invalid_request_error"}}"#
            ),
            "Failed to parse grammar"
        );
        assert_eq!(
            server_message(r#"{"object": "error", "message": "model not found", "code": 404}"#),
            "model not found"
        );
        assert_eq!(server_message(r#"{"detail": "Not Found"}"#), "Not Found");
        assert_eq!(server_message("Bad Gateway\n"), "Bad Gateway");
        assert_eq!(clip(&"é".repeat(400)).chars().count(), 301);
    }

    #[test]
    fn a_refused_connection_is_retried_then_reported() {
        // A port nothing listens on: bind one, note it, close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(9);
        let mut cfg = ServerConfig::new(&format!("http://127.0.0.1:{port}/v1/"));
        cfg.retries = 2;
        cfg.backoff = Duration::from_millis(10);
        let client = Client::new(cfg);
        let t = std::time::Instant::now();
        match client.get("/v1/models") {
            Err(ServeError::Connect { url, attempts, .. }) => {
                assert_eq!(url, format!("http://127.0.0.1:{port}/v1/models"));
                assert_eq!(attempts, 3);
            }
            other => panic!("expected a connection error, got {other:?}"),
        }
        // Two waits: 10 ms, then 20 ms.
        assert!(t.elapsed() >= Duration::from_millis(30));
    }
}
