use serde_json::json;

use super::json::{rule_from_json, script_from_json, script_to_json};
use super::*;

fn transient(message: &str) -> Effect {
    Effect::Transient {
        message: message.to_owned(),
    }
}

fn outcome(scripted: &Scripted, report: &str, key: &str) -> Reply {
    scripted.plan("birthnotice", report, key, 0).reply
}

fn is_transient(outcome: &Reply) -> bool {
    matches!(outcome, Reply::Transient { .. })
}

#[test]
fn counted_rules_are_used_up_by_deliveries_then_removed() {
    let scripted = Scripted::default();
    scripted.push(Rule::next(2, transient("busy"))).unwrap();
    assert_eq!(scripted.script().rules[0].count, Some(2));
    assert!(is_transient(&outcome(&scripted, "a", "k-a")));
    // What is left of the count shows.
    assert_eq!(scripted.script().rules[0].count, Some(1));
    // A retry of the same key is a delivery too.
    assert!(is_transient(&outcome(&scripted, "a", "k-a")));
    assert!(scripted.script().rules.is_empty());
    assert_eq!(outcome(&scripted, "a", "k-a"), Reply::Accept);
}

#[test]
fn report_rules_apply_only_to_their_report_and_module() {
    let scripted = Scripted::default();
    let reject = Effect::Reject {
        reason: "Zuständigkeit fehlt".to_owned(),
    };
    scripted
        .push(Rule::for_report("birthnotice", "geb-1", reject))
        .unwrap();
    assert_eq!(
        outcome(&scripted, "geb-1", "k1"),
        Reply::Reject("Zuständigkeit fehlt".to_owned())
    );
    // Standing: the next delivery of that report is refused as well.
    assert!(matches!(
        outcome(&scripted, "geb-1", "k1b"),
        Reply::Reject(_)
    ));
    assert_eq!(outcome(&scripted, "geb-2", "k2"), Reply::Accept);
    let other_module = scripted.plan("deathnotice", "geb-1", "k3", 0).reply;
    assert_eq!(other_module, Reply::Accept);
}

#[test]
fn first_matching_rule_per_phase_decides_and_phases_combine() {
    let scripted = Scripted::default();
    scripted
        .set(Script {
            rules: vec![
                Rule::for_report("birthnotice", "vip", Effect::Accept),
                Rule::next(1, Effect::Reset),
                Rule::next(
                    5,
                    Effect::Latency {
                        ms: 30,
                        random_ms: None,
                    },
                ),
            ],
            transient_rate: 0.0,
        })
        .unwrap();
    // The standing accept of "vip" comes first, so the counted reset stays for the next one.
    let vip = scripted.plan("birthnotice", "vip", "k-vip", 7);
    assert_eq!(vip.reply, Reply::Accept);
    assert_eq!(vip.latency, Duration::from_millis(30));
    let next = scripted.plan("birthnotice", "other", "k-o", 7);
    assert_eq!(
        next.reply,
        Reply::Transient {
            message: "connection reset by peer (scripted)".to_owned(),
            wait: Duration::ZERO
        }
    );
    assert_eq!(next.latency, Duration::from_millis(30));
    let script = scripted.script();
    assert_eq!(script.rules.len(), 2);
    assert_eq!(script.rules[1].count, Some(3));
}

#[test]
fn configured_latency_stands_when_no_latency_rule_matches() {
    let scripted = Scripted::default();
    assert_eq!(
        scripted.plan("m", "r", "k", 250).latency,
        Duration::from_millis(250)
    );
    scripted
        .push(Rule::always(Effect::Latency {
            ms: 10,
            random_ms: Some((5, 8)),
        }))
        .unwrap();
    for i in 0..50 {
        let latency = scripted.plan("m", "r", &format!("k{i}"), 250).latency;
        assert!(
            (15..=18).contains(&latency.as_millis()),
            "{latency:?} outside 10 + 5..=8"
        );
    }
}

