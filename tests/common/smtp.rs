//! A real SMTP server on loopback for the tests of mails: Python's aiosmtpd, writing every mail
//! it receives into a Maildir, read back with `mailparse`.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nothing listens on (yet).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// aiosmtpd on `127.0.0.1:port`, storing mails in a Maildir.
pub struct SmtpServer {
    child: Child,
    maildir: tempfile::TempDir,
}

/// One received mail.
#[derive(Debug)]
pub struct Received {
    pub subject: String,
    pub from: String,
    pub to: String,
    /// The envelope recipients, as aiosmtpd recorded them.
    pub rcpt_to: String,
    pub body: String,
}

impl SmtpServer {
    pub fn start(port: u16) -> SmtpServer {
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

    pub fn mails(&self) -> Vec<Received> {
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

/// The mails whose envelope goes to `address`.
pub fn mails_to(smtp: &SmtpServer, address: &str) -> Vec<Received> {
    smtp.mails()
        .into_iter()
        .filter(|m| m.rcpt_to.contains(address))
        .collect()
}
