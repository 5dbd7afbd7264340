//! Run-time scripting of a simulated authority, for testers: latency, transient faults, timeouts,
//! connection resets, panics, rejections, delayed or lost acknowledgements, for the next N
//! deliveries, for one report, or standing.
//!
//! A [`Script`] is a list of [`Rule`]s plus a standing [`Script::transient_rate`]. A simulator
//! holds it in a [`Scripted`] cell and asks it twice: once per delivery ([`Scripted::plan`], on
//! `submit`, before anything is recorded) and, for each accepted message, when it plans the
//! message's acknowledgement ([`Scripted::ack_effect`]; again whenever the script changes, see
//! [`Scripted::generation`]). The simulator's configuration stays the standing default: a
//! delivery no rule speaks about behaves exactly as configured.
//!
//! Every simulator uses this one module, so a rule means the same to the civil registry office
//! as to any authority simulated later. The JSON form of a script (the operator API's body) is in
//! [`json`](self::json).
//!
//! Semantics, in one place:
//! - Rules fall into three **phases**: latency ([`Effect::Latency`]), outcome of the delivery
//!   ([`Effect::Transient`], [`Effect::Timeout`], [`Effect::Reset`], [`Effect::Panic`],
//!   [`Effect::Reject`], [`Effect::Accept`]) and acknowledgement ([`Effect::AckDelay`],
//!   [`Effect::AckLost`]). In each phase the **first** matching rule in list order decides; phases
//!   combine (a delivery can be slowed down *and* fail), except that a panic comes at once and
//!   uses up no latency rule.
//! - A rule **matches** a delivery when its `module` and `report_id` (each optional) equal the
//!   delivery's.
//! - A rule with a `count` is used up by that many deliveries it decided, then removed; without a
//!   `count` it stands until the script is replaced or reset.
//! - **What counts as a delivery**: every submit of an idempotency key the authority has not yet
//!   accepted, including each retry after a transient fault (a transient fault is an answer to a
//!   delivery, so "transient for the next 2" means the first two attempts fail and the third gets
//!   through). A panic is a delivery the same way: nothing is recorded and the retry comes as a
//!   new delivery. A repeat of an already accepted key is answered with the original acceptance
//!   and never consults the script.
//! - Acknowledgement rules with a `count` are taken by the next N *accepted* deliveries and stay
//!   bound to those messages; standing acknowledgement rules apply to every message not yet
//!   decided, also to messages received before the rule was set. A decided outcome never changes.
//! - [`Script::transient_rate`] answers that share of the deliveries no outcome rule decided with
//!   a transient fault, chosen by a hash of the idempotency key and the attempt number: the same
//!   run of reports meets the same faults every time, and a retry has a fresh chance.
//! - The script lives in memory: a restart of the service starts from configuration again.

pub mod json;
mod plan;
mod scope;

use plan::{transient, unit_draw};
pub use plan::{Plan, Reply};
pub use scope::{Call, Target};

use scope::{count_range, scope_problems};

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Longest latency, timeout or acknowledgement delay a rule may ask for (ten minutes): longer
/// values are typos, and a delivery held that long would outlive any test.
pub const MAX_DELAY_MS: u64 = 600_000;

/// Longest reason or message a rule may carry, in characters.
pub const MAX_TEXT_CHARS: usize = 500;

/// Largest `count` of a rule: a million deliveries outlast any test run, and a larger number is
/// a typo (it used to be cut silently to what the rule could hold).
pub const MAX_COUNT: u32 = 1_000_000;

/// Longest `report_id` a rule may name, in characters: the longest report id the service takes.
pub const MAX_REPORT_ID_CHARS: usize = 128;

/// Longest `module` a rule may name: a module's path segment (`birthnotice`).
pub const MAX_MODULE_CHARS: usize = 32;

/// Idempotency keys whose attempts are remembered for [`Script::transient_rate`]; beyond that the
/// memory starts afresh (a key that never gets through must not grow it without bound).
const MAX_REMEMBERED_ATTEMPTS: usize = 100_000;

