//! The shipped providers, built from `plugins/` and embedded in the program
//! (the `shipped-providers` feature, on by default), so that a config can say
//! `wasm: builtin:allowlist` and the demo runs anywhere.

use warden_runtime::builtin::Builtin;

#[cfg(feature = "shipped-providers")]
macro_rules! guest {
    ($file:literal) => {
        include_bytes!(concat!(env!("WARDEN_GUEST_DIR"), "/", $file))
    };
}

/// Every shipped provider.
#[cfg(feature = "shipped-providers")]
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "allowlist",
        description: "DeerFlow's AllowlistProvider: allowed_tools / denied_tools",
        bytes: guest!("allowlist.wasm"),
    },
    Builtin {
        name: "rules",
        description: "an ordered, prioritised rule list over request fields (eq, ne, in, contains, glob, matches)",
        bytes: guest!("rules.wasm"),
    },
    Builtin {
        name: "oap-passport",
        description: "Open Agent Passport (oap/1.0): capabilities and limits of a passport",
        bytes: guest!("oap_passport.wasm"),
    },
];

/// Every shipped provider: none, without the `shipped-providers` feature.
#[cfg(not(feature = "shipped-providers"))]
pub const BUILTINS: &[Builtin] = &[];
