//! The keys' tests: envelopes, wrapping, the key cache, the master key, hashing.

use super::*;

fn user_key(master: &MasterKey) -> UserKey {
    let wrapped = master.wrap(MEMENTO_KEY, &random_bytes::<32>());
    UserKey::unwrap(master, &wrapped).unwrap()
}

#[test]
fn nonces_are_never_handed_out_twice_across_batches() {
    let count = 3 * NONCE_BATCH / NONCE_LEN + 7;
    let nonces: std::collections::HashSet<[u8; NONCE_LEN]> =
        (0..count).map(|_| fresh_nonce()).collect();
    assert_eq!(nonces.len(), count);
    assert!(!nonces.contains(&[0; NONCE_LEN]));
}

#[test]
fn envelopes_open_only_with_their_key_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let master = MasterKey::load_or_create(dir.path(), None).unwrap();
    let key = user_key(&master);
    let sealed = key.seal(Envelope::Memento, b"{\"id\":\"1\"}");
    assert_eq!(
        key.open(Envelope::Memento, &sealed).unwrap(),
        b"{\"id\":\"1\"}"
    );
    assert!(key.open(Envelope::MagicToken, &sealed).is_err());
    assert!(user_key(&master).open(Envelope::Memento, &sealed).is_err());
    assert_eq!(envelope_key_id(&sealed).as_deref(), Some(key.key_id()));
    // Two seals of the same data differ (random nonce).
    assert_ne!(sealed, key.seal(Envelope::Memento, b"{\"id\":\"1\"}"));
}

#[test]
fn any_changed_character_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let master = MasterKey::load_or_create(dir.path(), None).unwrap();
    let key = user_key(&master);
    let sealed = key.seal(Envelope::MagicToken, b"payload");
    for i in 0..sealed.len() {
        let mut chars: Vec<char> = sealed.chars().collect();
        chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
        let tampered: String = chars.into_iter().collect();
        assert!(
            key.open(Envelope::MagicToken, &tampered).is_err(),
            "position {i}"
        );
    }
}

#[test]
fn an_empty_plaintext_seals_to_the_shortest_envelope_and_opens() {
    let dir = tempfile::tempdir().unwrap();
    let master = MasterKey::load_or_create(dir.path(), None).unwrap();
    let key = user_key(&master);
    let sealed = key.seal(Envelope::Memento, b"");
    assert_eq!(key.open(Envelope::Memento, &sealed).unwrap(), b"");
    // Nonce and tag alone: the one length `open` must still accept.
    let wrapped = master.wrap(SEAL_KEY, b"");
    assert_eq!(wrapped.wrapped.len(), NONCE_LEN + 16);
    assert_eq!(master.unwrap(SEAL_KEY, &wrapped).unwrap(), b"");
}

#[test]
fn short_or_foreign_envelopes_are_refused_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let master = MasterKey::load_or_create(dir.path(), None).unwrap();
    let key = user_key(&master);
    let sealed = key.seal(Envelope::Memento, b"x");
    let raw = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
    for len in 0..raw.len() {
        let cut = URL_SAFE_NO_PAD.encode(&raw[..len]);
        assert!(key.open(Envelope::Memento, &cut).is_err(), "{len} bytes");
    }
    assert!(key.open(Envelope::Memento, "not base64!").is_err());
    // Another version byte, everything else intact.
    let mut other = raw.clone();
    other[0] = ENVELOPE_VERSION + 1;
    let other = URL_SAFE_NO_PAD.encode(&other);
    assert!(key.open(Envelope::Memento, &other).is_err());
    assert_eq!(envelope_key_id(&other), None);
    assert_eq!(envelope_key_id("short"), None);
}

#[test]
fn a_wrapped_key_opens_only_under_its_own_key_id() {
    let dir = tempfile::tempdir().unwrap();
    let master = MasterKey::load_or_create(dir.path(), None).unwrap();
    let one = master.wrap(SEAL_KEY, b"one");
    let two = master.wrap(SEAL_KEY, b"two");
    assert_ne!(one.key_id, two.key_id);
    let swapped = WrappedKey {
        key_id: two.key_id.clone(),
        wrapped: one.wrapped.clone(),
    };
    assert!(master.unwrap(SEAL_KEY, &swapped).is_err());
    assert_eq!(
        URL_SAFE_NO_PAD.decode(&one.key_id).unwrap().len(),
        KEY_ID_LEN
    );
}

