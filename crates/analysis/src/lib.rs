//! Warden's shared argument analysis, for the host's native permission engine
//! and for guardrail providers compiled to WebAssembly alike:
//!
//! - [`shell`]: a shell-syntax parser and the flattening of a command line into
//!   every simple command it would run, seen through quoting, wrappers and nesting;
//! - [`path`]: lexical path canonicalisation, a comparison form that defeats
//!   case and look-alike tricks, and detection of suspicious characters;
//! - [`effects`]: what a command line would do, by effect (writing a disk
//!   raw, destroying the system, uploading local files, …), whatever program
//!   and spelling express it;
//! - [`sensitive`]: the credential and key paths no call may touch, and the
//!   public material (public keys, certificates) that looks like them;
//! - [`glob`]: `*`, `**`, `?` and `[…]` matching for paths and rule specifiers.
//!
//! Nothing here touches the file system or the environment: every input (the
//! home directory, the working directory) is given by the caller.

#![deny(missing_docs)]

pub mod contacts;
pub mod dirs;
pub mod effects;
pub mod glob;
pub mod globs;
pub mod path;
pub mod sensitive;
pub mod shell;
