//! The Rust side of `fhir/tests/python/validate_fhir.py`: one call validates a set of FHIR
//! documents with Python's `fhir.resources` and compares each with the DEMIS example of its kind.
//! Shared by the FHIR crate's tests and the service's (which include this file by path), so
//! that every bundle a test sees is checked the same way.

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

/// Runs the validator `fhir_dir/tests/python/validate_fhir.py` (`fhir_dir` is the FHIR crate's
/// folder) over `cases`, the examples read from `reference`; the manifest is written to `dir`.
pub fn validate(fhir_dir: &Path, reference: &Path, dir: &Path, cases: &[Case]) -> Output {
    let manifest: Vec<Value> = cases
        .iter()
        .map(|c| {
            json!({"path": c.path, "example": c.example, "suffix": c.suffix, "refusal": c.refusal})
        })
        .collect();
    let manifest_path = dir.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let output = Command::new("python3")
        .arg(fhir_dir.join("tests/python/validate_fhir.py"))
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

/// What the validator wrote, standard output and error together.
pub fn report(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
