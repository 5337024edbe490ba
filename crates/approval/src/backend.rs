//! `hitl_approval.store`: which database keeps the approvals. SQLite in the
//! data directory is the default; `kind: postgres` names the environment
//! variable that holds the database's URL, so that its password is never in
//! the configuration file.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::durability::{Backend, StoreConfig};
use crate::store::{ApprovalStore, StoreError};

/// An opened store, and how to name it in the log.
pub struct Opened {
    /// The store.
    pub store: Arc<dyn ApprovalStore>,
    /// `sqlite <path>` or `postgres postgres://host:port/db sslmode=MODE` (never
    /// a password).
    pub mode: String,
}

/// Opens the store `config` names. `wait` bounds how long a call waits for
/// the database (SQLite's lock, a pooled PostgreSQL connection).
pub fn open(config: &StoreConfig, data_dir: &Path, wait: Duration) -> Result<Opened, StoreError> {
    open_as(config, data_dir, wait, false)
}

/// As [`open`], for a daemon that serves from the store: a PostgreSQL store
/// also keeps its index of waiting threads ([`crate::waiting`]), so that
/// evaluate's check of a thread that does not wait needs no round trip.
pub fn open_serving(
    config: &StoreConfig,
    data_dir: &Path,
    wait: Duration,
) -> Result<Opened, StoreError> {
    open_as(config, data_dir, wait, true)
}

fn open_as(
    config: &StoreConfig,
    data_dir: &Path,
    wait: Duration,
    serving: bool,
) -> Result<Opened, StoreError> {
    let durability = config.durability;
    match &config.backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite => {
            let store = crate::sqlite::SqliteApprovalStore::open_in(data_dir, durability)?;
            store.set_busy_timeout(wait)?;
            let mode = format!("sqlite {}", store.path().display());
            Ok(Opened {
                store: Arc::new(store),
                mode,
            })
        }
        #[cfg(feature = "postgres")]
        Backend::Postgres { url_env, pool_size } => {
            let url = std::env::var(url_env).map_err(|_| StoreError::Open {
                path: format!("hitl_approval.store.url_env ({url_env})"),
                message: format!(
                    "the environment variable {url_env} is not set; it holds the PostgreSQL URL"
                ),
            })?;
            let mut options = crate::postgres::PoolOptions {
                timeout: wait,
                ..Default::default()
            };
            if let Some(size) = pool_size {
                options.max_size = *size;
            }
            let store = crate::postgres::PostgresApprovalStore::connect(&url, options)?;
            if serving {
                store.watch_waiting()?;
            }
            let mode = format!(
                "postgres {} sslmode={}",
                store.database(),
                store.ssl_mode().as_str()
            );
            Ok(Opened {
                store: Arc::new(store),
                mode,
            })
        }
        #[allow(unreachable_patterns)]
        other => Err(StoreError::Open {
            path: "hitl_approval.store".into(),
            message: format!("this build has no {other:?} store"),
        }),
    }
}