#[test]
fn cached_user_keys_are_opened_once_per_wrapped_key() {
    let dir = tempfile::tempdir().unwrap();
    let master = MasterKey::load_or_create(dir.path(), None).unwrap();
    let wrapped = master.wrap(MEMENTO_KEY, &random_bytes::<32>());
    let first = UserKey::cached(&master, &wrapped).unwrap();
    let again = UserKey::cached(&master, &wrapped).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    // Other keys opened meanwhile leave it open (below the bound nothing is forgotten).
    UserKey::cached(&master, &master.wrap(MEMENTO_KEY, &random_bytes::<32>())).unwrap();
    assert!(Arc::ptr_eq(
        &first,
        &UserKey::cached(&master, &wrapped).unwrap()
    ));
    // Other bytes under the same key id are opened afresh, and refused when they do not open.
    let mut changed = wrapped.clone();
    *changed.wrapped.last_mut().unwrap() ^= 1;
    assert!(UserKey::cached(&master, &changed).is_err());
    let rewrapped = WrappedKey {
        key_id: wrapped.key_id.clone(),
        wrapped: seal(
            &master.key,
            wrap_aad(MEMENTO_KEY, &wrapped.key_id).as_bytes(),
            &random_bytes::<32>(),
        ),
    };
    let other = UserKey::cached(&master, &rewrapped).unwrap();
    assert!(!Arc::ptr_eq(&first, &other));
    let sealed = first.seal(Envelope::Memento, b"x");
    assert!(other.open(Envelope::Memento, &sealed).is_err());
    // The cache starts over when full, and keeps serving keys.
    for _ in 0..MAX_OPEN_USER_KEYS {
        UserKey::cached(&master, &master.wrap(MEMENTO_KEY, &random_bytes::<32>())).unwrap();
    }
    assert!(master.user_keys.lock().unwrap().len() <= MAX_OPEN_USER_KEYS);
    let after = UserKey::cached(&master, &rewrapped).unwrap();
    assert!(!Arc::ptr_eq(&other, &after));
    assert!(Arc::ptr_eq(
        &after,
        &UserKey::cached(&master, &rewrapped).unwrap()
    ));
}

#[test]
fn a_configured_master_key_is_32_bytes_of_base64url() {
    let dir = tempfile::tempdir().unwrap();
    let encoded = URL_SAFE_NO_PAD.encode([7u8; 32]);
    let padded = format!(" {encoded}= ");
    let a = MasterKey::load_or_create(dir.path(), Some(&encoded)).unwrap();
    let b = MasterKey::load_or_create(dir.path(), Some(&padded)).unwrap();
    assert_eq!(a.derive("x"), b.derive("x"));
    assert!(!dir.path().join("master.key").exists());
    for bad in [URL_SAFE_NO_PAD.encode([7u8; 31]), "*".repeat(43)] {
        assert!(matches!(
            MasterKey::load_or_create(dir.path(), Some(&bad)),
            Err(CryptoError::InvalidKey(_))
        ));
    }
    std::fs::write(dir.path().join("master.key"), [1u8; 33]).unwrap();
    assert!(matches!(
        MasterKey::load_or_create(dir.path(), None),
        Err(CryptoError::InvalidKey(_))
    ));
}

#[test]
fn a_master_key_file_that_cannot_be_read_is_an_error_and_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("master.key")).unwrap();
    let Err(CryptoError::MasterKeyFile { path, reason }) =
        MasterKey::load_or_create(dir.path(), None)
    else {
        panic!("an unreadable key file is an error");
    };
    assert!(path.ends_with("master.key"), "{path}");
    // The reading failed, not an attempt to write a new key over it.
    assert!(reason.contains("directory"), "{reason}");
    assert!(dir.path().join("master.key").is_dir());
}

#[test]
fn derived_secrets_differ_by_purpose_and_master_key_and_are_stable() {
    let dir = tempfile::tempdir().unwrap();
    let master = MasterKey::load_or_create(dir.path(), None).unwrap();
    let signing = master.derive("signing");
    assert_eq!(signing, master.derive("signing"));
    assert_ne!(signing, master.derive("credential-cache"));
    assert_ne!(signing, [0; 32]);
    assert_ne!(signing, [1; 32]);
    let reloaded = MasterKey::load_or_create(dir.path(), None).unwrap();
    assert_eq!(reloaded.derive("signing"), signing);
    let other = tempfile::tempdir().unwrap();
    let elsewhere = MasterKey::load_or_create(other.path(), None).unwrap();
    assert_ne!(elsewhere.derive("signing"), signing);
}

#[test]
fn passwords_verify_only_against_their_own_hash() {
    let hasher = PasswordHasher::new(64, 1).unwrap();
    let phc = hasher.hash("correct horse").unwrap();
    assert!(phc.starts_with("$argon2id$"), "{phc}");
    assert!(hasher.verify("correct horse", &phc));
    assert!(!hasher.verify("correct horsE", &phc));
    assert!(!hasher.verify("correct horse", "not a phc string"));
    assert_ne!(phc, hasher.hash("correct horse").unwrap(), "a fresh salt");
    assert!(matches!(
        PasswordHasher::new(1, 1),
        Err(CryptoError::Hashing(_))
    ));
    // Memento keys: a fresh salt each time, so never the same key twice.
    let key = hasher.derive_memento_key("correct horse").unwrap();
    assert_ne!(key, [0; 32]);
    assert_ne!(key, hasher.derive_memento_key("correct horse").unwrap());
}

#[test]
fn random_tokens_carry_the_asked_entropy() {
    let token = random_token(32);
    assert_eq!(URL_SAFE_NO_PAD.decode(&token).unwrap().len(), 32);
    assert_ne!(token, random_token(32));
    assert_eq!(random_token(0), "");
}

#[test]
fn master_key_file_is_private_and_stable() {
    let dir = tempfile::tempdir().unwrap();
    let first = MasterKey::load_or_create(dir.path(), None).unwrap();
    let wrapped = first.wrap(SEAL_KEY, b"secret");
    let second = MasterKey::load_or_create(dir.path(), None).unwrap();
    assert_eq!(second.unwrap(SEAL_KEY, &wrapped).unwrap(), b"secret");
    assert!(second.unwrap(MEMENTO_KEY, &wrapped).is_err());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("master.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