#[test]
fn timeout_waits_then_fails_transiently() {
    let scripted = Scripted::default();
    scripted
        .push(Rule::next(1, Effect::Timeout { after_ms: 40 }))
        .unwrap();
    assert_eq!(
        outcome(&scripted, "r", "k"),
        Reply::Transient {
            message: "timeout after 40 ms (scripted)".to_owned(),
            wait: Duration::from_millis(40)
        }
    );
}

#[test]
fn a_counted_panic_hits_the_next_deliveries_and_beats_the_transient_rate() {
    let scripted = Scripted::default();
    scripted
        .set(Script {
            rules: vec![Rule::next(
                2,
                Effect::Panic {
                    message: "Fehler im Adapter".to_owned(),
                },
            )],
            transient_rate: 1.0,
        })
        .unwrap();
    let latency = Effect::Latency {
        ms: 40,
        random_ms: None,
    };
    scripted.push(Rule::next(1, latency)).unwrap();
    let first = scripted.plan("birthnotice", "a", "k-a", 7);
    // At once: neither the configured latency nor the latency rule holds a panic back.
    let panic = Reply::Panic("Fehler im Adapter".to_owned());
    assert_eq!(
        (first.reply, first.latency),
        (panic.clone(), Duration::ZERO)
    );
    // The retry after a panic is a delivery of its own and takes the rest of the count.
    assert_eq!(outcome(&scripted, "a", "k-a"), panic);
    assert_eq!(scripted.script().rules.len(), 1, "the latency rule is left");
    let next = scripted.plan("birthnotice", "a", "k-a", 7);
    assert!(is_transient(&next.reply));
    assert_eq!(next.latency, Duration::from_millis(40));
    assert!(scripted.script().rules.is_empty());
}

#[test]
fn transient_rate_is_deterministic_per_key_and_attempt() {
    let run = || {
        let scripted = Scripted::default();
        scripted
            .set(Script {
                rules: vec![],
                transient_rate: 0.3,
            })
            .unwrap();
        (0..1000)
            .map(|i| is_transient(&outcome(&scripted, "r", &format!("key-{}", i % 400))))
            .collect::<Vec<_>>()
    };
    let first = run();
    assert_eq!(first, run(), "the same deliveries meet the same faults");
    let faults = first.iter().filter(|f| **f).count();
    assert!((200..400).contains(&faults), "{faults} of 1000");
    let all = Scripted::default();
    all.set(Script {
        rules: vec![],
        transient_rate: 1.0,
    })
    .unwrap();
    assert!(is_transient(&outcome(&all, "r", "k")));
    // An explicit accept beats the rate.
    all.push(Rule::for_report("birthnotice", "r", Effect::Accept))
        .unwrap();
    assert_eq!(outcome(&all, "r", "k"), Reply::Accept);
}

#[test]
fn counted_ack_rules_bind_to_accepted_messages_and_standing_ones_apply_at_every_poll() {
    let scripted = Scripted::default();
    scripted.push(Rule::next(1, Effect::AckLost)).unwrap();
    // Planning a delivery does not take an acknowledgement rule; acceptance does.
    assert_eq!(outcome(&scripted, "a", "ka"), Reply::Accept);
    assert_eq!(scripted.script().rules.len(), 1);
    scripted.accepted("birthnotice", "a", "ka", "ref-a");
    assert!(scripted.script().rules.is_empty());
    scripted.accepted("birthnotice", "b", "kb", "ref-b");
    assert_eq!(
        scripted.ack_effect("birthnotice", "a", "ref-a"),
        Some(AckEffect::Lost)
    );
    assert_eq!(scripted.ack_effect("birthnotice", "b", "ref-b"), None);
    // A standing rule reaches messages received before it.
    scripted
        .push(Rule::for_report(
            "birthnotice",
            "b",
            Effect::AckDelay { delay_ms: 9000 },
        ))
        .unwrap();
    assert_eq!(
        scripted.ack_effect("birthnotice", "b", "ref-b"),
        Some(AckEffect::Delay(9000))
    );
    scripted.reset();
    assert_eq!(scripted.ack_effect("birthnotice", "a", "ref-a"), None);
    assert_eq!(scripted.script(), Script::default());
}

