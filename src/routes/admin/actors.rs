//! `GET /admin/api/v1/actors`: health of every engine actor of this node; `GET
//! /admin/api/v1/nodes`: every node on the store, with its actors.

use std::sync::Arc;

use actix_web::{get, web, HttpResponse};
use chrono::{DateTime, Utc};
use meldewerk_actors::{ActorHealth, Engine};
use meldewerk_storage::{NodeStatus, Store};
use serde::Serialize;
use utoipa::ToSchema;

use super::openapi::Refusals;
use super::store_failed;
use crate::auth::Operator;
use crate::metrics::Metrics;
use crate::web::WebSettings;

/// One actor's health, named with the node it runs on.
#[derive(Serialize, ToSchema)]
pub(crate) struct NodeActor {
    /// The node (`node.name`) whose actor this is.
    node: String,
    /// The actor's health.
    #[serde(flatten)]
    health: ActorHealth,
}

/// State, restarts, last error, backlog, processed and failed counts, last heartbeat per actor
/// of the node that answers, each entry naming the node.
#[utoipa::path(responses(
    (status = 200, description = "Every actor of this node, in registration order.", body = Vec<NodeActor>),
    Refusals,
))]
#[get("/actors")]
pub async fn actors(
    _operator: Operator,
    engine: web::Data<Engine>,
    settings: web::Data<WebSettings>,
) -> HttpResponse {
    let actors: Vec<NodeActor> = engine
        .health()
        .into_iter()
        .map(|health| NodeActor {
            node: settings.node.clone(),
            health,
        })
        .collect();
    HttpResponse::Ok().json(actors)
}

/// The nodes on the store and the node that answers.
#[derive(Serialize, ToSchema)]
pub(crate) struct Nodes {
    /// The node that answers (`node.name`).
    node: String,
    /// Every node that has used the store, by name: on a store several nodes share, as each
    /// last published itself (every few seconds; the answering node's own actors are current);
    /// with the embedded store, this node alone.
    #[schema(value_type = Vec<Object>)]
    nodes: Vec<NodeStatus>,
}

/// Every node with its liveness, the jobs it holds a lease on, and its actors' health.
#[utoipa::path(responses(
    (status = 200, description = "Every node, by name.", body = Nodes),
    (status = 503, description = "The store cannot be read now."),
    Refusals,
))]
#[get("/nodes")]
pub async fn nodes(
    _operator: Operator,
    engine: web::Data<Engine>,
    store: web::Data<Arc<dyn Store>>,
    settings: web::Data<WebSettings>,
    metrics: web::Data<Metrics>,
) -> HttpResponse {
    match node_list(&***store, &engine, &settings.node, metrics.since()).await {
        Ok(list) => HttpResponse::Ok().json(Nodes {
            node: settings.node.clone(),
            nodes: list,
        }),
        Err(e) => store_failed(e),
    }
}

/// Every node on the store, this one (`node`, running since `since`) with its current health.
pub(crate) async fn node_list(
    store: &dyn Store,
    engine: &Engine,
    node: &str,
    since: DateTime<Utc>,
) -> Result<Vec<NodeStatus>, meldewerk_storage::StoreError> {
    let mut list = store.nodes().await?;
    let health = serde_json::json!({ "actors": engine.health() });
    match list.iter_mut().find(|n| n.name == node) {
        Some(this) => this.health = health,
        // The embedded store keeps no list: this node is the only one.
        None => list.push(NodeStatus {
            name: node.to_owned(),
            started_at: since,
            seen_at: Utc::now(),
            stopped_at: None,
            alive: true,
            claims: engine.in_flight() as u64,
            health,
        }),
    }
    Ok(list)
}
