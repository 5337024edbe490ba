//! Shell command analysis: parse a command line (see [`syntax`]) and flatten it
//! into every simple command it would run, seen through quoting, wrappers,
//! substitutions, subshells, `bash -c` strings, `eval`, `xargs` and
//! `find -exec`, with what could not be seen through reported as opaque.
//!
//! ```
//! use warden_analysis::shell::analyze;
//!
//! let a = analyze("git status; FOO=1 sudo /bin/r''m -rf / | cat");
//! let programs: Vec<_> = a.commands.iter().filter_map(|c| c.program.as_deref()).collect();
//! assert_eq!(programs, ["git", "rm", "cat"]);
//! assert!(a.commands[1].flags().contains("--recursive"));
//! ```

mod braces;
mod fed;
mod flags;
mod launch;
mod option_values;
mod scope;
pub mod syntax;
mod words;
mod wrappers;

pub use flags::FlagSet;
pub use option_values::takes_value;
use syntax::{Command as Node, CompoundKind, List, Part, Pipeline, Script, Target, Word};
pub use syntax::{ParseError, RedirectOp};
pub use words::Arg;
use words::split_words;

/// How many command lines inside command lines (`bash -c`, `eval`, …) are
/// followed before the rest is reported as opaque.
const MAX_REPARSE: usize = 8;

/// How many calls of the functions a command line defines are followed
/// (each flattens the body again) before the rest is reported as opaque.
const MAX_CALLS: usize = 32;

/// Everything the analysis of one command line found.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// Every simple command, in the order they appear (a wrapped or nested
    /// command comes right after the command that runs it).
    pub commands: Vec<Command>,
    /// Command substitution (`$( )`, backticks) or process substitution
    /// (`<( )`, `>( )`) anywhere, at any depth.
    pub substitution: bool,
    /// Constructs the analysis cannot see through.
    pub opaque: Vec<Opaque>,
    /// `/dev/tcp/…` and `/dev/udp/…` in redirections or arguments: bash opens
    /// a network connection for them.
    pub network_paths: Vec<String>,
    /// Functions defined (`name() { … }`), with the commands of their bodies.
    pub functions: Vec<Function>,
    /// The command line could not be parsed: nothing is known about it.
    pub error: Option<ParseError>,
}

/// A function definition and the commands of its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// The function's name.
    pub name: String,
    /// Indices into [`Analysis::commands`].
    pub commands: std::ops::Range<usize>,
}

/// A construct the analysis cannot see through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opaque {
    /// What kind of construct it is.
    pub kind: OpaqueKind,
    /// The text concerned, as far as it is known.
    pub text: String,
}

/// Why a construct is opaque.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpaqueKind {
    /// The program is computed: a variable, a substitution, a glob or a brace
    /// expansion in command position.
    ComputedProgram,
    /// `eval` of text that is not literal.
    ComputedEval,
    /// `bash -c`, `su -c`, `env -S` with a string that is not literal.
    ComputedShellString,
    /// A command line inside a command line that does not parse.
    Unparseable,
    /// Command lines nested deeper than the analysis follows.
    TooDeep,
}

/// Where a simple command sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// The command line itself (including `{ }` groups, `if`, loops).
    TopLevel,
    /// A `( )` subshell.
    Subshell,
    /// `$( )` or backticks.
    CommandSubstitution,
    /// `<( )` or `>( )`.
    ProcessSubstitution,
    /// The string of `bash -c`, `su -c`, `env -S`, or a shell's here-document script.
    ShellString,
    /// The text of `eval`.
    Eval,
    /// The command `xargs` runs (with more arguments from its input).
    Xargs,
    /// The command of `find … -exec/-execdir/-ok/-okdir`.
    FindExec,
    /// The body of a function definition.
    Function,
    /// A command another program runs because of its options or
    /// configuration: git's aliases, pager, editor, ssh command and hooks,
    /// `tar --to-command`, `rsync -e`, `ssh -o ProxyCommand=…`, …
    Option,
}

/// A redirection of a simple command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirection {
    /// The file descriptor written before the operator (`2>`), if any.
    pub fd: Option<u32>,
    /// The operator.
    pub op: RedirectOp,
    /// The file (or fd for `>&`); for a here-document or here-string, its text.
    pub target: Arg,
}

/// One simple command as it would run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The program's basename after quote removal (`/bin/r''m` → `rm`); `None`
    /// when the command has no program (only assignments or redirections) or
    /// the program is computed (see [`Command::computed`]).
    pub program: Option<String>,
    /// The program word as written, quotes included (empty when there is none).
    pub written: String,
    /// The program's value after quote removal (`/bin/rm`), when literal.
    pub path: Option<String>,
    /// The arguments after the program.
    pub args: Vec<Arg>,
    /// Wrappers seen through, outermost first (`sudo`, `env`, `nice`, …).
    pub wrappers: Vec<String>,
    /// `NAME=value` before the command or set by `env`/`sudo`.
    pub assignments: Vec<(String, Arg)>,
    /// Its redirections, in the order written.
    pub redirects: Vec<Redirection>,
    /// Where it sits: the command line itself, a subshell, a substitution, a `bash -c` string, ...
    pub origin: Origin,
    /// The command that runs this one (`bash -c`, `eval`, `xargs`, `find`).
    pub parent: Option<usize>,
    /// The commands whose output feeds this command's standard input through
    /// a pipe (indices into [`Analysis::commands`]).
    pub stdin_from: Vec<usize>,
    /// True when the program word is computed (opaque).
    pub computed: bool,
    /// Run in the background (`&`).
    pub background: bool,
    /// How many substitutions deep it sits (0: its output is the pipeline's).
    captured: usize,
    /// Arguments that are command lines (analysed as commands of their own,
    /// so not paths): `bash -c STRING`, `eval …`.
    code: Code,
}

/// What an argument is to its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Option,
    /// The value of the option before it.
    Value,
    /// `--`: what follows is operands.
    EndOfOptions,
    Operand,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Code {
    None,
    Arg(usize),
    All,
}

/// What `c` prints into a pipe when it is a literal `echo` or `printf`
/// (see [`fed::printed`]).
fn printed(c: &Command) -> Option<String> {
    fed::printed(c.program.as_deref(), &c.args, !c.redirects.is_empty())
}

