//! The binary's standard streams and input lines: writing results to standard output (a
//! failure is [`StdoutError`], exit code [`EXIT_STDOUT`]), reporting on standard error
//! (a failure there never stops good records), reading `--jsonl` lines of bounded length,
//! and shortening the values messages quote.

use std::fmt;
use std::io::{self, BufRead, Write};

/// Exit code: standard output could not be written (closed, a reader that went away, a
/// full disk). Results may be lost, so this is never 0 nor the 1 of "bad input".
pub(crate) const EXIT_STDOUT: u8 = 3;

/// Writing the results to standard output failed.
#[derive(Debug)]
pub(crate) enum StdoutError {
    /// Standard output was closed when dss started (`>&-`): Rust's runtime puts
    /// `/dev/null` in its place, where every result would vanish.
    Closed,
    /// A write or flush failed.
    Write(io::Error),
}

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StdoutError::Closed => write!(
                f,
                "standard output is closed; nothing was written (redirect it to a file or to /dev/null)"
            ),
            StdoutError::Write(e) => write!(f, "cannot write to standard output: {e}"),
        }
    }
}

impl std::error::Error for StdoutError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StdoutError::Closed => None,
            StdoutError::Write(e) => Some(e),
        }
    }
}

impl StdoutError {
    /// A reader that went away (`dss … | head`): expected, reported by the exit code only.
    pub(crate) fn is_broken_pipe(&self) -> bool {
        matches!(self, StdoutError::Write(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// Standard output, for results: an error at once if it was closed when dss started.
/// Every write error is a [`StdoutError`].
pub(crate) struct Out {
    inner: io::StdoutLock<'static>,
}

impl Out {
    pub(crate) fn new() -> Result<Self, StdoutError> {
        if closed_at_start::stdout() {
            return Err(StdoutError::Closed);
        }
        Ok(Out {
            inner: io::stdout().lock(),
        })
    }

    /// Write `bytes`, then flush (each record reaches its reader as soon as it is made).
    pub(crate) fn write_flushed(&mut self, parts: &[&[u8]]) -> Result<(), StdoutError> {
        for p in parts {
            self.inner.write_all(p).map_err(StdoutError::Write)?;
        }
        self.inner.flush().map_err(StdoutError::Write)
    }
}

/// Whether standard output was closed when the process started, probed before Rust's
/// runtime replaces a closed descriptor 0–2 with `/dev/null` (then a closed stdout and
/// `> /dev/null` look the same). Linux only; elsewhere a closed stdout is not detected.
mod closed_at_start {
    #[cfg(target_os = "linux")]
    mod probe {
        use std::sync::atomic::{AtomicBool, Ordering};

        static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

        extern "C" fn probe() {
            // SAFETY: `fcntl(F_GETFD)` only reads the descriptor's flags; it fails with
            // EBADF when descriptor 1 is not open.
            let flags = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) };
            STDOUT_CLOSED.store(flags == -1, Ordering::Relaxed);
        }

        /// Run by the C runtime before `main`, hence before Rust's runtime opens
        /// `/dev/null` on closed standard descriptors.
        #[used]
        #[link_section = ".init_array"]
        static PROBE: extern "C" fn() = probe;

        pub(crate) fn stdout() -> bool {
            STDOUT_CLOSED.load(Ordering::Relaxed)
        }
    }

    #[cfg(target_os = "linux")]
    pub(crate) use probe::stdout;

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn stdout() -> bool {
        false
    }
}

/// Write one line to standard error. A failure (stderr closed, its reader gone) is
/// ignored: the report is lost, the results are not. Returns whether it was written.
pub(crate) fn report(line: &str) -> bool {
    let mut err = io::stderr().lock();
    writeln!(err, "{line}").and_then(|()| err.flush()).is_ok()
}

/// Where `--jsonl --keep-going` reports a bad record (`--errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ErrorsTo {
    /// On standard error, one JSON line per bad record (stdout holds the good ones).
    #[default]
    Stderr,
    /// On standard output, in the bad record's place as `{"dss_error": {…}}`, so output
    /// line N answers input line N (blank input lines have no output line).
    Inline,
}

/// A bad `--jsonl` record (boxed: records are many, errors few).
#[derive(Debug, Clone)]
pub(crate) struct RecordError(pub Box<RecordInfo>);

/// What is wrong with a bad `--jsonl` record and, where the library says it, where.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordInfo {
    /// The whole message, as printed without `--keep-going`.
    pub error: String,
    /// What is wrong, without the place (when it differs from `error`).
    pub message: Option<String>,
    /// JSON pointer into the instance (compress), or into the expanded JSON (expand).
    pub pointer: Option<String>,
    /// The JSON Schema keyword the instance violates.
    pub keyword: Option<String>,
    /// `line:column` in the record's shorthand (expand), or `1:column` in its JSON.
    pub position: Option<(usize, usize)>,
    /// What the notation allows at `position` (expand).
    pub expected: Option<String>,
    /// What the text has there (expand).
    pub found: Option<String>,
}

