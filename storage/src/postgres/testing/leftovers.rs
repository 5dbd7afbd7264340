//! Clusters that earlier test processes left behind. A process that is killed (SIGKILL, a
//! cancelled CI run) never runs its exit handler, so its cluster's files, some hundred MiB each,
//! stay in the temp dir. Each cluster's folder names its process in [`OWNER`], and every new
//! cluster first removes the folders of processes that are gone.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How every cluster's folder in the temp dir begins.
pub(super) const PREFIX: &str = "meldewerk-pg-";

/// The file in a cluster's folder that holds its test process's id.
const OWNER: &str = "owner-pid";

/// A folder without its owner file is being set up right now, unless it is older than this
/// (folders of versions that wrote none are removed then).
const SETTING_UP: Duration = Duration::from_secs(600);

/// Records in `dir` that this process owns it.
pub(super) fn mark(dir: &Path) -> Result<(), String> {
    std::fs::write(dir.join(OWNER), std::process::id().to_string())
        .map_err(|e| format!("{}: {e}", dir.join(OWNER).display()))
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
        .filter(|dir| abandoned(dir) && std::fs::remove_dir_all(dir).is_ok())
        .collect()
}

/// Whether the process that made `dir` is gone. A process id taken again by another process
/// keeps the folder (until that one is gone too): the check errs on the side of keeping.
fn abandoned(dir: &Path) -> bool {
    match std::fs::read_to_string(dir.join(OWNER)) {
        Ok(text) => text
            .trim()
            .parse::<libc::pid_t>()
            .is_ok_and(|pid| pid > 0 && !alive(pid)),
        Err(_) => dir
            .metadata()
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > SETTING_UP),
    }
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

    fn folder(parent: &Path, name: &str, owner: Option<u32>) -> PathBuf {
        let dir = parent.join(format!("{PREFIX}{name}"));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::write(dir.join("data/PG_VERSION"), "15").unwrap();
        if let Some(pid) = owner {
            std::fs::write(dir.join(OWNER), pid.to_string()).unwrap();
        }
        dir
    }

    #[test]
    fn only_the_folders_of_processes_that_are_gone_are_removed() {
        let parent = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();

        let abandoned = folder(parent.path(), "gone", Some(gone));
        let ours = folder(parent.path(), "ours", Some(std::process::id()));
        let setting_up = folder(parent.path(), "new", None);
        let other = parent.path().join("something-else");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(OWNER), gone.to_string()).unwrap();

        assert_eq!(sweep(parent.path()), vec![abandoned.clone()]);
        assert!(!abandoned.exists());
        assert!(ours.exists() && setting_up.exists() && other.exists());
        assert!(sweep(parent.path()).is_empty(), "nothing more to remove");
    }

    #[test]
    fn a_folder_this_process_marked_is_kept() {
        let parent = tempfile::tempdir().unwrap();
        let dir = folder(parent.path(), "marked", None);
        mark(&dir).unwrap();
        assert!(sweep(parent.path()).is_empty());
        assert!(dir.exists());
    }
}
