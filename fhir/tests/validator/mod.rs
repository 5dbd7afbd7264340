//! The run of the FHIR validator nobody here wrote (Python's `fhir.resources`, pinned in
//! scripts/test.sh; its R4B models), which also compares each document with the DEMIS example
//! of its kind (tests/python/validate_fhir.py says what is compared). Shared by this crate's
//! tests and the service's (they include this file by its path), so that there is one way to
//! validate a bundle.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

/// The DEMIS example of laboratory notifications.
pub const LABORATORY: &str = "LaboratoryNotificationExample.json";

/// One document to validate: its file, the DEMIS example of its kind, the disease's profile
/// suffix (laboratory), and whether it is a refusal (answers).
#[derive(Clone)]
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

/// The `fhir/` folder of the workspace, from the crate whose tests run (the workspace root or
/// `fhir/` itself).
fn fhir_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [manifest.join("fhir"), manifest.to_path_buf()]
        .into_iter()
        .find(|dir| dir.join("tests/python/validate_fhir.py").is_file())
        .expect("fhir/tests/python/validate_fhir.py")
}

/// The folder of the DEMIS examples, beside the repository.
pub fn demis_examples() -> PathBuf {
    let dir = fhir_dir().join("../../shared/reference/demis");
    assert!(dir.is_dir(), "{} is missing", dir.display());
    dir
}

/// Runs the validator over `cases`, its manifest written into `dir`.
pub fn validate(dir: &Path, cases: &[Case]) -> Output {
    let manifest: Vec<Value> = cases
        .iter()
        .map(|c| {
            json!({"path": c.path, "example": c.example, "suffix": c.suffix, "refusal": c.refusal})
        })
        .collect();
    let manifest_path = dir.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let output = Command::new("python3")
        .arg(fhir_dir().join("tests/python/validate_fhir.py"))
        .arg(demis_examples())
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

/// What the validator said, standard output then errors.
pub fn report(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
