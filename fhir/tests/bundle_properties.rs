//! Arbitrary valid input of every kind of bundle, built and parsed by a validator nobody here
//! wrote (Python's `fhir.resources`, its R4B models; tests/python/validate_fhir.py, which also
//! compares each bundle with the DEMIS example of its kind).
//!
//! "Valid" is what the health modules let through to the builders: free text of any Unicode
//! without control characters (the field layer's rule; leading and trailing blanks included,
//! since a memento and a direct submission keep text as given), dates of the form `YYYY-MM-DD`
//! that exist in the calendar, codes of the code tables, every optional part present or absent.
//! The cases are generated first and parsed in one Python run, since a run takes a second; on a
//! failure the smallest failing bundle is printed with the input that built it, and the seed
//! (`FHIR_PROPERTIES_SEED` repeats a run).

mod validator;

use std::path::Path;

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, TimeZone};
use meldewerk_fhir::beds::{self, BedCounts, BedOccupancyReport};
use meldewerk_fhir::codes::{Code, Disease, Gender, Interpretation};
use meldewerk_fhir::hospital::{self, *};
use meldewerk_fhir::lab::{self, Finding, LaboratoryNotification, SpecimenDetails};
use meldewerk_fhir::*;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use validator::{report, validate, Case, LABORATORY};

/// Characters the generator favours besides arbitrary ones: blanks the field layer lets
/// through (no-break and ideographic spaces, line and paragraph separators), characters JSON
/// escapes, umlauts, and characters outside the basic plane.
const FAVOURED: &[char] = &[
    ' ', '\u{a0}', '\u{2007}', '\u{2028}', '\u{2029}', '\u{3000}', '"', '\\', '/', '<', '&', 'ä',
    'ß', 'Ö', '€', '\u{200b}', '\u{feff}', '😷', '𝔘',
];

/// One character the field layer accepts in free text: anything but a control character.
fn character() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => any::<char>(),
        1 => prop::sample::select(FAVOURED),
        2 => prop::char::range('a', 'z'),
    ]
    .prop_filter("no control characters", |c| !c.is_control())
}

/// Free text as a form or a memento keeps it: not empty (an empty text is left out), at most
/// a few dozen characters of [`character`].
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(character(), 1..40).prop_map(String::from_iter)
}

/// A report's id as the layer accepts it: free text of at most 128 characters, not blank.
fn report_id() -> impl Strategy<Value = String> {
    text().prop_filter("not blank", |id| !id.trim().is_empty())
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    prop::option::of(text())
}

/// `count` ASCII digits (BSNR and IK: nine, PLZ: five, `StandortId`: six).
fn digits(count: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::char::range('0', '9'), count).prop_map(String::from_iter)
}

fn email() -> impl Strategy<Value = String> {
    let part = |n| prop::collection::vec(prop::char::range('a', 'z'), 1..n);
    (part(12), part(12), part(5)).prop_map(|(local, host, top)| {
        format!(
            "{}@{}.{}",
            String::from_iter(local),
            String::from_iter(host),
            String::from_iter(top)
        )
    })
}

/// A year of four digits (`0000` is refused by the field layer, as FHIR and `xs:date` have no
/// year zero), the edges and this era favoured.
fn year() -> impl Strategy<Value = i32> {
    prop_oneof![
        2 => 1i32..=9999,
        1 => prop::sample::select(vec![1, 999, 1000, 9999]),
        2 => 1900i32..=2100,
    ]
}

/// A day the field layer accepts: `YYYY-MM-DD`, four digits of year, a day of the calendar.
fn day() -> impl Strategy<Value = NaiveDate> {
    (year(), 1u32..=12, 1u32..=31).prop_filter_map("a day of the calendar", |(y, m, d)| {
        NaiveDate::from_ymd_opt(y, m, d)
    })
}

