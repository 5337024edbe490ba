//! `warden promote` and `warden rollback`: the daemon's shadow configuration
//! made live, and the last promotion undone, through its admin API
//! (`POST /v1/admin/promote`, `POST /v1/admin/rollback`) with an admin token.
//! The daemon's answer (the generations and provider digests before and
//! after) is printed as JSON.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

/// Where the daemon is, and the admin token.
#[derive(Args)]
pub(crate) struct AdminArgs {
    /// The daemon's URL (http).
    #[arg(long, default_value = "http://127.0.0.1:8787")]
    url: String,
    /// The environment variable holding an admin token.
    #[arg(long, default_value = "WARDEN_ADMIN_TOKEN")]
    token_env: String,
}

#[derive(Args)]
pub(crate) struct PromoteArgs {
    #[command(flatten)]
    admin: AdminArgs,
    /// Also rewrite the config file (atomically) so that the candidate is the
    /// config; without it the promotion is recorded in the data directory.
    #[arg(long)]
    write: bool,
}

#[derive(Args)]
pub(crate) struct RollbackArgs {
    #[command(flatten)]
    admin: AdminArgs,
}

/// How long a promotion may take: a swap, and a file written.
const TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn promote(args: PromoteArgs) -> anyhow::Result<ExitCode> {
    let write = args.write;
    call(
        &args.admin,
        |client| async move { client.promote(write).await },
    )
}

pub(crate) fn rollback(args: RollbackArgs) -> anyhow::Result<ExitCode> {
    call(&args.admin, |client| async move { client.rollback().await })
}

fn call<F, Fut>(admin: &AdminArgs, route: F) -> anyhow::Result<ExitCode>
where
    F: FnOnce(warden_client::Client) -> Fut,
    Fut: std::future::Future<Output = Result<warden_client::ReloadReport, warden_client::Error>>,
{
    let token = std::env::var(&admin.token_env).with_context(|| {
        format!(
            "no admin token: set {} (or name another variable with --token-env)",
            admin.token_env
        )
    })?;
    let client = warden_client::Client::builder(admin.url.as_str())
        .token(token)
        .timeout(TIMEOUT)
        // Sent once: a promotion repeated would promote what is live then.
        .retries(0)
        .build()
        .with_context(|| format!("--url '{}'", admin.url))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(route(client))?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(ExitCode::SUCCESS)
}
