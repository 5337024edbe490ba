//! Warden's native policy core: what never runs in a plugin. The run's
//! interaction policy and who can be asked, canonical calls (the shell command
//! parsed, every path resolved), sensitive paths, rules, the permission engine,
//! risk triage, what the host believes of a call's context, and what may be
//! quoted back (redaction). It knows nothing of WebAssembly: triage takes its
//! classifier through [`triage::Classify`], which the composition layer
//! implements.

#![deny(missing_docs)]

pub mod canonical;
pub mod clock;
pub mod deepcode_import;
pub mod interaction;
pub mod origin;
pub mod permissions;
pub mod redact;
pub mod rules;
pub mod sensitive;
pub mod suite;
pub mod tools;
pub mod triage;
pub mod trust;
