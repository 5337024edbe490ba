//! A passport's `allowed_domains` or `blocked_domains`, indexed: a host is
//! looked up by itself and by each parent it has (`a.b.example.com`:
//! `b.example.com`, `example.com`, `com`), so the cost of a check is the
//! host's number of labels, not the list's length (issue 28). The first
//! listed entry that matches is the one reported, as in a scan.

use std::collections::HashMap;

/// Domain entries in the order given.
#[derive(Debug, Default)]
pub struct DomainList {
    /// As given, for messages.
    entries: Vec<String>,
    /// Plain entries (`example.com`), normalised, at their first position.
    names: HashMap<String, usize>,
    /// Wildcard entries (`*.example.com`) by their parent, at their first position.
    parents: HashMap<String, usize>,
    /// Whether a plain entry also covers its subdomains (blocked lists do).
    subdomains_too: bool,
}

impl DomainList {
    /// `example.com` matches itself; `*.example.com` its subdomains; with
    /// `subdomains_too`, a plain entry also matches its subdomains.
    pub fn new(entries: &[String], subdomains_too: bool) -> DomainList {
        let mut names = HashMap::new();
        let mut parents = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let entry = normalise(entry);
            match entry.strip_prefix("*.") {
                Some(parent) => parents.entry(parent.to_string()).or_insert(i),
                None => names.entry(entry).or_insert(i),
            };
        }
        DomainList {
            entries: entries.to_vec(),
            names,
            parents,
            subdomains_too,
        }
    }

    /// The first entry, as given, that matches `domain` (lower-case, no
    /// trailing dot).
    pub fn first(&self, domain: &str) -> Option<&str> {
        let mut first = self.names.get(domain).copied();
        // A parent needs at least one character before its dot.
        for (dot, _) in domain.match_indices('.').filter(|(dot, _)| *dot > 0) {
            let parent = &domain[dot + 1..];
            let plain = self.names.get(parent).filter(|_| self.subdomains_too);
            for &i in [self.parents.get(parent), plain].into_iter().flatten() {
                first = Some(first.map_or(i, |f| f.min(i)));
            }
        }
        first.map(|i| self.entries[i].as_str())
    }
}

/// An entry in the form domains are compared in.
fn normalise(entry: &str) -> String {
    entry.trim().trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The straightforward test the index stands for.
    fn matches(domain: &str, entry: &str, subdomains_too: bool) -> bool {
        let entry = normalise(entry);
        if let Some(parent) = entry.strip_prefix("*.") {
            return domain.len() > parent.len() + 1
                && domain.ends_with(parent)
                && domain.as_bytes()[domain.len() - parent.len() - 1] == b'.';
        }
        domain == entry
            || (subdomains_too
                && domain.len() > entry.len() + 1
                && domain.ends_with(&entry)
                && domain.as_bytes()[domain.len() - entry.len() - 1] == b'.')
    }

    const LABELS: &[&str] = &["", "a", "b", "ab", "A", "*", " ", "é"];

    fn name() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(LABELS), 1..5).prop_map(|l| l.join("."))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn the_indexed_list_finds_the_first_entry_the_scan_finds(
            entries in prop::collection::vec(name(), 0..8),
            domains in prop::collection::vec(name(), 1..6),
            subdomains_too in any::<bool>(),
        ) {
            let list = DomainList::new(&entries, subdomains_too);
            for domain in &domains {
                // Hosts reach the list lower-cased, without a trailing dot.
                let domain = domain.trim_end_matches('.').to_ascii_lowercase();
                let scanned = entries
                    .iter()
                    .find(|e| matches(&domain, e, subdomains_too))
                    .map(String::as_str);
                prop_assert_eq!(list.first(&domain), scanned, "{}", domain);
            }
        }
    }

    #[test]
    fn a_wildcard_covers_subdomains_only_and_a_blocked_name_covers_both() {
        let entries = ["*.Example.com.".to_string(), "example.org".to_string()];
        let allowed = DomainList::new(&entries, false);
        assert_eq!(allowed.first("a.example.com"), Some("*.Example.com."));
        assert_eq!(allowed.first("example.com"), None);
        assert_eq!(allowed.first("a.example.org"), None);
        assert_eq!(allowed.first("example.org"), Some("example.org"));
        let blocked = DomainList::new(&entries, true);
        assert_eq!(blocked.first("a.b.example.org"), Some("example.org"));
        assert_eq!(blocked.first("badexample.org"), None);
    }

    #[test]
    fn the_first_listed_entry_is_reported_when_several_match() {
        let entries = ["b.c".to_string(), "*.c".to_string(), "a.b.c".to_string()];
        assert_eq!(DomainList::new(&entries, true).first("a.b.c"), Some("b.c"));
        assert_eq!(DomainList::new(&entries, false).first("a.b.c"), Some("*.c"));
    }
}
