//! What the operator API's OpenAPI description shares between its routes: the error body, the
//! refusals every route can answer before its handler runs (credentials, the cross-site guard,
//! the store), those of a route that reads a body, and the request bodies the handlers read
//! member by member (strictly, every problem at once) rather than through a typed extractor.
//! Each route is described at its handler (`#[utoipa::path]`); [`AdminApi`] lists them.

use serde::Serialize;
use utoipa::{IntoResponses, OpenApi, ToSchema};

/// The operator API's error body: one message per problem.
#[derive(Serialize, ToSchema)]
#[schema(as = PlainErrors)]
pub(crate) struct Errors {
    /// What was wrong, one message per problem.
    #[schema(min_items = 1)]
    errors: Vec<String>,
}

/// What every operator route can answer before (or instead of) its own answer.
#[derive(IntoResponses)]
#[allow(dead_code)] // describes answers; never built
pub(crate) enum Refusals {
    /// No or wrong operator credentials (`{"errors": ["operator credentials required"]}`).
    #[response(status = 401, headers(("WWW-Authenticate" = String, description = "`Basic realm=\"meldewerk operators\"`")))]
    Unauthorized(Errors),
    /// Too many failed operator logins for this user name or address.
    #[response(status = 429, headers(("Retry-After" = u64, description = "Seconds until the next attempt is considered.")))]
    TooManyAttempts(Errors),
    /// An internal error (`{"errors": ["internal error"]}`), logged with its cause.
    #[response(status = 500)]
    Internal(Errors),
    /// The store is unavailable (a full disk); nothing was changed.
    #[response(status = 503, headers(("Retry-After" = u64, description = "Seconds to wait.")))]
    Unavailable(Errors),
}

/// What a changing route (any method but `GET`) can answer besides [`Refusals`]: the cross-site
/// guard's refusal.
#[derive(IntoResponses)]
#[allow(dead_code)] // describes answers; never built
pub(crate) enum CrossSite {
    /// Another site made the browser send it (`Sec-Fetch-Site`, `Origin`), or, without those
    /// headers, the body is declared as a form's (`application/x-www-form-urlencoded`,
    /// `multipart/form-data`, `text/plain`). Its credentials are not looked at.
    #[response(status = 403)]
    Refused(Errors),
}

/// Why a transport's operator route (`/admin/api/v1/transports/{name}/…`) cannot serve here.
#[derive(IntoResponses)]
#[allow(dead_code)] // describes answers; never built
pub(crate) enum NoSimulatorHere {
    /// No transport of that name, or it is no simulated authority (or keeps no mailboxes).
    #[response(status = 404)]
    Unknown(Errors),
    /// The simulated authority runs as its own process (`transports.<name>.url`): the message
    /// names where to ask instead.
    #[response(status = 409)]
    ElsewhereProcess(Errors),
}

/// What a route that reads a JSON body answers when the body cannot be read.
#[derive(IntoResponses)]
#[allow(dead_code)] // describes answers; never built
pub(crate) enum BodyRefusals {
    /// The body is no JSON (object), has unknown or duplicate members, or a value is unusable:
    /// every problem at once.
    #[response(status = 400)]
    Invalid(Errors),
    /// The body did not arrive within the body deadline.
    #[response(status = 408)]
    TooSlow(Errors),
    /// The body is larger than `max_body_bytes`.
    #[response(status = 413)]
    TooLarge(Errors),
    /// The body is not declared as `application/json`.
    #[response(status = 415)]
    NotJson(Errors),
}

/// `POST /admin/api/v1/users`.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct NewUser {
    /// The login name (the naming rule of `meldewerk user add`).
    #[schema(pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64)]
    name: String,
    /// 8 to 1024 characters; never echoed nor logged.
    #[schema(format = Password, min_length = 8, max_length = 1024)]
    password: String,
    /// The customer the user belongs to (its scope decides which facilities they may name): no
    /// control characters, not beginning or ending with a space.
    #[schema(pattern = "^\\S(.*\\S)?$", max_length = 100)]
    customer: Option<String>,
    /// Where the user's notices go.
    #[schema(format = Email, min_length = 1, max_length = 254)]
    email: Option<String>,
}

/// `PUT /admin/api/v1/users/{name}/password`.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct NewPassword {
    /// 8 to 1024 characters; never echoed nor logged.
    #[schema(format = Password, min_length = 8, max_length = 1024)]
    password: String,
}

/// `PUT /admin/api/v1/users/{name}/email`: the member is required, null removes the address.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct NewEmail {
    /// The address, or null to remove it.
    #[schema(format = Email, min_length = 1, max_length = 254, required = true)]
    email: Option<String>,
}

