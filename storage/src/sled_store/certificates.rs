//! Facilities' certificates in the sled engine: one tree, `certificates`, keyed
//! `bsnr\0environment`, holding each [`FacilityCertificate`] as JSON (its key wrapped, see the
//! record). A deposit replaces the record whole, so a site's certificate and key always belong
//! together.

use super::{backend, decode, encode, Engine};
use crate::{sled_gate, Bsnr, Environment, FacilityCertificate, StoreResult};

/// `bsnr\0environment`: key of the `certificates` tree.
fn key(bsnr: &Bsnr, environment: Environment) -> Vec<u8> {
    [bsnr.as_str(), environment.as_str()]
        .join("\0")
        .into_bytes()
}

fn what(bsnr: &Bsnr, environment: Environment) -> String {
    format!("certificate {bsnr}/{environment}")
}

impl Engine {
    pub(super) async fn certificate_put(
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

    pub(super) fn certificate_get(
        &self,
        bsnr: &Bsnr,
        environment: Environment,
    ) -> StoreResult<Option<FacilityCertificate>> {
        self.certificates
            .get(key(bsnr, environment))
            .map_err(backend)?
            .map(|bytes| decode(&what(bsnr, environment), &bytes))
            .transpose()
    }

    pub(super) fn certificate_list(&self) -> StoreResult<Vec<FacilityCertificate>> {
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

    pub(super) async fn certificate_remove(
        &self,
        bsnr: &Bsnr,
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
