//! A posted form (`application/x-www-form-urlencoded`) read against every form of every module,
//! as the form's submit reads it: never a panic, every problem at an input of the form, every
//! value read fitting its field (`meldewerk::fuzzing::Forms`).
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use meldewerk::fuzzing::Forms;

static FORMS: LazyLock<Forms> = LazyLock::new(Forms::of_every_module);

fuzz_target!(|data: &[u8]| {
    let _ = FORMS.read(data);
});
