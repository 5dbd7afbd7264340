//! The facility registry and the customers' scopes in the operator API, the same records as
//! `meldewerk facility …` and `meldewerk customer scope …` keep:
//! - `GET /admin/api/v1/facilities[?after=&limit=]`: `{"facilities": [...], "next"}` in BSNR order;
//! - `GET`, `PUT`, `DELETE /admin/api/v1/facilities/{bsnr}`;
//! - `GET`, `PUT /admin/api/v1/customers/{customer}/scope`: `{"customer", "iks": [...]}`.
//!
//! Bodies are read strictly ([`crate::routes::json`]) and every problem is answered at once in
//! `{"errors": [...]}`. Every change is recorded in the audit log (`add-facility`,
//! `change-facility`, `remove-facility`, `set-scope`).

use std::collections::BTreeSet;
use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{delete, get, put, web, HttpRequest, HttpResponse};
use chrono::Utc;
use meldewerk_storage::{Bsnr, CustomerScope, Facility, FacilityPut, Ik, Store};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::failure::Failure;
use super::jobs::{next_after, Page};
use super::openapi::{BodyRefusals, CrossSite, Errors, FacilityBody, Refusals, ScopeBody};
use super::{audit, store_failed};
use crate::auth::Operator;
use crate::facilities::{customer_id, FacilityInput, Given, BODY_FIELDS};
use crate::routes::json;
use crate::telemetry::log_str;
use crate::web::WebSettings;

/// The BSNR of a path; its problem goes to `errors` (`bsnr must be exactly 9 digits`).
fn path_bsnr(text: &str, errors: &mut Vec<String>) -> Option<Bsnr> {
    Bsnr::parse(text)
        .map_err(|e| errors.push(format!("bsnr {e}")))
        .ok()
}

/// [`path_bsnr`] for a request that has nothing else to check.
fn only_bsnr(text: &str) -> Result<Bsnr, Failure> {
    let mut errors = Vec::new();
    path_bsnr(text, &mut errors).ok_or(Failure::Invalid(errors))
}

fn not_found(bsnr: &Bsnr) -> Failure {
    Failure::NotFound(format!("facility {bsnr} not found"))
}

/// Members of `object` (at `prefix`, `""` or `address.`) that are not in `allowed`.
pub(super) fn unknown_members(
    object: &Map<String, Value>,
    prefix: &str,
    allowed: &[&str],
    errors: &mut Vec<String>,
) {
    for name in object.keys() {
        if !allowed.contains(&name.as_str()) {
            errors.push(format!("{prefix}{} is not a known field", log_str(name)));
        }
    }
}

/// A string member as given; any other type is a problem under `path`.
pub(super) fn string_member<'a>(
    object: &'a Map<String, Value>,
    name: &str,
    path: &str,
    errors: &mut Vec<String>,
) -> Given<'a> {
    match object.get(name) {
        None | Some(Value::Null) => Given::Missing,
        Some(Value::String(text)) => Given::Text(text),
        Some(_) => {
            errors.push(format!("{path} must be a string"));
            Given::Refused
        }
    }
}

/// `GET /admin/api/v1/facilities[?after=&limit=]`: a page of facilities in BSNR order,
/// `{"facilities": [...], "next": <bsnr or null>}`; `after` is the BSNR to continue after.
#[utoipa::path(
    operation_id = "list_facilities",
    params(
        ("after" = Option<String>, Query, pattern = "^[0-9]{9}$", min_length = 9, max_length = 9,
            description = "The BSNR the page starts after: the `next` of the previous page."),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 1000, description = "Items on the page: from 1 to 1000, 100 when absent."),
    ),
    responses(
        (status = 200, description = "A page of facilities.", body = FacilitiesPage),
        (status = 400, description = "An `after` that is no BSNR, an unusable `limit`, or an \
            unknown parameter.", body = Errors),
        Refusals,
    ),
)]
#[get("/facilities")]
#[tracing::instrument(name = "admin_list_facilities", skip_all)]
pub async fn list(
    _operator: Operator,
    page: web::Query<Page<String>>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    let (limit, after) = match page.limit_after(Bsnr::parse) {
        Ok(paging) => paging,
        Err(answer) => return *answer,
    };
    match store.facilities(after.as_ref(), limit).await {
        Ok(facilities) => HttpResponse::Ok().json(FacilitiesPage {
            next: next_after(&facilities, limit, |f| f.bsnr.clone()),
            facilities,
        }),
        Err(e) => store_failed(e),
    }
}

