//! `warden approvals migrate --from sqlite:PATH --to postgres`: copies what a
//! node's SQLite approval store holds into a PostgreSQL database a fleet will
//! share (or back), row for row ([`warden_approval::transfer`]). It never
//! writes into a store that holds anything, and never while a daemon serves
//! from the SQLite store: it takes that store's lease for the copy.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::bail;
use serde::Serialize;
use warden_approval::ApprovalStore;
use warden_approval::lease::{Holder, LEASE_TTL, Lease};
use warden_approval::postgres::{PoolOptions, PostgresApprovalStore};
use warden_approval::sqlite::{STORE_FILE, SqliteApprovalStore};

/// The environment variable `postgres` reads the database's URL from, as
/// `hitl_approval.store.url_env` names it by default.
const DEFAULT_URL_ENV: &str = "WARDEN_DATABASE_URL";

/// A store named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreSpec {
    /// `sqlite:PATH`: the store file, or the data directory holding it.
    Sqlite(PathBuf),
    /// `postgres` or `postgres:VAR`: the database whose URL is in the
    /// environment variable (default `WARDEN_DATABASE_URL`).
    Postgres { url_env: String },
}

impl std::str::FromStr for StoreSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<StoreSpec, String> {
        match text.split_once(':') {
            Some(("sqlite", path)) if !path.is_empty() => Ok(StoreSpec::Sqlite(path.into())),
            Some(("postgres", var)) if !var.is_empty() => Ok(StoreSpec::Postgres {
                url_env: var.into(),
            }),
            None if text == "postgres" => Ok(StoreSpec::Postgres {
                url_env: DEFAULT_URL_ENV.into(),
            }),
            _ => Err(format!(
                "'{text}' names no store: write sqlite:PATH (the store file or its data \
                 directory), postgres (the URL in ${DEFAULT_URL_ENV}) or postgres:VAR (the URL \
                 in $VAR)"
            )),
        }
    }
}

/// An opened store, the lease held on it (SQLite), and its name for output.
struct Opened {
    store: Arc<dyn ApprovalStore>,
    shown: String,
    _lease: Option<Lease>,
}

/// What a migration copied, printed as JSON.
#[derive(Serialize)]
pub struct Copied {
    from: String,
    to: String,
    approvals: usize,
    pending: usize,
    journal: usize,
    grants: usize,
}

/// Copies `from` into `to`: what was copied, or why nothing was (`to` holds
/// something already).
pub fn run(from: &StoreSpec, to: &StoreSpec) -> anyhow::Result<Result<Copied, String>> {
    if from == to {
        bail!("--from and --to name the same store");
    }
    let source = open(from, false)?;
    let target = open(to, true)?;
    let contents = source.store.export()?;
    Ok(match target.store.import(&contents)? {
        Ok(()) => Ok(Copied {
            from: source.shown,
            to: target.shown,
            approvals: contents.approvals.len(),
            pending: contents.pending(),
            journal: contents.events.len(),
            grants: contents.grants.len(),
        }),
        Err(occupied) => Err(format!(
            "{} already holds {} approvals, {} journal entries and {} grants: approvals \
             migrate writes only into an empty store, and wrote nothing",
            target.shown, occupied.approvals, occupied.events, occupied.grants
        )),
    })
}

/// Opens `spec`. A SQLite source must exist (it is never created); a SQLite
/// store is leased for the copy, so no daemon serves from it meanwhile.
fn open(spec: &StoreSpec, create: bool) -> anyhow::Result<Opened> {
    match spec {
        StoreSpec::Sqlite(path) => {
            let file = store_file(path);
            if !create && !file.exists() {
                bail!("no approval store at {}", file.display());
            }
            let store = SqliteApprovalStore::open(&file, Default::default())?;
            let holder = Holder {
                host: warden_log::stamp::host_name(),
                node: "warden approvals migrate".into(),
                pid: std::process::id(),
            };
            let lease = Lease::acquire(&file, &holder, LEASE_TTL)?;
            Ok(Opened {
                store: Arc::new(store),
                shown: format!("sqlite {}", file.display()),
                _lease: Some(lease),
            })
        }
        StoreSpec::Postgres { url_env } => {
            let Ok(url) = std::env::var(url_env) else {
                bail!("the environment variable {url_env} is not set; it holds the PostgreSQL URL");
            };
            let store = PostgresApprovalStore::connect(&url, PoolOptions::default())?;
            Ok(Opened {
                shown: format!("postgres {}", store.database()),
                store: Arc::new(store),
                _lease: None,
            })
        }
    }
}

/// The store file `path` names: itself, or `approvals.sqlite3` in it when it
/// is a directory.
fn store_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(STORE_FILE)
    } else {
        path.to_path_buf()
    }
}
