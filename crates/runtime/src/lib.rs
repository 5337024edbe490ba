//! Warden's provider runtime: the wasmtime engine and its limits, the
//! compiled-artifact cache, loading and pinning components, instance pools,
//! failures, inspection and classifiers. It owns the provider spec and limits
//! types; it knows nothing of the policy.

#![deny(missing_docs)]

pub mod artifact_cache;
pub mod builtin;
pub mod data_dir;
pub mod engine;
pub mod input_file;
pub mod provider;
pub mod spec;
