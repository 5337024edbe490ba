//! The approval store's sweeper. It expires unanswered approvals under
//! `hitl_approval.expire_after`, so that a run whose harness waits on its
//! approval learns the outcome without anyone touching the thread (every
//! lookup of a pending approval expires an overdue one too; the sweeper only
//! makes it happen on time), and it purges the arguments of approvals resolved
//! longer ago than the replay window ([`warden_approval::purge`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::DaemonState;

/// How often the sweeper looks for overdue approvals.
const EVERY: Duration = Duration::from_secs(1);

/// Every how many looks it purges resolved approvals' arguments.
const PURGE_EVERY: u64 = 60;

/// Starts the sweeper; it stops when the handle is aborted.
pub(super) fn spawn(daemon: Arc<DaemonState>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for tick in 0u64.. {
            ticks.tick().await;
            if tick % PURGE_EVERY == 0 {
                purge(&daemon).await;
            }
            if daemon
                .warden
                .snapshot()
                .hitl_approval()
                .expire_after
                .is_some()
            {
                expire(&daemon).await;
            }
        }
    })
}

async fn expire(daemon: &Arc<DaemonState>) {
    match housekeeping(daemon, |daemon| daemon.gate.expire_overdue()).await {
        Ok(Ok(0)) => {}
        Ok(Ok(expired)) => {
            tracing::info!(expired, "approvals expired unanswered");
            // The console's lists drop them.
            daemon.events.resync();
        }
        Ok(Err(err)) => tracing::warn!(%err, "expiring approvals"),
        Err(err) => tracing::warn!(%err, "expiring approvals"),
    }
}

async fn purge(daemon: &Arc<DaemonState>) {
    match housekeeping(daemon, |daemon| daemon.gate.purge_resolved()).await {
        Ok(Ok(0)) => {}
        Ok(Ok(purged)) => tracing::info!(purged, "resolved approvals' arguments purged"),
        Ok(Err(err)) => tracing::warn!(%err, "purging resolved approvals"),
        Err(err) => tracing::warn!(%err, "purging resolved approvals"),
    }
}

/// Runs the sweeper's store work on tokio's blocking threads, not on the
/// judging pool: housekeeping must never take the place of a call the pool
/// would admit (a call refused as overloaded because a purge was running), and
/// one job at a time (the sweeper awaits each) cannot crowd anything out.
async fn housekeeping<T: Send + 'static>(
    daemon: &Arc<DaemonState>,
    job: impl FnOnce(&DaemonState) -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    let daemon = daemon.clone();
    tokio::task::spawn_blocking(move || job(&daemon)).await
}
