//! The court-message index in PostgreSQL (schema: `migrations/0003_court_messages.sql`): what a
//! sync listed ([`index`]), the listings and scans that read it ([`scans`]), and each message's
//! hydration, deletion and the case references mapped to jobs ([`changes`]).
//!
//! Each entry's record is its [`CourtMessage`] as JSON, exact to the nanosecond; the columns
//! beside it (`live`, the due time while it waits, `job_id`) are derived from the record by
//! [`Columns::of`] and written with it by every change, so that they never disagree. A change to
//! an entry reads it `FOR UPDATE` and writes it back in the same transaction, so that two nodes
//! changing one entry (a hydration and an acknowledgement) take turns instead of overwriting
//! each other.

mod changes;
mod index;
mod scans;

pub(super) use changes::{
    delete_court_message, job_of_case_reference, map_case_reference, record_hydration,
};
pub(super) use index::{index_court_messages, mailbox_sync_cursor};
pub(super) use scans::{
    court_message, court_messages, court_messages_created_before, court_messages_of,
    court_messages_to_hydrate,
};

use chrono::{DateTime, Duration, Utc};
use tokio_postgres::Row;

use super::from_json;
use crate::court_messages::message_what;
use crate::{CourtMessage, Hydration, StoreError, StoreResult, MAX_COURT_MESSAGE_PAGE};

/// `at` as the columns hold a time: the microsecond at or before it (all PostgreSQL keeps of a
/// `timestamptz`) and the nanoseconds past that microsecond, so that comparing the pair compares
/// the exact times.
pub(in crate::postgres) fn split_time(at: DateTime<Utc>) -> (DateTime<Utc>, i32) {
    // Sub-second nanoseconds count up from the second before (also before 1970), so the
    // remainder is the distance to the microsecond at or before `at`.
    let nanos = at.timestamp_subsec_nanos() % 1000;
    let micro = at
        .checked_sub_signed(Duration::nanoseconds(i64::from(nanos)))
        .unwrap_or(at);
    // Below 1000: the cast keeps the value.
    (micro, nanos as i32)
}

/// Index id `id` as the `bigint` column holds it; `None` beyond what it holds (no entry has
/// such an id).
fn db_id(id: u64) -> Option<i64> {
    i64::try_from(id).ok()
}

/// A page of entries in index-id order: the first id it may hold (after `after`) and its length
/// (`limit`, capped at [`MAX_COURT_MESSAGE_PAGE`]); `None` when it is empty (`after` is the
/// largest id there can be, or `limit` is 0), so that no query is made.
fn page(after: Option<u64>, limit: usize) -> Option<(i64, i64)> {
    let first = match after {
        Some(after) => db_id(after.checked_add(1)?)?,
        None => 0,
    };
    (limit > 0).then_some((first, page_limit(limit)))
}

/// `limit` capped at [`MAX_COURT_MESSAGE_PAGE`], as a `LIMIT` parameter.
fn page_limit(limit: usize) -> i64 {
    // The cap is a small constant.
    limit.min(MAX_COURT_MESSAGE_PAGE) as i64
}

/// The columns every query that answers entries selects, in the order [`message_of`] reads.
const ENTRY: &str = "id, record";

/// The entry in `row` (selected as [`ENTRY`]); `Corrupt`, naming the entry, when its record is
/// not one or names another id than its row.
fn message_of(row: &Row) -> StoreResult<CourtMessage> {
    let id: i64 = row
        .try_get(0)
        .map_err(|e| StoreError::Corrupt(format!("court-message index id: {e}")))?;
    let id = u64::try_from(id)
        .map_err(|_| StoreError::Corrupt(format!("court-message index id {id}")))?;
    let record: serde_json::Value = row
        .try_get(1)
        .map_err(|e| StoreError::Corrupt(format!("{}: {e}", message_what(id))))?;
    let message: CourtMessage = from_json(&message_what(id), record)?;
    if message.id != id {
        return Err(StoreError::Corrupt(format!(
            "{} holds the record of court message {}",
            message_what(id),
            message.id
        )));
    }
    Ok(message)
}

/// Every entry in `rows`, in their order.
fn messages_of(rows: &[Row]) -> StoreResult<Vec<CourtMessage>> {
    rows.iter().map(message_of).collect()
}

/// What the columns beside an entry's record hold, derived from it.
pub(in crate::postgres) struct Columns {
    /// Not deleted.
    pub(in crate::postgres) live: bool,
    /// The due time (split by [`split_time`]) while live and waiting: its place in the queue.
    pub(in crate::postgres) due: Option<(DateTime<Utc>, i32)>,
    /// The job its case reference mapped to at its hydration.
    pub(in crate::postgres) job_id: Option<String>,
}

impl Columns {
    /// The columns of `message`.
    pub(in crate::postgres) fn of(message: &CourtMessage) -> Columns {
        let live = message.deleted.is_none();
        let due = match &message.hydration {
            Hydration::Waiting { due_at, .. } if live => Some(split_time(*due_at)),
            _ => None,
        };
        Columns {
            live,
            due,
            job_id: message.job_id.clone(),
        }
    }
}

/// The helpers' arithmetic, which the contract tests reach only at ordinary values.
#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    /// The split loses nothing and orders as the times do, also before 1970.
    #[test]
    fn a_split_time_is_exact_and_orders_as_the_time() {
        let base = Utc.timestamp_opt(-1_000, 123_456_789).unwrap();
        let (micro, nanos) = split_time(base);
        assert_eq!(nanos, 789);
        assert_eq!(micro.timestamp_subsec_nanos(), 123_456_000);
        assert_eq!(micro + Duration::nanoseconds(789), base);
        let later = base + Duration::nanoseconds(300);
        assert!(split_time(base) < split_time(later));
        assert_eq!(split_time(micro), (micro, 0));
    }

    /// A page after the largest id a `bigint` holds, or of length 0, makes no query.
    #[test]
    fn pages_past_the_largest_id_or_of_no_length_are_empty() {
        assert_eq!(page(None, 5), Some((0, 5)));
        assert_eq!(
            page(Some(7), usize::MAX),
            Some((8, MAX_COURT_MESSAGE_PAGE as i64))
        );
        assert_eq!(page(Some(u64::MAX), 5), None);
        assert_eq!(page(Some(i64::MAX as u64), 5), None);
        assert_eq!(page(None, 0), None);
    }
}
