//! The JSON form of a [`Script`] and its [`Rule`]s, as the operator API reads and writes them.
//!
//! A rule is one flat object: `kind` says what it does, `count`, `module`, `report_id`, `call`
//! (`deliver`, `list`, `fetch`, `delete`) and `message_id` say which calls it applies to, and
//! the members of its kind say how:
//!
//! | `kind` | members |
//! |---|---|
//! | `latency` | `ms` and/or `min_ms` + `max_ms` |
//! | `transient` | `message` (optional) |
//! | `timeout` | `after_ms` (optional, default 1000) |
//! | `panic` | `message` (optional) |
//! | `reset`, `accept`, `ack_lost`, `unfetchable`, `truncated` | none |
//! | `reject` | `reason` |
//! | `ack_delay` | `delay_ms` |
//!
//! A script is `{"rules": [...], "transient_rate": 0.0}` (both optional). Reading is strict and
//! reports every problem at once: a misspelt member would otherwise leave a tester wondering why
//! the rule does nothing.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Map, Value};

use super::{Effect, Rule, Script, ScriptError};

/// Every rule kind, in the order error messages list them.
pub const KINDS: [&str; 11] = [
    "latency",
    "transient",
    "timeout",
    "reset",
    "panic",
    "reject",
    "accept",
    "ack_delay",
    "ack_lost",
    "unfetchable",
    "truncated",
];

/// Members every rule may have, whatever its kind.
const COMMON: [&str; 6] = ["kind", "count", "module", "report_id", "call", "message_id"];

/// Message of a transient fault when the rule gives none.
const DEFAULT_TRANSIENT: &str = "service unavailable (scripted)";

/// Text of a panic when the rule gives none.
const DEFAULT_PANIC: &str = "scripted panic";

/// How long a `timeout` hangs when the rule does not say.
const DEFAULT_TIMEOUT_MS: u64 = 1000;

/// Reads a script; every problem at once.
pub fn script_from_json(value: &Value) -> Result<Script, ScriptError> {
    let Some(object) = value.as_object() else {
        return Err(ScriptError(vec![
            "the script must be a JSON object".to_owned()
        ]));
    };
    let mut problems = Vec::new();
    let mut script = Script::default();
    for (name, member) in object {
        match name.as_str() {
            "transient_rate" => match member.as_f64().filter(|r| (0.0..=1.0).contains(r)) {
                Some(rate) => script.transient_rate = rate,
                None => problems.push("transient_rate must be a number from 0 to 1".to_owned()),
            },
            "rules" => match member.as_array() {
                Some(rules) => {
                    for (i, rule) in rules.iter().enumerate() {
                        match rule_from_json(rule) {
                            Ok(rule) => script.rules.push(rule),
                            Err(ScriptError(errors)) => problems
                                .extend(errors.into_iter().map(|e| format!("rules[{i}]: {e}"))),
                        }
                    }
                }
                None => problems.push("rules must be an array".to_owned()),
            },
            other => problems.push(format!("unknown field \"{other}\"")),
        }
    }
    if problems.is_empty() {
        Ok(script)
    } else {
        Err(ScriptError(problems))
    }
}

