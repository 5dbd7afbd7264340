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

    #[test]
    fn empty_values_are_left_out() {
        let v = serde_json::json!({"id":"1","a":null,"b":"","c":{"d":null},"e":[],"f":false,"g":{"h":"x"}});
        assert_eq!(
            strip_empty(v).unwrap(),
            serde_json::json!({"id":"1","f":false,"g":{"h":"x"}})
        );
    }
}
