//! The shell-syntax tree and its parser: POSIX sh with the bash extensions
//! agents use (`[[ ]]`, `(( ))`, `$'…'`, `<( )`, `|&`, `&>`, here-strings,
//! arrays in assignments, `function`). It parses; it never expands or runs.
//! Input it cannot parse is a [`ParseError`], which callers treat as opaque.

use std::fmt;

/// How deep constructs may nest (subshells, substitutions, compounds) before
/// the input is refused: a bound on recursion, far beyond real commands.
const MAX_NESTING: usize = 48;

/// Why a command line could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset in the text that was being parsed.
    pub offset: usize,
    /// What was expected or found there.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for ParseError {}

/// A parsed command line: its list of commands and the bodies of its here-documents.
#[derive(Clone, Debug, Default)]
pub struct Script {
    /// The top-level commands.
    pub list: List,
    /// Here-document bodies, indexed by [`Target::HereDoc`].
    pub heredocs: Vec<Word>,
    /// The text the words' spans refer to, when it is not the enclosing
    /// script's (a backtick substitution is parsed from its unescaped text).
    pub source: Option<String>,
}

/// Commands separated by `;`, `&` or newlines.
#[derive(Clone, Debug, Default)]
pub struct List {
    /// The and-or lists, in order.
    pub items: Vec<AndOr>,
}

/// Pipelines joined by `&&` and `||`; `background` when it ends with `&`.
#[derive(Clone, Debug)]
pub struct AndOr {
    /// The first pipeline.
    pub first: Pipeline,
    /// Each following pipeline, with the operator that joins it to the one before.
    pub rest: Vec<(Connector, Pipeline)>,
    /// Ends with `&`: runs in the background.
    pub background: bool,
}

/// How two pipelines of an and-or list are joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connector {
    /// `&&`: the next runs if this one succeeded.
    And,
    /// `||`: the next runs if this one failed.
    Or,
}

/// Commands joined by `|` (or `|&`, which pipes stderr too).
#[derive(Clone, Debug)]
pub struct Pipeline {
    /// `! pipeline`.
    pub negated: bool,
    /// Prefixed by the `time` keyword.
    pub timed: bool,
    /// The commands, left to right; one for a plain command.
    pub commands: Vec<Command>,
}

/// A command of a pipeline.
#[derive(Clone, Debug)]
pub enum Command {
    /// Assignments, words and redirections (`FOO=1 cmd arg >out`).
    Simple(SimpleCommand),
    /// A compound command (`if`, `for`, `( … )`, `{ …; }`, a function definition, ...).
    Compound(Compound),
}

/// Assignments, words and redirections, in any order.
#[derive(Clone, Debug, Default)]
pub struct SimpleCommand {
    /// `NAME=value` prefixes (or the whole command, when it has no words).
    pub assignments: Vec<Assignment>,
    /// The command's name and arguments, before expansion.
    pub words: Vec<Word>,
    /// Redirections, wherever they appeared among the words.
    pub redirects: Vec<Redirect>,
}

/// `NAME=value`, `NAME+=value` or `NAME=(a b c)`.
#[derive(Clone, Debug)]
pub struct Assignment {
    /// The variable's name.
    pub name: String,
    /// The value: one word, or an array's words.
    pub value: Vec<Word>,
}

/// A compound command with its bodies (lists), its own words (a `for` list, a
/// `case` subject and patterns, `[[ ]]` operands, arithmetic) and redirections.
#[derive(Clone, Debug)]
pub struct Compound {
    /// Which compound command.
    pub kind: CompoundKind,
    /// Its lists: an `if`'s conditions and branches in order, a loop's condition and body, a
    /// `case`'s arms.
    pub bodies: Vec<List>,
    /// Its own words: a `for` or `select` list, a `case` subject and patterns, `[[ ]]` operands.
    pub words: Vec<Word>,
    /// Redirections applied to the whole command.
    pub redirects: Vec<Redirect>,
}

/// The kind of a compound command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompoundKind {
    /// `( list )`: runs in a child shell.
    Subshell,
    /// `{ list; }`
    Group,
    /// `if … then … [elif … then …] [else …] fi`
    If,
    /// `while list; do list; done`
    While,
    /// `until list; do list; done`
    Until,
    /// `for name [in words]; do list; done` (and the arithmetic `for (( … ))`).
    For,
    /// `select name [in words]; do list; done`
    Select,
    /// `case word in pattern) list;; … esac`
    Case,
    /// `[[ … ]]`
    Test,
    /// `(( … ))`
    Arithmetic,
    /// `name() body` or `function name body`: the body is defined, not run here.
    Function(String),
    /// `coproc [NAME] command`: the command runs in the background, its
    /// input and output connected to the shell.
    Coproc,
}

/// A redirection: `[fd]op target`.
#[derive(Clone, Debug)]
pub struct Redirect {
    /// The file descriptor written before the operator (`2>`), if any.
    pub fd: Option<u32>,
    /// The operator.
    pub op: RedirectOp,
    /// What it redirects to or from.
    pub target: Target,
}

/// A redirection operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Input,
    /// `>`
    Output,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupInput,
    /// `>&`
    DupOutput,
    /// `&>`: stdout and stderr.
    OutputAll,
    /// `&>>`
    AppendAll,
    /// `<<` or `<<-`
    HereDoc,
    /// `<<<`
    HereString,
}

impl RedirectOp {
    /// The operator as written (`>>`, `2>&1`'s `>&`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RedirectOp::Input => "<",
            RedirectOp::Output => ">",
            RedirectOp::Append => ">>",
            RedirectOp::Clobber => ">|",
            RedirectOp::ReadWrite => "<>",
            RedirectOp::DupInput => "<&",
            RedirectOp::DupOutput => ">&",
            RedirectOp::OutputAll => "&>",
            RedirectOp::AppendAll => "&>>",
            RedirectOp::HereDoc => "<<",
            RedirectOp::HereString => "<<<",
        }
    }

    /// Whether the target is a file the command writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            RedirectOp::Output
                | RedirectOp::Append
                | RedirectOp::Clobber
                | RedirectOp::ReadWrite
                | RedirectOp::OutputAll
                | RedirectOp::AppendAll
        )
    }
}

