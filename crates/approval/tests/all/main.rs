//! The integration tests of this crate, in one binary (each test binary links
//! wasmtime; one binary links it once).

mod common {
    pub use warden_testkit::*;
}

mod approval_expiry;
mod approval_gate;
mod approval_grants;
mod approval_purge;
mod approval_rejudge;
mod approval_resume;
mod fuzz_corpus;
