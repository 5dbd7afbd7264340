//! The mailer: one SMTP client (lettre over rustls, no OpenSSL) for every mail the service sends,
//! alerts to operators and notices to API users.

use std::time::Duration;

use futures::future::BoxFuture;
use lettre::message::{header::ContentType, Mailbox};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::settings::{MailSettings, TlsMode};

/// Why a mail was not sent.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The settings cannot work (bad address, unusable host).
    #[error("mail settings: {0}")]
    Settings(String),
    /// The mail could not be put together.
    #[error("could not build the mail: {0}")]
    Build(String),
    /// The recipients could not be read (the store failed); the mail waits for its next try.
    #[error("recipients: {0}")]
    Recipients(String),
    /// The SMTP server could not be reached, timed out, or answered with a temporary error.
    #[error("SMTP: {0}")]
    Smtp(String),
    /// The SMTP server refused the mail for good (a 5xx reply), e.g. a recipient it does not
    /// relay to.
    #[error("SMTP, refused for good: {0}")]
    Refused(String),
}

impl MailError {
    /// What a log line about a user's notice may say: the class of failure without the server's
    /// reply, which tends to quote the recipient's address.
    pub fn without_reply(&self) -> &'static str {
        match self {
            MailError::Settings(_) => "the mail settings cannot work",
            MailError::Build(_) => "the mail could not be put together",
            MailError::Recipients(_) => "the recipient could not be read from the store",
            MailError::Smtp(_) => {
                "the mail server was not reached or answered with a temporary error"
            }
            MailError::Refused(_) => "the mail server refused the mail for good",
        }
    }
}

/// One plain-text mail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    /// Recipients, all in `To`.
    pub to: Vec<Mailbox>,
    /// Subject line.
    pub subject: String,
    /// Plain-text body.
    pub body: String,
}

/// Something that sends mails; the mailer, or a stand-in in tests.
pub trait SendMail: Send + Sync + 'static {
    /// Sends `mail` once (no retry: the caller decides when to try again).
    fn send(&self, mail: Mail) -> BoxFuture<'static, Result<(), MailError>>;
}

/// SMTP client built from `[mail]`. Cheap to clone.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// The mailer of `settings`; `None` when no SMTP host is configured. Connects only when it
    /// sends.
    pub fn new(settings: &MailSettings) -> Result<Option<Mailer>, MailError> {
        let Some(host) = settings
            .smtp_host
            .as_deref()
            .filter(|h| !h.trim().is_empty())
        else {
            return Ok(None);
        };
        let from = settings.from_mailbox().map_err(MailError::Settings)?;
        let builder = match settings.tls {
            TlsMode::None => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host),
            TlsMode::Starttls => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(host)
                .map_err(|e| MailError::Settings(e.to_string()))?,
            TlsMode::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(host)
                .map_err(|e| MailError::Settings(e.to_string()))?,
        };
        let mut builder = builder
            .port(settings.port())
            .timeout(Some(Duration::from_secs(settings.timeout_secs.max(1))));
        if let (Some(user), Some(password)) = (&settings.username, &settings.password) {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        Ok(Some(Mailer {
            transport: builder.build(),
            from,
        }))
    }

    /// Sends one plain-text mail from the configured sender.
    pub async fn send_mail(&self, mail: &Mail) -> Result<(), MailError> {
        let message = self.message(mail)?;
        self.transport.send(message).await.map(|_| ()).map_err(|e| {
            if e.is_permanent() {
                MailError::Refused(e.to_string())
            } else {
                MailError::Smtp(e.to_string())
            }
        })
    }

    fn message(&self, mail: &Mail) -> Result<Message, MailError> {
        if mail.to.is_empty() {
            return Err(MailError::Build("no recipient".into()));
        }
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(mail.subject.clone())
            .header(ContentType::TEXT_PLAIN);
        for to in &mail.to {
            builder = builder.to(to.clone());
        }
        builder
            .body(mail.body.clone())
            .map_err(|e| MailError::Build(e.to_string()))
    }
}

impl SendMail for Mailer {
    fn send(&self, mail: Mail) -> BoxFuture<'static, Result<(), MailError>> {
        let mailer = self.clone();
        Box::pin(async move { mailer.send_mail(&mail).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(host: &str, tls: TlsMode) -> MailSettings {
        MailSettings {
            smtp_host: Some(host.into()),
            tls,
            ..MailSettings::default()
        }
    }

    #[test]
    fn no_host_no_mailer() {
        assert!(Mailer::new(&MailSettings::default()).unwrap().is_none());
        assert!(Mailer::new(&settings(" ", TlsMode::None))
            .unwrap()
            .is_none());
    }

    #[test]
    fn every_tls_mode_builds_without_connecting() {
        for tls in [TlsMode::None, TlsMode::Starttls, TlsMode::Tls] {
            let mailer = Mailer::new(&settings("mail.example.org", tls)).unwrap();
            assert!(mailer.is_some(), "{tls:?}");
        }
    }

    #[test]
    fn a_message_names_sender_recipients_and_subject() {
        let mailer = Mailer::new(&settings("localhost", TlsMode::None))
            .unwrap()
            .unwrap();
        let mail = Mail {
            to: vec![
                "a@example.org".parse().unwrap(),
                "b@example.org".parse().unwrap(),
            ],
            subject: "[meldewerk] test".into(),
            body: "hello\n".into(),
        };
        let text = String::from_utf8(mailer.message(&mail).unwrap().formatted()).unwrap();
        assert!(
            text.contains("From: meldewerk <meldewerk@localhost>"),
            "{text}"
        );
        assert!(text.contains("a@example.org") && text.contains("b@example.org"));
        assert!(text.contains("Subject: [meldewerk] test"));
        let none = Mail { to: vec![], ..mail };
        assert!(matches!(mailer.message(&none), Err(MailError::Build(_))));
    }
}
