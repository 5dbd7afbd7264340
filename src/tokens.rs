//! Mementos (encrypted pre-fill data) and magic tokens (encrypted one-click logins), both sealed
//! under the API user's memento key.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::crypto::{Envelope, UserKey};

/// What a magic link's token carries.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MagicToken {
    /// The API user the end user will act as.
    pub username: String,
    /// Path to land on after the login.
    pub target_url: String,
    /// End of validity.
    pub expires_at: DateTime<Utc>,
}

impl MagicToken {
    /// Seals the token.
    pub fn seal(&self, key: &UserKey) -> String {
        key.seal(
            Envelope::MagicToken,
            &serde_json::to_vec(self).expect("serializable"),
        )
    }

    /// Opens a token; `None` for anything that is not a token sealed with this key.
    pub fn open(key: &UserKey, token: &str) -> Option<MagicToken> {
        let plain = key.open(Envelope::MagicToken, token).ok()?;
        serde_json::from_slice(&plain).ok()
    }
}

/// Whether a login target is a local path we may redirect to: it starts with one `/`, has no
/// `..` segment trickery, no backslash (browsers read `\` as `/`), no control characters, and
/// does not lead back into a login endpoint (`/mtl`, `/bal`). Checked on the percent-decoded
/// form as well, so `%2e%2e` or `%5c` do not slip through.
pub fn is_safe_target(target: &str) -> bool {
    let decoded = percent_encoding::percent_decode_str(target).decode_utf8_lossy();
    [target, decoded.as_ref()].iter().all(|t| {
        t.starts_with('/')
            && !t.starts_with("//")
            && !t.contains("..")
            && !t.contains('\\')
            && !t.chars().any(|c| c.is_control())
            && !t.starts_with("/mtl")
            && !t.starts_with("/bal")
    })
}

/// Removes `null`, empty strings, empty objects and empty arrays, recursively: the memento
/// carries only what was given.
pub fn strip_empty(mut value: Value) -> Option<Value> {
    (!prune(&mut value)).then_some(value)
}

/// Strips `value` in place (no map or vector is rebuilt); true if nothing is left of it.
fn prune(value: &mut Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Object(map) => {
            map.retain(|_, v| !prune(v));
            map.is_empty()
        }
        Value::Array(items) => {
            items.retain_mut(|v| !prune(v));
            items.is_empty()
        }
        _ => false,
    }
}

/// Seals pre-fill data of `module` into a memento. The module's segment is sealed with the data
/// (`segment NUL json`), so that a memento opens only the forms of the module that validated it:
/// another module's rules (its reserved mock ids, its schema) were never applied to it.
pub fn seal_memento(key: &UserKey, module: &str, data: &Value) -> String {
    let mut plain = Vec::with_capacity(module.len() + 1 + 512);
    plain.extend_from_slice(module.as_bytes());
    plain.push(0);
    serde_json::to_writer(&mut plain, data).expect("serializable");
    key.seal(Envelope::Memento, &plain)
}

