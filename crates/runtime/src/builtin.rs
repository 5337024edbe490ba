//! Components that ship inside the program embedding Warden, so that a config
//! can say `wasm: builtin:<name>` and run anywhere. The runtime only knows
//! their shape; the embedder (the `warden` facade, with its
//! `shipped-providers` feature) says which there are.

/// A component embedded in the program.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// The name after `builtin:`.
    pub name: &'static str,
    /// One line on what it does, for `warden providers`.
    pub description: &'static str,
    /// The component's bytes.
    pub bytes: &'static [u8],
}

/// The component of `name` among `builtins`.
pub fn component(builtins: &[Builtin], name: &str) -> Option<&'static [u8]> {
    builtins.iter().find(|b| b.name == name).map(|b| b.bytes)
}

/// The names of `builtins`, for messages.
pub fn names(builtins: &[Builtin]) -> Vec<&'static str> {
    builtins.iter().map(|b| b.name).collect()
}