impl Command {
    /// Whether the program is `name` (compared by basename).
    pub fn is(&self, name: &str) -> bool {
        self.program.as_deref() == Some(name)
    }

    /// The command's options, normalised (see [`FlagSet`]).
    pub fn flags(&self) -> FlagSet {
        FlagSet::of(
            self.program.as_deref().unwrap_or(""),
            self.args.iter().map(|a| a.value.as_str()),
        )
    }

    /// The arguments that are not options (everything after `--` included),
    /// nor the value of an option the program is known to take one for
    /// (`rsync -e "ssh -p 2222"`: not an operand); for a program the table
    /// does not know, every word not starting with `-`.
    pub fn operands(&self) -> impl Iterator<Item = &Arg> {
        self.words()
            .filter(|(role, _)| *role == Role::Operand)
            .map(|(_, a)| a)
    }

    /// The options, in the order written, each with its value when the
    /// program is known to take one in the next word (`curl -o out.html`:
    /// `("-o", Some("out.html"))`; see [`takes_value`]). A value attached to
    /// its option (`-oout.html`, `--output=out.html`) stays in the option's
    /// word; `--` is not an option.
    pub fn options(&self) -> impl Iterator<Item = (&str, Option<&Arg>)> {
        let mut words = self.words().peekable();
        std::iter::from_fn(move || {
            loop {
                let (role, arg) = words.next()?;
                if role == Role::Option {
                    let value = words
                        .next_if(|(role, _)| *role == Role::Value)
                        .map(|(_, a)| a);
                    return Some((arg.value.as_str(), value));
                }
            }
        })
    }

    /// Each argument with what it is to the program.
    fn words(&self) -> impl Iterator<Item = (Role, &Arg)> {
        let takes = option_values::of(self.program.as_deref().unwrap_or(""));
        let mut options_ended = false;
        let mut value_next = false;
        self.args.iter().map(move |a| {
            if options_ended {
                return (Role::Operand, a);
            }
            if std::mem::take(&mut value_next) {
                return (Role::Value, a);
            }
            if a.value == "--" {
                options_ended = true;
                return (Role::EndOfOptions, a);
            }
            if a.value.len() > 1 && a.value.starts_with('-') {
                value_next = takes.is_some_and(|t| option_values::value_follows(t, &a.value));
                return (Role::Option, a);
            }
            (Role::Operand, a)
        })
    }

    /// Every argument, assignment value or redirection target that looks like
    /// a path: contains `/`, starts with `~` or `.`, an `@file`, or the value
    /// of `--opt=PATH` / `key=PATH`. URLs (`scheme://…`) are not paths.
    pub fn paths(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let targets = self.redirects.iter().filter_map(|r| match r.op {
            RedirectOp::HereDoc | RedirectOp::HereString => None,
            RedirectOp::DupInput | RedirectOp::DupOutput
                if r.target
                    .value
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'-') =>
            {
                None
            }
            _ => Some(r.target.value.as_str()),
        });
        let values = self
            .args
            .iter()
            .enumerate()
            .filter(|(i, _)| match self.code {
                Code::None => true,
                Code::Arg(k) => *i != k,
                Code::All => false,
            })
            .map(|(_, a)| a.value.as_str())
            .chain(self.assignments.iter().map(|(_, a)| a.value.as_str()));
        for value in values.chain(targets) {
            if let Some(path) = path_in(value) {
                out.push(path);
            }
        }
        out
    }

    /// The argument words as the program sees them, program first.
    pub fn argv(&self) -> impl Iterator<Item = &str> {
        self.path
            .as_deref()
            .into_iter()
            .chain(self.args.iter().map(|a| a.value.as_str()))
    }
}

/// The path in an argument, if it looks like one.
fn path_in(value: &str) -> Option<&str> {
    let candidate = if let Some(file) = value.strip_prefix('@') {
        file
    } else if value.starts_with('-') {
        value.split_once('=')?.1
    } else if let Some((key, v)) = value.split_once('=')
        && !key.contains('/')
        && !key.is_empty()
    {
        v
    } else {
        value
    };
    if candidate.is_empty() || candidate.contains("://") {
        return None;
    }
    let looks = candidate.contains('/') || candidate.starts_with('~') || candidate.starts_with('.');
    looks.then_some(candidate)
}

impl Analysis {
    /// Whether anything could not be seen through: a parse error or an opaque construct.
    pub fn is_opaque(&self) -> bool {
        self.error.is_some() || !self.opaque.is_empty()
    }

    /// The commands whose output reaches command `i`'s input, directly or
    /// through other pipeline stages (nearest first).
    pub fn upstream(&self, i: usize) -> Vec<usize> {
        let mut seen = Vec::new();
        let mut queue: Vec<usize> = self.commands[i].stdin_from.clone();
        while let Some(j) = queue.pop() {
            if !seen.contains(&j) {
                seen.push(j);
                queue.extend(self.commands[j].stdin_from.iter().copied());
            }
        }
        seen
    }

    /// Every path-like string of every command.
    pub fn paths(&self) -> Vec<&str> {
        self.commands.iter().flat_map(|c| c.paths()).collect()
    }
}

/// Analyses a command line.
pub fn analyze(src: &str) -> Analysis {
    let mut flattener = Flattener {
        out: Analysis::default(),
        substituted: 0..0,
        scope: scope::Scope::default(),
        calls: Vec::new(),
        called: 0,
    };
    match syntax::parse(src) {
        Ok(mut script) => {
            let heredocs = std::mem::take(&mut script.heredocs);
            let ctx = Ctx {
                origin: Origin::TopLevel,
                parent: None,
                stdin: Vec::new(),
                captured: 0,
                reparse: 0,
                timed: false,
                positional: None,
            };
            flattener.list(&mut script.list, &heredocs, src, &ctx);
        }
        Err(e) => flattener.out.error = Some(e),
    }
    flattener.out
}

/// Where the flattener is.
#[derive(Clone)]
struct Ctx {
    origin: Origin,
    parent: Option<usize>,
    /// The commands feeding the current stage's input.
    stdin: Vec<usize>,
    captured: usize,
    /// How many command lines inside command lines deep.
    reparse: usize,
    timed: bool,
    /// `$0`, `$1`, … of a `bash -c STRING NAME ARGS…` string, when known.
    positional: Option<std::rc::Rc<[Arg]>>,
}

