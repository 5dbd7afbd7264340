//! Helpers shared by the integration tests.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::Path;
use std::process::{Command, Output};

use meldewerk_transports::received::{ReceivedPage, ReceivedQuery};
use meldewerk_transports::{
    Accepted, Answer, Delivery, Inbox, MessageSignature, Outcome, SimulatorError, TransportError,
};
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair};

/// Runs a real external tool. A missing tool fails the test loudly: skipping would let a broken
/// PDF pass unnoticed on a machine without the tools.
pub fn run_tool(program: &str, args: &[&str]) -> Output {
    match Command::new(program).args(args).output() {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "required tool `{program}` is not installed; install it with \
             `apt-get update && apt-get install -y qpdf poppler-utils`"
        ),
        Err(e) => panic!("cannot run `{program}`: {e}"),
    }
}

/// Asserts that `qpdf --check` accepts the PDF at `path`.
pub fn assert_qpdf_check(path: &Path) {
    let output = run_tool("qpdf", &["--check", path.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "qpdf --check failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The text `pdftotext` extracts from the PDF at `path`.
pub fn pdf_text(path: &Path) -> String {
    let output = run_tool("pdftotext", &["-enc", "UTF-8", path.to_str().unwrap(), "-"]);
    assert!(
        output.status.success(),
        "pdftotext failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("pdftotext printed invalid UTF-8")
}

/// Removes all whitespace, so that values wrapped across lines can be searched for.
pub fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A delivery without signature.
pub fn unsigned_delivery(key: &str) -> Delivery {
    Delivery {
        idempotency_key: key.to_owned(),
        module: "birthnotice".to_owned(),
        report_id: format!("report-{key}"),
        message_uuid: uuid::Uuid::new_v4().to_string(),
        content_type: "application/xml".to_owned(),
        body: format!("<geburt><kind>Jürgen Müßig</kind><key>{key}</key></geburt>").into_bytes(),
        signature: None,
        sender: None,
    }
}

/// A delivery with a valid Ed25519 signature over its body from a fresh key.
pub fn signed_delivery(key: &str) -> Delivery {
    let mut delivery = unsigned_delivery(key);
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    delivery.signature = Some(MessageSignature {
        kind: "seal".to_owned(),
        algorithm: "Ed25519".to_owned(),
        value: pair.sign(&delivery.body).as_ref().to_vec(),
        public_key: pair.public_key().as_ref().to_vec(),
        signer: "Klinikum Test".to_owned(),
    });
    delivery
}

/// What the inbox says about `transport_ref` now: reads the whole inbox from its start (one
/// fetch after another) and returns the message's outcome, `None` while it is not decided.
pub async fn outcome_of(office: &dyn Inbox, transport_ref: &str) -> Option<Outcome> {
    let mut cursor = None;
    let mut found = None;
    loop {
        let batch = office
            .acknowledgements(cursor.as_deref(), 100)
            .await
            .expect("inbox fetch");
        for ack in batch.acknowledgements {
            if ack.transport_ref == transport_ref {
                assert!(found.is_none(), "{transport_ref} acknowledged twice");
                found = Some(ack.outcome);
            }
        }
        cursor = batch.cursor;
        if !batch.more {
            return found;
        }
    }
}

/// The acceptance of a delivery the authority took for a later acknowledgement; panics on
/// anything else.
pub fn accepted(answer: Result<Answer, TransportError>) -> Accepted {
    match answer {
        Ok(Answer::AwaitingAck(accepted)) => accepted,
        other => panic!("expected an acceptance, got {other:?}"),
    }
}

/// The reason of a delivery the authority refused at once; panics on anything else.
pub fn refused(answer: Result<Answer, TransportError>) -> String {
    match answer {
        Ok(Answer::Finished(finished)) => match finished.outcome {
            Outcome::Failure { reason } => reason,
            other => panic!("expected a refusal, got {other:?}"),
        },
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Opens a simulator with `open`. Right after a simulator or journal on the same directory was
/// dropped, sled's I/O threads may still hold the directory's lock for a moment, so `Locked` is
/// retried briefly (a restarted process never sees this: its predecessor's locks went with it).
pub fn open_retrying<T>(open: impl Fn() -> Result<T, SimulatorError>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match open() {
            Err(SimulatorError::Locked(_)) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            result => return result.expect("open simulator"),
        }
    }
}

/// A query of the received log for one page of `limit` after `after`.
pub fn page_of(limit: usize, after: Option<u64>) -> ReceivedQuery {
    ReceivedQuery {
        limit,
        after,
        ..ReceivedQuery::default()
    }
}

/// The sequence numbers of a page of the received log, and its `next`.
pub fn seqs_of<T>(page: ReceivedPage<T>) -> (Vec<u64>, Option<u64>) {
    (
        page.messages.iter().map(|(seq, _)| *seq).collect(),
        page.next,
    )
}

/// Submits `count` deliveries (`delivery(i)`) to `simulator` side by side on a runtime with
/// several threads, each answered at once, and asserts what the received log shows of them:
/// each once, stamped as the log numbered it, so that the times grow with the numbers and
/// `since` any record's time lists exactly that record and those received at or after it.
pub async fn assert_logged_in_time_order<S>(
    simulator: S,
    count: usize,
    delivery: impl Fn(usize) -> Delivery,
) where
    S: meldewerk_transports::Transport + meldewerk_transports::Simulated + Clone + 'static,
{
    let sends: Vec<_> = (0..count)
        .map(|i| {
            let (simulator, delivery) = (simulator.clone(), delivery(i));
            tokio::spawn(async move { simulator.submit(delivery).await })
        })
        .collect();
    for send in sends {
        let answer = send.await.expect("the submit ran");
        assert!(matches!(answer, Ok(Answer::Finished(_))), "{answer:?}");
    }
    let page = |since| {
        let query = ReceivedQuery {
            since,
            limit: meldewerk_transports::received::MAX_PAGE,
            ..ReceivedQuery::default()
        };
        let page = simulator
            .received_page(&query)
            .expect("the received log reads");
        page.messages
            .into_iter()
            .map(|(seq, record)| {
                let at = record["received_at"].as_str().expect("a time").to_owned();
                (
                    seq,
                    at.parse::<chrono::DateTime<chrono::Utc>>()
                        .expect("RFC 3339"),
                )
            })
            .collect::<Vec<_>>()
    };
    let all = page(None);
    assert_eq!(all.len(), count);
    assert!(
        all.windows(2).all(|pair| pair[0].1 <= pair[1].1),
        "times out of the log's order: {all:?}"
    );
    for (_, at) in &all {
        let expected: Vec<_> = all.iter().filter(|(_, t)| t >= at).copied().collect();
        assert_eq!(page(Some(*at)), expected, "since {at}");
    }
}
