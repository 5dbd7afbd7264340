//! [`Store`] for [`PgStore`]: each method is one function of the area it belongs to.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{
    court_messages, facilities, login_failures, nodes, outbox, reports, sessions, users, PgStore,
};
use crate::*;

#[async_trait]
impl Store for PgStore {
    fn condition(&self) -> StoreCondition {
        self.db().condition()
    }

    async fn lead(&self, task: &str, interval: std::time::Duration) -> StoreResult<bool> {
        nodes::lead(self.db(), task, interval).await
    }

    async fn publish_health(&self, health: serde_json::Value) -> StoreResult<()> {
        nodes::publish_health(self.db(), health).await
    }

    async fn nodes(&self) -> StoreResult<Vec<NodeStatus>> {
        nodes::nodes(self.db()).await
    }

    fn shared(&self) -> bool {
        true
    }

    async fn paused_modules(&self) -> StoreResult<Vec<String>> {
        nodes::paused_modules(self.db()).await
    }

    async fn set_paused(&self, module: &str, paused: bool) -> StoreResult<()> {
        nodes::set_paused(self.db(), module, paused).await
    }

    async fn create_user(&self, user: UserRecord) -> StoreResult<()> {
        users::create_user(self.db(), user).await
    }

    async fn update_user(&self, user: UserRecord) -> StoreResult<()> {
        users::update_user(self.db(), user).await
    }

    async fn remove_user(&self, name: &str) -> StoreResult<bool> {
        users::remove_user(self.db(), name).await
    }

    async fn user(&self, name: &str) -> StoreResult<Option<UserRecord>> {
        users::user(self.db(), name).await
    }

    async fn user_by_key_id(&self, key_id: &str) -> StoreResult<Option<UserRecord>> {
        users::user_by_key_id(self.db(), key_id).await
    }

    async fn users(&self) -> StoreResult<Vec<UserRecord>> {
        users::users(self.db()).await
    }

    async fn dispatch_report(&self, report: Report) -> StoreResult<Job> {
        reports::dispatch_report(self.db(), report).await
    }

    async fn report(&self, key: &ReportKey) -> StoreResult<Option<Report>> {
        reports::report(self.db(), key).await
    }

    async fn report_to_deliver(&self, key: &ReportKey) -> StoreResult<Option<Report>> {
        reports::report_to_deliver(self.db(), key).await
    }

    async fn report_result(&self, key: &ReportKey) -> StoreResult<Option<ReportResult>> {
        reports::report_result(self.db(), key).await
    }

    async fn report_status(&self, key: &ReportKey) -> StoreResult<Option<ReportStatus>> {
        reports::report_status(self.db(), key).await
    }

    async fn consume_report(&self, key: &ReportKey) -> StoreResult<Consumed> {
        reports::consume_report(self.db(), key).await
    }

    async fn pending_ids(&self, owner: &str, module: &str) -> StoreResult<Vec<String>> {
        reports::pending_ids(self.db(), owner, module).await
    }

    async fn reports_with_id(&self, module: &str, id: &str) -> StoreResult<Vec<ReportKey>> {
        reports::reports_with_id(self.db(), module, id).await
    }

    async fn forget_refused(&self, key: &ReportKey) -> StoreResult<bool> {
        reports::forget_refused(self.db(), key).await
    }

    async fn expire_finished_before(
        &self,
        module: &str,
        cutoff: DateTime<Utc>,
    ) -> StoreResult<usize> {
        reports::expire_finished_before(self.db(), module, cutoff).await
    }

    async fn due_jobs(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        skip: &(dyn Fn(u64) -> bool + Send + Sync),
    ) -> StoreResult<Vec<Job>> {
        outbox::due_jobs(self.db(), now, limit, skip).await
    }

    async fn outbox_len(&self) -> StoreResult<usize> {
        outbox::outbox_len(self.db()).await
    }

    async fn begin_attempt(&self, job: &Job) -> StoreResult<Job> {
        outbox::begin_attempt(self.db(), job).await
    }

    async fn reschedule(
        &self,
        job: &Job,
        not_before: DateTime<Utc>,
        last_error: Option<String>,
    ) -> StoreResult<()> {
        outbox::reschedule(self.db(), job, not_before, last_error).await
    }

