//! The strict JSON reader of every JSON endpoint (`routes::json`, duplicate member names
//! refused): never a panic; a value read reads the same from its own serialisation
//! (`meldewerk::fuzzing::strict_json` asserts it); a body serde_json refuses is refused too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let strict = meldewerk::fuzzing::strict_json(data);
    if serde_json::from_slice::<serde_json::Value>(data).is_err() {
        assert!(strict.is_err(), "read what serde_json refuses");
    }
});
