//! A posted form (`application/x-www-form-urlencoded`) read against a form of a module (any
//! form of any module, chosen by the first byte), as the form's submit reads it: never a panic, every problem at an input of the form, every
//! value read fitting its field (`meldewerk::fuzzing::Forms`).
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use meldewerk::fuzzing::Forms;

static FORMS: LazyLock<Forms> = LazyLock::new(Forms::of_every_module);

// The first byte chooses the form, the rest is the posted body.
fuzz_target!(|data: &[u8]| {
    if let Some((form, body)) = data.split_first() {
        let _ = FORMS.read(usize::from(*form), body);
    }
});
