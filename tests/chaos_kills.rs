//! Crash safety under load: a burst of form submissions from several browsers while the service
//! is killed with SIGKILL five times and restarted on the same data directory each time. Every
//! submission the service accepted ends SUCCESS and reaches the civil registry office exactly
//! once, counted by the office itself (its journal lives in the data directory and survives the
//! kills). A submission whose connection died may or may not have been stored; if it was, it is
//! delivered exactly once too, and nothing else reaches the office.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use common::burst::{settled, Broken, Submitted};
use common::*;
use reqwest::blocking::Client;
use serde_json::Value;

/// Form submissions in the burst.
const REPORTS: usize = 1000;
/// Browsers submitting at the same time.
const BROWSERS: usize = 8;
/// SIGKILLs during the burst, spaced evenly over the accepted submissions.
const KILLS: usize = 5;

fn id_of(i: usize) -> String {
    format!("geb-burst-{i}")
}

/// Opens the magic link, fills in the signature and posts the form, as a browser does.
fn submit(client: &Client, base: &str, link: &str) -> Result<u16, Broken> {
    let before = |_| Broken::BeforePost;
    let redirect = client.get(format!("{base}{link}")).send().map_err(before)?;
    if redirect.status() != 302 {
        return Err(Broken::BeforePost);
    }
    let location = redirect.headers()["location"].to_str().unwrap().to_string();
    let page = client
        .get(format!("{base}{location}"))
        .send()
        .map_err(before)?;
    if page.status() != 200 {
        return Err(Broken::BeforePost);
    }
    let html = page.text().map_err(before)?;
    let mut form = Form {
        status: 200,
        fields: parse_form(&html),
        html,
    };
    form.set("signatur.name", "Dr. Erika Beispiel");
    form.set("signatur.bestaetigt", "true");
    let answer = client
        .post(format!("{base}{}", form.action()))
        .form(&form.fields)
        .send()
        .map_err(|_| Broken::DuringPost)?;
    Ok(answer.status().as_u16())
}

/// A browser: keeps its session cookie, follows no redirects.
fn browser() -> Client {
    loopback_client().cookie_store(true).build().unwrap()
}

/// The office's whole received log: messages per report id, and resends in all.
fn received_per_report(server: &Server) -> (HashMap<String, usize>, u64) {
    let mut per_report = HashMap::new();
    let mut repeats = 0;
    let mut after = None;
    loop {
        let path = match after {
            None => "/admin/api/v1/transports/xpersonenstand/received?limit=1000".to_string(),
            Some(seq) => {
                format!("/admin/api/v1/transports/xpersonenstand/received?limit=1000&after={seq}")
            }
        };
        let (messages, next) = received_page(server, &path);
        for message in messages {
            let id = message["report_id"].as_str().unwrap().to_string();
            *per_report.entry(id).or_insert(0) += 1;
            repeats += message["repeat_submissions"].as_u64().unwrap();
        }
        match next {
            Some(seq) => after = Some(seq),
            None => return (per_report, repeats),
        }
    }
}

/// The report's status, or `None` when the service does not know it.
fn status_of(server: &Server, id: &str) -> Option<String> {
    let response = server.get_as(
        "klinik",
        &format!("/api/birthnotice/v1/reports/{id}?peek=true"),
    );
    match response.status().as_u16() {
        404 => None,
        200 => Some(
            response.json::<Value>().unwrap()["status"]
                .as_str()
                .unwrap()
                .to_owned(),
        ),
        other => panic!("peek of {id}: {other}"),
    }
}

