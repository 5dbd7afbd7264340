//! Which calls a rule applies to: the call itself ([`Call`]: a delivery, or one of a mailbox's
//! calls), the delivery's module and report, the mailbox message a call names. What one call
//! looks like to the script is a [`Target`].

use super::{Effect, MAX_COUNT, MAX_MODULE_CHARS, MAX_REPORT_ID_CHARS};

/// A call of a simulated authority the script is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// A delivery (`submit`).
    Deliver,
    /// Listing a mailbox account ([`crate::Mailbox::list`]).
    List,
    /// Fetching one mailbox message ([`crate::Mailbox::fetch`]).
    Fetch,
    /// Deleting one mailbox message ([`crate::Mailbox::delete`]).
    Delete,
}

impl Call {
    /// Every call, by its JSON name.
    pub const ALL: [(Call, &'static str); 4] = [
        (Call::Deliver, "deliver"),
        (Call::List, "list"),
        (Call::Fetch, "fetch"),
        (Call::Delete, "delete"),
    ];

    /// Its JSON name (`deliver`, `list`, `fetch`, `delete`).
    pub fn name(self) -> &'static str {
        Call::ALL
            .iter()
            .find(|(call, _)| *call == self)
            .map_or("deliver", |(_, name)| name)
    }

    /// The call called `name`.
    pub fn named(name: &str) -> Option<Call> {
        Call::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(call, _)| *call)
    }
}

/// One call as the script sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target<'a> {
    /// Which call.
    pub call: Call,
    /// A delivery's module (empty for a mailbox call).
    pub module: &'a str,
    /// A delivery's report id (empty for a mailbox call).
    pub report_id: &'a str,
    /// The mailbox message a fetch or delete names (empty otherwise).
    pub message_id: &'a str,
}

impl<'a> Target<'a> {
    /// A delivery of `report_id` of `module`.
    pub fn delivery(module: &'a str, report_id: &'a str) -> Self {
        Target {
            call: Call::Deliver,
            module,
            report_id,
            message_id: "",
        }
    }

    /// A mailbox call, naming `message_id` (empty for a listing).
    pub fn mailbox(call: Call, message_id: &'a str) -> Self {
        Target {
            call,
            module: "",
            report_id: "",
            message_id,
        }
    }
}

impl Effect {
    /// Whether the effect can apply to `call`: a refusal, an explicit acceptance and the
    /// acknowledgement effects are about deliveries; `unfetchable` and `truncated` about
    /// fetches; latency and faults about every call.
    pub(super) fn applies_to(&self, call: Call) -> bool {
        match self {
            Effect::Reject { .. } | Effect::Accept | Effect::AckDelay { .. } | Effect::AckLost => {
                call == Call::Deliver
            }
            Effect::Unfetchable | Effect::Truncated => call == Call::Fetch,
            Effect::Latency { .. }
            | Effect::Transient { .. }
            | Effect::Timeout { .. }
            | Effect::Reset
            | Effect::Panic { .. } => true,
        }
    }
}

/// What a `count` out of range is told.
pub(super) fn count_range() -> String {
    format!("count must be an integer from 1 to {MAX_COUNT}")
}

/// Problems with the `module`, `report_id` and `message_id` a rule is limited to.
pub(super) fn scope_problems(
    module: Option<&str>,
    report_id: Option<&str>,
    message_id: Option<&str>,
    problems: &mut Vec<String>,
) {
    if module.is_some_and(|module| !is_module_name(module)) {
        problems.push(format!(
            "module must be a module's name: a lowercase letter, then up to {} lowercase letters \
             or digits",
            MAX_MODULE_CHARS - 1
        ));
    }
    for (name, value) in [("report_id", report_id), ("message_id", message_id)] {
        if let Some(value) = value {
            if value.is_empty() || value.chars().count() > MAX_REPORT_ID_CHARS {
                problems.push(format!(
                    "{name} must have 1 to {MAX_REPORT_ID_CHARS} characters"
                ));
            }
            if value.chars().any(char::is_control) {
                problems.push(format!("{name} must not contain control characters"));
            }
        }
    }
}

/// Whether `name` can be a module's path segment: `^[a-z][a-z0-9]{0,31}$`. A rule naming
/// anything else could never match (and `../x` has no business in the received log's groups).
fn is_module_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= MAX_MODULE_CHARS
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}
