//! The approval commands of the `warden` CLI: `warden gate` submits a model
//! response; `warden approvals list | resume | clear | history` work on the
//! store in the data directory, and `warden approvals migrate` copies one
//! store into another (`approval_migrate`). Output is JSON on stdout. Exit codes: 0 done,
//! 2 a usage, request or configuration error, 3 a conflict (the thread waits
//! for a human, or another resume won); a refused request also prints its JSON
//! error body on stdout.
//!
//! These commands act with the authority of whoever can open the store's
//! files: they answer any principal's pauses, in the name given with
//! `--reviewer` (default: `$USER`). Guard the data directory accordingly.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde::Serialize;

use warden::Warden;
use warden_approval::sqlite::{STORE_FILE, SqliteApprovalStore};
use warden_approval::{
    ApprovalError, ApprovalGate, ApprovalStore, Backend, JournalFilter, LOCAL_PRINCIPAL,
    ListFilter, ModelResponse, ResumeRequest, Reviewer, RunRef,
};
use warden_server::Config;
use warden_types::Caller;

/// Where the configuration and the approval store are.
#[derive(Args, Clone, Debug)]
pub struct StoreArgs {
    /// The configuration file (default: the embedded defaults).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The data directory (default: the configuration's `data_dir`, else `.warden`).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

/// `warden gate`: judge one model response through the approval gate.
#[derive(Args, Clone, Debug)]
pub struct GateArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The response, `{"message": {"tool_calls": [...]}, "context": {...}}`, or `-` for stdin.
    #[arg(long, default_value = "-")]
    pub response: String,
    /// The thread (default: `context.thread_id`).
    #[arg(long)]
    pub thread: Option<String>,
    /// The run (default: `context.run_id`).
    #[arg(long)]
    pub run: Option<String>,
    /// Treat the caller as internal: it may set the run's interaction mode and
    /// origin, every attribution field and the time its calls are judged at.
    #[arg(long)]
    pub internal: bool,
    /// Believe the context on these attribution fields, as a token with
    /// `asserts:` (user_role, user_id, oauth_provider, oauth_id).
    #[arg(long, value_delimiter = ',', value_name = "FIELD,...")]
    pub asserts: Vec<warden_types::Attribution>,
    /// The principal whose thread it is (the daemon uses the token's name).
    #[arg(long, default_value = LOCAL_PRINCIPAL)]
    pub principal: String,
}

/// `warden approvals ...`
#[derive(Subcommand, Clone, Debug)]
pub enum ApprovalsCommand {
    /// List pending approvals (with --all, resolved ones too).
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// Only this thread's.
        #[arg(long)]
        thread: Option<String>,
        /// Only this principal's threads.
        #[arg(long)]
        principal: Option<String>,
        /// Resolved approvals too.
        #[arg(long)]
        all: bool,
    },
    /// Answer a thread's pending approval with a decisions file.
    Resume {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        thread: String,
        /// `{"decisions": [{"request_id", "decision": "approve|reject|edit", ...}]}`
        /// or `{"reject_all": {"message": ...}}`; `-` for stdin.
        #[arg(long)]
        decisions: String,
        /// The approval (default: the thread's pending one).
        #[arg(long)]
        approval: Option<String>,
        /// The run the answered calls are attributed to (default: the paused run).
        #[arg(long)]
        run: Option<String>,
        /// The principal whose thread it is, when several have this thread id.
        #[arg(long)]
        principal: Option<String>,
        /// Who answers, for the journal (default: $USER).
        #[arg(long)]
        reviewer: Option<String>,
        /// The resume's idempotency key (default: its run): the same resume
        /// again prints the stored answer, marked `replayed`.
        #[arg(long)]
        idempotency_key: Option<String>,
    },
    /// Reject a thread's pending approval as a whole, as an operator; works on
    /// pauses that cannot take per-call decisions too. Journalled.
    Clear {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        thread: String,
        /// Why, for the journal and the model.
        #[arg(long)]
        reason: Option<String>,
        /// Who clears it (default: $USER).
        #[arg(long, alias = "actor")]
        reviewer: Option<String>,
        /// The approval (default: the thread's pending one).
        #[arg(long)]
        approval: Option<String>,
        /// The principal whose thread it is, when several have this thread id.
        #[arg(long)]
        principal: Option<String>,
    },
    /// Print the approval journal, oldest first.
    History {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        thread: Option<String>,
        #[arg(long)]
        principal: Option<String>,
    },
    /// Copy every approval, the journal and the grants from one store into
    /// another that holds nothing yet: `--from sqlite:PATH --to postgres`.
    /// The SQLite store is leased for the copy (no daemon may serve from it
    /// meanwhile) and left as it was. Exit 3 when the target holds anything.
    Migrate {
        /// `sqlite:PATH` (the store file or its data directory), `postgres`
        /// (the URL in $WARDEN_DATABASE_URL) or `postgres:VAR`.
        #[arg(long)]
        from: super::approval_migrate::StoreSpec,
        /// The store to copy into, written as `--from`.
        #[arg(long)]
        to: super::approval_migrate::StoreSpec,
    },
}

