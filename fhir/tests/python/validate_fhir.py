"""Validates generated FHIR JSON with a parser nobody here wrote, and against the DEMIS examples.

Usage: validate_fhir.py REFERENCE_DIR MANIFEST

MANIFEST is a JSON list of cases {"path", "example", "suffix", "refusal"}: the file to check,
the DEMIS example of its kind (a file name in REFERENCE_DIR), for laboratory notifications the
profile suffix of its disease (the example is SARS-CoV-2, "CVDP"), and for an answer whether it
refuses (then it has the example's outcome parameter only, no receipt bundle).

Each file is parsed with the R4B models of fhir.resources (pydantic: unknown elements, wrong
types and malformed dates or instants are errors), every entry's resource again with the model
of its own type. Then, against the example: the bundle's meta.profile, the set of resource
types (ours may leave out what the example marks optional), and each resource's meta.profile,
which must be one the example gives a resource of that type. Exits 1 naming every failure.
"""

import json
import sys
import warnings
from pathlib import Path

warnings.simplefilter("ignore")  # pydantic's deprecation notes are not findings

from fhir.resources.R4B import get_fhir_model_class  # noqa: E402

# Resource types of an example that a generated bundle may leave out: the hospitalisation
# example carries vaccinations and further organisations our form does not collect, and a
# patient not (or not yet known to be) hospitalised has no stay (Encounter).
OPTIONAL = {
    "DiseaseHospitalizationNotificationExample.json": {"Immunization", "Encounter"},
    "BedOccupancyExampleResult.json": set(),
}

# DEMIS' profile for a person not notified by name stands in for NotifiedPerson.
ALTERNATIVES = {
    "https://demis.rki.de/fhir/StructureDefinition/NotifiedPerson": [
        "https://demis.rki.de/fhir/StructureDefinition/NotifiedPersonNotByName"
    ],
}


def parse(resource, where, failures):
    """Parses `resource` with the R4B model of its type; returns False on failure."""
    try:
        get_fhir_model_class(resource["resourceType"]).parse_obj(resource)
        return True
    except Exception as error:  # the model's own message names the element
        failures.append(f"{where}: not valid FHIR R4B {resource.get('resourceType')}: {error}")
        return False


def resources(document):
    """The resources of a bundle, or of a Parameters' bundle and other resources."""
    if document["resourceType"] == "Bundle":
        return [entry["resource"] for entry in document.get("entry", [])]
    found = []
    for parameter in document.get("parameter", []):
        resource = parameter.get("resource")
        if resource is None:
            continue
        if resource["resourceType"] == "Bundle":
            found.extend(resources(resource))
        else:
            found.append(resource)
    return found


def profiles(resource):
    return resource.get("meta", {}).get("profile", [])


def compare(ours, example, case, where, failures):
    example_name, suffix = case["example"], case.get("suffix")
    def adapt(profile_list):
        return [p.replace("CVDP", suffix) if suffix else p for p in profile_list]

    if ours["resourceType"] != example["resourceType"]:
        failures.append(f"{where}: a {ours['resourceType']}, the example is a {example['resourceType']}")
        return
    if ours["resourceType"] == "Parameters":
        names = [p["name"] for p in ours.get("parameter", [])]
        expected = [p["name"] for p in example.get("parameter", [])]
        if case.get("refusal"):
            expected = [n for n in expected if n != "bundle"]
        if names != expected:
            failures.append(f"{where}: parameters {names}, expected {expected}")
        elif not case.get("refusal"):
            bundle = ours["parameter"][0]["resource"]
            if profiles(bundle) != profiles(example["parameter"][0]["resource"]):
                failures.append(f"{where}: receipt bundle meta.profile {profiles(bundle)}")
    elif adapt(profiles(example)) != profiles(ours):
        failures.append(f"{where}: Bundle.meta.profile {profiles(ours)}, expected {adapt(profiles(example))}")

    by_type = {}
    for resource in resources(example):
        by_type.setdefault(resource["resourceType"], []).append(adapt(profiles(resource)))
    ours_types = {r["resourceType"] for r in resources(ours)}
    unexpected = ours_types - set(by_type)
    missing = set(by_type) - ours_types - OPTIONAL.get(example_name, set())
    if unexpected:
        failures.append(f"{where}: resource types the example does not have: {sorted(unexpected)}")
    if missing and ours["resourceType"] == "Bundle":
        failures.append(f"{where}: resource types of the example missing: {sorted(missing)}")
    for n, resource in enumerate(resources(ours)):
        allowed = list(by_type.get(resource["resourceType"], []))
        for expected in list(allowed):
            for profile in expected:
                allowed.extend([[alt] for alt in ALTERNATIVES.get(profile, [])])
        if profiles(resource) not in allowed:
            failures.append(
                f"{where}: {resource['resourceType']} #{n} claims {profiles(resource)}, "
                f"the example has {allowed}"
            )


def main():
    reference = Path(sys.argv[1])
    cases = json.loads(Path(sys.argv[2]).read_text())
    failures = []
    for case in cases:
        where = case["path"]
        document = json.loads(Path(case["path"]).read_text())
        if not parse(document, where, failures):
            continue
        for n, resource in enumerate(resources(document)):
            parse(resource, f"{where} resource #{n}", failures)
        example = json.loads((reference / case["example"]).read_text())
        compare(document, example, case, where, failures)
    for failure in failures:
        print(failure)
    print(f"{len(cases)} documents checked, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