impl Ctx {
    fn with_origin(&self, origin: Origin) -> Ctx {
        Ctx {
            origin,
            ..self.clone()
        }
    }

    fn captured(&self, origin: Origin) -> Ctx {
        Ctx {
            origin,
            stdin: Vec::new(),
            captured: self.captured + 1,
            timed: false,
            ..self.clone()
        }
    }
}

struct Flattener {
    out: Analysis,
    /// The commands of the process substitutions in the simple command being
    /// recorded (`bash < <(echo …)`, `source <(echo …)`): what may feed it.
    substituted: std::ops::Range<usize>,
    /// The variables, aliases and functions the line has set so far.
    scope: scope::Scope,
    /// The functions being called, innermost last.
    calls: Vec<scope::Function>,
    /// How many function calls were followed.
    called: usize,
}

impl Flattener {
    // The flattener takes the parsed words' text (`&mut`, `mem::take`)
    // rather than copying it: allocation is most of the cost of an analysis.
    fn list(&mut self, list: &mut List, heredocs: &[Word], src: &str, ctx: &Ctx) {
        for item in &mut list.items {
            let start = self.out.commands.len();
            // A background job runs in a child shell: what it sets stays there.
            let outer = item.background.then(|| self.scope.clone());
            self.pipeline(&mut item.first, heredocs, src, ctx);
            // What follows `&&` or `||` may not run.
            self.scope.maybe += 1;
            for (_, pipeline) in &mut item.rest {
                self.pipeline(pipeline, heredocs, src, ctx);
            }
            self.scope.maybe -= 1;
            if let Some(outer) = outer {
                self.scope = outer;
            }
            if item.background {
                for command in &mut self.out.commands[start..] {
                    command.background = true;
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &mut Pipeline, heredocs: &[Word], src: &str, ctx: &Ctx) {
        let mut stdin = ctx.stdin.clone();
        let timed = ctx.timed || pipeline.timed;
        // The stages of a pipeline run in child shells.
        let piped = pipeline.commands.len() > 1;
        for node in &mut pipeline.commands {
            let start = self.out.commands.len();
            let stage = Ctx {
                stdin: std::mem::take(&mut stdin),
                timed,
                ..ctx.clone()
            };
            let outer = piped.then(|| self.scope.clone());
            self.node(node, heredocs, src, &stage);
            if let Some(outer) = outer {
                self.scope = outer;
            }
            // The next stage reads what this stage's commands write (not what
            // their substitutions capture).
            stdin = (start..self.out.commands.len())
                .filter(|&i| self.out.commands[i].captured == ctx.captured)
                .collect();
        }
    }

    fn node(&mut self, node: &mut Node, heredocs: &[Word], src: &str, ctx: &Ctx) {
        match node {
            Node::Simple(simple) => self.simple(simple, heredocs, src, ctx),
            Node::Compound(compound) => {
                let start = self.out.commands.len();
                for word in &mut compound.words {
                    self.substitutions(&mut word.parts, src, ctx);
                }
                let inner = match compound.kind {
                    CompoundKind::Subshell => ctx.with_origin(Origin::Subshell),
                    CompoundKind::Function(_) => ctx.with_origin(Origin::Function),
                    _ => ctx.clone(),
                };
                // A subshell's settings stay in it; a function's body runs
                // where it is called, not here.
                let outer = matches!(
                    compound.kind,
                    CompoundKind::Subshell | CompoundKind::Function(_)
                )
                .then(|| self.scope.clone());
                let defined = if let CompoundKind::Function(_) = &compound.kind {
                    Some(scope::Body {
                        list: List {
                            items: compound
                                .bodies
                                .iter()
                                .flat_map(|b| b.items.iter().cloned())
                                .collect(),
                        },
                        heredocs: heredocs.to_vec(),
                        src: src.to_string(),
                    })
                } else {
                    None
                };
                let maybe = !matches!(
                    compound.kind,
                    CompoundKind::Subshell
                        | CompoundKind::Group
                        | CompoundKind::Function(_)
                        | CompoundKind::Test
                        | CompoundKind::Coproc
                );
                if matches!(
                    compound.kind,
                    CompoundKind::While
                        | CompoundKind::Until
                        | CompoundKind::For
                        | CompoundKind::Select
                        | CompoundKind::Arithmetic
                ) {
                    // A loop's variable, its later rounds, `(( x = … ))`.
                    self.scope.forget();
                }
                self.scope.maybe += usize::from(maybe);
                for body in &mut compound.bodies {
                    self.list(body, heredocs, src, &inner);
                }
                self.scope.maybe -= usize::from(maybe);
                if let Some(outer) = outer {
                    self.scope = outer;
                }
                if let (CompoundKind::Function(name), Some(body)) = (&compound.kind, defined) {
                    let body = scope::Function(std::rc::Rc::new(body));
                    self.scope.function(name, Some(body));
                }
                if compound.kind == CompoundKind::Coproc {
                    for command in &mut self.out.commands[start..] {
                        command.background = true;
                    }
                }
                if let CompoundKind::Function(name) = &compound.kind {
                    self.out.functions.push(Function {
                        name: name.clone(),
                        commands: start..self.out.commands.len(),
                    });
                }
                let redirects: Vec<Redirection> = compound
                    .redirects
                    .iter_mut()
                    .flat_map(|r| self.redirection(r, heredocs, src, ctx))
                    .collect();
                if !redirects.is_empty() {
                    for command in &mut self.out.commands[start..] {
                        command.redirects.extend(redirects.iter().cloned());
                    }
                }
            }
        }
    }

    fn simple(
        &mut self,
        simple: &mut syntax::SimpleCommand,
        heredocs: &[Word],
        src: &str,
        ctx: &Ctx,
    ) {
        let mut assignments = Vec::new();
        for a in &mut simple.assignments {
            let assigned = assignment_kind(a, src);
            let mut others = Vec::new();
            for word in &mut a.value {
                self.substitutions(&mut word.parts, src, ctx);
            }
            let value = match a.value.as_mut_slice() {
                [word] if self.scope.concerns(word) => {
                    let mut values = self.scope.unsplit(word);
                    let value = values.remove(0);
                    // The other values the variable may now hold.
                    others = values;
                    value
                }
                [word] => self.arg(std::mem::take(word)),
                words => Arg {
                    value: words.iter().map(Word::text).collect::<Vec<_>>().join(" "),
                    literal: words.iter().all(|w| !w.has_expansion()),
                    glob: false,
                },
            };
            assignments.push((std::mem::take(&mut a.name), value));
            if simple.words.is_empty() {
                let (name, value) = assignments.last().expect("just pushed");
                match assigned {
                    Assigned::Set => {
                        self.scope.assign(name, value.clone(), false);
                        self.scope.maybe += 1;
                        for other in others {
                            self.scope.assign(name, other, false);
                        }
                        self.scope.maybe -= 1;
                    }
                    Assigned::Other => self.scope.assign(
                        name,
                        Arg {
                            literal: false,
                            ..value.clone()
                        },
                        false,
                    ),
                    Assigned::Maybe => {
                        self.scope.maybe += 1;
                        self.scope.assign(name, value.clone(), false);
                        self.scope.maybe -= 1;
                        self.scope.forget();
                    }
                }
            }
        }
        // One argument vector per combination of the values the line gave
        // its variables (almost always one).
        let mut argvs: Vec<Vec<Arg>> = vec![Vec::with_capacity(simple.words.len())];
        let mut written = String::new();
        let first = self.out.commands.len();
        for (k, word) in simple.words.iter_mut().enumerate() {
            self.substitutions(&mut word.parts, src, ctx);
            if k == 0 {
                written = src.get(word.span.0..word.span.1).unwrap_or("").to_string();
            }
            if self.scope.assigns_by_expansion(word) {
                self.scope.forget();
            }
            if let Some(positional) = &ctx.positional
                && let Some(values) = positional_values(word, positional)
            {
                for argv in &mut argvs {
                    argv.extend(values.iter().cloned());
                }
                continue;
            }
            if self.scope.concerns(word) {
                let quoting = src
                    .get(word.span.0..word.span.1)
                    .and_then(syntax::param_quoting);
                let fields = self.scope.expand(word, quoting.as_deref());
                argvs = combine(argvs, &fields);
                continue;
            }
            match argvs.as_mut_slice() {
                [argv] => self.expand_word(std::mem::take(word), argv),
                _ => {
                    let mut one = Vec::new();
                    self.expand_word(std::mem::take(word), &mut one);
                    for argv in &mut argvs {
                        argv.extend(one.iter().cloned());
                    }
                }
            }
        }
        let redirects: Vec<Redirection> = simple
            .redirects
            .iter_mut()
            .flat_map(|r| self.redirection(r, heredocs, src, ctx))
            .collect();
        let mut wrappers = Vec::new();
        if ctx.timed {
            wrappers.push("time".to_string());
        }
        let substituted = first..self.out.commands.len();
        let last = argvs.len() - 1;
        for (i, argv) in argvs.into_iter().enumerate() {
            self.substituted = substituted.clone();
            if i < last {
                self.run(
                    argv,
                    written.clone(),
                    wrappers.clone(),
                    assignments.clone(),
                    redirects.clone(),
                    ctx,
                );
            } else {
                self.run(argv, written, wrappers, assignments, redirects, ctx);
                break;
            }
        }
    }

    /// Runs a command's words, through the aliases the line defined.
    fn run(
        &mut self,
        argv: Vec<Arg>,
        written: String,
        wrappers: Vec<String>,
        assignments: Vec<(String, Arg)>,
        redirects: Vec<Redirection>,
        ctx: &Ctx,
    ) {
        let texts = match argv.first() {
            Some(first) if first.literal && !first.glob && !self.scope.aliases_empty() => {
                self.scope.aliases.get(&first.value).map(<[_]>::to_vec)
            }
            _ => None,
        };
        let Some(texts) = texts else {
            self.command(argv, written, wrappers, assignments, redirects, ctx);
            return;
        };
        for text in texts {
            let Some(text) = text else {
                // Perhaps not an alias: the word as written.
                self.command(
                    argv.clone(),
                    written.clone(),
                    wrappers.clone(),
                    assignments.clone(),
                    redirects.clone(),
                    ctx,
                );
                continue;
            };
            let rest = &argv[1..];
            match split_words(&text.value).filter(|w| text.literal && !w.is_empty()) {
                Some(mut words) => {
                    words.extend(rest.iter().cloned());
                    self.command(
                        words,
                        String::new(),
                        wrappers.clone(),
                        assignments.clone(),
                        redirects.clone(),
                        ctx,
                    );
                }
                None => {
                    // A command line (`alias x='cd /; rm -rf *'`): read with
                    // the words after it, in this shell.
                    let mut line = text.clone();
                    for word in rest {
                        line.value.push(' ');
                        line.value.push_str(&fed::quoted(&word.value));
                        line.literal &= word.literal;
                    }
                    let inner = Ctx {
                        reparse: ctx.reparse + 1,
                        ..ctx.clone()
                    };
                    self.reparse_here(&line, OpaqueKind::ComputedProgram, &inner);
                }
            }
        }
    }

    /// A word as arguments: literal words go through brace expansion.
    fn expand_word(&mut self, word: Word, argv: &mut Vec<Arg>) {
        let braces_possible = word
            .parts
            .iter()
            .any(|p| matches!(p, Part::Literal(s) if s.contains('{')));
        let mask = if braces_possible && !word.has_expansion() {
            word.unquoted_mask()
        } else {
            Vec::new()
        };
        let arg = self.arg(word);
        if arg.literal && braces_possible && braces::has_braces(&mask) {
            match braces::expand(&mask) {
                Some(words) => {
                    argv.extend(words.into_iter().map(|value| Arg {
                        value,
                        literal: true,
                        glob: arg.glob,
                    }));
                }
                None => argv.push(Arg {
                    literal: false,
                    ..arg
                }),
            }
            return;
        }
        argv.push(arg);
    }

    fn arg(&mut self, word: Word) -> Arg {
        let glob = word.has_glob();
        let (value, literal) = match word.into_literal() {
            Ok(v) => (v, true),
            Err(word) => (word.text(), false),
        };
        self.network(&value);
        Arg {
            value,
            literal,
            glob,
        }
    }

    fn network(&mut self, value: &str) {
        // One search for `/dev/` (in almost no word), then the two devices.
        let network =
            value.contains("/dev/") && (value.contains("/dev/tcp") || value.contains("/dev/udp"));
        if network && !self.out.network_paths.iter().any(|p| p == value) {
            self.out.network_paths.push(value.to_string());
        }
    }

    fn redirection(
        &mut self,
        r: &mut syntax::Redirect,
        heredocs: &[Word],
        src: &str,
        ctx: &Ctx,
    ) -> Vec<Redirection> {
        // One redirection per value the line's variables give the target
        // (almost always one): the command may write any of them.
        let targets = match &mut r.target {
            Target::Word(word) => {
                self.substitutions(&mut word.parts, src, ctx);
                if self.scope.concerns(word) {
                    self.scope.unsplit(word)
                } else {
                    vec![self.arg(std::mem::take(word))]
                }
            }
            Target::HereDoc(slot) => match heredocs.get(*slot) {
                Some(body) => {
                    if body.has_expansion() {
                        let mut parts = body.parts.clone();
                        self.substitutions(&mut parts, src, ctx);
                    }
                    if self.scope.concerns(body) {
                        self.scope.unsplit(body)
                    } else {
                        vec![Arg {
                            value: body.text(),
                            literal: !body.has_expansion(),
                            glob: false,
                        }]
                    }
                }
                None => vec![Arg {
                    value: String::new(),
                    literal: false,
                    glob: false,
                }],
            },
        };
        targets
            .into_iter()
            .map(|target| Redirection {
                fd: r.fd,
                op: r.op,
                target,
            })
            .collect()
    }

    /// Flattens the substitutions inside a word's parts.
    fn substitutions(&mut self, parts: &mut [Part], src: &str, ctx: &Ctx) {
        for part in parts {
            match part {
                // A substitution runs in a child shell: what it sets stays there.
                Part::CommandSubst(inner) => {
                    self.out.substitution = true;
                    let inner_ctx = ctx.captured(Origin::CommandSubstitution);
                    let outer = self.scope.clone();
                    self.nested_script(inner, src, &inner_ctx);
                    self.scope = outer;
                }
                Part::ProcessSubst { script: inner, .. } => {
                    self.out.substitution = true;
                    let inner_ctx = ctx.captured(Origin::ProcessSubstitution);
                    let outer = self.scope.clone();
                    self.nested_script(inner, src, &inner_ctx);
                    self.scope = outer;
                }
                Part::Param { nested, .. } => self.substitutions(nested, src, ctx),
                Part::Arithmetic(inner) => self.substitutions(inner, src, ctx),
                Part::Literal(_) | Part::Quoted(_) => {}
            }
        }
    }

    /// A substitution's script, whose spans refer to the enclosing text
    /// unless it carries its own.
    fn nested_script(&mut self, inner: &mut Script, src: &str, ctx: &Ctx) {
        let heredocs = std::mem::take(&mut inner.heredocs);
        let source = inner.source.take();
        let src = source.as_deref().unwrap_or(src);
        self.list(&mut inner.list, &heredocs, src, ctx);
    }

    /// Records one command from its words: sees through wrappers, then follows
    /// what the program runs (`-c` strings, `eval`, `xargs`, `find -exec`).
    fn command(
        &mut self,
        mut argv: Vec<Arg>,
        mut written: String,
        mut wrappers: Vec<String>,
        mut assignments: Vec<(String, Arg)>,
        redirects: Vec<Redirection>,
        ctx: &Ctx,
    ) {
        let mut start = 0;
        let mut computed = false;
        while let Some(word) = argv.get(start) {
            if !word.literal || word.glob {
                computed = true;
                self.out.opaque.push(Opaque {
                    kind: OpaqueKind::ComputedProgram,
                    text: word.value.clone(),
                });
                break;
            }
            let name = basename(&word.value);
            let Some(unwrapped) = wrappers::unwrap(name, &argv[start + 1..]) else {
                break;
            };
            let name = name.to_string();
            let next = start + 1 + unwrapped.skip;
            if let Some(split) = &unwrapped.split {
                // `env -S 'prog args'`: the string's words replace the option.
                match split_words(split) {
                    Some(words) => {
                        let tail = argv.split_off(next);
                        argv.truncate(start + 1);
                        argv.extend(words);
                        argv.extend(tail);
                        assignments.extend(as_args(unwrapped.assignments));
                        wrappers.push(name);
                        start += 1;
                        written.clear();
                        continue;
                    }
                    None => self.out.opaque.push(Opaque {
                        kind: OpaqueKind::ComputedShellString,
                        text: split.clone(),
                    }),
                }
            }
            if next >= argv.len() {
                // The wrapper runs nothing: it is the program.
                break;
            }
            assignments.extend(as_args(unwrapped.assignments));
            wrappers.push(name);
            start = next;
            written.clear();
        }
        let mut args = if start == 0 {
            argv
        } else {
            argv.split_off(start.min(argv.len()))
        };
        let program_word = if args.is_empty() {
            None
        } else {
            Some(args.remove(0))
        };
        if written.is_empty()
            && let Some(word) = &program_word
        {
            written = word.value.clone();
        }
        let (program, path) = match program_word {
            Some(word) if !computed => (Some(basename(&word.value).to_string()), Some(word.value)),
            _ => (None, None),
        };
        let index = self.out.commands.len();
        self.out.commands.push(Command {
            program,
            written,
            path,
            args,
            wrappers,
            assignments,
            redirects,
            origin: ctx.origin,
            parent: ctx.parent,
            stdin_from: ctx.stdin.clone(),
            computed,
            background: false,
            captured: ctx.captured,
            code: Code::None,
        });
        self.follow(index, ctx);
    }

    /// Follows the command lines a command runs.
    fn follow(&mut self, index: usize, ctx: &Ctx) {
        let substituted = std::mem::replace(&mut self.substituted, 0..0);
        let command = &self.out.commands[index];
        if command.program.is_none() {
            return;
        }
        if command.wrappers.is_empty() {
            self.builtin(index, ctx);
        }
        let command = &self.out.commands[index];
        let program = command.program.as_deref().unwrap_or_default();
        if launch::reads_options(program) {
            self.launches(index, ctx);
            return;
        }
        // A `match` rejects most programs in one comparison by length.
        let followed = matches!(
            program,
            "su" | "runuser"
                | "eval"
                | "xargs"
                | "find"
                | "source"
                | "."
                | "script"
                | "watch"
                | "awk"
                | "gawk"
                | "mawk"
                | "nawk"
                | "parallel"
                | "flock"
                | "sed"
        );
        if !followed && !wrappers::SHELLS.contains(&program) {
            return;
        }
        let program = program.to_string();
        let args = command.args.clone();
        let stdin_from = command.stdin_from.clone();
        let redirects = command.redirects.clone();
        let args = &args;
        let inner = |origin| Ctx {
            origin,
            parent: Some(index),
            stdin: Vec::new(),
            captured: ctx.captured,
            reparse: ctx.reparse + 1,
            timed: false,
            positional: None,
        };
        // Literal text a process substitution prints, read as a script
        // (`bash < <(echo …)`, `bash <(printf …)`, `source <(echo …)`).
        let fed_by_substitution: Vec<Arg> = substituted
            .filter(|&j| {
                let c = &self.out.commands[j];
                c.origin == Origin::ProcessSubstitution && c.parent == ctx.parent
            })
            .filter_map(|j| printed(&self.out.commands[j]))
            .map(|value| Arg {
                value,
                literal: true,
                glob: false,
            })
            .collect();
        let code = |f: &mut Flattener, text: &Arg, origin: Origin| {
            f.reparse(text, OpaqueKind::ComputedShellString, &inner(origin));
        };
        if (wrappers::SHELLS.contains(&program.as_str())
            || matches!(program.as_str(), "source" | "."))
            && !fed_by_substitution.is_empty()
            && !matches!(wrappers::shell_input(args), wrappers::ShellInput::String(_))
        {
            for text in &fed_by_substitution {
                code(self, text, Origin::ShellString);
            }
            return;
        }
        match program.as_str() {
            p if wrappers::SHELLS.contains(&p) => match wrappers::shell_input(args) {
                wrappers::ShellInput::String(i) => {
                    self.out.commands[index].code = Code::Arg(i);
                    let arg = args[i].clone();
                    let mut c = inner(Origin::ShellString);
                    c.stdin = stdin_from.clone();
                    // The words after the string are `$0`, `$1`, …
                    if args[i + 1..].iter().all(|a| a.literal && !a.glob) {
                        c.positional = Some(args[i + 1..].into());
                    }
                    self.reparse(&arg, OpaqueKind::ComputedShellString, &c);
                }
                wrappers::ShellInput::Stdin => {
                    // A script on standard input from a here-document or here-string.
                    let script = redirects.iter().rev().find(|r| {
                        matches!(r.op, RedirectOp::HereDoc | RedirectOp::HereString)
                            && r.fd.is_none_or(|fd| fd == 0)
                    });
                    if let Some(r) = script {
                        let arg = r.target.clone();
                        self.reparse(
                            &arg,
                            OpaqueKind::ComputedShellString,
                            &inner(Origin::ShellString),
                        );
                    } else {
                        // Literal text printed into its input: `printf '…' | sh`.
                        let printed: Vec<String> = stdin_from
                            .iter()
                            .filter_map(|&j| printed(&self.out.commands[j]))
                            .collect();
                        for value in printed {
                            let text = Arg {
                                value,
                                literal: true,
                                glob: false,
                            };
                            code(self, &text, Origin::ShellString);
                        }
                    }
                }
                wrappers::ShellInput::MissingString | wrappers::ShellInput::File => {}
            },
            "script" => {
                if let Some(text) = fed::script_command(args) {
                    code(self, &text, Origin::ShellString);
                }
            }
            "watch" => {
                if let Some((words, exec)) = fed::watch_command(args) {
                    if exec {
                        self.command(
                            words,
                            String::new(),
                            Vec::new(),
                            Vec::new(),
                            Vec::new(),
                            &inner(Origin::Option),
                        );
                    } else {
                        code(self, &Arg::joined(&words), Origin::ShellString);
                    }
                }
            }
            "flock" => match fed::flock(args) {
                Some(fed::Flock::Text(text)) => code(self, &text, Origin::ShellString),
                Some(fed::Flock::Words(words)) => self.command(
                    words,
                    String::new(),
                    Vec::new(),
                    Vec::new(),
                    Vec::new(),
                    &inner(Origin::Option),
                ),
                None => {}
            },
            "sed" => {
                for text in fed::sed_execute(args) {
                    code(self, &text, Origin::ShellString);
                }
            }
            "awk" | "gawk" | "mawk" | "nawk" => {
                for text in fed::awk_system(args) {
                    code(self, &text, Origin::ShellString);
                }
            }
            "parallel" => {
                let (runs, unseen) = fed::parallel(args);
                let origin = if unseen {
                    Origin::Xargs
                } else {
                    Origin::ShellString
                };
                for text in runs {
                    code(self, &text, origin);
                }
            }
            "runuser" if wrappers::su_string(args).is_none() => {
                // `runuser -u USER [--] COMMAND…`
                let user = args
                    .iter()
                    .position(|a| a.value == "-u" || a.value == "--user");
                if let Some(u) = user {
                    let mut from = u + 2;
                    if args.get(from).is_some_and(|a| a.value == "--") {
                        from += 1;
                    }
                    if from < args.len() {
                        self.command(
                            args[from..].to_vec(),
                            String::new(),
                            Vec::new(),
                            Vec::new(),
                            Vec::new(),
                            &inner(Origin::Option),
                        );
                    }
                }
            }
            "su" | "runuser" => {
                if let Some(i) = wrappers::su_string(args) {
                    self.out.commands[index].code = Code::Arg(i);
                    let mut arg = args[i].clone();
                    if let Some(v) = arg.value.strip_prefix("--command=") {
                        arg.value = v.to_string();
                    } else if arg.value.starts_with('-') {
                        // `-cSTRING`
                        arg.value = arg.value[arg.value.find('c').unwrap_or(0) + 1..].to_string();
                    }
                    self.reparse(
                        &arg,
                        OpaqueKind::ComputedShellString,
                        &inner(Origin::ShellString),
                    );
                }
            }
            "eval" => {
                let text = Arg::joined(args);
                if !args.is_empty() {
                    self.out.commands[index].code = Code::All;
                    let mut c = inner(Origin::Eval);
                    c.stdin = stdin_from.clone();
                    self.reparse(&text, OpaqueKind::ComputedEval, &c);
                }
            }
            "xargs"
                if fed::plain_xargs(args)
                    && stdin_from
                        .iter()
                        .any(|&j| printed(&self.out.commands[j]).is_some()) =>
            {
                // Literal text printed into xargs: its words are the arguments.
                let from = wrappers::xargs_command(args);
                let mut words: Vec<String> = args[from..].iter().map(|a| a.value.clone()).collect();
                if words.is_empty() {
                    words.push("echo".into());
                }
                let literal = args[from..].iter().all(|a| a.literal);
                for j in stdin_from.clone() {
                    if let Some(text) = printed(&self.out.commands[j]) {
                        let mut line = words.join(" ");
                        for word in text.split_whitespace() {
                            line.push(' ');
                            line.push_str(&fed::quoted(word));
                        }
                        let text = Arg {
                            value: line,
                            literal,
                            glob: false,
                        };
                        code(self, &text, Origin::ShellString);
                    }
                }
            }
            "xargs" => {
                let from = wrappers::xargs_command(args);
                let mut argv: Vec<Arg> = args[from..].to_vec();
                if argv.is_empty() {
                    argv.push(Arg {
                        value: "echo".into(),
                        literal: true,
                        glob: false,
                    });
                }
                self.command(
                    argv,
                    String::new(),
                    Vec::new(),
                    Vec::new(),
                    Vec::new(),
                    &inner(Origin::Xargs),
                );
            }
            "find" => {
                let mut runs = Vec::new();
                let mut i = 0;
                while i < args.len() {
                    let v = args[i].value.as_str();
                    if matches!(v, "-exec" | "-execdir" | "-ok" | "-okdir") {
                        let from = i + 1;
                        let mut end = from;
                        while end < args.len() && !matches!(args[end].value.as_str(), ";" | "+") {
                            end += 1;
                        }
                        runs.push(args[from..end].to_vec());
                        i = end + 1;
                    } else {
                        i += 1;
                    }
                }
                for argv in runs.into_iter().filter(|a| !a.is_empty()) {
                    self.command(
                        argv,
                        String::new(),
                        Vec::new(),
                        Vec::new(),
                        Vec::new(),
                        &inner(Origin::FindExec),
                    );
                }
            }
            _ => {}
        }
    }

    /// Follows what a program's options and configuration make it run
    /// (see [`launch`]).
    fn launches(&mut self, index: usize, ctx: &Ctx) {
        let command = &self.out.commands[index];
        let program = command.program.as_deref().unwrap_or("");
        let launch::Launches { rewrite, nested } =
            launch::launches(program, &command.args, &command.assignments);
        if let Some(args) = rewrite {
            self.out.commands[index].args = args;
        }
        for launch in nested {
            let mut inner = Ctx {
                origin: Origin::Option,
                parent: Some(index),
                stdin: Vec::new(),
                captured: ctx.captured,
                reparse: ctx.reparse + 1,
                timed: false,
                positional: None,
            };
            match launch {
                launch::Launch::Shell { text, positional } => {
                    if !positional.is_empty() && positional.iter().all(|a| a.literal && !a.glob) {
                        inner.positional = Some(positional.into());
                    }
                    self.reparse(&text, OpaqueKind::ComputedProgram, &inner);
                }
                launch::Launch::Argv(argv) => self.command(
                    argv,
                    String::new(),
                    Vec::new(),
                    Vec::new(),
                    Vec::new(),
                    &inner,
                ),
                launch::Launch::Unknown(what) => self.out.opaque.push(Opaque {
                    kind: OpaqueKind::ComputedProgram,
                    text: what,
                }),
            }
        }
    }

    /// What a shell builtin changes in the scope (assignments, aliases,
    /// `unset`), and the body of a function the line defined, where it is called.
    fn builtin(&mut self, index: usize, ctx: &Ctx) {
        let command = &self.out.commands[index];
        let program = command.program.as_deref().unwrap_or_default();
        let args = &command.args;
        match program {
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                let export = program == "export"
                    || args
                        .iter()
                        .any(|a| a.value.starts_with('-') && a.value.contains('x'));
                let mut bindings = Vec::new();
                let mut unsure = false;
                for a in args {
                    if a.value.starts_with('-') || a.value.starts_with('+') {
                        // `-n` (a reference), `-a` (an array), `-i`: not a plain value.
                        unsure |= a.value != "-x" && a.value != "-r" && a.value != "-g";
                        continue;
                    }
                    match a.value.split_once('=') {
                        Some((name, value)) if is_name(name) => bindings.push((
                            name.to_string(),
                            Some(Arg {
                                value: value.to_string(),
                                literal: a.literal,
                                glob: false,
                            }),
                        )),
                        Some(_) => unsure = true,
                        None if is_name(&a.value) => bindings.push((a.value.clone(), None)),
                        None => unsure = true,
                    }
                }
                for (name, value) in bindings {
                    match value {
                        Some(value) => self.scope.assign(&name, value, export),
                        None if export => self.scope.export(&name),
                        None => {}
                    }
                }
                if unsure {
                    self.scope.forget();
                }
            }
            "unset" => {
                let functions = args.iter().any(|a| a.value == "-f");
                let names: Vec<String> = args
                    .iter()
                    .filter(|a| !a.value.starts_with('-'))
                    .map(|a| a.value.clone())
                    .collect();
                for name in names {
                    if functions {
                        self.scope.function(&name, None);
                    } else {
                        self.scope.unset(&name);
                        if self.scope.functions.get(&name).is_some() {
                            self.scope.function(&name, None);
                        }
                    }
                }
            }
            "alias" => {
                let aliases: Vec<(String, Arg)> = args
                    .iter()
                    .filter_map(|a| {
                        let (name, text) = a.value.split_once('=')?;
                        Some((
                            name.to_string(),
                            Arg {
                                value: text.to_string(),
                                literal: a.literal,
                                glob: false,
                            },
                        ))
                    })
                    .collect();
                for (name, text) in aliases {
                    self.scope.alias(&name, Some(text));
                }
            }
            "unalias" => {
                let names: Vec<String> = if args.iter().any(|a| a.value == "-a") {
                    self.scope.alias_names()
                } else {
                    args.iter().map(|a| a.value.clone()).collect()
                };
                for name in names {
                    self.scope.alias(&name, None);
                }
            }
            // Builtins that assign variables by name, and `printf -v`.
            "read" | "mapfile" | "readarray" | "getopts" | "let" => self.scope.forget(),
            "printf" if args.iter().any(|a| a.value.starts_with("-v")) => self.scope.forget(),
            // A script of its own may define anything.
            "source" | "." => self.scope.forget_all(),
            _ => {
                if let Some(bodies) = self.scope.functions.get(program) {
                    let bodies: Vec<scope::Function> = bodies.iter().flatten().cloned().collect();
                    for body in bodies {
                        self.call(index, &body, ctx);
                    }
                }
            }
        }
    }

    /// The body of a function the line defined, flattened where it is called,
    /// with the variables set by then. Its arguments (`$1`) stay opaque: the
    /// body may `set --` or `shift` them.
    fn call(&mut self, index: usize, body: &scope::Function, ctx: &Ctx) {
        let recursive = self.calls.iter().any(|f| f == body);
        self.called += 1;
        if recursive || ctx.reparse >= MAX_REPARSE || self.called > MAX_CALLS {
            self.out.opaque.push(Opaque {
                kind: OpaqueKind::TooDeep,
                text: self.out.commands[index].written.clone(),
            });
            return;
        }
        let inner = Ctx {
            origin: Origin::Function,
            parent: Some(index),
            stdin: ctx.stdin.clone(),
            captured: ctx.captured,
            reparse: ctx.reparse + 1,
            timed: false,
            positional: None,
        };
        let mut list = body.0.list.clone();
        self.calls.push(body.clone());
        self.list(&mut list, &body.0.heredocs, &body.0.src, &inner);
        self.calls.pop();
    }

    /// Parses and flattens a command line found inside a command: `eval`'s
    /// in this shell, the others in a child shell that sees only what was
    /// exported.
    fn reparse(&mut self, text: &Arg, computed: OpaqueKind, ctx: &Ctx) {
        if ctx.origin == Origin::Eval {
            return self.reparse_here(text, computed, ctx);
        }
        let outer = self.scope.child();
        let outer = std::mem::replace(&mut self.scope, outer);
        self.reparse_here(text, computed, ctx);
        self.scope = outer;
    }

    /// Parses and flattens a command line found inside a command, in this shell.
    fn reparse_here(&mut self, text: &Arg, computed: OpaqueKind, ctx: &Ctx) {
        if !text.literal {
            self.out.opaque.push(Opaque {
                kind: computed,
                text: text.value.clone(),
            });
            return;
        }
        if ctx.reparse > MAX_REPARSE {
            self.out.opaque.push(Opaque {
                kind: OpaqueKind::TooDeep,
                text: text.value.clone(),
            });
            return;
        }
        match syntax::parse(&text.value) {
            Ok(mut script) => {
                let heredocs = std::mem::take(&mut script.heredocs);
                self.list(&mut script.list, &heredocs, &text.value, ctx);
            }
            Err(e) => self.out.opaque.push(Opaque {
                kind: OpaqueKind::Unparseable,
                text: format!("{}: {e}", text.value),
            }),
        }
    }
}

/// The values of a word that is only a positional parameter (`$1`, `"$0"`,
/// `"$@"`), when the parameters are known.
fn positional_values(word: &Word, positional: &[Arg]) -> Option<Vec<Arg>> {
    let [Part::Param { name, nested }] = word.parts.as_slice() else {
        return None;
    };
    if !nested.is_empty() {
        return None;
    }
    match name.as_str() {
        "@" | "*" => Some(positional.iter().skip(1).cloned().collect()),
        n => {
            let k: usize = n.parse().ok()?;
            Some(positional.get(k).cloned().into_iter().collect())
        }
    }
}

/// How an assignment sets its variable.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Assigned {
    /// `NAME=value`.
    Set,
    /// `NAME+=value` (appends), or an empty value (`NAME=` and `NAME+=`
    /// cannot be told apart once parsed).
    Maybe,
    /// An array or an element of one: not a plain value.
    Other,
}

fn assignment_kind(a: &syntax::Assignment, src: &str) -> Assigned {
    let [word] = a.value.as_slice() else {
        return if a.value.is_empty() {
            Assigned::Maybe
        } else {
            Assigned::Other
        };
    };
    let before = src.get(..word.span.0).unwrap_or_default();
    if before.ends_with("+=") {
        Assigned::Maybe
    } else if before.ends_with("]=") || !before.ends_with('=') {
        Assigned::Other
    } else {
        Assigned::Set
    }
}

/// Every argument vector followed by every field list of the next word,
/// up to a bound past which the word stays opaque.
fn combine(argvs: Vec<Vec<Arg>>, fields: &[Vec<Arg>]) -> Vec<Vec<Arg>> {
    if let [one] = fields {
        return argvs
            .into_iter()
            .map(|mut argv| {
                argv.extend(one.iter().cloned());
                argv
            })
            .collect();
    }
    if argvs.len() * fields.len() > scope::MAX_ALTERNATIVES {
        let opaque = Arg {
            value: fields
                .iter()
                .map(|f| Arg::joined(f).value)
                .collect::<Vec<_>>()
                .join("|"),
            literal: false,
            glob: false,
        };
        return combine(argvs, &[vec![opaque]]);
    }
    let mut out = Vec::with_capacity(argvs.len() * fields.len());
    for argv in &argvs {
        for f in fields {
            let mut a = argv.clone();
            a.extend(f.iter().cloned());
            out.push(a);
        }
    }
    out
}

/// A shell variable's name.
fn is_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn as_args(pairs: Vec<(String, String)>) -> impl Iterator<Item = (String, Arg)> {
    pairs.into_iter().map(|(name, value)| {
        (
            name,
            Arg {
                value,
                literal: true,
                glob: false,
            },
        )
    })
}

/// The last component of a program path (`/usr/bin/rm` → `rm`).
pub fn basename(program: &str) -> &str {
    let trimmed = program.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(i) => &trimmed[i + 1..],
        None if trimmed.is_empty() => program,
        None => trimmed,
    }
}
