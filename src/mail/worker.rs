//! The alert task: empties the queue into batches per kind and audience, mails each batch when it
//! is due (reading a user's address only then),
//! retries a mail that could not be sent with a doubling pause, and at shutdown sends what is
//! pending within the grace time. Spawned once at start-up; nothing else waits for it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use lettre::message::Mailbox;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::alerts::{Alert, Alerts, Audience};
use super::batch::{Due, Groups};
use super::recipients::UserAddresses;
use super::sender::{Mail, MailError, SendMail};
use super::settings::MailSettings;
use super::Mailer;

/// First pause after a failed send; it doubles up to `retry_max_secs`.
const FIRST_RETRY: Duration = Duration::from_secs(1);

/// Pacing of the alert task.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Grouping window.
    pub window: Duration,
    /// Least time between two mails of one kind to one audience.
    pub min_interval: Duration,
    /// Longest pause between two tries.
    pub retry_max: Duration,
}

impl Timing {
    /// The timing of `settings`.
    pub fn of(settings: &MailSettings) -> Timing {
        Timing {
            window: Duration::from_secs(settings.group_window_secs),
            min_interval: Duration::from_secs(settings.alert_min_interval_secs),
            retry_max: Duration::from_secs(settings.retry_max_secs).max(FIRST_RETRY),
        }
    }

    fn retry_in(&self, failures: u32) -> Duration {
        FIRST_RETRY
            .saturating_mul(1u32 << failures.min(20))
            .min(self.retry_max)
    }
}

/// The running alert task and the handle that feeds it.
pub struct AlertService {
    alerts: Alerts,
    stop: Option<oneshot::Sender<Instant>>,
    task: Option<JoinHandle<()>>,
}

impl AlertService {
    /// Starts the alert task for `settings` (inside a tokio runtime), reading users' addresses
    /// from `users`; with mail off, a handle whose alerts are only logged.
    pub fn start(
        settings: &MailSettings,
        users: Arc<dyn UserAddresses>,
    ) -> Result<AlertService, MailError> {
        settings.check().map_err(MailError::Settings)?;
        let Some(mailer) = Mailer::new(settings)? else {
            tracing::info!(
                "mail is off (no mail.smtp_host): alerts are only logged, users get no notices"
            );
            return Ok(AlertService {
                alerts: Alerts::log_only(),
                stop: None,
                task: None,
            });
        };
        let operators = settings.operator_mailboxes().map_err(MailError::Settings)?;
        tracing::info!(
            host = settings.smtp_host.as_deref().unwrap_or_default(),
            port = settings.port(),
            operators = operators.len(),
            "mail is on: alerts to the operators (if any), notices to users with an address"
        );
        Ok(AlertService::start_with(
            Arc::new(mailer),
            operators,
            users,
            Timing::of(settings),
            settings.queue_size,
        ))
    }

