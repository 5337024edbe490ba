//! What the shell knows at a point of a command line: the variables assigned
//! a literal earlier in it, the aliases and functions it defined, in the order
//! and scope the shell gives them (a later assignment wins, a subshell's does
//! not leak out, `unset` clears, a child shell sees only what is exported).
//!
//! A name may hold several values at once: an assignment that may not run
//! (after `&&` or `||`, in a branch or a loop) adds its value to the ones
//! before it, and every value is judged. `None` among them is what the name
//! held before the line said anything: the environment's value (opaque), no
//! alias, no function.

use std::rc::Rc;

use super::syntax::{List, Part, Word};
use super::words::Arg;

/// How many combinations of values one command is expanded into before the
/// word is left opaque.
pub(super) const MAX_ALTERNATIVES: usize = 8;

/// The IFS a shell starts with.
const DEFAULT_IFS: &str = " \t\n";

/// The values each name may hold.
#[derive(Clone, Debug)]
pub(super) struct Bindings<T> {
    entries: Vec<(String, Vec<Option<T>>)>,
}

impl<T> Default for Bindings<T> {
    fn default() -> Self {
        Bindings {
            entries: Vec::new(),
        }
    }
}

impl<T: Clone + PartialEq> Bindings<T> {
    pub(super) fn get(&self, name: &str) -> Option<&[Option<T>]> {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Binds `name`: replacing what it held when the binding surely runs,
    /// adding to it when it may not.
    fn set(&mut self, name: &str, value: Option<T>, surely: bool) {
        let slot = match self.entries.iter().position(|(n, _)| n == name) {
            Some(i) => &mut self.entries[i].1,
            None => {
                self.entries.push((name.to_string(), vec![None]));
                &mut self.entries.last_mut().expect("just pushed").1
            }
        };
        if surely {
            slot.clear();
        }
        if !slot.contains(&value) {
            slot.push(value);
        }
    }

    /// Every name may also hold what it held before the line (something
    /// the analysis cannot see assigned it: `read`, `source`, a loop).
    fn forget(&mut self) {
        for (_, values) in &mut self.entries {
            if !values.contains(&None) {
                values.push(None);
            }
        }
    }
}

/// A variable's value, and whether it is exported to the programs it runs.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Var {
    pub(super) value: Arg,
    exported: bool,
}

/// A function's body, kept to be flattened where the function is called.
#[derive(Debug)]
pub(super) struct Body {
    pub(super) list: List,
    pub(super) heredocs: Vec<Word>,
    /// The text the body's spans refer to.
    pub(super) src: String,
}

/// A function body, compared by identity.
#[derive(Clone, Debug)]
pub(super) struct Function(pub(super) Rc<Body>);

impl PartialEq for Function {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// The shell's state while a command line is flattened.
#[derive(Clone, Debug, Default)]
pub(super) struct Scope {
    vars: Bindings<Var>,
    pub(super) aliases: Bindings<Arg>,
    pub(super) functions: Bindings<Function>,
    /// How many constructs deep whose commands may not run (the right of
    /// `&&`/`||`, a branch, a loop body).
    pub(super) maybe: usize,
}

impl Scope {
    /// What a child shell (`bash -c`, a program's hook) starts with: the
    /// exported variables, no alias, no function.
    pub(super) fn child(&self) -> Scope {
        let mut vars = Bindings::default();
        for (name, values) in &self.vars.entries {
            let mut exported: Vec<Option<Var>> = values
                .iter()
                .filter(|v| v.as_ref().is_none_or(|v| v.exported))
                .cloned()
                .collect();
            // A value that is not exported leaves the child the environment's.
            if exported.len() < values.len() && !exported.contains(&None) {
                exported.push(None);
            }
            if exported.iter().any(Option::is_some) {
                vars.entries.push((name.clone(), exported));
            }
        }
        Scope {
            vars,
            ..Scope::default()
        }
    }

    /// `NAME=value`, `export NAME=value`, `declare NAME=value`.
    pub(super) fn assign(&mut self, name: &str, value: Arg, export: bool) {
        let exported = export
            || self
                .vars
                .get(name)
                .is_some_and(|vs| vs.iter().flatten().any(|v| v.exported));
        let surely = self.maybe == 0;
        self.vars.set(name, Some(Var { value, exported }), surely);
    }

    /// `export NAME`: the values it holds are exported from now on.
    pub(super) fn export(&mut self, name: &str) {
        if let Some((_, values)) = self.vars.entries.iter_mut().find(|(n, _)| n == name) {
            for v in values.iter_mut().flatten() {
                v.exported = true;
            }
        }
    }

    /// `unset NAME`: it expands to nothing.
    pub(super) fn unset(&mut self, name: &str) {
        let empty = Arg {
            value: String::new(),
            literal: true,
            glob: false,
        };
        let surely = self.maybe == 0;
        self.vars.set(
            name,
            Some(Var {
                value: empty,
                exported: false,
            }),
            surely,
        );
    }

    pub(super) fn alias(&mut self, name: &str, text: Option<Arg>) {
        let surely = self.maybe == 0;
        self.aliases.set(name, text, surely);
    }

    pub(super) fn function(&mut self, name: &str, body: Option<Function>) {
        let surely = self.maybe == 0;
        self.functions.set(name, body, surely);
    }

    pub(super) fn aliases_empty(&self) -> bool {
        self.aliases.is_empty()
    }

