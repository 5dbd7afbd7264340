//! Signatures on delivered messages: the API user's deposited seal when there is one, otherwise
//! the end user's signature act from the form, attested with the portal's own key.

use std::sync::Arc;

use meldewerk_actors::{BuildError, MessageSigner};
use meldewerk_storage::{MessageSignature, Report, Store};
use ring::signature::{Ed25519KeyPair, KeyPair};

use crate::crypto::{MasterKey, SEAL_KEY};

/// Signs built messages for the engine.
pub struct Signer {
    store: Arc<dyn Store>,
    master: Arc<MasterKey>,
    portal_key: Ed25519KeyPair,
}

impl Signer {
    /// A signer; the portal key is derived from the master key, so it is stable across restarts.
    pub fn new(store: Arc<dyn Store>, master: Arc<MasterKey>) -> Self {
        let seed = master.derive("portal-signing-key");
        let portal_key = Ed25519KeyPair::from_seed_unchecked(&seed).expect("32-byte seed");
        Signer {
            store,
            master,
            portal_key,
        }
    }

    /// The portal's public key (receiving offices verify end-user signature attestations with it).
    pub fn portal_public_key(&self) -> Vec<u8> {
        self.portal_key.public_key().as_ref().to_vec()
    }
}

#[async_trait::async_trait]
impl MessageSigner for Signer {
    async fn sign(
        &self,
        report: &Report,
        body: &[u8],
    ) -> Result<Option<MessageSignature>, BuildError> {
        let owner = self
            .store
            .user(&report.key.owner)
            .await
            .map_err(|e| BuildError(format!("looking up the seal failed: {e}")))?;
        if let Some(seal) = owner.and_then(|u| u.seal) {
            let pkcs8 = self
                .master
                .unwrap(SEAL_KEY, &seal.private_key)
                .map_err(|e| BuildError(format!("the seal could not be opened: {e}")))?;
            let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(&pkcs8)
                .map_err(|e| BuildError(format!("the seal is not a usable key: {e}")))?;
            return Ok(Some(MessageSignature {
                kind: "seal".into(),
                algorithm: "Ed25519".into(),
                value: pair.sign(body).as_ref().to_vec(),
                public_key: seal.public_key,
                signer: report.key.owner.clone(),
            }));
        }
        let signatory = report
            .submission
            .as_ref()
            .and_then(|s| s.get("endUserSignature"))
            .and_then(|s| s.get("name"))
            .and_then(|n| n.as_str())
            .filter(|n| !n.trim().is_empty());
        match signatory {
            Some(name) => Ok(Some(MessageSignature {
                kind: "end-user".into(),
                algorithm: "Ed25519".into(),
                value: self.portal_key.sign(body).as_ref().to_vec(),
                public_key: self.portal_public_key(),
                signer: name.to_string(),
            })),
            None => Err(BuildError(
                "neither a seal nor a signature is present; the notice cannot be sent".into(),
            )),
        }
    }
}
