//! The chart of finished reports per minute over the last hour, by module and outcome: inline
//! SVG drawn on the server (no script, no external asset), one line per series, axis labels in
//! local time, and a legend in HTML beside it that wraps on a phone. The numbers are counted in
//! memory since the service started (`metrics::recent`); the chart says since when.

use chrono::{DateTime, Duration, Utc};
use maud::{html, Markup};
use meldewerk_xml::local_time::LocalZone;

use super::when;
use crate::metrics::recent::{PerMinute, MINUTES};

/// Drawing area of the view box. Its units scale with the page's width: about one pixel each on
/// a phone, so that the 12-unit labels stay readable there.
const WIDTH: f64 = 380.0;
const HEIGHT: f64 = 245.0;
const LEFT: f64 = 40.0;
const RIGHT: f64 = 370.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 200.0;

/// Line colours, one per module, told apart also by the legend's names; failures are dashed.
const COLOURS: [&str; 6] = [
    "#1565c0", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037",
];

fn x_of(minute: usize) -> f64 {
    LEFT + (RIGHT - LEFT) * minute as f64 / (MINUTES - 1) as f64
}

fn y_of(count: u32, top: u32) -> f64 {
    BOTTOM - (BOTTOM - TOP) * f64::from(count) / f64::from(top.max(1))
}

/// The chart's figure: the SVG, its legend with each series' total, and since when it counts.
pub(crate) fn chart(data: &PerMinute, since: DateTime<Utc>, zone: &LocalZone) -> Markup {
    let top = data
        .series
        .values()
        .flat_map(|counts| counts.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    let first = data.now - Duration::minutes(MINUTES as i64 - 1);
    let modules: Vec<&str> = {
        let mut names: Vec<&str> = data.series.keys().map(|(m, _)| m.as_str()).collect();
        names.dedup();
        names
    };
    let colour = |module: &str| {
        let index = modules.iter().position(|m| *m == module).unwrap_or(0);
        COLOURS[index % COLOURS.len()]
    };
    // Minutes before the start are unknown, not zero: shaded.
    let unknown_until = (since > first).then(|| {
        let minutes = ((since - first).num_seconds() as f64 / 60.0).min((MINUTES - 1) as f64);
        LEFT + (RIGHT - LEFT) * minutes / (MINUTES - 1) as f64
    });
    let ticks = [0, top / 2, top];
    html! {
        figure.chart #chart {
            svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
                role="img" aria-labelledby="chart-title" font-family="system-ui,sans-serif" font-size="12" {
                title #chart-title { "Finished reports per minute over the last hour, by module and outcome" }
                @if let Some(x) = unknown_until {
                    rect.before-start x=(LEFT) y=(TOP) width=(format!("{:.1}", x - LEFT)) height=(BOTTOM - TOP) fill="#eeeeee" {}
                    text x=(format!("{:.1}", LEFT + 4.0)) y=(TOP + 12.0) fill="#555" { "not counted (before start)" }
                }
                @for tick in ticks {
                    line x1=(LEFT) x2=(RIGHT) y1=(format!("{:.1}", y_of(tick, top))) y2=(format!("{:.1}", y_of(tick, top))) stroke="#ddd" {}
                    text.y-label x=(LEFT - 6.0) y=(format!("{:.1}", y_of(tick, top) + 4.0)) text-anchor="end" { (tick) }
                }
                line x1=(LEFT) x2=(LEFT) y1=(TOP) y2=(BOTTOM) stroke="#555" {}
                line x1=(LEFT) x2=(RIGHT) y1=(BOTTOM) y2=(BOTTOM) stroke="#555" {}
                @for minute in [0, 15, 30, 45, MINUTES - 1] {
                    // The outer labels stay inside the drawing.
                    @let anchor = match minute { 0 => "start", m if m == MINUTES - 1 => "end", _ => "middle" };
                    text.x-label x=(format!("{:.1}", x_of(minute))) y=(BOTTOM + 16.0) text-anchor=(anchor) {
                        (zone.local(first + Duration::minutes(minute as i64)).format("%H:%M"))
                    }
                }
                text x=(format!("{:.1}", (LEFT + RIGHT) / 2.0)) y=(BOTTOM + 36.0) text-anchor="middle" fill="#555" {
                    "local time (" (zone) ")"
                }
                text x="12" y=(format!("{:.1}", (TOP + BOTTOM) / 2.0)) text-anchor="middle" fill="#555"
                    transform=(format!("rotate(-90 12 {:.1})", (TOP + BOTTOM) / 2.0)) { "reports per minute" }
                @for ((module, outcome), counts) in &data.series {
                    @let points: Vec<String> = counts.iter().enumerate()
                        .map(|(minute, count)| format!("{:.1},{:.1}", x_of(minute), y_of(*count, top)))
                        .collect();
                    polyline.series data-module=(module) data-outcome=(outcome)
                        points=(points.join(" ")) fill="none" stroke=(colour(module)) stroke-width="2"
                        stroke-dasharray=[(*outcome == "failure").then_some("5 3")] {
                        title { (module) " " (outcome) ": " (counts.iter().sum::<u32>()) " in the last hour" }
                    }
                }
            }
            figcaption {
                @if data.series.is_empty() {
                    p #chart-empty { "No report finished in the last hour." }
                } @else {
                    ul.legend {
                        @for ((module, outcome), counts) in &data.series {
                            li data-series=(format!("{module} {outcome}")) {
                                svg width="24" height="10" viewBox="0 0 24 10" aria-hidden="true" {
                                    line x1="0" x2="24" y1="5" y2="5" stroke=(colour(module)) stroke-width="3"
                                        stroke-dasharray=[(*outcome == "failure").then_some("5 3")] {}
                                }
                                " " (module) ", " (outcome) ": " (counts.iter().sum::<u32>()) " in the last hour"
                            }
                        }
                    }
                }
                p.since {
                    "Counted in memory since the service started, " (when(zone, since))
                    @if unknown_until.is_some() { "; the minutes before are not known" }
                    "."
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn each_series_is_one_line_and_minutes_before_the_start_are_shaded() {
        let now = DateTime::from_timestamp(1_790_000_040, 0).unwrap();
        let mut series = BTreeMap::new();
        let mut success = [0; MINUTES];
        success[MINUTES - 1] = 4;
        series.insert(("birthnotice".to_owned(), "success"), success);
        let mut failure = [0; MINUTES];
        failure[MINUTES - 2] = 1;
        series.insert(("birthnotice".to_owned(), "failure"), failure);
        let data = PerMinute { now, series };
        let since = now - Duration::minutes(10);
        let svg = chart(&data, since, &LocalZone::default()).into_string();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(r#"data-module="birthnotice" data-outcome="failure""#));
        assert!(svg.contains("birthnotice success: 4 in the last hour"));
        assert!(svg.contains(r#"stroke-dasharray="5 3""#));
        assert!(svg.contains("before-start"));
        // The highest count is the top label of the axis.
        assert!(svg.contains(r#"text-anchor="end">4</text>"#), "{svg}");
        let long_ago = chart(&data, now - Duration::hours(2), &LocalZone::default());
        assert!(!long_ago.into_string().contains("before-start"));
    }
}
