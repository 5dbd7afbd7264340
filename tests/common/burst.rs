//! How the submissions of a burst ended, for the tests that kill nodes during one: each
//! submission is accepted, in doubt (its connection died while it was posted), or refused.

/// How one submission ended, as its client saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submitted {
    /// The service accepted the report.
    Accepted,
    /// The connection died while the report was being posted: stored or not, nobody knows.
    InDoubt,
    /// The service answered the post with this status.
    Refused(u16),
}

/// The outcomes of a burst once every submission ran, in submission order.
pub fn settled(outcomes: std::sync::Mutex<Vec<Option<Submitted>>>) -> Vec<Submitted> {
    outcomes
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|o| o.expect("every submission ran"))
        .collect()
}

/// Why a submission got no answer to its post.
pub enum Broken {
    /// Before the post, or refused for now (503): nothing can have been stored; try again.
    BeforePost,
    /// During the post.
    DuringPost,
}
