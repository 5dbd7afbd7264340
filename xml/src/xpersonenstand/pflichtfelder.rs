//! Which fields the 081020 schema makes mandatory, expressed as JSON paths of the form.
//!
//! Optional sections (`elternteil2`, `mehrlingsgeburt`, `totgeburtAngaben`) count as
//! given as soon as one of their fields is filled: a form renders them as empty
//! sub-forms, and an untouched sub-form must not block dispatch.

use super::modell::{Geburtsanzeige, Mehrlingsgeburt, TotgeburtAngaben, ZweitesElternteil};
use super::werte::gesetzt;

impl Geburtsanzeige {
    /// JSON-pointer-like dotted paths (e.g. `geburtsangaben.tag`,
    /// `mutter.standard.name.familienname`) of fields that the schema makes mandatory and
    /// that are missing or blank in this notice, in document order. The form refuses to
    /// dispatch until this is empty. Which variant of `mutter` is required follows
    /// `vertraulicheGeburt`; fields of optional sections are required only once the
    /// section is given.
    pub fn missing_for_dispatch(&self) -> Vec<&'static str> {
        let mut fehlt = Vec::new();
        let mut erwarte = |vorhanden: bool, pfad: &'static str| {
            if !vorhanden {
                fehlt.push(pfad);
            }
        };

        erwarte(gesetzt(&self.name_einrichtung).is_some(), "nameEinrichtung");

        let gebaeude = self
            .anschrift_autor
            .as_ref()
            .and_then(|a| a.gebaeude.as_ref());
        let geb = |f: fn(&super::Gebaeudeanschrift) -> &Option<String>| {
            gebaeude.and_then(|g| gesetzt(f(g))).is_some()
        };
        erwarte(
            geb(|g| &g.postleitzahl),
            "anschriftAutor.gebaeude.postleitzahl",
        );
        erwarte(geb(|g| &g.strasse), "anschriftAutor.gebaeude.strasse");
        erwarte(geb(|g| &g.wohnort), "anschriftAutor.gebaeude.wohnort");

        let angaben = self.geburtsangaben.as_ref();
        erwarte(
            angaben.and_then(|a| gesetzt(&a.tag)).is_some(),
            "geburtsangaben.tag",
        );
        erwarte(
            angaben.and_then(|a| gesetzt(&a.uhrzeit)).is_some(),
            "geburtsangaben.uhrzeit",
        );

        if let Some(t) = self.totgeburt_angaben.as_ref().filter(|t| t.angegeben()) {
            erwarte(
                t.geburtsgewicht.is_some(),
                "totgeburtAngaben.geburtsgewicht",
            );
        }

        erwarte(
            self.kind.as_ref().and_then(|k| k.geschlecht).is_some(),
            "kind.geschlecht",
        );

        let mutter = self.mutter.as_ref();
        if self.vertrauliche_geburt == Some(true) {
            let v = mutter.and_then(|m| m.vertraulich.as_ref());
            erwarte(
                v.and_then(|v| gesetzt(&v.vornamen)).is_some(),
                "mutter.vertraulich.vornamen",
            );
            erwarte(
                v.and_then(|v| gesetzt(&v.familienname)).is_some(),
                "mutter.vertraulich.familienname",
            );
        } else {
            let s = mutter.and_then(|m| m.standard.as_ref());
            let name = s.and_then(|s| s.name.as_ref());
            erwarte(
                name.and_then(|n| gesetzt(&n.vornamen)).is_some(),
                "mutter.standard.name.vornamen",
            );
            erwarte(
                name.and_then(|n| gesetzt(&n.familienname)).is_some(),
                "mutter.standard.name.familienname",
            );
            erwarte(
                s.and_then(|s| gesetzt(&s.geburtsdatum)).is_some(),
                "mutter.standard.geburtsdatum",
            );
        }

        if let Some(e) = self.elternteil2.as_ref().filter(|e| e.angegeben()) {
            let name = e.name.as_ref();
            erwarte(
                name.and_then(|n| gesetzt(&n.vornamen)).is_some(),
                "elternteil2.name.vornamen",
            );
            erwarte(
                name.and_then(|n| gesetzt(&n.familienname)).is_some(),
                "elternteil2.name.familienname",
            );
        }

        if let Some(m) = self.mehrlingsgeburt.as_ref().filter(|m| m.angegeben()) {
            erwarte(m.anzahl_knaben.is_some(), "mehrlingsgeburt.anzahlKnaben");
            erwarte(
                m.anzahl_maedchen.is_some(),
                "mehrlingsgeburt.anzahlMaedchen",
            );
            erwarte(
                m.anzahl_unbestimmt.is_some(),
                "mehrlingsgeburt.anzahlUnbestimmt",
            );
        }

        fehlt
    }
}

impl ZweitesElternteil {
    pub(crate) fn angegeben(&self) -> bool {
        self.name.as_ref().is_some_and(|n| {
            gesetzt(&n.vornamen).is_some()
                || gesetzt(&n.familienname).is_some()
                || gesetzt(&n.geburtsname).is_some()
        })
    }
}

impl Mehrlingsgeburt {
    pub(crate) fn angegeben(&self) -> bool {
        self.anzahl_knaben.is_some()
            || self.anzahl_maedchen.is_some()
            || self.anzahl_unbestimmt.is_some()
    }
}

impl TotgeburtAngaben {
    pub(crate) fn angegeben(&self) -> bool {
        self.schwangerschaftswoche.is_some() || self.geburtsgewicht.is_some()
    }
}
