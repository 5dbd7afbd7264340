//! A throwaway PostgreSQL cluster for tests: `initdb` in a temp dir, the server on a Unix socket
//! in that dir (no port to collide with), one fresh database per test.
//!
//! The binaries are Debian's (`/usr/lib/postgresql/<version>/bin`, the newest there), or those in
//! the folder `PG_BIN` names. `initdb` refuses to run as root, so a test process running as root
//! (CI) runs the cluster as the `postgres` system user the package creates. The server is the test
//! process's child and ends with it (`PR_SET_PDEATHSIG`), also when the process is killed; its
//! files are removed when the process exits, and those a killed process left behind when the
//! next cluster starts (`testing/leftovers.rs`).
//!
//! `fsync` is off: a test never loses its machine's power, and the suite's durability checks
//! kill processes, not the kernel.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{PgSettings, PgStore};

mod leftovers;

/// The port in the socket's name (`.s.PGSQL.5432`); nothing listens on TCP.
const PORT: u16 = 5432;

/// The test process's cluster, started on first use.
static CLUSTER: OnceLock<Cluster> = OnceLock::new();

/// The test process's cluster, started on first use; stopped and its files removed when the
/// process exits.
pub fn cluster() -> &'static Cluster {
    CLUSTER.get_or_init(|| {
        let cluster = Cluster::start().unwrap_or_else(|e| panic!("PostgreSQL test cluster: {e}"));
        // A static is never dropped, so its temp dir would outlive every test process (some
        // hundred MiB each). The test harness ends the process through `exit`, which runs this.
        // SAFETY: `remove_at_exit` is an `extern "C"` function without arguments, as `atexit`
        // wants, and it neither panics nor unwinds.
        unsafe { libc::atexit(remove_at_exit) };
        cluster
    })
}

/// Longest wait at the process's exit for the server to end.
const STOP_AT_EXIT: Duration = Duration::from_secs(10);

/// Stops the cluster's server at once (its files are removed next, so no checkpoint) and
/// removes its files (at the process's exit). Waits at most [`STOP_AT_EXIT`]: a test run that
/// passed never hangs here.
extern "C" fn remove_at_exit() {
    let Some(cluster) = CLUSTER.get() else {
        return;
    };
    let (reply, answer) = mpsc::channel();
    if cluster
        .keeper
        .send(Order::Stop(libc::SIGQUIT, reply))
        .is_ok()
    {
        let _ = answer.recv_timeout(STOP_AT_EXIT);
    }
    if let Err(e) = std::fs::remove_dir_all(cluster.dir.path()) {
        eprintln!(
            "the PostgreSQL test cluster's files stay in {}: {e}",
            cluster.dir.path().display()
        );
    }
}

/// A running cluster.
pub struct Cluster {
    dir: tempfile::TempDir,
    /// Held (locked) while the process lives: a later test process leaves the folder alone.
    _owned: std::fs::File,
    keeper: mpsc::Sender<Order>,
    next_database: AtomicU32,
}

enum Order {
    Start(mpsc::Sender<Result<(), String>>),
    /// Stop with this signal: SIGINT (fast shutdown) or SIGQUIT (immediate, no checkpoint).
    Stop(libc::c_int, mpsc::Sender<()>),
}

impl Cluster {
    fn start() -> Result<Cluster, String> {
        let bin = binaries()?;
        for removed in leftovers::sweep(&std::env::temp_dir()) {
            eprintln!(
                "removed the PostgreSQL test cluster {}, left by a test process that is gone",
                removed.display()
            );
        }
        let dir = tempfile::Builder::new()
            .prefix(leftovers::PREFIX)
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        let owned = leftovers::mark(dir.path())?;
        let owner = Owner::for_this_process()?;
        owner.give(dir.path())?;
        let data = dir.path().join("data");
        let init = owner
            .command(&bin.join("initdb"))
            .args([
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "--no-sync",
            ])
            .arg("--locale=C")
            .arg("-D")
            .arg(&data)
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !init.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&init.stderr)
            ));
        }
        let (keeper, orders) = mpsc::channel();
        let server = Server {
            postgres: bin.join("postgres"),
            data,
            socket_dir: dir.path().to_owned(),
            owner,
        };
        // The server's parent-death signal fires when the thread that started it ends: one
        // thread that lives as long as the process starts and stops it.
        std::thread::Builder::new()
            .name("pg-test-cluster".into())
            .spawn(move || server.keep(orders))
            .map_err(|e| format!("keeper thread: {e}"))?;
        let cluster = Cluster {
            dir,
            _owned: owned,
            keeper,
            next_database: AtomicU32::new(1),
        };
        cluster.start_server()?;
        Ok(cluster)
    }

    /// Starts the server again after [`Cluster::stop_server`].
    pub fn start_server(&self) -> Result<(), String> {
        let (reply, answer) = mpsc::channel();
        self.keeper
            .send(Order::Start(reply))
            .map_err(|_| "the keeper thread is gone".to_owned())?;
        answer
            .recv()
            .map_err(|_| "the keeper thread is gone".to_owned())?
    }

    /// Stops the server (a fast shutdown: connections are cut, as a database restart cuts them).
    pub fn stop_server(&self) {
        let (reply, answer) = mpsc::channel();
        if self.keeper.send(Order::Stop(libc::SIGINT, reply)).is_ok() {
            let _ = answer.recv();
        }
    }

    /// The address of database `name`, as `store.url` takes it.
    pub fn url(&self, name: &str) -> String {
        format!(
            "host={} port={PORT} user=postgres dbname={name}",
            self.dir.path().display()
        )
    }

    /// A new, empty database of its own; returns its address.
    pub async fn fresh_database(&self) -> String {
        let n = self.next_database.fetch_add(1, Ordering::Relaxed);
        let name = format!("test_{}_{n}", std::process::id());
        let (client, connection) =
            tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("connecting to the test cluster: {e}"));
        let task = tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
        drop(client);
        let _ = task.await;
        self.url(&name)
    }

    /// A store on a new, empty database.
    pub async fn fresh_store(&self) -> PgStore {
        let url = self.fresh_database().await;
        PgStore::open(&PgSettings::new(url))
            .await
            .unwrap_or_else(|e| panic!("opening the store: {e}"))
    }
}

