//! Keys: the server's master key, wrapping of per-user keys under it, argon2id password hashing and
//! memento-key derivation, and the sealed (AES-256-GCM) envelope shared by mementos and magic tokens.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use meldewerk_storage::WrappedKey;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};

/// Why a key operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    /// The master key file could not be read or written.
    #[error("master key {path}: {reason}")]
    MasterKeyFile {
        /// File path.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A configured or stored key has the wrong form.
    #[error("invalid key: {0}")]
    InvalidKey(String),
    /// Decryption failed: wrong key, or the data was changed.
    #[error("decryption failed")]
    Decrypt,
    /// argon2 failed (bad parameters or a malformed stored hash).
    #[error("password hashing failed: {0}")]
    Hashing(String),
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .expect("the operating system's random number generator failed");
    bytes
}

/// Nonces fetched from the operating system at once (341 of them): one `getrandom` call per
/// batch instead of one per seal, a visible part of a memento request's cost (it seals twice).
const NONCE_BATCH: usize = 341 * NONCE_LEN;

/// A fresh nonce: operating-system randomness, fetched a batch at a time per thread. AES-GCM asks
/// of a nonce only that it is never used twice with a key, and nonces are written in the clear
/// beside the ciphertext, so holding some in memory before use gives nothing away. Each byte is
/// handed out once; the process never forks without exec, so no copy of a batch exists.
fn fresh_nonce() -> [u8; NONCE_LEN] {
    thread_local! {
        static BATCH: std::cell::RefCell<([u8; NONCE_BATCH], usize)> =
            const { std::cell::RefCell::new(([0; NONCE_BATCH], NONCE_BATCH)) };
    }
    BATCH.with_borrow_mut(|(bytes, used)| {
        if *used == NONCE_BATCH {
            SystemRandom::new()
                .fill(bytes)
                .expect("the operating system's random number generator failed");
            *used = 0;
        }
        let mut nonce = [0; NONCE_LEN];
        nonce.copy_from_slice(&bytes[*used..*used + NONCE_LEN]);
        // Wiped as it is handed out: a batch holds only nonces not yet used.
        bytes[*used..*used + NONCE_LEN].fill(0);
        *used += NONCE_LEN;
        nonce
    })
}

fn aes_key(bytes: &[u8]) -> Result<LessSafeKey, CryptoError> {
    UnboundKey::new(&AES_256_GCM, bytes)
        .map(LessSafeKey::new)
        .map_err(|_| CryptoError::InvalidKey("an AES-256 key has 32 bytes".into()))
}

/// AES-256-GCM with a fresh random nonce: `nonce || ciphertext || tag`.
fn seal(key: &LessSafeKey, aad: &[u8], plaintext: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(NONCE_LEN + plaintext.len() + 16);
    seal_into(key, aad, plaintext, &mut out);
    out
}

/// [`seal`] appended to `out`, encrypted where it lands (no copy of the plaintext in between).
fn seal_into(key: &LessSafeKey, aad: &[u8], plaintext: &[u8], out: &mut Vec<u8>) {
    let nonce = fresh_nonce();
    out.extend_from_slice(&nonce);
    let start = out.len();
    out.extend_from_slice(plaintext);
    let tag = key
        .seal_in_place_separate_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(aad),
            &mut out[start..],
        )
        .expect("AES-GCM sealing of a bounded buffer cannot fail");
    out.extend_from_slice(tag.as_ref());
}

fn open(key: &LessSafeKey, aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, CryptoError> {
    if sealed.len() < NONCE_LEN + 16 {
        return Err(CryptoError::Decrypt);
    }
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| CryptoError::Decrypt)?;
    let mut body = body.to_vec();
    let plain = key
        .open_in_place(nonce, Aad::from(aad), &mut body)
        .map_err(|_| CryptoError::Decrypt)?;
    Ok(plain.to_vec())
}

/// The server's master key. It never leaves the process; it wraps every per-user secret.
pub struct MasterKey {
    key: LessSafeKey,
    raw: [u8; 32],
    /// Memento keys opened so far, by key id, with the wrapped bytes they were opened from.
    /// A password change issues a new key id, so a cached key is never served for a record
    /// that no longer names it; the wrapped bytes are compared on every hit all the same.
    user_keys: Mutex<HashMap<String, OpenUserKey>>,
}

/// A memento key as opened: the wrapped bytes it came from, and the key.
type OpenUserKey = (Vec<u8>, Arc<UserKey>);

/// Most memento keys kept open at once; the cache starts over when it is full.
const MAX_OPEN_USER_KEYS: usize = 1024;

