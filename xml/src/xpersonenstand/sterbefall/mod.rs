//! Death notices of module `deathnotice` (spec 01, section 2.4): one JSON slot per
//! message. `Einrichtung` → 084020 (hospital or care facility), `Bestatter` → 084021
//! (undertaker), `Todesbescheinigung` → 084040 (physician's death certificate).
//!
//! Shared building blocks live in `modell` (types) and `gemeinsam` (writing and
//! completeness rules); each message file holds its slot type, its
//! `missing_for_dispatch` and its writer.

mod bestatter_084021;
mod einrichtung_084020;
mod gemeinsam;
mod modell;
mod todesbescheinigung_084040;

pub use bestatter_084021::{
    write_sterbefall_084021, Auskunftsgeber, Bestattungsart, MinderjaehrigesKind,
    PartnerVerstorbener, SterbefallBestatter, VerstorbenerBestatter, VolljaehrigesKind,
    ZahlDerUrkunden,
};
pub use einrichtung_084020::{write_sterbefall_084020, SterbefallEinrichtung};
pub use modell::{
    Anzeigender, GeschlechtVerstorbener, Sterbefall, Sterbeort, Sterbezeitraum, Todestag,
    Todeszeitpunkt, Verstorbener, Wohnanschrift,
};
pub use todesbescheinigung_084040::{
    write_sterbefall_084040, AngabenLeichenschau, SterbefallTodesbescheinigung, Todesbescheinigung,
    VerstorbenerTodesbescheinigung,
};
