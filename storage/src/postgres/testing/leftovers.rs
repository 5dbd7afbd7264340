//! Clusters that earlier test processes left behind. A process that is killed (SIGKILL, a
//! cancelled CI run) never runs its exit handler, so its cluster's files, some hundred MiB each,
//! stay in the temp dir. Each cluster's folder holds [`OWNER`], locked (`flock`) by its test
//! process for as long as that process lives, and every new cluster first removes the folders
//! whose lock it can take and whose process id names no running process. The kernel releases a
//! lock when its process ends, however it ends; a lock, unlike a process id, means the same in
//! every PID namespace that shares the temp dir. The process id keeps the folders of a version
//! that wrote it without locking.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How every cluster's folder in the temp dir begins.
pub(super) const PREFIX: &str = "meldewerk-pg-";

/// The file in a cluster's folder that its test process holds locked (and that names it).
const OWNER: &str = "owner-pid";

/// A folder of an earlier version, which locked nothing, is left alone while this young: it may
/// be one being set up.
const SETTING_UP: Duration = Duration::from_secs(600);

/// Marks `dir` as this process's: [`OWNER`] written and locked. The lock lasts as long as the
/// returned file is open, so the cluster keeps it for the life of the process.
pub(super) fn mark(dir: &Path) -> Result<File, String> {
    let path = dir.join(OWNER);
    let failed = |e: std::io::Error| format!("{}: {e}", path.display());
    // Emptied only once locked: a file another process holds keeps what it says.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(failed)?;
    if !try_lock(&file) {
        return Err(format!("{}: locked by another process", path.display()));
    }
    file.set_len(0).map_err(failed)?;
    write!(file, "{}", std::process::id()).map_err(failed)?;
    Ok(file)
}

/// Removes every cluster folder in `parent` whose process is gone; returns those removed.
pub(super) fn sweep(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(PREFIX))
        })
        .map(|entry| entry.path())
        .filter(|dir| remove_if_abandoned(dir))
        .collect()
}

/// Removes `dir` if no process holds it; `true` if it was removed.
fn remove_if_abandoned(dir: &Path) -> bool {
    match File::open(dir.join(OWNER)) {
        // Held while removing, so that nothing takes the folder meanwhile.
        Ok(owner) => try_lock(&owner) && !named_alive(dir) && std::fs::remove_dir_all(dir).is_ok(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            earlier_version_gone(dir) && std::fs::remove_dir_all(dir).is_ok()
        }
        // Unreadable (another user's): not ours to judge.
        Err(_) => false,
    }
}

/// Whether a folder without [`OWNER`] (made before folders were marked) is abandoned: its server
/// is not running (by the pid in `postmaster.pid`), and it is older than [`SETTING_UP`].
fn earlier_version_gone(dir: &Path) -> bool {
    let server = std::fs::read_to_string(dir.join("data/postmaster.pid"))
        .ok()
        .and_then(|text| text.lines().next()?.trim().parse::<libc::pid_t>().ok());
    if server.is_some_and(|pid| pid <= 0 || alive(pid)) {
        return false;
    }
    dir.metadata()
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|age| age > SETTING_UP)
}

/// Whether [`OWNER`] in `dir` names a process that is running (one that cannot be read names
/// none).
fn named_alive(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(OWNER))
        .ok()
        .and_then(|text| text.trim().parse::<libc::pid_t>().ok())
        .is_some_and(|pid| pid > 0 && alive(pid))
}

/// Takes `file`'s exclusive lock without waiting; `false` if another open file holds it.
fn try_lock(file: &File) -> bool {
    // SAFETY: flock on a descriptor this `File` owns; it only changes the file's lock.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Whether process `pid` exists (also one of another user, which we may not signal).
fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    /// A cluster folder in `parent`, without [`OWNER`].
    fn folder(parent: &Path, name: &str) -> PathBuf {
        let dir = parent.join(format!("{PREFIX}{name}"));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::write(dir.join("data/PG_VERSION"), "15").unwrap();
        dir
    }

    fn age(dir: &Path, by: Duration) {
        File::open(dir)
            .unwrap()
            .set_modified(SystemTime::now() - by)
            .unwrap();
    }

    fn gone_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_folder_is_removed_once_its_owner_no_longer_holds_it() {
        let parent = tempfile::tempdir().unwrap();
        let dir = folder(parent.path(), "owned");
        let owner = mark(&dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(OWNER)).unwrap(),
            std::process::id().to_string()
        );
        assert!(sweep(parent.path()).is_empty(), "held: kept");
        assert!(dir.exists());
        assert!(mark(&dir).is_err(), "one owner at a time");
        drop(owner);
        assert!(
            sweep(parent.path()).is_empty(),
            "unlocked, but naming a running process (as an earlier version marked): kept"
        );
        // As when its process has ended: the lock released, the process gone.
        std::fs::write(dir.join(OWNER), gone_pid().to_string()).unwrap();
        assert_eq!(sweep(parent.path()), vec![dir.clone()]);
        assert!(!dir.exists());
    }

    #[test]
    fn folders_of_earlier_versions_go_only_when_old_and_their_server_is_gone() {
        let parent = tempfile::tempdir().unwrap();
        let young = folder(parent.path(), "young");
        let running = folder(parent.path(), "running");
        std::fs::write(
            running.join("data/postmaster.pid"),
            format!("{}\n/data\n", std::process::id()),
        )
        .unwrap();
        let stopped = folder(parent.path(), "stopped");
        std::fs::write(
            stopped.join("data/postmaster.pid"),
            format!("{}\n/data\n", gone_pid()),
        )
        .unwrap();
        let never_started = folder(parent.path(), "never-started");
        let other = parent.path().join("something-else");
        std::fs::create_dir(&other).unwrap();
        for dir in [&running, &stopped, &never_started, &other] {
            age(dir, Duration::from_secs(3600));
        }

        let mut removed = sweep(parent.path());
        removed.sort();
        assert_eq!(removed, vec![never_started.clone(), stopped.clone()]);
        assert!(young.exists() && running.exists() && other.exists());
    }
}
