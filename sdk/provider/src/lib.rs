//! Write a Warden guardrail provider in Rust.
//!
//! A provider is a WebAssembly component that gives an opinion (allow, ask or
//! deny) on an AI agent's tool call before it runs. With this crate you write
//! one type that implements [`Provider`], export it with [`export!`], and build
//! the crate for `wasm32-wasip2`:
//!
//! ```
//! use serde::Deserialize;
//! use warden_provider::{Call, ConfigError, Decision, Provider};
//!
//! /// The operator's configuration, parsed by the SDK before `configure`.
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct Config {
//!     blocked_tools: Vec<String>,
//! }
//!
//! struct Blocklist {
//!     blocked: Vec<String>,
//! }
//!
//! impl Provider for Blocklist {
//!     const NAME: &'static str = "blocklist";
//!     type Config = Config;
//!
//!     fn configure(config: Config) -> Result<Self, ConfigError> {
//!         Ok(Blocklist { blocked: config.blocked_tools })
//!     }
//!
//!     fn evaluate(&self, call: &Call) -> Decision {
//!         if self.blocked.iter().any(|t| t == call.tool_name()) {
//!             return Decision::deny("blocklist.blocked", format!("tool '{}' is blocked", call.tool_name()));
//!         }
//!         Decision::allow()
//!     }
//! }
//!
//! warden_provider::export!(Blocklist);
//! # fn main() {
//! # let p: Blocklist = warden_provider::configure_json(r#"{"blocked_tools": ["rm"]}"#).unwrap();
//! # assert_eq!(p.evaluate(&Call::new("rm", serde_json::json!({}))).verdict, warden_provider::Verdict::Deny);
//! # }
//! ```
//!
//! The SDK parses the operator's configuration into your `Config` type (an
//! error names the field: `blocked_tools[2]: invalid type: integer...`), keeps
//! the configured provider for the life of the instance, hands every call to
//! [`Provider::evaluate`] as a [`Call`] with typed helpers ([`Call::arg_str`],
//! [`Call::get`] with a [`JsonPath`], [`Call::role_tool_key`], the host's shell
//! analysis with [`Call::shell`] (each command's operands, its options with
//! their values: [`analysis::shell::Command::options`],
//! [`analysis::shell::takes_value`]), the hosts it would contact with
//! [`Call::contacts`], [`Call::path_arg`] canonicalised, [`Glob`]
//! patterns), and turns
//! your [`Decision`] into the contract's. Everything but the export works on
//! the native target too, so providers are unit-tested with a plain `cargo test`.
//!
//! The provider's name is [`Provider::NAME`]; its version is your crate's.

#![deny(missing_docs)]

// The generated bindings name the runtime by an absolute path that must also
// resolve inside this crate.
extern crate self as warden_provider;

mod call;
mod config;
mod decision;
mod path;

pub use call::{Call, InteractionMode};
pub use config::{ConfigError, configure_json};
pub use decision::{Decision, Reason, Verdict, codes};
pub use path::{JsonPath, PathError};
pub use serde_json::{Map, Value, json};
/// The host's own shell, path and glob analysis (crate `warden-analysis`), so
/// that a provider sees a command or a path exactly as the host does.
pub use warden_analysis as analysis;
pub use warden_analysis::glob::{Glob, GlobError};

/// A guardrail provider.
///
/// The host creates instances of your component, calls [`Provider::configure`]
/// once per instance with the operator's configuration, and then
/// [`Provider::evaluate`] once per tool call, possibly many times on the same
/// instance. A panic traps the instance: the host throws it away and denies the
/// call (`warden.trap`), so panic only where a bug leaves no sensible answer.
pub trait Provider: Sized + 'static {
    /// The provider's name, as the host reports it (`warden check`, audit).
    const NAME: &'static str;

    /// The configuration the operator gives under `config:`, parsed from JSON
    /// with serde. Use `#[serde(deny_unknown_fields)]` so that a misspelt key
    /// is an error rather than a silently ignored setting.
    type Config: serde::de::DeserializeOwned;

    /// Checks the configuration and builds the provider. Compile what you can
    /// here (patterns, lookup sets): `evaluate` runs on every tool call. An
    /// error makes the host deny every call with `warden.configure_failed`.
    fn configure(config: Self::Config) -> Result<Self, ConfigError>;

    /// Judges one tool call.
    fn evaluate(&self, call: &Call) -> Decision;
}

/// The bindings wit-bindgen generates from the contract in `wit/`; used by
/// [`export!`], not meant to be used directly.
#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "wit",
        world: "guardrail-provider",
        pub_export_macro: true,
        export_macro_name: "__export_world",
        runtime_path: "::warden_provider::__private::wit_bindgen::rt",
    });
}

/// What [`export!`] expands to; not part of the API.
#[doc(hidden)]
pub mod __private {
    use std::cell::RefCell;

    pub use wit_bindgen;

    use crate::bindings::warden::guardrail::types as wit;
    use crate::{Call, Decision, Provider, configure_json};

    /// The reason code of a call that reached a provider before `configure`.
    const NOT_CONFIGURED: &str = "provider.not_configured";

    /// The configured provider of this instance. A component instance is
    /// single-threaded, so a thread-local is the instance's state.
    pub struct State<P> {
        provider: RefCell<Option<P>>,
    }

    impl<P: Provider> State<P> {
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            State {
                provider: RefCell::new(None),
            }
        }

        pub fn configure(&self, config: &str) -> Result<(), String> {
            // A failed configure leaves the instance unconfigured: it denies.
            *self.provider.borrow_mut() = None;
            let provider = configure_json::<P>(config).map_err(|err| err.to_string())?;
            *self.provider.borrow_mut() = Some(provider);
            Ok(())
        }

