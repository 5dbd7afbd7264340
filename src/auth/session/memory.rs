//! Sessions in the memory of one node (the sled engine's): a map from the SHA-256 of each cookie
//! value to the session, bounded, swept now and then.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Session;

/// Most sessions kept; expired ones are dropped first, then the oldest tenth.
const MAX_SESSIONS: usize = 100_000;
/// Expired sessions are swept after this many new ones, so that memory follows the live
/// sessions instead of sitting at the cap.
const SWEEP_EVERY: u32 = 4_096;

/// A session and when it was last used.
struct Entry {
    session: Session,
    last_seen: Instant,
}

/// All live sessions of this node.
pub(super) struct MemorySessions {
    map: Mutex<Map>,
    capacity: usize,
}

/// The sessions, and how many were created since the last sweep.
#[derive(Default)]
struct Map {
    sessions: HashMap<[u8; 32], Entry>,
    created: u32,
}

impl Map {
    /// Makes room for one more session. Every pass over the map happens once per
    /// [`SWEEP_EVERY`] sessions or once per tenth of the capacity, never per session: the lock
    /// is the one every form request takes, and a pass over 100,000 sessions takes milliseconds.
    fn make_room(&mut self, idle: Duration, capacity: usize) {
        self.created += 1;
        if self.created < SWEEP_EVERY && self.sessions.len() < capacity {
            return;
        }
        self.created = 0;
        self.sessions.retain(|_, s| s.last_seen.elapsed() < idle);
        if self.sessions.len() < capacity {
            return;
        }
        // All alive: the oldest tenth goes, so that the next sessions find room at once.
        let drop = (capacity / 10).max(1);
        let mut ages: Vec<([u8; 32], Instant)> = self
            .sessions
            .iter()
            .map(|(k, s)| (*k, s.last_seen))
            .collect();
        // The `drop` least recently used first (every session is, when that is all of them).
        if drop < ages.len() {
            ages.select_nth_unstable_by_key(drop, |(_, seen)| *seen);
        }
        for (key, _) in &ages[..drop] {
            self.sessions.remove(key);
        }
        tracing::warn!(
            dropped = drop,
            capacity,
            "end-user sessions at their cap; the least recently used were ended"
        );
    }
}

impl MemorySessions {
    pub(super) fn new() -> Self {
        MemorySessions::with_capacity(MAX_SESSIONS)
    }

    pub(super) fn with_capacity(capacity: usize) -> Self {
        MemorySessions {
            map: Mutex::default(),
            capacity,
        }
    }

    /// Keeps `session` under the digest of its id.
    pub(super) fn insert(&self, digest: [u8; 32], session: Session, idle: Duration) {
        let mut map = self.map.lock().expect("session lock");
        map.make_room(idle, self.capacity);
        map.sessions.insert(
            digest,
            Entry {
                session,
                last_seen: Instant::now(),
            },
        );
    }

    /// The session under `digest`, if it is alive; using it keeps it alive.
    pub(super) fn touch(&self, digest: &[u8; 32], idle: Duration) -> Option<Session> {
        let mut map = self.map.lock().expect("session lock");
        let map = &mut map.sessions;
        let alive = map
            .get(digest)
            .is_some_and(|s| s.last_seen.elapsed() < idle);
        if !alive {
            map.remove(digest);
            return None;
        }
        let entry = map.get_mut(digest).expect("checked above");
        entry.last_seen = Instant::now();
        Some(entry.session.clone())
    }

    /// Ends the session under `digest`.
    pub(super) fn end(&self, digest: &[u8; 32]) {
        self.map
            .lock()
            .expect("session lock")
            .sessions
            .remove(digest);
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.map.lock().unwrap().sessions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Sessions;
    use super::*;

    fn count(sessions: &Sessions) -> usize {
        sessions.memory().len()
    }

    async fn create(sessions: &Sessions) -> String {
        sessions
            .create("klinik", "k")
            .await
            .unwrap()
            .value()
            .to_string()
    }

    #[actix_web::test]
    async fn at_the_cap_the_least_recently_used_tenth_ends_and_the_rest_live_on() {
        let sessions = Sessions::in_memory(Duration::from_secs(3600), false, 100);
        let mut cookies = Vec::new();
        for _ in 0..100 {
            cookies.push(create(&sessions).await);
        }
        // The first one is used again: not among the least recently used any more.
        assert!(sessions.touch(&cookies[0]).await.is_some());
        assert_eq!(count(&sessions), 100);
        let newest = create(&sessions).await;
        assert_eq!(count(&sessions), 91, "ten ended, one added");
        assert!(sessions.touch(&newest).await.is_some());
        assert!(sessions.touch(&cookies[0]).await.is_some(), "used lately");
        // Exactly the ten least recently used ended.
        for (i, cookie) in cookies.iter().enumerate().skip(1) {
            assert_eq!(
                sessions.touch(cookie).await.is_none(),
                i <= 10,
                "session {i}"
            );
        }
        // Room for nine more before the next pass.
        for _ in 0..9 {
            create(&sessions).await;
        }
        assert_eq!(count(&sessions), 100);
    }

    #[actix_web::test]
    async fn with_room_for_one_the_new_session_ends_the_old() {
        let sessions = Sessions::in_memory(Duration::from_secs(3600), false, 1);
        let old = create(&sessions).await;
        let new = create(&sessions).await;
        assert!(sessions.touch(&old).await.is_none());
        assert!(sessions.touch(&new).await.is_some());
    }

    #[actix_web::test]
    async fn the_idle_session_is_dropped_when_met() {
        let idle = Duration::from_millis(100);
        let sessions = Sessions::in_memory(idle, false, 100);
        let one = create(&sessions).await;
        std::thread::sleep(idle * 2);
        assert!(sessions.touch(&one).await.is_none());
        assert_eq!(count(&sessions), 0);
    }

    #[actix_web::test]
    async fn expired_sessions_are_swept_before_the_cap() {
        let idle = Duration::from_millis(50);
        let sessions = Sessions::in_memory(idle, false, 1_000_000);
        for _ in 0..10 {
            create(&sessions).await;
        }
        std::thread::sleep(idle * 2);
        // No pass over the map for one new session: the expired ones are still held.
        create(&sessions).await;
        assert_eq!(count(&sessions), 11);
        for _ in 11..SWEEP_EVERY {
            create(&sessions).await;
        }
        // Without the sweep all 4,096 would still be held; the ten expired ones at least are gone
        // (any other that expired meanwhile on a slow machine may be too).
        let held = count(&sessions);
        assert!(held <= SWEEP_EVERY as usize - 10, "{held}");
        assert!(held > 0);
    }
}
