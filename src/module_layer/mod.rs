//! The module layer: what every reporting module gets without writing it.
//!
//! A module (one folder under `src/modules/`) provides only what is its own, through [`Module`]:
//! its identity ([`ModuleInfo`]), its request schema (a field table plus the rules across
//! members), its forms, the checks before dispatch (the full rule set and the build of the
//! message), its message builder and transport, its error style and its retention.
//!
//! Everything else is written once here, generic over the module:
//! - [`memento`]: `POST /api/{module}/v1/memento` (validate, encrypt, answer the link);
//! - [`reports`]: `GET /api/{module}/v1/reports` and `GET /reports/{id}[?peek=true]`, with the
//!   404/410 rules and the reserved mock ids;
//! - [`form`]: the form mechanics (pre-fill, CSRF, validation with re-render keeping every value,
//!   the message built and signed, dispatch with it in one transaction, double-dispatch refusal,
//!   confirmation page);
//! - [`dispatch`]: dispatching a report and waiting, bounded, for the authority's decision;
//! - [`errors`]: the error styles;
//! - [`fields`]: the field tables that drive validation and forms;
//! - [`routes`]: registration of a module's routes under its path segment.

pub(crate) mod api_call;
pub mod context;
pub(crate) mod dispatch;
pub mod errors;
pub mod fields;
pub mod form;
mod look_up;
pub mod memento;
pub mod mock;
pub mod openapi;
pub mod reports;
pub mod routes;
pub(crate) mod sample;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use actix_web::HttpResponse;
use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_storage::{Packing, Report, ReportResult, Store, StoreError};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub(crate) use errors::{unavailable_response, UNAVAILABLE_MESSAGE};
pub use errors::{ApiError, ErrorStyle, Violation};
pub use fields::{Field, FieldKind, TextPattern};
pub use look_up::{LookUp, Subject};

/// A module's identity: everything about it that never depends on configuration.
#[derive(Debug)]
pub struct ModuleInfo {
    /// The module's name: its path segment, the `module` constant of results, its configuration
    /// section and the `module` of its reports, e.g. `birthnotice`.
    pub module: &'static str,
    /// The member of the memento request that is the report's id.
    pub id: IdMember,
    /// What the memento endpoint answers.
    pub memento_answer: MementoAnswer,
    /// Prefix of the reserved mock ids (`BIRTHNOTICE` for `BIRTHNOTICE-TEST-SUCCESS`); `None`
    /// when the module reserves none.
    pub mock_prefix: Option<&'static str>,
    /// Whether the request has a `clientReference` that results echo.
    pub echoes_client_reference: bool,
    /// Every member of the memento request besides `id` (and `clientReference`).
    pub fields: &'static [Field],
    /// The forms a magic link can open; the first is the default.
    pub forms: &'static [Form],
    /// Name of the transport the module's messages go to, e.g. `xpersonenstand`.
    pub transport: &'static str,
    /// What a read answers once retention removed a report's payload.
    pub expired: ExpiredAnswer,
    /// How long final reports keep their payload unless `[modules.<module>] retention_secs`
    /// says otherwise; `None` keeps them forever.
    pub retention: Option<Duration>,
    /// Where a magic link lands when it is not on the memento's form: a page of the module's
    /// own ([`Module::routes`]) before its forms, where the end user picks one (the disease
    /// index of `labreport`). `None`: on the form the memento opens.
    pub landing: Option<&'static str>,
    /// Whether the module's authority decides while the end user waits; `None` (the default)
    /// when the form dispatches and the integrator reads the outcome later.
    pub at_once: Option<AtOnce>,
    /// How the store packs the payloads of the module's reports: [`Packing::Small`] (the
    /// default) where disk use counts, [`Packing::Quick`] for reports kept a short time.
    pub packing: Packing,
}

/// A module whose authority decides at once, while the form's submit waits (bounded by
/// [`Module::answer_wait`]): the end user learns the outcome in the answer to the submit.
/// Accepted: 302 to [`AtOnce::success`]. Refused: the form again, 400, every value kept and the
/// reason shown, and no report (the refused one is forgotten, its id answers 404 and can be
/// sent again). Still undecided when the wait ends: 202 with a page saying the report is
/// still being sent; the report stays with the engine, and the same form posted again waits
/// for it instead of dispatching a second one. Only successful reports are results: reads of
/// any other answer 404, and the pending list names only those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtOnce {
    /// The page a submit the authority accepted redirects to (a route of the module's own,
    /// [`Module::routes`]), without parameters.
    pub success: &'static str,
}