/// What a redirection names.
#[derive(Clone, Debug)]
pub enum Target {
    /// A file name or a descriptor (`>&2`), before expansion.
    Word(Word),
    /// The here-document body, an index into [`Script::heredocs`].
    HereDoc(usize),
}

/// One shell word: its parts, and where it was in the text it was parsed from.
#[derive(Clone, Debug, Default)]
pub struct Word {
    /// The word's pieces, in order.
    pub parts: Vec<Part>,
    /// Byte range in the source text.
    pub span: (usize, usize),
}

/// A piece of a word.
#[derive(Clone, Debug)]
pub enum Part {
    /// Unquoted text (glob and brace characters in it are active).
    Literal(String),
    /// Text from quotes or a backslash escape, after quote removal.
    Quoted(String),
    /// `$name`, `${…}`; `nested` holds the parts of an operator's word (`${x:-$(cmd)}`).
    Param {
        /// The parameter's name (`HOME`, `1`, `@`).
        name: String,
        /// An operator's word, when it has one.
        nested: Vec<Part>,
    },
    /// `$( … )` or `` `…` ``.
    CommandSubst(Box<Script>),
    /// `$(( … ))`.
    Arithmetic(Vec<Part>),
    /// `<( … )` (`input`: the command's output is read) or `>( … )`.
    ProcessSubst {
        /// `<( … )`: the command's output is read; `>( … )`: written to.
        input: bool,
        /// The command inside.
        script: Box<Script>,
    },
}

impl Word {
    /// The word's value after quote removal, when it has no expansion.
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(s) | Part::Quoted(s) => out.push_str(s),
                _ => return None,
            }
        }
        Some(out)
    }

    /// The word's value after quote removal, when it has no expansion, taking
    /// the text rather than copying it; the word itself otherwise.
    pub fn into_literal(self) -> Result<String, Word> {
        if self.has_expansion() {
            return Err(self);
        }
        let mut out = String::new();
        for part in self.parts {
            if let Part::Literal(s) | Part::Quoted(s) = part {
                if out.is_empty() {
                    out = s;
                } else {
                    out.push_str(&s);
                }
            }
        }
        Ok(out)
    }

    /// The word's text after quote removal, with `${NAME}` for a parameter and
    /// `$(…)` for a command substitution: what is known about it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        render(&self.parts, &mut out);
        out
    }

    /// Unquoted `*`, `?`, or `[` with a `]` after it: pathname expansion may
    /// change the word. A `[` that no `]` closes is an ordinary character
    /// (the `[` of `[ -f x ]` is the name of the `test` builtin).
    pub fn has_glob(&self) -> bool {
        let mut open_bracket = false;
        for part in &self.parts {
            let Part::Literal(s) = part else { continue };
            for b in s.bytes() {
                match b {
                    b'*' | b'?' => return true,
                    b'[' => open_bracket = true,
                    b']' if open_bracket => return true,
                    _ => {}
                }
            }
        }
        false
    }

    /// The word's text with every quoted or expanded byte masked out: what
    /// brace expansion would see as syntax.
    pub(crate) fn unquoted_mask(&self) -> Vec<(char, bool)> {
        let mut out = Vec::new();
        for part in &self.parts {
            match part {
                Part::Literal(s) => out.extend(s.chars().map(|c| (c, true))),
                Part::Quoted(s) => out.extend(s.chars().map(|c| (c, false))),
                _ => out.push(('\0', false)),
            }
        }
        out
    }

    /// Whether any part is an expansion (parameter, substitution, arithmetic).
    pub fn has_expansion(&self) -> bool {
        self.parts
            .iter()
            .any(|p| !matches!(p, Part::Literal(_) | Part::Quoted(_)))
    }
}

fn render(parts: &[Part], out: &mut String) {
    for part in parts {
        match part {
            Part::Literal(s) | Part::Quoted(s) => out.push_str(s),
            Part::Param { name, .. } => {
                out.push_str("${");
                out.push_str(name);
                out.push('}');
            }
            Part::CommandSubst(_) => out.push_str("$(…)"),
            Part::Arithmetic(_) => out.push_str("$((…))"),
            Part::ProcessSubst { input, .. } => {
                out.push_str(if *input { "<(…)" } else { ">(…)" })
            }
        }
    }
}

/// Parses a command line.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    parse_nested(src, 0)
}

/// For each parameter of a word's top level (the [`Part::Param`]s of its
/// parts, in order), whether it is inside double quotes (`"$x"`: one field)
/// rather than bare (`$x`: split into fields); `None` when `word` is not one
/// word.
pub(crate) fn param_quoting(word: &str) -> Option<Vec<bool>> {
    let mut p = Parser {
        src: word,
        b: word.as_bytes(),
        pos: 0,
        depth: 0,
        pending: Vec::new(),
        heredocs: Vec::new(),
        quoting: Some(Vec::new()),
    };
    p.word().ok()?;
    if p.pos != word.len() {
        return None;
    }
    let quoting = p.quoting.unwrap_or_default();
    Some(
        quoting
            .into_iter()
            .filter(|&(depth, _)| depth == 0)
            .map(|(_, q)| q)
            .collect(),
    )
}

fn parse_nested(src: &str, depth: usize) -> Result<Script, ParseError> {
    let mut p = Parser {
        src,
        b: src.as_bytes(),
        pos: 0,
        depth,
        pending: Vec::new(),
        heredocs: Vec::new(),
        quoting: None,
    };
    let list = p.list()?;
    p.blanks();
    if p.pos < p.b.len() {
        return Err(p.error(format!("unexpected `{}`", p.peek_token())));
    }
    // A here-document opened on the last line has an empty body: bash runs
    // it (with a warning) as delimited by the end of the text.
    for doc in std::mem::take(&mut p.pending) {
        p.heredocs[doc.slot] = Some(Word::default());
    }
    Ok(Script {
        list,
        heredocs: p
            .heredocs
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect(),
        source: None,
    })
}