    async fn record_prepared(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<PreparedMessage> {
        outbox::record_prepared(self.db(), job, message).await
    }

    async fn begin_attempt_with_message(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<(Job, PreparedMessage)> {
        outbox::begin_attempt_with_message(self.db(), job, message).await
    }

    async fn record_delivered(
        &self,
        job: &Job,
        transport: &str,
        transport_ref: Option<String>,
        delivered_at: DateTime<Utc>,
        after: AfterDelivery,
    ) -> StoreResult<Option<FinishedReport>> {
        outbox::record_delivered(
            self.db(),
            job,
            transport,
            transport_ref,
            delivered_at,
            after,
        )
        .await
    }

    async fn inbox_cursor(&self, transport: &str) -> StoreResult<Option<String>> {
        outbox::inbox_cursor(self.db(), transport).await
    }

    async fn record_acknowledgements(
        &self,
        transport: &str,
        acknowledgements: Vec<(String, Outcome)>,
        cursor: Option<String>,
        at: DateTime<Utc>,
    ) -> StoreResult<Vec<FinishedReport>> {
        outbox::record_acknowledgements(self.db(), transport, acknowledgements, cursor, at).await
    }

    async fn job(&self, id: u64) -> StoreResult<Option<Job>> {
        outbox::job(self.db(), id).await
    }

    async fn jobs(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<Job>> {
        outbox::jobs(self.db(), after, limit).await
    }

    async fn append_audit(&self, entry: AuditEntry) -> StoreResult<u64> {
        outbox::append_audit(self.db(), entry).await
    }

    async fn audit(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<(u64, AuditEntry)>> {
        outbox::audit(self.db(), after, limit).await
    }

    async fn record_outcome(
        &self,
        job: &Job,
        outcome: Outcome,
        at: DateTime<Utc>,
    ) -> StoreResult<FinishedReport> {
        outbox::record_outcome(self.db(), job, outcome, at).await
    }

    async fn put_facility(&self, facility: Facility) -> StoreResult<FacilityPut> {
        facilities::put_facility(self.db(), facility).await
    }

    async fn facility(&self, bsnr: &Bsnr) -> StoreResult<Option<Facility>> {
        facilities::facility(self.db(), bsnr).await
    }

    async fn facilities(&self, after: Option<&Bsnr>, limit: usize) -> StoreResult<Vec<Facility>> {
        facilities::facilities(self.db(), after, limit).await
    }

    async fn remove_facility(&self, bsnr: &Bsnr) -> StoreResult<bool> {
        facilities::remove_facility(self.db(), bsnr).await
    }

    async fn set_customer_scope(&self, scope: CustomerScope) -> StoreResult<()> {
        facilities::set_customer_scope(self.db(), scope).await
    }

    async fn customer_scope(&self, customer: &str) -> StoreResult<Option<CustomerScope>> {
        facilities::customer_scope(self.db(), customer).await
    }

    async fn put_certificate(&self, certificate: FacilityCertificate) -> StoreResult<bool> {
        facilities::put_certificate(self.db(), certificate).await
    }

    async fn certificate(
        &self,
        bsnr: &Bsnr,
        environment: Environment,
    ) -> StoreResult<Option<FacilityCertificate>> {
        facilities::certificate(self.db(), bsnr, environment).await
    }

    async fn certificates(&self) -> StoreResult<Vec<FacilityCertificate>> {
        facilities::certificates(self.db()).await
    }

    async fn remove_certificate(&self, bsnr: &Bsnr, environment: Environment) -> StoreResult<bool> {
        facilities::remove_certificate(self.db(), bsnr, environment).await
    }

    async fn put_mailbox_account(&self, account: MailboxAccount) -> StoreResult<MailboxAccountPut> {
        facilities::put_mailbox_account(self.db(), account).await
    }

    async fn mailbox_account(&self, id: MailboxAccountId) -> StoreResult<Option<MailboxAccount>> {
        facilities::mailbox_account(self.db(), id).await
    }

    async fn mailbox_account_by_safe_id(
        &self,
        safe_id: &SafeId,
    ) -> StoreResult<Option<MailboxAccount>> {
        facilities::mailbox_account_by_safe_id(self.db(), safe_id).await
    }

    async fn mailbox_accounts(
        &self,
        after: Option<MailboxAccountId>,
        limit: usize,
    ) -> StoreResult<Vec<MailboxAccount>> {
        facilities::mailbox_accounts(self.db(), after, limit).await
    }

    async fn remove_mailbox_account(&self, id: MailboxAccountId) -> StoreResult<bool> {
        facilities::remove_mailbox_account(self.db(), id).await
    }

    async fn grant_mailbox_account(&self, id: MailboxAccountId, user: &str) -> StoreResult<bool> {
        facilities::grant_mailbox_account(self.db(), id, user).await
    }

    async fn revoke_mailbox_account(&self, id: MailboxAccountId, user: &str) -> StoreResult<bool> {
        facilities::revoke_mailbox_account(self.db(), id, user).await
    }

    async fn mailbox_account_users(&self, id: MailboxAccountId) -> StoreResult<Vec<String>> {
        facilities::mailbox_account_users(self.db(), id).await
    }

    async fn mailbox_account_ids_of(&self, user: &str) -> StoreResult<Vec<MailboxAccountId>> {
        facilities::mailbox_account_ids_of(self.db(), user).await
    }

    async fn index_court_messages(
        &self,
        account: MailboxAccountId,
        safe_id: &str,
        listed: Vec<ListedCourtMessage>,
        cursor: Option<String>,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<CourtMessage>> {
        court_messages::index_court_messages(self.db(), account, safe_id, listed, cursor, now).await
    }

    async fn mailbox_sync_cursor(&self, account: MailboxAccountId) -> StoreResult<Option<String>> {
        court_messages::mailbox_sync_cursor(self.db(), account).await
    }

    async fn court_message(&self, id: u64) -> StoreResult<Option<CourtMessage>> {
        court_messages::court_message(self.db(), id).await
    }

    async fn court_messages(
        &self,
        filter: &CourtMessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        court_messages::court_messages(self.db(), filter, after, limit).await
    }

    async fn court_messages_of(
        &self,
        account: MailboxAccountId,
        after: Option<u64>,
        limit: usize,
        deleted: bool,
    ) -> StoreResult<Vec<CourtMessage>> {
        court_messages::court_messages_of(self.db(), account, after, limit, deleted).await
    }

    async fn court_messages_to_hydrate(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        court_messages::court_messages_to_hydrate(self.db(), now, limit).await
    }

    async fn court_messages_created_before(
        &self,
        cutoff: DateTime<Utc>,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        court_messages::court_messages_created_before(self.db(), cutoff, after, limit).await
    }

    async fn record_hydration(
        &self,
        id: u64,
        outcome: HydrationOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<CourtMessage>> {
        court_messages::record_hydration(self.db(), id, outcome, now).await
    }

    async fn delete_court_message(
        &self,
        id: u64,
        cause: DeletionCause,
        now: DateTime<Utc>,
    ) -> StoreResult<CourtMessageDeleted> {
        court_messages::delete_court_message(self.db(), id, cause, now).await
    }

    async fn map_case_reference(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
        job_id: &str,
    ) -> StoreResult<bool> {
        court_messages::map_case_reference(self.db(), account, aktenzeichen, job_id).await
    }

    async fn job_of_case_reference(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
    ) -> StoreResult<Option<String>> {
        court_messages::job_of_case_reference(self.db(), account, aktenzeichen).await
    }
}

/// [`LoginState`] for [`PgStore`]: sessions in `sessions.rs`, counters and known logins in
/// `login_failures.rs`. The writes that add rows sweep now and then ([`PgStore::sweep_login_state_if_due`]).
#[async_trait]
impl LoginState for PgStore {
    async fn open_session(
        &self,
        id_digest: &[u8; 32],
        session: &SessionRecord,
        idle: std::time::Duration,
    ) -> StoreResult<()> {
        sessions::open_session(self.db(), id_digest, session, idle).await?;
        self.sweep_login_state_if_due().await;
        Ok(())
    }

    async fn touch_session(
        &self,
        id_digest: &[u8; 32],
        idle: std::time::Duration,
    ) -> StoreResult<Option<SessionRecord>> {
        sessions::touch_session(self.db(), id_digest, idle).await
    }

    async fn end_session(&self, id_digest: &[u8; 32]) -> StoreResult<()> {
        sessions::end_session(self.db(), id_digest).await
    }

    async fn count_failure(
        &self,
        key_digest: &[u8; 32],
        allowance: Allowance,
    ) -> StoreResult<Option<std::time::Duration>> {
        let blocked = login_failures::count_failure(self.db(), key_digest, allowance).await?;
        self.sweep_login_state_if_due().await;
        Ok(blocked)
    }

    async fn failure_blocks(
        &self,
        keys: &[([u8; 32], Allowance)],
    ) -> StoreResult<Vec<Option<std::time::Duration>>> {
        login_failures::failure_blocks(self.db(), keys).await
    }

    async fn remember_login(
        &self,
        key_digest: &[u8; 32],
        known_for: std::time::Duration,
    ) -> StoreResult<()> {
        login_failures::remember_login(self.db(), key_digest, known_for).await?;
        self.sweep_login_state_if_due().await;
        Ok(())
    }

    async fn login_known(&self, key_digest: &[u8; 32]) -> StoreResult<bool> {
        login_failures::login_known(self.db(), key_digest).await
    }

    async fn sweep_login_state(&self) -> StoreResult<u64> {
        sessions::sweep(self.db()).await
    }
}
