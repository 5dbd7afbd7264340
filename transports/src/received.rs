//! What a simulated authority received, as testers page through it: the query and the page, the
//! same for every simulator (each keeps its own records, indexed by report id and module).

use chrono::{DateTime, Utc};

/// Messages per page when the query does not say.
pub const DEFAULT_PAGE: usize = 100;
/// Most messages one page may hold; a larger `limit` is refused by the operator API.
pub const MAX_PAGE: usize = 1000;

/// Which received messages to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedQuery {
    /// Only messages of this module.
    pub module: Option<String>,
    /// Only messages of this report id.
    pub report_id: Option<String>,
    /// Only messages received at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only messages after this sequence number (the `next` of the previous page).
    pub after: Option<u64>,
    /// At most this many messages (capped at [`MAX_PAGE`]).
    pub limit: usize,
}

impl Default for ReceivedQuery {
    fn default() -> Self {
        ReceivedQuery {
            module: None,
            report_id: None,
            since: None,
            after: None,
            limit: DEFAULT_PAGE,
        }
    }
}

/// One page of the received log: records of type `T` (a simulator's own record type, or JSON
/// for the operator API, which serves every simulator alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedPage<T = serde_json::Value> {
    /// Messages with their sequence numbers, oldest first.
    pub messages: Vec<(u64, T)>,
    /// Sequence number to pass as `after` for the next page; `None` when this page is the last.
    pub next: Option<u64>,
}

impl<T: serde::Serialize> ReceivedPage<T> {
    /// The page with its records as JSON (byte fields as base64, as the record types write them).
    pub fn into_json(self) -> Result<ReceivedPage, serde_json::Error> {
        Ok(ReceivedPage {
            messages: self
                .messages
                .into_iter()
                .map(|(seq, message)| Ok((seq, serde_json::to_value(message)?)))
                .collect::<Result<_, serde_json::Error>>()?,
            next: self.next,
        })
    }
}

impl<T: serde::Serialize> ReceivedPage<T> {
    /// The page as [`crate::Simulated::received_page`] hands it out: records as JSON, one that
    /// does not serialise standing for a corrupt journal.
    pub(crate) fn into_simulated(self) -> Result<ReceivedPage, crate::SimulatorError> {
        self.into_json()
            .map_err(|e| crate::SimulatorError::Corrupt(e.to_string()))
    }
}

/// Journal group of a simulator's records by report id (several records may share one).
pub(crate) const BY_REPORT: &str = "report";
/// Journal group of a simulator's records by module.
pub(crate) const BY_MODULE: &str = "module";

/// Fills an empty `body` of record `seq` from the journal's attachment: a simulator keeps the
/// bytes it received apart from the record, which later states rewrite (records of earlier
/// versions hold them in place, and keep them).
pub(crate) fn fill_body<T>(
    body: &mut Vec<u8>,
    journal: &meldewerk_storage::Journal<T>,
    seq: u64,
) -> Result<(), meldewerk_storage::JournalError>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    if body.is_empty() {
        if let Some(attached) = journal.attachment(seq)? {
            *body = attached;
        }
    }
    Ok(())
}

/// One page of `journal` ([`page`]) with each record's `body` (reached by `body`) filled from
/// its attachment ([`fill_body`]).
pub(crate) fn page_with_bodies<T>(
    journal: &meldewerk_storage::Journal<T>,
    query: &ReceivedQuery,
    body: fn(&mut T) -> &mut Vec<u8>,
) -> Result<ReceivedPage<T>, crate::SimulatorError>
where
    T: Logged + serde::Serialize + serde::de::DeserializeOwned,
{
    Ok(page(journal, query, |mut record, seq| {
        fill_body(body(&mut record), journal, seq)?;
        Ok(record)
    })?)
}

