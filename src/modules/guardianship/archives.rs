//! The court messages' archives: one ZIP per message in the archive folder
//! (`[modules.guardianship] archive_dir`, by default `<data dir>/court-messages/`), named by its
//! index id, written by the engine's hydration ([`Hydrator`]) and read by the download. Nodes
//! sharing one database share this folder (a volume every node mounts): each archive is written
//! to a temporary file in the folder and renamed into place, so a node reading it sees it whole
//! or not at all.
//!
//! Nothing from a message names a file here: the archive's name is the index id, and the names
//! inside it are made safe by the writer ([`meldewerk_xml::xjustiz::write_archive`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use meldewerk_actors::{Hydrated, Hydrator};
use meldewerk_storage::{CourtMessage, CourtMessageDirection};
use meldewerk_transports::mailbox::{MailboxMessage, XJUSTIZ_FILE};
use meldewerk_xml::xjustiz::{
    is_leftover_temp_file, read_message, write_archive, ArchiveInput, Attachment, Direction,
};

/// The folder below the data directory that holds the archives, unless `archive_dir` names
/// another.
pub(crate) const FOLDER: &str = "court-messages";

/// The archive folder.
#[derive(Debug, Clone)]
pub(crate) struct Archives {
    folder: PathBuf,
}

impl Archives {
    /// The archives in `folder`. Touches no disk: the folder is made by the first write.
    pub(crate) fn at(folder: PathBuf) -> Archives {
        Archives { folder }
    }

    /// The archive file of index id `id` (which may not exist).
    pub(crate) fn path(&self, id: u64) -> PathBuf {
        self.folder.join(format!("{id}.zip"))
    }
}

impl Hydrator for Archives {
    fn hydrate(
        &self,
        entry: &CourtMessage,
        message: &MailboxMessage,
        hydrated_at: DateTime<Utc>,
    ) -> Result<Hydrated, String> {
        // The first file of the XJustiz name is the message; everything else an attachment
        // (a second file of that name too: the writer gives it a name of its own).
        let xml_at = message.files.iter().position(|f| f.name == XJUSTIZ_FILE);
        let xml: &[u8] = xml_at.map_or(&[], |i| &message.files[i].content);
        let attachments: Vec<Attachment<'_>> = message
            .files
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != xml_at)
            .map(|(_, f)| Attachment {
                name: &f.name,
                content: &f.content,
            })
            .collect();
        let read = match xml_at {
            None => Err(format!("the message has no {XJUSTIZ_FILE}")),
            Some(_) => read_message(xml).map_err(|e| e.to_string()),
        };
        let (summary, read_error) = match &read {
            Ok(summary) => (Some(summary), None),
            Err(error) => (None, Some(error.as_str())),
        };
        let input = ArchiveInput {
            message_id: &entry.message_id,
            account_safe_id: &entry.safe_id,
            direction: match entry.direction {
                CourtMessageDirection::Incoming => Direction::Incoming,
                CourtMessageDirection::Outgoing => Direction::Outgoing,
            },
            created_at: entry.created_at,
            received_at: message.entry.received_at,
            hydrated_at,
            xml,
            summary,
            read_error,
            attachments: &attachments,
        };
        fs::create_dir_all(&self.folder)
            .map_err(|e| format!("cannot create {}: {e}", self.folder.display()))?;
        write_archive(&self.folder, entry.id, &input).map_err(|e| e.to_string())?;
        Ok(match read {
            Ok(summary) => Hydrated::Read {
                aktenzeichen: summary.aktenzeichen,
            },
            Err(error) => Hydrated::Unreadable { error },
        })
    }

    fn remove_archive(&self, id: u64) -> io::Result<()> {
        match fs::remove_file(self.path(id)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn archived_ids(&self) -> io::Result<Vec<u64>> {
        let mut ids = Vec::new();
        for entry in read_folder(&self.folder)? {
            let name = entry?.file_name();
            let id = name
                .to_str()
                .and_then(|n| n.strip_suffix(".zip"))
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<u64>().ok());
            ids.extend(id);
        }
        Ok(ids)
    }

    fn remove_leftovers(&self) -> io::Result<usize> {
        let mut removed = 0;
        for entry in read_folder(&self.folder)? {
            let entry = entry?;
            if entry
                .file_name()
                .to_str()
                .is_some_and(is_leftover_temp_file)
            {
                fs::remove_file(entry.path())?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// The folder's entries; none while it does not exist yet.
fn read_folder(folder: &Path) -> io::Result<Box<dyn Iterator<Item = io::Result<fs::DirEntry>>>> {
    match fs::read_dir(folder) {
        Ok(entries) => Ok(Box::new(entries)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Box::new(std::iter::empty())),
        Err(e) => Err(e),
    }
}