    /// Starts the alert task sending through `sender` to `operators` and to the users' addresses
    /// in `users`. Without operators, their alerts are only logged.
    pub fn start_with(
        sender: Arc<dyn SendMail>,
        operators: Vec<Mailbox>,
        users: Arc<dyn UserAddresses>,
        timing: Timing,
        queue_size: usize,
    ) -> AlertService {
        let (alerts, queue) = Alerts::queued(queue_size, !operators.is_empty());
        let (stop, stopped) = oneshot::channel();
        let worker = Worker {
            sender,
            operators,
            users,
            timing,
            groups: Groups::new(timing.window, timing.min_interval),
            alerts: alerts.clone(),
        };
        let task = tokio::spawn(worker.run(queue, stopped));
        AlertService {
            alerts,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// The handle to raise alerts with.
    pub fn alerts(&self) -> Alerts {
        self.alerts.clone()
    }

    /// Sends what is pending, trying until `grace` has passed, then stops; what could not be
    /// sent by then is logged and given up.
    pub async fn shutdown(mut self, grace: Duration) {
        let (Some(stop), Some(task)) = (self.stop.take(), self.task.take()) else {
            return;
        };
        let _ = stop.send(Instant::now() + grace);
        // The task keeps to the deadline itself; the margin only covers its last log line.
        if tokio::time::timeout(grace + Duration::from_secs(1), task)
            .await
            .is_err()
        {
            tracing::error!("the alert task did not stop in time; pending alert mails are lost");
        }
    }
}

/// What became of a due batch.
enum Sent {
    /// Mailed.
    Mailed,
    /// Nobody to mail it to: the user has no address (any more), or was removed.
    Nobody,
}

type Sending = Pin<Box<dyn Future<Output = Result<Sent, MailError>> + Send>>;

struct Worker {
    sender: Arc<dyn SendMail>,
    operators: Vec<Mailbox>,
    users: Arc<dyn UserAddresses>,
    timing: Timing,
    groups: Groups,
    alerts: Alerts,
}

impl Worker {
    async fn run(mut self, mut queue: mpsc::Receiver<Alert>, mut stop: oneshot::Receiver<Instant>) {
        // One mail at a time; while it is on its way, alerts keep being grouped.
        let mut sending: Option<(Due, Sending)> = None;
        let deadline = loop {
            let idle = sending.is_none();
            let next = self.groups.next_due().map(Instant::from_std);
            let wake = next.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                biased;
                deadline = &mut stop => break deadline.unwrap_or_else(|_| Instant::now()),
                alert = queue.recv() => match alert {
                    Some(alert) => self.groups.add(&alert, Instant::now().into_std()),
                    None => break Instant::now(),
                },
                result = async { sending.as_mut().expect("guarded by the condition").1.as_mut().await }, if !idle => {
                    let (due, _) = sending.take().expect("guarded by the condition");
                    self.finished(due, result);
                }
                _ = tokio::time::sleep_until(wake), if idle && next.is_some() => {
                    if let Some(due) = self.groups.take_due(Instant::now().into_std()) {
                        let due = self.with_drops(due);
                        let send = self.send(&due);
                        sending = Some((due, send));
                    }
                }
            }
        };
        self.flush(queue, sending, deadline).await;
    }

    /// Sends the mail of `due` to its audience, reading a user's address first.
    fn send(&self, due: &Due) -> Sending {
        let (subject, body) = due.batch.compose(&due.audience, due.kind);
        let sender = self.sender.clone();
        let operators = self.operators.clone();
        let address = match &due.audience {
            Audience::Operators => None,
            Audience::User(name) => Some(self.users.address(name)),
            Audience::CourtContact(name) => Some(self.users.court_contact(name)),
        };
        Box::pin(async move {
            let to = match address {
                None => operators,
                Some(address) => address
                    .await
                    .map_err(MailError::Recipients)?
                    .into_iter()
                    .collect(),
            };
            if to.is_empty() {
                return Ok(Sent::Nobody);
            }
            sender.send(Mail { to, subject, body }).await?;
            Ok(Sent::Mailed)
        })
    }

    /// Takes the count of dropped alerts into the operators' batch about to be sent.
    fn with_drops(&self, mut due: Due) -> Due {
        if due.audience == Audience::Operators {
            due.batch.dropped += self.alerts.take_unreported_drops();
        }
        due
    }

    fn finished(&mut self, due: Due, result: Result<Sent, MailError>) {
        let now = Instant::now().into_std();
        match settle(&due, result) {
            Settled::Mailed => self.groups.sent(&due, now),
            // Not paced: the first notice after an address is set goes out with its window.
            Settled::NotMailed => {}
            Settled::Retry(error) => {
                let retry_in = self.timing.retry_in(due.failures);
                log_retry(&due, &error, retry_in);
                self.groups.failed(due, now, retry_in);
            }
        }
    }

    /// At shutdown: everything queued and pending goes out now, tried until `deadline`.
    async fn flush(
        mut self,
        mut queue: mpsc::Receiver<Alert>,
        sending: Option<(Due, Sending)>,
        deadline: Instant,
    ) {
        queue.close();
        while let Ok(alert) = queue.try_recv() {
            self.groups.add(&alert, Instant::now().into_std());
        }
        let events = self.groups.pending_events();
        if events > 0 || sending.is_some() {
            tracing::info!(events, "sending pending alert mails before stopping");
        }
        if let Some((due, send)) = sending {
            match tokio::time::timeout_at(deadline, send).await {
                Ok(result) => self.finished(due, result),
                Err(_) => self
                    .groups
                    .failed(due, Instant::now().into_std(), Duration::ZERO),
            }
        }
        for due in self.groups.take_all() {
            let mut due = self.with_drops(due);
            loop {
                let Ok(result) = tokio::time::timeout_at(deadline, self.send(&due)).await else {
                    give_up(&due, "shutdown grace time over");
                    break;
                };
                let Settled::Retry(error) = settle(&due, result) else {
                    break;
                };
                let pause = self.timing.retry_in(due.failures);
                due.failures += 1;
                if Instant::now() + pause >= deadline {
                    give_up(&due, shown(&due, &error));
                    break;
                }
                log_retry(&due, &error, pause);
                tokio::time::sleep(pause).await;
            }
        }
    }
}

/// What became of a try, for the pacing.
enum Settled {
    /// The mail went out.
    Mailed,
    /// Nothing went out and nothing will: nobody to mail, or a user's notice refused for good.
    NotMailed,
    /// To be tried again.
    Retry(MailError),
}

/// Logs the end of a try and says what follows. A user's notice that the mail server refused for
/// good is given up (their address, most likely; trying it for as long as the service runs would
/// hold up every later mail); the operators' mail is retried even then, because a refusal of it
/// is a configuration fault they must see in the log.
fn settle(due: &Due, result: Result<Sent, MailError>) -> Settled {
    match result {
        Ok(Sent::Mailed) => {
            tracing::info!(to = %due.audience, kind = %due.kind, events = due.batch.count, "alert mail sent");
            Settled::Mailed
        }
        Ok(Sent::Nobody) => {
            tracing::info!(to = %due.audience, kind = %due.kind, events = due.batch.count, "no address on the account; notice not mailed");
            Settled::NotMailed
        }
        Err(error @ MailError::Refused(_)) if due.audience != Audience::Operators => {
            tracing::warn!(
                to = %due.audience,
                kind = %due.kind,
                events = due.batch.count,
                error = error.without_reply(),
                "notice given up: check the address on the account"
            );
            Settled::NotMailed
        }
        Err(error) => Settled::Retry(error),
    }
}

/// The error as a log line may show it: a user's notice without the server's reply, which tends
/// to quote their address.
fn shown<'a>(due: &Due, error: &'a MailError) -> std::borrow::Cow<'a, str> {
    match due.audience {
        Audience::Operators => error.to_string().into(),
        Audience::User(_) | Audience::CourtContact(_) => error.without_reply().into(),
    }
}

