//! `[modules.guardianship]`: how the court mailbox is read.

use std::path::{Path, PathBuf};
use std::time::Duration;

use meldewerk_actors::ReadingSettings;

/// `[modules.guardianship]` (besides the layer's `retention_secs`, which keeps the outgoing
/// messages' reports).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct GuardianshipSettings {
    /// How often each mailbox account is listed for new messages, in milliseconds.
    sync_interval_ms: u64,
    /// How often each account's mailbox is listed whole to find messages gone from the
    /// server, in seconds.
    full_sync_interval_secs: u64,
    /// Messages fetched and archived at the same time.
    hydration_workers: usize,
    /// Fetches of one message before it is given up (listed with the reason, no archive).
    hydration_attempts: u32,
    /// How long a court message is kept after its creation at the mailbox server, acknowledged
    /// or not, in seconds (the retention backstop).
    message_retention_secs: u64,
    /// The folder of the messages' archives; unset: `court-messages` in the data directory.
    /// Several nodes sharing one database must share this folder too (a message hydrated on
    /// one node is downloaded from another).
    archive_dir: Option<PathBuf>,
}

impl Default for GuardianshipSettings {
    fn default() -> Self {
        let reading = ReadingSettings::default();
        GuardianshipSettings {
            sync_interval_ms: reading.sync_interval.as_millis() as u64,
            full_sync_interval_secs: reading.full_sync_interval.as_secs(),
            hydration_workers: reading.hydration_workers,
            hydration_attempts: reading.hydration_attempts,
            message_retention_secs: reading.retention.as_secs(),
            archive_dir: None,
        }
    }
}

/// Most messages hydrated at once: each holds a whole message in memory.
const MAX_WORKERS: usize = 64;
/// Longest retention: ten years (a backstop, not an archive).
const MAX_RETENTION_SECS: u64 = 10 * 366 * 86_400;

impl GuardianshipSettings {
    /// The archives' folder, below `data_dir` unless `archive_dir` names one, or what is wrong
    /// with it. Reads whether the folder exists (a file in its place is refused at the start,
    /// not at the first hydration); one that does not exist yet is made by the first archive.
    pub(super) fn archive_folder(&self, data_dir: &Path) -> Result<PathBuf, String> {
        let Some(folder) = &self.archive_dir else {
            return Ok(data_dir.join(super::archives::FOLDER));
        };
        if folder.as_os_str().is_empty() {
            return Err(
                "archive_dir must name a folder (leave it out for the data directory's)".into(),
            );
        }
        if folder.exists() && !folder.is_dir() {
            return Err(format!("archive_dir {} is not a folder", folder.display()));
        }
        Ok(folder.clone())
    }

    /// The engine's reading settings, or what is wrong with these.
    pub(super) fn reading(&self) -> Result<ReadingSettings, String> {
        if !(10..=86_400_000).contains(&self.sync_interval_ms) {
            return Err("sync_interval_ms must be from 10 to 86400000 (a day)".into());
        }
        if !(1..=604_800).contains(&self.full_sync_interval_secs) {
            return Err("full_sync_interval_secs must be from 1 to 604800 (a week)".into());
        }
        if !(1..=MAX_WORKERS).contains(&self.hydration_workers) {
            return Err(format!("hydration_workers must be from 1 to {MAX_WORKERS}"));
        }
        if !(1..=100).contains(&self.hydration_attempts) {
            return Err("hydration_attempts must be from 1 to 100".into());
        }
        if !(1..=MAX_RETENTION_SECS).contains(&self.message_retention_secs) {
            return Err(format!(
                "message_retention_secs must be from 1 to {MAX_RETENTION_SECS} (ten years)"
            ));
        }
        Ok(ReadingSettings {
            sync_interval: Duration::from_millis(self.sync_interval_ms),
            full_sync_interval: Duration::from_secs(self.full_sync_interval_secs),
            hydration_workers: self.hydration_workers,
            hydration_attempts: self.hydration_attempts,
            retention: Duration::from_secs(self.message_retention_secs),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_engines_and_bounds_are_checked() {
        let defaults = GuardianshipSettings::default();
        assert_eq!(defaults.reading(), Ok(ReadingSettings::default()));
        let bad = |change: fn(&mut GuardianshipSettings)| {
            let mut settings = GuardianshipSettings::default();
            change(&mut settings);
            settings.reading().unwrap_err()
        };
        assert!(bad(|s| s.sync_interval_ms = 0).starts_with("sync_interval_ms"));
        assert!(bad(|s| s.full_sync_interval_secs = 0).starts_with("full_sync_interval_secs"));
        assert!(bad(|s| s.hydration_workers = 0).starts_with("hydration_workers"));
        assert!(bad(|s| s.hydration_workers = 65).starts_with("hydration_workers"));
        assert!(bad(|s| s.hydration_attempts = 0).starts_with("hydration_attempts"));
        assert!(bad(|s| s.message_retention_secs = 0).starts_with("message_retention_secs"));
    }

    #[test]
    fn the_archive_folder_is_the_data_directorys_unless_one_is_named() {
        let data = Path::new("/srv/meldewerk");
        let defaults = GuardianshipSettings::default();
        assert_eq!(
            defaults.archive_folder(data),
            Ok(data.join("court-messages"))
        );
        let shared = GuardianshipSettings {
            archive_dir: Some("/mnt/shared/court-messages".into()),
            ..GuardianshipSettings::default()
        };
        assert_eq!(
            shared.archive_folder(data),
            Ok(PathBuf::from("/mnt/shared/court-messages"))
        );
        let empty = GuardianshipSettings {
            archive_dir: Some(PathBuf::new()),
            ..GuardianshipSettings::default()
        };
        assert!(empty
            .archive_folder(data)
            .unwrap_err()
            .starts_with("archive_dir"));
        let file = tempfile::NamedTempFile::new().unwrap();
        let a_file = GuardianshipSettings {
            archive_dir: Some(file.path().to_path_buf()),
            ..GuardianshipSettings::default()
        };
        assert!(a_file
            .archive_folder(data)
            .unwrap_err()
            .ends_with("is not a folder"));
    }
}
