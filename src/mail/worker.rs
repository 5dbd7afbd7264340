//! The alert task: empties the queue into per-kind batches, mails each batch when it is due,
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

use super::alerts::{Alert, Alerts};
use super::batch::{Due, Groups};
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
    /// Least time between two mails of one kind.
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
    /// Starts the alert task for `settings` (inside a tokio runtime); with mail off, a handle
    /// whose alerts are only logged.
    pub fn start(settings: &MailSettings) -> Result<AlertService, MailError> {
        settings.check().map_err(MailError::Settings)?;
        let mailer = Mailer::new(settings)?;
        let (Some(mailer), true) = (mailer, settings.alerts_enabled()) else {
            tracing::info!("mail alerts are off (no mail.smtp_host or no mail.operators); alerts are only logged");
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
            "mail alerts are on"
        );
        Ok(AlertService::start_with(
            Arc::new(mailer),
            operators,
            Timing::of(settings),
            settings.queue_size,
        ))
    }

    /// Starts the alert task sending through `sender` to `operators`.
    pub fn start_with(
        sender: Arc<dyn SendMail>,
        operators: Vec<Mailbox>,
        timing: Timing,
        queue_size: usize,
    ) -> AlertService {
        let (alerts, queue) = Alerts::queued(queue_size);
        let (stop, stopped) = oneshot::channel();
        let worker = Worker {
            sender,
            operators,
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

type Sending = Pin<Box<dyn Future<Output = Result<(), MailError>> + Send>>;

struct Worker {
    sender: Arc<dyn SendMail>,
    operators: Vec<Mailbox>,
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
                        let mail = self.mail(&due);
                        sending = Some((due, self.sender.send(mail)));
                    }
                }
            }
        };
        self.flush(queue, sending, deadline).await;
    }

    fn mail(&self, due: &Due) -> Mail {
        let (subject, body) = due.batch.compose(due.kind);
        Mail {
            to: self.operators.clone(),
            subject,
            body,
        }
    }

    /// Takes the count of dropped alerts into the batch about to be sent.
    fn with_drops(&self, mut due: Due) -> Due {
        due.batch.dropped += self.alerts.take_unreported_drops();
        due
    }

    fn finished(&mut self, due: Due, result: Result<(), MailError>) {
        let now = Instant::now().into_std();
        match result {
            Ok(()) => {
                tracing::info!(kind = %due.kind, events = due.batch.count, "alert mail sent");
                self.groups.sent(due.kind, now);
            }
            Err(error) => {
                let retry_in = self.timing.retry_in(due.failures);
                tracing::warn!(
                    kind = %due.kind,
                    events = due.batch.count,
                    failures = due.failures + 1,
                    %error,
                    ?retry_in,
                    "alert mail could not be sent; will retry"
                );
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
            let due = self.with_drops(due);
            let mut failures = 0;
            loop {
                let mail = self.mail(&due);
                match tokio::time::timeout_at(deadline, self.sender.send(mail)).await {
                    Ok(Ok(())) => {
                        tracing::info!(kind = %due.kind, events = due.batch.count, "alert mail sent");
                        break;
                    }
                    Ok(Err(error)) => {
                        failures += 1;
                        let pause = self.timing.retry_in(failures);
                        if Instant::now() + pause >= deadline {
                            self.give_up(&due, &error.to_string());
                            break;
                        }
                        tracing::warn!(kind = %due.kind, %error, "alert mail could not be sent; will retry");
                        tokio::time::sleep(pause).await;
                    }
                    Err(_) => {
                        self.give_up(&due, "shutdown grace time over");
                        break;
                    }
                }
            }
        }
    }

    fn give_up(&self, due: &Due, why: &str) {
        tracing::error!(
            kind = %due.kind,
            events = due.batch.count,
            error = why,
            "alert mail given up at shutdown; the events are in this log"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::AlertKind;
    use std::sync::Mutex;

    /// Fails the first `fail` sends, then records every mail.
    #[derive(Default)]
    struct Fake {
        fail: Mutex<u32>,
        sent: Mutex<Vec<Mail>>,
    }

    impl SendMail for Fake {
        fn send(&self, mail: Mail) -> futures::future::BoxFuture<'static, Result<(), MailError>> {
            let result = {
                let mut fail = self.fail.lock().unwrap();
                if *fail > 0 {
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
        let to = vec!["ops@example.org".parse().unwrap()];
        let service = AlertService::start_with(fake.clone(), to, timing(20), 16);
        let alerts = service.alerts();
        alerts.delivery_failed("birthnotice", "first", "refused");
        while *fake.fail.lock().unwrap() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        alerts.delivery_failed("birthnotice", "second", "refused");
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
        let to = vec!["ops@example.org".parse().unwrap()];
        let service = AlertService::start_with(fake.clone(), to, timing(3_600_000), 16);
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
        let to = vec!["ops@example.org".parse().unwrap()];
        let service = AlertService::start_with(fake.clone(), to, timing(3_600_000), 16);
        service
            .alerts()
            .delivery_failed("birthnotice", "x", "refused");
        service.shutdown(Duration::from_millis(200)).await;
        assert!(fake.sent.lock().unwrap().is_empty());
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
