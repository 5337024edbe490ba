//! A list of globs, indexed: the first of them that matches a call, found by
//! one multi-pattern search for the literal each glob requires, so that only
//! the few globs sharing a literal with the text are tried rather than every
//! one (the OAP provider's file `blocked_patterns`, issue 28).

use aho_corasick::AhoCorasick;
use std::collections::HashMap;

use crate::glob::Glob;

/// Globs in the order given, each matched against one of several texts (its
/// subject: a path, or its file name), named by position.
#[derive(Clone, Debug, Default)]
pub struct GlobList {
    globs: Vec<(Glob, usize)>,
    /// The globs that see the same text in the same form, searched together.
    groups: Vec<Group>,
}

#[derive(Clone, Debug)]
struct Group {
    subject: usize,
    /// A glob of the group: the form in which the group sees its text.
    sample: usize,
    /// The required literals of the group's globs, deduplicated, and for
    /// each the globs (by position in the list) that require it.
    literals: Option<AhoCorasick>,
    holders: Vec<Vec<usize>>,
    /// The globs that require no literal: tried on every text.
    always: Vec<usize>,
}

impl GlobList {
    /// Indexes `globs`, each with the position of the text it is matched
    /// against among those [`GlobList::first`] is given.
    pub fn new(globs: Vec<(Glob, usize)>) -> GlobList {
        let mut members: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        for (i, (glob, subject)) in globs.iter().enumerate() {
            match members
                .iter_mut()
                .find(|(s, sample, _)| *s == *subject && globs[*sample].0.same_subject(glob))
            {
                Some((_, _, list)) => list.push(i),
                None => members.push((*subject, i, vec![i])),
            }
        }
        let groups = members
            .into_iter()
            .map(|(subject, sample, list)| {
                let mut texts: Vec<&[u8]> = Vec::new();
                let mut known: HashMap<&[u8], usize> = HashMap::new();
                let mut holders: Vec<Vec<usize>> = Vec::new();
                let mut always = Vec::new();
                for i in list {
                    let literal = globs[i].0.required_literal();
                    if literal.is_empty() {
                        always.push(i);
                    } else if let Some(&k) = known.get(literal) {
                        holders[k].push(i);
                    } else {
                        known.insert(literal, texts.len());
                        texts.push(literal);
                        holders.push(vec![i]);
                    }
                }
                // Standard match semantics: every occurrence, overlapping.
                let literals = (!texts.is_empty()).then(|| {
                    AhoCorasick::new(&texts).expect("literals of checked globs build a matcher")
                });
                Group {
                    subject,
                    sample,
                    literals,
                    holders,
                    always,
                }
            })
            .collect();
        GlobList { globs, groups }
    }

    /// The position of the first glob of the list that matches its text:
    /// `texts[subject]`. A subject past the end of `texts` matches nothing.
    pub fn first(&self, texts: &[&str]) -> Option<usize> {
        let mut candidates = Vec::new();
        for group in &self.groups {
            let Some(text) = texts.get(group.subject) else {
                continue;
            };
            candidates.extend_from_slice(&group.always);
            if let Some(literals) = &group.literals {
                let subject = self.globs[group.sample].0.subject(text);
                for found in literals.find_overlapping_iter(&*subject) {
                    candidates.extend_from_slice(&group.holders[found.pattern().as_usize()]);
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        candidates.into_iter().find(|&i| {
            let (glob, subject) = &self.globs[i];
            glob.matches(texts[*subject])
        })
    }

    /// Whether the list holds no glob.
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Patterns and texts over a small alphabet, wildcards, classes, braces
    /// and escapes included, so that literals collide and overlap.
    fn a_pattern() -> impl Strategy<Value = String> {
        let pieces = &[
            "a", "b", "A", "ab", "/", ".", "*", "**", "?", "[ab]", "[!a]", "{a,b}", "\\*", ",",
            "é", "É",
        ][..];
        prop::collection::vec(prop::sample::select(pieces), 1..6).prop_map(|p| p.concat())
    }

    fn a_text() -> impl Strategy<Value = String> {
        let pieces = &["a", "b", "A", "B", "/", ".", "*", ",", "é", "É", "ab/"][..];
        prop::collection::vec(prop::sample::select(pieces), 0..8).prop_map(|p| p.concat())
    }

    fn a_glob() -> impl Strategy<Value = Option<(Glob, usize)>> {
        (a_pattern(), 0..3u8, 0..2usize).prop_map(|(pattern, mode, subject)| {
            let glob = match mode {
                0 => Glob::new(&pattern),
                1 => Glob::case_insensitive(&pattern),
                _ => Glob::name(&pattern),
            };
            glob.ok().map(|g| (g, subject))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn the_indexed_list_finds_the_first_glob_the_scan_finds(
            globs in prop::collection::vec(a_glob(), 0..10),
            texts in prop::collection::vec((a_text(), a_text()), 1..6),
        ) {
            let globs: Vec<(Glob, usize)> = globs.into_iter().flatten().collect();
            let list = GlobList::new(globs.clone());
            for (path, name) in &texts {
                let subjects = [path.as_str(), name.as_str()];
                let scanned = globs.iter().position(|(g, s)| g.matches(subjects[*s]));
                prop_assert_eq!(list.first(&subjects), scanned, "{:?}", subjects);
            }
        }
    }

    #[test]
    fn the_first_listed_glob_is_reported_when_several_match() {
        let list = GlobList::new(vec![
            (Glob::case_insensitive("*.KEY").unwrap(), 1),
            (Glob::case_insensitive("/srv/**").unwrap(), 0),
            (Glob::case_insensitive("id_*").unwrap(), 1),
        ]);
        assert_eq!(list.first(&["/srv/id_rsa.key", "id_rsa.key"]), Some(0));
        assert_eq!(list.first(&["/srv/id_rsa", "id_rsa"]), Some(1));
        assert_eq!(list.first(&["/home/id_rsa", "id_rsa"]), Some(2));
        assert_eq!(list.first(&["/home/notes", "notes"]), None);
    }

    #[test]
    fn a_glob_without_a_literal_is_tried_on_every_text() {
        let list = GlobList::new(vec![(Glob::new("*").unwrap(), 0)]);
        assert_eq!(list.first(&["anything"]), Some(0));
    }

    #[test]
    fn the_required_literal_skips_what_may_not_be_literal() {
        let literal = |p: &str| Glob::new(p).unwrap().required_literal().to_vec();
        assert_eq!(literal("**/secrets/*.pem"), b"secrets");
        assert_eq!(literal("*.{pem,key}"), b".");
        assert_eq!(literal("[ab]cdef"), b"");
        assert_eq!(literal("x\\*yz"), b"x");
        assert_eq!(literal("*"), b"");
    }
}
