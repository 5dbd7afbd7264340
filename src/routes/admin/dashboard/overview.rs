//! `GET /admin/`: the overview. The health of every actor at a glance, the modules with their
//! paused state and the buttons to pause and resume them, the transports with their last error
//! and whether they have recovered since, and the chart of the last hour. It refreshes itself
//! every few seconds without JavaScript and is readable on a phone (each row becomes a card on
//! narrow screens). The same data as `/admin/api/v1/actors`, `/admin/api/v1/transports` and
//! `/metrics`.
//!
//! `POST /admin/modules/{module}/pause` and `…/resume` run the API's operation
//! (`modules::set_paused`) and come back here with what was done.

use std::sync::Arc;

use actix_web::{get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use maud::{html, Markup};
use meldewerk_actors::{ActorHealth, ActorState, BreakerState, Engine, TransportHealth};
use meldewerk_storage::{NodeStatus, Store};
use meldewerk_xml::local_time::LocalZone;
use serde::Deserialize;

use super::{
    ago, chart, checked_form, csrf_field, done, failure_page, frame, no_action, page, see_other,
    when,
};
use super::{ActionForm, FormRefusals, PageRefusals};
use crate::auth::operator::OperatorCredentials;
use crate::auth::Operator;
use crate::metrics::Metrics;
use crate::routes::admin::actors::node_list;
use crate::routes::admin::modules::set_paused;
use crate::transports::Transports;
use crate::web::WebSettings;

/// Seconds between two refreshes of the page.
const REFRESH_SECS: u32 = 5;

/// The prefix of a module actor's name; the rest is the module.
const MODULE_ACTOR: &str = "module:";

fn state_name(actor: &ActorHealth) -> &'static str {
    match actor.state {
        // A paused module's actor runs, but delivers nothing: that is what operators need to see.
        ActorState::Running if actor.paused => "paused",
        // Another node does this work now; this one takes over if that node stops.
        ActorState::Running if actor.standby => "standby",
        ActorState::Running => "running",
        ActorState::Restarting => "restarting",
        ActorState::Degraded => "degraded",
        ActorState::Stopped => "stopped",
    }
}

