//! The received log of the office, paged by [`crate::received::page`].

use super::{ReceivedMessage, Simulator, SimulatorError};
use crate::received::{page, Delivered, Logged, ReceivedPage, ReceivedQuery};

impl Logged for ReceivedMessage {
    fn delivered(&self) -> &Delivered {
        &self.delivered
    }
}

impl Simulator {
    /// One page of what the office received, oldest first, filtered by `query`.
    pub fn received_page(
        &self,
        query: &ReceivedQuery,
    ) -> Result<ReceivedPage<ReceivedMessage>, SimulatorError> {
        let journal = &self.inner.journal;
        Ok(page(journal, query, |message, seq| {
            message.whole(journal, seq)
        })?)
    }
}