/// An instant with an offset of the world's time zones (−12:00 to +14:00, quarter hours).
fn instant() -> impl Strategy<Value = DateTime<FixedOffset>> {
    (1900i64..=2200, 0i64..366 * 86_400, -48i32..=56).prop_map(|(year, second, quarter)| {
        let offset = FixedOffset::east_opt(quarter * 900).unwrap();
        let start = NaiveDate::from_ymd_opt(year as i32, 1, 1).unwrap();
        let at = start.and_hms_opt(0, 0, 0).unwrap() + chrono::Duration::seconds(second);
        offset.from_local_datetime(&at).unwrap()
    })
}

fn gender() -> impl Strategy<Value = Option<Gender>> {
    prop::option::of(prop::sample::select(Gender::ALL.to_vec()))
}

fn address() -> impl Strategy<Value = PostalAddress> {
    (
        opt_text(),
        opt_text(),
        prop::option::of(digits(5)),
        opt_text(),
        opt_text(),
    )
        .prop_map(
            |(street, house_number, postal_code, city, country)| PostalAddress {
                street,
                house_number,
                postal_code,
                city,
                country,
            },
        )
}

fn name() -> impl Strategy<Value = PersonName> {
    (opt_text(), opt_text()).prop_map(|(given, family)| PersonName { given, family })
}

fn named() -> impl Strategy<Value = NamedPerson> {
    (
        name(),
        gender(),
        prop::option::of(day()),
        prop::option::of(address()),
        opt_text(),
        prop::option::of(email()),
    )
        .prop_map(
            |(name, gender, birth_date, address, phone, email)| NamedPerson {
                name,
                gender,
                birth_date,
                address,
                phone,
                email,
            },
        )
}

fn unnamed() -> impl Strategy<Value = UnnamedPerson> {
    (
        gender(),
        prop::option::of((year(), 1u8..=12)),
        opt_text(),
        opt_text(),
    )
        .prop_map(|(gender, month, postal_code, country)| UnnamedPerson {
            gender,
            birth_month: month.map(|(year, month)| BirthMonth {
                year: year as u16,
                month,
            }),
            postal_code,
            country,
        })
}

fn contact() -> impl Strategy<Value = ContactPerson> {
    (opt_text(), name(), opt_text(), prop::option::of(email())).prop_map(
        |(title, name, phone, email)| ContactPerson {
            title,
            name,
            phone,
            email,
        },
    )
}

fn facility() -> impl Strategy<Value = Facility> {
    (
        opt_text(),
        prop::option::of(digits(9)),
        prop::option::of(digits(9)),
        prop::option::of(address()),
        opt_text(),
        prop::option::of(email()),
    )
        .prop_map(|(name, bsnr, ik, address, phone, email)| Facility {
            name,
            bsnr,
            ik,
            address,
            phone,
            email,
        })
}

/// A code of `table`.
fn code_of(table: &'static [Code]) -> impl Strategy<Value = String> {
    prop::sample::select(table).prop_map(|c| c.code.to_owned())
}

fn laboratory() -> impl Strategy<Value = LaboratoryNotification> {
    prop::sample::select(Disease::ALL.to_vec()).prop_flat_map(|disease| {
        let codes = disease.codes();
        let finding = (
            code_of(codes.tests),
            code_of(codes.methods),
            prop::sample::select(Interpretation::ALL.to_vec()),
            opt_text(),
        )
            .prop_map(|(test, method, interpretation, note)| Finding {
                test,
                method,
                interpretation,
                note,
            });
        let specimen = (
            code_of(codes.materials),
            prop::option::of(instant()),
            prop::option::of(instant()),
            opt_text(),
        )
            .prop_map(|(material, collected, received, note)| SpecimenDetails {
                material,
                collected,
                received,
                note,
            });
        let patient = prop_oneof![
            named().prop_map(NotifiedPerson::Named),
            unnamed().prop_map(NotifiedPerson::Unnamed),
        ];
        (
            (report_id(), prop::option::of(day()), opt_text(), patient),
            (
                facility(),
                prop::option::of(contact()),
                prop::option::of(facility()),
            ),
            (prop::collection::vec(finding, 1..4), specimen, opt_text()),
        )
            .prop_map(
                move |(
                    (report_id, report_date, follows_up, patient),
                    (notifier, notifier_person, submitter),
                    (findings, specimen, conclusion),
                )| LaboratoryNotification {
                    report_id,
                    disease,
                    report_date,
                    follows_up,
                    patient,
                    notifier,
                    notifier_person,
                    submitter,
                    findings,
                    specimen,
                    conclusion,
                },
            )
    })
}