impl MasterKey {
    /// Uses the configured key (base64url, 32 bytes) or the key file in the data directory,
    /// creating the file with mode 0600 when it does not exist yet.
    pub fn load_or_create(data_dir: &Path, configured: Option<&str>) -> Result<Self, CryptoError> {
        if let Some(encoded) = configured {
            let raw = URL_SAFE_NO_PAD
                .decode(encoded.trim().trim_end_matches('='))
                .map_err(|_| CryptoError::InvalidKey("master_key is not base64url".into()))?;
            return Self::from_bytes(&raw);
        }
        let path = data_dir.join("master.key");
        let file_error = |reason: String| CryptoError::MasterKeyFile {
            path: path.display().to_string(),
            reason,
        };
        match std::fs::read(&path) {
            Ok(raw) => Self::from_bytes(&raw),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let raw = random_bytes::<32>();
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create_new(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                let mut file = options.open(&path).map_err(|e| file_error(e.to_string()))?;
                file.write_all(&raw)
                    .and_then(|_| file.sync_all())
                    .map_err(|e| file_error(e.to_string()))?;
                Self::from_bytes(&raw)
            }
            Err(e) => Err(file_error(e.to_string())),
        }
    }

    fn from_bytes(raw: &[u8]) -> Result<Self, CryptoError> {
        let raw: [u8; 32] = raw
            .try_into()
            .map_err(|_| CryptoError::InvalidKey("the master key has 32 bytes".into()))?;
        Ok(MasterKey {
            key: aes_key(&raw)?,
            raw,
            user_keys: Mutex::new(HashMap::new()),
        })
    }

    /// Wraps a secret; `purpose` and the key id are bound as associated data so that a wrapped
    /// key cannot be swapped for another user's or used for another purpose.
    pub fn wrap(&self, purpose: &str, secret: &[u8]) -> WrappedKey {
        let key_id = URL_SAFE_NO_PAD.encode(random_bytes::<KEY_ID_LEN>());
        let wrapped = seal(&self.key, wrap_aad(purpose, &key_id).as_bytes(), secret);
        WrappedKey { key_id, wrapped }
    }

    /// Opens a wrapped secret.
    pub fn unwrap(&self, purpose: &str, wrapped: &WrappedKey) -> Result<Vec<u8>, CryptoError> {
        open(
            &self.key,
            wrap_aad(purpose, &wrapped.key_id).as_bytes(),
            &wrapped.wrapped,
        )
    }

    /// A 32-byte secret derived from the master key for one purpose (HKDF-SHA256), so that the
    /// server's own keys (portal signing key, credential-cache HMAC) need no further files.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        struct Len32;
        impl ring::hkdf::KeyType for Len32 {
            fn len(&self) -> usize {
                32
            }
        }
        let prk = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, b"meldewerk").extract(&self.raw);
        let info = [purpose.as_bytes()];
        let okm = prk
            .expand(&info, Len32)
            .expect("32 bytes is a valid HKDF length");
        let mut out = [0u8; 32];
        okm.fill(&mut out).expect("32 bytes is a valid HKDF length");
        out
    }
}

fn wrap_aad(purpose: &str, key_id: &str) -> String {
    format!("meldewerk-wrap/{purpose}/{key_id}")
}

/// Bytes of a key id (it travels base64url-encoded in every token).
pub const KEY_ID_LEN: usize = 12;

/// Purpose label of wrapped memento keys.
pub const MEMENTO_KEY: &str = "memento-key";
/// Purpose label of wrapped seal keys.
pub const SEAL_KEY: &str = "seal-key";
/// Purpose label of facilities' wrapped certificate keys; the site and environment are bound
/// after it (`certificate-key/123456789/test`), so that a key cannot be moved to another.
pub const CERTIFICATE_KEY: &str = "certificate-key";

/// argon2id with the configured cost, for password hashes and memento-key derivation.
#[derive(Clone)]
pub struct PasswordHasher {
    argon2: Argon2<'static>,
}

impl PasswordHasher {
    /// A hasher with `memory_kib` and `iterations` (one lane).
    pub fn new(memory_kib: u32, iterations: u32) -> Result<Self, CryptoError> {
        let params = Params::new(memory_kib, iterations, 1, Some(32))
            .map_err(|e| CryptoError::Hashing(e.to_string()))?;
        Ok(PasswordHasher {
            argon2: Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
        })
    }

    /// PHC string of the password with a fresh salt.
    pub fn hash(&self, password: &str) -> Result<String, CryptoError> {
        let salt = SaltString::generate(&mut OsRng);
        self.argon2
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| CryptoError::Hashing(e.to_string()))
    }

    /// Whether `password` matches the PHC string (its own parameters apply). Constant-time.
    pub fn verify(&self, password: &str, phc: &str) -> bool {
        match PasswordHash::new(phc) {
            Ok(parsed) => self
                .argon2
                .verify_password(password.as_bytes(), &parsed)
                .is_ok(),
            Err(_) => false,
        }
    }

    /// A 32-byte memento key derived from the password with its own random salt. The salt is not
    /// kept: the key is stored wrapped, and a new password always means a new key.
    pub fn derive_memento_key(&self, password: &str) -> Result<[u8; 32], CryptoError> {
        let salt = random_bytes::<16>();
        let mut key = [0u8; 32];
        self.argon2
            .hash_password_into(password.as_bytes(), &salt, &mut key)
            .map_err(|e| CryptoError::Hashing(e.to_string()))?;
        Ok(key)
    }
}

