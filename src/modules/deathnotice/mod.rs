//! `deathnotice`: death notification to the civil registry office. One request carries exactly
//! one of three report types, each a slot of the request and a form of its own (spec/01 §2.4,
//! `docs/xpersonenstand-084.md`):
//! - `Einrichtung` → `/forms/deathnotice/084020`, message `portal2StA.Sterbefall.084020`;
//! - `Bestatter` → `/forms/deathnotice/084021`, message `portal2StA.Sterbefall.084021`;
//! - `Todesbescheinigung` → `/forms/deathnotice/084040`, message `portal2StA.Sterbefall.084040`.

mod fields;
mod message;

use std::sync::{Arc, LazyLock};

use serde_json::{Map, Value};

use crate::module_layer::{
    Checked, Completed, Form, Module, ModuleInfo, ModuleSetup, NoSettings, SetupError,
    SignatureRule, Violation,
};
use crate::xpersonenstand::{self as xps, XPersonenstandSettings};
use message::{slot_in, Meldung, SLOTS};

/// One form per slot, in the order of [`SLOTS`]. All three are signed by their author: the two
/// notices because their legal basis (§ 3a (2) VwVfG i.V.m. § 63 PStV) asks for the written
/// form, the death certificate because it is the physician's own declaration (see
/// `docs/decisions.md`).
static FORMS: [Form; 3] = [
    Form::new(
        "/forms/deathnotice/084020",
        "Sterbefallanzeige der Einrichtung",
        SignatureRule::SealOrEndUser,
    )
    .below("Einrichtung.")
    .report_type("Sterbefallanzeige der Einrichtung (084020)"),
    Form::new(
        "/forms/deathnotice/084021",
        "Sterbefallanzeige des Bestatters",
        SignatureRule::SealOrEndUser,
    )
    .below("Bestatter.")
    .report_type("Sterbefallanzeige des Bestatters (084021)"),
    Form::new(
        "/forms/deathnotice/084040",
        "Todesbescheinigung",
        SignatureRule::SealOrEndUser,
    )
    .below("Todesbescheinigung.")
    .report_type("Todesbescheinigung (084040)"),
];

/// The module's identity; lazy only because its field table is (see [`fields::FIELDS`]).
static INFO: LazyLock<ModuleInfo> = LazyLock::new(|| {
    xps::module_info("deathnotice", &fields::FIELDS, &FORMS).with_mock_ids("DEATHNOTICE")
});

/// The death-notice module.
struct Deathnotice(XPersonenstandSettings);

/// Builds the module (`[modules.deathnotice]` has only the layer's `retention_secs`).
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    setup.settings::<NoSettings>(INFO.module)?;
    Ok(Arc::new(Deathnotice(XPersonenstandSettings::read(setup)?)))
}

/// The slot a form fills (`Einrichtung` for the prefix `Einrichtung.`).
fn slot_of(form: &Form) -> &str {
    form.prefix.trim_end_matches('.')
}

/// The exactly-one-slot rule of spec/01 §4.1 rule 8. A slot that is given but is no object
/// counts as given: the field table already says it must be an object, and one mistake should
/// give one message.
fn check_slots(request: &Map<String, Value>) -> Vec<Violation> {
    let given: Vec<&str> = SLOTS
        .into_iter()
        .filter(|slot| request.get(*slot).is_some_and(|v| !v.is_null()))
        .collect();
    let all = SLOTS.join(", ");
    match given.len() {
        1 => Vec::new(),
        0 => vec![Violation::whole(format!(
            "exactly one of {all} must be given"
        ))],
        _ => vec![Violation::whole(format!(
            "exactly one of {all} must be given, not several: {}",
            given.join(", ")
        ))],
    }
}

impl Module for Deathnotice {
    fn info(&self) -> &'static ModuleInfo {
        &INFO
    }

    fn check_request(&self, request: &Map<String, Value>) -> Vec<Violation> {
        check_slots(request)
    }

    fn form_for(&self, memento: &Value) -> Option<&'static Form> {
        let slot = slot_in(memento)?;
        FORMS.iter().find(|form| slot_of(form) == slot)
    }

    fn checked_message(&self, report: Completed<'_>) -> Checked {
        let slot = slot_of(report.form);
        let label = |path: &str| fields::label(slot, &path[report.form.prefix.len()..]);
        xps::checked_message::<Meldung>(report, INFO.fields, label, &self.0)
    }

    xps::message_methods!(Meldung, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module_layer::fields::assert_table_fits;
    use crate::xpersonenstand::Content;
    use meldewerk_xml::xpersonenstand::Nachricht;
    use meldewerk_xml::xpersonenstand::{
        SterbefallBestatter, SterbefallEinrichtung, Todesbescheinigung,
    };
    use serde_json::json;

    #[test]
    fn every_field_path_is_a_member_of_the_typed_model() {
        assert_table_fits::<SterbefallEinrichtung>(&fields::FIELDS, "Einrichtung.");
        assert_table_fits::<SterbefallBestatter>(&fields::FIELDS, "Bestatter.");
        assert_table_fits::<Todesbescheinigung>(&fields::FIELDS, "Todesbescheinigung.");
    }

    #[test]
    fn every_path_a_slot_can_miss_has_a_label() {
        let empty = json!({});
        for slot in SLOTS {
            let meldung = Meldung::read(&empty, &format!("{slot}.")).unwrap();
            for path in meldung.pflichtfelder_offen() {
                assert_ne!(fields::label(slot, path), path, "{slot}.{path}");
            }
        }
    }

    #[test]
    fn exactly_one_slot() {
        let check = |v: Value| check_slots(v.as_object().unwrap());
        assert!(check(json!({"Einrichtung": {}})).is_empty());
        assert!(check(json!({"Bestatter": "x"})).is_empty());
        let none = check(json!({"Einrichtung": null}));
        assert_eq!(
            none,
            vec![Violation::whole(
                "exactly one of Einrichtung, Bestatter, Todesbescheinigung must be given"
            )]
        );
        let two = check(json!({"Einrichtung": {}, "Todesbescheinigung": {}}));
        assert_eq!(two.len(), 1);
        assert!(two[0]
            .detail
            .ends_with("not several: Einrichtung, Todesbescheinigung"));
    }

    #[test]
    fn each_memento_opens_the_form_of_its_slot() {
        let module = Deathnotice(XPersonenstandSettings::default());
        for (slot, form) in SLOTS.iter().zip(&FORMS) {
            let found = module.form_for(&json!({"id": "a", (*slot): {}})).unwrap();
            assert!(std::ptr::eq(found, form));
        }
        assert!(module.form_for(&json!({"id": "a"})).is_none());
        assert!(module
            .form_for(&json!({"Einrichtung": {}, "Bestatter": {}}))
            .is_none());
    }

    #[test]
    fn an_unticked_exact_box_beside_a_time_means_not_exact() {
        let content = json!({"Einrichtung": {"sterbefall": {"todeszeitpunkt": {"todestag":
            {"zeitpunkt": "2026-11-20T14:30:00+01:00"}}}}});
        let Meldung::Einrichtung(m) = Meldung::read(&content, "Einrichtung.").unwrap() else {
            panic!("wrong slot")
        };
        let todestag = m
            .sterbefall
            .unwrap()
            .todeszeitpunkt
            .unwrap()
            .todestag
            .unwrap();
        assert_eq!(todestag.uhrzeit_exakt, Some(false));
    }
}
