//! Opening a memento (`tokens::open_memento`, every form link and submit): arbitrary text never
//! opens (nor panics), and arbitrary JSON, what a memento request carries, seals and opens to
//! itself for its own module only.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use meldewerk::crypto::{MasterKey, UserKey, MEMENTO_KEY};
use meldewerk::fuzzing::same_json;
use meldewerk::tokens::{open_memento, seal_memento};
use serde_json::Value;

/// One user's memento key under a fixed master key (given, so nothing is written to disk).
static KEY: LazyLock<UserKey> = LazyLock::new(|| {
    let master = MasterKey::load_or_create(Path::new("."), Some(&"A".repeat(43))).unwrap();
    UserKey::unwrap(&master, &master.wrap(MEMENTO_KEY, &[7u8; 32])).unwrap()
});

fuzz_target!(|data: &[u8]| {
    let key = &*KEY;
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(open_memento(key, "labreport", text), None);
    }
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        let sealed = seal_memento(key, "labreport", &value);
        let opened = open_memento(key, "labreport", &sealed).expect("a memento sealed opens");
        assert!(same_json(&opened, &value), "{value} opened as {opened}");
        assert_eq!(open_memento(key, "hospreport", &sealed), None);
    }
});
