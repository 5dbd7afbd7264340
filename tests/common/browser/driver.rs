//! chromedriver for [`super::Chromium`]: started on a port of its own choosing, and started
//! again when it exits before it listens.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::missing_tool;

/// How long chromedriver may take to start.
const DRIVER_START: Duration = Duration::from_secs(30);

/// How often chromedriver is started before the tests give up. It once exited with status 1
/// before it listened, while many tests bound ports in parallel (seen once in CI); what it says
/// then goes into the panic's message.
const DRIVER_ATTEMPTS: u32 = 3;

/// Starts chromedriver on a port of its choosing (no race for a free port between parallel
/// tests) and returns it with its address, once it says it listens. A driver that exits before
/// that is started again, up to [`DRIVER_ATTEMPTS`] times; one that neither listens nor exits
/// within [`DRIVER_START`] is not.
pub(super) fn start_driver() -> (Child, String) {
    let mut said = Vec::new();
    for attempt in 1..=DRIVER_ATTEMPTS {
        match try_start_driver() {
            Ok(started) => return started,
            Err(Ended::Exited(output)) => said.push(format!("attempt {attempt}: {output}")),
            Err(Ended::Hung(output)) => {
                said.push(format!(
                    "attempt {attempt}, ended after {DRIVER_START:?}: {output}"
                ));
                break;
            }
        }
    }
    missing_tool(
        "a working chromedriver",
        &format!("it never started; it said: {}", said.join("; ")),
    )
}

/// How a start of chromedriver failed, with what it printed.
enum Ended {
    /// It exited before it listened.
    Exited(String),
    /// It neither listened nor exited within [`DRIVER_START`], and was ended.
    Hung(String),
}

/// One start of chromedriver: the driver and its address, or how it ended.
fn try_start_driver() -> Result<(Child, String), Ended> {
    let mut driver = Command::new("chromedriver")
        .arg("--port=0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| missing_tool("chromedriver", &format!("cannot run it: {e}")));
    let (tx, rx) = std::sync::mpsc::channel();
    // Both streams are read to the end, so that chromedriver never blocks on a full pipe; every
    // line goes to the channel, the port's line is the one awaited.
    forward_lines(driver.stdout.take().unwrap(), tx.clone());
    forward_lines(driver.stderr.take().unwrap(), tx);
    let deadline = Instant::now() + DRIVER_START;
    let mut said = Vec::new();
    let hung = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some((_, port)) = line.split_once("started successfully on port ") {
                    let address = format!("http://127.0.0.1:{}", port.trim_end_matches('.'));
                    return Ok((driver, address));
                }
                said.push(line);
                if left.is_zero() {
                    break true;
                }
            }
            // Both streams closed: the driver ended.
            Err(RecvTimeoutError::Disconnected) => break false,
            Err(RecvTimeoutError::Timeout) => break true,
        }
    };
    let _ = driver.kill();
    let status = driver.wait().map(|s| s.to_string()).unwrap_or_default();
    let output = format!("{} ({status})", said.join(" / "));
    Err(if hung {
        Ended::Hung(output)
    } else {
        Ended::Exited(output)
    })
}

/// Sends every line `stream` gives to `lines`, on a thread of its own, until the stream ends.
fn forward_lines(stream: impl std::io::Read + Send + 'static, lines: Sender<String>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
}