/// Reads one rule; every problem at once.
pub fn rule_from_json(value: &Value) -> Result<Rule, ScriptError> {
    let Some(object) = value.as_object() else {
        return Err(ScriptError(vec!["a rule must be a JSON object".to_owned()]));
    };
    let mut problems = Vec::new();
    let kind = match object.get("kind") {
        Some(Value::String(kind)) if KINDS.contains(&kind.as_str()) => Some(kind.as_str()),
        Some(Value::String(kind)) => {
            problems.push(format!(
                "kind \"{kind}\" is not one of {}",
                KINDS.join(", ")
            ));
            None
        }
        _ => {
            problems.push(format!("kind is required, one of {}", KINDS.join(", ")));
            None
        }
    };
    let own = kind.map_or(&[][..], members_of);
    for name in object.keys() {
        let known = COMMON.contains(&name.as_str())
            || KINDS.iter().any(|k| members_of(k).contains(&name.as_str()));
        if !known {
            problems.push(format!("unknown field \"{name}\""));
        } else if kind.is_some()
            && !COMMON.contains(&name.as_str())
            && !own.contains(&name.as_str())
        {
            problems.push(format!(
                "field \"{name}\" does not apply to kind \"{}\"",
                kind.unwrap_or_default()
            ));
        }
    }
    let mut reader = Reader {
        object,
        problems: &mut problems,
    };
    let count = reader.integer("count").and_then(|count| {
        let count = u32::try_from(count).ok().filter(|n| *n <= super::MAX_COUNT);
        if count.is_none() {
            reader.problem(super::count_range());
        }
        count
    });
    let module = reader.text("module");
    let report_id = reader.text("report_id");
    let message_id = reader.text("message_id");
    let call = reader.text("call").and_then(|name| {
        let call = super::Call::named(&name);
        if call.is_none() {
            let names: Vec<&str> = super::Call::ALL.iter().map(|(_, n)| *n).collect();
            reader.problem(format!("call must be one of {}", names.join(", ")));
        }
        call
    });
    // Here as well as in `Rule::problems`, so that they are told with the other problems.
    super::scope_problems(
        module.as_deref(),
        report_id.as_deref(),
        message_id.as_deref(),
        reader.problems,
    );
    let effect = kind.and_then(|kind| effect_of(kind, &mut reader));
    let Some(effect) = effect.filter(|_| problems.is_empty()) else {
        return Err(ScriptError(problems));
    };
    let rule = Rule {
        module,
        report_id,
        call,
        message_id,
        count,
        effect,
    };
    let problems = rule.problems();
    if problems.is_empty() {
        Ok(rule)
    } else {
        Err(ScriptError(problems))
    }
}

/// The members a rule of `kind` has besides the common ones.
fn members_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "latency" => &["ms", "min_ms", "max_ms"],
        "transient" | "panic" => &["message"],
        "timeout" => &["after_ms"],
        "reject" => &["reason"],
        "ack_delay" => &["delay_ms"],
        _ => &[],
    }
}

fn effect_of(kind: &str, reader: &mut Reader<'_>) -> Option<Effect> {
    Some(match kind {
        "latency" => {
            let ms = reader.integer("ms");
            let (min, max) = (reader.integer("min_ms"), reader.integer("max_ms"));
            let random_ms = match (min, max) {
                (Some(min), Some(max)) => Some((min, max)),
                (None, None) => None,
                _ => {
                    reader.problem("min_ms and max_ms go together".to_owned());
                    return None;
                }
            };
            if ms.is_none() && random_ms.is_none() {
                reader.problem("kind \"latency\" needs ms, or min_ms and max_ms".to_owned());
                return None;
            }
            Effect::Latency {
                ms: ms.unwrap_or(0),
                random_ms,
            }
        }
        "transient" => Effect::Transient {
            message: reader
                .text("message")
                .unwrap_or_else(|| DEFAULT_TRANSIENT.to_owned()),
        },
        "timeout" => Effect::Timeout {
            after_ms: reader.integer("after_ms").unwrap_or(DEFAULT_TIMEOUT_MS),
        },
        "reset" => Effect::Reset,
        "panic" => Effect::Panic {
            message: reader
                .text("message")
                .unwrap_or_else(|| DEFAULT_PANIC.to_owned()),
        },
        "reject" => Effect::Reject {
            reason: reader.required_text("reason", kind)?,
        },
        "accept" => Effect::Accept,
        "unfetchable" => Effect::Unfetchable,
        "truncated" => Effect::Truncated,
        "ack_delay" => Effect::AckDelay {
            delay_ms: reader.required_integer("delay_ms", kind)?,
        },
        _ => Effect::AckLost,
    })
}