/// Opens a memento of `module`; `None` if it was not sealed with this key for this module, or
/// was changed.
pub fn open_memento(key: &UserKey, module: &str, memento: &str) -> Option<Value> {
    let plain = key.open(Envelope::Memento, memento).ok()?;
    let json = plain
        .strip_prefix(module.as_bytes())
        .and_then(|rest| rest.strip_prefix(&[0]))?;
    serde_json::from_slice(json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_rules() {
        for ok in ["/forms/birthnotice", "/", "/forms/x?a=b", "/a/b.c"] {
            assert!(is_safe_target(ok), "{ok}");
        }
        for bad in [
            "forms",
            "//evil.example",
            "/a/../b",
            "/mtl/x",
            "/bal/x",
            "/a\\b",
            "/%2e%2e/x",
            "/%5cevil",
            "/%2F/evil",
            "https://evil.example",
            "/a\nb",
            "",
        ] {
            assert!(!is_safe_target(bad), "{bad}");
        }
    }

    mod properties {
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use base64::Engine as _;
        use chrono::TimeZone;
        use proptest::prelude::*;

        use super::*;
        use crate::crypto::MasterKey;

        /// One user's key under a fresh master key (kept alive with its folder).
        fn key() -> (tempfile::TempDir, UserKey) {
            let dir = tempfile::tempdir().unwrap();
            let master = MasterKey::load_or_create(dir.path(), None).unwrap();
            let wrapped = master.wrap(crate::crypto::MEMENTO_KEY, &[7u8; 32]);
            let key = UserKey::unwrap(&master, &wrapped).unwrap();
            (dir, key)
        }

        /// Arbitrary JSON as a memento may carry it: objects, arrays, strings of any Unicode,
        /// numbers, booleans, null, a few levels deep.
        fn json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                "\\PC{0,40}".prop_map(Value::from),
            ];
            leaf.prop_recursive(3, 40, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                    prop::collection::btree_map("\\PC{1,12}", inner, 0..6)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        /// Every envelope that differs from `sealed` in exactly one bit of its bytes.
        fn single_bit_flips(sealed: &str) -> impl Iterator<Item = String> + '_ {
            let bytes = URL_SAFE_NO_PAD.decode(sealed).unwrap();
            (0..bytes.len() * 8).map(move |bit| {
                let mut flipped = bytes.clone();
                flipped[bit / 8] ^= 1 << (bit % 8);
                URL_SAFE_NO_PAD.encode(flipped)
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            #[test]
            fn a_memento_opens_to_what_was_sealed_and_for_its_module_only(
                data in json(),
                module in "[a-z]{1,12}",
            ) {
                let (_dir, key) = key();
                let sealed = seal_memento(&key, &module, &data);
                prop_assert_eq!(open_memento(&key, &module, &sealed), Some(data));
                let other = format!("{module}x");
                prop_assert_eq!(open_memento(&key, &other, &sealed), None);
                prop_assert!(MagicToken::open(&key, &sealed).is_none());
            }

            #[test]
            fn every_single_bit_flip_of_a_memento_is_rejected(data in json()) {
                let (_dir, key) = key();
                let sealed = seal_memento(&key, "guardianship", &data);
                for tampered in single_bit_flips(&sealed) {
                    prop_assert_eq!(open_memento(&key, "guardianship", &tampered), None);
                }
            }

            #[test]
            fn an_accepted_login_target_stays_on_this_site(
                target in "(/|//|\\\\|%2[eEfF]|%5[cC]|\\.|\\.\\.|:|[a-z]|\\?|%0[aA]){0,12}",
            ) {
                if is_safe_target(&target) {
                    let decoded = percent_encoding::percent_decode_str(&target)
                        .decode_utf8_lossy()
                        .into_owned();
                    for t in [target.as_str(), decoded.as_str()] {
                        prop_assert!(t.starts_with('/') && !t.starts_with("//"), "{}", t);
                        prop_assert!(!t.contains("..") && !t.contains('\\'), "{}", t);
                        prop_assert!(!t.chars().any(char::is_control), "{}", t);
                    }
                }
            }

            #[test]
            fn a_token_opens_to_what_was_sealed_and_every_bit_flip_is_rejected(
                username in "\\PC{1,64}",
                target_url in "/\\PC{0,80}",
                seconds in 0i64..4_000_000_000,
            ) {
                let (_dir, key) = key();
                let token = MagicToken {
                    username,
                    target_url,
                    expires_at: Utc.timestamp_opt(seconds, 0).unwrap(),
                };
                let sealed = token.seal(&key);
                prop_assert_eq!(MagicToken::open(&key, &sealed), Some(token));
                for tampered in single_bit_flips(&sealed) {
                    prop_assert!(MagicToken::open(&key, &tampered).is_none());
                }
            }
        }
    }

    #[test]
    fn empty_values_are_left_out() {
        let v = serde_json::json!({"id":"1","a":null,"b":"","c":{"d":null},"e":[],"f":false,"g":{"h":"x"}});
        assert_eq!(
            strip_empty(v).unwrap(),
            serde_json::json!({"id":"1","f":false,"g":{"h":"x"}})
        );
        // Arrays lose their empty items, and go when nothing is left of them.
        let v = serde_json::json!({"k":[null,"",{"x":null},"y",[],[0]],"l":[null,"",[]]});
        assert_eq!(strip_empty(v).unwrap(), serde_json::json!({"k":["y",[0]]}));
        assert_eq!(strip_empty(serde_json::json!([null])), None);
    }
}
