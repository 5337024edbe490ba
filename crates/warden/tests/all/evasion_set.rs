//! The evasion set of issue 27 (`evasion/commands.tsv`): commands no everyday
//! workflow needs, by class (persistence, defence evasion, code fed to a shell,
//! interpreter one-liners, devices, host state, system files, …), and the
//! read-only forms of the same programs. Each line records the verdict the whole
//! pipeline gives in `full_auto` with no rules and under an allow-all `Bash`
//! rule; a change in either fails here, so every verdict that moves is one the
//! diff of the file shows.

use crate::common::*;
use warden::{Caller, ToolCall, Verdict, Warden};

struct Line {
    number: usize,
    class: String,
    no_rules: Verdict,
    allow_all: Verdict,
    command: String,
}

fn verdict(word: &str, number: usize) -> Verdict {
    match word {
        "allow" => Verdict::Allow,
        "ask" => Verdict::Ask,
        "deny" => Verdict::Deny,
        other => panic!("evasion/commands.tsv line {number}: unknown verdict {other:?}"),
    }
}

/// The set; `⏎` in a command stands for a newline.
fn set() -> Vec<Line> {
    include_str!("evasion/commands.tsv")
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.is_empty())
        .map(|(n, l)| {
            let number = n + 1;
            let fields: Vec<&str> = l.splitn(4, '\t').collect();
            let [class, no_rules, allow_all, command] = fields[..] else {
                panic!("evasion/commands.tsv line {number}: want class, two verdicts, command");
            };
            Line {
                number,
                class: class.to_string(),
                no_rules: verdict(no_rules, number),
                allow_all: verdict(allow_all, number),
                command: command.replace('⏎', "\n"),
            }
        })
        .collect()
}

fn judge(w: &Warden, command: &str) -> Verdict {
    let mut call = ToolCall::new("bash", cmd(command));
    call.context.home = Some("/home/u".into());
    call.context.cwd = Some("/home/u/project".into());
    w.evaluate(&call, Caller::Agent).unwrap().verdict
}

#[test]
fn every_command_of_the_evasion_set_gets_its_recorded_verdicts() {
    let set = set();
    let dangerous = set.iter().filter(|l| l.class != "read_only").count();
    assert!(dangerous >= 100, "{dangerous} dangerous commands");
    let no_rules = warden("permissions:\n  mode: full_auto\n");
    let allow_all = warden("permissions:\n  mode: full_auto\n  allow: [\"Bash(*)\"]\n");
    let mut moved = Vec::new();
    for l in &set {
        let (a, b) = (judge(&no_rules, &l.command), judge(&allow_all, &l.command));
        if (a, b) != (l.no_rules, l.allow_all) {
            moved.push(format!(
                "line {}: {}\t{}\t{}\t{}",
                l.number,
                l.class,
                a.as_str(),
                b.as_str(),
                l.command.replace('\n', "⏎")
            ));
        }
    }
    assert!(
        moved.is_empty(),
        "{} verdicts differ from the recorded ones (now):\n{}",
        moved.len(),
        moved.join("\n")
    );
}

/// Mechanical variants of a command: in a subshell or a group (closed on a
/// line of its own, after a here-document's end), after and before another
/// command, in a `bash -c` or `sh -c` string.
fn variants(command: &str) -> Vec<String> {
    let quoted = command.replace('\'', "'\\''");
    vec![
        format!("({command}\n)"),
        format!("{{ {command}\n}}"),
        format!("true; {command}"),
        format!("true && {command}"),
        format!("{command}\ntrue"),
        format!("bash -c '{quoted}'"),
        format!("sh -c '{quoted}'"),
    ]
}

#[test]
fn no_mechanical_variant_of_a_dangerous_command_is_judged_more_leniently() {
    let no_rules = warden("permissions:\n  mode: full_auto\n");
    let allow_all = warden("permissions:\n  mode: full_auto\n  allow: [\"Bash(*)\"]\n");
    let mut looser = Vec::new();
    for l in set().iter().filter(|l| l.class != "read_only") {
        for variant in variants(&l.command) {
            for (w, recorded, setup) in [
                (&no_rules, l.no_rules, "no rules"),
                (&allow_all, l.allow_all, "allow-all"),
            ] {
                let got = judge(w, &variant);
                if got < recorded {
                    looser.push(format!(
                        "line {} ({setup}): {} for `{variant}`, {} recorded",
                        l.number,
                        got.as_str(),
                        recorded.as_str()
                    ));
                }
            }
        }
    }
    assert!(looser.is_empty(), "{}", looser.join("\n"));
}
