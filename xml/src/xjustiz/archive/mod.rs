//! Writing one message's ZIP archive atomically: the XML, the attachments under safe names, and
//! the metadata file.

mod metadata;
mod names;

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike, Timelike, Utc};
use serde::Serialize;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use super::summary::MessageSummary;
use metadata::{sha256, utc, Metadata, StoredFile, FORMAT};
pub use names::safe_stored_names;

/// The XJustiz XML's name inside the archive.
pub const MESSAGE_FILE: &str = "xjustiz_nachricht.xml";
/// The metadata file's name inside the archive (layout: docs/decisions.md).
pub const METADATA_FILE: &str = "meldewerk.json";
/// Start of a temporary archive's file name: a file in the archive folder with this prefix is
/// a write that never finished (a crash) and may be removed by a sweep.
pub const TEMP_PREFIX: &str = ".partial-";

/// Whether `file_name` (a name in the archive folder) is a leftover temporary archive.
pub fn is_leftover_temp_file(file_name: &str) -> bool {
    file_name.starts_with(TEMP_PREFIX)
}

/// Whether a message came into the account or was sent from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Direction {
    /// Received from a court.
    Incoming,
    /// Sent from the account.
    Outgoing,
}

/// One attachment as the mailbox delivered it.
#[derive(Debug, Clone, Copy)]
pub struct Attachment<'a> {
    /// The sender's name for it (untrusted).
    pub name: &'a str,
    /// Its bytes.
    pub content: &'a [u8],
}

/// Everything one archive holds.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveInput<'a> {
    /// The transport message id.
    pub message_id: &'a str,
    /// The mailbox account's SAFE-ID.
    pub account_safe_id: &'a str,
    /// Into the account or out of it.
    pub direction: Direction,
    /// When the mailbox server stored the message.
    pub created_at: DateTime<Utc>,
    /// Its first retrieval, if known.
    pub received_at: Option<DateTime<Utc>>,
    /// Now: when it was hydrated (also the entries' modification time).
    pub hydrated_at: DateTime<Utc>,
    /// The `xjustiz_nachricht.xml` bytes, stored as they came.
    pub xml: &'a [u8],
    /// What [`read_message`](super::read_message) found, or `None` when it failed.
    pub summary: Option<&'a MessageSummary>,
    /// Why reading failed (the [`ReadError`](super::ReadError) text), if it did.
    pub read_error: Option<&'a str>,
    /// The attachments, in the sender's order.
    pub attachments: &'a [Attachment<'a>],
}

/// Why an archive could not be written: the disk's fault, never the message's.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// Creating, writing, syncing or renaming a file failed.
    #[error("archive I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// The ZIP writer failed.
    #[error("writing the ZIP failed: {0}")]
    Zip(#[from] zip::result::ZipError),
    /// The metadata could not be serialised.
    #[error("writing the metadata failed: {0}")]
    Json(#[from] serde_json::Error),
}

/// Writes the archive of message `index_id` as `<folder>/<index_id>.zip` and returns its path.
///
/// Atomic: the ZIP is written to `<folder>/.partial-<index_id>-<random>.zip`, fsynced, renamed
/// into place, and the folder fsynced; a crash leaves at most that temporary file, never a half
/// archive under the final name. Writing again replaces an earlier archive of the same id. No
/// name from the message reaches the file system: entry names are [`safe_stored_names`], and
/// the file's own name is the number.
pub fn write_archive(
    folder: &Path,
    index_id: u64,
    input: &ArchiveInput<'_>,
) -> Result<PathBuf, ArchiveError> {
    let target = folder.join(format!("{index_id}.zip"));
    let temp = folder.join(format!(
        "{TEMP_PREFIX}{index_id}-{}.zip",
        uuid::Uuid::new_v4().simple()
    ));
    let result = write_zip(&temp, input).and_then(|()| {
        fs::rename(&temp, &target)?;
        sync_folder(folder)?;
        Ok(())
    });
    if result.is_err() {
        // Best effort: a temporary file left here is recognisable by its prefix for a sweep.
        let _ = fs::remove_file(&temp);
    }
    result.map(|()| target)
}

fn write_zip(temp: &Path, input: &ArchiveInput<'_>) -> Result<(), ArchiveError> {
    let file = File::options().write(true).create_new(true).open(temp)?;
    let mut zip = ZipWriter::new(BufWriter::new(file));
    let time = input.hydrated_at;
    let modified = zip::DateTime::from_date_and_time(
        time.year().clamp(1980, 2107) as u16,
        time.month() as u8,
        time.day() as u8,
        time.hour() as u8,
        time.minute() as u8,
        time.second().min(59) as u8,
    )
    .unwrap_or_default();
    let options = |size: usize| {
        SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .last_modified_time(modified)
            .large_file(size as u64 >= u64::from(u32::MAX))
            .unix_permissions(0o644)
    };
    let originals: Vec<&str> = input.attachments.iter().map(|a| a.name).collect();
    let stored = safe_stored_names(&originals);
    let mut files = Vec::with_capacity(stored.len() + 1);

    zip.start_file(MESSAGE_FILE, options(input.xml.len()))?;
    zip.write_all(input.xml)?;
    files.push(StoredFile {
        stored_name: MESSAGE_FILE,
        original_name: None,
        size: input.xml.len() as u64,
        sha256: sha256(input.xml),
    });
    for (attachment, name) in input.attachments.iter().zip(&stored) {
        zip.start_file(name.as_str(), options(attachment.content.len()))?;
        zip.write_all(attachment.content)?;
        files.push(StoredFile {
            stored_name: name,
            original_name: Some(attachment.name),
            size: attachment.content.len() as u64,
            sha256: sha256(attachment.content),
        });
    }
    let metadata = Metadata {
        format: FORMAT,
        message_id: input.message_id,
        account_safe_id: input.account_safe_id,
        direction: input.direction,
        created_at: utc(input.created_at),
        received_at: input.received_at.map(utc),
        hydrated_at: utc(input.hydrated_at),
        xjustiz: input.summary,
        read_error: input.read_error,
        files,
    };
    let json = serde_json::to_vec_pretty(&metadata)?;
    zip.start_file(METADATA_FILE, options(json.len()))?;
    zip.write_all(&json)?;
    let file = zip
        .finish()?
        .into_inner()
        .map_err(|e| ArchiveError::Io(e.into_error()))?;
    file.sync_all()?;
    Ok(())
}

/// Makes the rename durable: on Unix a directory's entries are synced through the directory.
fn sync_folder(folder: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    File::open(folder)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = folder;
    Ok(())
}