/// A simulator's script: rules, first match per phase wins, and a standing transient rate.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    /// Rules in the order they are consulted.
    pub rules: Vec<Rule>,
    /// Share of deliveries (0.0..=1.0) that no outcome rule decided and that are answered with a
    /// transient fault. Default 0.0.
    pub transient_rate: f64,
}

/// One rule: which deliveries it applies to, how often, and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Only deliveries of this module (path segment, e.g. `birthnotice`); `None`: any module.
    pub module: Option<String>,
    /// Only deliveries of this report id; `None`: any report.
    pub report_id: Option<String>,
    /// Only this call (a delivery, or a mailbox's list, fetch or delete); `None`: every call
    /// its effect applies to.
    pub call: Option<Call>,
    /// Only mailbox calls naming this message (fetch, delete); `None`: any message.
    pub message_id: Option<String>,
    /// Used up after deciding this many deliveries (at least 1); `None`: standing.
    pub count: Option<u32>,
    /// What the rule does.
    pub effect: Effect,
}

/// What a rule does to a delivery or its acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Delay the answer to the submit by `ms` plus, with `random_ms`, a further amount in that
    /// inclusive range (picked from the idempotency key and attempt, so reproducible).
    Latency {
        /// Fixed part, in milliseconds.
        ms: u64,
        /// Range `(min, max)` of the varying part, in milliseconds.
        random_ms: Option<(u64, u64)>,
    },
    /// Answer with a transient fault carrying `message`; the engine retries.
    Transient {
        /// Text of the fault.
        message: String,
    },
    /// Hold the submit for `after_ms`, then answer with a transient "timeout" fault.
    Timeout {
        /// How long the submit hangs first, in milliseconds.
        after_ms: u64,
    },
    /// Answer with a transient "connection reset" fault at once.
    Reset,
    /// Panic inside the transport call with `message`, as a bug in a transport would: the engine
    /// sees no answer at all, only the unwinding. At once (no latency applies) and before
    /// anything is recorded. For testers who want to watch supervision at work.
    Panic {
        /// Text of the panic.
        message: String,
    },
    /// Refuse the delivery for good with `reason` (the report fails with exactly this reason).
    /// Nothing is recorded, as with a refused signature.
    Reject {
        /// Reason reported to the sender.
        reason: String,
    },
    /// Accept the delivery (explicitly, overriding [`Script::transient_rate`] and later rules).
    Accept,
    /// Acknowledge `delay_ms` after receipt instead of the configured delay.
    AckDelay {
        /// Milliseconds from receipt to the decision.
        delay_ms: u64,
    },
    /// Never acknowledge: nothing reaches the inbox for the message while the rule holds.
    AckLost,
    /// A mailbox message that cannot be fetched: the fetch answers a transient fault, every time
    /// while the rule holds (the message stays listed).
    Unfetchable,
    /// A truncated body: the fetch answers the message with each file cut to half its length,
    /// as a transfer broken off would leave it.
    Truncated,
}

/// The phase of a delivery an [`Effect`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Latency,
    Outcome,
    Ack,
}

impl Effect {
    fn phase(&self) -> Phase {
        match self {
            Effect::Latency { .. } => Phase::Latency,
            Effect::AckDelay { .. } | Effect::AckLost => Phase::Ack,
            _ => Phase::Outcome,
        }
    }
}

impl Rule {
    /// A standing rule for every delivery.
    pub fn always(effect: Effect) -> Self {
        Rule {
            module: None,
            report_id: None,
            call: None,
            message_id: None,
            count: None,
            effect,
        }
    }

    /// A rule for the next `count` deliveries.
    pub fn next(count: u32, effect: Effect) -> Self {
        Rule {
            count: Some(count),
            ..Rule::always(effect)
        }
    }

    /// A standing rule for the deliveries of one report of one module.
    pub fn for_report(module: &str, report_id: &str, effect: Effect) -> Self {
        Rule {
            module: Some(module.to_owned()),
            report_id: Some(report_id.to_owned()),
            ..Rule::always(effect)
        }
    }