/// The largest decisions or response file read.
const MAX_INPUT_BYTES: u64 = 4 << 20;

pub fn gate(args: GateArgs) -> anyhow::Result<ExitCode> {
    let body = read_input(&args.response, "the response")?;
    let response = match ModelResponse::from_json(&body) {
        Ok(response) => response,
        Err(err) => return refused(err),
    };
    let thread = args
        .thread
        .or_else(|| response.context.thread_id.clone())
        .context("no thread: pass --thread or set context.thread_id")?;
    let run = args
        .run
        .or_else(|| response.context.run_id.clone())
        .context("no run: pass --run or set context.run_id")?;
    let caller = Caller::of_credential(args.internal, args.asserts.into_iter().collect());
    let gate = open_gate(&args.store)?;
    let run = RunRef::new(thread, run).of(args.principal);
    match gate.submit(&run, &response, caller) {
        Ok(outcome) => print_json(&outcome),
        Err(err) => refused(err),
    }
}

// The arguments of `warden approvals`: which of its commands.
#[derive(Args)]
pub(crate) struct ApprovalsArgs {
    #[command(subcommand)]
    command: ApprovalsCommand,
}

pub(crate) fn approvals(args: ApprovalsArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ApprovalsCommand::List {
            store,
            thread,
            principal,
            all,
        } => {
            let Some(store) = existing_store(&store)? else {
                return print_json(&Vec::<()>::new());
            };
            let filter = ListFilter {
                principal,
                thread_id: thread,
                include_resolved: all,
            };
            let views: Vec<_> = store
                .list(&filter)
                .map_err(ApprovalError::from)?
                .iter()
                .map(warden_approval::ApprovalView::from)
                .collect();
            print_json(&views)
        }
        ApprovalsCommand::Migrate { from, to } => match super::approval_migrate::run(&from, &to)? {
            Ok(copied) => print_json(&copied),
            Err(refusal) => {
                eprintln!("warden: {refusal}");
                Ok(ExitCode::from(3))
            }
        },
        ApprovalsCommand::History {
            store,
            thread,
            principal,
        } => {
            let Some(store) = existing_store(&store)? else {
                return print_json(&Vec::<()>::new());
            };
            let filter = JournalFilter {
                principal,
                thread_id: thread,
                ..JournalFilter::default()
            };
            print_json(&store.events(&filter).map_err(ApprovalError::from)?)
        }
        ApprovalsCommand::Resume {
            store,
            thread,
            decisions,
            approval,
            run,
            principal,
            reviewer,
            idempotency_key,
        } => {
            let body = read_input(&decisions, "the decisions")?;
            let mut request = match ResumeRequest::from_json(&body) {
                Ok(request) => request,
                Err(err) => return refused(err),
            };
            if run.is_some() {
                request.run_id = run;
            }
            request.idempotency_key = idempotency_key;
            let reviewer = Reviewer::human(local_user(reviewer));
            let gate = open_gate(&store)?;
            let approval = match in_principal(&gate, &thread, approval, principal.as_deref()) {
                Ok(approval) => approval,
                Err(err) => return refused(err),
            };
            // Printing is the hand-off: if the resolution cannot be written,
            // the approval is restored so that the resume can be retried.
            let printed = gate.resume_and_hand_off(
                &reviewer,
                &thread,
                approval.as_deref(),
                &request,
                write_json,
            );
            match printed {
                Ok(_) => Ok(ExitCode::SUCCESS),
                Err(err) => refused(err),
            }
        }
        ApprovalsCommand::Clear {
            store,
            thread,
            reason,
            reviewer,
            approval,
            principal,
        } => {
            let reviewer = Reviewer::human(local_user(reviewer));
            let gate = open_gate(&store)?;
            let approval = match in_principal(&gate, &thread, approval, principal.as_deref()) {
                Ok(approval) => approval,
                Err(err) => return refused(err),
            };
            match gate.clear(&reviewer, &thread, approval.as_deref(), reason.as_deref()) {
                Ok(resolution) => {
                    print_json(&serde_json::json!({"thread_id": thread, "cleared": resolution}))
                }
                Err(err) => refused(err),
            }
        }
    }
}