/// What every simulator records of a delivery it received, whatever the authority: part of each
/// simulator's record, whose JSON shows these members beside the authority's own.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Delivered {
    /// When the simulator received it, stamped as its journal numbers the record (after the
    /// simulator's checks), so that it grows with the sequence number: `since` pages by it,
    /// and deliveries checked side by side would otherwise be numbered out of this order.
    pub received_at: DateTime<Utc>,
    /// The integrator's report id the delivery named (a simulator may take it from the message
    /// when the sender left it out).
    pub report_id: String,
    /// The module the delivery came from, e.g. `labreport` (empty when the sender did not say).
    pub module: String,
    /// The sender's idempotency key: the simulator registers each key once and answers a repeat
    /// with the original answer.
    pub idempotency_key: String,
    /// The delivery's message id.
    pub message_uuid: String,
    /// The media type the message was declared as.
    pub content_type: String,
    /// The exact bytes received. The journal keeps them apart from the record (its attachment,
    /// written once), so the record as stored holds an empty body (records of earlier versions
    /// hold them); filled in for every reader (`fill_body`). Always serialised: the received
    /// log lists every record with its body.
    #[serde(default, with = "meldewerk_storage::base64_bytes")]
    pub body: Vec<u8>,
    /// Lower-case hex SHA-256 of `body`, as printed on the receipt.
    pub sha256_hex: String,
    /// How often the same idempotency key came again; each repeat was answered with the original
    /// answer and registered nothing.
    pub repeat_submissions: u32,
}

impl Delivered {
    /// What a simulator records of `delivery`, received at `received_at`, and the body, which
    /// the journal keeps apart from the record (see [`Delivered::body`]; its digest is in the
    /// record).
    pub(crate) fn of(
        delivery: crate::Delivery,
        received_at: DateTime<Utc>,
    ) -> (Delivered, Vec<u8>) {
        let delivered = Delivered {
            received_at,
            sha256_hex: crate::receipt::sha256_hex(&delivery.body),
            report_id: delivery.report_id,
            module: delivery.module,
            idempotency_key: delivery.idempotency_key,
            message_uuid: delivery.message_uuid,
            content_type: delivery.content_type,
            body: Vec::new(),
            repeat_submissions: 0,
        };
        (delivered, delivery.body)
    }

    /// Counts one more repeat of the idempotency key.
    pub(crate) fn count_repeat(&mut self) {
        self.repeat_submissions = self.repeat_submissions.saturating_add(1);
    }
}

/// A simulator's record: what the paging needs to know of it.
pub(crate) trait Logged {
    /// What the simulator recorded of the delivery.
    fn delivered(&self) -> &Delivered;
}

/// One page of `journal`, oldest first, filtered by `query`, each record completed by `whole`
/// (its body read back from the journal's attachment, say), without reading every record: a
/// report filter reads that report's group ([`BY_REPORT`]), a module filter that module's group
/// ([`BY_MODULE`]), `since` finds its starting point by binary search over the journal (each
/// simulator stamps `received_at` as the journal numbers the record, so the times grow with the
/// numbers), and a page reads only its own records plus one to
/// know whether more follow.
pub(crate) fn page<T>(
    journal: &meldewerk_storage::Journal<T>,
    query: &ReceivedQuery,
    whole: impl Fn(T, u64) -> Result<T, meldewerk_storage::JournalError>,
) -> Result<ReceivedPage<T>, meldewerk_storage::JournalError>
where
    T: Logged + serde::Serialize + serde::de::DeserializeOwned,
{
    let limit = query.limit.clamp(1, MAX_PAGE);
    let mut from = query.after.map_or(0, |after| after.saturating_add(1));
    if let Some(since) = query.since {
        from = from.max(journal.partition_point(|m| m.delivered().received_at < since)?);
    }
    // One more than the page, to learn whether another page follows.
    let wanted = limit + 1;
    let mut messages = match (&query.report_id, &query.module) {
        (Some(report_id), module) => {
            // A report's group is small (one record per delivery of that id), so the module is
            // checked on its records rather than through a second index.
            let mut found = journal.range_in(BY_REPORT, report_id, from, usize::MAX)?;
            if let Some(module) = module {
                found.retain(|(_, m)| m.delivered().module == *module);
            }
            found.truncate(wanted);
            found
        }
        (None, Some(module)) => journal.range_in(BY_MODULE, module, from, wanted)?,
        (None, None) => journal.range(from, wanted)?,
    };
    let next = if messages.len() > limit {
        messages.truncate(limit);
        messages.last().map(|(seq, _)| *seq)
    } else {
        None
    };
    let messages = messages
        .into_iter()
        .map(|(seq, message)| Ok((seq, whole(message, seq)?)))
        .collect::<Result<_, meldewerk_storage::JournalError>>()?;
    Ok(ReceivedPage { messages, next })
}
