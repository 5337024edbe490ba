//! Properties of the analysis, over generated inputs (proptest): flattening
//! never loses a simple command the line would run, and canonicalising a path
//! is idempotent.

use proptest::prelude::*;
use warden_analysis::path::canonicalize;
use warden_analysis::shell::analyze;

/// A simple command: a program no shell keyword or wrapper is named like (it
/// has a digit), and plain words, some of them quoted.
#[derive(Clone, Debug)]
struct Simple {
    program: String,
    args: Vec<(String, Quote)>,
}

#[derive(Clone, Copy, Debug)]
enum Quote {
    None,
    Single,
    Double,
}

/// A command line built from simple commands.
#[derive(Clone, Debug)]
enum Line {
    Simple(Simple),
    List(Box<Line>, &'static str, Box<Line>),
    Subshell(Box<Line>),
    Group(Box<Line>),
    Substitution(Box<Line>),
    ShellString(Box<Line>),
    If(Box<Line>, Box<Line>),
}

impl Line {
    /// The text; `single` is false inside a `bash -c '…'` string, where a
    /// single quote would end it.
    fn render(&self, single: bool) -> String {
        match self {
            Line::Simple(s) => {
                let mut text = s.program.clone();
                for (word, quote) in &s.args {
                    text.push(' ');
                    match quote {
                        Quote::Single if single => text.push_str(&format!("'{word}'")),
                        Quote::Double | Quote::Single => text.push_str(&format!("\"{word}\"")),
                        Quote::None => text.push_str(word),
                    }
                }
                text
            }
            Line::List(a, op, b) => format!("{} {op} {}", a.render(single), b.render(single)),
            Line::Subshell(a) => format!("( {} )", a.render(single)),
            Line::Group(a) => format!("{{ {}; }}", a.render(single)),
            // `$( (` with a space: `$((` would be arithmetic.
            Line::Substitution(a) => format!("outer9 \"$( {} )\"", a.render(single)),
            Line::ShellString(a) if single => format!("bash -c '{}'", a.render(false)),
            Line::ShellString(a) => format!("( {} )", a.render(false)),
            Line::If(a, b) => format!("if {}; then {}; fi", a.render(single), b.render(single)),
        }
    }

    fn simples<'a>(&'a self, out: &mut Vec<&'a Simple>) {
        match self {
            Line::Simple(s) => out.push(s),
            Line::List(a, _, b) | Line::If(a, b) => {
                a.simples(out);
                b.simples(out);
            }
            Line::Subshell(a) | Line::Group(a) | Line::Substitution(a) | Line::ShellString(a) => {
                a.simples(out)
            }
        }
    }
}

fn simple() -> impl Strategy<Value = Simple> {
    let word = "[a-z0-9._/=-]{1,8}";
    let quote = prop_oneof![Just(Quote::None), Just(Quote::Single), Just(Quote::Double)];
    (
        "[a-z]{1,5}[0-9]",
        prop::collection::vec((word, quote), 0..4),
    )
        .prop_map(|(program, args)| Simple { program, args })
}

fn line() -> impl Strategy<Value = Line> {
    simple()
        .prop_map(Line::Simple)
        .prop_recursive(4, 24, 2, |inner| {
            let op = prop_oneof![Just(";"), Just("&&"), Just("||"), Just("|")];
            prop_oneof![
                (inner.clone(), op, inner.clone()).prop_map(|(a, op, b)| Line::List(
                    Box::new(a),
                    op,
                    Box::new(b)
                )),
                inner.clone().prop_map(|a| Line::Subshell(Box::new(a))),
                inner.clone().prop_map(|a| Line::Group(Box::new(a))),
                inner.clone().prop_map(|a| Line::Substitution(Box::new(a))),
                inner.clone().prop_map(|a| Line::ShellString(Box::new(a))),
                (inner.clone(), inner).prop_map(|(a, b)| Line::If(Box::new(a), Box::new(b))),
            ]
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn flattening_never_loses_a_simple_command_the_line_would_run(line in line()) {
        let text = line.render(true);
        let analysis = analyze(&text);
        prop_assert!(analysis.error.is_none(), "{text}: {:?}", analysis.error);
        let mut expected = Vec::new();
        line.simples(&mut expected);
        for s in expected {
            let args: Vec<&str> = s.args.iter().map(|(w, _)| w.as_str()).collect();
            let found = analysis.commands.iter().any(|c| {
                c.program.as_deref() == Some(s.program.as_str())
                    && c.args.iter().map(|a| a.value.as_str()).collect::<Vec<_>>() == args
            });
            prop_assert!(found, "{text}: {} {:?} is missing", s.program, args);
        }
    }

    #[test]
    fn canonicalising_a_path_is_idempotent(
        path in "[a-z~$/.{}A-Z]{0,24}",
        cwd in prop::option::of("/[a-z./]{0,12}"),
        home in prop::option::of("/[a-z./~]{0,12}"),
    ) {
        let once = canonicalize(&path, cwd.as_deref(), home.as_deref());
        let twice = canonicalize(&once, cwd.as_deref(), home.as_deref());
        prop_assert_eq!(once, twice, "{:?} {:?} {:?}", path, cwd, home);
    }
}

// Found by the path fuzz target (fuzz/regressions/path/): each collapsed a path
// into another that canonicalises differently.

#[test]
fn a_home_path_climbing_above_an_unknown_home_stays_home_relative() {
    assert_eq!(canonicalize("~/../x", Some("/work"), None), "~/../x");
}

#[test]
fn a_file_named_like_the_home_variable_stays_relative() {
    assert_eq!(canonicalize("././${HOME}", None, Some("//")), "./${HOME}");
    assert_eq!(canonicalize("./~/x", None, None), "./~/x");
}
