//! Grouping: alerts of one kind for one audience (the operators, or one API user) are collected
//! into a batch that becomes one mail when its window closes, no sooner than `alert_min_interval`
//! after the previous mail of that kind to that audience. A mail that could not be sent goes back
//! into its batch, so an outage of the mail server ends in one mail per kind and audience, not a
//! backlog of them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};

use super::alerts::{Alert, AlertKind, Audience};

/// Events listed in one mail; the rest are counted.
pub const LINES_PER_MAIL: usize = 20;

/// The events of one kind that go into one mail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Events in the batch.
    pub count: u64,
    /// The first [`LINES_PER_MAIL`] events, oldest first, each `time detail`.
    pub lines: Vec<String>,
    /// When the first and the last event were raised.
    pub first: DateTime<Utc>,
    /// When the last event was raised.
    pub last: DateTime<Utc>,
    /// Alerts dropped on a full queue that this mail reports.
    pub dropped: u64,
}

impl Batch {
    fn new(alert: &Alert) -> Batch {
        let mut batch = Batch {
            count: 0,
            lines: Vec::new(),
            first: alert.at,
            last: alert.at,
            dropped: 0,
        };
        batch.add(alert);
        batch
    }

    fn add(&mut self, alert: &Alert) {
        self.count += 1;
        self.first = self.first.min(alert.at);
        self.last = self.last.max(alert.at);
        if self.lines.len() < LINES_PER_MAIL {
            self.lines
                .push(format!("{} {}", timestamp(alert.at), alert.detail));
        }
    }

    /// Puts `older` (a mail that was not sent) in front of this batch's events.
    fn absorb_older(&mut self, older: Batch) {
        let mut lines = older.lines;
        lines.extend(std::mem::take(&mut self.lines));
        lines.truncate(LINES_PER_MAIL);
        self.lines = lines;
        self.count += older.count;
        self.first = self.first.min(older.first);
        self.last = self.last.max(older.last);
        self.dropped += older.dropped;
    }

    /// Subject and body of the mail for this batch to `audience`.
    pub fn compose(&self, audience: &Audience, kind: AlertKind) -> (String, String) {
        let events = if self.count == 1 { "event" } else { "events" };
        let subject = format!("[meldewerk] {kind}: {} {events}", self.count);
        let (opening, explain, footer) = match audience {
            Audience::Operators => (
                "meldewerk alert".to_string(),
                kind.explanation(),
                "Health of every actor: GET /admin/api/v1/actors (operator API). Details are in \
                 the service's log.",
            ),
            Audience::CourtContact(name) => (
                format!("meldewerk: court messages for API user {name}"),
                kind.explanation_for_users(),
                "You get these mails because this address is registered for court messages \
                 (PUT /api/guardianship/v1/contact); DELETE /api/guardianship/v1/contact \
                 removes it.",
            ),
            Audience::User(name) => (
                format!("meldewerk notice for API user {name}"),
                kind.explanation_for_users(),
                "You get these notices because an address is set on your account; the operator \
                 of this service removes it on request.",
            ),
        };
        let mut body = format!(
            "{opening}: {kind}, {count} {events} from {first} to {last}.\n{explain}\n\n",
            count = self.count,
            first = timestamp(self.first),
            last = timestamp(self.last),
        );
        for line in &self.lines {
            body.push_str(line);
            body.push('\n');
        }
        let unlisted = self.count.saturating_sub(self.lines.len() as u64);
        if unlisted > 0 {
            body.push_str(&format!("... and {unlisted} more not listed.\n"));
        }
        if self.dropped > 0 {
            body.push_str(&format!(
                "\n{} further alerts were dropped because the alert queue was full.\n",
                self.dropped
            ));
        }
        body.push('\n');
        body.push_str(footer);
        body.push('\n');
        (subject, body)
    }
}

fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A batch waiting for its mail.
#[derive(Debug)]
struct Pending {
    batch: Batch,
    due: Instant,
    /// Failed sends of this batch in a row.
    failures: u32,
}

/// What a batch gathers: one kind of event for one audience.
type Topic = (Audience, AlertKind);

/// A batch taken out to be sent.
#[derive(Debug)]
pub struct Due {
    /// Who it is for.
    pub audience: Audience,
    /// Its kind.
    pub kind: AlertKind,
    /// Its events.
    pub batch: Batch,
    /// Failed sends before this one.
    pub failures: u32,
}

impl Due {
    fn of((audience, kind): Topic, pending: Pending) -> Due {
        Due {
            audience,
            kind,
            batch: pending.batch,
            failures: pending.failures,
        }
    }
}

/// The batches of every kind and audience, and when each is due.
#[derive(Debug)]
pub struct Groups {
    window: Duration,
    min_interval: Duration,
    pending: BTreeMap<Topic, Pending>,
    /// When the last mail of each topic went out. Pruned of topics quiet for longer than the
    /// minimum interval, so that many users' notices do not accumulate here.
    last_sent: BTreeMap<Topic, Instant>,
}

impl Groups {
    /// Groups alerts over `window`, at most one mail per kind every `min_interval`.
    pub fn new(window: Duration, min_interval: Duration) -> Groups {
        Groups {
            window,
            min_interval,
            pending: BTreeMap::new(),
            last_sent: BTreeMap::new(),
        }
    }

    /// Adds an alert: into the open batch of its topic, or a new one due after the window.
    pub fn add(&mut self, alert: &Alert, now: Instant) {
        let topic = (alert.audience.clone(), alert.kind);
        if let Some(pending) = self.pending.get_mut(&topic) {
            pending.batch.add(alert);
            return;
        }
        let mut due = now + self.window;
        if let Some(sent) = self.last_sent.get(&topic) {
            due = due.max(*sent + self.min_interval);
        }
        let batch = Batch::new(alert);
        let pending = Pending {
            batch,
            due,
            failures: 0,
        };
        self.pending.insert(topic, pending);
    }

    /// When the next batch is due, if any is pending.
    pub fn next_due(&self) -> Option<Instant> {
        self.pending.values().map(|p| p.due).min()
    }

    /// Takes the batch due first, if it is due at `now`; the operators' batches before users'.
    pub fn take_due(&mut self, now: Instant) -> Option<Due> {
        let (topic, _) = self
            .pending
            .iter()
            .filter(|(_, p)| p.due <= now)
            .min_by_key(|((audience, _), p)| (*audience != Audience::Operators, p.due))?;
        let topic = topic.clone();
        let pending = self.pending.remove(&topic)?;
        Some(Due::of(topic, pending))
    }

    /// Takes every pending batch (at shutdown).
    pub fn take_all(&mut self) -> Vec<Due> {
        std::mem::take(&mut self.pending)
            .into_iter()
            .map(|(topic, p)| Due::of(topic, p))
            .collect()
    }

    /// The mail of `due`'s topic went out at `now` (or had nobody to go to).
    pub fn sent(&mut self, due: &Due, now: Instant) {
        let min_interval = self.min_interval;
        self.last_sent
            .retain(|_, sent| now.saturating_duration_since(*sent) < min_interval);
        self.last_sent.insert((due.audience.clone(), due.kind), now);
    }

    /// The mail could not be sent: its events go back in front of whatever arrived meanwhile,
    /// due again after `retry_in`.
    pub fn failed(&mut self, due: Due, now: Instant, retry_in: Duration) {
        let Due {
            audience,
            kind,
            mut batch,
            failures,
        } = due;
        let topic = (audience, kind);
        if let Some(newer) = self.pending.remove(&topic) {
            let mut merged = newer.batch;
            merged.absorb_older(batch);
            batch = merged;
        }
        let pending = Pending {
            batch,
            due: now + retry_in,
            failures: failures + 1,
        };
        self.pending.insert(topic, pending);
    }