#[test]
fn typed_api_refuses_what_the_json_refuses() {
    let scripted = Scripted::default();
    let problems = scripted
        .set(Script {
            rules: vec![
                Rule::next(0, Effect::Reset),
                Rule::always(Effect::Latency {
                    ms: MAX_DELAY_MS + 1,
                    random_ms: Some((9, 3)),
                }),
                Rule::always(Effect::Panic {
                    message: String::new(),
                }),
            ],
            transient_rate: 1.5,
        })
        .unwrap_err();
    assert_eq!(
        problems.0,
        vec![
            "transient_rate must be a number from 0 to 1",
            "rules[0]: count must be an integer from 1 to 1000000",
            "rules[1]: ms must be an integer from 0 to 600000",
            "rules[1]: min_ms must not exceed max_ms",
            "rules[2]: message must have 1 to 500 characters",
        ]
    );
    assert_eq!(scripted.script(), Script::default(), "nothing changed");
}

#[test]
fn json_round_trips() {
    let value = json!({
        "transient_rate": 0.25,
        "rules": [
            {"kind": "latency", "ms": 100, "min_ms": 0, "max_ms": 50},
            {"kind": "transient", "message": "Wartung", "count": 2},
            {"kind": "timeout", "after_ms": 300, "count": 1},
            {"kind": "reset", "module": "birthnotice"},
            {"kind": "panic", "message": "Fehler im Adapter", "count": 3},
            {"kind": "reject", "reason": "Nein", "module": "birthnotice", "report_id": "geb-1"},
            {"kind": "accept", "report_id": "geb-2"},
            {"kind": "ack_delay", "delay_ms": 5000},
            {"kind": "ack_lost", "count": 3}
        ]
    });
    let script = script_from_json(&value).unwrap();
    assert_eq!(script_to_json(&script), value);
    let via_serde: Script = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(serde_json::to_value(&via_serde).unwrap(), value);
    // Defaults of optional members.
    assert_eq!(
        rule_from_json(&json!({"kind": "timeout"})).unwrap().effect,
        Effect::Timeout { after_ms: 1000 }
    );
    assert_eq!(
        rule_from_json(&json!({"kind": "transient"}))
            .unwrap()
            .effect,
        transient("service unavailable (scripted)")
    );
    assert_eq!(
        rule_from_json(&json!({"kind": "panic"})).unwrap().effect,
        Effect::Panic {
            message: "scripted panic".to_owned()
        }
    );
}

#[test]
fn json_reports_every_problem_at_once() {
    let problems = |value: serde_json::Value| script_from_json(&value).unwrap_err().0;
    assert_eq!(
        problems(json!({
            "rules": [
                {"kind": "reject", "count": 0, "message": "x"},
                {"kind": "explode"},
                {"count": 1, "delay": 5},
                {"kind": "latency", "min_ms": 5},
                {"kind": "ack_delay", "delay_ms": -1, "report_id": ""},
                "reset",
                {"kind": "panic", "reason": "x", "message": ""}
            ],
            "transient_rate": 2,
            "seed": 1
        })),
        vec![
            "rules[0]: field \"message\" does not apply to kind \"reject\"",
            "rules[0]: count must be an integer from 1 to 1000000",
            "rules[0]: reason is required for kind \"reject\"",
            "rules[1]: kind \"explode\" is not one of latency, transient, timeout, reset, panic, reject, accept, ack_delay, ack_lost, unfetchable, truncated",
            "rules[2]: kind is required, one of latency, transient, timeout, reset, panic, reject, accept, ack_delay, ack_lost, unfetchable, truncated",
            "rules[2]: unknown field \"delay\"",
            "rules[3]: min_ms and max_ms go together",
            "rules[4]: report_id must be a non-empty string",
            "rules[4]: delay_ms must be an integer from 0 to 600000",
            "rules[5]: a rule must be a JSON object",
            "rules[6]: field \"reason\" does not apply to kind \"panic\"",
            "rules[6]: message must be a non-empty string",
            "unknown field \"seed\"",
            "transient_rate must be a number from 0 to 1",
        ]
    );
    assert_eq!(
        problems(json!([])),
        vec!["the script must be a JSON object"]
    );
}

