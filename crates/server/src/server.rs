//! Starting and stopping the daemon: [`Server`] binds the listener and runs
//! the routes, the config watcher and the expiry sweep over one [`DaemonState`];
//! [`run`] is `warden serve`, with its signals.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::connections::{self, raise_open_file_limit};
use crate::error::ServeError;
use crate::reload::Trigger;
use crate::state::{DaemonState, ServeOptions};
use crate::{expiry, routes, watch};

/// A running daemon.
pub struct Server {
    daemon: Arc<DaemonState>,
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
    sweeper: JoinHandle<()>,
    _watcher: Option<watch::ConfigWatcher>,
}

impl Server {
    /// Loads the configuration, binds the listener and starts serving (on the
    /// current tokio runtime).
    pub async fn start(config_path: &Path, options: ServeOptions) -> Result<Server, ServeError> {
        let path = config_path.to_path_buf();
        let opts = options.clone();
        let daemon = tokio::task::spawn_blocking(move || DaemonState::load(&path, &opts))
            .await
            .map_err(|err| ServeError::Io(std::io::Error::other(err)))??;
        let daemon = Arc::new(daemon);
        let addr = options.listen.unwrap_or(daemon.fixed.listen);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let addr = listener.local_addr()?;
        let _ = daemon.bound_url.set(format!("http://{addr}"));
        let watcher = if options.watch.unwrap_or(daemon.fixed.watch) {
            Some(watch::ConfigWatcher::start(daemon.clone())?)
        } else {
            None
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let app = routes::router(daemon.clone());
        let task = tokio::spawn(connections::serve(
            listener,
            app,
            daemon.connections.clone(),
            daemon.limits.clone(),
            stopped,
        ));
        let sweeper = expiry::spawn(daemon.clone());
        tracing::info!(%addr, config = %daemon.config_path.display(), "warden is serving");
        Ok(Server {
            daemon,
            addr,
            stop: Some(stop),
            task,
            sweeper,
            _watcher: watcher,
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The state the running daemon serves from.
    pub fn daemon(&self) -> &Arc<DaemonState> {
        &self.daemon
    }

    /// Stops accepting connections, lets requests in flight finish (for at most
    /// `server.limits.shutdown_timeout_ms`, then drops their connections), and
    /// writes out and syncs the logs.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // The console's event streams would otherwise hold the shutdown.
        self.daemon.events.close();
        self.sweeper.abort();
        let served = (&mut self.task)
            .await
            .map_err(|err| ServeError::Io(std::io::Error::other(err)))?;
        let daemon = self.daemon.clone();
        tokio::task::spawn_blocking(move || {
            // The lines held for their shadow judgments are written first.
            if !daemon.warden.settle_shadows() {
                tracing::warn!("shadow judgments still pending at shutdown: their lines are lost");
            }
            daemon.decisions.flush();
            daemon.swaps.flush();
            // What waits for the collector is sent (or fails) before the exit.
            if let Some(telemetry) = &daemon.telemetry {
                telemetry.stop();
            }
        })
        .await
        .map_err(|err| ServeError::Io(std::io::Error::other(err)))?;
        Ok(served?)
    }
}

/// `warden serve`: runs the daemon until SIGTERM or Ctrl-C; SIGHUP reloads.
/// Prints `warden: listening on http://ADDR` on stdout once it accepts calls.
pub fn run(config_path: &Path, options: ServeOptions) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("warden-http")
        .build()?;
    runtime.block_on(async {
        // Handle signals before anyone can know the daemon is up: a SIGHUP or
        // SIGTERM sent right after the "listening" line must not kill it.
        let mut hangup = signal(SignalKind::hangup())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        if let Some(files) = raise_open_file_limit() {
            tracing::debug!(files, "open-file limit");
        }
        let server = Server::start(config_path, options).await?;
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            writeln!(out, "warden: listening on http://{}", server.local_addr())?;
            out.flush()?;
        }
        loop {
            tokio::select! {
                _ = hangup.recv() => {
                    let daemon = server.daemon().clone();
                    tokio::task::spawn_blocking(move || {
                        let _ = daemon.reload(&Trigger::Signal);
                    });
                }
                _ = terminate.recv() => break,
                _ = interrupt.recv() => break,
            }
        }
        tracing::info!("shutting down");
        server.shutdown().await?;
        Ok(())
    })
}
