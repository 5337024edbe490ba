//! Where relative and home paths point, for judging the paths a command names.

use crate::path::{canonicalize, comparison_form};

/// Where relative and home paths point: the caller's home and working
/// directory. Without them, `~` and `$HOME` are the home whatever it is, and a
/// relative path is not a system directory.
#[derive(Clone, Copy, Debug, Default)]
pub struct Places<'a> {
    /// The caller's home directory, for `~` and `$HOME`.
    pub home: Option<&'a str>,
    /// The working directory relative paths resolve against.
    pub cwd: Option<&'a str>,
}

impl Places<'_> {
    /// A path in canonical comparison form.
    pub(super) fn resolve(&self, raw: &str) -> String {
        // Without a home, `$HOME` is `~`, which stays as it is.
        comparison_form(&canonicalize(raw, self.cwd, Some(self.home.unwrap_or("~"))))
    }

    /// Whether a canonical path is the home directory.
    pub(super) fn is_home(&self, path: &str) -> bool {
        path == "~"
            || self
                .home
                .is_some_and(|h| comparison_form(&canonicalize(h, None, None)) == path)
    }
}
