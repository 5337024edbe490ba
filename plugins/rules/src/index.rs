//! The policy's index: each rule is filed under one of its conditions, by the
//! field it tests, so that a call is checked only against the rules that can
//! match it. `eq` and `in` values go into a table per field; `contains`
//! texts, the longest text every match of a glob holds (its literal prefix,
//! or a longer run between wildcards) and the literals every match of a regex
//! starts (or ends) with go into one multi-pattern matcher per field, so that
//! rules sharing their first word are told apart by what else they say. A rule with no
//! such condition (only `ne`, or none) is checked on every call. The index
//! only narrows: the candidates are then checked whole, in the policy's order.

use std::collections::HashMap;

use aho_corasick::AhoCorasick;
use warden_provider::Call;

use crate::condition::{Condition, Field, Key};

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
}

impl Index {
    /// Indexes the rules, given in the policy's order by their conditions.
    pub fn new<'a>(rules: impl Iterator<Item = &'a [Condition]>) -> Result<Index, String> {
        let mut index = Index::default();
        let mut by_name: HashMap<&str, usize> = HashMap::new();
        let mut seen_texts: Vec<HashMap<Vec<u8>, usize>> = Vec::new();
        for (position, conditions) in rules.enumerate() {
            let position = position as u32;
            // An equality narrows most: prefer it.
            let keyed = conditions
                .iter()
                .filter_map(|c| c.key().map(|key| (c, key)))
                .min_by_key(|(_, key)| matches!(key, Key::Contains(_)));
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
                });
                seen_texts.push(HashMap::new());
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
            }
        }
        for tables in &mut index.fields {
            if !tables.texts.is_empty() {
                let matcher = AhoCorasick::new(&tables.texts)
                    .map_err(|e| format!("the policy's texts are too many to index: {e}"))?;
                tables.matcher = Some(matcher);
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
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}
