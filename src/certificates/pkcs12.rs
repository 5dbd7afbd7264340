//! Reading a facility's PKCS#12 file: the private key with its certificate chain, checked the way
//! a TLS handshake will use them (rustls with ring), and what operators are shown of it.

use chrono::{DateTime, Utc};
use p12_keystore::error::Error as P12Error;
use p12_keystore::{KeyStore, KeyStoreEntry, Pkcs12ImportPolicy};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::CertifiedKey;

use super::CertificateError;

/// What a PKCS#12 file held, checked. Its `Debug` leaves the key out.
pub(super) struct Contents {
    /// The PKCS#8 (DER) private key.
    pub(super) key_der: Vec<u8>,
    /// DER, the facility's certificate first.
    pub(super) chain_der: Vec<Vec<u8>>,
    pub(super) subject: String,
    pub(super) not_after: DateTime<Utc>,
    pub(super) fingerprint_sha256: String,
}

impl std::fmt::Debug for Contents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contents")
            .field("subject", &self.subject)
            .field("not_after", &self.not_after)
            .field("fingerprint_sha256", &self.fingerprint_sha256)
            .finish_non_exhaustive()
    }
}

/// Opens `file` with `passphrase` and checks what it holds: exactly one private key with its
/// certificate, a key rustls can sign with that fits the certificate, and a certificate still
/// valid `now`. CPU-bound (the file's key derivation): call it on a blocking thread.
pub(super) fn read(
    file: &[u8],
    passphrase: &str,
    now: DateTime<Utc>,
) -> Result<Contents, CertificateError> {
    let store =
        KeyStore::from_pkcs12(file, passphrase, Pkcs12ImportPolicy::Strict).map_err(refused)?;
    let mut chains = store.entries().filter_map(|(_, entry)| match entry {
        KeyStoreEntry::PrivateKeyChain(chain) if !chain.certs().is_empty() => Some(chain),
        _ => None,
    });
    let (Some(chain), None) = (chains.next(), chains.next()) else {
        return Err(match store.private_key_chain() {
            // The strict import keeps only keys with their certificate.
            None => CertificateError::NoKeyAndCertificate,
            Some(_) => CertificateError::SeveralKeys,
        });
    };
    let key_der = chain.key().as_der().to_vec();
    let chain_der: Vec<Vec<u8>> = chain.certs().iter().map(|c| c.as_der().to_vec()).collect();
    let leaf = &chain_der[0];
    let not_after = not_after(leaf)?;
    if not_after <= now {
        return Err(CertificateError::Expired(not_after));
    }
    certified_key(&chain_der, &key_der)?;
    Ok(Contents {
        subject: chain.certs()[0].subject().to_string(),
        not_after,
        fingerprint_sha256: fingerprint(leaf),
        key_der,
        chain_der,
    })
}

/// The chain and key as rustls (ring) signs with them: refused when the key's algorithm is not
/// one it can use, or the key is not the certificate's.
fn certified_key(chain_der: &[Vec<u8>], key_der: &[u8]) -> Result<CertifiedKey, CertificateError> {
    let chain = chain_der
        .iter()
        .map(|der| CertificateDer::from(der.clone()))
        .collect();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_der.to_vec()));
    CertifiedKey::from_der(chain, key, &rustls::crypto::ring::default_provider()).map_err(|e| {
        match e {
            rustls::Error::InconsistentKeys(_) => CertificateError::KeyMismatch,
            // ring's key loader says no more than that it found no algorithm it signs with.
            _ => CertificateError::UnsupportedKey,
        }
    })
}

/// Why the library refused the file, in the words an operator can act on. The MAC over the
/// contents is keyed with the passphrase, so a wrong one fails there; a file without a MAC fails
/// at decryption instead.
fn refused(e: P12Error) -> CertificateError {
    match e {
        P12Error::MacError(_) | P12Error::UnpadError | P12Error::Pkcs5Error(_) => {
            CertificateError::WrongPassphrase
        }
        P12Error::UnsupportedEncryptionScheme | P12Error::UnsupportedMacAlgorithm => {
            CertificateError::UnsupportedEncryption
        }
        _ => CertificateError::NotPkcs12,
    }
}

/// The end of the certificate's validity.
fn not_after(der: &[u8]) -> Result<DateTime<Utc>, CertificateError> {
    let (_, certificate) =
        x509_parser::parse_x509_certificate(der).map_err(|_| CertificateError::NotPkcs12)?;
    DateTime::from_timestamp(certificate.validity().not_after.timestamp(), 0)
        .ok_or(CertificateError::NotPkcs12)
}

/// SHA-256 of the DER encoding, lowercase hex, as the operator API shows every digest: what
/// `openssl x509 -fingerprint -sha256` shows (without its colons).
fn fingerprint(der: &[u8]) -> String {
    crate::routes::admin::messages::sha256_hex(der)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file without a MAC shows a wrong passphrase only when its contents do not decrypt;
    /// MD5-based schemes, which the library does not read, are named as such.
    #[test]
    fn the_library_s_errors_are_told_in_the_operator_s_words() {
        for (error, said) in [
            (
                P12Error::UnpadError,
                "the passphrase does not open the PKCS#12 file",
            ),
            (
                P12Error::Pkcs5Error("bad".into()),
                "the passphrase does not open the PKCS#12 file",
            ),
            (
                P12Error::UnsupportedEncryptionScheme,
                "the PKCS#12 file is encrypted with a scheme that is not supported; export it \
                 with AES (PBES2) or 3DES",
            ),
            (P12Error::InvalidVersion, "the file is not a PKCS#12 file"),
        ] {
            assert_eq!(refused(error).to_string(), said);
        }
    }
}