/// `PUT /admin/api/v1/users/{name}/customer`: the member is required, null removes it.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct NewCustomer {
    /// The customer's id, or null to remove it.
    #[schema(required = true, pattern = "^\\S(.*\\S)?$", max_length = 100)]
    customer: Option<String>,
}

/// `PUT /admin/api/v1/users/{name}/magic-links`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct MagicLinks {
    /// Whether the user's mementos come with a magic link.
    magic_links: bool,
}

/// `POST /admin/api/v1/users/{name}/seal`: an empty body (or `pkcs8` null) makes a new key.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct SealKey {
    /// An Ed25519 key, PKCS#8 (DER), standard base64.
    #[schema(content_encoding = "base64")]
    pkcs8: Option<String>,
}

/// `PUT /admin/api/v1/facilities/{bsnr}`.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct FacilityBody {
    /// Its name as reports name it: not blank, no control characters.
    #[schema(pattern = "\\S", max_length = 200)]
    name: String,
    /// Its postal address.
    address: AddressBody,
    /// The institution code it reports under.
    #[schema(pattern = "^[0-9]{9}$")]
    ik: String,
    /// Whether it may report; absent: `true` for a new facility, unchanged for a replaced one.
    active: Option<bool>,
}

/// The `address` of a [`FacilityBody`]. Street and city are not blank and hold no control
/// characters; in Germany (`DE`) the postal code is five digits, a rule across members the
/// schema leaves to the handler.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct AddressBody {
    /// Street and house number.
    #[schema(pattern = "\\S", max_length = 200)]
    street: String,
    /// Postal code: 1 to 12 letters, digits, spaces or hyphens, not beginning or ending with a
    /// space (five digits in Germany).
    #[schema(
        pattern = "^[A-Za-z0-9-]([A-Za-z0-9 -]{0,10}[A-Za-z0-9-])?$",
        min_length = 1,
        max_length = 12
    )]
    postal_code: String,
    /// City.
    #[schema(pattern = "\\S", max_length = 200)]
    city: String,
    /// Country, ISO 3166-1 alpha-2 (`DE`).
    #[schema(pattern = "^[A-Z]{2}$", min_length = 2, max_length = 2)]
    country: String,
}

/// `PUT /admin/api/v1/customers/{customer}/scope`.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct ScopeBody {
    /// The institution codes the customer's users may report for, each once; `[]` clears it.
    iks: std::collections::BTreeSet<meldewerk_storage::Ik>,
}

/// `PUT /admin/api/v1/certificates/{bsnr}/{environment}`.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct CertificateBody {
    /// The PKCS#12 file (key and certificate chain), standard base64.
    #[schema(content_encoding = "base64")]
    pkcs12: String,
    /// Its passphrase.
    #[schema(format = Password)]
    passphrase: String,
}

/// `PUT /admin/api/v1/mailbox-accounts/{id}`.
#[derive(ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)] // describes a body the handler reads member by member
pub(crate) struct MailboxAccountBody {
    /// The mailbox's SAFE-ID; no other account may have it.
    safe_id: meldewerk_storage::SafeId,
    /// What operators and users call it: not blank, no control characters.
    #[schema(pattern = "\\S", max_length = 200)]
    name: String,
    /// Whether it is in use; absent: `true` for a new account, unchanged for a replaced one.
    active: Option<bool>,
}

/// The operator API under `/admin/api/v1` (nested there by [`crate::api_docs`]).
#[derive(OpenApi)]
#[openapi(
    paths(
        super::actors::actors,
        super::actors::nodes,
        super::transport_health::transports,
        super::messages::delivered_message,
        super::jobs::list,
        super::jobs::retry,
        super::jobs::discard,
        super::jobs::audit_log,
        super::modules::pause,
        super::modules::resume,
        super::users::list_users,
        super::users::add_user,
        super::users::change_password,
        super::users::set_email,
        super::users::set_customer,
        super::users::set_magic_links,
        super::users::remove_user,
        super::users::deposit_seal,
        super::facilities::list,
        super::facilities::show,
        super::facilities::put_facility,
        super::facilities::remove,
        super::facilities::get_scope,
        super::facilities::put_scope,
        super::certificates::list,
        super::certificates::deposit,
        super::certificates::remove,
        super::mailbox_accounts::list,
        super::mailbox_accounts::show,
        super::mailbox_accounts::put_account,
        super::mailbox_accounts::remove,
        super::mailbox_accounts::grant,
        super::mailbox_accounts::revoke,
        super::mailbox_accounts::of_user,
        super::court_messages::list,
        super::transports::received,
        super::transport_script::get_script,
        super::transport_script::put_script,
        super::transport_script::add_rule,
        super::transport_script::reset_script,
        super::transport_mailbox::post_message,
        super::transport_mailbox::list_messages,
        super::transport_mailbox::get_message,
        super::transport_mailbox::delete_message,
    ),
    components(schemas(Errors))
)]
pub(crate) struct AdminApi;

