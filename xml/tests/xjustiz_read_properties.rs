//! Property tests of the XJustiz reader against hostile and broken input: arbitrary bytes and
//! arbitrary cuts and byte flips of a real court message never panic; a DOCTYPE (entity
//! declarations, entity expansion, external references) anywhere before the root is refused
//! whatever it declares; nesting beyond the bound is refused at any depth past it.

use meldewerk_xml::xjustiz::{read_message, ReadError, MAX_DEPTH};
use proptest::prelude::*;

/// A court's message as courts send it (the reader's fixture).
fn beschluss() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/xjustiz/betreuung_beschluss.xml"
    ))
    .unwrap()
}

const ROOT: &str = "tns:nachricht.gds.uebermittlungSchriftgutobjekte.0005005";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = read_message(&bytes);
    }

    #[test]
    fn a_cut_or_damaged_message_never_panics_and_a_cut_one_is_refused(
        cut in 0usize..100,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
    ) {
        let whole = beschluss();
        let end = whole.len() * cut / 100;
        // Cut anywhere before the root's end: never read as a message.
        let closing = whole.windows(ROOT.len() + 3)
            .rposition(|w| w.starts_with(b"</") && w[2..].starts_with(ROOT.as_bytes()))
            .unwrap();
        if end <= closing {
            prop_assert!(read_message(&whole[..end]).is_err());
        }
        let mut damaged = whole.clone();
        for (at, byte) in flips {
            let i = at.index(damaged.len());
            damaged[i] = byte;
        }
        let _ = read_message(&damaged);
    }

    #[test]
    fn any_doctype_is_refused(
        name in "[a-z]{1,8}",
        declaration in prop_oneof![
            "<!ENTITY [a-z]{1,6} \"[a-z&;]{0,40}\">",
            "<!ENTITY [a-z]{1,6} SYSTEM \"(file|http|ftp)://[a-z./]{1,30}\">",
            "<!ENTITY % [a-z]{1,6} SYSTEM \"http://[a-z.]{1,20}/x\\.dtd\"> %[a-z]{1,6};",
            // Markup characters inside a quoted literal: the parser cannot find the DOCTYPE's end.
            "<!ENTITY [a-z]{1,6} SYSTEM \"http://a/[a-z<>]{1,10}\">",
            "<!ELEMENT [a-z]{1,6} ANY>",
            Just(String::new()),
        ],
    ) {
        let message = format!(
            "<?xml version=\"1.0\"?>\n<!DOCTYPE {name} [{declaration}]>\n\
             <{ROOT} xmlns:tns=\"http://www.xjustiz.de\"/>"
        );
        prop_assert!(matches!(read_message(message.as_bytes()), Err(ReadError::Doctype)));
    }

    #[test]
    fn nesting_past_the_bound_is_refused(extra in 1usize..2000) {
        let depth = MAX_DEPTH + extra;
        let message = format!(
            "<{ROOT} xmlns:tns=\"http://www.xjustiz.de\">{}{}</{ROOT}>",
            "<a>".repeat(depth),
            "</a>".repeat(depth)
        );
        prop_assert!(matches!(read_message(message.as_bytes()), Err(ReadError::TooDeep)));
    }
}
