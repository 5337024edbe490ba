//! The integration tests of this crate, in one binary (each test binary links
//! wasmtime; one binary links it once).
//!
//! The approval suite runs twice, once on each store: `on_sqlite::…` and
//! `on_postgres::…` are the same tests, their gates on a SQLite file or on a
//! fresh database of the test PostgreSQL. A test of one store's own matter
//! (its files, its older schemas) is wrapped in `sqlite_only!` or
//! `postgres_only!`.

// Loading each suite file twice, once per store, is the point.
#![allow(clippy::duplicate_mod)]

mod common {
    pub use warden_testkit::*;
}

/// The approval suite on one store.
macro_rules! on_store {
    (@keep true $($item:item)*) => { $($item)* };
    (@keep false $($item:item)*) => {};
    ($d:tt $name:ident, $store:expr, sqlite: $sqlite:tt, postgres: $postgres:tt) => {
        // The suite's files are this directory's, shared by both stores.
        #[path = "."]
        mod $name {
            mod common {
                pub use warden_testkit::*;
                pub mod approval {
                    pub use warden_testkit::approval::*;
                    /// A gate on this configuration, on this suite's store.
                    pub fn gate(yaml: &str) -> TestGate {
                        $store.gate(yaml)
                    }
                }
            }

            /// Tests of this store only.
            #[allow(unused_macros)]
            macro_rules! sqlite_only {
                ($d($d item:item)*) => { on_store!(@keep $sqlite $d($d item)*); };
            }
            #[allow(unused_macros)]
            macro_rules! postgres_only {
                ($d($d item:item)*) => { on_store!(@keep $postgres $d($d item)*); };
            }

            #[path = "approval_expiry.rs"]
            mod approval_expiry;
            #[path = "approval_gate.rs"]
            mod approval_gate;
            #[path = "approval_grants.rs"]
            mod approval_grants;
            #[path = "approval_mcp_ask.rs"]
            mod approval_mcp_ask;
            #[path = "approval_purge.rs"]
            mod approval_purge;
            #[path = "approval_rejudge.rs"]
            mod approval_rejudge;
            #[path = "approval_resume.rs"]
            mod approval_resume;
        }
    };
}

on_store!($ on_sqlite, warden_testkit::approval::Store::Sqlite, sqlite: true, postgres: false);
on_store!($ on_postgres, warden_testkit::approval::Store::Postgres, sqlite: false, postgres: true);

mod announce;
mod fuzz_corpus;
mod postgres_tls;
mod transfer;
mod waiting;
