//! The `[mail]` section: where mail goes out (SMTP), who hears about alerts, and how alerts are
//! grouped, paced and retried.

use lettre::message::Mailbox;
use serde::Deserialize;

/// How the connection to the SMTP server is secured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TlsMode {
    /// Plain SMTP (a relay on the same host or a test server only).
    None,
    /// Plain connection upgraded with STARTTLS, which must succeed (port 587 by default).
    #[default]
    Starttls,
    /// TLS from the first byte, "SMTPS" (port 465 by default).
    Tls,
}

impl TlsMode {
    /// The usual port of the mode.
    pub fn default_port(self) -> u16 {
        match self {
            TlsMode::None => 25,
            TlsMode::Starttls => 587,
            TlsMode::Tls => 465,
        }
    }
}

/// SMTP server, sender, operators and alert pacing. Without `smtp_host` nothing is mailed; without
/// `operators` alerts are only logged (the mailer still serves other mails).
#[derive(Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MailSettings {
    /// SMTP server host name; unset turns mail off.
    pub smtp_host: Option<String>,
    /// SMTP port; defaults to the usual port of `tls` (25, 587, 465).
    pub smtp_port: Option<u16>,
    /// `none`, `starttls` or `tls`.
    pub tls: TlsMode,
    /// SMTP user name (with `password`); unset sends without authentication.
    pub username: Option<String>,
    /// SMTP password; never logged.
    pub password: Option<String>,
    /// Sender of every mail, `Name <address>` or a bare address.
    pub from: String,
    /// Who receives alert mails. In TOML a list; in the environment a comma-separated string
    /// (`MELDEWERK_MAIL__OPERATORS=a@example.org,b@example.org`) or a list (`[a@…, b@…]`).
    #[serde(deserialize_with = "crate::configuration::one_or_many")]
    pub operators: Vec<String>,
    /// Alerts of one kind are collected this long after the first one, then mailed together.
    pub group_window_secs: u64,
    /// At least this long between two mails of the same kind; alerts meanwhile are grouped into
    /// the next one.
    pub alert_min_interval_secs: u64,
    /// Longest pause between two tries of a mail that could not be sent (the pause doubles from
    /// one second up to this).
    pub retry_max_secs: u64,
    /// Longest time one SMTP conversation may take.
    pub timeout_secs: u64,
    /// Alerts waiting to be grouped; more are dropped and counted (the next mail says how many).
    pub queue_size: usize,
}

impl Default for MailSettings {
    fn default() -> Self {
        MailSettings {
            smtp_host: None,
            smtp_port: None,
            tls: TlsMode::default(),
            username: None,
            password: None,
            from: "meldewerk <meldewerk@localhost>".into(),
            operators: Vec::new(),
            group_window_secs: 60,
            alert_min_interval_secs: 900,
            retry_max_secs: 300,
            timeout_secs: 30,
            queue_size: 1024,
        }
    }
}

// By hand, so that the password never reaches a log or an error message.
impl std::fmt::Debug for MailSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSettings")
            .field("smtp_host", &self.smtp_host)
            .field("smtp_port", &self.smtp_port)
            .field("tls", &self.tls)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("from", &self.from)
            .field("operators", &self.operators)
            .field("group_window_secs", &self.group_window_secs)
            .field("alert_min_interval_secs", &self.alert_min_interval_secs)
            .field("retry_max_secs", &self.retry_max_secs)
            .field("timeout_secs", &self.timeout_secs)
            .field("queue_size", &self.queue_size)
            .finish()
    }
}

impl MailSettings {
    /// Whether mail goes out at all.
    pub fn smtp_enabled(&self) -> bool {
        self.smtp_host
            .as_deref()
            .is_some_and(|h| !h.trim().is_empty())
    }

    /// The port to connect to.
    pub fn port(&self) -> u16 {
        self.smtp_port.unwrap_or_else(|| self.tls.default_port())
    }

    /// The sender as a mailbox.
    pub fn from_mailbox(&self) -> Result<Mailbox, String> {
        self.from
            .parse()
            .map_err(|e| format!("mail.from {:?} is not an address: {e}", self.from))
    }

    /// The operators as mailboxes.
    pub fn operator_mailboxes(&self) -> Result<Vec<Mailbox>, String> {
        self.operators
            .iter()
            .map(|o| {
                o.parse()
                    .map_err(|e| format!("mail.operators: {o:?} is not an address: {e}"))
            })
            .collect()
    }

    /// Refuses settings that could never send a mail, at start-up rather than at the first alert.
    pub fn check(&self) -> Result<(), String> {
        self.from_mailbox()?;
        self.operator_mailboxes()?;
        if self.username.is_some() != self.password.is_some() {
            return Err("mail.username and mail.password go together".into());
        }
        if self.queue_size == 0 {
            return Err("mail.queue_size must be at least 1".into());
        }
        if self.timeout_secs == 0 {
            return Err("mail.timeout_secs must be at least 1".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use figment::providers::{Format, Toml};
    use figment::Figment;

    fn from_toml(toml: &str) -> MailSettings {
        Figment::new().merge(Toml::string(toml)).extract().unwrap()
    }

    #[test]
    fn mail_is_off_by_default() {
        let s = MailSettings::default();
        assert!(!s.smtp_enabled());
        assert_eq!(s.port(), 587);
        s.check().unwrap();
    }

    #[test]
    fn operators_come_as_a_list_or_a_comma_separated_string() {
        let s = from_toml(
            "smtp_host = \"mx\"\ntls = \"tls\"\noperators = [\"a@example.org\", \"b@example.org\"]",
        );
        assert_eq!(s.operators, ["a@example.org", "b@example.org"]);
        assert_eq!(s.port(), 465);
        assert!(s.smtp_enabled());
        let s = from_toml("operators = \"a@example.org, b@example.org,\"");
        assert_eq!(s.operators, ["a@example.org", "b@example.org"]);
    }

    #[test]
    fn operators_come_from_the_environment_as_a_string_or_a_list() {
        use figment::providers::Env;
        // A prefix of its own: no other test reads these variables.
        let read = |value: &str| -> MailSettings {
            std::env::set_var("MELDEWERK_MAILTEST_OPERATORS", value);
            Figment::new()
                .merge(Env::prefixed("MELDEWERK_MAILTEST_"))
                .extract()
                .unwrap()
        };
        let both = ["a@example.org", "b@example.org"];
        assert_eq!(read("a@example.org,b@example.org").operators, both);
        assert_eq!(read("[a@example.org, b@example.org]").operators, both);
        assert_eq!(read("a@example.org").operators, ["a@example.org"]);
        std::env::remove_var("MELDEWERK_MAILTEST_OPERATORS");
    }

    #[test]
    fn unusable_settings_are_refused() {
        let mut s = from_toml("operators = [\"not an address\"]");
        assert!(s.check().unwrap_err().contains("not an address"));
        s.operators.clear();
        s.username = Some("u".into());
        assert!(s.check().unwrap_err().contains("go together"));
    }

    #[test]
    fn the_password_is_not_shown() {
        let s = MailSettings {
            password: Some("hunter2-secret".into()),
            ..MailSettings::default()
        };
        assert!(!format!("{s:?}").contains("hunter2"));
    }
}