/// What a sealed envelope carries, bound as associated data so that a memento can never be
/// redeemed as a magic token or the other way round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    /// A pre-fill memento.
    Memento,
    /// A magic-link token.
    MagicToken,
}

const ENVELOPE_VERSION: u8 = 1;

impl Envelope {
    fn tag(self) -> u8 {
        match self {
            Envelope::Memento => b'M',
            Envelope::MagicToken => b'T',
        }
    }
}

/// A user's memento key, ready to seal and open envelopes.
pub struct UserKey {
    key_id: String,
    key_id_raw: [u8; KEY_ID_LEN],
    key: LessSafeKey,
}

impl UserKey {
    /// Opens the user's wrapped memento key with the master key.
    pub fn unwrap(master: &MasterKey, wrapped: &WrappedKey) -> Result<Self, CryptoError> {
        let raw = master.unwrap(MEMENTO_KEY, wrapped)?;
        let key_id_raw: [u8; KEY_ID_LEN] = URL_SAFE_NO_PAD
            .decode(&wrapped.key_id)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| CryptoError::InvalidKey("malformed key id".into()))?;
        Ok(UserKey {
            key_id: wrapped.key_id.clone(),
            key_id_raw,
            key: aes_key(&raw)?,
        })
    }

    /// Like [`UserKey::unwrap`], but each wrapped key is opened only once: unwrapping is an
    /// AES-GCM open plus a key schedule, and every memento request needs the key.
    pub fn cached(master: &MasterKey, wrapped: &WrappedKey) -> Result<Arc<Self>, CryptoError> {
        let mut keys = master.user_keys.lock().expect("user key cache lock");
        if let Some((bytes, key)) = keys.get(&wrapped.key_id) {
            if *bytes == wrapped.wrapped {
                return Ok(key.clone());
            }
        }
        let key = Arc::new(Self::unwrap(master, wrapped)?);
        if keys.len() >= MAX_OPEN_USER_KEYS {
            keys.clear();
        }
        keys.insert(
            wrapped.key_id.clone(),
            (wrapped.wrapped.clone(), key.clone()),
        );
        Ok(key)
    }

    /// The key's public id.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    fn aad(&self, kind: Envelope) -> [u8; 2 + KEY_ID_LEN] {
        let mut aad = [0u8; 2 + KEY_ID_LEN];
        aad[0] = ENVELOPE_VERSION;
        aad[1] = kind.tag();
        aad[2..].copy_from_slice(&self.key_id_raw);
        aad
    }

    /// URL-safe envelope: `version || key id || nonce || ciphertext || tag`, base64url without
    /// padding. Only the version and the key id are readable without the key.
    pub fn seal(&self, kind: Envelope, plaintext: &[u8]) -> String {
        let mut out = Vec::with_capacity(1 + KEY_ID_LEN + NONCE_LEN + plaintext.len() + 16);
        out.push(ENVELOPE_VERSION);
        out.extend_from_slice(&self.key_id_raw);
        seal_into(&self.key, &self.aad(kind), plaintext, &mut out);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// Opens an envelope sealed with this key for `kind`; any change to any byte fails.
    pub fn open(&self, kind: Envelope, envelope: &str) -> Result<Vec<u8>, CryptoError> {
        let raw = URL_SAFE_NO_PAD
            .decode(envelope)
            .map_err(|_| CryptoError::Decrypt)?;
        if raw.len() < 1 + KEY_ID_LEN || raw[0] != ENVELOPE_VERSION {
            return Err(CryptoError::Decrypt);
        }
        if raw[1..1 + KEY_ID_LEN] != self.key_id_raw {
            return Err(CryptoError::Decrypt);
        }
        open(&self.key, &self.aad(kind), &raw[1 + KEY_ID_LEN..])
    }
}

/// The key id an envelope names in the clear, if it is well formed.
pub fn envelope_key_id(envelope: &str) -> Option<String> {
    // 20 characters decode to 15 bytes: enough for the version and the key id.
    let raw = URL_SAFE_NO_PAD.decode(envelope.get(..20)?).ok()?;
    if raw[0] != ENVELOPE_VERSION {
        return None;
    }
    Some(URL_SAFE_NO_PAD.encode(&raw[1..1 + KEY_ID_LEN]))
}

/// Random URL-safe identifier with `bytes` bytes of entropy (session ids, transport keys).
pub fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    SystemRandom::new()
        .fill(&mut buf)
        .expect("the operating system's random number generator failed");
    URL_SAFE_NO_PAD.encode(buf)
}

#[cfg(test)]
mod tests;
