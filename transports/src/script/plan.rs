//! The script's decision for one delivery, and how a simulator carries it out.

use std::time::Duration;

/// How the simulator replies to one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Go on and accept it (the simulator's own checks, such as the signature, still apply).
    Accept,
    /// Answer with a transient fault with this text, after `wait`.
    Transient {
        /// Text of the fault.
        message: String,
        /// How long to hang before answering (a timeout).
        wait: Duration,
    },
    /// Refuse for good with this reason.
    Reject(String),
    /// Panic with this text instead of answering.
    Panic(String),
    /// Go on, and answer the fetched mailbox message cut short (only for a fetch).
    Truncated,
}

/// The script's decision for one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// How long to hold the submit before anything else (zero for a panic, which comes at once).
    pub latency: Duration,
    /// How to reply.
    pub reply: Reply,
}

impl Plan {
    /// Carries the plan out for one delivery of `report_id` to `authority` (named in the log,
    /// e.g. `simulated Standesamt`): waits its latency, then `Ok(())` to go on with the
    /// simulator's own checks, or the scripted answer (a transient fault, a refusal). A panic
    /// comes at once, before anything is recorded, as a bug in a transport would: what the
    /// engine's supervision is there for (with no wait first: the engine's restart interrupts
    /// the deliveries in flight, and one interrupted before its panic would have used up the
    /// rule for nothing).
    pub(crate) async fn carry_out(
        self,
        authority: &str,
        report_id: &str,
    ) -> Result<(), Result<crate::Answer, crate::TransportError>> {
        match self.reply {
            Reply::Accept | Reply::Truncated => {
                tokio::time::sleep(self.latency).await;
                Ok(())
            }
            Reply::Transient { message, wait } => {
                tokio::time::sleep(self.latency.saturating_add(wait)).await;
                tracing::info!(%report_id, %message, "{authority}: scripted transient fault");
                Err(Err(crate::TransportError::Transient(message)))
            }
            Reply::Reject(reason) => {
                tokio::time::sleep(self.latency).await;
                tracing::info!(%report_id, %reason, "{authority}: scripted rejection");
                Err(Ok(crate::Answer::Finished(crate::Finished::refused(
                    reason,
                ))))
            }
            Reply::Panic(message) => {
                tracing::info!(%report_id, %message, "{authority}: scripted panic");
                panic!("{message}");
            }
        }
    }
}

impl super::Scripted {
    /// How a simulator that answers at once (`authority` names it in the log) answers
    /// `delivery`: as its script says, else with what `decide` decided and recorded, after the
    /// configured `latency_ms` or the script's latency.
    ///
    /// A repeat of a key registered in `journal` (under its index `by_key`) is not a delivery:
    /// the script is not asked and nothing of it is used up; `decide` answers it as the first
    /// time, after the configured latency. For a new delivery a scripted fault or refusal is
    /// the answer, and nothing is decided (a scripted panic comes at once). An accepting plan's
    /// latency comes after the record, so that a sender who stops waiting and sends again meets
    /// its repeat, as at a real system.
    pub(crate) async fn answer_at_once<T, F>(
        &self,
        authority: &str,
        delivery: crate::Delivery,
        (journal, by_key): (&meldewerk_storage::Journal<T>, &str),
        latency_ms: u64,
        decide: impl FnOnce(crate::Delivery) -> F,
    ) -> Result<crate::Answer, crate::TransportError>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
        F: std::future::Future<Output = Result<crate::Finished, crate::TransportError>>,
    {
        let configured = Duration::from_millis(latency_ms);
        // Read where it is asked: a lookup in the journal's index waits for no disk write.
        let answer_after = match journal.contains(by_key, &delivery.idempotency_key)? {
            true => configured,
            false => {
                let plan = self.plan(
                    &delivery.module,
                    &delivery.report_id,
                    &delivery.idempotency_key,
                    latency_ms,
                );
                match plan.reply {
                    Reply::Accept => plan.latency,
                    _ => match plan.carry_out(authority, &delivery.report_id).await {
                        Ok(()) => configured,
                        Err(answer) => return answer,
                    },
                }
            }
        };
        let finished = decide(delivery).await?;
        tokio::time::sleep(answer_after).await;
        Ok(crate::Answer::Finished(finished))
    }
}

/// A transient fault with `message`, answered after `wait_ms`.
pub(super) fn transient(message: String, wait_ms: u64) -> Reply {
    Reply::Transient {
        message,
        wait: Duration::from_millis(wait_ms),
    }
}

/// A number in `0.0..1.0` derived from the idempotency key, the attempt and what it is for: the
/// same deliveries meet the same faults and latencies in every run.
pub(super) fn unit_draw(idempotency_key: &str, attempt: u32, salt: &str) -> f64 {
    let input = format!("{salt}\0{idempotency_key}\0{attempt}");
    let hash = ring::digest::digest(&ring::digest::SHA256, input.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash.as_ref()[..8]);
    // The top 53 bits fit a double exactly, so the result is strictly below 1.
    (u64::from_be_bytes(first) >> 11) as f64 / (1u64 << 53) as f64
}