        pub fn evaluate(&self, call: wit::ToolCall) -> wit::Decision {
            let call = Call::from(call);
            let decision = match &*self.provider.borrow() {
                Some(provider) => provider.evaluate(&call),
                None => Decision::deny(NOT_CONFIGURED, "the provider was not configured"),
            };
            decision.into()
        }
    }

    /// The contract the bindings were generated from, as the manifest names it.
    pub const CONTRACT: &str = "warden:guardrail@0.1.0";

    /// The `warden:manifest` section [`export!`](crate::export) writes, as
    /// JSON: `(bytes, length)`, built at compile time. Call it with `N = 0`
    /// for the length, then with that length for the bytes. `schema` is
    /// JSON text, copied as it is (the host parses and checks it at load).
    pub const fn manifest<const N: usize>(
        name: &str,
        version: &str,
        schema: Option<&str>,
    ) -> ([u8; N], usize) {
        let mut out = [0u8; N];
        let mut len = put(&mut out, 0, b"{\"name\":");
        len = put_string(&mut out, len, name.as_bytes());
        len = put(&mut out, len, b",\"version\":");
        len = put_string(&mut out, len, version.as_bytes());
        len = put(&mut out, len, b",\"contract\":");
        len = put_string(&mut out, len, CONTRACT.as_bytes());
        if let Some(schema) = schema {
            len = put(&mut out, len, b",\"config_schema\":");
            len = put(&mut out, len, schema.as_bytes());
        }
        len = put(&mut out, len, b"}");
        (out, len)
    }

    /// Writes `bytes` at `len` (as far as `out` reaches); the new length.
    const fn put<const N: usize>(out: &mut [u8; N], mut len: usize, bytes: &[u8]) -> usize {
        let mut i = 0;
        while i < bytes.len() {
            if len < N {
                out[len] = bytes[i];
            }
            len += 1;
            i += 1;
        }
        len
    }

    /// Writes `text` as a JSON string.
    const fn put_string<const N: usize>(out: &mut [u8; N], len: usize, text: &[u8]) -> usize {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut len = put(out, len, b"\"");
        let mut i = 0;
        while i < text.len() {
            let b = text[i];
            len = match b {
                b'"' => put(out, len, b"\\\""),
                b'\\' => put(out, len, b"\\\\"),
                0..0x20 => put(
                    out,
                    len,
                    &[
                        b'\\',
                        b'u',
                        b'0',
                        b'0',
                        HEX[(b >> 4) as usize],
                        HEX[(b & 15) as usize],
                    ],
                ),
                _ => put(out, len, &[b]),
            };
            i += 1;
        }
        put(out, len, b"\"")
    }

    pub fn info<P: Provider>(version: &str) -> wit::ProviderInfo {
        wit::ProviderInfo {
            name: P::NAME.to_string(),
            version: version.to_string(),
        }
    }
}

/// Exports a [`Provider`] as the component's `warden:guardrail/provider`,
/// with its manifest.
///
/// Call it once, at the top level of your crate (a `cdylib`). The provider's
/// version is your crate's `version` from `Cargo.toml`.
///
/// The component carries a manifest (a `warden:manifest` custom section:
/// the provider's name, version and contract, which `warden inspect` shows).
/// Give the JSON Schema of your config and Warden checks an operator's
/// `config:` against it at load, refusing a config that breaks it with the
/// field's JSON pointer:
///
/// ```ignore
/// warden_provider::export!(Blocklist, config_schema = include_str!("../config.schema.json"));
/// ```
#[macro_export]
macro_rules! export {
    (@export $provider:ty, $schema:expr) => {
        const _: () = {
            struct WardenExport;

            ::std::thread_local! {
                static STATE: $crate::__private::State<$provider> =
                    const { $crate::__private::State::new() };
            }

            const MANIFEST_LEN: usize = $crate::__private::manifest::<0>(
                <$provider as $crate::Provider>::NAME,
                ::core::env!("CARGO_PKG_VERSION"),
                $schema,
            )
            .1;

            // The manifest, as a custom section of the component's core module.
            #[cfg(target_arch = "wasm32")]
            #[unsafe(link_section = "warden:manifest")]
            #[used]
            static MANIFEST: [u8; MANIFEST_LEN] = $crate::__private::manifest::<MANIFEST_LEN>(
                <$provider as $crate::Provider>::NAME,
                ::core::env!("CARGO_PKG_VERSION"),
                $schema,
            )
            .0;

            impl $crate::bindings::exports::warden::guardrail::provider::Guest for WardenExport {
                fn info() -> $crate::bindings::warden::guardrail::types::ProviderInfo {
                    $crate::__private::info::<$provider>(::core::env!("CARGO_PKG_VERSION"))
                }

                fn configure(
                    config: ::std::string::String,
                ) -> ::core::result::Result<(), ::std::string::String> {
                    STATE.with(|state| state.configure(&config))
                }

                fn evaluate(
                    call: $crate::bindings::warden::guardrail::types::ToolCall,
                ) -> $crate::bindings::warden::guardrail::types::Decision {
                    STATE.with(|state| state.evaluate(call))
                }
            }

    $crate::bindings::__export_world!(WardenExport with_types_in $crate::bindings);
        };
    };
    ($provider:ty, config_schema = $schema:expr $(,)?) => {
        $crate::export!(@export $provider, ::core::option::Option::Some($schema));
    };
    ($provider:ty $(,)?) => {
        $crate::export!(@export $provider, ::core::option::Option::None);
    };
}
