//! The service's local time zone (`time_zone`, default `Europe/Berlin`): a date and a time typed
//! into a form become an `xs:dateTime` with the offset in force on that day, and pages and
//! receipts show instants in local time beside UTC. Daylight saving time is taken from the tz
//! database compiled into the binary.

use std::fmt;
use std::str::FromStr;

use chrono::offset::LocalResult;
use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, SecondsFormat, TimeZone, Utc};
use chrono_tz::Tz;

/// A time zone of the tz database, e.g. `Europe/Berlin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalZone(Tz);

impl Default for LocalZone {
    fn default() -> Self {
        LocalZone(Tz::Europe__Berlin)
    }
}

impl FromStr for LocalZone {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        name.parse::<Tz>().map(LocalZone).map_err(|_| {
            format!(
                "time_zone: '{name}' is not a time zone of the tz database (e.g. Europe/Berlin)"
            )
        })
    }
}

impl fmt::Display for LocalZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

/// A local date and time that cannot be turned into an instant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocalTimeError {
    /// The clocks skipped this time (spring forward): it never happened.
    #[error("{0} gibt es wegen der Zeitumstellung an diesem Tag nicht")]
    Skipped(String),
}

impl LocalZone {
    /// The instant of `date` at `time` in this zone, with the offset in force then. A time the
    /// clocks skipped is refused; a time that happened twice (fall back) is the first one, in
    /// summer time, as a clerk reading the wall clock during that hour most likely means.
    pub fn date_time(
        &self,
        date: NaiveDate,
        time: NaiveTime,
    ) -> Result<DateTime<FixedOffset>, LocalTimeError> {
        match self.0.from_local_datetime(&date.and_time(time)) {
            LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => Ok(at.fixed_offset()),
            LocalResult::None => Err(LocalTimeError::Skipped(format!(
                "{} {}",
                date.format("%d.%m.%Y"),
                time.format("%H:%M")
            ))),
        }
    }

    /// `at` in this zone, as an offset date-time (its date and time are what a form shows).
    pub fn local(&self, at: DateTime<Utc>) -> DateTime<FixedOffset> {
        at.with_timezone(&self.0).fixed_offset()
    }

    /// `at` for people: `25.11.2026, 10:15:00 Uhr (UTC+01:00)`.
    pub fn show(&self, at: DateTime<Utc>) -> String {
        self.local(at)
            .format("%d.%m.%Y, %H:%M:%S Uhr (UTC%:z)")
            .to_string()
    }

    /// `at` in local time and in UTC: `25.11.2026, 10:15:00 Uhr (UTC+01:00) = 2026-11-25T09:15:00Z`.
    pub fn show_with_utc(&self, at: DateTime<Utc>) -> String {
        format!(
            "{} = {}",
            self.show(at),
            at.to_rfc3339_opts(SecondsFormat::Secs, true)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn time(s: &str) -> NaiveTime {
        NaiveTime::parse_from_str(s, "%H:%M").unwrap()
    }

    #[test]
    fn the_offset_follows_daylight_saving_time() {
        let berlin = LocalZone::default();
        let winter = berlin.date_time(day("2026-01-15"), time("10:15")).unwrap();
        assert_eq!(winter.to_rfc3339(), "2026-01-15T10:15:00+01:00");
        let summer = berlin.date_time(day("2026-07-15"), time("10:15")).unwrap();
        assert_eq!(summer.to_rfc3339(), "2026-07-15T10:15:00+02:00");
    }

    #[test]
    fn a_skipped_time_is_refused_and_a_repeated_one_is_the_first() {
        let berlin = LocalZone::default();
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST.
        let error = berlin
            .date_time(day("2026-03-29"), time("02:30"))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "29.03.2026 02:30 gibt es wegen der Zeitumstellung an diesem Tag nicht"
        );
        // 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
        let twice = berlin.date_time(day("2026-10-25"), time("02:30")).unwrap();
        assert_eq!(twice.to_rfc3339(), "2026-10-25T02:30:00+02:00");
    }

    #[test]
    fn instants_are_shown_locally_beside_utc() {
        let berlin = LocalZone::default();
        let at = "2026-11-25T09:15:00Z".parse::<DateTime<Utc>>().unwrap();
        assert_eq!(berlin.show(at), "25.11.2026, 10:15:00 Uhr (UTC+01:00)");
        assert_eq!(
            berlin.show_with_utc(at),
            "25.11.2026, 10:15:00 Uhr (UTC+01:00) = 2026-11-25T09:15:00Z"
        );
        let zone: LocalZone = "America/New_York".parse().unwrap();
        assert_eq!(zone.to_string(), "America/New_York");
        assert!("Mars/Olympus".parse::<LocalZone>().is_err());
    }
}
