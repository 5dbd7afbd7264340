//! Operator alert mails over a real SMTP server on loopback (Python's aiosmtpd, writing every mail
//! it receives into a Maildir): a report ending in FAILURE is mailed to the operators, failures
//! within the window are grouped into one mail, and a dead mail server blocks nothing and gets the
//! mail once it is up.

mod common;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const OPERATORS: &str = "ops@example.org,oncall@example.org";

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A port nothing listens on (yet).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// aiosmtpd on `127.0.0.1:port`, storing mails in a Maildir.
struct SmtpServer {
    child: Child,
    maildir: tempfile::TempDir,
}

/// One received mail.
#[derive(Debug)]
struct Received {
    subject: String,
    from: String,
    to: String,
    /// The envelope recipients, as aiosmtpd recorded them.
    rcpt_to: String,
    body: String,
}

impl SmtpServer {
    fn start(port: u16) -> SmtpServer {
        let maildir = tempfile::tempdir().unwrap();
        let child = Command::new("python3")
            .args(["-m", "aiosmtpd", "-n", "-l"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--class", "aiosmtpd.handlers.Mailbox"])
            .arg(maildir.path().join("mail"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("python3 is needed by this test ({e})"));
        let mut server = SmtpServer { child, maildir };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "aiosmtpd exited ({status}); it is needed by this test: run scripts/test.sh, \
                     which installs it (python3 -m pip install aiosmtpd==1.4.6)"
                );
            }
            assert!(Instant::now() < deadline, "aiosmtpd did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn mails(&self) -> Vec<Received> {
        let mut files: Vec<PathBuf> = ["new", "cur"]
            .iter()
            .flat_map(|sub| read_dir(&self.maildir.path().join("mail").join(sub)))
            .collect();
        files.sort();
        files
            .iter()
            .map(|file| {
                let raw = std::fs::read(file).unwrap();
                let mail = mailparse::parse_mail(&raw).unwrap();
                let header = |name: &str| {
                    use mailparse::MailHeaderMap;
                    mail.headers.get_first_value(name).unwrap_or_default()
                };
                Received {
                    subject: header("Subject"),
                    from: header("From"),
                    to: header("To"),
                    rcpt_to: header("X-RcptTo"),
                    body: mail.get_body().unwrap(),
                }
            })
            .collect()
    }
}

fn read_dir(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server whose every report is refused by the office, mailing alerts to `port`.
fn failing_server(dir: &DataDir, port: u16, window_secs: &str) -> Server {
    let port = port.to_string();
    Server::start(
        dir,
        &[
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__FAILURE_RATE", "1.0"),
            ("MELDEWERK_MAIL__SMTP_HOST", "127.0.0.1"),
            ("MELDEWERK_MAIL__SMTP_PORT", &port),
            ("MELDEWERK_MAIL__TLS", "none"),
            (
                "MELDEWERK_MAIL__FROM",
                "meldewerk <alerts@meldewerk.example>",
            ),
            ("MELDEWERK_MAIL__OPERATORS", OPERATORS),
            ("MELDEWERK_MAIL__GROUP_WINDOW_SECS", window_secs),
            ("MELDEWERK_MAIL__RETRY_MAX_SECS", "2"),
        ],
    )
}

#[test]
fn a_failed_report_is_mailed_to_the_operators() {
    let port = free_port();
    let smtp = SmtpServer::start(port);
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = failing_server(&dir, port, "1");
    let id = dispatch(&server, "klinik", &complete_notice("geb-mail-1"));
    let result = server.wait_for_status("klinik", &id, "FAILURE");
    let reason = result["failureReason"].as_str().unwrap().to_string();

    wait_until("the alert mail", || !smtp.mails().is_empty());
    let mails = smtp.mails();
    assert_eq!(mails.len(), 1, "{mails:?}");
    let mail = &mails[0];
    assert_eq!(mail.subject, "[meldewerk] delivery failed: 1 event");
    assert!(mail.from.contains("alerts@meldewerk.example"), "{mail:?}");
    for operator in OPERATORS.split(',') {
        assert!(mail.to.contains(operator), "{mail:?}");
        assert!(mail.rcpt_to.contains(operator), "{mail:?}");
    }
    let line = format!("module=birthnotice report={id} reason={reason}");
    assert!(mail.body.contains(&line), "{line} in {}", mail.body);
    // Nothing of the report's content: no names, no places.
    for personal in ["Muster", "Lina", "Anna", "Gartenweg", "Berlin", "klinik"] {
        assert!(!mail.body.contains(personal), "{personal} in {}", mail.body);
    }
    // Logged once the server has the SMTP server's answer, which may come after the mail arrived.
    wait_until("the sent mail in the log", || {
        server.log().contains("alert mail sent")
    });
}

#[test]
fn ten_failures_within_the_window_make_one_mail() {
    let port = free_port();
    let smtp = SmtpServer::start(port);
    let dir = DataDir::new();
    dir.add_user("klinik");
    // A window far longer than the test: the mail goes out at shutdown, with everything pending.
    let mut server = failing_server(&dir, port, "3600");
    let ids: Vec<String> = (0..10)
        .map(|i| {
            let notice = complete_notice(&format!("geb-group-{i}"));
            dispatch(&server, "klinik", &notice)
        })
        .collect();
    for id in &ids {
        server.wait_for_status("klinik", id, "FAILURE");
    }
    assert!(smtp.mails().is_empty(), "nothing before the window closes");
    assert!(server.terminate(), "clean exit");

    let mails = smtp.mails();
    assert_eq!(mails.len(), 1, "one grouped mail: {mails:?}");
    assert_eq!(mails[0].subject, "[meldewerk] delivery failed: 10 events");
    for id in &ids {
        let line = format!("module=birthnotice report={id} reason=");
        assert!(mails[0].body.contains(&line), "{id} in {}", mails[0].body);
    }
}

#[test]
fn a_dead_mail_server_blocks_nothing_and_gets_the_mail_once_it_is_up() {
    let port = free_port();
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = failing_server(&dir, port, "1");
    let first = dispatch(&server, "klinik", &complete_notice("geb-dead-1"));
    server.wait_for_status("klinik", &first, "FAILURE");
    wait_until("the failed send in the log", || {
        server
            .log()
            .contains("alert mail could not be sent; will retry")
    });

    // Deliveries and the API go on meanwhile.
    let second = dispatch(&server, "klinik", &complete_notice("geb-dead-2"));
    server.wait_for_status("klinik", &second, "FAILURE");
    assert_eq!(
        server
            .client()
            .get(server.url("/healthz"))
            .send()
            .unwrap()
            .status(),
        200
    );
    let listed = server.get_as("klinik", "/api/birthnotice/v1/reports");
    assert_eq!(listed.status(), 200);

    let smtp = SmtpServer::start(port);
    wait_until("the retried mail", || {
        let bodies: String = smtp.mails().iter().map(|m| m.body.clone()).collect();
        bodies.contains("report=geb-dead-1 ") && bodies.contains("report=geb-dead-2 ")
    });
    for mail in smtp.mails() {
        assert!(
            mail.subject.starts_with("[meldewerk] delivery failed: "),
            "{mail:?}"
        );
    }
}
