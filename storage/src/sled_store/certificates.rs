//! Facilities' certificates in the sled engine: one tree, `certificates`, keyed
//! `bsnr\0environment`, holding each [`FacilityCertificate`] as JSON (its key wrapped, see the
//! record). A deposit replaces the record whole, so a site's certificate and key always belong
//! together.

use super::{backend, decode, encode, Engine};
use crate::{sled_gate, Environment, FacilityCertificate, StoreResult};

/// `bsnr\0environment`: key of the `certificates` tree.
fn key(bsnr: &str, environment: Environment) -> Vec<u8> {
    let mut key = Vec::with_capacity(bsnr.len() + 1 + environment.as_str().len());
    key.extend_from_slice(bsnr.as_bytes());
    key.push(0);
    key.extend_from_slice(environment.as_str().as_bytes());
    key
}

fn what(bsnr: &str, environment: Environment) -> String {
    format!("certificate {bsnr}/{environment}")
}

impl Engine {
    pub(super) async fn put_certificate(
        &self,
        certificate: FacilityCertificate,
    ) -> StoreResult<bool> {
        let value = encode(&certificate)?;
        let replaced = {
            // Every write goes through the gate (see `sled_gate`).
            let _gate = sled_gate::exclusive();
            self.certificates
                .insert(key(&certificate.bsnr, certificate.environment), value)
                .map_err(backend)?
                .is_some()
        };
        self.flush().await?;
        Ok(replaced)
    }

    pub(super) async fn certificate(
        &self,
        bsnr: &str,
        environment: Environment,
    ) -> StoreResult<Option<FacilityCertificate>> {
        self.certificates
            .get(key(bsnr, environment))
            .map_err(backend)?
            .map(|bytes| decode(&what(bsnr, environment), &bytes))
            .transpose()
    }

    pub(super) async fn certificates(&self) -> StoreResult<Vec<FacilityCertificate>> {
        let mut all = self
            .certificates
            .iter()
            .map(|entry| {
                let (_, bytes) = entry.map_err(backend)?;
                decode::<FacilityCertificate>("certificate", &bytes)
            })
            .collect::<StoreResult<Vec<_>>>()?;
        // Keys sort `production` before `test`; operators read test first.
        all.sort_by(|a, b| (&a.bsnr, a.environment).cmp(&(&b.bsnr, b.environment)));
        Ok(all)
    }

    pub(super) async fn remove_certificate(
        &self,
        bsnr: &str,
        environment: Environment,
    ) -> StoreResult<bool> {
        let removed = {
            let _gate = sled_gate::exclusive();
            self.certificates
                .remove(key(bsnr, environment))
                .map_err(backend)?
                .is_some()
        };
        if removed {
            self.flush().await?;
        }
        Ok(removed)
    }
}
