//! The outside checkers of XJustiz messages, one way each: `xmllint` against the XJustiz 3.6.2
//! schemas, and the pyxjustiz scripts of tests/pyxjustiz (pinned in scripts/test.sh).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The XJustiz 3.6.2 schemas, beside the repository (or the shared folder of this machine).
pub fn xjustiz_schemas() -> PathBuf {
    let beside =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/xjustiz-3.6.2");
    if beside.exists() {
        beside
    } else {
        PathBuf::from("/work/shared/reference/xjustiz-3.6.2")
    }
}

/// `xmllint --schema` of the file against the 0005 message schema: (valid, xmllint's output).
pub fn xmllint_xjustiz(file: &Path) -> (bool, String) {
    let output = Command::new("xmllint")
        .current_dir(xjustiz_schemas())
        .args([
            "--noout",
            "--nonet",
            "--schema",
            "xjustiz_0005_nachrichten_3_2.xsd",
        ])
        .arg(file)
        .output()
        .expect("xmllint is not installed (apt-get install -y libxml2-utils)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// Runs `python3 tests/pyxjustiz/<script>` with the arguments; panics with the install hint
/// when pyxjustiz is missing.
pub fn pyxjustiz<I, S>(script: &str, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/pyxjustiz")
        .join(script);
    let output = Command::new("python3")
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("python3 is needed by this test ({e})"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("No module named 'xjustiz'") && !stderr.contains("No module named 'xsdata'"),
        "pyxjustiz is not installed (python3 -m pip install pyxjustiz==1.1.0, as scripts/test.sh does):\n{stderr}"
    );
    output
}
