//! The integration tests of the test kit: the layout of the workspace itself
//! (which crate may depend on which, and no `use` cycle), in one binary.

mod dependencies;
mod layout;