    /// Limits the rule to `count` deliveries.
    pub fn times(self, count: u32) -> Self {
        Rule {
            count: Some(count),
            ..self
        }
    }

    /// Whether the rule speaks about `target`.
    fn matches(&self, target: &Target<'_>) -> bool {
        self.effect.applies_to(target.call)
            && self.call.is_none_or(|call| call == target.call)
            && self.module.as_deref().is_none_or(|m| m == target.module)
            && self
                .report_id
                .as_deref()
                .is_none_or(|r| r == target.report_id)
            && self
                .message_id
                .as_deref()
                .is_none_or(|m| m == target.message_id)
    }

    /// Problems with this rule, each a sentence; empty when it is fine.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.count.is_some_and(|n| !(1..=MAX_COUNT).contains(&n)) {
            problems.push(count_range());
        }
        scope_problems(
            self.module.as_deref(),
            self.report_id.as_deref(),
            self.message_id.as_deref(),
            &mut problems,
        );
        let delay = |name: &str, ms: u64, problems: &mut Vec<String>| {
            if ms > MAX_DELAY_MS {
                problems.push(format!(
                    "{name} must be an integer from 0 to {MAX_DELAY_MS}"
                ));
            }
        };
        let text = |name: &str, value: &str, problems: &mut Vec<String>| {
            if value.is_empty() || value.chars().count() > MAX_TEXT_CHARS {
                problems.push(format!("{name} must have 1 to {MAX_TEXT_CHARS} characters"));
            }
            // It reaches the journal, the received log and the service's log and reports.
            if value.chars().any(char::is_control) {
                problems.push(format!("{name} must not contain control characters"));
            }
        };
        match &self.effect {
            Effect::Latency { ms, random_ms } => {
                delay("ms", *ms, &mut problems);
                if let Some((min, max)) = random_ms {
                    delay("max_ms", *max, &mut problems);
                    if min > max {
                        problems.push("min_ms must not exceed max_ms".to_owned());
                    }
                }
            }
            Effect::Transient { message } | Effect::Panic { message } => {
                text("message", message, &mut problems)
            }
            Effect::Timeout { after_ms } => delay("after_ms", *after_ms, &mut problems),
            Effect::Reject { reason } => text("reason", reason, &mut problems),
            Effect::AckDelay { delay_ms } => delay("delay_ms", *delay_ms, &mut problems),
            Effect::Reset
            | Effect::Accept
            | Effect::AckLost
            | Effect::Unfetchable
            | Effect::Truncated => {}
        }
        problems
    }
}

impl Script {
    /// Problems with this script, each a sentence naming the rule (`rules[2]: …`); empty when it
    /// is fine.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !(0.0..=1.0).contains(&self.transient_rate) {
            problems.push("transient_rate must be a number from 0 to 1".to_owned());
        }
        for (i, rule) in self.rules.iter().enumerate() {
            problems.extend(
                rule.problems()
                    .into_iter()
                    .map(|p| format!("rules[{i}]: {p}")),
            );
        }
        problems
    }
}

/// A script or rule was refused; every problem at once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid script: {}", .0.join("; "))]
pub struct ScriptError(pub Vec<String>);

/// A simulated authority whose behaviour testers script at run time. Every simulator implements
/// it, so that the operator API and engine tests script any of them the same way.
pub trait Scriptable: Send + Sync {
    /// The current script; counted rules show what is left of their count.
    fn script(&self) -> Script;
    /// Replaces the script, after checking it (every problem at once in the error).
    fn set_script(&self, script: Script) -> Result<(), ScriptError>;
    /// Appends one rule, after checking it.
    fn push_rule(&self, rule: Rule) -> Result<(), ScriptError>;
    /// Clears the script: from now on the simulator behaves as configured.
    fn reset_script(&self);
}

/// A simulator is scripted through its [`Scripted`] cell ([`crate::Simulated::scriptable`]).
impl Scriptable for Scripted {
    fn script(&self) -> Script {
        Scripted::script(self)
    }

    fn set_script(&self, script: Script) -> Result<(), ScriptError> {
        self.set(script)
    }

