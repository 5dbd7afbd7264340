//! The operators' reads of the store, on every engine: jobs by id, paged, and the audit log,
//! kept across a reopen.

use chrono::{TimeZone, Utc};
use meldewerk_storage::{AuditEntry, Report, ReportKey};

mod common;
use common::engines::Place;

fn report(id: &str) -> Report {
    Report::new_pending(
        ReportKey {
            owner: "klinik".into(),
            module: "birthnotice".into(),
            id: id.into(),
        },
        serde_json::json!({}),
        None,
        format!("idem-{id}"),
        Utc::now(),
    )
}

async fn jobs_are_listed_by_id_in_pages_and_the_audit_log_survives_a_reopen(place: Place) {
    {
        let store = place.open().await;
        let mut ids = Vec::new();
        for i in 0..5 {
            ids.push(
                store
                    .dispatch_report(report(&format!("r{i}")))
                    .await
                    .unwrap()
                    .id,
            );
        }
        let first = store.jobs(None, 2).await.unwrap();
        assert_eq!(first.iter().map(|j| j.id).collect::<Vec<_>>(), ids[..2]);
        let rest = store.jobs(Some(first[1].id), 10).await.unwrap();
        assert_eq!(rest.iter().map(|j| j.id).collect::<Vec<_>>(), ids[2..]);
        assert_eq!(store.job(ids[3]).await.unwrap().unwrap().report.id, "r3");
        assert_eq!(store.job(u64::MAX).await.unwrap(), None);

        for action in ["retry-now", "discard"] {
            let entry = AuditEntry {
                at: Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
                who: "operator".into(),
                action: action.into(),
                target: "job 1".into(),
            };
            store.append_audit(entry).await.unwrap();
        }
    }
    let store = place.open().await;
    let entries = store.audit(None, 10).await.unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!((entries[0].0, entries[1].0), (1, 2));
    assert_eq!(entries[1].1.action, "discard");
    assert_eq!(store.audit(Some(1), 10).await.unwrap().len(), 1);
    let third = AuditEntry {
        at: Utc::now(),
        who: "operator".into(),
        action: "retry-now".into(),
        target: "job 2".into(),
    };
    assert_eq!(store.append_audit(third).await.unwrap(), 3);
}

contract_tests!(jobs_are_listed_by_id_in_pages_and_the_audit_log_survives_a_reopen);
