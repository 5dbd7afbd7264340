//! Mail: one SMTP client ([`Mailer`], lettre over rustls), the operator alerts and the API users'
//! notices built on it.
//!
//! Alerts ([`Alerts`]) are raised where something needs a person: an actor degraded, a report
//! failed for good, a circuit breaker opened. A report failed for good is also told to its owner,
//! the API user, when their account has an address ([`UserAddresses`]). Raising one never
//! blocks: it enters a bounded queue. One task ([`AlertService`]) groups them per kind and
//! audience over a window and sends one mail per kind, audience and window, so that an outage
//! sends a few mails, not thousands; a mail server that is down is logged and retried, and mails
//! pending at shutdown get the grace time.
//!
//! Mails carry only the module, the report id (escaped and bounded, as in the log) and the
//! failure reason or the actor's last error: no content of a report.

mod alerts;
mod batch;
mod recipients;
mod sender;
mod settings;
mod worker;

pub use alerts::{Alert, AlertKind, Alerts, Audience};
pub use batch::{Batch, LINES_PER_MAIL};
pub use recipients::{AccountAddresses, NoAddresses, UserAddresses};
pub use sender::{Mail, MailError, Mailer, SendMail};
pub use settings::{MailSettings, TlsMode};
pub use worker::{AlertService, Timing};