/// A page of the facility registry.
#[derive(serde::Serialize, ToSchema)]
pub(crate) struct FacilitiesPage {
    /// The facilities in BSNR order.
    facilities: Vec<Facility>,
    /// The BSNR to ask for `after`, when the page is full; null on the last page.
    #[schema(required = true)]
    next: Option<Bsnr>,
}

/// `GET /admin/api/v1/facilities/{bsnr}`: the facility; 404 unknown, 400 not a BSNR.
#[utoipa::path(
    operation_id = "show_facility",
    params(("bsnr" = String, Path, pattern = "^[0-9]{9}$", description = "The facility's BSNR.")),
    responses(
        (status = 200, description = "The facility.", body = Facility),
        (status = 400, description = "The path names no BSNR.", body = Errors),
        (status = 404, description = "No such facility.", body = Errors),
        Refusals,
    ),
)]
#[get("/facilities/{bsnr}")]
#[tracing::instrument(name = "admin_get_facility", skip_all)]
pub async fn show(
    _operator: Operator,
    bsnr: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let bsnr = only_bsnr(&bsnr)?;
    let facility = store
        .facility(&bsnr)
        .await?
        .ok_or_else(|| not_found(&bsnr))?;
    Ok(HttpResponse::Ok().json(facility))
}

/// `PUT /admin/api/v1/facilities/{bsnr}` from `{"name", "address": {"street", "postalCode",
/// "city", "country"}, "ik", "active"?}`: 201 with the facility when it is new, 200 when it
/// replaced one (which keeps its `createdAt`). `active` absent: `true` for a new facility, as it
/// was for a replaced one.
#[utoipa::path(
    params(("bsnr" = String, Path, pattern = "^[0-9]{9}$", description = "The facility's BSNR.")),
    request_body = FacilityBody,
    responses(
        (status = 200, description = "It replaced the facility (which keeps its `createdAt`).",
            body = Facility),
        (status = 201, description = "A new facility.", body = Facility),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[put("/facilities/{bsnr}")]
#[tracing::instrument(name = "admin_put_facility", skip_all)]
pub async fn put_facility(
    operator: Operator,
    bsnr: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let object = json::read_object(&req, payload, settings.max_body_bytes).await?;
    let mut errors = Vec::new();
    let bsnr = path_bsnr(&bsnr, &mut errors);
    unknown_members(
        &object,
        "",
        &["name", "address", "ik", "active"],
        &mut errors,
    );
    let address = match object.get("address") {
        Some(Value::Object(address)) => {
            unknown_members(
                address,
                "address.",
                &["street", "postalCode", "city", "country"],
                &mut errors,
            );
            Some(address)
        }
        None | Some(Value::Null) => {
            errors.push("address must not be null".into());
            None
        }
        Some(_) => {
            errors.push("address must be an object".into());
            None
        }
    };
    // The address's members, each said once: not again when the address is missing.
    let in_address = |name: &str, errors: &mut Vec<String>| match address {
        Some(address) => string_member(address, name, &format!("address.{name}"), errors),
        None => Given::Refused,
    };
    let active = match object.get("active") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(active)) => Some(*active),
        Some(_) => {
            errors.push("active must be true or false".into());
            None
        }
    };
    let mut input = FacilityInput {
        name: string_member(&object, "name", "name", &mut errors),
        street: in_address("street", &mut errors),
        postal_code: in_address("postalCode", &mut errors),
        city: in_address("city", &mut errors),
        country: in_address("country", &mut errors),
        ik: string_member(&object, "ik", "ik", &mut errors),
        active: active.unwrap_or(true),
    };
    // Absent `active` keeps a replaced facility's state: leaving it out of a change of
    // address must not activate a facility an operator deactivated.
    if let (None, Some(bsnr), true) = (active, &bsnr, errors.is_empty()) {
        if let Some(old) = store.facility(bsnr).await? {
            input.active = old.active;
        }
    }
    let Some(facility) = input.check(bsnr, &BODY_FIELDS, Utc::now(), &mut errors) else {
        return Err(Failure::Invalid(errors));
    };
    let put = store.put_facility(facility).await?;
    let (status, action) = match &put {
        FacilityPut::Created(_) => (StatusCode::CREATED, "add-facility"),
        FacilityPut::Replaced(_) => (StatusCode::OK, "change-facility"),
    };
    let stored: &Facility = put.facility();
    audit(
        &store,
        &operator.0,
        action,
        format!("facility {}", stored.bsnr),
    )
    .await?;
    Ok(HttpResponse::build(status).json(stored))
}