/// The name the local user answers in: `--reviewer`, else `$USER`.
fn local_user(reviewer: Option<String>) -> String {
    reviewer
        .or_else(|| std::env::var("USER").ok())
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "operator".into())
}

/// The approval to answer: the one named, or, with `--principal`, that
/// principal's approval on the thread (pending, else its latest).
fn in_principal(
    gate: &ApprovalGate,
    thread: &str,
    approval: Option<String>,
    principal: Option<&str>,
) -> Result<Option<String>, ApprovalError> {
    match (approval, principal) {
        (Some(approval), _) => Ok(Some(approval)),
        (None, Some(principal)) => Ok(Some(gate.find(Some(principal), thread, None)?.approval_id)),
        (None, None) => Ok(None),
    }
}

fn data_dir(args: &StoreArgs) -> anyhow::Result<(Config, PathBuf)> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::embedded(),
    };
    if let Some(dir) = &args.data_dir {
        config.core.set_data_dir(dir);
    }
    let dir = config.core.data_dir();
    Ok((config, dir))
}

fn open_gate(args: &StoreArgs) -> anyhow::Result<ApprovalGate> {
    let (config, dir) = data_dir(args)?;
    let warden = Warden::new(&config.core)?;
    let opened =
        warden_approval::backend::open(&config.store, &dir, warden_approval::sqlite::BUSY_TIMEOUT)?;
    let gate = ApprovalGate::new(Arc::new(warden), opened.store);
    // Where no daemon sweeps the store, the command line purges what is due
    // (a busy store is purged next time).
    if let Err(err) = gate.purge_resolved() {
        tracing::warn!(%err, "purging resolved approvals");
    }
    Ok(gate)
}

/// The store, if there is one: reading never creates a SQLite file (a
/// PostgreSQL store is the operator's database, opened as configured).
fn existing_store(args: &StoreArgs) -> anyhow::Result<Option<Arc<dyn ApprovalStore>>> {
    let (config, dir) = data_dir(args)?;
    if config.store.backend == Backend::Sqlite {
        let path = dir.join(STORE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        return Ok(Some(Arc::new(SqliteApprovalStore::open(
            &path,
            config.store.durability,
        )?)));
    }
    let opened =
        warden_approval::backend::open(&config.store, &dir, warden_approval::sqlite::BUSY_TIMEOUT)?;
    Ok(Some(opened.store))
}

fn read_input(source: &str, what: &str) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    let mut body = Vec::new();
    if source == "-" {
        std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut body)
            .with_context(|| format!("reading {what} from stdin"))?;
    } else {
        let path = Path::new(source);
        if std::fs::metadata(path)
            .map(|m| m.len() > MAX_INPUT_BYTES)
            .unwrap_or(false)
        {
            bail!("{source} is larger than {MAX_INPUT_BYTES} bytes");
        }
        body = std::fs::read(path).with_context(|| format!("reading {what} {source}"))?;
    }
    Ok(body)
}

fn write_json<T: Serialize>(value: &T) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}

fn print_json<T: Serialize>(value: &T) -> anyhow::Result<ExitCode> {
    write_json(value).context("writing the output")?;
    Ok(ExitCode::SUCCESS)
}

/// A refused request: the JSON error body on stdout, the message on stderr,
/// and 3 for a conflict, 2 otherwise.
fn refused(err: ApprovalError) -> anyhow::Result<ExitCode> {
    let _ = write_json(&err.body());
    eprintln!("warden: {err}");
    Ok(ExitCode::from(if err.status() == 409 { 3 } else { 2 }))
}
