//! The OpenAPI schemas of the checked text and number types: their JSON is a plain string or
//! integer, with the pattern or bounds their parsers hold them to.

use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::RefOr;

/// Implements `ToSchema` for `$type`, whose JSON is the schema `$schema` builds.
macro_rules! schema {
    ($type:ty, $schema:expr) => {
        impl utoipa::PartialSchema for $type {
            fn schema() -> RefOr<Schema> {
                RefOr::T(Schema::Object($schema.build()))
            }
        }
        impl utoipa::ToSchema for $type {}
    };
}

/// A string matching `pattern`, described by `description`.
fn text(pattern: &str, description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
        .description(Some(description))
}

schema!(
    crate::Bsnr,
    text("^[0-9]{9}$", "A Betriebsstättennummer: nine digits.")
);
schema!(
    crate::Ik,
    text(
        "^[0-9]{9}$",
        "An institution code (Institutionskennzeichen): nine digits."
    )
);
schema!(
    crate::SafeId,
    text(
        r"^(DE\.[A-Za-z][A-Za-z0-9_]*\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*|(safe|govello)-[0-9]+(-[0-9]+)+)$",
        "A SAFE-ID: `DE.<directory>.<id>` or `safe-<digits>-<digits>`, at most 128 characters."
    )
    .max_length(Some(crate::MAX_SAFE_ID_LEN))
);
schema!(
    crate::MailboxAccountId,
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(1))
        .description(Some("A mailbox account's id: a whole number from 1."))
);
