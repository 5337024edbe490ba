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
mod flags;
mod launch;
pub mod syntax;
mod words;
mod wrappers;

pub use flags::FlagSet;
use syntax::{Command as Node, CompoundKind, List, Part, Pipeline, Script, Target, Word};
pub use syntax::{ParseError, RedirectOp};
pub use words::Arg;
use words::split_words;

/// How many command lines inside command lines (`bash -c`, `eval`, …) are
/// followed before the rest is reported as opaque.
const MAX_REPARSE: usize = 8;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Code {
    None,
    Arg(usize),
    All,
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

    /// The arguments that are not options (everything after `--` included).
    pub fn operands(&self) -> impl Iterator<Item = &Arg> {
        let mut options_ended = false;
        self.args.iter().filter(move |a| {
            if options_ended {
                return true;
            }
            if a.value == "--" {
                options_ended = true;
                return false;
            }
            !(a.value.len() > 1 && a.value.starts_with('-'))
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
}

impl Flattener {
    // The flattener takes the parsed words' text (`&mut`, `mem::take`)
    // rather than copying it: allocation is most of the cost of an analysis.
    fn list(&mut self, list: &mut List, heredocs: &[Word], src: &str, ctx: &Ctx) {
        for item in &mut list.items {
            let start = self.out.commands.len();
            self.pipeline(&mut item.first, heredocs, src, ctx);
            for (_, pipeline) in &mut item.rest {
                self.pipeline(pipeline, heredocs, src, ctx);
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
        for node in &mut pipeline.commands {
            let start = self.out.commands.len();
            let stage = Ctx {
                stdin: std::mem::take(&mut stdin),
                timed,
                ..ctx.clone()
            };
            self.node(node, heredocs, src, &stage);
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
                for body in &mut compound.bodies {
                    self.list(body, heredocs, src, &inner);
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
                    .map(|r| self.redirection(r, heredocs, src, ctx))
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
            for word in &mut a.value {
                self.substitutions(&mut word.parts, src, ctx);
            }
            let value = match a.value.as_mut_slice() {
                [word] => self.arg(std::mem::take(word)),
                words => Arg {
                    value: words.iter().map(Word::text).collect::<Vec<_>>().join(" "),
                    literal: words.iter().all(|w| !w.has_expansion()),
                    glob: false,
                },
            };
            assignments.push((std::mem::take(&mut a.name), value));
        }
        let mut argv: Vec<Arg> = Vec::with_capacity(simple.words.len());
        let mut written = String::new();
        for (k, word) in simple.words.iter_mut().enumerate() {
            self.substitutions(&mut word.parts, src, ctx);
            if k == 0 {
                written = src.get(word.span.0..word.span.1).unwrap_or("").to_string();
            }
            if let Some(positional) = &ctx.positional
                && let Some(values) = positional_values(word, positional)
            {
                argv.extend(values);
                continue;
            }
            self.expand_word(std::mem::take(word), &mut argv);
        }
        let redirects: Vec<Redirection> = simple
            .redirects
            .iter_mut()
            .map(|r| self.redirection(r, heredocs, src, ctx))
            .collect();
        let mut wrappers = Vec::new();
        if ctx.timed {
            wrappers.push("time".to_string());
        }
        self.command(argv, written, wrappers, assignments, redirects, ctx);
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
        for device in ["/dev/tcp", "/dev/udp"] {
            if value.contains(device) && !self.out.network_paths.iter().any(|p| p == value) {
                self.out.network_paths.push(value.to_string());
            }
        }
    }

    fn redirection(
        &mut self,
        r: &mut syntax::Redirect,
        heredocs: &[Word],
        src: &str,
        ctx: &Ctx,
    ) -> Redirection {
        let target = match &mut r.target {
            Target::Word(word) => {
                self.substitutions(&mut word.parts, src, ctx);
                self.arg(std::mem::take(word))
            }
            Target::HereDoc(slot) => match heredocs.get(*slot) {
                Some(body) => {
                    if body.has_expansion() {
                        let mut parts = body.parts.clone();
                        self.substitutions(&mut parts, src, ctx);
                    }
                    Arg {
                        value: body.text(),
                        literal: !body.has_expansion(),
                        glob: false,
                    }
                }
                None => Arg {
                    value: String::new(),
                    literal: false,
                    glob: false,
                },
            },
        };
        Redirection {
            fd: r.fd,
            op: r.op,
            target,
        }
    }

    /// Flattens the substitutions inside a word's parts.
    fn substitutions(&mut self, parts: &mut [Part], src: &str, ctx: &Ctx) {
        for part in parts {
            match part {
                Part::CommandSubst(inner) => {
                    self.out.substitution = true;
                    let inner_ctx = ctx.captured(Origin::CommandSubstitution);
                    self.nested_script(inner, src, &inner_ctx);
                }
                Part::ProcessSubst { script: inner, .. } => {
                    self.out.substitution = true;
                    let inner_ctx = ctx.captured(Origin::ProcessSubstitution);
                    self.nested_script(inner, src, &inner_ctx);
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
        const FOLLOWED: &[&str] = &["su", "eval", "xargs", "find"];
        let command = &self.out.commands[index];
        let Some(program) = command.program.as_deref() else {
            return;
        };
        if launch::reads_options(program) {
            self.launches(index, ctx);
            return;
        }
        if !FOLLOWED.contains(&program) && !wrappers::SHELLS.contains(&program) {
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
                    }
                }
                wrappers::ShellInput::MissingString | wrappers::ShellInput::File => {}
            },
            "su" => {
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
                let text = Arg {
                    value: args
                        .iter()
                        .map(|a| a.value.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    literal: args.iter().all(|a| a.literal),
                    glob: false,
                };
                if !args.is_empty() {
                    self.out.commands[index].code = Code::All;
                    let mut c = inner(Origin::Eval);
                    c.stdin = stdin_from.clone();
                    self.reparse(&text, OpaqueKind::ComputedEval, &c);
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

    /// Parses and flattens a command line found inside a command.
    fn reparse(&mut self, text: &Arg, computed: OpaqueKind, ctx: &Ctx) {
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