/// The clinical answers as the form lets them through: a stay only when hospitalised is yes
/// (discharge and intensive care not before admission), a date of death only when deceased is
/// yes.
fn clinical() -> impl Strategy<Value = ClinicalInformation> {
    let stay = (
        day(),
        prop::option::of(0u32..400),
        prop::option::of(prop::sample::select(Department::ALL.to_vec())),
        prop::option::of(0u32..400),
        opt_text(),
    )
        .prop_map(|(admitted, out, department, icu, note)| Hospitalisation {
            admitted,
            discharged: out.and_then(|n| later(admitted, n)),
            department,
            intensive_care_from: icu.and_then(|n| later(admitted, n)),
            note,
        });
    let yes_no = || prop::option::of(prop::sample::select(YesNo::ALL.to_vec()));
    (
        yes_no(),
        prop::option::of(stay),
        yes_no(),
        prop::option::of(day()),
    )
        .prop_map(
            |(hospitalised, stay, deceased, death)| ClinicalInformation {
                hospitalised,
                hospitalisation: stay.filter(|_| hospitalised == Some(YesNo::Ja)),
                deceased,
                date_of_death: death.filter(|_| deceased == Some(YesNo::Ja)),
            },
        )
}

/// The day `days` after `day`, if the field layer accepts it (a year of four digits).
fn later(day: NaiveDate, days: u32) -> Option<NaiveDate> {
    day.checked_add_days(chrono::Days::new(days.into()))
        .filter(|d| d.year() <= 9999)
}

fn hospitalisation() -> impl Strategy<Value = HospitalisationNotification> {
    let medical = (
        prop::option::of(day()),
        prop::option::of(day()),
        prop::sample::subsequence(Symptom::ALL.to_vec(), 0..=Symptom::ALL.len()),
        opt_text(),
    )
        .prop_map(|(onset, diagnosed, symptoms, note)| MedicalInformation {
            onset,
            diagnosed,
            symptoms,
            note,
        });
    // The form requires the hospital's name and BSNR.
    let notifier = (facility(), text(), digits(9)).prop_map(|(facility, name, bsnr)| Facility {
        name: Some(name),
        bsnr: Some(bsnr),
        ..facility
    });
    (
        (report_id(), prop::option::of(day()), named(), medical),
        (
            clinical(),
            notifier,
            prop::option::of(contact()),
            opt_text(),
        ),
    )
        .prop_map(
            |(
                (report_id, report_date, patient, medical),
                (clinical, notifier, physician, follows_up),
            )| {
                HospitalisationNotification {
                    report_id,
                    report_date,
                    disease: HospitalDisease::Covid19,
                    patient,
                    medical,
                    clinical,
                    notifier,
                    physician,
                    follows_up,
                }
            },
        )
}

/// A bed report as the module builds it: the location's details all given (its rule), the
/// phone and the operated beds optional.
fn bed_occupancy() -> impl Strategy<Value = BedOccupancyReport> {
    let count = || 0u32..=100_000;
    (
        (
            report_id(),
            prop::option::of(day()),
            digits(6),
            text(),
            digits(9),
        ),
        (text(), text(), digits(5), text(), opt_text()),
        (
            count(),
            prop::option::of(count()),
            count(),
            prop::option::of(count()),
        ),
    )
        .prop_map(
            |(
                (report_id, report_date, location_id, name, ik),
                (street, house_number, postal_code, city, phone),
                (adults_occupied, adults_operable, children_occupied, children_operable),
            )| BedOccupancyReport {
                report_id,
                report_date,
                location_id,
                location: Facility {
                    name: Some(name),
                    bsnr: None,
                    ik: Some(ik),
                    address: Some(PostalAddress {
                        street: Some(street),
                        house_number: Some(house_number),
                        postal_code: Some(postal_code),
                        city: Some(city),
                        country: None,
                    }),
                    phone,
                    email: None,
                },
                beds: BedCounts {
                    adults_occupied,
                    adults_operable,
                    children_occupied,
                    children_operable,
                },
            },
        )
}

