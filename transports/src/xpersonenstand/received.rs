//! The received log, paged and filtered without reading every record: a report filter reads that
//! report's group, a module filter that module's group, `since` finds its starting point by binary
//! search over the journal (messages are appended in the order they arrive), and a page reads only
//! its own records plus one to know whether more follow.

use chrono::{DateTime, Utc};

use super::records::{BY_MODULE, BY_REPORT};
use super::{ReceivedMessage, Simulator, SimulatorError};

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

/// One page of the received log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedPage {
    /// Messages with their sequence numbers, oldest first.
    pub messages: Vec<(u64, ReceivedMessage)>,
    /// Sequence number to pass as `after` for the next page; `None` when this page is the last.
    pub next: Option<u64>,
}

impl Simulator {
    /// One page of what the office received, oldest first, filtered by `query`.
    pub fn received_page(&self, query: &ReceivedQuery) -> Result<ReceivedPage, SimulatorError> {
        let journal = &self.inner.journal;
        let limit = query.limit.clamp(1, MAX_PAGE);
        let mut from = query.after.map_or(0, |after| after.saturating_add(1));
        if let Some(since) = query.since {
            from = from.max(journal.partition_point(|m| m.received_at < since)?);
        }
        // One more than the page, to learn whether another page follows.
        let wanted = limit + 1;
        let mut messages = match (&query.report_id, &query.module) {
            (Some(report_id), module) => {
                // A report's group is small (one message per delivery of that id), so the module
                // is checked on its records rather than through a second index.
                let mut found = journal.range_in(BY_REPORT, report_id, from, usize::MAX)?;
                if let Some(module) = module {
                    found.retain(|(_, m)| &m.module == module);
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
            .map(|(seq, message)| Ok((seq, message.whole(journal, seq)?)))
            .collect::<Result<_, SimulatorError>>()?;
        Ok(ReceivedPage { messages, next })
    }
}
