//! The check that every surface of a message carries only the calls the gate
//! judged: in `warden_types::surfaces`, with the message; this module keeps
//! its old path.

pub use warden_types::surfaces::{Surface, SurfaceMismatch};
