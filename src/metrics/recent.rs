//! Finished reports per minute over the last hour, by module and outcome, for the dashboard's
//! chart, and the reports that failed last, for its queue page. Kept in memory from the engine's events: the store has no index of reports by the
//! time they finished, and reading every report to count them would cost a walk of the whole
//! store per page view. So the numbers start with the process; the chart says since when.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};
use meldewerk_storage::ReportKey;

/// Minutes the ring keeps (the chart's hour).
pub(crate) const MINUTES: usize = 60;

/// A series of the chart: module and outcome (`success`, `failure`).
pub(crate) type SeriesKey = (String, &'static str);

/// Counts of one minute.
struct Minute {
    /// Minutes since the Unix epoch.
    at: i64,
    counts: BTreeMap<SeriesKey, u32>,
}

/// The ring of the last [`MINUTES`] minutes. Bounded: at most one entry per minute, each with at
/// most one count per module and outcome (modules are the configured few).
#[derive(Default)]
pub(crate) struct RecentReports {
    minutes: Mutex<VecDeque<Minute>>,
}

/// What the chart draws: per series, the count of each of the last [`MINUTES`] minutes, oldest
/// first, the last being the current minute.
pub(crate) struct PerMinute {
    /// The current minute's start.
    pub(crate) now: DateTime<Utc>,
    /// Counts per series, oldest minute first.
    pub(crate) series: BTreeMap<SeriesKey, [u32; MINUTES]>,
}

fn minute_of(at: DateTime<Utc>) -> i64 {
    at.timestamp().div_euclid(60)
}

impl RecentReports {
    /// Counts one finished report of `module` with `outcome` at `at`.
    pub(crate) fn record(&self, module: &str, outcome: &'static str, at: DateTime<Utc>) {
        let minute = minute_of(at);
        let mut minutes = self.minutes.lock().unwrap_or_else(PoisonError::into_inner);
        if minutes.back().is_none_or(|last| last.at < minute) {
            minutes.push_back(Minute {
                at: minute,
                counts: BTreeMap::new(),
            });
        }
        while minutes
            .front()
            .is_some_and(|first| first.at <= minute - MINUTES as i64)
        {
            minutes.pop_front();
        }
        // An event is never older than the newest minute by more than a moment; should the clock
        // step back, it is counted in the newest minute rather than lost.
        if let Some(last) = minutes.back_mut() {
            *last.counts.entry((module.to_owned(), outcome)).or_default() += 1;
        }
    }

    /// The last hour up to `now`, minute by minute.
    pub(crate) fn per_minute(&self, now: DateTime<Utc>) -> PerMinute {
        let current = minute_of(now);
        let first = current - (MINUTES as i64 - 1);
        let mut series: BTreeMap<SeriesKey, [u32; MINUTES]> = BTreeMap::new();
        let minutes = self.minutes.lock().unwrap_or_else(PoisonError::into_inner);
        for minute in minutes.iter().filter(|m| (first..=current).contains(&m.at)) {
            let slot = (minute.at - first) as usize;
            for (key, count) in &minute.counts {
                series.entry(key.clone()).or_insert([0; MINUTES])[slot] += count;
            }
        }
        PerMinute {
            now: DateTime::from_timestamp(current * 60, 0).unwrap_or(now),
            series,
        }
    }
}

/// Failed reports the queue page lists.
pub(crate) const FAILURES_KEPT: usize = 50;

/// A report that ended in FAILURE.
#[derive(Clone)]
pub(crate) struct FailedReport {
    /// When it was recorded as failed.
    pub(crate) at: DateTime<Utc>,
    /// Which report.
    pub(crate) report: ReportKey,
    /// Why (the authority's refusal, the last fault, or "discarded by the operator").
    pub(crate) reason: String,
}

/// The last [`FAILURES_KEPT`] reports that ended in FAILURE, newest last. A failed report leaves
/// the outbox and the store indexes no reports by state, so this is where operators find them.
#[derive(Default)]
pub(crate) struct RecentFailures {
    reports: Mutex<VecDeque<FailedReport>>,
}

impl RecentFailures {
    /// Keeps `failed`, forgetting the oldest beyond [`FAILURES_KEPT`].
    pub(crate) fn record(&self, failed: FailedReport) {
        let mut reports = self.reports.lock().unwrap_or_else(PoisonError::into_inner);
        if reports.len() == FAILURES_KEPT {
            reports.pop_front();
        }
        reports.push_back(failed);
    }

    /// The kept reports, newest first.
    pub(crate) fn newest_first(&self) -> Vec<FailedReport> {
        let reports = self.reports.lock().unwrap_or_else(PoisonError::into_inner);
        reports.iter().rev().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(minute: i64, second: u32) -> DateTime<Utc> {
        Utc.timestamp_opt(minute * 60 + i64::from(second), 0)
            .unwrap()
    }

    #[test]
    fn counts_land_in_their_minute_and_age_out_after_an_hour() {
        let recent = RecentReports::default();
        recent.record("birthnotice", "success", at(1000, 5));
        recent.record("birthnotice", "success", at(1000, 50));
        recent.record("birthnotice", "failure", at(1001, 0));
        recent.record("deathnotice", "success", at(1059, 59));
        let chart = recent.per_minute(at(1059, 59));
        assert_eq!(chart.now, at(1059, 0));
        let success = chart.series[&("birthnotice".to_owned(), "success")];
        assert_eq!((success[0], success[1]), (2, 0));
        assert_eq!(chart.series[&("birthnotice".to_owned(), "failure")][1], 1);
        assert_eq!(chart.series[&("deathnotice".to_owned(), "success")][59], 1);
        // A minute later the first minute has left the hour.
        let later = recent.per_minute(at(1060, 0));
        assert!(!later
            .series
            .contains_key(&("birthnotice".to_owned(), "success")));
        assert_eq!(later.series[&("birthnotice".to_owned(), "failure")][0], 1);
        // Recording far later drops what is older than the hour.
        recent.record("birthnotice", "success", at(2000, 0));
        assert_eq!(recent.minutes.lock().unwrap().len(), 1);
    }

    #[test]
    fn only_the_newest_failures_are_kept() {
        let failures = RecentFailures::default();
        for n in 0..FAILURES_KEPT + 2 {
            failures.record(FailedReport {
                at: at(n as i64, 0),
                report: ReportKey {
                    owner: "klinik".into(),
                    module: "birthnotice".into(),
                    id: format!("geb-{n}"),
                },
                reason: "refused".into(),
            });
        }
        let kept = failures.newest_first();
        assert_eq!(kept.len(), FAILURES_KEPT);
        assert_eq!(kept[0].report.id, format!("geb-{}", FAILURES_KEPT + 1));
        assert_eq!(kept[FAILURES_KEPT - 1].report.id, "geb-2");
    }
}
