//! `GET /admin/`: the operators' dashboard. The health of every actor at a glance, refreshing
//! itself every few seconds without JavaScript, readable on a phone (each row becomes a card on
//! narrow screens). The same data as `/admin/api/v1/actors` and `/metrics`.

use actix_web::{get, web, HttpResponse};
use chrono::Utc;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use meldewerk_actors::{ActorHealth, ActorState, BreakerState, Engine, TransportHealth};

use crate::auth::Operator;

/// Seconds between two refreshes of the page.
const REFRESH_SECS: u32 = 5;

const STYLE: &str = r#"
body{font-family:system-ui,sans-serif;margin:1rem auto;max-width:70rem;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.5rem}.summary{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.summary div{border:1px solid #bbb;border-radius:6px;padding:.5rem 1rem}.summary strong{display:block;font-size:1.4rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
.state-running{color:#1b5e20}.state-degraded{color:#b00020;font-weight:700}.state-restarting{color:#a65e00}.state-stopped{color:#555}
.error{font-family:monospace;font-size:.85rem;word-break:break-word}footer{margin-top:1rem;color:#555;font-size:.85rem}
@media (max-width:40rem){table,thead,tbody,tr,td{display:block}thead{display:none}
tr{border:1px solid #bbb;border-radius:6px;margin-bottom:.75rem;padding:.25rem}td{border:0}
td::before{content:attr(data-label) ": ";font-weight:600}}
"#;

fn state_name(state: ActorState) -> &'static str {
    match state {
        ActorState::Running => "running",
        ActorState::Restarting => "restarting",
        ActorState::Degraded => "degraded",
        ActorState::Stopped => "stopped",
    }
}

fn row(actor: &ActorHealth) -> Markup {
    let state = state_name(actor.state);
    let heartbeat = actor
        .last_heartbeat
        .map(|at| format!("{}s ago", (Utc::now() - at).num_seconds().max(0)))
        .unwrap_or_else(|| "never".into());
    html! {
        tr {
            td data-label="Actor" { (actor.name) }
            td data-label="State" class=(format!("state-{state}")) { (state) }
            td data-label="Restarts" { (actor.restarts) }
            td data-label="Backlog" { (actor.backlog) }
            td data-label="Processed" { (actor.processed) }
            td data-label="Failed" { (actor.failed) }
            td data-label="Heartbeat" { (heartbeat) }
            td data-label="Last error" class="error" { (actor.last_error.as_deref().unwrap_or("–")) }
        }
    }
}

fn transport_row(transport: &TransportHealth) -> Markup {
    let (state, class) = match transport.breaker {
        BreakerState::Closed => ("closed", "state-running"),
        BreakerState::HalfOpen => ("half-open", "state-restarting"),
        BreakerState::Open => ("open", "state-degraded"),
    };
    html! {
        tr {
            td data-label="Transport" { (transport.name) }
            td data-label="Breaker" class=(class) { (state) }
            td data-label="Calls" { (transport.calls) }
            td data-label="Failures" { (transport.failures) }
            td data-label="Latency" { (format!("{:.1} ms", transport.latency_ms)) }
            td data-label="Last error" class="error" { (transport.last_error.as_deref().unwrap_or("–")) }
        }
    }
}

/// The dashboard page.
fn render(health: &[ActorHealth], transports: &[TransportHealth]) -> Markup {
    let degraded = health
        .iter()
        .filter(|a| a.state == ActorState::Degraded)
        .count();
    let outbox = health
        .iter()
        .find(|a| a.name == "outbox")
        .map_or(0, |a| a.backlog);
    let failed: u64 = health
        .iter()
        .filter(|a| a.name.starts_with("module:"))
        .map(|a| a.failed)
        .sum();
    let processed: u64 = health
        .iter()
        .filter(|a| a.name.starts_with("module:"))
        .map(|a| a.processed)
        .sum();
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="refresh" content=(REFRESH_SECS);
                title { "meldewerk – operations" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                main {
                    h1 { "meldewerk – operations" }
                    div.summary {
                        div { "Degraded actors" strong #degraded { (degraded) } }
                        div { "Outbox backlog" strong #outbox { (outbox) } }
                        div { "Reports finished" strong #processed { (processed) } }
                        div { "Reports failed" strong #failed { (failed) } }
                    }
                    table {
                        thead { tr {
                            th { "Actor" } th { "State" } th { "Restarts" } th { "Backlog" }
                            th { "Processed" } th { "Failed" } th { "Heartbeat" } th { "Last error" }
                        } }
                        tbody { @for actor in health { (row(actor)) } }
                    }
                    h2 { "Transports" }
                    table {
                        thead { tr {
                            th { "Transport" } th { "Breaker" } th { "Calls" } th { "Failures" }
                            th { "Latency" } th { "Last error" }
                        } }
                        tbody { @for transport in transports { (transport_row(transport)) } }
                    }
                    footer {
                        "Refreshes every " (REFRESH_SECS) " seconds. JSON: "
                        a href="/admin/api/v1/actors" { "/admin/api/v1/actors" }
                        ", Prometheus: " a href="/metrics" { "/metrics" } "."
                    }
                }
            }
        }
    }
}

/// `GET /admin/`: the dashboard (operator credentials).
#[get("/admin/")]
pub async fn dashboard(_operator: Operator, engine: web::Data<Engine>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(render(&engine.health(), &engine.transports()).into_string())
}
