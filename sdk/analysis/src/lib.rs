//! Warden's shared argument analysis, for the host's native permission engine
//! and for guardrail providers compiled to WebAssembly alike:
//!
//! - [`shell`]: a shell-syntax parser and the flattening of a command line into
//!   every simple command it would run, seen through quoting, wrappers and nesting;
//! - [`path`]: lexical path canonicalisation, a comparison form that defeats
//!   case and look-alike tricks, and detection of suspicious characters;
//! - [`glob`]: `*`, `**`, `?` and `[…]` matching for paths and rule specifiers.
//!
//! Nothing here touches the file system or the environment: every input (the
//! home directory, the working directory) is given by the caller.

pub mod glob;
pub mod path;
pub mod shell;