impl ModuleInfo {
    /// A module delivering through the transport called `transport` (a name of
    /// [`meldewerk_transports::TRANSPORTS`]): 410 `report-expired` after a retention of 30 days,
    /// no mock ids and no `clientReference` unless added.
    pub const fn new(
        module: &'static str,
        fields: &'static [Field],
        forms: &'static [Form],
        transport: &'static str,
    ) -> Self {
        ModuleInfo {
            module,
            id: IdMember::Required("id"),
            memento_answer: MementoAnswer::MementoAndLink,
            mock_prefix: None,
            echoes_client_reference: false,
            fields,
            forms,
            transport,
            expired: ExpiredAnswer::Gone,
            retention: Some(Duration::from_secs(30 * 24 * 3600)),
            landing: None,
            at_once: None,
            packing: Packing::Small,
        }
    }

    /// The same module, its magic links landing on `path` (a page of its own, which leads on
    /// to its forms) instead of the memento's form.
    pub const fn landing_at(self, path: &'static str) -> Self {
        ModuleInfo {
            landing: Some(path),
            ..self
        }
    }

    /// The same module, its authority deciding at once ([`AtOnce`]); an accepted submit
    /// redirects to `success`.
    pub const fn answering_at_once(self, success: &'static str) -> Self {
        ModuleInfo {
            at_once: Some(AtOnce { success }),
            ..self
        }
    }

    /// The same module, the payloads of its reports packed `packing`'s way.
    pub const fn packed(self, packing: Packing) -> Self {
        ModuleInfo { packing, ..self }
    }

    /// The same module keeping final reports' payload for `retention` by default (`None`:
    /// forever), answering `expired` afterwards.
    pub const fn retained(self, retention: Option<Duration>, expired: ExpiredAnswer) -> Self {
        ModuleInfo {
            retention,
            expired,
            ..self
        }
    }

    /// The same module, its reports identified by the request member `id` (`reportId`) instead
    /// of `id`.
    pub const fn identified_by(self, id: IdMember) -> Self {
        ModuleInfo { id, ..self }
    }

    /// The same module answering a memento request with `{"memento": …}` alone.
    pub const fn answering_memento_only(self) -> Self {
        ModuleInfo {
            memento_answer: MementoAnswer::MementoOnly,
            ..self
        }
    }

    /// The report id in memento data (`None` when the member is absent or not a string).
    pub fn report_id<'a>(&self, data: &'a Value) -> Option<&'a str> {
        data.get(self.id.name()).and_then(Value::as_str)
    }

    /// The same module with reserved mock ids `{prefix}-TEST-SUCCESS|PENDING|FAILURE`.
    pub const fn with_mock_ids(self, prefix: &'static str) -> Self {
        ModuleInfo {
            mock_prefix: Some(prefix),
            ..self
        }
    }

    /// The same module with a `clientReference` in the request that results echo.
    pub const fn echoing_client_reference(self) -> Self {
        ModuleInfo {
            echoes_client_reference: true,
            ..self
        }
    }
}

/// The member of a memento request that carries the report's id, under the contract's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdMember {
    /// Every request carries it (`id` of the civil registry, `reportId`).
    Required(&'static str),
    /// A request may leave it out; the module then gives the report one when its form opens
    /// (`MeldeId`).
    Generated(&'static str),
}

impl IdMember {
    /// The member's name.
    pub const fn name(self) -> &'static str {
        match self {
            IdMember::Required(name) | IdMember::Generated(name) => name,
        }
    }
}

/// What `POST /api/{module}/v1/memento` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MementoAnswer {
    /// `{"magicLink": …, "memento": …}` (the civil registry).
    MementoAndLink,
    /// `{"memento": …}` (bedreport).
    MementoOnly,
}

/// What reads answer after retention removed a report's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpiredAnswer {
    /// 410 `report-expired` (the civil-registry modules).
    Gone,
    /// 404, as if the report never existed.
    NotFound,
}

