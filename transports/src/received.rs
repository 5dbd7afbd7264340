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
