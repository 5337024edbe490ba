//! An index over one list of rules (deny, ask or allow), so that a call is
//! checked only against the rules that can match it: rules on a whole tool by
//! kind, name and MCP server; command patterns by a literal text every
//! command they match contains, found by one multi-pattern search; domains by
//! name and by parent; path globs by the literal directory they start with.
//! The index only narrows: each candidate is then checked by the rule itself,
//! in the list's order, so the rule that decides is the one the
//! straightforward scan finds.

use std::collections::HashMap;

use aho_corasick::AhoCorasick;

use super::rule::{PathPattern, Rule, Specifier, ToolPattern, under};
use crate::canonical::CanonicalCall;
use crate::tools::ToolKind;

/// Positions of rules in their list.
type Positions = Vec<u32>;

#[derive(Clone, Debug, Default)]
pub(super) struct ListIndex {
    /// Rules on a whole tool (no specifier), by what they name.
    whole_by_kind: HashMap<ToolKind, Positions>,
    whole_by_name: HashMap<String, Positions>,
    whole_by_server: HashMap<String, Positions>,
    /// Command patterns by the literal they are filed under (one of the
    /// texts between their `*`s), and those with none: tried on every command.
    command_literals: Option<AhoCorasick>,
    command_holders: Vec<Positions>,
    command_always: Positions,
    /// `domain:example.com` by the name, `domain:*.example.com` by the parent.
    domains: HashMap<String, Positions>,
    subdomains: HashMap<String, Positions>,
    /// Path globs by anchor and by the literal directory every match starts
    /// with (`/etc/ssh/` for `/etc/ssh/*.conf`, empty for `*.rs`).
    root_paths: HashMap<String, Positions>,
    home_paths: HashMap<String, Positions>,
    cwd_paths: HashMap<String, Positions>,
}

impl ListIndex {
    /// Indexes a list; fails only when the command patterns' literals are
    /// too many to search together.
    pub(super) fn new(rules: &[Rule]) -> Result<ListIndex, String> {
        let mut index = ListIndex::default();
        let mut patterns: Vec<(u32, &str)> = Vec::new();
        for (position, rule) in rules.iter().enumerate() {
            let position = position as u32;
            let push = |map: &mut HashMap<String, Positions>, key: &str| {
                map.entry(key.to_string()).or_default().push(position)
            };
            match &rule.spec {
                Specifier::Any => match &rule.tool {
                    ToolPattern::Kind(kind) => {
                        index.whole_by_kind.entry(*kind).or_default().push(position)
                    }
                    ToolPattern::Name(name) => push(&mut index.whole_by_name, name),
                    ToolPattern::Mcp { server, .. } => push(&mut index.whole_by_server, server),
                },
                Specifier::Command(pattern) => patterns.push((position, pattern)),
                Specifier::Domain(domain) => match domain.strip_prefix("*.") {
                    Some(parent) => push(&mut index.subdomains, parent),
                    None => push(&mut index.domains, domain),
                },
                Specifier::Path(pattern) => {
                    let (map, glob) = match pattern {
                        PathPattern::Root(glob) => (&mut index.root_paths, glob),
                        PathPattern::Home(glob) => (&mut index.home_paths, glob),
                        PathPattern::Cwd(glob) => (&mut index.cwd_paths, glob),
                    };
                    push(map, literal_directory(glob.as_str()));
                }
            }
        }
        index.index_commands(&patterns)?;
        Ok(index)
    }

    /// Files each command pattern under the literal of its own that the
    /// fewest patterns of the list share (the longer on a tie): 5,000 rules
    /// that all start `git ` are told apart by what else they say.
    fn index_commands(&mut self, patterns: &[(u32, &str)]) -> Result<(), String> {
        let mut shared: HashMap<&str, usize> = HashMap::new();
        for (_, pattern) in patterns {
            let mut mine = required_literals(pattern);
            mine.sort_unstable();
            mine.dedup();
            for literal in mine {
                *shared.entry(literal).or_default() += 1;
            }
        }
        let mut texts: Vec<&str> = Vec::new();
        let mut known: HashMap<&str, usize> = HashMap::new();
        for &(position, pattern) in patterns {
            let chosen = required_literals(pattern)
                .into_iter()
                .min_by_key(|l| (shared[l], std::cmp::Reverse(l.len())));
            let Some(literal) = chosen else {
                self.command_always.push(position);
                continue;
            };
            let at = *known.entry(literal).or_insert_with(|| {
                texts.push(literal);
                self.command_holders.push(Positions::new());
                texts.len() - 1
            });
            self.command_holders[at].push(position);
        }
        if !texts.is_empty() {
            // Standard semantics: every occurrence, overlapping.
            let matcher = AhoCorasick::new(&texts)
                .map_err(|e| format!("the command patterns are too many to index: {e}"))?;
            self.command_literals = Some(matcher);
        }
        Ok(())
    }

