//! The checks the reporting system makes on a notification it receives, before it accepts it:
//! the bundle's type and profile, the resources its kind requires (with their profiles) and
//! how they refer to each other, every reference within the bundle resolving, and the
//! notifier's identifiers, which the caller checks against the facilities it knows.
//!
//! Reasons name elements and profiles and quote at most ids (cut short), never what the
//! notification says about anyone, so that they can be logged and shown.

use crate::beds::REQUIRED_LINK_IDS;
use crate::common::*;
use crate::outline::{EntryOutline, Outline};
use crate::resources::*;

/// The most entries a notification may have; more is refused unread.
pub const MAX_ENTRIES: usize = 1000;

/// The kind of notification a bundle's profile names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleKind {
    /// `NotificationBundleLaboratory` (labreport).
    Laboratory,
    /// `NotificationBundleDisease` (hospreport).
    Disease,
    /// `ReportBundle` (bedreport).
    BedOccupancy,
}

impl BundleKind {
    /// The bundle profile's name.
    pub fn profile_name(self) -> &'static str {
        match self {
            BundleKind::Laboratory => "NotificationBundleLaboratory",
            BundleKind::Disease => "NotificationBundleDisease",
            BundleKind::BedOccupancy => "ReportBundle",
        }
    }

    const ALL: [BundleKind; 3] = [
        BundleKind::Laboratory,
        BundleKind::Disease,
        BundleKind::BedOccupancy,
    ];
}

/// The identifiers of the notifying facility.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotifierIds {
    /// Betriebsstättennummer (notifications).
    pub bsnr: Option<String>,
    /// Institutionskennzeichen.
    pub ik: Option<String>,
    /// The hospital location's id (bed occupancy reports).
    pub location_id: Option<String>,
}

/// The disease or pathogen notified (its DEMIS code and display).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notified {
    /// The code (`cvdp`, `cvdd`, …).
    pub code: String,
    /// The display text.
    pub display: Option<String>,
}

/// What an acceptable notification is, for the receipt and the caller's own checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The kind.
    pub kind: BundleKind,
    /// `Bundle.identifier` (`NotificationBundleId`).
    pub bundle_id: String,
    /// `Composition.identifier` (`NotificationId`): the report's id.
    pub notification_id: String,
    /// The notifier's identifiers.
    pub notifier: NotifierIds,
    /// The pathogen (laboratory) or disease (hospitalisation); none for bed occupancy.
    pub notified: Option<Notified>,
}

/// Why a notification is refused: every reason found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", reasons.join("; "))]
pub struct Refused {
    /// The reasons, each naming the element concerned.
    pub reasons: Vec<String>,
}

fn refuse(reason: impl Into<String>) -> Refused {
    Refused {
        reasons: vec![reason.into()],
    }
}

