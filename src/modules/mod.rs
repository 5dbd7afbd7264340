//! The reporting modules, one folder each, holding only what is their own; the layer around them
//! is [`crate::module_layer`].

use crate::module_layer::BuildModule;

/// Declares each module's folder and lists its `build` in [`MODULES`].
macro_rules! modules {
    ($($module:ident),* $(,)?) => {
        $(mod $module;)*

        /// Every module the service runs. Adding a module is its folder plus one line in the
        /// list below.
        pub const MODULES: &[BuildModule] = &[$($module::build),*];
    };
}

modules! {
    bedreport,
    birthdata,
    birthnotice,
    deathnotice,
    guardianship,
    hospreport,
    labreport,
}

pub(crate) use guardianship::archive_folder;