#[test]
fn five_kills_during_a_burst_of_submissions_deliver_every_accepted_report_exactly_once() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let mut server = Server::start(
        &dir,
        &[
            ("MELDEWERK_LOG__LEVEL", "warn"),
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0"),
        ],
    );
    // The magic links are prepared first, like an integrator's system would hand them out; they
    // are sealed with the user's key and survive the kills.
    let links: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<_> = (0..BROWSERS)
            .map(|b| {
                let server = &server;
                scope.spawn(move || {
                    (b..REPORTS)
                        .step_by(BROWSERS)
                        .map(|i| (i, magic_link(server, "klinik", &complete_notice(&id_of(i)))))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut links = vec![String::new(); REPORTS];
        for chunk in chunks {
            for (i, link) in chunk.join().unwrap() {
                links[i] = link;
            }
        }
        links
    });

    // The address of the running service; `None` while it is down.
    let live = RwLock::new(Some(server.base.clone()));
    let next = AtomicUsize::new(0);
    let accepted = AtomicUsize::new(0);
    let outcomes = Mutex::new(vec![None::<Submitted>; REPORTS]);
    let burst = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..BROWSERS {
            scope.spawn(|| {
                let client = browser();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(link) = links.get(i) else { break };
                    let deadline = Instant::now() + Duration::from_secs(60);
                    let outcome = loop {
                        assert!(Instant::now() < deadline, "service never came back");
                        let Some(base) = live.read().unwrap().clone() else {
                            std::thread::sleep(Duration::from_millis(20));
                            continue;
                        };
                        match submit(&client, &base, link) {
                            Ok(303) => break Submitted::Accepted,
                            Ok(status) => break Submitted::Refused(status),
                            Err(Broken::DuringPost) => break Submitted::InDoubt,
                            Err(Broken::BeforePost) => {
                                std::thread::sleep(Duration::from_millis(20));
                            }
                        }
                    };
                    if outcome == Submitted::Accepted {
                        accepted.fetch_add(1, Ordering::SeqCst);
                    }
                    outcomes.lock().unwrap()[i] = Some(outcome);
                }
            });
        }
        // Kills at evenly spaced points of the burst's progress, each followed by a restart on
        // the same data directory.
        for kill in 1..=KILLS {
            let at = kill * REPORTS / (KILLS + 1);
            let deadline = Instant::now() + Duration::from_secs(120);
            while accepted.load(Ordering::SeqCst) < at {
                assert!(
                    Instant::now() < deadline,
                    "the burst stalled before kill {kill}"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
            *live.write().unwrap() = None;
            server.kill();
            server.start_again();
            *live.write().unwrap() = Some(server.base.clone());
        }
    });
    let burst = burst.elapsed();

    let outcomes = settled(outcomes);
    let refused: Vec<(usize, Submitted)> = outcomes
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, o)| matches!(o, Submitted::Refused(_)))
        .collect();
    assert!(refused.is_empty(), "refused submissions: {refused:?}");
    let in_doubt: Vec<String> = (0..REPORTS)
        .filter(|i| outcomes[*i] == Submitted::InDoubt)
        .map(id_of)
        .collect();
    let accepted_ids: Vec<String> = (0..REPORTS)
        .filter(|i| outcomes[*i] == Submitted::Accepted)
        .map(id_of)
        .collect();
    assert_eq!(accepted_ids.len() + in_doubt.len(), REPORTS);

    for id in &accepted_ids {
        server.wait_for_status("klinik", id, "SUCCESS");
    }
    let mut stored_in_doubt = 0;
    for id in &in_doubt {
        if status_of(&server, id).is_some() {
            server.wait_for_status("klinik", id, "SUCCESS");
            stored_in_doubt += 1;
        }
    }

    // Counted at the office: each report once, whatever the kills made the service resend.
    let (per_report, repeats) = received_per_report(&server);
    for id in &accepted_ids {
        assert_eq!(per_report.get(id), Some(&1), "{id} accepted");
    }
    for id in &in_doubt {
        let expected = status_of(&server, id).map(|_| 1);
        assert_eq!(per_report.get(id).copied(), expected, "{id} in doubt");
    }
    assert_eq!(
        per_report.len(),
        accepted_ids.len() + stored_in_doubt,
        "nothing else reached the office"
    );
    println!(
        "{REPORTS} submissions in {:.1} s with {KILLS} kills: {} accepted, {} in doubt ({} of \
         them stored), {repeats} resends answered as repeats",
        burst.as_secs_f64(),
        accepted_ids.len(),
        in_doubt.len(),
        stored_in_doubt,
    );
}