fn log_retry(due: &Due, error: &MailError, retry_in: Duration) {
    tracing::warn!(
        to = %due.audience,
        kind = %due.kind,
        events = due.batch.count,
        failures = due.failures + 1,
        error = %shown(due, error),
        ?retry_in,
        "alert mail could not be sent; will retry"
    );
}

fn give_up(due: &Due, why: impl std::fmt::Display) {
    tracing::error!(
        to = %due.audience,
        kind = %due.kind,
        events = due.batch.count,
        error = %why,
        "alert mail given up at shutdown; the events are in this log"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::alerts::tests::report;
    use crate::mail::{AlertKind, NoAddresses};
    use futures::future::BoxFuture;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Fails the first `fail` sends, then records every mail.
    #[derive(Default)]
    struct Fake {
        fail: Mutex<u32>,
        /// An address the server refuses for good, quoting it like real servers do.
        refuse: Option<String>,
        sent: Mutex<Vec<Mail>>,
    }

    impl SendMail for Fake {
        fn send(&self, mail: Mail) -> futures::future::BoxFuture<'static, Result<(), MailError>> {
            let result = {
                let mut fail = self.fail.lock().unwrap();
                let refused = self
                    .refuse
                    .as_ref()
                    .filter(|r| mail.to.iter().any(|to| to.email.to_string() == **r));
                if let Some(address) = refused {
                    Err(MailError::Refused(format!(
                        "554 <{address}>: Relay access denied"
                    )))
                } else if *fail > 0 {
                    *fail -= 1;
                    Err(MailError::Smtp("connection refused".into()))
                } else {
                    self.sent.lock().unwrap().push(mail);
                    Ok(())
                }
            };
            Box::pin(async move { result })
        }
    }

    fn timing(window_ms: u64) -> Timing {
        Timing {
            window: Duration::from_millis(window_ms),
            min_interval: Duration::from_millis(window_ms),
            retry_max: Duration::from_secs(1),
        }
    }

    /// The alert task mailing `ops@example.org` through `fake`, with a window of `window_ms`;
    /// no user has an address.
    fn for_operators(fake: &Arc<Fake>, window_ms: u64) -> AlertService {
        let to = vec!["ops@example.org".parse().unwrap()];
        AlertService::start_with(
            fake.clone(),
            to,
            Arc::new(NoAddresses),
            timing(window_ms),
            16,
        )
    }

    async fn wait_for_mails(fake: &Fake, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while fake.sent.lock().unwrap().len() < count {
            assert!(Instant::now() < deadline, "no mail arrived");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn a_failed_mail_is_retried_and_merged_with_later_alerts() {
        let fake = Arc::new(Fake {
            fail: Mutex::new(1),
            ..Fake::default()
        });
        let service = for_operators(&fake, 20);
        let alerts = service.alerts();
        alerts.delivery_failed(&report("klinik", "first"), "refused");
        while *fake.fail.lock().unwrap() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        alerts.delivery_failed(&report("klinik", "second"), "refused");
        wait_for_mails(&fake, 1).await;
        service.shutdown(Duration::from_secs(5)).await;
        let sent = fake.sent.lock().unwrap();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0].subject, "[meldewerk] delivery failed: 2 events");
        assert!(sent[0].body.contains("report=first"));
        assert!(sent[0].body.contains("report=second"));
    }

    #[tokio::test]
    async fn shutdown_sends_what_is_pending() {
        let fake = Arc::new(Fake::default());
        let service = for_operators(&fake, 3_600_000);
        let alerts = service.alerts();
        alerts.alert(AlertKind::BreakerOpened, "breaker=xpersonenstand");
        alerts.actor_degraded("module:birthnotice", None);
        service.shutdown(Duration::from_secs(5)).await;
        let sent = fake.sent.lock().unwrap();
        let subjects: Vec<&str> = sent.iter().map(|m| m.subject.as_str()).collect();
        assert_eq!(
            subjects,
            [
                "[meldewerk] actor degraded: 1 event",
                "[meldewerk] circuit breaker opened: 1 event"
            ]
        );
    }

    #[tokio::test]
    async fn shutdown_gives_up_when_the_server_stays_down() {
        let fake = Arc::new(Fake {
            fail: Mutex::new(u32::MAX),
            ..Fake::default()
        });
        let service = for_operators(&fake, 3_600_000);
        service
            .alerts()
            .delivery_failed(&report("klinik", "x"), "refused");
        service.shutdown(Duration::from_millis(200)).await;
        assert!(fake.sent.lock().unwrap().is_empty());
    }

    /// Addresses by user; the first reads of a user in `broken` fail (a failing store).
    #[derive(Default)]
    struct Book {
        addresses: HashMap<String, String>,
        broken: Mutex<HashMap<String, u32>>,
        reads: Mutex<HashMap<String, u32>>,
    }

    impl UserAddresses for Book {
        fn address(&self, user: &str) -> BoxFuture<'static, Result<Option<Mailbox>, String>> {
            *self.reads.lock().unwrap().entry(user.into()).or_default() += 1;
            let result = {
                let mut broken = self.broken.lock().unwrap();
                if let Some(left @ 1..) = broken.get_mut(user) {
                    *left -= 1;
                    Err("store unavailable".to_string())
                } else {
                    Ok(self.addresses.get(user).map(|a| a.parse().unwrap()))
                }
            };
            Box::pin(async move { result })
        }
    }

    #[tokio::test]
    async fn a_users_notice_goes_to_their_address_only_and_waits_out_an_unreadable_store() {
        let fake = Arc::new(Fake::default());
        let book = Arc::new(Book {
            addresses: HashMap::from([("klinik".into(), "it@klinik.example".into())]),
            broken: Mutex::new(HashMap::from([("klinik".into(), 1)])),
            ..Book::default()
        });
        // No operators: only the users' notices are mailed.
        let service =
            AlertService::start_with(fake.clone(), Vec::new(), book.clone(), timing(20), 16);
        let alerts = service.alerts();
        alerts.delivery_failed(&report("klinik", "geb-1"), "refused");
        alerts.delivery_failed(&report("praxis", "geb-2"), "refused");
        alerts.actor_degraded("outbox", None);
        wait_for_mails(&fake, 1).await;
        service.shutdown(Duration::from_secs(5)).await;
        let reads = book.reads.lock().unwrap().clone();
        assert_eq!(reads["klinik"], 2, "read again after the store failed");
        assert_eq!(reads["praxis"], 1, "no address, nothing to retry");
        let sent = fake.sent.lock().unwrap();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0].to, ["it@klinik.example".parse().unwrap()]);
        assert!(sent[0]
            .body
            .starts_with("meldewerk notice for API user klinik:"));
        assert!(sent[0].body.contains("report=geb-1 "), "{}", sent[0].body);
        assert!(!sent[0].body.contains("geb-2"), "{}", sent[0].body);
    }

    #[tokio::test]
    async fn a_notice_refused_for_good_is_given_up_and_holds_up_nothing() {
        let fake = Arc::new(Fake {
            refuse: Some("it@klinik.example".into()),
            ..Fake::default()
        });
        let book = Arc::new(Book {
            addresses: HashMap::from([
                ("klinik".into(), "it@klinik.example".into()),
                ("praxis".into(), "edv@praxis.example".into()),
            ]),
            ..Book::default()
        });
        let to = vec!["ops@example.org".parse().unwrap()];
        let service = AlertService::start_with(fake.clone(), to, book.clone(), timing(20), 16);
        let alerts = service.alerts();
        alerts.delivery_failed(&report("klinik", "geb-1"), "refused");
        alerts.delivery_failed(&report("praxis", "geb-2"), "refused");
        wait_for_mails(&fake, 2).await;
        // Settled, not pending: a retry would try klinik's address again at shutdown.
        service.shutdown(Duration::from_secs(5)).await;
        assert_eq!(book.reads.lock().unwrap()["klinik"], 1);
        let sent = fake.sent.lock().unwrap();
        let recipients: Vec<String> = sent.iter().map(|m| m.to[0].email.to_string()).collect();
        assert_eq!(
            recipients,
            ["ops@example.org", "edv@praxis.example"],
            "operators first"
        );
    }

    #[test]
    fn retries_double_up_to_the_maximum() {
        let t = timing(10);
        assert_eq!(t.retry_in(0), Duration::from_secs(1));
        assert_eq!(t.retry_in(5), Duration::from_secs(1));
        let t = Timing {
            retry_max: Duration::from_secs(300),
            ..t
        };
        assert_eq!(t.retry_in(1), Duration::from_secs(2));
        assert_eq!(t.retry_in(3), Duration::from_secs(8));
        assert_eq!(t.retry_in(40), Duration::from_secs(300));
    }
}