    /// The rules on a whole tool that may cover the call's tool, in list order.
    pub(super) fn whole(&self, call: &CanonicalCall) -> Positions {
        let mut found = Positions::new();
        extend(&mut found, self.whole_by_kind.get(&call.kind));
        extend(&mut found, self.whole_by_name.get(&call.tool));
        if let Some((server, _)) = &call.mcp {
            extend(&mut found, self.whole_by_server.get(server));
        }
        sorted(found)
    }

    /// The rules whose command pattern may match `command`, in list order.
    pub(super) fn command(&self, command: &str) -> Positions {
        let mut found = self.command_always.clone();
        if let Some(literals) = &self.command_literals {
            for hit in literals.find_overlapping_iter(command) {
                found.extend_from_slice(&self.command_holders[hit.pattern().as_usize()]);
            }
        }
        sorted(found)
    }

    /// The rules whose domain pattern may match `domain`, in list order.
    pub(super) fn domain(&self, domain: &str) -> Positions {
        let mut found = Positions::new();
        extend(&mut found, self.domains.get(domain));
        // `*.parent` needs at least one label before the parent.
        for (dot, _) in domain.match_indices('.').filter(|(dot, _)| *dot > 0) {
            extend(&mut found, self.subdomains.get(&domain[dot + 1..]));
        }
        sorted(found)
    }

    /// The rules whose path glob may match `path` (comparison form), in list order.
    pub(super) fn path(&self, call: &CanonicalCall, path: &str) -> Positions {
        let mut found = Positions::new();
        by_directory(&mut found, &self.root_paths, path);
        if !self.home_paths.is_empty()
            && let Some(rest) = under(path, call.home_key())
        {
            by_directory(&mut found, &self.home_paths, rest);
        }
        if !self.cwd_paths.is_empty()
            && let Some(rest) = under(path, call.cwd_key())
        {
            by_directory(&mut found, &self.cwd_paths, rest);
        }
        sorted(found)
    }
}

fn extend(found: &mut Positions, positions: Option<&Positions>) {
    if let Some(positions) = positions {
        found.extend_from_slice(positions);
    }
}

fn sorted(mut found: Positions) -> Positions {
    found.sort_unstable();
    found.dedup();
    found
}

/// Looks `text` up under every literal directory it starts with: the empty
/// one, then each prefix ending in `/`.
fn by_directory(found: &mut Positions, map: &HashMap<String, Positions>, text: &str) {
    if map.is_empty() {
        return;
    }
    extend(found, map.get(""));
    for (slash, _) in text.match_indices('/') {
        extend(found, map.get(&text[..=slash]));
    }
}

/// The literal text up to the last `/` before a glob's first special
/// character: every path the glob matches starts with it.
fn literal_directory(glob: &str) -> &str {
    let literal = glob
        .find(['*', '?', '[', '{', '\\'])
        .map_or(glob, |end| &glob[..end]);
    literal.rfind('/').map_or("", |slash| &literal[..=slash])
}

/// The texts between a command pattern's `*`s: every command it matches
/// contains each of them. A pattern ending in ` *` also matches the command
/// without it, so its texts are those of the pattern without it.
fn required_literals(pattern: &str) -> Vec<&str> {
    let body = pattern.strip_suffix(" *").unwrap_or(pattern);
    body.split('*').filter(|l| !l.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_is_filed_under_the_literal_directory_it_starts_with() {
        assert_eq!(literal_directory("/etc/ssh/*.conf"), "/etc/ssh/");
        assert_eq!(literal_directory("/etc/passwd"), "/etc/");
        assert_eq!(literal_directory("*.rs"), "");
        assert_eq!(literal_directory("src/**"), "src/");
        assert_eq!(literal_directory("a/b{c,d}/e"), "a/");
    }

    #[test]
    fn a_command_pattern_requires_the_texts_between_its_stars() {
        assert_eq!(required_literals("git push *"), ["git push"]);
        assert_eq!(required_literals("git * --force*"), ["git ", " --force"]);
        assert_eq!(required_literals("*"), Vec::<&str>::new());
        assert_eq!(required_literals("ls"), ["ls"]);
    }

    #[test]
    fn a_command_pattern_is_filed_under_its_least_shared_literal() {
        let rules: Vec<Rule> = ["Bash(git * --a)", "Bash(git * --b)", "Bash(git status)"]
            .iter()
            .map(|r| Rule::parse(r).unwrap())
            .collect();
        let index = ListIndex::new(&rules).unwrap();
        assert_eq!(index.command("git log --b"), [1]);
        assert_eq!(index.command("git status"), [2]);
        assert!(index.command("git log").is_empty());
    }
}
