//! Byte layout of the keys in the sled trees.
//!
//! Text parts are joined by NUL so that a prefix scan over `owner\0module\0` finds exactly one
//! owner's reports in one module (a bare `owner` prefix would also match `owner2`). Names and
//! modules never contain NUL; an id may, since it is always the last part of a report key.
//!
//! Outbox keys start with the job's lane, then its due time, so that within a lane the tree's own
//! order is the order jobs come due; the job id after it keeps jobs due in the same millisecond
//! apart and in creation order. Jobs delivering a message for the first time and jobs waiting
//! for an acknowledgement (delivered again when it is late) are two lanes, so that a scan finds
//! new deliveries without reading past however many overdue acknowledgements there are.

use chrono::{DateTime, Utc};

use crate::{Job, JobKind, ReportKey};

const SEP: u8 = 0;

/// Length of an outbox key: lane (1 byte), due time (8 bytes) and job id (8 bytes).
pub(crate) const OUTBOX_KEY_LEN: usize = 17;

/// Length of the outbox keys written before lanes existed (due time and job id); the store
/// rewrites them when it opens.
pub(crate) const UNLANED_OUTBOX_KEY_LEN: usize = 16;

fn join(parts: &[&str]) -> Vec<u8> {
    let len = parts.iter().map(|p| p.len() + 1).sum();
    let mut key = Vec::with_capacity(len);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            key.push(SEP);
        }
        key.extend_from_slice(part.as_bytes());
    }
    key
}

/// `owner\0module\0id`: key of the `reports` and `pending` trees.
pub(crate) fn report(key: &ReportKey) -> Vec<u8> {
    join(&[&key.owner, &key.module, &key.id])
}

/// `owner\0module\0`: prefix of all of one owner's report keys in one module.
pub(crate) fn report_prefix(owner: &str, module: &str) -> Vec<u8> {
    let mut prefix = join(&[owner, module]);
    prefix.push(SEP);
    prefix
}

/// `module\0id\0owner`: key of the `reports_by_id` tree.
pub(crate) fn by_id(key: &ReportKey) -> Vec<u8> {
    join(&[&key.module, &key.id, &key.owner])
}

/// `module\0id\0`: prefix of the `reports_by_id` keys of every owner's report with this id.
pub(crate) fn by_id_prefix(module: &str, id: &str) -> Vec<u8> {
    let mut prefix = join(&[module, id]);
    prefix.push(SEP);
    prefix
}

/// Time as 8 bytes that sort like the time itself (outbox due times, finishing times). Flipping the sign bit of the two's
/// complement millis maps `i64::MIN..=i64::MAX` onto `0..=u64::MAX` in order, so a time before
/// 1970 (a clock gone wrong, a test) still sorts before every later one.
fn due(at: DateTime<Utc>) -> [u8; 8] {
    ((at.timestamp_millis() as u64) ^ (1 << 63)).to_be_bytes()
}

/// The outbox lanes, in the order a scan reads them.
pub(crate) const LANES: [JobKind; 2] = [JobKind::Deliver, JobKind::AwaitAck];

fn lane(kind: &JobKind) -> u8 {
    match kind {
        JobKind::Deliver => 0,
        JobKind::AwaitAck => 1,
    }
}

/// Key of the `outbox` tree for `job`: its lane, due time, then id.
pub(crate) fn outbox(job: &Job) -> [u8; OUTBOX_KEY_LEN] {
    outbox_key(&job.kind, job.not_before, job.id)
}

fn outbox_key(kind: &JobKind, not_before: DateTime<Utc>, job_id: u64) -> [u8; OUTBOX_KEY_LEN] {
    let mut key = [0; OUTBOX_KEY_LEN];
    key[0] = lane(kind);
    key[1..9].copy_from_slice(&due(not_before));
    key[9..].copy_from_slice(&job_id.to_be_bytes());
    key
}

/// The job id at the end of an outbox key.
pub(crate) fn outbox_job_id(key: &[u8]) -> u64 {
    let mut id = [0; 8];
    id.copy_from_slice(&key[key.len() - 8..]);
    u64::from_be_bytes(id)
}

