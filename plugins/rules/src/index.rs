//! The policy's index: each rule is filed under one of its conditions, by the
//! field it tests, so that a call is checked only against the rules that can
//! match it. `eq` and `in` values go into a table per field; `contains`
//! texts, the longest text every match of a glob holds (its literal prefix,
//! or a longer run between wildcards) and the literals every match of a regex
//! starts (or ends) with go into one multi-pattern matcher per field, so that
//! rules sharing their first word are told apart by what else they say. A
//! regex with no such literal (`[0-9]{4}`) goes into one regex set per field,
//! compiled when the policy is loaded. A rule with no such condition (only
//! `ne`, a glob with no literal text, or none) is checked on every call. The
//! index only narrows: the candidates are then checked whole, in the policy's
//! order.

use std::collections::HashMap;

use aho_corasick::AhoCorasick;
use regex::{RegexBuilder, RegexSet, RegexSetBuilder};
use warden_provider::Call;

use crate::condition::{Condition, Field, Key, REGEX_SIZE_LIMIT};

/// Positions of rules in the policy's order.
type Positions = Vec<u32>;

#[derive(Debug, Default)]
pub struct Index {
    fields: Vec<Tables>,
    /// Rules no table lists: candidates for every call.
    always: Positions,
}

/// One field's tables.
#[derive(Debug)]
struct Tables {
    field: Field,
    equals: HashMap<String, Positions>,
    /// Distinct texts and the rules filed under each.
    texts: Vec<Vec<u8>>,
    text_rules: Vec<Positions>,
    matcher: Option<AhoCorasick>,
    /// Distinct regexes and the rules filed under each.
    patterns: Vec<String>,
    pattern_rules: Vec<Positions>,
    set: Option<RegexSet>,
}

impl Index {
    /// Indexes the rules, given in the policy's order by their conditions.
    pub fn new<'a>(rules: impl Iterator<Item = &'a [Condition]>) -> Result<Index, String> {
        let mut index = Index::default();
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        let mut seen_texts: Vec<HashMap<Vec<u8>, usize>> = Vec::new();
        let mut seen_patterns: Vec<HashMap<&str, usize>> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        for (position, conditions) in rules.enumerate() {
            let position = position as u32;
            // An equality narrows most, a regex least: prefer the first.
            let keyed = conditions
                .iter()
                .filter_map(|c| c.key().map(|key| (c, key)))
                .min_by_key(|(_, key)| key.rank());
            let Some((condition, key)) = keyed else {
                index.always.push(position);
                continue;
            };
            let at = *by_name.entry(condition.field_name()).or_insert_with(|| {
                index.fields.push(Tables {
                    field: condition.field().clone(),
                    equals: HashMap::new(),
                    texts: Vec::new(),
                    text_rules: Vec::new(),
                    matcher: None,
                    patterns: Vec::new(),
                    pattern_rules: Vec::new(),
                    set: None,
                });
                seen_texts.push(HashMap::new());
                seen_patterns.push(HashMap::new());
                names.push(condition.field_name());
                index.fields.len() - 1
            });
            let tables = &mut index.fields[at];
            match key {
                Key::Equals(values) => {
                    for value in values {
                        let rules = tables.equals.entry(value.to_string()).or_default();
                        if rules.last() != Some(&position) {
                            rules.push(position);
                        }
                    }
                }
                Key::Contains(texts) => {
                    for text in texts {
                        let id = *seen_texts[at].entry(text.clone()).or_insert_with(|| {
                            tables.texts.push(text);
                            tables.text_rules.push(Positions::new());
                            tables.texts.len() - 1
                        });
                        let rules = &mut tables.text_rules[id];
                        if rules.last() != Some(&position) {
                            rules.push(position);
                        }
                    }
                }
                Key::Matches(pattern) => {
                    let id = *seen_patterns[at].entry(pattern).or_insert_with(|| {
                        tables.patterns.push(pattern.to_string());
                        tables.pattern_rules.push(Positions::new());
                        tables.patterns.len() - 1
                    });
                    tables.pattern_rules[id].push(position);
                }
            }
        }
        for (tables, name) in index.fields.iter_mut().zip(names) {
            if !tables.texts.is_empty() {
                let matcher = AhoCorasick::new(&tables.texts)
                    .map_err(|e| format!("the policy's texts are too many to index: {e}"))?;
                tables.matcher = Some(matcher);
            }
            if !tables.patterns.is_empty() {
                tables.set = Some(regex_set(name, &tables.patterns)?);
            }
        }
        Ok(index)
    }

    /// The rules that may match the call, in the policy's order.
    pub fn candidates(&self, call: &Call) -> Positions {
        let mut found = self.always.clone();
        for tables in &self.fields {
            // A field the call does not have satisfies none of the indexed
            // operators.
            let Some(text) = tables.field.text(call) else {
                continue;
            };
            if let Some(rules) = tables.equals.get(text.as_ref()) {
                found.extend_from_slice(rules);
            }
            if let Some(matcher) = &tables.matcher {
                for hit in matcher.find_overlapping_iter(text.as_bytes()) {
                    found.extend_from_slice(&tables.text_rules[hit.pattern().as_usize()]);
                }
            }
            if let Some(set) = &tables.set {
                for id in set.matches(&text).iter() {
                    found.extend_from_slice(&tables.pattern_rules[id]);
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// One field's regexes as one set, each allowed the size a regex alone is.
fn regex_set(field: &str, patterns: &[String]) -> Result<RegexSet, String> {
    RegexSetBuilder::new(patterns)
        .size_limit(REGEX_SIZE_LIMIT.saturating_mul(patterns.len()))
        .build()
        .map_err(|set_error| {
            // Name the regex at fault: the first that does not compile alone.
            patterns
                .iter()
                .find_map(|pattern| {
                    let alone = RegexBuilder::new(pattern)
                        .size_limit(REGEX_SIZE_LIMIT)
                        .build();
                    alone
                        .err()
                        .map(|e| format!("the regex '{pattern}' cannot be compiled: {e}"))
                })
                .unwrap_or_else(|| {
                    format!(
                        "the {} regexes on `{field}` (the first '{}') cannot be compiled together: {set_error}",
                        patterns.len(),
                        patterns[0]
                    )
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn condition(field: &str, op: &str, value: Value) -> Condition {
        let spec = serde_json::from_value(json!({"field": field, "op": op, "value": value}));
        Condition::compile(spec.unwrap()).unwrap()
    }

    fn command(text: &str) -> Call {
        Call::new("bash", json!({"command": text}))
    }

    #[test]
    fn a_regex_with_no_literal_is_filed_under_itself_not_checked_on_every_call() {
        let rules = [
            // `\d` is every Unicode digit: too many to list.
            vec![condition("command", "matches", json!("\\d{4}"))],
            vec![condition("command", "ne", json!("ls"))],
        ];
        let index = Index::new(rules.iter().map(Vec::as_slice)).unwrap();
        assert_eq!(index.always, [1]);
        assert_eq!(index.candidates(&command("tar -czf 2024.tgz")), [0, 1]);
        assert_eq!(index.candidates(&command("ls -la")), [1]);
        assert_eq!(index.candidates(&Call::new("read_file", json!({}))), [1]);
    }

    #[test]
    fn a_regex_too_large_to_compile_is_refused_naming_it() {
        let rules = [vec![condition("command", "matches", json!("\\w{100}"))]];
        let error = Index::new(rules.iter().map(Vec::as_slice)).unwrap_err();
        assert!(
            error.starts_with("the regex '\\w{100}' cannot be compiled"),
            "{error}"
        );
    }
}