/// Checks a notification as the reporting system would.
pub fn check(json: &[u8]) -> Result<Received, Refused> {
    // One pass for what the typed resources do not hold, a second straight into them: reading
    // the body into a tree first took as long as both.
    let outline = Outline::read(json).map_err(|e| {
        let (line, column) = (e.line(), e.column());
        match e.is_data() {
            // A member named twice or a reserved name: the outline's message says which.
            true => refuse(format!(
                "{} (line {line}, column {column})",
                without_position(&e)
            )),
            false => refuse(format!(
                "the body is not JSON (line {line}, column {column})"
            )),
        }
    })?;
    if outline.resource_type.as_deref() != Some("Bundle") {
        return Err(refuse("resourceType must be Bundle"));
    }
    let entries = outline.entries.unwrap_or_default();
    if entries.len() > MAX_ENTRIES {
        return Err(refuse(format!(
            "Bundle.entry: more than {MAX_ENTRIES} entries"
        )));
    }
    let bundle: Bundle = match serde_json::from_slice(json) {
        Ok(bundle) => bundle,
        // A missing element names itself (without the position, which tells the sender
        // nothing more); other messages may quote a value, so they do not.
        Err(e) if e.to_string().starts_with("missing field") => {
            return Err(refuse(format!(
                "not a valid FHIR R4 Bundle: {}",
                without_position(&e)
            )));
        }
        Err(_) => {
            return Err(refuse(
                "not a valid FHIR R4 Bundle: an element has the wrong type",
            ))
        }
    };
    let mut reasons = Vec::new();
    if bundle.kind != "document" {
        reasons.push("Bundle.type must be document".to_owned());
    }
    let claimed = bundle
        .meta
        .as_ref()
        .map_or(&[][..], |m| m.profile.as_slice());
    let Some(kind) = BundleKind::ALL
        .into_iter()
        .find(|k| claimed.contains(&profile(k.profile_name())))
    else {
        reasons.push(
            "Bundle.meta.profile names none of NotificationBundleLaboratory, \
             NotificationBundleDisease, ReportBundle"
                .to_owned(),
        );
        return Err(Refused { reasons });
    };
    let bundle_id = identifier(bundle.identifier.as_ref(), NOTIFICATION_BUNDLE_ID);
    if bundle_id.is_none() {
        reasons.push("Bundle.identifier: a NotificationBundleId is required".to_owned());
    }
    if bundle.timestamp.is_none() {
        reasons.push("Bundle.timestamp is required".to_owned());
    }
    check_entries(&bundle, &entries, &mut reasons);

    let mut found = Found {
        bundle: &bundle,
        reasons,
    };
    let received = found.contents(kind);
    match received {
        Some((notification_id, notifier, notified)) if found.reasons.is_empty() => Ok(Received {
            kind,
            bundle_id: bundle_id.unwrap_or_default(),
            notification_id,
            notifier,
            notified,
        }),
        _ => Err(Refused {
            reasons: found.reasons,
        }),
    }
}

/// serde_json's message without the position it appends (" at line … column …").
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rsplit_once(" at line ") {
        Some((message, _)) => message.to_owned(),
        None => message,
    }
}

fn identifier(identifier: Option<&Identifier>, system: &str) -> Option<String> {
    identifier
        .filter(|i| i.system.as_deref() == Some(system))
        .and_then(|i| i.value.clone())
        .filter(|v| !v.is_empty())
}

/// Every entry has a resource with an id and a matching `fullUrl`, no two the same, and every
/// `Type/id` reference anywhere in the entries names one of them.
fn check_entries(bundle: &Bundle, raw: &[EntryOutline], reasons: &mut Vec<String>) {
    let mut known: Vec<String> = Vec::new();
    for (n, entry) in bundle.entry.iter().enumerate() {
        let Some(resource) = &entry.resource else {
            reasons.push(format!("Bundle.entry[{n}].resource is required"));
            continue;
        };
        let Some(local) = resource.local_reference() else {
            // A resource type we do not model still needs an id to be referred to.
            if let Some(EntryOutline {
                resource_type,
                id: Some(id),
                ..
            }) = raw.get(n)
            {
                known.push(format!(
                    "{}/{id}",
                    resource_type.as_deref().unwrap_or_default()
                ));
            } else {
                reasons.push(format!("Bundle.entry[{n}].resource.id is required"));
            }
            continue;
        };
        let full_url_fits = entry
            .full_url
            .as_deref()
            .is_some_and(|url| url.ends_with(&format!("/{local}")));
        if !full_url_fits {
            reasons.push(format!(
                "Bundle.entry[{n}].fullUrl must end with {}",
                shown(&local)
            ));
        }
        if known.contains(&local) {
            reasons.push(format!(
                "Bundle.entry[{n}]: {} appears twice",
                shown(&local)
            ));
        }
        known.push(local);
    }
    for (n, entry) in raw.iter().enumerate() {
        for reference in &entry.references {
            let local = !reference.contains("://") && !reference.starts_with('#');
            if local && !known.iter().any(|k| k == reference) {
                reasons.push(format!(
                    "Bundle.entry[{n}]: the reference {} names no entry of the bundle",
                    shown(reference)
                ));
            }
        }
    }
}