    fn push_rule(&self, rule: Rule) -> Result<(), ScriptError> {
        self.push(rule)
    }

    fn reset_script(&self) {
        self.reset();
    }
}

/// What the script says about the acknowledgement of one accepted message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckEffect {
    /// Decide `delay_ms` after receipt instead of the configured delay.
    Delay(u64),
    /// Never decide (while the script says so).
    Lost,
}

/// A simulator's script with what it remembers between calls: attempts per idempotency key and
/// acknowledgement rules bound to accepted messages. Thread-safe; one lock, held only briefly and
/// never across a wait.
#[derive(Debug, Default)]
pub struct Scripted {
    state: Mutex<State>,
    /// Counts the changes of the script that can change a planned acknowledgement.
    generation: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    script: Script,
    /// Deliveries of each not yet accepted idempotency key the script answered so far.
    attempts: HashMap<String, u32>,
    /// Acknowledgement effects taken by accepted messages, by transport reference.
    bound: HashMap<String, AckEffect>,
}

impl Scripted {
    /// The current script (counted rules show what is left of their count).
    pub fn script(&self) -> Script {
        self.lock().script.clone()
    }

    /// Replaces the script after checking it; acknowledgement rules already taken by accepted
    /// messages stay with them.
    pub fn set(&self, script: Script) -> Result<(), ScriptError> {
        let problems = script.problems();
        if !problems.is_empty() {
            return Err(ScriptError(problems));
        }
        self.lock().script = script;
        self.changed();
        Ok(())
    }

    /// Appends one rule after checking it.
    pub fn push(&self, rule: Rule) -> Result<(), ScriptError> {
        let problems = rule.problems();
        if !problems.is_empty() {
            return Err(ScriptError(problems));
        }
        self.lock().script.rules.push(rule);
        self.changed();
        Ok(())
    }

    /// Back to configuration: no rules, no transient rate, nothing bound, attempts forgotten.
    pub fn reset(&self) {
        *self.lock() = State::default();
        self.changed();
    }

    /// Changes whenever the script is replaced, extended or reset: a simulator that planned its
    /// acknowledgements under an older generation plans them again (a standing `ack_lost` that
    /// was lifted must let the held messages through).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Decides one delivery (not a repeat of an accepted key) and uses up what decided it.
    /// `default_latency_ms` is the configured latency, used when no latency rule matches.
    pub fn plan(
        &self,
        module: &str,
        report_id: &str,
        idempotency_key: &str,
        default_latency_ms: u64,
    ) -> Plan {
        self.plan_call(
            &Target::delivery(module, report_id),
            idempotency_key,
            default_latency_ms,
        )
    }

    /// Decides one call of `target` and uses up what decided it; `idempotency_key` keys its
    /// attempts (a delivery's key; for a mailbox call, one naming the call and its message, so
    /// that [`Script::transient_rate`] gives each retry a fresh chance).
    pub fn plan_call(
        &self,
        target: &Target<'_>,
        idempotency_key: &str,
        default_latency_ms: u64,
    ) -> Plan {
        let mut state = self.lock();
        if state.attempts.len() >= MAX_REMEMBERED_ATTEMPTS {
            state.attempts.clear();
        }
        let attempt = {
            let n = state
                .attempts
                .entry(idempotency_key.to_owned())
                .or_insert(0);
            *n = n.saturating_add(1);
            *n
        };
        let draw = |salt: &str| unit_draw(idempotency_key, attempt, salt);

        let reply = match state.take(Phase::Outcome, target) {
            Some(Effect::Transient { message }) => transient(message, 0),
            Some(Effect::Timeout { after_ms }) => {
                transient(format!("timeout after {after_ms} ms (scripted)"), after_ms)
            }
            Some(Effect::Reset) => transient("connection reset by peer (scripted)".to_owned(), 0),
            Some(Effect::Panic { message }) => Reply::Panic(message),
            Some(Effect::Reject { reason }) => Reply::Reject(reason),
            Some(Effect::Unfetchable) => {
                transient("the message cannot be fetched (scripted)".to_owned(), 0)
            }
            Some(Effect::Truncated) => Reply::Truncated,
            Some(_) => Reply::Accept,
            None if draw("transient") < state.script.transient_rate => transient(
                "service unavailable (scripted transient_rate)".to_owned(),
                0,
            ),
            None => Reply::Accept,
        };
        // A panic comes at once, so it neither waits nor uses up a latency rule.
        let latency = match reply {
            Reply::Panic(_) => 0,
            _ => state.latency(target, draw, default_latency_ms),
        };
        if matches!(reply, Reply::Reject(_)) {
            state.attempts.remove(idempotency_key);
        }
        Plan {
            latency: Duration::from_millis(latency),
            reply,
        }
    }

