//! Processes the service reaches over HTTP in tests: a simulator run by `meldewerk simulate`, or a
//! tester's mock authority (`tests/python/`), each on a port of its own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use reqwest::blocking::Client;

use super::{binary, spawn_listening};

/// A running authority process; killed when dropped.
pub struct Peer {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT` (`https://` for a simulator serving TLS): what the service's
    /// `transports.<name>.url` is set to.
    pub base: String,
    /// Builds the command for a listen address (`127.0.0.1:0` at first, the same port again
    /// after a kill).
    command: Box<dyn Fn(&str) -> Command>,
    log: PathBuf,
}

impl Peer {
    /// `meldewerk --data-dir DIR simulate xpersonenstand` on a free port, with `env` on top of a
    /// quick acknowledgement; its log goes to `DIR/simulator.log`.
    pub fn simulator(dir: &Path, env: &[(&str, &str)]) -> Peer {
        let mut all = vec![("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "200")];
        for (k, v) in env {
            all.retain(|(key, _)| key != k);
            all.push((k, v));
        }
        Peer::simulate(dir, "xpersonenstand", &all)
    }

    /// `meldewerk --data-dir DIR simulate NAME` on a free port with `env`; its log goes to
    /// `DIR/simulator.log`.
    pub fn simulate(dir: &Path, name: &str, env: &[(&str, &str)]) -> Peer {
        let dir = dir.to_path_buf();
        let name = name.to_owned();
        let all = super::owned(env);
        let log = dir.join("simulator.log");
        Peer::start(log, "127.0.0.1:0", move |listen| {
            let mut command = Command::new(binary());
            command
                .arg("--data-dir")
                .arg(&dir)
                .args(["simulate", &name, "--listen", listen])
                .env_remove("MELDEWERK_DATA_DIR")
                .env("MELDEWERK_LOG__LEVEL", "info");
            for (k, v) in &all {
                command.env(k, v);
            }
            command
        })
    }

    /// The Python mock authority of `tests/python/mock_authority.py` on `listen`; its log goes
    /// to `log_dir/mock.log`.
    pub fn python_mock(log_dir: &Path, listen: &str) -> Peer {
        Peer::python_mock_with(log_dir, listen, &[])
    }

    /// [`Peer::python_mock`] with more of its options (`--decide-at-once`, say).
    pub fn python_mock_with(log_dir: &Path, listen: &str, options: &[&str]) -> Peer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mock_authority.py");
        let options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
        Peer::start(log_dir.join("mock.log"), listen, move |listen| {
            let mut command = Command::new("python3");
            command
                .arg(&script)
                .args(["--listen", listen])
                .args(&options);
            command
        })
    }

    fn start(log: PathBuf, listen: &str, command: impl Fn(&str) -> Command + 'static) -> Peer {
        let mut peer = Peer {
            child: None,
            base: String::new(),
            command: Box::new(command),
            log,
        };
        peer.spawn(listen);
        peer
    }

    /// Starts the process and waits for its "… listening on http://ADDR" line.
    fn spawn(&mut self, listen: &str) {
        let (child, base) = spawn_listening((self.command)(listen), &self.log);
        self.base = base;
        self.child = Some(child);
    }

    /// Full URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// The process's id, while it runs (benchmarks read its CPU time).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// What the simulator's process received for `report_id`, over its testers' `/received`,
    /// asked with `client` (one its TLS takes, for a simulator serving TLS).
    pub fn received(&self, client: &Client, report_id: &str) -> Vec<serde_json::Value> {
        let response = client
            .get(self.url(&format!("/received?report={report_id}")))
            .send()
            .unwrap();
        assert_eq!(response.status(), 200);
        let page: serde_json::Value = response.json().unwrap();
        page["messages"].as_array().unwrap().clone()
    }

    /// The simulator's whole received log (`/received`, paged), asked with `client`: deliveries
    /// per report id, and the resends it answered as repeats without registering them again.
    pub fn received_per_report(&self, client: &Client) -> (HashMap<String, usize>, u64) {
        let mut per_report = HashMap::new();
        let mut repeats = 0;
        let mut after: Option<u64> = None;
        loop {
            let mut url = self.url("/received?limit=1000");
            if let Some(after) = after {
                url.push_str(&format!("&after={after}"));
            }
            let page: serde_json::Value = client.get(url).send().unwrap().json().unwrap();
            for message in page["messages"].as_array().unwrap() {
                let id = message["report_id"].as_str().unwrap().to_owned();
                *per_report.entry(id).or_insert(0) += 1;
                repeats += message["repeat_submissions"].as_u64().unwrap_or(0);
            }
            match page["next"].as_u64() {
                Some(next) => after = Some(next),
                None => return (per_report, repeats),
            }
        }
    }

    /// The process's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: the process vanishes mid-whatever, like a crashed host.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// Starts the process again after a kill, on the same address (the service's url stays).
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "still running");
        let listen = self.base.split_once("://").map_or(&*self.base, |(_, a)| a);
        let listen = listen.to_string();
        self.spawn(&listen);
    }

    /// SIGTERM and wait for the process to exit; returns whether it exited successfully.
    pub fn terminate(&mut self) -> bool {
        let Some(mut child) = self.child.take() else {
            return true;
        };
        Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.success();
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("process ignored SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A plain HTTP client: the simulator process asks for no credentials.
    pub fn client(&self) -> Client {
        super::loopback_client().build().unwrap()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
