//! System files: anything written, removed or moved under the system's
//! directories ([`Effect::SystemFile`](super::Effect::SystemFile)).

/// Directories (canonical) where only the package manager and the
/// administrator write.
const DIRS: &[&str] = &[
    "/etc", "/boot", "/usr", "/var/lib", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
];

pub(super) fn is_system_file(path: &str) -> bool {
    DIRS.iter().any(|d| {
        path.strip_prefix(d)
            .is_some_and(|r| r.starts_with('/') && r.len() > 1)
    })
}