    /// Records that the simulator accepted a delivery under `transport_ref`: its attempts are
    /// forgotten, and the first counted acknowledgement rule that matches is bound to it.
    pub fn accepted(
        &self,
        module: &str,
        report_id: &str,
        idempotency_key: &str,
        transport_ref: &str,
    ) {
        let mut state = self.lock();
        state.attempts.remove(idempotency_key);
        let counted = state.script.rules.iter().position(|rule| {
            rule.count.is_some()
                && rule.effect.phase() == Phase::Ack
                && rule.matches(&Target::delivery(module, report_id))
        });
        if let Some(effect) = counted.and_then(|index| state.use_rule(index)) {
            let bound = match effect {
                Effect::AckDelay { delay_ms } => AckEffect::Delay(delay_ms),
                _ => AckEffect::Lost,
            };
            state.bound.insert(transport_ref.to_owned(), bound);
        }
    }

    /// What the script says about the acknowledgement of the message `transport_ref`: the effect
    /// bound to it, else the first standing acknowledgement rule that matches, else nothing
    /// (configuration).
    pub fn ack_effect(
        &self,
        module: &str,
        report_id: &str,
        transport_ref: &str,
    ) -> Option<AckEffect> {
        let state = self.lock();
        if let Some(bound) = state.bound.get(transport_ref) {
            return Some(*bound);
        }
        state
            .script
            .rules
            .iter()
            .filter(|rule| {
                rule.count.is_none() && rule.matches(&Target::delivery(module, report_id))
            })
            .find_map(|rule| match rule.effect {
                Effect::AckDelay { delay_ms } => Some(AckEffect::Delay(delay_ms)),
                Effect::AckLost => Some(AckEffect::Lost),
                _ => None,
            })
    }

    /// Forgets the bound acknowledgement effect of a message whose outcome is decided.
    pub fn decided(&self, transport_ref: &str) {
        self.lock().bound.remove(transport_ref);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// The latency of a delivery: the first matching latency rule, used up, or the configured one.
    fn latency(&mut self, target: &Target<'_>, draw: impl Fn(&str) -> f64, default_ms: u64) -> u64 {
        match self.take(Phase::Latency, target) {
            Some(Effect::Latency { ms, random_ms }) => {
                let varying = random_ms.map_or(0, |(min, max)| {
                    // Truncation is fine: the draw is below 1, so the result stays in range.
                    min + ((max - min + 1) as f64 * draw("latency")) as u64
                });
                ms.saturating_add(varying)
            }
            _ => default_ms,
        }
    }

    /// The effect of the first rule of `phase` matching the call, using it up.
    fn take(&mut self, phase: Phase, target: &Target<'_>) -> Option<Effect> {
        let index = self
            .script
            .rules
            .iter()
            .position(|rule| rule.effect.phase() == phase && rule.matches(target))?;
        self.use_rule(index)
    }

    /// The effect of rule `index`, counting one use and removing the rule when it is used up.
    fn use_rule(&mut self, index: usize) -> Option<Effect> {
        let rule = self.script.rules.get_mut(index)?;
        let effect = rule.effect.clone();
        if let Some(count) = &mut rule.count {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.script.rules.remove(index);
            }
        }
        Some(effect)
    }
}

#[cfg(test)]
mod tests;