/// A store on `url` that has neither reached the database nor applied the schema, for tests of
/// what callers do while the database cannot be reached (an address where nothing listens).
pub fn unreached_store(url: &str) -> PgStore {
    let mut settings = PgSettings::new(url);
    settings.connect_timeout = Duration::from_secs(1);
    PgStore::on(
        super::Db::connect(&settings).unwrap_or_else(|e| panic!("{url}: {e}")),
        None,
    )
}

/// The server process and how to start it.
struct Server {
    postgres: PathBuf,
    data: PathBuf,
    socket_dir: PathBuf,
    owner: Owner,
}

impl Server {
    fn keep(self, orders: mpsc::Receiver<Order>) {
        let mut running: Option<Child> = None;
        while let Ok(order) = orders.recv() {
            match order {
                Order::Start(reply) => {
                    let result = match running {
                        Some(_) => Ok(()),
                        None => self.run().map(|child| running = Some(child)),
                    };
                    let _ = reply.send(result);
                }
                Order::Stop(signal, reply) => {
                    if let Some(mut child) = running.take() {
                        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
                        let _ = child.wait();
                    }
                    let _ = reply.send(());
                }
            }
        }
    }

    fn run(&self) -> Result<Child, String> {
        let mut command = self.owner.command(&self.postgres);
        command
            .arg("-D")
            .arg(&self.data)
            .arg("-k")
            .arg(&self.socket_dir)
            .args([
                "-p",
                &PORT.to_string(),
                "-c",
                "listen_addresses=",
                "-c",
                "fsync=off",
            ])
            .args(["-c", "max_connections=300"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("starting postgres: {e}"))?;
        let ready = self.data.join("postmaster.pid");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("postgres exited at start: {status}"));
            }
            // The pid file's last line says `ready` once the server takes connections.
            if std::fs::read_to_string(&ready).is_ok_and(|pid| pid.contains("ready")) {
                return Ok(child);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return Err("postgres did not become ready within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Who runs the cluster: this process's user, or `postgres` when that is root.
#[derive(Clone, Copy)]
struct Owner(Option<(u32, u32)>);

impl Owner {
    fn for_this_process() -> Result<Owner, String> {
        if unsafe { libc::geteuid() } != 0 {
            return Ok(Owner(None));
        }
        let name = c"postgres";
        // SAFETY: getpwnam with a valid C string; the record is read at once, on this thread.
        let entry = unsafe { libc::getpwnam(name.as_ptr()) };
        if entry.is_null() {
            return Err(
                "running as root, and there is no postgres user to run the cluster as \
                 (Debian's postgresql package creates it)"
                    .into(),
            );
        }
        let (uid, gid) = unsafe { ((*entry).pw_uid, (*entry).pw_gid) };
        Ok(Owner(Some((uid, gid))))
    }

    fn give(&self, path: &Path) -> Result<(), String> {
        if let Some((uid, gid)) = self.0 {
            std::os::unix::fs::chown(path, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", path.display()))?;
        }
        Ok(())
    }

    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        if let Some((uid, gid)) = self.0 {
            command.uid(uid).gid(gid).env("HOME", "/tmp");
        }
        command
    }
}

/// The folder with `initdb` and `postgres`.
fn binaries() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("PG_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| {
            "no PostgreSQL: install Debian's postgresql package, or set PG_BIN".to_owned()
        })?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "no initdb under /usr/lib/postgresql/*/bin: install postgresql".into())
}