impl From<String> for RecordError {
    fn from(error: String) -> Self {
        RecordInfo {
            error,
            ..Default::default()
        }
        .into()
    }
}

impl From<RecordInfo> for RecordError {
    fn from(info: RecordInfo) -> Self {
        RecordError(Box::new(info))
    }
}

impl RecordError {
    /// The whole message.
    pub(crate) fn error(&self) -> &str {
        &self.0.error
    }

    /// See [`RecordInfo::record`].
    pub(crate) fn record(&self, line: usize) -> serde_json::Value {
        self.0.record(line)
    }
}

impl RecordInfo {
    /// The JSON error record of input line `line`: `line`, `error`, and each of `message`,
    /// `pointer`, `keyword`, `position` (`"L:C"`), `expected`, `found` that is known.
    pub(crate) fn record(&self, line: usize) -> serde_json::Value {
        let mut r = serde_json::Map::new();
        r.insert("line".into(), line.into());
        r.insert("error".into(), shorten(&self.error).into());
        let fields = [
            ("message", self.message.as_deref().map(shorten)),
            ("pointer", self.pointer.clone()),
            ("keyword", self.keyword.clone()),
            ("position", self.position.map(|(l, c)| format!("{l}:{c}"))),
            ("expected", self.expected.as_deref().map(shorten)),
            ("found", self.found.as_deref().map(shorten)),
        ];
        for (k, v) in fields {
            if let Some(v) = v {
                r.insert(k.into(), v.into());
            }
        }
        serde_json::Value::Object(r)
    }
}

/// Default `--max-line`: 64 MiB.
pub(crate) const DEFAULT_MAX_LINE: u64 = 64 << 20;

/// A size on the command line: bytes, or with a binary suffix `K`, `M`, `G` (`KiB`…
/// accepted too): `64M` is 64 MiB.
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected a size such as 1000, 64K, 64M or 2G"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "`{s}`: unknown unit; use K, M, G or T (powers of 1024)"
            ))
        }
    };
    n.checked_mul(1 << shift)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("`{s}`: must be at least 1 byte and below 16 EiB"))
}

