//! The shipped providers, built from `plugins/` and embedded in the binary, so
//! that a config can say `wasm: builtin:allowlist` and the demo runs anywhere.

/// A shipped provider component.
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    pub bytes: &'static [u8],
}

macro_rules! guest {
    ($file:literal) => {
        include_bytes!(concat!(env!("WARDEN_GUEST_DIR"), "/", $file))
    };
}

/// Every shipped provider.
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

/// The component of a shipped provider.
pub fn component(name: &str) -> Option<&'static [u8]> {
    BUILTINS.iter().find(|b| b.name == name).map(|b| b.bytes)
}

/// The names of the shipped providers.
pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|b| b.name).collect()
}