/// A simulated authority's script (`/admin/api/v1/transports/{name}/script`, and a simulator
/// process's `/script`), as `meldewerk_transports::script::json` reads and writes it.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body read and written by the script's own JSON functions
pub(crate) struct Script {
    /// The rules, first match per phase wins; absent: none.
    #[schema(required = false)]
    rules: Vec<ScriptRule>,
    /// Share of deliveries no rule decided that get a transient fault.
    #[schema(minimum = 0.0, maximum = 1.0, default = 0.0, required = false)]
    transient_rate: f64,
}

/// One rule of a [`Script`]: which calls it applies to, how often, and what it does. The members
/// after `kind` apply to the kinds their descriptions name; any other is refused.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // describes a body read and written by the script's own JSON functions
pub(crate) struct ScriptRule {
    /// What the rule does.
    kind: RuleKind,
    /// Used up after deciding this many calls; absent: standing.
    #[schema(minimum = 1, maximum = 1_000_000)]
    count: Option<u32>,
    /// Only deliveries of this module (`birthnotice`).
    #[schema(min_length = 1, max_length = 32, nullable = false)]
    module: Option<String>,
    /// Only deliveries of this report id.
    #[schema(min_length = 1, max_length = 128, nullable = false)]
    report_id: Option<String>,
    /// Only this call.
    #[schema(nullable = false)]
    call: Option<RuleCall>,
    /// Only mailbox calls naming this message.
    #[schema(min_length = 1, nullable = false)]
    message_id: Option<String>,
    /// `latency`: the fixed delay in milliseconds.
    ms: Option<u64>,
    /// `latency`: the least further delay (with `max_ms`).
    min_ms: Option<u64>,
    /// `latency`: the largest further delay (with `min_ms`).
    max_ms: Option<u64>,
    /// `transient`, `panic`: the fault's text.
    #[schema(max_length = 500)]
    message: Option<String>,
    /// `timeout`: how long the call hangs first.
    after_ms: Option<u64>,
    /// `reject` (required): the reason reported to the sender.
    #[schema(max_length = 500)]
    reason: Option<String>,
    /// `ack_delay` (required): how long the acknowledgement is held back.
    delay_ms: Option<u64>,
}

/// What a [`ScriptRule`] does.
#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // describes a body read and written by the script's own JSON functions
pub(crate) enum RuleKind {
    /// Delay the answer.
    Latency,
    /// Answer with a transient fault.
    Transient,
    /// Hang, then answer with a transient timeout.
    Timeout,
    /// A transient connection reset at once.
    Reset,
    /// Panic inside the transport call.
    Panic,
    /// Refuse the delivery for good.
    Reject,
    /// Accept it.
    Accept,
    /// Hold its acknowledgement back.
    AckDelay,
    /// Never acknowledge it.
    AckLost,
    /// A mailbox message that cannot be fetched.
    Unfetchable,
    /// A mailbox message fetched cut short.
    Truncated,
}

/// The call a [`ScriptRule`] applies to.
#[derive(ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // describes a body read and written by the script's own JSON functions
pub(crate) enum RuleCall {
    /// A delivery.
    Deliver,
    /// A mailbox listing.
    List,
    /// A mailbox fetch.
    Fetch,
    /// A mailbox delete.
    Delete,
}

/// A page of what a simulated authority received (`…/received`).
#[derive(ToSchema)]
#[allow(dead_code)] // describes the answer of `transports::page`
pub(crate) struct ReceivedPage {
    /// The messages, oldest first.
    messages: Vec<ReceivedMessage>,
    /// The `seq` to ask for `after`, when more follow; null on the last page.
    #[schema(required = true)]
    next: Option<u64>,
}

/// One received message: its place in the log beside the record as the simulator keeps it
/// (its members depend on the authority; byte fields such as `body` and `receipt` in base64).
#[derive(ToSchema)]
#[allow(dead_code)] // describes the answer of `transports::page`
pub(crate) struct ReceivedMessage {
    /// Its sequence number in the log.
    seq: u64,
    /// The record's members.
    #[serde(flatten)]
    record: std::collections::HashMap<String, serde_json::Value>,
}