fn row(actor: &ActorHealth, now: DateTime<Utc>) -> Markup {
    let state = state_name(actor);
    let heartbeat = actor
        .last_heartbeat
        .map(|at| ago(now, at))
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

/// A transport's last error with its time: while faults go on it is the present; once the
/// transport answered again (no fault in a row), it is history.
fn last_error(transport: &TransportHealth, zone: &LocalZone, now: DateTime<Utc>) -> Markup {
    let Some(error) = &transport.last_error else {
        return html! { "–" };
    };
    let recovered = transport.consecutive_failures == 0;
    html! {
        @if let Some(at) = transport.last_error_at {
            @if recovered {
                span.past { "last error " (ago(now, at)) ", recovered since" }
            } @else {
                span.state-degraded { "failing: " (transport.consecutive_failures) " in a row, last " (ago(now, at)) }
            }
            br; (when(zone, at)) br;
        }
        span.error { (error) }
    }
}

fn transport_row(
    transport: &TransportHealth,
    registry: &Transports,
    zone: &LocalZone,
    now: DateTime<Utc>,
) -> Markup {
    let (state, class) = match transport.breaker {
        BreakerState::Closed => ("closed", "state-running"),
        BreakerState::HalfOpen => ("half-open", "state-restarting"),
        BreakerState::Open => ("open", "state-degraded"),
    };
    html! {
        tr {
            td data-label="Transport" { (transport.name) }
            td data-label="Authority" { (registry.describe(&transport.name).unwrap_or_default()) }
            td data-label="Breaker" class=(class) { (state) }
            td data-label="Calls" { (transport.calls) }
            td data-label="Failures" { (transport.failures) }
            td data-label="Latency" { (format!("{:.1} ms", transport.latency_ms)) }
            td data-label="Last error" { (last_error(transport, zone, now)) }
        }
    }
}

/// A module's row: its delivery state and the button that changes it.
fn module_row(actor: &ActorHealth, module: &str, credentials: &OperatorCredentials) -> Markup {
    let (state, action, label) = if actor.paused {
        ("paused", "resume", "Resume deliveries")
    } else {
        ("delivering", "pause", "Pause deliveries")
    };
    let class = if actor.paused {
        "state-paused"
    } else {
        "state-running"
    };
    html! {
        tr id=(format!("module-{module}")) {
            td data-label="Module" { (module) }
            td data-label="Deliveries" class=(class) { (state) }
            td data-label="In flight" { (actor.backlog) }
            td data-label="Action" {
                form.inline method="post" action=(format!("/admin/modules/{module}/{action}")) {
                    (csrf_field(credentials))
                    button type="submit" { (label) }
                }
            }
        }
    }
}

/// A node's row: whether it lives, since when, what it holds, and its actors in brief.
fn node_row(node: &NodeStatus, this: &str, zone: &LocalZone, now: DateTime<Utc>) -> Markup {
    let (state, class) = match (node.alive, node.stopped_at) {
        (true, _) => ("alive", "state-running"),
        (false, Some(_)) => ("stopped", "state-stopped"),
        // Its heartbeat stopped without a goodbye: its leases run out, and others take over.
        (false, None) => ("lost", "state-degraded"),
    };
    let actors: Vec<&serde_json::Value> = node.health["actors"]
        .as_array()
        .map(|actors| actors.iter().collect())
        .unwrap_or_default();
    let in_state = |state: &str| actors.iter().filter(|a| a["state"] == state).count();
    let standby = actors.iter().filter(|a| a["standby"] == true).count();
    html! {
        tr {
            td data-label="Node" {
                (node.name) @if node.name == this { " (this node)" }
            }
            td data-label="State" class=(class) { (state) }
            td data-label="Started" { (when(zone, node.started_at)) }
            td data-label="Last seen" { (ago(now, node.seen_at)) }
            td data-label="Leases" { (node.claims) }
            td data-label="Actors" {
                (actors.len()) " actors, " (in_state("degraded")) " degraded, "
                (standby) " standing by"
            }
        }
    }
}

/// The nodes on the store, or why they cannot be listed now.
fn nodes_section(
    nodes: &Result<Vec<NodeStatus>, String>,
    this: &str,
    zone: &LocalZone,
    now: DateTime<Utc>,
) -> Markup {
    html! {
        h2 { "Nodes" }
        @match nodes {
            Ok(nodes) => table #nodes {
                thead { tr {
                    th { "Node" } th { "State" } th { "Started" } th { "Last seen" }
                    th { "Leases" } th { "Actors" }
                } }
                tbody { @for node in nodes { (node_row(node, this, zone, now)) } }
            },
            Err(e) => p.error #nodes { "The node list cannot be read now: " (e) },
        }
    }
}

/// What the page says after an action (`?done=pause&module=…`), for a module the engine serves;
/// with several nodes on the store, that it holds for all of them.
fn done_note(query: &DoneQuery, modules: &[&str], several_nodes: bool) -> Option<Markup> {
    let module = modules
        .iter()
        .find(|m| query.module.as_deref() == Some(**m))?;
    let (done_what, then) = match query.done.as_deref()? {
        "pause" => ("paused", "its reports wait in the outbox"),
        "resume" => ("resumed", "its waiting reports are delivered now"),
        _ => return None,
    };
    let everywhere = if several_nodes { " on every node" } else { "" };
    Some(done(&format!(
        "Module {module} {done_what}{everywhere}: {then}"
    )))
}