    /// Events in every pending batch.
    pub fn pending_events(&self) -> u64 {
        self.pending.values().map(|p| p.batch.count).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alert(kind: AlertKind, detail: &str) -> Alert {
        Alert {
            audience: Audience::Operators,
            kind,
            at: Utc::now(),
            detail: detail.into(),
        }
    }

    const WINDOW: Duration = Duration::from_secs(60);
    const INTERVAL: Duration = Duration::from_secs(900);

    #[test]
    fn alerts_of_a_kind_within_the_window_make_one_mail() {
        let mut groups = Groups::new(WINDOW, INTERVAL);
        let start = Instant::now();
        for i in 0..10 {
            groups.add(
                &alert(AlertKind::DeliveryFailed, &format!("report=r{i}")),
                start,
            );
        }
        groups.add(&alert(AlertKind::ActorDegraded, "actor=outbox"), start);
        assert_eq!(groups.next_due(), Some(start + WINDOW));
        assert!(groups.take_due(start + WINDOW / 2).is_none());
        let first = groups.take_due(start + WINDOW).unwrap();
        let second = groups.take_due(start + WINDOW).unwrap();
        assert!(groups.take_due(start + WINDOW).is_none());
        let failed = [first, second]
            .into_iter()
            .find(|d| d.kind == AlertKind::DeliveryFailed)
            .unwrap();
        assert_eq!(failed.batch.count, 10);
        let (subject, body) = failed.batch.compose(&failed.audience, failed.kind);
        assert_eq!(subject, "[meldewerk] delivery failed: 10 events");
        for i in 0..10 {
            assert!(body.contains(&format!("report=r{i}\n")), "{body}");
        }
        assert!(!body.contains("more not listed"));
    }

    #[test]
    fn a_mail_lists_the_first_lines_and_counts_the_rest() {
        let mut groups = Groups::new(WINDOW, INTERVAL);
        let now = Instant::now();
        for i in 0..(LINES_PER_MAIL + 5) {
            groups.add(
                &alert(AlertKind::DeliveryFailed, &format!("report=r{i}")),
                now,
            );
        }
        let due = groups.take_due(now + WINDOW).unwrap();
        let (_, body) = due.batch.compose(&due.audience, due.kind);
        assert!(body.contains("report=r0\n"));
        assert!(!body.contains(&format!("report=r{LINES_PER_MAIL}\n")));
        assert!(body.contains("... and 5 more not listed."), "{body}");
    }

    #[test]
    fn the_next_mail_of_a_kind_waits_for_the_minimum_interval() {
        let mut groups = Groups::new(WINDOW, INTERVAL);
        let now = Instant::now();
        groups.add(&alert(AlertKind::DeliveryFailed, "a"), now);
        let due = groups.take_due(now + WINDOW).unwrap();
        assert_eq!(due.batch.count, 1);
        groups.sent(&due, now + WINDOW);
        groups.add(&alert(AlertKind::DeliveryFailed, "b"), now + WINDOW);
        groups.add(&alert(AlertKind::ActorDegraded, "c"), now + WINDOW);
        assert_eq!(groups.next_due(), Some(now + WINDOW + WINDOW));
        assert!(groups
            .take_due(now + WINDOW * 3)
            .is_some_and(|d| d.kind == AlertKind::ActorDegraded));
        assert!(groups.take_due(now + WINDOW * 3).is_none());
        assert!(groups.take_due(now + WINDOW + INTERVAL).is_some());
    }

    #[test]
    fn a_failed_mail_merges_with_what_came_meanwhile() {
        let mut groups = Groups::new(WINDOW, INTERVAL);
        let now = Instant::now();
        groups.add(&alert(AlertKind::DeliveryFailed, "old"), now);
        let due = groups.take_due(now + WINDOW).unwrap();
        groups.add(&alert(AlertKind::DeliveryFailed, "new"), now + WINDOW);
        let retry = Duration::from_secs(2);
        groups.failed(due, now + WINDOW, retry);
        assert_eq!(groups.pending_events(), 2);
        assert_eq!(groups.next_due(), Some(now + WINDOW + retry));
        let again = groups.take_due(now + WINDOW + retry).unwrap();
        assert_eq!(again.failures, 1);
        assert_eq!(again.batch.count, 2);
        assert!(again.batch.lines[0].ends_with(" old"));
        assert!(again.batch.lines[1].ends_with(" new"));
        assert!(groups.take_all().is_empty());
    }

    #[test]
    fn each_user_gets_batches_of_their_own_and_a_mail_meant_for_them() {
        let mut groups = Groups::new(WINDOW, INTERVAL);
        let now = Instant::now();
        let for_user = |user: &str, detail: &str| Alert {
            audience: Audience::User(user.into()),
            ..alert(AlertKind::DeliveryFailed, detail)
        };
        groups.add(&alert(AlertKind::DeliveryFailed, "report=a"), now);
        groups.add(&for_user("klinik", "report=a"), now);
        groups.add(&for_user("klinik", "report=b"), now);
        groups.add(&for_user("praxis", "report=c"), now);
        let mut dues = std::iter::from_fn(|| groups.take_due(now + WINDOW)).collect::<Vec<_>>();
        dues.sort_by(|a, b| a.audience.cmp(&b.audience));
        let counts: Vec<(Audience, u64)> = dues
            .iter()
            .map(|d| (d.audience.clone(), d.batch.count))
            .collect();
        assert_eq!(
            counts,
            [
                (Audience::Operators, 1),
                (Audience::User("klinik".into()), 2),
                (Audience::User("praxis".into()), 1)
            ]
        );
        let (subject, body) = dues[1].batch.compose(&dues[1].audience, dues[1].kind);
        assert_eq!(subject, "[meldewerk] delivery failed: 2 events");
        assert!(body.starts_with("meldewerk notice for API user klinik: delivery failed, 2 events"));
        assert!(
            body.contains("report=a\n") && body.contains("report=b\n"),
            "{body}"
        );
        assert!(
            !body.contains("/admin/"),
            "no operator pointers for a user: {body}"
        );
        let (_, body) = dues[0].batch.compose(&dues[0].audience, dues[0].kind);
        assert!(body.contains("GET /admin/api/v1/actors"), "{body}");

        // The pause after a mail holds per audience: klinik waits, praxis does not.
        groups.sent(&dues[1], now + WINDOW);
        groups.add(&for_user("klinik", "report=d"), now + WINDOW);
        groups.add(&for_user("praxis", "report=e"), now + WINDOW);
        let next = groups.take_due(now + WINDOW * 2).unwrap();
        assert_eq!(next.audience, Audience::User("praxis".into()));
        assert!(groups.take_due(now + WINDOW * 2).is_none());
        assert!(groups.take_due(now + WINDOW + INTERVAL).is_some());
    }

    #[test]
    fn of_the_batches_due_the_operators_go_first() {
        let mut groups = Groups::new(WINDOW, INTERVAL);
        let now = Instant::now();
        let for_user = Alert {
            audience: Audience::User("klinik".into()),
            ..alert(AlertKind::DeliveryFailed, "report=a")
        };
        // The user's batch is due first, at one window; the operators' half a window later.
        groups.add(&for_user, now);
        groups.add(
            &alert(AlertKind::DeliveryFailed, "report=a"),
            now + WINDOW / 2,
        );
        let later = now + WINDOW * 2;
        let first = groups.take_due(later).unwrap();
        assert_eq!(first.audience, Audience::Operators);
        let second = groups.take_due(later).unwrap();
        assert_eq!(second.audience, Audience::User("klinik".into()));
    }
}