/// An id or link id of the sender's, cut so that a forged one cannot grow the answer.
pub(crate) fn shown(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The resources a kind requires, found by following the references from the composition.
struct Found<'a> {
    bundle: &'a Bundle,
    reasons: Vec<String>,
}

type Contents = (String, NotifierIds, Option<Notified>);

impl<'a> Found<'a> {
    fn contents(&mut self, kind: BundleKind) -> Option<Contents> {
        let composition = match self.bundle.resources().next() {
            Some(Resource::Composition(c)) => c.as_ref(),
            _ => {
                self.reasons
                    .push("Bundle.entry[0] must be the Composition".to_owned());
                return None;
            }
        };
        let expected = match kind {
            BundleKind::Laboratory => "NotificationLaboratory",
            BundleKind::Disease => "NotificationDisease",
            BundleKind::BedOccupancy => "ReportBedOccupancy",
        };
        let profiled = composition.meta.iter().flat_map(|m| &m.profile).any(|p| {
            p.strip_prefix(&profile(expected))
                .is_some_and(|rest| kind == BundleKind::Disease || rest.is_empty())
        });
        if !profiled {
            self.reasons
                .push(format!("Composition.meta.profile must name {expected}"));
        }
        let notification_id = identifier(composition.identifier.as_ref(), NOTIFICATION_ID);
        if notification_id.is_none() {
            self.reasons
                .push("Composition.identifier: a NotificationId is required".to_owned());
        }
        let mut notifier = self.notifier(composition);
        let sections: Vec<&Reference> = composition.section.iter().flat_map(|s| &s.entry).collect();
        let notified = match kind {
            BundleKind::Laboratory => {
                self.patient(composition);
                self.laboratory_report(&sections)
            }
            BundleKind::Disease => {
                self.patient(composition);
                self.condition(&sections)
            }
            BundleKind::BedOccupancy => {
                notifier.location_id = self.location(composition);
                self.bed_counts(&sections);
                None
            }
        };
        if kind != BundleKind::BedOccupancy && notifier.bsnr.is_none() {
            self.reasons
                .push("the NotifierFacility needs a BSNR identifier".to_owned());
        }
        Some((notification_id?, notifier, notified))
    }

