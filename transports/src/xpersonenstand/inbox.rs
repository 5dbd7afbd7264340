//! The portal's inbox: the office decides on the messages it received as their acknowledgement
//! delays run out, and drops the acknowledgements into an inbox the sender fetches in batches.
//!
//! Undecided messages wait in a [`Schedule`] in memory, ordered by when they are due, so that a
//! fetch with nothing due costs a look at the first entry, whatever the number of messages
//! waiting. The schedule is rebuilt from the journal's `undecided` group at start-up (only those
//! records are read) and planned again when the script or the configured delay changes. Decided
//! messages are settled into the journal's feed in one batch per fetch; the feed position is the
//! cursor the sender keeps.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, TimeDelta, Utc};

use super::records::{ReceivedMessage, RecordedOutcome, UNDECIDED};
use super::{simulated_failure, Inner, SIMULATED_FAILURE};
use crate::script::AckEffect;
use crate::{AckBatch, Acknowledgement, Outcome, Receipt, TransportError};

/// Most acknowledgements one fetch returns, whatever the caller asks for.
pub const MAX_BATCH: usize = 1000;

/// Most messages decided in one fetch: bounds the batch written to the journal, and so how long
/// one fetch holds the office's lock; the rest is decided by the next fetch.
const MAX_DECISIONS: usize = 1000;

/// A message waiting for its decision.
#[derive(Debug, Clone)]
struct Waiting {
    module: String,
    report_id: String,
    transport_ref: String,
    received_at: DateTime<Utc>,
    /// When the office decides (milliseconds since the epoch); `None`: not while the script
    /// holds the acknowledgement back.
    due: Option<i64>,
}

/// The undecided messages, by the time they are due.
#[derive(Debug, Default)]
pub(super) struct Schedule {
    waiting: HashMap<u64, Waiting>,
    due: BTreeSet<(i64, u64)>,
    /// Script generation and configured delay the plan was made under.
    planned_under: Option<(u64, u64)>,
}

impl Schedule {
    /// The schedule of the journal's undecided messages (read at start-up).
    pub(super) fn from_undecided(
        messages: impl IntoIterator<Item = (u64, ReceivedMessage)>,
    ) -> Self {
        let mut schedule = Schedule::default();
        for (seq, message) in messages {
            if message.outcome.is_none() {
                schedule.waiting.insert(
                    seq,
                    Waiting {
                        module: message.delivered.module,
                        report_id: message.delivered.report_id,
                        transport_ref: message.transport_ref,
                        received_at: message.delivered.received_at,
                        due: None,
                    },
                );
            }
        }
        // Planned at the first fetch, when script and configuration are known.
        schedule
    }

    /// Number of messages waiting for their decision.
    pub(super) fn len(&self) -> usize {
        self.waiting.len()
    }
}

impl Inner {
    /// Puts a freshly accepted message into the schedule.
    pub(super) fn schedule(&self, seq: u64, message: &ReceivedMessage) {
        let waiting = Waiting {
            module: message.delivered.module.clone(),
            report_id: message.delivered.report_id.clone(),
            transport_ref: message.transport_ref.clone(),
            received_at: message.delivered.received_at,
            due: None,
        };
        let delay_ms = self.config().ack_delay_ms;
        let mut schedule = self.lock_schedule();
        let due = self.due_time(&waiting, delay_ms);
        plan(&mut schedule, seq, waiting, due);
    }

    /// When the office decides on `waiting`, as script and configuration say now.
    fn due_time(&self, waiting: &Waiting, configured_delay_ms: u64) -> Option<i64> {
        let delay_ms = match self.script.ack_effect(
            &waiting.module,
            &waiting.report_id,
            &waiting.transport_ref,
        ) {
            Some(AckEffect::Lost) => return None,
            Some(AckEffect::Delay(delay_ms)) => delay_ms,
            None => configured_delay_ms,
        };
        // An unrepresentably long delay means "never".
        i64::try_from(delay_ms)
            .ok()
            .and_then(TimeDelta::try_milliseconds)
            .and_then(|delay| waiting.received_at.checked_add_signed(delay))
            .map(|due| due.timestamp_millis())
    }

