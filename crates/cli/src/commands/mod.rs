//! One module per subcommand of `warden`: its arguments (a clap `Args`) and
//! its `run`.

pub(crate) mod approval;
mod approval_migrate;
pub(crate) mod bench;
pub(crate) mod bundle;
pub(crate) mod check;
pub(crate) mod demo;
pub(crate) mod eval;
pub(crate) mod explain;
pub(crate) mod hook;
pub(crate) mod input;
pub(crate) mod inspect;
pub(crate) mod interaction;
pub(crate) mod keygen;
pub(crate) mod log;
pub(crate) mod mcp;
mod mcp_asks;
mod mcp_daemon;
mod mcp_http;
mod mcp_upstream;
pub(crate) mod new;
pub(crate) mod policy;
pub(crate) mod promote;
pub(crate) mod replay;
pub(crate) mod rules;
pub(crate) mod scaffold;
pub(crate) mod serve;
pub(crate) mod state_dir;
pub(crate) mod test;
pub(crate) mod verify;
pub(crate) mod wit;
