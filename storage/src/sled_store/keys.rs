//! Byte layout of the keys in the sled trees.
//!
//! Text parts are joined by NUL so that a prefix scan over `owner\0module\0` finds exactly one
//! owner's reports in one module (a bare `owner` prefix would also match `owner2`). Names and
//! modules never contain NUL; an id may, since it is always the last part of a report key.
//!
//! Outbox keys start with the job's lane, then its module, then its due time, so that within a
//! lane each module's jobs are one range in the order they come due; the job id after it keeps
//! jobs due in the same millisecond apart and in creation order. Jobs delivering a message for
//! the first time and jobs waiting for an acknowledgement (delivered again when it is late) are
//! two lanes, so that a scan finds new deliveries without reading past however many overdue
//! acknowledgements there are; and a scan reads each module's range on its own, so that one
//! module's backlog never hides another module's due jobs.

use chrono::{DateTime, Utc};

use crate::{Job, JobKind, ReportKey};

const SEP: u8 = 0;

/// What follows the module in an outbox key: the separator, the due time (8 bytes) and the job
/// id (8 bytes).
const OUTBOX_TAIL_LEN: usize = 17;

/// Length of the outbox keys written before they named the module (lane, due time, job id), and
/// before that before lanes existed (due time, job id); the store rewrites both when it opens.
/// A key of the current layout is longer than either: at least 18 bytes, for the empty module
/// name under which the rewrite files a job it cannot read.
pub(crate) const OLD_OUTBOX_KEY_LENS: [usize; 2] = [17, 16];

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

/// Key of the `outbox` tree for `job`: its lane, module, due time, then id.
pub(crate) fn outbox(job: &Job) -> Vec<u8> {
    outbox_key(&job.kind, &job.report.module, job.not_before, job.id)
}

fn outbox_key(kind: &JobKind, module: &str, not_before: DateTime<Utc>, job_id: u64) -> Vec<u8> {
    let mut key = outbox_module_prefix(kind, module.as_bytes());
    key.extend_from_slice(&due(not_before));
    key.extend_from_slice(&job_id.to_be_bytes());
    key
}

/// `lane module \0`: where the module's jobs in the lane begin.
fn outbox_module_prefix(kind: &JobKind, module: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(1 + module.len() + OUTBOX_TAIL_LEN);
    key.push(lane(kind));
    key.extend_from_slice(module);
    key.push(SEP);
    key
}

/// The job id at the end of an outbox key.
pub(crate) fn outbox_job_id(key: &[u8]) -> u64 {
    let mut id = [0; 8];
    id.copy_from_slice(&key[key.len() - 8..]);
    u64::from_be_bytes(id)
}

/// The lane's keys: from its first possible key to the first of the next lane.
pub(crate) fn outbox_lane(kind: &JobKind) -> std::ops::Range<Vec<u8>> {
    vec![lane(kind)]..vec![lane(kind) + 1]
}

/// The module an outbox key of the current layout names.
pub(crate) fn outbox_module(key: &[u8]) -> &[u8] {
    let end = key.len().saturating_sub(OUTBOX_TAIL_LEN);
    key.get(1..end).unwrap_or_default()
}

/// The first key after every key of `module` in the lane (`module` has no NUL, so `module\x01`
/// follows all of `module\0…` and precedes the next module).
pub(crate) fn outbox_after_module(kind: &JobKind, module: &[u8]) -> Vec<u8> {
    let mut key = outbox_module_prefix(kind, module);
    key.pop();
    key.push(SEP + 1);
    key
}

/// The scan for the module's due jobs in the lane: from its first key up to the greatest key
/// due in the same millisecond as `now`.
pub(crate) fn outbox_due(
    kind: &JobKind,
    module: &[u8],
    now: DateTime<Utc>,
) -> std::ops::RangeInclusive<Vec<u8>> {
    let first = outbox_module_prefix(kind, module);
    let mut last = first.clone();
    last.extend_from_slice(&due(now));
    last.extend_from_slice(&u64::MAX.to_be_bytes());
    first..=last
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
    fn outbox_keys_sort_by_lane_then_module_then_due_time_then_id() {
        let early = Utc.timestamp_millis_opt(-5_000).unwrap();
        let epoch = Utc.timestamp_millis_opt(0).unwrap();
        let late = Utc.timestamp_millis_opt(1_700_000_000_000).unwrap();
        let (deliver, wait) = (&JobKind::Deliver, &JobKind::AwaitAck);
        let keys = [
            outbox_key(deliver, "a", late, 0),
            outbox_key(deliver, "b", early, 9),
            outbox_key(deliver, "b", epoch, 1),
            outbox_key(deliver, "b", epoch, 2),
            outbox_key(deliver, "b", late, 0),
            outbox_key(deliver, "bb", early, 0),
            outbox_key(wait, "a", early, 3),
            outbox_key(wait, "b", late, 4),
        ];
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(sorted, keys);
        let due = outbox_due(deliver, b"b", epoch);
        assert!(keys[1..4].iter().all(|k| due.contains(k)));
        assert!(![0, 4, 5, 6].iter().any(|&i| due.contains(&keys[i])));
        let due = outbox_due(wait, b"a", epoch);
        assert!(due.contains(&keys[6]) && !due.contains(&keys[7]) && !due.contains(&keys[0]));
        // Reading on after module "b" skips all of it and lands on "bb".
        let after = outbox_after_module(deliver, b"b");
        assert!(keys[1..5].iter().all(|k| *k < after) && keys[5] > after);
        assert!(keys
            .iter()
            .all(|k| outbox_lane(if k[0] == 0 { deliver } else { wait }).contains(k)));
        assert_eq!(outbox_module(&keys[5]), b"bb");
        assert_eq!(outbox_job_id(&keys[7]), 4);
        assert!(keys.iter().all(|k| !OLD_OUTBOX_KEY_LENS.contains(&k.len())));
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