/// A size for messages: `64 MiB`, `1000 bytes`.
pub(crate) fn show_size(bytes: u64) -> String {
    const UNITS: [(u32, &str); 4] = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")];
    for (shift, unit) in UNITS {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// One line read by [`read_line`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// The end of the input.
    End,
    /// A line, in the buffer, without its `\n` (a `\r` before it is kept).
    Text,
    /// A line longer than the limit: `len` bytes were skipped (its newline not counted);
    /// with `skip_rest` false, reading stopped at the limit and `len` is a lower bound.
    TooLong { len: u64 },
}

/// Read one line into `buf` (cleared first), holding at most `max` bytes in memory. An
/// over-long line is skipped to its end (`skip_rest`) so the next record can be read, or
/// left where the limit was passed.
pub(crate) fn read_line(
    reader: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: u64,
    skip_rest: bool,
) -> io::Result<Line> {
    buf.clear();
    let mut len: u64 = 0;
    let mut any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (data, used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        len += data.len() as u64;
        if len <= max {
            buf.extend_from_slice(data);
        } else if !skip_rest {
            reader.consume(used);
            buf.clear();
            return Ok(Line::TooLong { len });
        } else if !buf.is_empty() {
            buf.clear();
            buf.shrink_to(0);
        }
        reader.consume(used);
        if done {
            break;
        }
    }
    if !any {
        return Ok(Line::End);
    }
    if len > max {
        return Ok(Line::TooLong { len });
    }
    Ok(Line::Text)
}

/// Longest quoted value kept whole in a message (in characters).
const QUOTE_MAX: usize = 80;
/// Longest message kept whole (in characters): its head and tail are kept.
const MESSAGE_MAX: usize = 2000;

/// A message with every long quoted value shortened (`"aaaa…" (10000000 chars)`) and,
/// if still long (an array or object quoted as JSON), its middle left out: a 10 MB
/// instance never becomes 10 MB of stderr.
pub(crate) fn shorten(message: &str) -> String {
    let shortened = shorten_quoted(message);
    let n = shortened.chars().count();
    if n <= MESSAGE_MAX {
        return shortened;
    }
    let head: String = shortened.chars().take(MESSAGE_MAX * 3 / 4).collect();
    let tail: String = shortened.chars().skip(n - MESSAGE_MAX / 4).collect();
    format!(
        "{head}… [{} chars left out] …{tail}",
        n - MESSAGE_MAX * 3 / 4 - MESSAGE_MAX / 4
    )
}

/// Shorten each `"…"` (a JSON string: backslash escapes) or `` `…` `` longer than
/// [`QUOTE_MAX`] characters.
fn shorten_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4 * MESSAGE_MAX));
    let mut rest = message;
    while let Some(start) = rest.find(['"', '`']) {
        let quote = rest.as_bytes()[start];
        out.push_str(&rest[..start]);
        let body = &rest[start + 1..];
        let end = quoted_end(body, quote);
        let Some(end) = end else {
            // An unpaired quote: the rest is left as it is (shortened as a whole later).
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &body[..end];
        let q = quote as char;
        let count = inner.chars().count();
        if count > QUOTE_MAX {
            let kept: String = inner.chars().take(QUOTE_MAX).collect();
            out.push_str(&format!("{q}{kept}…{q} ({count} chars)"));
        } else {
            out.push(q);
            out.push_str(inner);
            out.push(q);
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Where the quote opened before `body` closes (`"` skips backslash escapes).
fn quoted_end(body: &str, quote: u8) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b if b == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("8k"), Ok(8 << 10));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12Q").unwrap_err().contains("unit"));
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(show_size(64 << 20), "64 MiB");
        assert_eq!(show_size(1000), "1000 bytes");
    }

    fn lines(input: &[u8], max: u64, skip_rest: bool) -> Vec<(Line, String)> {
        let mut r = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut r, &mut buf, max, skip_rest).expect("in memory");
            if line == Line::End {
                return out;
            }
            out.push((line, String::from_utf8_lossy(&buf).into_owned()));
        }
    }

    #[test]
    fn long_lines_are_skipped_and_reading_goes_on() {
        let got = lines(b"ab\n0123456789\n\nxyz", 5, true);
        assert_eq!(
            got,
            vec![
                (Line::Text, "ab".to_string()),
                (Line::TooLong { len: 10 }, String::new()),
                (Line::Text, String::new()),
                (Line::Text, "xyz".to_string()),
            ]
        );
        // Exactly the limit is kept; without skip_rest reading stops past the limit.
        assert_eq!(
            lines(b"12345\n", 5, true),
            vec![(Line::Text, "12345".into())]
        );
        let mut r = io::BufReader::with_capacity(4, &b"0123456789\nnext\n"[..]);
        let mut buf = Vec::new();
        assert!(matches!(
            read_line(&mut r, &mut buf, 5, false),
            Ok(Line::TooLong { len }) if (6..=10).contains(&len)
        ));
    }

    #[test]
    fn long_quoted_values_are_shortened() {
        let long = "a".repeat(10_000);
        let m = shorten(&format!(
            "\"{long}\" is not of type \"integer\" (keyword `type`)"
        ));
        assert!(
            m.starts_with(&format!("\"{}…\" (10000 chars)", "a".repeat(80))),
            "{m}"
        );
        assert!(
            m.ends_with("is not of type \"integer\" (keyword `type`)"),
            "{m}"
        );
        let escaped = format!("\"{}\\\"{long}\" x", "b".repeat(10));
        assert!(shorten(&escaped).ends_with("(10012 chars) x"));
        let array = format!("[{}] is not of type \"object\"", "1,".repeat(100_000));
        let m = shorten(&array);
        assert!(m.chars().count() < MESSAGE_MAX + 100, "{}", m.len());
        assert!(m.ends_with("is not of type \"object\""), "{m}");
        assert!(m.contains("chars left out"), "{m}");
        assert_eq!(shorten("short `x` \"y\""), "short `x` \"y\"");
        assert_eq!(shorten("unpaired \" quote"), "unpaired \" quote");
    }
}
