//! The Warden daemon (`warden serve`): the HTTP/JSON API in front of the
//! pipeline, its authentication and limits, the decision log, the metrics, and
//! the hot swap of the provider set (on a change of the config file, on SIGHUP,
//! or on `POST /v1/admin/reload`), and the promotion of a shadow configuration
//! (`POST /v1/admin/promote`, `POST /v1/admin/rollback`).
//!
//! ```no_run
//! # async fn run() -> Result<(), warden_server::ServeError> {
//! use warden_server::{ServeOptions, Server};
//!
//! let server = Server::start("warden.yaml".as_ref(), ServeOptions::default()).await?;
//! println!("listening on http://{}", server.local_addr());
//! server.shutdown().await
//! # }
//! ```

#![deny(missing_docs)]

mod admission;
pub mod auth;
mod body;
pub mod config;
mod connections;
pub mod console;
pub mod decision_log;
mod error;
pub mod events;
mod expiry;
mod limits;
pub mod metrics;
pub mod notify;
mod outcomes;
mod promotion;
mod promotion_record;
pub mod proxies;
mod refusal;
mod reload;
mod routes;
mod server;
mod shares;
mod state;
pub mod telemetry;
mod throttle;
mod watch;
mod workers;

pub use auth::{Access, Principal, Role, TokenError, TokenSpec, Tokens};
pub use body::{ApiError, ErrorBody, ErrorDetail};
pub use config::{Config, DEFAULT_LISTEN, ServerConfig};
pub use connections::raise_open_file_limit;
#[cfg(feature = "bench")]
pub use state::Dispatch;
pub use state::{DaemonState, SWAP_LOG, ServeOptions};

/// The daemon's shared state, under its old name.
#[deprecated(since = "0.2.0", note = "renamed DaemonState")]
pub type Daemon = DaemonState;
pub use error::ServeError;
pub use limits::HttpLimits;
pub use metrics::Metrics;
pub use promotion::{PREVIOUS_CONFIG, PromoteError};
pub use promotion_record::PROMOTION_FILE;
pub use reload::{ProviderDigest, ReloadError, ReloadReport, Trigger};
pub use routes::{OPENAPI, ROUTES, RouteInfo};
pub use server::{Server, run};
pub use workers::{PoolError, WorkerPool};
