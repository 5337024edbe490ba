//! The command `blocked_patterns` of a passport: each a phrase of words, and
//! when it is itself a command, a command matched by program, flags and
//! operands. The list is indexed by a pattern's first word and by its program,
//! so that a command is tried only against the patterns that can match it
//! rather than every one (issue 28); the first listed that matches is the one
//! reported, as in a scan.

use std::borrow::Cow;
use std::collections::HashMap;

use warden_analysis::glob::Glob;
use warden_analysis::shell::{Command, FlagSet, analyze};

/// The patterns in the order given, indexed.
#[derive(Debug, Default)]
pub struct BlockedList {
    patterns: Vec<Blocked>,
    /// Positions of the patterns by their first word.
    by_first_word: HashMap<String, Vec<usize>>,
    /// Positions of the patterns that are commands, by program.
    by_program: HashMap<String, Vec<usize>>,
}

impl BlockedList {
    pub fn new(patterns: Vec<Blocked>) -> BlockedList {
        let mut by_first_word: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_program: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, pattern) in patterns.iter().enumerate() {
            // `compile` refuses a pattern without words.
            by_first_word
                .entry(lower(&pattern.words[0]).into_owned())
                .or_default()
                .push(i);
            if let Some(command) = &pattern.command {
                by_program
                    .entry(lower(&command.program).into_owned())
                    .or_default()
                    .push(i);
            }
        }
        BlockedList {
            patterns,
            by_first_word,
            by_program,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The first pattern of the list that matches one simple command.
    pub fn first(&self, c: &Command) -> Option<&Blocked> {
        // A phrase matches only where the command has its first word, and a
        // command pattern only a command of its program: every pattern that
        // matches is among these (both sides are looked up lower-cased, and
        // `eq_lower` never holds where their lower-cased forms differ).
        let count = c.wrappers.len() + 1 + c.args.len();
        let mut candidates: Vec<usize> = (0..count)
            .filter_map(|i| self.by_first_word.get(&*lower(word_at(c, i))))
            .flatten()
            .copied()
            .collect();
        if let Some(program) = c.program.as_deref()
            && let Some(list) = self.by_program.get(&*lower(program))
        {
            candidates.extend_from_slice(list);
        }
        candidates.sort_unstable();
        candidates.dedup();
        candidates
            .into_iter()
            .map(|i| &self.patterns[i])
            .find(|p| p.matches(c))
    }

    /// The straightforward scan the index stands for.
    #[cfg(test)]
    pub fn first_scanned(&self, c: &Command) -> Option<&Blocked> {
        self.patterns.iter().find(|p| p.matches(c))
    }
}

/// `text` lower-cased, as [`eq_lower`] compares it.
fn lower(text: &str) -> Cow<'_, str> {
    if text
        .bytes()
        .any(|b| !b.is_ascii() || b.is_ascii_uppercase())
    {
        Cow::Owned(text.to_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// One `blocked_patterns` entry.
#[derive(Debug)]
pub struct Blocked {
    /// As given, for messages.
    pub text: String,
    /// Its lower-cased words, matched as a phrase of a command's words.
    words: Vec<String>,
    /// When the pattern is itself a command: matched by program, flags (in
    /// every spelling) and operands.
    command: Option<PatternCommand>,
}

#[derive(Debug)]
struct PatternCommand {
    program: String,
    flags: FlagSet,
    operands: Vec<Glob>,
}

impl Blocked {
    pub fn compile(pattern: &str) -> Result<Blocked, String> {
        let lower = pattern.to_lowercase();
        let words: Vec<String> = lower.split_whitespace().map(str::to_string).collect();
        if words.is_empty() {
            return Err("the pattern is empty".into());
        }
        let analysis = analyze(&lower);
        let command = match analysis.commands.as_slice() {
            [c] if !analysis.is_opaque() && c.redirects.is_empty() && c.wrappers.is_empty() => {
                match c.program.as_deref() {
                    Some(program) => Some(PatternCommand {
                        program: program.to_string(),
                        flags: c.flags(),
                        operands: c
                            .operands()
                            .map(|o| Glob::case_insensitive(&o.value).map_err(|e| e.to_string()))
                            .collect::<Result<_, _>>()?,
                    }),
                    None => None,
                }
            }
            _ => None,
        };
        Ok(Blocked {
            text: pattern.to_string(),
            words,
            command,
        })
    }

    /// Whether the pattern matches one simple command.
    pub fn matches(&self, c: &Command) -> bool {
        // The words as a phrase: wrappers, program (or the word as written),
        // arguments; compared in place, without collecting them.
        let count = c.wrappers.len() + 1 + c.args.len();
        let n = self.words.len();
        if n <= count
            && (0..=count - n).any(|start| {
                self.words
                    .iter()
                    .enumerate()
                    .all(|(k, w)| eq_lower(word_at(c, start + k), w))
            })
        {
            return true;
        }
        let Some(p) = &self.command else { return false };
        if !c
            .program
            .as_deref()
            .is_some_and(|prog| eq_lower(prog, &p.program))
        {
            return false;
        }
        // Only now pay for lower-casing: the program is the pattern's.
        let args: Vec<String> = c.args.iter().map(|a| a.value.to_lowercase()).collect();
        let flags = FlagSet::of(&p.program, args.iter().map(String::as_str));
        if !flags.includes(&p.flags) {
            return false;
        }
        let mut options_ended = false;
        let mut operands = args.iter().filter(|a| {
            if options_ended {
                return true;
            }
            if *a == "--" {
                options_ended = true;
                return false;
            }
            !(a.len() > 1 && a.starts_with('-'))
        });
        // Every operand of the pattern matches an operand of the command, in order.
        p.operands
            .iter()
            .all(|glob| operands.by_ref().any(|o| glob.matches(o)))
    }
}

/// Word `i` of a command: its wrappers, its program (or the word as written),
/// then its arguments.
fn word_at(c: &Command, i: usize) -> &str {
    let w = c.wrappers.len();
    match i.cmp(&w) {
        std::cmp::Ordering::Less => &c.wrappers[i],
        std::cmp::Ordering::Equal => c.program.as_deref().unwrap_or(&c.written),
        std::cmp::Ordering::Greater => c.args.get(i - w - 1).map_or("", |a| a.value.as_str()),
    }
}

/// `text` equals `lower` (already lower-cased) ignoring case.
fn eq_lower(text: &str, lower: &str) -> bool {
    if text.is_ascii() {
        text.eq_ignore_ascii_case(lower)
    } else {
        text.to_lowercase() == lower
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Words that make phrases, commands with flags in several spellings,
    /// operands and globs, wrappers, and case to fold.
    const WORDS: &[&str] = &[
        "rm", "RM", "-rf", "-r", "-f", "-fr", "--force", "/tmp", "/tmp/*", "*", "git", "push",
        "Push", "sudo", "env", "curl", "x", "--", "É", "é",
    ];

    fn words(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(WORDS), 1..max).prop_map(|w| w.join(" "))
    }

    fn list(patterns: &[String]) -> BlockedList {
        BlockedList::new(
            patterns
                .iter()
                .filter_map(|p| Blocked::compile(p).ok())
                .collect(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn the_indexed_list_finds_the_first_pattern_the_scan_finds(
            patterns in prop::collection::vec(words(4), 0..10),
            lines in prop::collection::vec(prop::collection::vec(words(6), 1..3), 1..5),
        ) {
            let list = list(&patterns);
            for line in &lines {
                let line = line.join(" && ");
                for c in &analyze(&line).commands {
                    let indexed = list.first(c).map(|p| p as *const Blocked);
                    let scanned = list.first_scanned(c).map(|p| p as *const Blocked);
                    prop_assert_eq!(indexed, scanned, "{}", line);
                }
            }
        }
    }

    #[test]
    fn the_first_listed_pattern_is_reported_when_several_match() {
        let list = list(&["git push --force".into(), "rm -r".into(), "rm".into()]);
        let first = |line: &str| {
            list.first(&analyze(line).commands[0])
                .map(|p| p.text.as_str())
        };
        assert_eq!(first("RM -fr /tmp"), Some("rm -r"));
        assert_eq!(first("rm /tmp"), Some("rm"));
        assert_eq!(
            first("sudo git push origin --force"),
            Some("git push --force")
        );
        assert_eq!(first("git push"), None);
    }
}