/// One browser form of a module. A module with several report types (deathnotice) has one form
/// per type; the memento decides which one a magic link opens.
#[derive(Debug)]
pub struct Form {
    /// Path of the form, e.g. `/forms/birthnotice`; the confirmation page is `{path}/sent`.
    pub path: &'static str,
    /// Only fields whose path starts with this belong to the form (`Einrichtung.`); empty for all.
    pub prefix: &'static str,
    /// Heading and page title, e.g. `Geburtsanzeige`; the submit button says "… absenden", the
    /// confirmation page "… abgesendet".
    pub title: &'static str,
    /// Who signs the message.
    pub signature: SignatureRule,
    /// The type of report the form sends, in words, as the authority names it (`Geburtsanzeige
    /// (081020)`): on the confirmation page and on test receipts; `None` for a form without one.
    pub report_type: Option<&'static str>,
    /// Fields of the form's own, after those of the module's table: what the end user adds that
    /// no memento carries (the findings of one disease's form). Empty for most forms.
    pub own: &'static [Field],
}

impl Form {
    /// A form at `path` over all of the module's fields.
    pub const fn new(path: &'static str, title: &'static str, signature: SignatureRule) -> Self {
        Form {
            path,
            prefix: "",
            title,
            signature,
            report_type: None,
            own: &[],
        }
    }

    /// The same form with fields of its own after the module's (see [`Form::own`]).
    pub const fn with_own_fields(self, own: &'static [Field]) -> Self {
        Form { own, ..self }
    }

    /// Where the confirmation page of the form is: `{path}/sent` (one slash also when the path
    /// ends with one).
    pub fn sent_path(&self) -> String {
        format!("{}/sent", self.path.trim_end_matches('/'))
    }

    /// The same form, its reports of the type `words` (`Geburtsanzeige (081020)`).
    pub const fn report_type(self, words: &'static str) -> Self {
        Form {
            report_type: Some(words),
            ..self
        }
    }

    /// The same form over the fields below `prefix` only (`Einrichtung.`).
    pub const fn below(self, prefix: &'static str) -> Self {
        Form { prefix, ..self }
    }

    /// The fields of the form, out of the module's table, then its own.
    pub fn fields<'a>(
        &'a self,
        table: &'static [Field],
    ) -> impl Iterator<Item = &'static Field> + 'a {
        table
            .iter()
            .filter(move |f| f.path.starts_with(self.prefix))
            .chain(self.own.iter())
    }
}

/// Who signs the messages of a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureRule {
    /// A message the law wants signed by its author: the API user's deposited seal, or else the
    /// end user signs in the form (name and declaration), attested by the portal's key. Nothing
    /// leaves without one of the two.
    SealOrEndUser,
    /// A message that needs no personal signature: the portal signs it as sender.
    Portal,
    /// A message whose authority knows the sender by the client certificate its transport
    /// presents (the reporting system: the facility's deposited one, or the service's own for
    /// a module that sends as no facility). It carries no signature:
    /// there is no place for one in what the authority takes, so signing would be work for
    /// nobody.
    SenderCertificate,
}

/// A problem found before dispatch, shown next to its field or above the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchProblem {
    /// Dotted path of the field (as in the field table), when the problem belongs to one.
    pub path: Option<String>,
    /// Message for the end user.
    pub message: String,
}

/// A report as its form completed it, to be checked and built into its message
/// ([`Module::checked_message`]).
#[derive(Clone, Copy)]
pub struct Completed<'a> {
    /// The form it was completed in.
    pub form: &'a Form,
    /// The report's id, for messages that carry it (a FHIR notification's `NotificationId`).
    pub id: &'a str,
    /// What the form holds.
    pub content: &'a Value,
}

/// A report's message as [`Module::checked_message`] built it, or every problem it found.
pub type Checked = Result<BuiltMessage, Vec<DispatchProblem>>;