/// The overview page.
fn render(
    health: &[ActorHealth],
    (nodes, this): (&Result<Vec<NodeStatus>, String>, &str),
    (transports, registry): (&[TransportHealth], &Transports),
    metrics: &Metrics,
    zone: &LocalZone,
    credentials: &OperatorCredentials,
    query: &DoneQuery,
) -> Markup {
    let now = Utc::now();
    let modules: Vec<(&ActorHealth, &str)> = health
        .iter()
        .filter_map(|a| Some((a, a.name.strip_prefix(MODULE_ACTOR)?)))
        .collect();
    let degraded = health
        .iter()
        .filter(|a| a.state == ActorState::Degraded)
        .count();
    let outbox = health
        .iter()
        .find(|a| a.name == "outbox")
        .map_or(0, |a| a.backlog);
    let failed: u64 = modules.iter().map(|(a, _)| a.failed).sum();
    let processed: u64 = modules.iter().map(|(a, _)| a.processed).sum();
    let paused = modules.iter().filter(|(a, _)| a.paused).count();
    let names: Vec<&str> = modules.iter().map(|(_, m)| *m).collect();
    let several_nodes = matches!(nodes, Ok(list) if list.len() > 1);
    html! {
        h1 { "meldewerk – operations" }
        @if let Some(note) = done_note(query, &names, several_nodes) { (note) }
        div.summary {
            div { "Degraded actors" strong #degraded { (degraded) } }
            div { "Outbox backlog" strong #outbox { (outbox) } }
            div { "Paused modules" strong #paused { (paused) } }
            div { "Reports finished" strong #processed { (processed) } }
            div { "Reports failed" strong #failed { (failed) } }
        }
        p.since #since {
            "Counts since the service started, " (when(zone, metrics.since()))
            " (" (ago(now, metrics.since())) "); a restart starts them at 0."
        }
        table {
            thead { tr {
                th { "Actor" } th { "State" } th { "Restarts" } th { "Backlog" }
                th { "Processed" } th { "Failed" } th { "Heartbeat" } th { "Last error" }
            } }
            tbody { @for actor in health { (row(actor, now)) } }
        }
        (nodes_section(nodes, this, zone, now))
        h2 { "Modules" }
        table #modules {
            thead { tr { th { "Module" } th { "Deliveries" } th { "In flight" } th { "Action" } } }
            tbody { @for (actor, module) in &modules { (module_row(actor, module, credentials)) } }
        }
        h2 { "Transports" }
        table {
            thead { tr {
                th { "Transport" } th { "Authority" } th { "Breaker" } th { "Calls" } th { "Failures" }
                th { "Latency" } th { "Last error" }
            } }
            tbody { @for transport in transports { (transport_row(transport, registry, zone, now)) } }
        }
        h2 { "Reports per minute, last hour" }
        (chart::chart(&metrics.per_minute(now), metrics.since(), zone))
        footer {
            "Refreshes every " (REFRESH_SECS) " seconds. JSON: "
            a href="/admin/api/v1/actors" { "/admin/api/v1/actors" }
            ", Prometheus: " a href="/metrics" { "/metrics" } "."
        }
    }
}

/// What an action left for the page to say.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DoneQuery {
    /// The action done (`pause`, `resume`), for the note the page shows.
    done: Option<String>,
    /// The module it was done to.
    module: Option<String>,
}

/// `GET /admin/`: the overview (operator credentials).
#[utoipa::path(
    params(DoneQuery),
    responses(
        (status = 200, description = "The overview page.", content_type = "text/html", body = String),
        PageRefusals,
    ),
)]
#[get("/")]
pub async fn dashboard(
    _operator: Operator,
    (engine, store): (web::Data<Engine>, web::Data<Arc<dyn Store>>),
    metrics: web::Data<Metrics>,
    settings: web::Data<WebSettings>,
    credentials: web::Data<OperatorCredentials>,
    query: web::Query<DoneQuery>,
    registry: web::Data<Transports>,
) -> HttpResponse {
    let nodes = node_list(&***store, &engine, &settings.node, metrics.since())
        .await
        .map_err(|e| e.to_string());
    let body = render(
        &engine.health(),
        (&nodes, &settings.node),
        (&engine.transports(), &registry),
        &metrics,
        &settings.time_zone,
        &credentials,
        &query,
    );
    page(
        actix_web::http::StatusCode::OK,
        frame("meldewerk – operations", Some(REFRESH_SECS), body),
    )
}

/// `POST /admin/modules/{module}/pause` and `…/resume`: the forms' pause and resume, then back
/// to the overview.
#[utoipa::path(
    operation_id = "dashboard_module_action",
    params(
        ("module" = String, Path, description = "The module's path segment."),
        ("action" = String, Path, pattern = "^(pause|resume)$", description = "What to do."),
    ),
    request_body(content = ActionForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Done: back to the overview, which says so.",
            headers(("Location" = String))),
        FormRefusals,
        PageRefusals,
    ),
)]
#[post("/modules/{module}/{action}")]
pub async fn act(
    operator: Operator,
    path: web::Path<(String, String)>,
    posted: web::Form<Vec<(String, String)>>,
    credentials: web::Data<OperatorCredentials>,
    engine: web::Data<Engine>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    let (module, action) = path.into_inner();
    if let Err(refused) = checked_form(&posted, &credentials) {
        return *refused;
    }
    let paused = match action.as_str() {
        "pause" => true,
        "resume" => false,
        _ => return no_action(&action),
    };
    match set_paused(&operator.0, &module, paused, &engine, &store).await {
        Ok(()) => see_other(format!("/admin/?done={action}&module={module}")),
        Err(failure) => failure_page(failure),
    }
}
