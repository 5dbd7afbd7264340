//! XJustiz court messages (`xjustiz_nachricht.xml`, XJustiz 3.6.2): reading the parts the
//! guardianship index needs ([`read_message`]), writing one message's ZIP archive
//! ([`write_archive`]), and writing the outgoing 0005005 a court form sends
//! ([`write_uebermittlung`]).
//!
//! All are pure library code: no actor, store or HTTP. What is read from where, the bounds and
//! the archive layout are documented in docs/decisions.md ("XJustiz: reading court messages and
//! writing their archives"), the outgoing message in "XJustiz: the outgoing message 0005005".

mod archive;
mod read;
mod summary;
mod write;

pub use archive::{
    is_leftover_temp_file, safe_stored_names, write_archive, ArchiveError, ArchiveInput,
    Attachment, Direction, MESSAGE_FILE, METADATA_FILE, TEMP_PREFIX,
};
pub use read::{
    read_message, ReadError, MAX_ATTRIBUTES, MAX_DEPTH, MAX_ENTRIES, MAX_MESSAGE_BYTES,
    MAX_TEXT_BYTES,
};
pub use summary::{AktenzeichenSource, Beteiligter, Dokument, MessageSummary};
pub use write::{
    write_uebermittlung, Absender, Anschrift, Betroffener, Dokumentangabe, Empfaenger,
    EmpfaengerArt, Familienstand, Nachricht, Uebermittlung, WriteError, MAX_DOKUMENTE,
    MAX_MIME_TYPE_CHARS, MAX_TEXT_CHARS,
};
