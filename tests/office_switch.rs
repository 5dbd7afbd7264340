//! Switching a service's data directory between the in-process office and a `meldewerk simulate`
//! process, both ways (as `docs/testing-integrations.md` describes): the inbox cursor the service
//! stored belongs to the office it talked to before, the new office does not know it, and the
//! acknowledgement collector starts again from the new office's oldest entry instead of leaving
//! every new report PENDING.

mod common;

use common::remote::Peer;
use common::*;

const URL: &str = "MELDEWERK_TRANSPORTS__XPERSONENSTAND__URL";

/// Where the service's `xpersonenstand` reports go.
#[derive(Clone, Copy)]
enum Office {
    /// The simulated office inside the service, journal in the service's data directory.
    InProcess,
    /// A `meldewerk simulate xpersonenstand` process with a fresh data directory of its own.
    Simulator,
}

/// The service on `dir` against `office`; the simulator process (and its data directory) lives
/// as long as the second value.
fn serve(dir: &DataDir, office: Office) -> (Server, Option<(Peer, DataDir)>) {
    match office {
        Office::InProcess => (Server::start(dir, &[]), None),
        Office::Simulator => {
            let sim_dir = DataDir::new();
            let simulator = Peer::simulator(sim_dir.path(), &[]);
            let server = Server::start(dir, &[(URL, &simulator.base)]);
            (server, Some((simulator, sim_dir)))
        }
    }
}

/// Dispatches a notice per id and waits until every one is acknowledged.
fn deliver(server: &Server, ids: &[&str]) {
    for id in ids {
        dispatch(server, "klinik", &complete_notice(id));
    }
    for id in ids {
        server.wait_for_status("klinik", id, "SUCCESS");
    }
}

/// Reports delivered through `first`, then the service restarted against `second`: the new
/// reports are acknowledged, the earlier ones stay as they were, and the log says why the
/// collector started again from the start.
fn switching_offices_strands_no_report(first: Office, second: Office) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let earlier = ["geb-switch-1", "geb-switch-2", "geb-switch-3"];
    let (mut server, office) = serve(&dir, first);
    deliver(&server, &earlier);
    assert!(server.terminate());
    drop(office);

    let (server, _office) = serve(&dir, second);
    deliver(&server, &["geb-switch-4", "geb-switch-5"]);
    let log = server.log();
    let reset = "the inbox does not know the stored cursor; collecting again from its oldest \
                 entry (acknowledgements are idempotent: reports already final are skipped)";
    assert_eq!(log.matches(reset).count(), 1, "{log}");
    let collector = server.actor("inbox:xpersonenstand");
    assert_eq!(collector["state"], "running", "{collector}");
    for id in earlier {
        server.wait_for_status("klinik", id, "SUCCESS");
    }
}

#[test]
fn from_the_in_process_office_to_a_simulator_process() {
    switching_offices_strands_no_report(Office::InProcess, Office::Simulator);
}

#[test]
fn from_a_simulator_process_to_the_in_process_office() {
    switching_offices_strands_no_report(Office::Simulator, Office::InProcess);
}