    /// Decides every message that is due, settles the decisions into the feed, and returns the
    /// acknowledgements after `cursor`.
    pub(super) fn acknowledgements(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<AckBatch, TransportError> {
        let from = match cursor {
            None => 0,
            Some(text) => text.parse::<u64>().map_err(|_| unknown_cursor(text))?,
        };
        self.decide_due()?;
        if from > self.journal.next_feed_position()? {
            return Err(unknown_cursor(cursor.unwrap_or_default()));
        }
        let limit = limit.clamp(1, MAX_BATCH);
        // One more than the batch, to learn whether more follow.
        let mut settled = self.journal.feed(from, limit + 1)?;
        let more = settled.len() > limit;
        settled.truncate(limit);
        let next = settled.last().map_or(from, |(position, _, _)| position + 1);
        let acknowledgements = settled
            .into_iter()
            .filter_map(|(_, _, message)| {
                let message = message.with_receipt();
                let outcome = match message.outcome? {
                    RecordedOutcome::Acknowledged {
                        receipt_pdf,
                        portal,
                        ..
                    } => Outcome::Success {
                        receipt: Receipt::pdf(receipt_pdf),
                        portal: Some(portal),
                    },
                    RecordedOutcome::Rejected { reason, .. } => Outcome::Failure { reason },
                };
                Some(Acknowledgement {
                    message_uuid: message.delivered.message_uuid,
                    transport_ref: message.transport_ref,
                    outcome,
                })
            })
            .collect();
        Ok(AckBatch {
            acknowledgements,
            cursor: Some(next.to_string()),
            more,
        })
    }

    /// Decides the messages whose time has come (at most [`MAX_DECISIONS`]) and settles them in
    /// one journal batch.
    fn decide_due(&self) -> Result<(), TransportError> {
        let config = self.config();
        let now = Utc::now();
        let due: Vec<u64> = {
            let mut schedule = self.lock_schedule();
            let under = (self.script.generation(), config.ack_delay_ms);
            if schedule.planned_under != Some(under) {
                self.replan(&mut schedule, config.ack_delay_ms);
                schedule.planned_under = Some(under);
            }
            let now_ms = now.timestamp_millis();
            schedule
                .due
                .iter()
                .take_while(|(due, _)| *due <= now_ms)
                .take(MAX_DECISIONS)
                .map(|(_, seq)| *seq)
                .collect()
        };
        if due.is_empty() {
            return Ok(());
        }
        // Only now the journal's lock: a fetch with nothing due never waits for a submit. A
        // message another fetch decided meanwhile has its outcome and is skipped below.
        let _write = self.lock_write();
        let mut decided = Vec::with_capacity(due.len());
        for &seq in &due {
            let Some(mut message) = self.journal.get(seq)? else {
                continue;
            };
            if message.outcome.is_none() {
                message.outcome = Some(self.decide(&message, &config, now));
                decided.push((seq, message));
            }
        }
        self.journal.settle(&decided, &[(UNDECIDED, "")])?;
        let mut schedule = self.lock_schedule();
        for seq in due {
            if let Some(waiting) = schedule.waiting.remove(&seq) {
                if let Some(at) = waiting.due {
                    schedule.due.remove(&(at, seq));
                }
                self.script.decided(&waiting.transport_ref);
            }
        }
        for (_, message) in &decided {
            tracing::info!(
                report_id = %message.delivered.report_id,
                transport_ref = %message.transport_ref,
                acknowledged = matches!(message.outcome, Some(RecordedOutcome::Acknowledged { .. })),
                "simulated Standesamt: outcome decided"
            );
        }
        Ok(())
    }

    /// Plans every waiting message again (the script or the configured delay changed).
    fn replan(&self, schedule: &mut Schedule, configured_delay_ms: u64) {
        schedule.due.clear();
        let waiting: Vec<(u64, Waiting)> = schedule.waiting.drain().collect();
        for (seq, waiting) in waiting {
            let due = self.due_time(&waiting, configured_delay_ms);
            plan(schedule, seq, waiting, due);
        }
    }

    fn decide(
        &self,
        message: &ReceivedMessage,
        config: &super::SimulatorConfig,
        now: DateTime<Utc>,
    ) -> RecordedOutcome {
        if let Some(reason) = &message.refusal {
            return RecordedOutcome::Rejected {
                decided_at: now,
                reason: reason.clone(),
            };
        }
        if simulated_failure(
            &message.delivered.idempotency_key,
            config.effective_failure_rate(),
        ) {
            return RecordedOutcome::Rejected {
                decided_at: now,
                reason: SIMULATED_FAILURE.to_owned(),
            };
        }
        RecordedOutcome::Acknowledged {
            decided_at: now,
            receipt_pdf: Vec::new(),
            authority: Some(config.authority_name.clone()),
            portal: config.portal.clone(),
        }
    }
}

/// Files `waiting` under its due time (or nowhere, when it has none).
fn plan(schedule: &mut Schedule, seq: u64, mut waiting: Waiting, due: Option<i64>) {
    if let Some(old) = waiting.due.take() {
        schedule.due.remove(&(old, seq));
    }
    waiting.due = due;
    if let Some(at) = due {
        schedule.due.insert((at, seq));
    }
    schedule.waiting.insert(seq, waiting);
}

fn unknown_cursor(cursor: &str) -> TransportError {
    TransportError::UnknownCursor(format!(
        "{:?} is not a position in this office's feed",
        cursor.chars().take(40).collect::<String>()
    ))
}
