//! A word of a command as it would run, and a string split into words as the
//! shell would split it.

use super::syntax::{self, Command as Node};

/// One word of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// The value after quote removal. When not literal: what is known of it,
    /// with `${NAME}` for a parameter and `$(…)` for a substitution.
    pub value: String,
    /// No expansion: `value` is exactly what the program receives (up to
    /// pathname expansion when `glob`).
    pub literal: bool,
    /// Unquoted `*`, `?` or `[`: pathname expansion may apply.
    pub glob: bool,
}

impl Arg {
    /// Words run as one shell command line (`eval`, `watch`, `git submodule
    /// foreach`): their values joined by spaces, literal if every word is.
    pub(crate) fn joined<'a>(words: impl IntoIterator<Item = &'a Arg>) -> Arg {
        let mut value = String::new();
        let mut literal = true;
        for (i, word) in words.into_iter().enumerate() {
            if i > 0 {
                value.push(' ');
            }
            value.push_str(&word.value);
            literal &= word.literal;
        }
        Arg {
            value,
            literal,
            glob: false,
        }
    }
}

/// The words of a string split as the shell would (for `env -S`), if literal.
pub(crate) fn split_words(text: &str) -> Option<Vec<Arg>> {
    let script = syntax::parse(text).ok()?;
    let [item] = script.list.items.as_slice() else {
        return None;
    };
    let [Node::Simple(simple)] = item.first.commands.as_slice() else {
        return None;
    };
    if !item.rest.is_empty() || !simple.redirects.is_empty() || !simple.assignments.is_empty() {
        return None;
    }
    simple
        .words
        .iter()
        .map(|w| {
            w.literal().map(|value| Arg {
                value,
                literal: true,
                glob: w.has_glob(),
            })
        })
        .collect()
}
