//! Sessions as a browser sees them, on both kinds of keeping: the same journeys in one node's
//! memory and in a PostgreSQL database, and what only a shared database gives: a session opened
//! on one node is alive, ended and refused on another.

use std::sync::Arc;
use std::time::Duration;

use actix_web::cookie::{time, Cookie, SameSite};
use actix_web::{web, FromRequest, ResponseError};
use meldewerk_storage::postgres::testing;
use meldewerk_storage::{PgStore, Store};

use super::*;
use crate::accounts::{Accounts, Password, UserName};
use crate::crypto::{MasterKey, PasswordHasher};

/// A fresh PostgreSQL database's store.
async fn database() -> Arc<PgStore> {
    Arc::new(testing::cluster().fresh_store().await)
}

/// Sessions in memory and sessions on a fresh database, both ending after `idle`.
async fn both(idle: Duration, secure: bool) -> [(&'static str, Sessions); 2] {
    [
        ("memory", Sessions::new(idle, secure)),
        ("postgres", Sessions::shared(idle, secure, database().await)),
    ]
}

async fn create(sessions: &Sessions, user: &str, key_id: &str) -> String {
    sessions
        .create(user, key_id)
        .await
        .unwrap()
        .value()
        .to_string()
}

#[actix_web::test]
async fn a_session_lives_while_used_and_ends_when_idle_or_ended() {
    let idle = Duration::from_secs(1);
    for (kind, sessions) in both(idle, false).await {
        let one = create(&sessions, "klinik", "key-1").await;
        let two = create(&sessions, "praxis", "key-2").await;
        assert_ne!(one, two);
        let session = sessions.touch(&one).await.expect(kind);
        assert_eq!(
            (session.username.as_str(), session.key_id.as_str()),
            ("klinik", "key-1"),
            "{kind}"
        );
        let other = sessions.touch(&two).await.expect(kind);
        assert_eq!(other.username, "praxis", "{kind}");
        assert_ne!(session.csrf, other.csrf, "{kind}");
        assert_eq!(
            session.csrf,
            sessions.touch(&one).await.unwrap().csrf,
            "{kind}: one token per session"
        );
        assert!(sessions.touch("not a session").await.is_none(), "{kind}");
        // Ending one leaves the other.
        sessions.end(&two).await;
        assert!(sessions.touch(&two).await.is_none(), "{kind}");
        assert!(sessions.touch(&one).await.is_some(), "{kind}");
        // Use keeps a session alive past its idle time; idleness ends it, and it stays ended.
        // (Over twice the idle time in all, each touch well within it.)
        for _ in 0..3 {
            std::thread::sleep(idle * 6 / 10);
            assert!(sessions.touch(&one).await.is_some(), "{kind}");
        }
        std::thread::sleep(idle * 3 / 2);
        assert!(sessions.touch(&one).await.is_none(), "{kind}");
        assert!(sessions.touch(&one).await.is_none(), "{kind}: stays ended");
    }
}

#[actix_web::test]
async fn the_cookie_is_for_scripts_nowhere_and_secure_when_asked() {
    for secure in [false, true] {
        for (kind, sessions) in both(Duration::from_secs(60), secure).await {
            let cookie = sessions.create("klinik", "k").await.unwrap();
            assert_eq!(cookie.name(), COOKIE_NAME);
            assert_eq!(
                cookie.value().len(),
                43,
                "{kind}: 32 random bytes, base64url"
            );
            assert_eq!(cookie.path(), Some("/"));
            assert_eq!(cookie.http_only(), Some(true));
            assert_eq!(cookie.same_site(), Some(SameSite::Lax));
            assert_eq!(cookie.secure(), Some(secure));
            let removal = sessions.removal_cookie();
            assert_eq!((removal.name(), removal.value()), (COOKIE_NAME, ""));
            assert_eq!(removal.max_age(), Some(time::Duration::ZERO));
            assert_eq!(removal.path(), Some("/"));
            assert_eq!(removal.secure(), Some(secure));
        }
    }
    let response = NoSession::Invalid.error_response();
    assert_eq!(response.status(), 302);
    assert_eq!(response.headers().get("location").unwrap(), "/login?error");
    assert_eq!(response.headers().get("cache-control").unwrap(), "no-store");
    assert_eq!(NoSession::Invalid.to_string(), "no valid session");
    let response = NoSession::Unavailable.error_response();
    assert_eq!(response.status(), 503);
    assert!(response.headers().get("location").is_none());
    assert_eq!(response.headers().get("retry-after").unwrap(), "10");
    assert_eq!(response.headers().get("cache-control").unwrap(), "no-store");
}

/// Adds user `klinik` through `accounts`; answers its memento key id.
async fn add_klinik(accounts: &Accounts, store: &dyn Store) -> String {
    let name = UserName::parse("klinik").unwrap();
    accounts
        .add(&name, Password::parse("correct horse").unwrap(), None, None)
        .await
        .unwrap();
    store
        .user("klinik")
        .await
        .unwrap()
        .unwrap()
        .memento_key
        .key_id
}

/// What [`SessionUser`] makes of `cookie` on a node with `sessions` over `store`.
async fn extract(
    sessions: &web::Data<Sessions>,
    store: &Arc<dyn Store>,
    cookie: &Cookie<'static>,
) -> Result<SessionUser, NoSession> {
    let request = actix_web::test::TestRequest::default()
        .app_data(sessions.clone())
        .app_data(web::Data::new(store.clone()))
        .cookie(cookie.clone())
        .to_http_request();
    SessionUser::extract(&request).await
}

#[actix_web::test]
async fn the_extractor_wants_a_live_session_of_a_user_whose_key_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(meldewerk_storage::SledStore::open(&dir.path().join("db")).unwrap());
    let master = Arc::new(MasterKey::load_or_create(dir.path(), None).unwrap());
    let accounts = Accounts::new(store.clone(), master, PasswordHasher::new(64, 1).unwrap());
    let key_id = add_klinik(&accounts, store.as_ref()).await;
    let sessions = web::Data::new(Sessions::new(Duration::from_secs(60), false));
    let live = sessions.create("klinik", &key_id).await.unwrap();
    let user = extract(&sessions, &store, &live).await.unwrap();
    assert_eq!(user.user.name, "klinik");
    assert_eq!(user.session.key_id, key_id);
    // Another key id (the password changed since), an unknown user, no live session.
    let stale = sessions.create("klinik", "an older key").await.unwrap();
    let stranger = sessions.create("nobody", &key_id).await.unwrap();
    let forged = Cookie::new(COOKIE_NAME, "forged");
    for cookie in [&stale, &stranger, &forged] {
        assert!(
            extract(&sessions, &store, cookie).await.is_err(),
            "{cookie}"
        );
    }
}

