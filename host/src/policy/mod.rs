//! The native policy core: what never runs in a plugin.

pub mod interaction;
