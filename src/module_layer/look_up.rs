//! What [`super::Module::look_up`] is given: whom it checks for, and the request or submitted
//! content it checks.

use meldewerk_storage::{Store, UserRecord};
use serde_json::{Map, Value};

use super::Form;

/// Whom [`super::Module::look_up`] checks for (the user `user`, the report `id`), and the store
/// it consults.
pub struct LookUp<'a> {
    /// The store, with the registries the module may consult.
    pub store: &'a dyn Store,
    /// The API user the report is made under.
    pub user: &'a UserRecord,
    /// The report's id.
    pub id: &'a str,
}

/// What [`super::Module::look_up`] checks: a memento request, which it only reads (the memento
/// is made of the request, nothing the look-up finds goes into it), or the content of a form's
/// submit, which it may complete.
pub enum Subject<'a> {
    /// A memento request.
    Request(&'a Map<String, Value>),
    /// The content submitted with `form`.
    Submitted {
        /// The form submitted.
        form: &'static Form,
        /// Its content.
        content: &'a mut Map<String, Value>,
    },
}

impl Subject<'_> {
    /// The request or the submitted content, to read.
    pub fn content(&self) -> &Map<String, Value> {
        match self {
            Subject::Request(content) => content,
            Subject::Submitted { content, .. } => content,
        }
    }

    /// The form submitted; `None` for a memento request.
    pub fn form(&self) -> Option<&'static Form> {
        match self {
            Subject::Request(_) => None,
            Subject::Submitted { form, .. } => Some(form),
        }
    }
}
