//! The received log, paged and filtered without reading every record: a report filter reads that
//! report's group, a module filter that module's group, `since` finds its starting point by binary
//! search over the journal (messages are appended in the order they arrive), and a page reads only
//! its own records plus one to know whether more follow.

use super::records::{BY_MODULE, BY_REPORT};
use super::{ReceivedMessage, Simulator, SimulatorError};
use crate::received::{ReceivedPage, ReceivedQuery, MAX_PAGE};

impl Simulator {
    /// One page of what the office received, oldest first, filtered by `query`.
    pub fn received_page(
        &self,
        query: &ReceivedQuery,
    ) -> Result<ReceivedPage<ReceivedMessage>, SimulatorError> {
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