/// The scan for the lane's due jobs: from the lane's first key up to the greatest key due in the
/// same millisecond as `now`.
pub(crate) fn outbox_due(
    kind: &JobKind,
    now: DateTime<Utc>,
) -> std::ops::RangeInclusive<[u8; OUTBOX_KEY_LEN]> {
    let mut first = [0; OUTBOX_KEY_LEN];
    first[0] = lane(kind);
    first..=outbox_key(kind, now, u64::MAX)
}

/// `module\0`: prefix of the module's entries in the `finished` tree.
pub(crate) fn finished_prefix(module: &str) -> Vec<u8> {
    let mut prefix = join(&[module]);
    prefix.push(SEP);
    prefix
}

/// Key of the `finished` tree: `module\0`, the time the report became final (8 bytes that sort
/// like the time), then its `reports` key. A module's entries sort by that time, so the reports
/// that finished before a cutoff are one range.
pub(crate) fn finished(key: &ReportKey, at: DateTime<Utc>) -> Vec<u8> {
    let report = report(key);
    let mut entry = finished_prefix(&key.module);
    entry.reserve(8 + report.len());
    entry.extend_from_slice(&due(at));
    entry.extend_from_slice(&report);
    entry
}

/// The 8 time bytes of `finished` keys for `at`: an entry whose bytes are greater finished in a
/// later millisecond.
pub(crate) fn finished_time(at: DateTime<Utc>) -> [u8; 8] {
    due(at)
}

/// Key of the `outbox_by_id` tree, and value of the `awaiting` tree.
pub(crate) fn job_id(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// Reads a [`job_id`] back.
pub(crate) fn decode_job_id(bytes: &[u8]) -> crate::StoreResult<u64> {
    let bytes: [u8; 8] = bytes
        .try_into()
        .map_err(|_| crate::StoreError::Corrupt("job id is not 8 bytes".to_owned()))?;
    Ok(u64::from_be_bytes(bytes))
}

/// Key of the `awaiting` tree: the message UUID.
pub(crate) fn awaiting(message_uuid: &str) -> &[u8] {
    message_uuid.as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn outbox_keys_sort_by_lane_then_due_time_then_id() {
        let early = Utc.timestamp_millis_opt(-5_000).unwrap();
        let epoch = Utc.timestamp_millis_opt(0).unwrap();
        let late = Utc.timestamp_millis_opt(1_700_000_000_000).unwrap();
        let (deliver, wait) = (&JobKind::Deliver, &JobKind::AwaitAck);
        let keys = [
            outbox_key(deliver, early, 9),
            outbox_key(deliver, epoch, 1),
            outbox_key(deliver, epoch, 2),
            outbox_key(deliver, late, 0),
            outbox_key(wait, early, 3),
            outbox_key(wait, late, 4),
        ];
        let mut sorted = keys;
        sorted.sort();
        assert_eq!(sorted, keys);
        let due = outbox_due(deliver, epoch);
        assert!(keys[..3].iter().all(|k| due.contains(k)));
        assert!(!due.contains(&keys[3]) && !due.contains(&keys[4]));
        let due = outbox_due(wait, epoch);
        assert!(due.contains(&keys[4]) && !due.contains(&keys[5]) && !due.contains(&keys[0]));
    }

    #[test]
    fn finished_keys_sort_by_time_within_their_module() {
        let report = |module: &str, id: &str| ReportKey {
            owner: "alice".into(),
            module: module.into(),
            id: id.into(),
        };
        let early = Utc.timestamp_millis_opt(-5_000).unwrap();
        let late = Utc.timestamp_millis_opt(1_700_000_000_000).unwrap();
        let prefix = finished_prefix("birthnotice");
        let keys = [
            finished(&report("birthnotice", "z"), early),
            finished(&report("birthnotice", "a"), late),
        ];
        assert!(keys[0] < keys[1]);
        assert!(keys.iter().all(|k| k.starts_with(&prefix)));
        assert_eq!(
            &keys[1][prefix.len()..prefix.len() + 8],
            finished_time(late)
        );
        assert!(!finished(&report("birthnotice2", "a"), early).starts_with(&prefix));
    }

    #[test]
    fn report_prefix_does_not_match_longer_names() {
        let key = ReportKey {
            owner: "alice2".into(),
            module: "birthnotice".into(),
            id: "1".into(),
        };
        assert!(!report(&key).starts_with(&report_prefix("alice", "birthnotice")));
        assert!(report(&key).starts_with(&report_prefix("alice2", "birthnotice")));
    }
}