    pub(super) fn alias_names(&self) -> Vec<String> {
        self.aliases
            .entries
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Something assigned variables the analysis cannot see: each may also
    /// hold a value nobody knows.
    pub(super) fn forget(&mut self) {
        self.vars.forget();
    }

    /// Something may have defined anything: `source FILE`.
    pub(super) fn forget_all(&mut self) {
        self.vars.forget();
        self.aliases.forget();
        self.functions.forget();
    }

    /// Whether expanding `word` needs the scope: it has a parameter the
    /// line assigned, or `$IFS`.
    pub(super) fn concerns(&self, word: &Word) -> bool {
        word.parts.iter().any(|p| match p {
            Part::Param { name, .. } => name == "IFS" || self.vars.get(name).is_some(),
            _ => false,
        })
    }

    /// Whether a parameter expansion with an operator (`${c:=rm}`) may
    /// assign a name the line knows.
    pub(super) fn assigns_by_expansion(&self, word: &Word) -> bool {
        !self.vars.is_empty()
            && word
                .parts
                .iter()
                .any(|p| matches!(p, Part::Param { nested, .. } if !nested.is_empty()))
    }

    /// The values of a parameter: `None` for one nobody knows.
    fn values(&self, name: &str, nested: &[Part]) -> Vec<Option<Arg>> {
        if !nested.is_empty() {
            return vec![None];
        }
        match self.vars.get(name) {
            Some(values) => values
                .iter()
                .map(|v| v.as_ref().map(|v| v.value.clone()))
                .collect(),
            None if name == "IFS" => vec![Some(Arg {
                value: DEFAULT_IFS.into(),
                literal: true,
                glob: false,
            })],
            None => vec![None],
        }
    }

    /// The characters that split an unquoted expansion: every value IFS may hold.
    fn ifs(&self) -> String {
        let mut out = String::new();
        for value in self.values("IFS", &[]) {
            let value = value.map_or(DEFAULT_IFS.to_string(), |v| v.value);
            out.extend(
                value
                    .chars()
                    .filter(|c| !out.contains(*c))
                    .collect::<Vec<_>>(),
            );
        }
        out
    }

    /// The fields `word` expands to with the values the line gave its
    /// parameters, one list per combination of values (`quoting`: for each
    /// parameter, whether it is double-quoted, see
    /// [`super::syntax::param_quoting`]; bare ones are split on IFS). A
    /// parameter nobody knows, a substitution, or too many combinations make
    /// the word one field that is not literal, as without the scope.
    pub(super) fn expand(&self, word: &Word, quoting: Option<&[bool]>) -> Vec<Vec<Arg>> {
        let params: Vec<Vec<Option<Arg>>> = word
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Param { name, nested } => Some(self.values(name, nested)),
                _ => None,
            })
            .collect();
        let combinations = params.iter().map(Vec::len).product::<usize>();
        let opaque = || {
            vec![vec![Arg {
                value: word.text(),
                literal: false,
                glob: false,
            }]]
        };
        if combinations > MAX_ALTERNATIVES {
            return opaque();
        }
        let quoting = quoting.filter(|q| q.len() == params.len());
        let ifs = self.ifs();
        let mut out = Vec::with_capacity(combinations);
        for n in 0..combinations {
            // The n-th combination: one value per parameter.
            let mut k = n;
            let chosen: Vec<&Option<Arg>> = params
                .iter()
                .map(|values| {
                    let v = &values[k % values.len()];
                    k /= values.len();
                    v
                })
                .collect();
            // A value nobody knows leaves this combination opaque, the others stand.
            let f = fields(word, &chosen, quoting, &ifs).unwrap_or_else(|| opaque().remove(0));
            if !out.contains(&f) {
                out.push(f);
            }
        }
        out
    }
}

impl Scope {
    /// A word that is not split (an assignment's value, a redirection's
    /// target): one value per combination of its parameters' values.
    pub(super) fn unsplit(&self, word: &Word) -> Vec<Arg> {
        let params = word
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Param { .. }))
            .count();
        let quoted = vec![true; params];
        self.expand(word, Some(&quoted))
            .iter()
            .map(Arg::joined)
            .collect()
    }
}

/// The fields of `word` with one value per parameter, split as the shell
/// would; `None` when a part is not literal.
fn fields(
    word: &Word,
    chosen: &[&Option<Arg>],
    quoting: Option<&[bool]>,
    ifs: &str,
) -> Option<Vec<Arg>> {
    let mut out = Vec::new();
    let mut current = String::new();
    // A quoted empty string makes a field (`""`); an empty bare expansion does not.
    let mut started = false;
    let mut glob = word.has_glob();
    let mut p = 0;
    for part in &word.parts {
        match part {
            Part::Literal(s) | Part::Quoted(s) => {
                current.push_str(s);
                started = true;
            }
            Part::Param { .. } => {
                let value = chosen[p].as_ref().filter(|v| v.literal)?;
                // Unknown quoting splits: the side that sees more commands.
                let quoted = quoting.is_some_and(|q| q[p]);
                p += 1;
                if quoted {
                    current.push_str(&value.value);
                    started = true;
                    continue;
                }
                for c in value.value.chars() {
                    if ifs.contains(c) {
                        if started {
                            out.push(std::mem::take(&mut current));
                            started = false;
                        }
                    } else {
                        glob |= matches!(c, '*' | '?' | '[');
                        current.push(c);
                        started = true;
                    }
                }
            }
            _ => return None,
        }
    }
    if started {
        out.push(current);
    }
    Some(
        out.into_iter()
            .map(|value| Arg {
                value,
                literal: true,
                glob,
            })
            .collect(),
    )
}
