//! Incoming XJustiz court messages (`xjustiz_nachricht.xml`, XJustiz 3.6.2): reading the parts
//! the guardianship index needs ([`read_message`]) and writing one message's ZIP archive
//! ([`write_archive`]).
//!
//! Both are pure library code: no actor, store or HTTP. What is read from where, the bounds and
//! the archive layout are documented in docs/decisions.md ("XJustiz: reading court messages and
//! writing their archives").

mod archive;
mod read;
mod summary;

pub use archive::{
    is_leftover_temp_file, safe_stored_names, write_archive, ArchiveError, ArchiveInput,
    Attachment, Direction, MESSAGE_FILE, METADATA_FILE, TEMP_PREFIX,
};
pub use read::{
    read_message, ReadError, MAX_ATTRIBUTES, MAX_DEPTH, MAX_ENTRIES, MAX_MESSAGE_BYTES,
    MAX_TEXT_BYTES,
};
pub use summary::{AktenzeichenSource, Beteiligter, Dokument, MessageSummary};
