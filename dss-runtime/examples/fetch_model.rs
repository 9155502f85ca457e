//! Downloads pinned models into the cache: `fetch_model [NAME ...]` (default: smollm2-135m).
//!
//! Why an example: CI's install script needs a fetch before the `dss` CLI is built;
//! `dss model fetch NAME` calls the same `ModelRegistry::fetch_with_progress`.

use std::process::ExitCode;
use std::time::Instant;

use dss_runtime::models::ModelRegistry;

fn main() -> ExitCode {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let names = if names.is_empty() {
        vec!["smollm2-135m".to_owned()]
    } else {
        names
    };
    let registry = match ModelRegistry::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for name in &names {
        let start = Instant::now();
        let result = registry.fetch_with_progress(name, &mut |p| eprintln!("{name}: {p}"));
        match result {
            Ok(path) => {
                eprintln!("{name}: done in {:.1}s", start.elapsed().as_secs_f64());
                println!("{}", path.display());
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
