//! Reading an incoming XJustiz message (`meldewerk_xml::xjustiz::read_message`, every court
//! message fetched): never a panic, and the same bytes read the same twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use meldewerk_xml::xjustiz::read_message;

fuzz_target!(|data: &[u8]| {
    let first = read_message(data);
    if let Ok(summary) = &first {
        assert_eq!(read_message(data).as_ref().ok(), Some(summary));
    }
});
