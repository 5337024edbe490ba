//! Warden's provider runtime: the wasmtime engine and its limits, the
//! compiled-artifact cache, loading and pinning components, instance pools,
//! failures, inspection, manifests and classifiers. It owns the provider spec and limits
//! types; it knows nothing of the policy.

#![deny(missing_docs)]

pub mod artifact_cache;
pub mod builtin;
pub mod config_schema;
pub mod data_dir;
pub mod engine;
pub mod input_file;
pub mod json_config;
pub mod manifest;
pub mod provider;
pub mod source_map;
pub mod spec;