#[actix_web::test]
async fn a_session_opened_on_one_node_is_used_ended_and_revoked_on_another() {
    let database = database().await;
    let store: Arc<dyn Store> = database.clone();
    let dir = tempfile::tempdir().unwrap();
    let master = Arc::new(MasterKey::load_or_create(dir.path(), None).unwrap());
    let accounts = Accounts::new(store.clone(), master, PasswordHasher::new(64, 1).unwrap());
    let key_id = add_klinik(&accounts, store.as_ref()).await;
    // Two nodes: each its own sessions object, both on the one database.
    let node = || {
        web::Data::new(Sessions::shared(
            Duration::from_secs(60),
            false,
            database.clone(),
        ))
    };
    let (a, b) = (node(), node());
    let first = a.create("klinik", &key_id).await.unwrap();
    let second = a.create("klinik", &key_id).await.unwrap();
    let on_b = extract(&b, &store, &first).await.unwrap();
    assert_eq!(on_b.user.name, "klinik");
    assert_eq!(
        on_b.session.csrf,
        a.touch(first.value()).await.unwrap().csrf,
        "the same token on both nodes"
    );
    // Ended on A: refused on B.
    a.end(first.value()).await;
    assert!(extract(&b, &store, &first).await.is_err());
    // The password changed through A: the other session is refused on B from the next request.
    assert!(extract(&b, &store, &second).await.is_ok());
    accounts
        .change_password(
            &UserName::parse("klinik").unwrap(),
            Password::parse("another horse").unwrap(),
        )
        .await
        .unwrap();
    assert!(extract(&b, &store, &second).await.is_err());
    assert!(extract(&a, &store, &second).await.is_err());
}