struct PendingHereDoc {
    delimiter: String,
    quoted: bool,
    strip_tabs: bool,
    slot: usize,
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
    pending: Vec<PendingHereDoc>,
    heredocs: Vec<Option<Word>>,
    /// For [`param_quoting`]: each parameter met, at which depth, and
    /// whether it was inside double quotes.
    quoting: Option<Vec<(usize, bool)>>,
}

/// Bytes that end an unquoted word.
fn is_meta(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
    )
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Words that open or close a construct when they stand in command position.
const RESERVED_ENDS: &[&str] = &["then", "elif", "else", "fi", "do", "done", "esac", "}"];

impl<'a> Parser<'a> {
    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            offset: self.pos,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.pos + n).copied()
    }

    fn at(&self, s: &str) -> bool {
        self.b[self.pos..].starts_with(s.as_bytes())
    }

    /// A short description of what is next, for errors.
    fn peek_token(&self) -> String {
        let rest = &self.src[self.pos..];
        rest.chars().take(12).collect()
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error("the command nests too deeply"));
        }
        Ok(())
    }

    /// Skips spaces, tabs, line continuations and comments (not newlines).
    fn blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                Some(b'#') => {
                    while let Some(b) = self.peek() {
                        if b == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// Consumes one newline and reads the bodies of the here-documents that
    /// were opened on the line it ends.
    fn newline(&mut self) -> Result<(), ParseError> {
        debug_assert_eq!(self.peek(), Some(b'\n'));
        self.pos += 1;
        for doc in std::mem::take(&mut self.pending) {
            let body = self.heredoc_body(&doc)?;
            self.heredocs[doc.slot] = Some(body);
        }
        Ok(())
    }

    /// Skips blanks and newlines.
    fn linebreaks(&mut self) -> Result<(), ParseError> {
        loop {
            self.blanks();
            if self.peek() == Some(b'\n') {
                self.newline()?;
            } else {
                return Ok(());
            }
        }
    }

    /// The reserved word at the cursor, if the next word is exactly one.
    fn reserved(&self, word: &str) -> bool {
        self.at(word)
            && self
                .b
                .get(self.pos + word.len())
                .is_none_or(|&b| is_meta(b))
    }

    fn expect_reserved(&mut self, word: &str) -> Result<(), ParseError> {
        self.linebreaks()?;
        if self.reserved(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error(format!("expected `{word}`, found `{}`", self.peek_token())))
        }
    }

    /// Whether the list being parsed ends here: end of text, `)`, `;;`, or a
    /// reserved word that closes a construct.
    fn list_ends(&self) -> bool {
        match self.peek() {
            None | Some(b')') => true,
            // `;;`, `;&` and `;;&` end a `case` arm.
            Some(b';') => matches!(self.peek_at(1), Some(b';' | b'&')),
            _ => RESERVED_ENDS.iter().any(|w| self.reserved(w)),
        }
    }

    /// A list of and-or lists, up to whatever ends it.
    fn list(&mut self) -> Result<List, ParseError> {
        let mut items = Vec::new();
        loop {
            self.linebreaks()?;
            if self.list_ends() {
                break;
            }
            let mut item = self.and_or()?;
            self.blanks();
            match self.peek() {
                Some(b';') if !matches!(self.peek_at(1), Some(b';' | b'&')) => self.pos += 1,
                Some(b'&') => {
                    self.pos += 1;
                    item.background = true;
                }
                Some(b'\n') => self.newline()?,
                _ => {
                    items.push(item);
                    break;
                }
            }
            items.push(item);
        }
        Ok(List { items })
    }

    fn and_or(&mut self) -> Result<AndOr, ParseError> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            self.blanks();
            let connector = if self.at("&&") {
                Connector::And
            } else if self.at("||") {
                Connector::Or
            } else {
                break;
            };
            self.pos += 2;
            self.linebreaks()?;
            rest.push((connector, self.pipeline()?));
        }
        Ok(AndOr {
            first,
            rest,
            background: false,
        })
    }

    fn pipeline(&mut self) -> Result<Pipeline, ParseError> {
        self.blanks();
        let mut negated = false;
        let mut timed = false;
        loop {
            if self.reserved("!") {
                self.pos += 1;
                negated = !negated;
            } else if self.reserved("time") {
                self.pos += 4;
                timed = true;
                self.blanks();
                if self.reserved("-p") {
                    self.pos += 2;
                }
            } else {
                break;
            }
            self.blanks();
        }
        let mut commands = vec![self.command()?];
        loop {
            self.blanks();
            if self.peek() == Some(b'|') && self.peek_at(1) != Some(b'|') {
                self.pos += if self.peek_at(1) == Some(b'&') { 2 } else { 1 };
                self.linebreaks()?;
                commands.push(self.command()?);
            } else {
                break;
            }
        }
        Ok(Pipeline {
            negated,
            timed,
            commands,
        })
    }

    fn command(&mut self) -> Result<Command, ParseError> {
        self.blanks();
        self.enter()?;
        let command = self.command_inner();
        self.depth -= 1;
        command
    }

    fn command_inner(&mut self) -> Result<Command, ParseError> {
        let compound = |p: &mut Self, kind, bodies, words| -> Result<Command, ParseError> {
            let redirects = p.trailing_redirects()?;
            Ok(Command::Compound(Compound {
                kind,
                bodies,
                words,
                redirects,
            }))
        };
        match self.peek() {
            None => return Err(self.error("expected a command, found the end of the text")),
            Some(b'(') if self.peek_at(1) == Some(b'(') => {
                self.pos += 2;
                let parts = self.arithmetic()?;
                let words = vec![Word {
                    parts,
                    span: (self.pos, self.pos),
                }];
                return compound(self, CompoundKind::Arithmetic, vec![], words);
            }
            Some(b'(') => {
                self.pos += 1;
                let body = self.list()?;
                self.close_paren()?;
                return compound(self, CompoundKind::Subshell, vec![body], vec![]);
            }
            Some(b')' | b';' | b'&' | b'|') => {
                return Err(self.error(format!("unexpected `{}`", self.peek_token())));
            }
            _ => {}
        }
        if self.reserved("{") {
            self.pos += 1;
            let body = self.list()?;
            self.expect_reserved("}")?;
            return compound(self, CompoundKind::Group, vec![body], vec![]);
        }
        if self.reserved("if") {
            self.pos += 2;
            let mut bodies = vec![self.list()?];
            self.expect_reserved("then")?;
            bodies.push(self.list()?);
            loop {
                self.linebreaks()?;
                if self.reserved("elif") {
                    self.pos += 4;
                    bodies.push(self.list()?);
                    self.expect_reserved("then")?;
                    bodies.push(self.list()?);
                } else if self.reserved("else") {
                    self.pos += 4;
                    bodies.push(self.list()?);
                } else {
                    break;
                }
            }
            self.expect_reserved("fi")?;
            return compound(self, CompoundKind::If, bodies, vec![]);
        }
        for (word, kind) in [
            ("while", CompoundKind::While),
            ("until", CompoundKind::Until),
        ] {
            if self.reserved(word) {
                self.pos += word.len();
                let condition = self.list()?;
                let body = self.do_group()?;
                return compound(self, kind, vec![condition, body], vec![]);
            }
        }
        for (word, kind) in [("for", CompoundKind::For), ("select", CompoundKind::Select)] {
            if self.reserved(word) {
                self.pos += word.len();
                let words = self.for_head()?;
                let body = self.do_group()?;
                return compound(self, kind, vec![body], words);
            }
        }
        if self.reserved("case") {
            self.pos += 4;
            let (words, bodies) = self.case_body()?;
            return compound(self, CompoundKind::Case, bodies, words);
        }
        if self.reserved("[[") {
            self.pos += 2;
            let words = self.test_words()?;
            return compound(self, CompoundKind::Test, vec![], words);
        }
        if self.reserved("coproc") {
            self.pos += 6;
            self.blanks();
            // `coproc NAME compound`: a name only before a compound command.
            let save = self.pos;
            let mut i = self.pos;
            while self.b.get(i).copied().is_some_and(is_name) {
                i += 1;
            }
            if i > self.pos && self.peek().is_some_and(is_name_start) {
                self.pos = i;
                self.blanks();
                if !self.at_compound() {
                    self.pos = save;
                }
            }
            let body = self.command()?;
            return Ok(Command::Compound(Compound {
                kind: CompoundKind::Coproc,
                bodies: vec![single(body)],
                words: vec![],
                redirects: vec![],
            }));
        }
        if self.reserved("function") {
            self.pos += 8;
            self.blanks();
            let name = self.word()?.literal().unwrap_or_default();
            self.blanks();
            if self.at("()") {
                self.pos += 2;
            }
            return self.function_body(name);
        }
        self.simple()
    }

    fn close_paren(&mut self) -> Result<(), ParseError> {
        self.linebreaks()?;
        if self.peek() == Some(b')') {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected `)`, found `{}`", self.peek_token())))
        }
    }

    /// Whether a compound command starts at the cursor.
    fn at_compound(&self) -> bool {
        self.peek() == Some(b'(')
            || ["{", "if", "while", "until", "for", "select", "case", "[["]
                .iter()
                .any(|w| self.reserved(w))
    }

    fn function_body(&mut self, name: String) -> Result<Command, ParseError> {
        self.linebreaks()?;
        let body = self.command()?;
        Ok(Command::Compound(Compound {
            kind: CompoundKind::Function(name),
            bodies: vec![single(body)],
            words: vec![],
            redirects: vec![],
        }))
    }

    fn do_group(&mut self) -> Result<List, ParseError> {
        self.expect_reserved("do")?;
        let body = self.list()?;
        self.expect_reserved("done")?;
        Ok(body)
    }

    /// `NAME [in WORDS…] ;` or `(( init; cond; step ))`, after `for`.
    fn for_head(&mut self) -> Result<Vec<Word>, ParseError> {
        self.blanks();
        if self.at("((") {
            self.pos += 2;
            let parts = self.arithmetic()?;
            self.blanks();
            if self.peek() == Some(b';') {
                self.pos += 1;
            }
            return Ok(vec![Word {
                parts,
                span: (self.pos, self.pos),
            }]);
        }
        let name = self.word()?;
        if name.literal().is_none_or(|n| n.is_empty()) {
            return Err(self.error("expected a variable name after `for`"));
        }
        let mut words = Vec::new();
        self.linebreaks()?;
        if self.reserved("in") {
            self.pos += 2;
            loop {
                self.blanks();
                match self.peek() {
                    Some(b';') => {
                        self.pos += 1;
                        break;
                    }
                    Some(b'\n') => break,
                    None => break,
                    Some(b) if is_meta(b) => {
                        return Err(self.error(format!("unexpected `{}`", self.peek_token())));
                    }
                    _ => words.push(self.word()?),
                }
            }
        } else if self.peek() == Some(b';') {
            self.pos += 1;
        }
        Ok(words)
    }

    /// `WORD in [(]pattern[|pattern]) list ;; … esac`, after `case`.
    fn case_body(&mut self) -> Result<(Vec<Word>, Vec<List>), ParseError> {
        self.blanks();
        let mut words = vec![self.word()?];
        self.expect_reserved("in")?;
        let mut bodies = Vec::new();
        loop {
            self.linebreaks()?;
            if self.reserved("esac") {
                self.pos += 4;
                break;
            }
            if self.peek() == Some(b'(') {
                self.pos += 1;
            }
            loop {
                self.blanks();
                words.push(self.word()?);
                self.blanks();
                match self.peek() {
                    Some(b'|') => self.pos += 1,
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => {
                        return Err(self.error(format!(
                            "expected `)` after a case pattern, found `{}`",
                            self.peek_token()
                        )));
                    }
                }
            }
            bodies.push(self.list()?);
            self.linebreaks()?;
            if self.at(";;&") {
                self.pos += 3;
            } else if self.at(";;") || self.at(";&") {
                self.pos += 2;
            } else if self.reserved("esac") {
                self.pos += 4;
                break;
            } else {
                return Err(self.error(format!(
                    "expected `;;` or `esac`, found `{}`",
                    self.peek_token()
                )));
            }
        }
        Ok((words, bodies))
    }

    /// The operands of `[[ … ]]`, where `<`, `>`, `&&`, `||`, `(`, `)` and `!` are words.
    fn test_words(&mut self) -> Result<Vec<Word>, ParseError> {
        let mut words = Vec::new();
        loop {
            self.linebreaks()?;
            if self.reserved("]]") {
                self.pos += 2;
                return Ok(words);
            }
            let start = self.pos;
            let op = ["&&", "||", "<", ">", "(", ")", "!"]
                .into_iter()
                .find(|op| self.at(op));
            match (op, self.peek()) {
                (_, None) => return Err(self.error("`[[` is not closed by `]]`")),
                (Some(op), _) => {
                    self.pos += op.len();
                    words.push(Word {
                        parts: vec![Part::Literal(op.to_string())],
                        span: (start, self.pos),
                    });
                }
                (None, Some(b';' | b'&' | b'|')) => {
                    return Err(
                        self.error(format!("unexpected `{}` in `[[ ]]`", self.peek_token()))
                    );
                }
                (None, _) => words.push(self.word()?),
            }
        }
    }

    /// Redirections after a compound command.
    fn trailing_redirects(&mut self) -> Result<Vec<Redirect>, ParseError> {
        let mut redirects = Vec::new();
        loop {
            self.blanks();
            match self.redirect()? {
                Some(r) => redirects.push(r),
                None => return Ok(redirects),
            }
        }
    }

    fn simple(&mut self) -> Result<Command, ParseError> {
        let mut cmd = SimpleCommand::default();
        loop {
            self.blanks();
            match self.peek() {
                Some(b'&') if self.peek_at(1) == Some(b'>') => {}
                None | Some(b'\n' | b';' | b'&' | b'|' | b')') => break,
                Some(b'(') => {
                    // `name() { …; }`: a function definition.
                    if cmd.words.len() == 1
                        && cmd.assignments.is_empty()
                        && cmd.redirects.is_empty()
                        && self.at_function_parens()
                    {
                        let name = cmd.words[0].literal().unwrap_or_default();
                        self.skip_function_parens();
                        return self.function_body(name);
                    }
                    return Err(self.error(format!("unexpected `{}`", self.peek_token())));
                }
                _ => {}
            }
            if let Some(redirect) = self.redirect()? {
                cmd.redirects.push(redirect);
                continue;
            }
            if cmd.words.is_empty()
                && let Some(assignment) = self.assignment()?
            {
                cmd.assignments.push(assignment);
                continue;
            }
            if cmd.words.first().is_some_and(declares)
                && let Some(word) = self.array_argument()?
            {
                cmd.words.push(word);
                continue;
            }
            cmd.words.push(self.word()?);
        }
        if cmd.words.is_empty() && cmd.assignments.is_empty() && cmd.redirects.is_empty() {
            return Err(self.error(format!("expected a command, found `{}`", self.peek_token())));
        }
        Ok(Command::Simple(cmd))
    }

    /// `NAME=(…)` given to `declare` and its kin: one word holding the
    /// array's text (`NAME=(a b)`), its elements' expansions kept.
    fn array_argument(&mut self) -> Result<Option<Word>, ParseError> {
        let start = self.pos;
        let Some(assignment) = self.assignment()? else {
            return Ok(None);
        };
        let head = &self.src[start..self.pos];
        let Some(eq) = head.find("=(") else {
            // A scalar assignment: an ordinary word.
            self.pos = start;
            return Ok(None);
        };
        let mut parts = vec![Part::Quoted(head[..eq + 2].to_string())];
        for (k, element) in assignment.value.into_iter().enumerate() {
            if k > 0 {
                push_quoted(&mut parts, ' ');
            }
            parts.extend(element.parts);
        }
        push_quoted(&mut parts, ')');
        Ok(Some(Word {
            parts,
            span: (start, self.pos),
        }))
    }

    fn at_function_parens(&self) -> bool {
        let mut i = self.pos + 1;
        while matches!(self.b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        self.b.get(i) == Some(&b')')
    }

    fn skip_function_parens(&mut self) {
        self.pos += 1;
        self.blanks();
        self.pos += 1;
    }

    /// `NAME=…`, `NAME+=…`, `NAME[i]=…` or `NAME=(…)` at the cursor.
    fn assignment(&mut self) -> Result<Option<Assignment>, ParseError> {
        let start = self.pos;
        if !self.peek().is_some_and(is_name_start) {
            return Ok(None);
        }
        let mut i = self.pos;
        while self.b.get(i).copied().is_some_and(is_name) {
            i += 1;
        }
        let name = self.src[start..i].to_string();
        if self.b.get(i) == Some(&b'[') {
            while i < self.b.len() && self.b[i] != b']' && !is_meta(self.b[i]) {
                i += 1;
            }
            if self.b.get(i) != Some(&b']') {
                return Ok(None);
            }
            i += 1;
        }
        if self.b.get(i) == Some(&b'+') {
            i += 1;
        }
        if self.b.get(i) != Some(&b'=') {
            return Ok(None);
        }
        self.pos = i + 1;
        if self.peek() == Some(b'(') {
            self.pos += 1;
            let mut value = Vec::new();
            loop {
                self.linebreaks()?;
                match self.peek() {
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    None => return Err(self.error("array assignment is not closed by `)`")),
                    Some(b) if is_meta(b) => {
                        return Err(
                            self.error(format!("unexpected `{}` in an array", self.peek_token()))
                        );
                    }
                    _ => value.push(self.word()?),
                }
            }
            return Ok(Some(Assignment { name, value }));
        }
        let value = if self.peek().is_none_or(is_meta) {
            Word {
                parts: vec![],
                span: (self.pos, self.pos),
            }
        } else {
            self.word()?
        };
        Ok(Some(Assignment {
            name,
            value: vec![value],
        }))
    }

    /// A redirection at the cursor, if there is one.
    fn redirect(&mut self) -> Result<Option<Redirect>, ParseError> {
        let start = self.pos;
        let mut i = self.pos;
        while self.b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let fd = if i > start && matches!(self.b.get(i), Some(b'<' | b'>')) {
            self.src[start..i].parse().ok()
        } else {
            i = start;
            None
        };
        let rest = &self.b[i..];
        let (op, len) = if rest.starts_with(b"&>>") {
            (RedirectOp::AppendAll, 3)
        } else if rest.starts_with(b"&>") {
            (RedirectOp::OutputAll, 2)
        } else if rest.starts_with(b"<<<") {
            (RedirectOp::HereString, 3)
        } else if rest.starts_with(b"<<") {
            (RedirectOp::HereDoc, 2)
        } else if rest.starts_with(b"<(") || rest.starts_with(b">(") {
            // A process substitution is a word, not a redirection.
            return Ok(None);
        } else if rest.starts_with(b"<&") {
            (RedirectOp::DupInput, 2)
        } else if rest.starts_with(b">&") {
            (RedirectOp::DupOutput, 2)
        } else if rest.starts_with(b"<>") {
            (RedirectOp::ReadWrite, 2)
        } else if rest.starts_with(b">>") {
            (RedirectOp::Append, 2)
        } else if rest.starts_with(b">|") {
            (RedirectOp::Clobber, 2)
        } else if rest.starts_with(b"<") {
            (RedirectOp::Input, 1)
        } else if rest.starts_with(b">") {
            (RedirectOp::Output, 1)
        } else {
            return Ok(None);
        };
        self.pos = i + len;
        if op == RedirectOp::HereDoc {
            let strip_tabs = self.peek() == Some(b'-');
            if strip_tabs {
                self.pos += 1;
            }
            self.blanks();
            let word = self.word()?;
            let quoted = word.parts.iter().any(|p| matches!(p, Part::Quoted(_)));
            let delimiter = word.text();
            let slot = self.heredocs.len();
            self.heredocs.push(None);
            self.pending.push(PendingHereDoc {
                delimiter,
                quoted,
                strip_tabs,
                slot,
            });
            return Ok(Some(Redirect {
                fd,
                op,
                target: Target::HereDoc(slot),
            }));
        }
        self.blanks();
        if self
            .peek()
            .is_none_or(|b| is_meta(b) && !matches!(b, b'<' | b'>'))
        {
            return Err(self.error(format!("redirection `{}` has no target", op.as_str())));
        }
        let target = self.word()?;
        Ok(Some(Redirect {
            fd,
            op,
            target: Target::Word(target),
        }))
    }

    fn heredoc_body(&mut self, doc: &PendingHereDoc) -> Result<Word, ParseError> {
        let start = self.pos;
        let mut body = String::new();
        loop {
            if self.pos >= self.b.len() {
                break;
            }
            let line_end = self.src[self.pos..]
                .find('\n')
                .map_or(self.b.len(), |i| self.pos + i);
            let mut line = &self.src[self.pos..line_end];
            if doc.strip_tabs {
                line = line.trim_start_matches('\t');
            }
            self.pos = (line_end + 1).min(self.b.len());
            if line == doc.delimiter {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        let span = (start, self.pos);
        if doc.quoted {
            return Ok(Word {
                parts: vec![Part::Quoted(body)],
                span,
            });
        }
        // Unquoted delimiter: the body undergoes expansion, substitutions included.
        let mut sub = Parser {
            src: &body,
            b: body.as_bytes(),
            pos: 0,
            depth: self.depth,
            pending: Vec::new(),
            heredocs: Vec::new(),
            quoting: None,
        };
        let mut parts = sub.expansions(Mode::HereDoc).map_err(|mut e| {
            e.offset += start;
            e
        })?;
        for part in &mut parts {
            if let Part::CommandSubst(script) | Part::ProcessSubst { script, .. } = part
                && script.source.is_none()
            {
                script.source = Some(body.clone());
            }
        }
        Ok(Word { parts, span })
    }

    /// One word at the cursor.
    fn word(&mut self) -> Result<Word, ParseError> {
        let start = self.pos;
        let mut parts: Vec<Part> = Vec::new();
        // `<( … )` / `>( … )` at the start of a word.
        if (self.at("<(") || self.at(">(")) && self.peek_at(2).is_some() {
            let input = self.peek() == Some(b'<');
            self.pos += 2;
            let script = self.subscript()?;
            parts.push(Part::ProcessSubst {
                input,
                script: Box::new(script),
            });
        }
        while let Some(b) = self.peek() {
            match b {
                _ if is_meta(b) => break,
                b'\\' => match self.peek_at(1) {
                    Some(b'\n') => self.pos += 2,
                    Some(_) => {
                        self.pos += 1;
                        let c = self.next_char();
                        push_quoted(&mut parts, c);
                    }
                    None => {
                        self.pos += 1;
                        push_literal(&mut parts, "\\");
                    }
                },
                b'\'' => {
                    self.pos += 1;
                    let end = self.src[self.pos..]
                        .find('\'')
                        .ok_or_else(|| self.error("unterminated single quote"))?;
                    let text = &self.src[self.pos..self.pos + end];
                    self.pos += end + 1;
                    parts.push(Part::Quoted(text.to_string()));
                }
                b'"' => {
                    self.pos += 1;
                    let inner = self.expansions(Mode::DoubleQuote)?;
                    if inner.is_empty() {
                        parts.push(Part::Quoted(String::new()));
                    }
                    parts.extend(inner);
                }
                b'$' => self.dollar(&mut parts, false)?,
                b'`' => {
                    let script = self.backtick()?;
                    parts.push(Part::CommandSubst(Box::new(script)));
                }
                _ => {
                    let run_start = self.pos;
                    while let Some(b) = self.peek() {
                        if is_meta(b) || matches!(b, b'\\' | b'\'' | b'"' | b'$' | b'`') {
                            break;
                        }
                        self.pos += 1;
                    }
                    push_literal(&mut parts, &self.src[run_start..self.pos]);
                }
            }
        }
        if parts.is_empty() {
            return Err(self.error(format!("expected a word, found `{}`", self.peek_token())));
        }
        Ok(Word {
            parts,
            span: (start, self.pos),
        })
    }

    fn next_char(&mut self) -> char {
        let c = self.src[self.pos..].chars().next().unwrap_or('\\');
        self.pos += c.len_utf8();
        c
    }

    /// `$…` at the cursor: a parameter, a substitution, `$'…'`, `$"…"` or a plain `$`.
    fn dollar(&mut self, parts: &mut Vec<Part>, in_quotes: bool) -> Result<(), ParseError> {
        self.pos += 1;
        match self.peek() {
            Some(b'\'') if !in_quotes => {
                self.pos += 1;
                let text = self.ansi_c()?;
                parts.push(Part::Quoted(text));
            }
            Some(b'"') if !in_quotes => {
                self.pos += 1;
                let inner = self.expansions(Mode::DoubleQuote)?;
                if inner.is_empty() {
                    parts.push(Part::Quoted(String::new()));
                }
                parts.extend(inner);
            }
            Some(b'(') if self.peek_at(1) == Some(b'(') => {
                self.pos += 2;
                let inner = self.arithmetic()?;
                parts.push(Part::Arithmetic(inner));
            }
            Some(b'(') => {
                self.pos += 1;
                let script = self.subscript()?;
                parts.push(Part::CommandSubst(Box::new(script)));
            }
            Some(b'{') => {
                self.pos += 1;
                self.enter()?;
                let name_start = self.pos;
                while let Some(b) = self.peek() {
                    if is_name(b) || (self.pos == name_start && matches!(b, b'#' | b'!')) {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                if self.pos == name_start
                    && matches!(
                        self.peek(),
                        Some(b'@' | b'*' | b'?' | b'-' | b'$' | b'!' | b'#')
                    )
                {
                    self.pos += 1;
                }
                let name = self.src[name_start..self.pos].to_string();
                let nested = self.expansions(Mode::Brace)?;
                self.depth -= 1;
                self.param(parts, name, nested, in_quotes);
            }
            Some(b) if is_name_start(b) => {
                let start = self.pos;
                while self.peek().is_some_and(is_name) {
                    self.pos += 1;
                }
                let name = self.src[start..self.pos].to_string();
                self.param(parts, name, vec![], in_quotes);
            }
            Some(b) if b.is_ascii_digit() || b"@*#?-$!".contains(&b) => {
                self.pos += 1;
                self.param(parts, (b as char).to_string(), vec![], in_quotes);
            }
            _ => {
                if in_quotes {
                    parts.push(Part::Quoted("$".into()));
                } else {
                    push_literal(parts, "$");
                }
            }
        }
        Ok(())
    }

    fn param(&mut self, parts: &mut Vec<Part>, name: String, nested: Vec<Part>, in_quotes: bool) {
        if let Some(quoting) = &mut self.quoting {
            quoting.push((self.depth, in_quotes));
        }
        parts.push(Part::Param { name, nested });
    }

    /// The text of `$'…'` with its escapes decoded, after the opening quote.
    fn ansi_c(&mut self) -> Result<String, ParseError> {
        let mut out = String::new();
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error("unterminated $'…' string"));
            };
            match b {
                b'\'' => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.pos += 1;
                    let Some(e) = self.peek() else { continue };
                    self.pos += 1;
                    let simple = match e {
                        b'a' => Some('\x07'),
                        b'b' => Some('\x08'),
                        b'e' | b'E' => Some('\x1b'),
                        b'f' => Some('\x0c'),
                        b'n' => Some('\n'),
                        b'r' => Some('\r'),
                        b't' => Some('\t'),
                        b'v' => Some('\x0b'),
                        b'\\' => Some('\\'),
                        b'\'' => Some('\''),
                        b'"' => Some('"'),
                        b'?' => Some('?'),
                        _ => None,
                    };
                    if let Some(c) = simple {
                        out.push(c);
                        continue;
                    }
                    let (radix, max, value) = match e {
                        b'0'..=b'7' => (8, 2, (e - b'0') as u32),
                        b'x' => (16, 2, 0),
                        b'u' => (16, 4, 0),
                        b'U' => (16, 8, 0),
                        b'c' => {
                            if self.peek().is_some() {
                                let c = self.next_char();
                                out.push(char::from_u32(c as u32 & 0x1f).unwrap_or('\0'));
                            }
                            continue;
                        }
                        _ => {
                            out.push('\\');
                            self.pos -= 1;
                            let c = self.next_char();
                            out.push(c);
                            continue;
                        }
                    };
                    let mut value = value;
                    let mut digits = 0;
                    while digits < max {
                        match self.peek().and_then(|d| (d as char).to_digit(radix)) {
                            Some(d) => {
                                value = value * radix + d;
                                self.pos += 1;
                                digits += 1;
                            }
                            None => break,
                        }
                    }
                    if radix == 16 && digits == 0 {
                        out.push('\\');
                        out.push(e as char);
                    } else if let Some(c) = char::from_u32(value) {
                        out.push(c);
                    }
                }
                _ => {
                    let c = self.next_char();
                    out.push(c);
                }
            }
        }
    }

    /// A nested command list up to its closing `)`: `$( … )`, `<( … )`.
    fn subscript(&mut self) -> Result<Script, ParseError> {
        self.enter()?;
        let list = self.list()?;
        self.close_paren()?;
        self.depth -= 1;
        // Here-document slots are numbered for the whole text: the nested
        // script gets a copy of the bodies read so far.
        let heredocs = self
            .heredocs
            .iter()
            .map(|w| w.clone().unwrap_or_default())
            .collect();
        Ok(Script {
            list,
            heredocs,
            source: None,
        })
    }

    /// The text of a backtick substitution, unescaped and parsed.
    fn backtick(&mut self) -> Result<Script, ParseError> {
        let start = self.pos;
        self.pos += 1;
        let mut text = String::new();
        loop {
            match self.peek() {
                None => {
                    self.pos = start;
                    return Err(self.error("unterminated backtick substitution"));
                }
                Some(b'`') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') if matches!(self.peek_at(1), Some(b'`' | b'\\' | b'$')) => {
                    text.push(self.b[self.pos + 1] as char);
                    self.pos += 2;
                }
                Some(_) => {
                    let c = self.next_char();
                    text.push(c);
                }
            }
        }
        let mut script = parse_nested(&text, self.depth + 1).map_err(|mut e| {
            e.offset += start + 1;
            e
        })?;
        script.source = Some(text);
        Ok(script)
    }

    /// The inside of `$(( … ))` or `(( … ))` up to and including the closing `))`.
    fn arithmetic(&mut self) -> Result<Vec<Part>, ParseError> {
        self.enter()?;
        let parts = self.expansions(Mode::Arithmetic)?;
        self.depth -= 1;
        Ok(parts)
    }

    /// Text in which only expansions are active (double quotes, here-document
    /// bodies, `${…}` operands, arithmetic), up to the mode's end.
    fn expansions(&mut self, mode: Mode) -> Result<Vec<Part>, ParseError> {
        let start = self.pos;
        let mut parts = Vec::new();
        let mut parens = 0usize;
        loop {
            let Some(b) = self.peek() else {
                return match mode {
                    Mode::HereDoc => Ok(parts),
                    Mode::DoubleQuote => {
                        self.pos = start;
                        Err(self.error("unterminated double quote"))
                    }
                    Mode::Brace => Err(self.error("`${` is not closed by `}`")),
                    Mode::Arithmetic => Err(self.error("`((` is not closed by `))`")),
                };
            };
            match (mode, b) {
                (Mode::DoubleQuote, b'"') => {
                    self.pos += 1;
                    return Ok(parts);
                }
                (Mode::Brace, b'}') => {
                    self.pos += 1;
                    return Ok(parts);
                }
                (Mode::Arithmetic, b'(') => {
                    parens += 1;
                    self.pos += 1;
                    push_literal(&mut parts, "(");
                }
                (Mode::Arithmetic, b')') => {
                    if parens > 0 {
                        parens -= 1;
                        self.pos += 1;
                        push_literal(&mut parts, ")");
                    } else if self.peek_at(1) == Some(b')') {
                        self.pos += 2;
                        return Ok(parts);
                    } else {
                        return Err(self.error("`((` is not closed by `))`"));
                    }
                }
                (Mode::Brace, b'\'') => {
                    self.pos += 1;
                    let end = self.src[self.pos..]
                        .find('\'')
                        .ok_or_else(|| self.error("unterminated single quote"))?;
                    parts.push(Part::Quoted(self.src[self.pos..self.pos + end].to_string()));
                    self.pos += end + 1;
                }
                (Mode::Brace, b'"') => {
                    self.pos += 1;
                    let inner = self.expansions(Mode::DoubleQuote)?;
                    parts.extend(inner);
                }
                (_, b'\\') => {
                    let escapable = match mode {
                        Mode::DoubleQuote => b"$`\"\\\n".as_slice(),
                        Mode::HereDoc => b"$`\\\n".as_slice(),
                        Mode::Brace | Mode::Arithmetic => b"$`\"\\\n'}".as_slice(),
                    };
                    match self.peek_at(1) {
                        Some(b'\n') if escapable.contains(&b'\n') => self.pos += 2,
                        Some(e) if escapable.contains(&e) => {
                            self.pos += 1;
                            let c = self.next_char();
                            push_quoted(&mut parts, c);
                        }
                        _ => {
                            self.pos += 1;
                            push_quoted(&mut parts, '\\');
                        }
                    }
                }
                (_, b'$') => self.dollar(&mut parts, mode != Mode::Brace)?,
                (_, b'`') => {
                    let script = self.backtick()?;
                    parts.push(Part::CommandSubst(Box::new(script)));
                }
                _ => {
                    let run_start = self.pos;
                    while let Some(b) = self.peek() {
                        if matches!(b, b'\\' | b'$' | b'`' | b'"' | b'}' | b'\'' | b'(' | b')') {
                            break;
                        }
                        self.pos += 1;
                    }
                    if self.pos == run_start {
                        // A quote or brace that is plain text in this mode.
                        let c = self.next_char();
                        push_quoted(&mut parts, c);
                    } else {
                        let text = &self.src[run_start..self.pos];
                        match parts.last_mut() {
                            Some(Part::Quoted(s)) => s.push_str(text),
                            _ => parts.push(Part::Quoted(text.to_string())),
                        }
                    }
                }
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    DoubleQuote,
    HereDoc,
    Brace,
    Arithmetic,
}

/// `declare`, `local`, `typeset`, `export`, `readonly`: builtins whose
/// arguments may be array assignments.
fn declares(word: &Word) -> bool {
    matches!(
        word.parts.as_slice(),
        [Part::Literal(w)] if matches!(w.as_str(), "declare" | "local" | "typeset" | "export" | "readonly")
    )
}

/// A list of one command.
fn single(command: Command) -> List {
    List {
        items: vec![AndOr {
            first: Pipeline {
                negated: false,
                timed: false,
                commands: vec![command],
            },
            rest: vec![],
            background: false,
        }],
    }
}

fn push_literal(parts: &mut Vec<Part>, text: &str) {
    match parts.last_mut() {
        Some(Part::Literal(s)) => s.push_str(text),
        _ => parts.push(Part::Literal(text.to_string())),
    }
}

fn push_quoted(parts: &mut Vec<Part>, c: char) {
    match parts.last_mut() {
        Some(Part::Quoted(s)) => s.push(c),
        _ => parts.push(Part::Quoted(c.to_string())),
    }
}
