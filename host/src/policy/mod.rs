//! The native policy core: what never runs in a plugin.

pub mod canonical;
pub mod interaction;
pub mod permissions;
pub mod rules;
pub mod sensitive;
pub mod tools;
pub mod triage;