    /// The entry `reference` names, if it is of `profile_prefix`; else a reason.
    fn follow(
        &mut self,
        from: &str,
        reference: Option<&Reference>,
        profile_prefix: &str,
    ) -> Option<&'a Resource> {
        let wanted = profile(profile_prefix);
        let found = reference
            .and_then(|r| self.bundle.resolve(r))
            .filter(|r| r.profiles().iter().any(|p| p.starts_with(&wanted)));
        if found.is_none() {
            self.reasons
                .push(format!("{from} must refer to a {profile_prefix} entry"));
        }
        found
    }

    /// The first resource a section names that `pick` takes; else a reason naming `what`.
    fn section_entry<T>(
        &mut self,
        sections: &[&Reference],
        what: &str,
        pick: impl Fn(&'a Resource) -> Option<&'a T>,
    ) -> Option<&'a T> {
        let found = sections
            .iter()
            .find_map(|r| self.bundle.resolve(r).and_then(&pick));
        if found.is_none() {
            self.reasons
                .push(format!("Composition.section must name the {what}"));
        }
        found
    }

    fn notifier(&mut self, composition: &Composition) -> NotifierIds {
        let role = match self.follow(
            "Composition.author",
            composition.author.first(),
            "NotifierRole",
        ) {
            Some(Resource::PractitionerRole(role)) => role.as_ref(),
            _ => return NotifierIds::default(),
        };
        match self.follow(
            "NotifierRole.organization",
            role.organization.as_ref(),
            "NotifierFacility",
        ) {
            Some(Resource::Organization(o)) => NotifierIds {
                bsnr: o.identifier_in(BSNR_SYSTEM).map(Into::into),
                ik: o.identifier_in(IK_SYSTEM).map(Into::into),
                location_id: None,
            },
            _ => NotifierIds::default(),
        }
    }

    fn patient(&mut self, composition: &Composition) {
        self.follow(
            "Composition.subject",
            composition.subject.as_ref(),
            "NotifiedPerson",
        );
    }

    fn laboratory_report(&mut self, sections: &[&Reference]) -> Option<Notified> {
        let report = self.section_entry(sections, "DiagnosticReport", |r| match r {
            Resource::DiagnosticReport(d) => Some(d.as_ref()),
            _ => None,
        })?;
        self.follow(
            "DiagnosticReport",
            report.subject.as_ref(),
            "NotifiedPerson",
        );
        if report.result.is_empty() {
            self.reasons
                .push("DiagnosticReport.result must name a PathogenDetection".to_owned());
        }
        for result in &report.result {
            if let Some(Resource::Observation(o)) =
                self.follow("DiagnosticReport.result", Some(result), "PathogenDetection")
            {
                self.follow(
                    "PathogenDetection.specimen",
                    o.specimen.as_ref(),
                    "Specimen",
                );
            }
        }
        let report_profiled = report
            .meta
            .iter()
            .flat_map(|m| &m.profile)
            .any(|p| p.starts_with(&profile("LaboratoryReport")));
        if !report_profiled {
            self.reasons
                .push("DiagnosticReport.meta.profile must name a LaboratoryReport".to_owned());
        }
        notified(&report.code)
    }

    fn condition(&mut self, sections: &[&Reference]) -> Option<Notified> {
        let condition = self.section_entry(sections, "Condition", |r| match r {
            Resource::Condition(c) => Some(c.as_ref()),
            _ => None,
        })?;
        self.follow(
            "Condition.subject",
            condition.subject.as_ref(),
            "NotifiedPerson",
        );
        let result = condition.code.as_ref().and_then(notified);
        if result.is_none() {
            self.reasons.push("Condition.code is required".to_owned());
        }
        result
    }

    fn location(&mut self, composition: &Composition) -> Option<String> {
        let id = composition
            .subject
            .as_ref()
            .and_then(|s| identifier(s.identifier.as_ref(), INEK_STANDORT_ID));
        let valid = id
            .as_deref()
            .is_some_and(|id| id.len() == 6 && id.bytes().all(|b| b.is_ascii_digit()));
        if !valid {
            self.reasons.push(
                "Composition.subject.identifier must be an InekStandortId of 6 digits".to_owned(),
            );
        }
        id
    }

    fn bed_counts(&mut self, sections: &[&Reference]) {
        let response =
            self.section_entry(sections, "StatisticInformationBedOccupancy", |r| match r {
                Resource::QuestionnaireResponse(q) => Some(q.as_ref()),
                _ => None,
            });
        let Some(response) = response else {
            return;
        };
        for item in &response.item {
            let counts = item.answer.iter().map(|a| a.value_integer);
            if item.answer.is_empty() || counts.clone().any(|n| n.is_none_or(|n| n < 0)) {
                self.reasons.push(format!(
                    "QuestionnaireResponse item {}: the answer must be an integer of 0 or more",
                    shown(&item.link_id)
                ));
            }
        }
        for link_id in REQUIRED_LINK_IDS {
            if response.answers(link_id).is_empty() {
                self.reasons
                    .push(format!("QuestionnaireResponse: {link_id} is required"));
            }
        }
    }
}

fn notified(code: &CodeableConcept) -> Option<Notified> {
    let coding = code.coding.first()?;
    Some(Notified {
        code: coding.code.clone()?,
        display: coding.display.clone(),
    })
}
