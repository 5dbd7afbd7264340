//! Signatures on delivered messages: the API user's deposited seal when there is one, otherwise
//! the end user's signature act from the form, attested with the portal's own key; messages that
//! need no personal signature are signed by the portal as their sender, and those whose sender
//! the authority knows by its certificate are not signed.

use std::sync::Arc;

use meldewerk_actors::{BuildError, MessageSigner};
use meldewerk_storage::{MessageSignature, Report, Store};
use ring::signature::{Ed25519KeyPair, KeyPair};

use crate::crypto::{MasterKey, SEAL_KEY};
use crate::module_layer::{Module, SignatureRule};

/// Signs one module's built messages for the engine.
pub struct Signer {
    store: Arc<dyn Store>,
    master: Arc<MasterKey>,
    portal_key: Ed25519KeyPair,
    module: Arc<dyn Module>,
}

impl Signer {
    /// A signer for `module`'s messages; the portal key is derived from the master key, so it is
    /// stable across restarts.
    pub fn new(store: Arc<dyn Store>, master: Arc<MasterKey>, module: Arc<dyn Module>) -> Self {
        let seed = master.derive("portal-signing-key");
        let portal_key = Ed25519KeyPair::from_seed_unchecked(&seed).expect("32-byte seed");
        Signer {
            store,
            master,
            portal_key,
            module,
        }
    }

    fn portal_signature(&self, body: &[u8], kind: &str, signer: &str) -> MessageSignature {
        MessageSignature {
            kind: kind.into(),
            algorithm: "Ed25519".into(),
            value: self.portal_key.sign(body).as_ref().to_vec(),
            public_key: self.portal_public_key(),
            signer: signer.into(),
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
        let rule = report
            .submission
            .as_ref()
            .and_then(|content| self.module.form_for(content))
            .map(|form| form.signature);
        match rule {
            // A message that needs no personal signature is the portal's to sign, whether or
            // not the API user has a seal: it is not the user's declaration.
            Some(SignatureRule::Portal) => {
                return Ok(Some(self.portal_signature(body, "portal", "meldewerk")))
            }
            // Nor is a message whose sender the authority knows by its certificate; and since
            // it takes no signature, none is made.
            Some(SignatureRule::SenderCertificate) => return Ok(None),
            Some(SignatureRule::SealOrEndUser) | None => {}
        }
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
        if let Some(signature) = &report.end_user_signature {
            return Ok(Some(self.portal_signature(
                body,
                "end-user",
                &signature.name,
            )));
        }
        Err(BuildError(
            "neither a seal nor a signature is present; the report cannot be sent".into(),
        ))
    }
}
