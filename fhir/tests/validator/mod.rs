//! The validator of generated FHIR documents, shared by the tests of the `fhir` crate and the
//! service's tests of the health modules (which include this file by its path): Python's
//! `fhir.resources` (pinned in scripts/test.sh; its R4B models) parses each document, and
//! `python/validate_fhir.py` compares it with the DEMIS example of its kind.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

/// One document to validate: its file, the DEMIS example of its kind, the disease's profile
/// suffix (laboratory), and whether it is a refusal (answers).
pub struct Case {
    pub path: PathBuf,
    pub example: &'static str,
    pub suffix: Option<&'static str>,
    pub refusal: bool,
}

impl Case {
    pub fn new(path: PathBuf, example: &'static str) -> Case {
        Case {
            path,
            example,
            suffix: None,
            refusal: false,
        }
    }
}

/// The validator script, beside this file: found from the crate that includes it (the `fhir`
/// crate or the workspace's root).
fn script() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        "tests/python/validate_fhir.py",
        "fhir/tests/python/validate_fhir.py",
    ]
    .iter()
    .map(|path| manifest.join(path))
    .find(|path| path.is_file())
    .expect("fhir/tests/python/validate_fhir.py is missing")
}

/// Runs the validator over `cases`, comparing with the DEMIS examples in `reference`; its
/// manifest is written into `dir`.
pub fn validate(reference: &Path, dir: &Path, cases: &[Case]) -> Output {
    let manifest: Vec<Value> = cases
        .iter()
        .map(|c| {
            json!({"path": c.path, "example": c.example, "suffix": c.suffix, "refusal": c.refusal})
        })
        .collect();
    let manifest_path = dir.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let output = Command::new("python3")
        .arg(script())
        .arg(reference)
        .arg(&manifest_path)
        .output()
        .unwrap_or_else(|e| panic!("python3 is needed by this test ({e})"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("No module named 'fhir"),
        "fhir.resources is needed by this test: run scripts/test.sh, which installs it \
         (python3 -m pip install fhir.resources==7.1.0)"
    );
    output
}

/// What the validator printed, standard output then standard error.
pub fn report(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
