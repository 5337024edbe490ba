//! A list of directories, indexed: which of them a path is, or is inside, in
//! time of the path's depth rather than the list's length (the OAP provider's
//! `allowed_paths` and `blocked_paths`, issue 28).

use std::collections::HashMap;

/// Directories in the order given.
#[derive(Clone, Debug, Default)]
pub struct DirList {
    dirs: Vec<String>,
    /// Each directory's first position in the list.
    first: HashMap<String, usize>,
}

impl DirList {
    /// Indexes `dirs`, which the caller has put in the form paths are compared in.
    pub fn new(dirs: Vec<String>) -> DirList {
        let mut first = HashMap::with_capacity(dirs.len());
        for (i, dir) in dirs.iter().enumerate() {
            first.entry(dir.clone()).or_insert(i);
        }
        DirList { dirs, first }
    }

    /// The first directory of the list that `path` is or is inside, as
    /// [`under`] says.
    pub fn containing(&self, path: &str) -> Option<&str> {
        // The directories `path` is under are `/`, `path` itself, and each
        // prefix of it that a `/` follows.
        let prefixes = path.match_indices('/').map(|(slash, _)| &path[..slash]);
        ["/", path]
            .into_iter()
            .chain(prefixes)
            .filter_map(|dir| self.first.get(dir).copied())
            .min()
            .map(|i| self.dirs[i].as_str())
    }

    /// Whether the list holds no directory.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }
}

/// `path` is `dir` or inside it.
pub fn under(path: &str, dir: &str) -> bool {
    dir == "/"
        || path == dir
        || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn a_path() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(&["", "a", "b", "ab", "/"][..]), 0..6)
            .prop_map(|parts| parts.join("/"))
    }

    proptest! {
        #[test]
        fn the_indexed_list_finds_the_first_directory_the_scan_finds(
            dirs in prop::collection::vec(a_path(), 0..8),
            paths in prop::collection::vec(a_path(), 1..8),
        ) {
            let list = DirList::new(dirs.clone());
            for path in &paths {
                let scanned = dirs.iter().find(|d| under(path, d)).map(String::as_str);
                prop_assert_eq!(list.containing(path), scanned, "{}", path);
            }
        }
    }

    #[test]
    fn a_path_is_under_itself_its_parents_and_the_root() {
        let list = DirList::new(vec!["/srv/b".into(), "/srv".into(), "/".into()]);
        assert_eq!(list.containing("/srv/b/c"), Some("/srv/b"));
        assert_eq!(list.containing("/srv/bc"), Some("/srv"));
        assert_eq!(list.containing("/etc"), Some("/"));
        assert_eq!(DirList::new(vec!["/srv".into()]).containing("/srvx"), None);
    }
}