/// One generated case: its bundle on disk, and the input that built it.
struct Generated {
    case: Case,
    input: String,
    size: usize,
}

/// `count` values of `strategy`, each built by `build` into a file of `dir`.
fn generate<T: std::fmt::Debug>(
    runner: &mut TestRunner,
    dir: &Path,
    kind: &str,
    count: usize,
    strategy: impl Strategy<Value = T>,
    build: impl Fn(&T, DateTime<FixedOffset>) -> (meldewerk_fhir::resources::Bundle, Case),
) -> Vec<Generated> {
    (0..count)
        .map(|n| {
            let input = strategy.new_tree(runner).unwrap().current();
            let now = instant().new_tree(runner).unwrap().current();
            let (bundle, mut case) = build(&input, now);
            let json = bundle.to_json();
            case.path = dir.join(format!("{kind}-{n:03}.json"));
            std::fs::write(&case.path, &json).unwrap();
            Generated {
                case,
                input: format!("{input:#?}\nbuilt at {now}"),
                size: json.len(),
            }
        })
        .collect()
}

/// The number of cases of each kind: `PROPTEST_CASES` when set, else enough that the few
/// seconds of one Python run cover some hundred bundles.
fn cases() -> usize {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(128)
}

#[test]
fn every_bundle_of_arbitrary_valid_input_is_valid_fhir_shaped_like_its_demis_example() {
    let seed: [u8; 32] = match std::env::var("FHIR_PROPERTIES_SEED") {
        Ok(hex) => std::array::from_fn(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()),
        Err(_) => rand_seed(),
    };
    let seed_hex: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    );
    let dir = tempfile::tempdir().unwrap();
    let n = cases();
    let mut all = generate(
        &mut runner,
        dir.path(),
        "lab",
        n,
        laboratory(),
        |input, now| {
            let bundle = lab::build(input, &mut RandomIds, now).unwrap();
            let suffix = input.disease.codes().profile_suffix;
            (
                bundle,
                Case {
                    suffix: Some(suffix),
                    ..Case::new(Default::default(), LABORATORY)
                },
            )
        },
    );
    all.extend(generate(
        &mut runner,
        dir.path(),
        "hospital",
        n,
        hospitalisation(),
        |input, now| {
            let bundle = hospital::build(input, &mut RandomIds, now).unwrap();
            (
                bundle,
                Case::new(
                    Default::default(),
                    "DiseaseHospitalizationNotificationExample.json",
                ),
            )
        },
    ));
    all.extend(generate(
        &mut runner,
        dir.path(),
        "beds",
        n,
        bed_occupancy(),
        |input, now| {
            let bundle = beds::build(input, &mut RandomIds, now).unwrap();
            (
                bundle,
                Case::new(Default::default(), "BedOccupancyExample.json"),
            )
        },
    ));

    let cases: Vec<Case> = all.iter().map(|g| g.case.clone()).collect();
    let output = validate(dir.path(), &cases);
    let text = report(&output);
    let expected = format!("{} documents checked, 0 failures", all.len());
    if output.status.success() && text.contains(&expected) {
        return;
    }
    // The smallest bundle the validator names, with the input that built it.
    let smallest = all
        .iter()
        .filter(|g| text.contains(&format!("{}", g.case.path.display())))
        .min_by_key(|g| g.size);
    let shown = smallest.map_or_else(String::new, |g| {
        format!(
            "\nsmallest failing bundle ({}):\n{}\ninput:\n{}",
            g.case.path.display(),
            std::fs::read_to_string(&g.case.path).unwrap(),
            g.input
        )
    });
    panic!("{text}{shown}\nseed: FHIR_PROPERTIES_SEED={seed_hex}");
}

/// A fresh seed from the system's randomness (through the ids' UUIDs: no further dependency).
fn rand_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    seed[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    seed[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    seed
}