/// Reads typed members of one rule object, noting what is wrong.
struct Reader<'a> {
    object: &'a Map<String, Value>,
    problems: &'a mut Vec<String>,
}

impl Reader<'_> {
    fn problem(&mut self, problem: String) {
        self.problems.push(problem);
    }

    /// A whole number; `count` must be at least 1, the others at least 0.
    fn integer(&mut self, name: &str) -> Option<u64> {
        let value = self.object.get(name)?;
        let minimum = u64::from(name == "count");
        match value.as_u64().filter(|n| *n >= minimum) {
            Some(n) => Some(n),
            None => {
                let problem = if name == "count" {
                    super::count_range()
                } else {
                    format!(
                        "{name} must be an integer from 0 to {}",
                        super::MAX_DELAY_MS
                    )
                };
                self.problem(problem);
                None
            }
        }
    }

    fn required_integer(&mut self, name: &str, kind: &str) -> Option<u64> {
        if !self.object.contains_key(name) {
            self.problem(format!("{name} is required for kind \"{kind}\""));
        }
        self.integer(name)
    }

    /// A non-empty string.
    fn text(&mut self, name: &str) -> Option<String> {
        let value = self.object.get(name)?;
        match value.as_str().filter(|s| !s.is_empty()) {
            Some(text) => Some(text.to_owned()),
            None => {
                self.problem(format!("{name} must be a non-empty string"));
                None
            }
        }
    }

    fn required_text(&mut self, name: &str, kind: &str) -> Option<String> {
        if !self.object.contains_key(name) {
            self.problem(format!("{name} is required for kind \"{kind}\""));
        }
        self.text(name)
    }
}

/// The JSON form of a script (counted rules with what is left of their count).
pub fn script_to_json(script: &Script) -> Value {
    json!({
        "rules": script.rules.iter().map(rule_to_json).collect::<Vec<_>>(),
        "transient_rate": script.transient_rate,
    })
}

/// The JSON form of a rule; members that are absent are left out.
pub fn rule_to_json(rule: &Rule) -> Value {
    let mut object = Map::new();
    let (kind, members) = match &rule.effect {
        Effect::Latency { ms, random_ms } => {
            let mut members = vec![("ms", json!(ms))];
            if let Some((min, max)) = random_ms {
                members.extend([("min_ms", json!(min)), ("max_ms", json!(max))]);
            }
            ("latency", members)
        }
        Effect::Transient { message } => ("transient", vec![("message", json!(message))]),
        Effect::Timeout { after_ms } => ("timeout", vec![("after_ms", json!(after_ms))]),
        Effect::Reset => ("reset", vec![]),
        Effect::Panic { message } => ("panic", vec![("message", json!(message))]),
        Effect::Reject { reason } => ("reject", vec![("reason", json!(reason))]),
        Effect::Accept => ("accept", vec![]),
        Effect::AckDelay { delay_ms } => ("ack_delay", vec![("delay_ms", json!(delay_ms))]),
        Effect::AckLost => ("ack_lost", vec![]),
        Effect::Unfetchable => ("unfetchable", vec![]),
        Effect::Truncated => ("truncated", vec![]),
    };
    object.insert("kind".to_owned(), json!(kind));
    for (name, value) in members {
        object.insert(name.to_owned(), value);
    }
    let scope = [
        ("count", rule.count.map(Value::from)),
        ("module", rule.module.clone().map(Value::from)),
        ("report_id", rule.report_id.clone().map(Value::from)),
        ("call", rule.call.map(|call| Value::from(call.name()))),
        ("message_id", rule.message_id.clone().map(Value::from)),
    ];
    for (name, value) in scope {
        if let Some(value) = value {
            object.insert(name.to_owned(), value);
        }
    }
    Value::Object(object)
}

impl Serialize for Script {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        script_to_json(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Script {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        script_from_json(&Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        rule_to_json(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Rule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        rule_from_json(&Value::deserialize(deserializer)?).map_err(D::Error::custom)
    }
}