/// A reporting module, as the layer around it needs to know it.
#[async_trait::async_trait]
pub trait Module: Send + Sync + 'static {
    /// The module's identity.
    fn info(&self) -> &'static ModuleInfo;

    /// How the module writes its errors; plain `{"errors": [...]}` unless it says otherwise.
    fn error_style(&self) -> &ErrorStyle {
        &ErrorStyle::Plain
    }

    /// Rules across several members of a memento request, beyond what the field table checks
    /// member by member (exactly one slot, one branch of a choice, `ehe` only with
    /// `elternVerheiratet`).
    fn check_request(&self, _request: &Map<String, Value>) -> Vec<Violation> {
        Vec::new()
    }

    /// The form a memento opens; `None` when the memento fits no form (then the request was not
    /// validated by this module).
    fn form_for(&self, _memento: &Value) -> Option<&'static Form> {
        self.info().forms.first()
    }

    /// Whether `form` may be filled in from `memento`: by default only the form the memento
    /// opens; a module whose end user picks the form (the disease forms of `labreport`) lets
    /// every form take it.
    fn opens(&self, form: &Form, memento: &Value) -> bool {
        self.form_for(memento)
            .is_some_and(|opened| std::ptr::eq(opened, form))
    }

    /// The checks that need the store (a facility the user's customer must have in scope, say),
    /// after those of the field table: at memento creation on the request, at a form's submit on
    /// its content, which it may complete with what it found (the facility's registered name
    /// and address, for the message and the stored submission). Returns every problem, each at
    /// its field where it has one. None by default.
    async fn look_up(
        &self,
        _look_up: LookUp<'_>,
        _subject: Subject<'_>,
    ) -> Result<Vec<DispatchProblem>, StoreError> {
        Ok(Vec::new())
    }

    /// The answer to a form's submit of a report id already used (`request_path` the form's):
    /// `None` (the default) for the layer's page saying so (409); a module whose contract
    /// shapes it answers its own.
    fn duplicate_answer(&self, _id: &str, _request_path: &str) -> Option<HttpResponse> {
        None
    }

    /// Checks a `report` its form completed against the full rule set of the message and
    /// builds the message; the report is dispatched only when this finds nothing, with this
    /// message, which is the one delivered (signed at dispatch, stored with the report). Every
    /// problem is reported at once (a form is finished in one pass).
    fn checked_message(&self, report: Completed<'_>) -> Checked;

    /// The paths of the fields (and of the groups that need a first row) of `form` that are
    /// mandatory however the form is filled in: the form marks them before the first submit.
    fn mandatory_paths(&self, _form: &Form) -> Vec<String> {
        Vec::new()
    }

    /// The engine's builder for the module's messages, for reports stored without one (before
    /// messages were built at dispatch, or when signing failed there).
    fn messages(&self) -> Arc<dyn MessageBuilder>;

    /// Members the module adds to its results, fixed when `form` dispatches `content` (which
    /// form the end user chose, say): stored with the report, handed back in every
    /// [`ReportResult::result_members`]. None by default.
    fn result_members(&self, _form: &Form, _content: &Value) -> Map<String, Value> {
        Map::new()
    }

    /// Whether a report still in delivery has a result (`PENDING`, the default); a module whose
    /// contract knows only final results answers 404 until the authority decided, and lists the
    /// report as pending only from then on.
    fn pending_is_a_result(&self) -> bool {
        true
    }

    /// The result body of the report `id`, when the module's contract shapes its results
    /// differently from the layer's (`id`, `module`, `status`, `submittedAt`, `receiptPdf`,
    /// …); `None` (the default) for the layer's body. The layer's rules of reading stay
    /// (404, 410, consumption, `peek`).
    fn result_body(&self, _id: &str, _result: &ReportResult) -> Option<Value> {
        None
    }

    /// Routes of the module's own inside its API scope `/api/<module>/v1/`, beside the layer's
    /// memento and result routes (a report sent without a form, say); their handlers find the
    /// module's [`context::ModuleContext`] as app data. None by default.
    fn api_routes(&self, _cfg: &mut actix_web::web::ServiceConfig) {}

    /// How long the submit of a form of a module answering at once ([`ModuleInfo::at_once`])
    /// waits for the authority's decision before it answers that the report is still being
    /// sent.
    fn answer_wait(&self) -> Duration {
        Duration::from_secs(20)
    }

    /// The facility's certificate (site and environment) a report of `content` must be sent
    /// with, when the module's authority knows the sender by one: without a usable one
    /// deposited, the form says so and dispatches nothing. `None` (the default): none needed.
    fn required_certificate(
        &self,
        _content: &Value,
    ) -> Option<(meldewerk_storage::Bsnr, meldewerk_storage::Environment)> {
        None
    }

    /// Records what the module keeps beside a report its form is about to dispatch (the case
    /// references of a court form, so that replies quoting them are listed under its job),
    /// once every check passed. An error stores and dispatches nothing (the end user may submit
    /// again), so nothing is ever dispatched without it; it must be idempotent, as a submit may
    /// be repeated, and harmless for a report whose dispatch then fails. Nothing by default.
    async fn before_dispatch(
        &self,
        _store: &dyn Store,
        _report: &Report,
    ) -> Result<(), StoreError> {
        Ok(())
    }

    /// How the module reads its transport's mailbox (the court messages of `guardianship`),
    /// when it does; `None` (the default) for a module that only sends.
    fn reading(&self) -> Option<meldewerk_actors::MailboxReading> {
        None
    }

    /// Describes the module's own routes and result shape in its OpenAPI document, after the
    /// layer wrote its memento, result and form routes: every route [`Module::api_routes`] and
    /// [`Module::routes`] register is described here (a test holds the document to the routes
    /// the service really has). Nothing by default.
    fn document(&self, _doc: &mut openapi::ModuleDocument) {}

    /// Routes of the module's own outside its API (a page before its forms, say), registered
    /// with `context` as app data. None by default.
    fn routes(
        &self,
        _cfg: &mut actix_web::web::ServiceConfig,
        _context: &actix_web::web::Data<context::ModuleContext>,
    ) {
    }
}

