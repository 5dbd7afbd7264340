//! The outgoing message package: what [`crate::Transport::submit`] carries to the mailbox server
//! as a delivery's body, built once by the sender so that every retry carries the same bytes.
//!
//! JSON of media type [`MEDIA_TYPE`]:
//! `{"from": "<sender SAFE-ID>", "to": "<recipient SAFE-ID>", "files": [{"name":
//! "xjustiz_nachricht.xml", "content": "<base64>"}, …]}`. Read strictly: unknown members are
//! refused, the SAFE-IDs checked, the XJustiz message comes first under its name, every name is
//! a plain file name (no path, no control characters, not `.`/`..`) and names are unique, the
//! files' count and size are bounded ([`crate::mailbox`]). Unlike a court's message dropped by an
//! operator, our own outgoing message has no business with a hostile name.

use serde::{Deserialize, Serialize};

use crate::mailbox::{files_problems, safe_id_problem, MailboxFile, XJUSTIZ_FILE};

/// Media type of a message package.
pub const MEDIA_TYPE: &str = "application/vnd.meldewerk.egvp-message+json";

/// Largest package read: the files' limit as base64, plus room for names and the SAFE-IDs.
pub const MAX_PACKAGE_BYTES: usize = crate::mailbox::MAX_REQUEST_BYTES;

/// One outgoing message: sender and recipient account, the XJustiz message and attachments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessagePackage {
    /// The sender's SAFE-ID (an account of the mailbox server).
    pub from: String,
    /// The recipient's SAFE-ID.
    pub to: String,
    /// The XJustiz message ([`XJUSTIZ_FILE`]) first, then the attachments.
    pub files: Vec<MailboxFile>,
}

impl MessagePackage {
    /// A package from `from` to `to` with the XJustiz message and `attachments`; `Err` lists
    /// every problem (a bad SAFE-ID, a bad or repeated name, too many or too large files).
    pub fn new(
        from: &str,
        to: &str,
        xjustiz: Vec<u8>,
        attachments: Vec<MailboxFile>,
    ) -> Result<Self, Vec<String>> {
        let mut files = vec![MailboxFile {
            name: XJUSTIZ_FILE.to_owned(),
            content: xjustiz,
        }];
        files.extend(attachments);
        let package = MessagePackage {
            from: from.to_owned(),
            to: to.to_owned(),
            files,
        };
        let problems = package.problems();
        if problems.is_empty() {
            Ok(package)
        } else {
            Err(problems)
        }
    }

    /// The package's bytes, the delivery's body.
    pub fn to_bytes(&self) -> Vec<u8> {
        // A struct of strings and byte vectors always serialises.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a package strictly; `Err` says every problem, for the refusal.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() > MAX_PACKAGE_BYTES {
            return Err(format!(
                "the message package has {} bytes, more than {MAX_PACKAGE_BYTES}",
                bytes.len()
            ));
        }
        let package: MessagePackage = serde_json::from_slice(bytes)
            .map_err(|e| format!("the message package is not readable: {e}"))?;
        let problems = package.problems();
        if problems.is_empty() {
            Ok(package)
        } else {
            Err(format!(
                "the message package is malformed: {}",
                problems.join("; ")
            ))
        }
    }

    /// Every problem of the package, each a sentence.
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (member, safe_id) in [("from", &self.from), ("to", &self.to)] {
            if let Some(problem) = safe_id_problem(safe_id) {
                problems.push(format!("{member}: {problem}"));
            }
        }
        problems.extend(files_problems(&self.files));
        if self.files.first().is_some_and(|f| f.name != XJUSTIZ_FILE) {
            problems.push(format!("the first file must be {XJUSTIZ_FILE}"));
        }
        for (i, file) in self.files.iter().enumerate() {
            if let Some(problem) = plain_name_problem(&file.name) {
                problems.push(format!("files[{i}].name: {problem}"));
            }
            if self.files[..i].iter().any(|f| f.name == file.name) {
                problems.push(format!("files[{i}].name repeats an earlier file's name"));
            }
        }
        problems
    }
}

/// Why `name` is not a plain file name, if it is not.
fn plain_name_problem(name: &str) -> Option<&'static str> {
    if name == "." || name == ".." {
        return Some("must not be . or ..");
    }
    if name.contains(['/', '\\', ':']) {
        return Some("must be a file name without a path (no /, \\ or :)");
    }
    if name.chars().any(char::is_control) {
        return Some("must not contain control characters");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> MailboxFile {
        MailboxFile {
            name: name.into(),
            content: b"x".to_vec(),
        }
    }

    #[test]
    fn a_package_travels_as_strict_json() {
        let package = MessagePackage::new(
            "DE.Justiz.a",
            "DE.Justiz.b",
            b"<x/>".to_vec(),
            vec![file("antrag.pdf")],
        )
        .unwrap();
        let bytes = package.to_bytes();
        let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(json["files"][0]["name"], XJUSTIZ_FILE);
        assert_eq!(json["files"][0]["content"], "PHgvPg==");
        assert_eq!(MessagePackage::parse(&bytes).unwrap(), package);

        let unknown = br#"{"from":"a","to":"b","files":[],"cc":"c"}"#;
        assert!(MessagePackage::parse(unknown)
            .unwrap_err()
            .contains("unknown field"));
        let not_base64 =
            br#"{"from":"a","to":"b","files":[{"name":"xjustiz_nachricht.xml","content":"!"}]}"#;
        assert!(MessagePackage::parse(not_base64).is_err());
    }

    #[test]
    fn names_and_accounts_are_checked() {
        for bad in ["../x", "a/b", "C:x", ".", "a\u{7}"] {
            let problems =
                MessagePackage::new("DE.Justiz.a", "DE.Justiz.b", vec![], vec![file(bad)])
                    .unwrap_err();
            assert_eq!(problems.len(), 1, "{bad}: {problems:?}");
        }
        let repeated = MessagePackage::new(
            "DE.Justiz.a",
            "DE.Justiz.b",
            vec![],
            vec![file("a.pdf"), file("a.pdf")],
        )
        .unwrap_err();
        assert!(repeated[0].contains("repeats"), "{repeated:?}");
        let accounts = MessagePackage::new("", "x y", vec![], vec![]).unwrap_err();
        assert_eq!(accounts.len(), 2, "{accounts:?}");
        let no_xml = br#"{"from":"a","to":"b","files":[{"name":"a.pdf","content":""}]}"#;
        assert!(MessagePackage::parse(no_xml)
            .unwrap_err()
            .contains("first file"));
    }
}
