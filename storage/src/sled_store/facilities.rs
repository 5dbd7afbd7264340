//! The facility registry in sled: `facilities` (BSNR → [`Facility`]) and `customer_scopes`
//! (customer id → [`CustomerScope`]). BSNRs are nine digits, so the tree's byte order is their
//! order and a page is a range read. Each change is one transaction on its tree, then a flush,
//! as every other write of the engine. Single facilities and scopes are read through caches
//! (`read_cache.rs`) that each change invalidates after its transaction, also a failed one (sled
//! may have applied it in memory).

use super::{backend, decode, encode, in_tx, tx_error, Engine, TxResult};
use crate::sled_gate::GatedTransaction;
use crate::{Bsnr, CustomerScope, Facility, FacilityPut, StoreResult};

fn facility_what(bsnr: &Bsnr) -> String {
    format!("facility {bsnr}")
}

impl Engine {
    pub(super) async fn facility_put(&self, mut facility: Facility) -> StoreResult<FacilityPut> {
        let key = facility.bsnr.as_str().as_bytes().to_vec();
        let what = facility_what(&facility.bsnr);
        let replaced = self
            .facilities
            .gated_transaction(|tree| {
                let old = match tree.get(&key)? {
                    Some(bytes) => Some(in_tx(decode::<Facility>(&what, &bytes))?),
                    None => None,
                };
                let mut stored = facility.clone();
                if let Some(old) = &old {
                    stored.created_at = old.created_at;
                }
                tree.insert_blind(key.as_slice(), in_tx(encode(&stored))?)?;
                Ok(old.map(|old| old.created_at))
            })
            .map_err(tx_error);
        self.facility_cache.invalidate(facility.bsnr.as_str());
        let replaced = replaced?;
        self.flush().await?;
        Ok(match replaced {
            Some(created_at) => {
                facility.created_at = created_at;
                FacilityPut::Replaced(facility)
            }
            None => FacilityPut::Created(facility),
        })
    }

    pub(super) fn facility_get(&self, bsnr: &Bsnr) -> StoreResult<Option<Facility>> {
        self.facility_cache.get_or_read(bsnr.as_str(), || {
            self.facilities
                .get(bsnr.as_str().as_bytes())
                .map_err(backend)?
                .map(|bytes| decode(&facility_what(bsnr), &bytes))
                .transpose()
        })
    }

    pub(super) fn facility_page(
        &self,
        after: Option<&Bsnr>,
        limit: usize,
    ) -> StoreResult<Vec<Facility>> {
        let entries = match after {
            Some(after) => {
                let start = std::ops::Bound::Excluded(after.as_str().as_bytes().to_vec());
                self.facilities
                    .range::<Vec<u8>, _>((start, std::ops::Bound::Unbounded))
            }
            None => self.facilities.iter(),
        };
        entries
            .take(limit)
            .map(|entry| {
                let (key, bytes) = entry.map_err(backend)?;
                decode(
                    &format!("facility {}", String::from_utf8_lossy(&key)),
                    &bytes,
                )
            })
            .collect()
    }

    pub(super) async fn facility_remove(&self, bsnr: &Bsnr) -> StoreResult<bool> {
        let key = bsnr.as_str().as_bytes();
        let removed = self
            .facilities
            .gated_transaction(|tree| -> TxResult<bool> { Ok(tree.remove(key)?.is_some()) })
            .map_err(tx_error);
        self.facility_cache.invalidate(bsnr.as_str());
        let removed = removed?;
        if removed {
            self.flush().await?;
        }
        Ok(removed)
    }

    pub(super) async fn scope_set(&self, scope: CustomerScope) -> StoreResult<()> {
        let key = scope.customer.as_bytes();
        let value = encode(&scope)?;
        let changed = self
            .customer_scopes
            .gated_transaction(|tree| -> TxResult<()> {
                if scope.iks.is_empty() {
                    tree.remove_blind(key)?;
                } else {
                    tree.insert_blind(key, value.as_slice())?;
                }
                Ok(())
            })
            .map_err(tx_error);
        self.scope_cache.invalidate(&scope.customer);
        changed?;
        self.flush().await
    }

    pub(super) fn scope_get(&self, customer: &str) -> StoreResult<Option<CustomerScope>> {
        self.scope_cache.get_or_read(customer, || {
            self.customer_scopes
                .get(customer.as_bytes())
                .map_err(backend)?
                .map(|bytes| decode(&format!("scope of customer {customer}"), &bytes))
                .transpose()
        })
    }
}