/// `DELETE /admin/api/v1/facilities/{bsnr}`: 204; 404 unknown. Scopes keep their codes.
#[utoipa::path(
    operation_id = "remove_facility",
    params(("bsnr" = String, Path, pattern = "^[0-9]{9}$", description = "The facility's BSNR.")),
    responses(
        (status = 204, description = "Removed."),
        (status = 400, description = "The path names no BSNR.", body = Errors),
        (status = 404, description = "No such facility.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[delete("/facilities/{bsnr}")]
#[tracing::instrument(name = "admin_remove_facility", skip_all)]
pub async fn remove(
    operator: Operator,
    bsnr: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let bsnr = only_bsnr(&bsnr)?;
    if !store.remove_facility(&bsnr).await? {
        return Err(not_found(&bsnr));
    }
    audit(
        &store,
        &operator.0,
        "remove-facility",
        format!("facility {bsnr}"),
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The customer of a path, or 400.
fn path_customer(text: &str) -> Result<String, Failure> {
    customer_id(text).map_err(|problem| Failure::Invalid(vec![problem]))
}

/// A customer's scope as the API answers it.
#[derive(serde::Serialize, ToSchema)]
pub(crate) struct ScopeView<'a> {
    /// The customer's id.
    customer: &'a str,
    /// The institution codes its users may report for, in order; `[]` for none.
    iks: Vec<&'a Ik>,
}

fn scope_view<'a>(customer: &'a str, scope: Option<&'a CustomerScope>) -> ScopeView<'a> {
    let iks = scope
        .map(|scope| scope.iks.iter().collect())
        .unwrap_or_default();
    ScopeView { customer, iks }
}

/// `GET /admin/api/v1/customers/{customer}/scope`: `{"customer", "iks": [...]}`, the institution
/// codes in order; `[]` when none were given (the customer's users may report for none).
#[utoipa::path(
    params(("customer" = String, Path, pattern = "^\\S(.*\\S)?$", min_length = 1, max_length = 100,
        description = "The customer's id: no control characters, not beginning or ending with a \
            space.")),
    responses(
        (status = 200, description = "The scope (`[]` when none was given).", body = ScopeView),
        (status = 400, description = "The path names no customer id.", body = Errors),
        Refusals,
    ),
)]
#[get("/customers/{customer}/scope")]
#[tracing::instrument(name = "admin_get_scope", skip_all)]
pub async fn get_scope(
    _operator: Operator,
    customer: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let customer = path_customer(&customer)?;
    let scope = store.customer_scope(&customer).await?;
    Ok(HttpResponse::Ok().json(scope_view(&customer, scope.as_ref())))
}

/// `PUT /admin/api/v1/customers/{customer}/scope` from `{"iks": ["260326822", …]}`: replaces the
/// scope (`[]` clears it) and answers it as `GET` does.
#[utoipa::path(
    params(("customer" = String, Path, pattern = "^\\S(.*\\S)?$", min_length = 1, max_length = 100,
        description = "The customer's id: no control characters, not beginning or ending with a \
            space.")),
    request_body = ScopeBody,
    responses(
        (status = 200, description = "The scope as it now is.", body = ScopeView),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[put("/customers/{customer}/scope")]
#[tracing::instrument(name = "admin_set_scope", skip_all)]
pub async fn put_scope(
    operator: Operator,
    customer: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let object = json::read_object(&req, payload, settings.max_body_bytes).await?;
    let mut errors = Vec::new();
    let customer = customer_id(&customer)
        .map_err(|problem| errors.push(problem))
        .ok();
    unknown_members(&object, "", &["iks"], &mut errors);
    let mut iks = BTreeSet::new();
    match object.get("iks") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let Value::String(text) = item else {
                    errors.push(format!("iks[{i}] must be a string"));
                    continue;
                };
                match Ik::parse(text) {
                    Ok(ik) if !iks.insert(ik.clone()) => {
                        errors.push(format!("iks[{i}] {ik} is listed twice"));
                    }
                    Ok(_) => {}
                    Err(e) => errors.push(format!("iks[{i}] {e}")),
                }
            }
        }
        None | Some(Value::Null) => errors.push("iks must not be null".into()),
        Some(_) => errors.push("iks must be an array of strings".into()),
    }
    let (Some(customer), true) = (customer, errors.is_empty()) else {
        return Err(Failure::Invalid(errors));
    };
    let scope = CustomerScope {
        customer: customer.clone(),
        iks,
    };
    store.set_customer_scope(scope.clone()).await?;
    audit(
        &store,
        &operator.0,
        "set-scope",
        format!("customer {customer}"),
    )
    .await?;
    Ok(HttpResponse::Ok().json(scope_view(&customer, Some(&scope))))
}