/// Builds a module from its configuration. The list of every module the service runs is
/// [`crate::modules::MODULES`].
pub type BuildModule = fn(&ModuleSetup) -> Result<Arc<dyn Module>, SetupError>;

/// What a module is built from.
pub struct ModuleSetup<'a> {
    /// The `[modules.*]` sections of the configuration, by name: a module's own, or one that
    /// several modules share (the civil registry's message header, `[modules.xpersonenstand]`).
    pub sections: &'a BTreeMap<String, figment::value::Value>,
    /// The sections read so far; a section no module reads is refused.
    pub(crate) read: std::cell::RefCell<std::collections::BTreeSet<String>>,
    /// Public base address of the service, without a trailing slash.
    pub base_url: &'a str,
    /// The data directory: a module keeping files of its own (the court messages' archives)
    /// keeps them below it unless its section names another folder. Building a module writes
    /// nothing to disk.
    pub data_dir: &'a std::path::Path,
}

/// A module's configuration section could not be read.
#[derive(Debug, thiserror::Error)]
#[error("modules.{module}: {reason}")]
pub struct SetupError {
    /// The module.
    pub module: String,
    /// What is wrong.
    pub reason: String,
}

/// The key every module section has: the module's retention period, read by the layer.
const RETENTION_KEY: &str = "retention_secs";

impl ModuleSetup<'_> {
    /// The settings out of `[modules.<section>]`, a module's own (without `retention_secs`,
    /// which the layer reads) or a shared one; the defaults when the section is absent. Unknown
    /// keys are refused by the settings type.
    pub fn settings<T: DeserializeOwned + Default>(&self, section: &str) -> Result<T, SetupError> {
        self.read.borrow_mut().insert(section.to_owned());
        let error = |reason: String| SetupError {
            module: section.to_owned(),
            reason,
        };
        match self.sections.get(section) {
            None => Ok(T::default()),
            Some(figment::value::Value::Dict(tag, section)) => {
                let mut own = section.clone();
                own.remove(RETENTION_KEY);
                figment::value::Value::Dict(*tag, own)
                    .deserialize()
                    .map_err(|e| error(e.to_string()))
            }
            Some(_) => Err(error("must be a table".into())),
        }
    }
}

/// The settings of a module that has none of its own: every key but `retention_secs` is refused.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

/// How long `info`'s final reports keep their payload: `[modules.<module>] retention_secs`, or
/// the module's default.
pub fn retention(
    sections: &BTreeMap<String, figment::value::Value>,
    info: &ModuleInfo,
) -> Result<Option<Duration>, SetupError> {
    let Some(value) = sections
        .get(info.module)
        .and_then(|section| section.find_ref(RETENTION_KEY))
    else {
        return Ok(info.retention);
    };
    let secs = value.to_u128().and_then(|n| u64::try_from(n).ok());
    match secs {
        Some(secs) => Ok(Some(Duration::from_secs(secs))),
        None => Err(SetupError {
            module: info.module.to_owned(),
            reason: format!("{RETENTION_KEY} must be a whole number of seconds"),
        }),
    }
}

/// `YYYY-MM-DDThh:mm:ss+00:00`, the contract's date-time with offset.
pub fn rfc3339(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}

/// The report's content as the module's typed model, for its message builder.
pub fn submission<T: DeserializeOwned>(report: &Report) -> Result<T, BuildError> {
    let content = report
        .submission
        .clone()
        .ok_or_else(|| BuildError("the report has no payload any more".into()))?;
    serde_json::from_value(content).map_err(|e| BuildError(format!("unreadable submission: {e}")))
}