#[test]
fn counts_scopes_and_texts_are_bounded() {
    let scripted = Scripted::default();
    let problems = scripted
        .set(Script {
            rules: vec![
                Rule::next(MAX_COUNT + 1, Effect::Reset),
                Rule::for_report(
                    "../../x",
                    &"r".repeat(MAX_REPORT_ID_CHARS + 1),
                    Effect::Accept,
                ),
                Rule::for_report("birthnotice", "a\u{0}b", Effect::Accept),
                Rule::always(Effect::Reject {
                    reason: "nein\u{0}".to_owned(),
                }),
            ],
            transient_rate: 0.0,
        })
        .unwrap_err();
    assert_eq!(
        problems.0,
        vec![
            "rules[0]: count must be an integer from 1 to 1000000",
            "rules[1]: module must be a module's name: a lowercase letter, then up to 31 lowercase letters or digits",
            "rules[1]: report_id must have 1 to 128 characters",
            "rules[2]: report_id must not contain control characters",
            "rules[3]: reason must not contain control characters",
        ]
    );
    assert!(rule_from_json(&json!({"kind": "reset", "count": u64::MAX})).is_err());
    let fine = Rule::for_report(
        "deathnotice2",
        &"r".repeat(MAX_REPORT_ID_CHARS),
        Effect::Accept,
    )
    .times(MAX_COUNT);
    assert_eq!(fine.problems(), Vec::<String>::new());
}

#[test]
fn mailbox_calls_meet_only_the_rules_that_speak_about_them() {
    let scripted = Scripted::default();
    let fetch = |id: &str| {
        scripted
            .plan_call(&Target::mailbox(Call::Fetch, id), &format!("fetch:{id}"), 0)
            .reply
    };
    let rule = |value| rule_from_json(&value).unwrap();
    scripted
        .push(rule(json!({"kind": "unfetchable", "message_id": "m-1"})))
        .unwrap();
    scripted
        .push(rule(json!({"kind": "truncated", "count": 1})))
        .unwrap();
    scripted
        .push(rule(
            json!({"kind": "transient", "call": "delete", "count": 1}),
        ))
        .unwrap();
    scripted
        .push(rule(json!({"kind": "reject", "reason": "nein"})))
        .unwrap();
    // Standing: m-1 cannot be fetched, every time.
    assert!(is_transient(&fetch("m-1")));
    assert!(is_transient(&fetch("m-1")));
    assert_eq!(fetch("m-2"), Reply::Truncated);
    assert_eq!(fetch("m-2"), Reply::Accept);
    // A listing meets neither the fetch rules, nor the delete rule, nor a refusal.
    let list = scripted.plan_call(&Target::mailbox(Call::List, ""), "list", 0);
    assert_eq!(list.reply, Reply::Accept);
    let delete = scripted.plan_call(&Target::mailbox(Call::Delete, "m-2"), "delete", 0);
    assert!(is_transient(&delete.reply));
    // A delivery meets neither fetch rule, but the refusal.
    assert_eq!(
        outcome(&scripted, "r", "k"),
        Reply::Reject("nein".to_owned())
    );

    let written = script_to_json(&scripted.script());
    assert_eq!(written["rules"][0]["message_id"], "m-1");
    let bad = rule_from_json(&json!({"kind": "truncated", "call": "sing"})).unwrap_err();
    assert!(
        bad.0[0].contains("call must be one of deliver, list, fetch, delete"),
        "{bad:?}"
    );
}
