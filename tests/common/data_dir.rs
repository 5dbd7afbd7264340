//! A test's data directory: where a server or a command keeps its store (sled in the
//! directory, or a PostgreSQL database the directory names) and writes its log.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{binary, PASSWORD};

/// A data directory that lives as long as the test.
pub struct DataDir {
    dir: tempfile::TempDir,
    /// Where the server's log goes when it must not share the data directory's file system.
    log_dir: Option<tempfile::TempDir>,
    /// The settings of the store servers and commands on this directory use: none (sled in the
    /// directory), or with `TEST_STORE=postgres` a fresh database of the test cluster's.
    pub(super) store: Vec<(String, String)>,
}

impl DataDir {
    /// A fresh, empty data directory.
    pub fn new() -> Self {
        DataDir {
            dir: tempfile::tempdir().expect("temp dir"),
            log_dir: None,
            store: store_settings(),
        }
    }

    /// A fresh data directory whose store is the one `settings` name (a database several nodes
    /// share, and its master key): its commands and servers use them.
    pub fn sharing(settings: &[(String, String)]) -> Self {
        DataDir {
            dir: tempfile::tempdir().expect("temp dir"),
            log_dir: None,
            store: settings.to_vec(),
        }
    }

    /// A fresh, empty data directory inside `parent` (a file system of the test's choosing);
    /// the server's log stays on the usual one.
    pub fn inside(parent: &Path) -> Self {
        DataDir {
            dir: tempfile::tempdir_in(parent).expect("temp dir"),
            log_dir: Some(tempfile::tempdir().expect("temp dir")),
            store: store_settings(),
        }
    }

    /// Whether the store lives in the directory (sled), rather than in a database.
    pub fn sled(&self) -> bool {
        self.store.is_empty()
    }

    /// Where a server on this directory writes its log.
    pub fn log_path(&self) -> PathBuf {
        self.log_dir
            .as_ref()
            .map_or(self.path(), |dir| dir.path())
            .join("server.log")
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `meldewerk --data-dir DIR args…` with `stdin` and returns (success, stdout, stderr).
    pub fn cli(&self, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
        let mut child = Command::new(binary())
            .arg("--data-dir")
            .arg(self.path())
            .args(args)
            .env_remove("MELDEWERK_DATA_DIR")
            .envs(self.store.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run meldewerk");
        {
            use std::io::Write;
            let mut input = child.stdin.take().unwrap();
            if let Some(text) = stdin {
                // A command that fails before reading its input closes the pipe: not our error.
                let _ = input.write_all(text.as_bytes());
            }
        }
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Adds an API user with [`PASSWORD`]; panics on failure.
    pub fn add_user(&self, name: &str) {
        let (ok, out, err) = self.cli(&["user", "add", name, "--password-stdin"], Some(PASSWORD));
        assert!(ok, "user add failed: {out} {err}");
    }
}

/// The settings that put a store on the PostgreSQL database `url` with the master key
/// `master_key`: what the data directories of nodes sharing that database are made with
/// ([`DataDir::sharing`]).
pub fn on_database(url: &str, master_key: [u8; 32]) -> Vec<(String, String)> {
    use base64::Engine as _;
    let key = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(master_key);
    owned(&[
        ("MELDEWERK_STORE__ENGINE", "postgres"),
        ("MELDEWERK_STORE__URL", url),
        ("MELDEWERK_MASTER_KEY", &key),
    ])
}

/// `settings` as owned pairs.
pub fn owned(settings: &[(&str, &str)]) -> Vec<(String, String)> {
    settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// With `TEST_STORE=postgres`, the settings that put a data directory's store into a fresh
/// database of the test process's PostgreSQL cluster: the suite's servers then run on the
/// PostgreSQL engine (docs/testing.md). Otherwise none: sled in the data directory.
fn store_settings() -> Vec<(String, String)> {
    match std::env::var("TEST_STORE").as_deref() {
        Ok("postgres") => {
            // On a thread of its own: a test may be inside a runtime already.
            let url = std::thread::spawn(|| {
                tokio::runtime::Runtime::new()
                    .unwrap()
                    .block_on(meldewerk_storage::postgres::testing::cluster().fresh_database())
            })
            .join()
            .unwrap();
            vec![
                ("MELDEWERK_STORE__ENGINE".into(), "postgres".into()),
                ("MELDEWERK_STORE__URL".into(), url),
            ]
        }
        Ok("sled") | Err(_) => Vec::new(),
        Ok(other) => panic!("TEST_STORE is sled or postgres, not {other}"),
    }
}
