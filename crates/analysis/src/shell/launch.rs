//! Options and configuration that make an ordinary program run another
//! command: git's aliases, pagers, editors, ssh commands and hooks (set with
//! `-c`, `--config-env`, `git config` or the environment), and the same class
//! in other programs a rule may allow wholesale (`tar --to-command`,
//! `rsync -e`, `ssh -o ProxyCommand=…`, `man -P`, `zip -TT`, …). What they run
//! is reported as nested commands, judged like any other; a git alias that
//! names a git command is expanded in place, so that `git -c alias.p=push p`
//! is `git push` to a rule.

use std::borrow::Cow;

use super::words::Arg;

/// What a program's options make it run.
#[derive(Debug, Default)]
pub(crate) struct Launches {
    /// The arguments with git aliases expanded, when any was.
    pub rewrite: Option<Vec<Arg>>,
    pub nested: Vec<Launch>,
}

#[derive(Debug)]
pub(crate) enum Launch {
    /// A command line run by a shell, with its `$0`, `$1`, … when known.
    Shell { text: Arg, positional: Vec<Arg> },
    /// A program run with these arguments (a hook).
    Argv(Vec<Arg>),
    /// Something runs that cannot be known (a configuration file included
    /// from the command line): described.
    Unknown(String),
}

/// Programs whose options are read here; every other program costs one
/// comparison of its first byte.
pub(crate) fn reads_options(program: &str) -> bool {
    matches!(
        program.as_bytes().first(),
        Some(b'g' | b't' | b'r' | b's' | b'm' | b'z')
    ) && matches!(
        program,
        "git" | "tar" | "rsync" | "ssh" | "scp" | "sftp" | "man" | "zip"
    )
}

/// What the options of `program` run.
pub(crate) fn launches(program: &str, args: &[Arg], env: &[(String, Arg)]) -> Launches {
    let mut out = Launches::default();
    match program {
        "git" => git(args, env, &mut out),
        "tar" => {
            for (option, value) in options(args, TAR_WITH_VALUE) {
                let runs = matches!(
                    option,
                    "--to-command"
                        | "-I"
                        | "--use-compress-program"
                        | "-F"
                        | "--info-script"
                        | "--new-volume-script"
                        | "--rsh-command"
                        | "--rmt-command"
                );
                if runs {
                    out.nested.push(shell(value));
                } else if option == "--checkpoint-action"
                    && let Some(command) = value.value.strip_prefix("exec=")
                {
                    out.nested.push(shell(Arg {
                        value: command.to_string(),
                        ..value
                    }));
                }
            }
        }
        "rsync" => {
            for (option, value) in options(args, &["-e", "--rsh", "--rsync-path", "-f", "--filter"])
            {
                if matches!(option, "-e" | "--rsh" | "--rsync-path") {
                    out.nested.push(shell(value));
                }
            }
        }
        "ssh" | "scp" | "sftp" => {
            let with_value = match program {
                "ssh" => SSH_WITH_VALUE,
                _ => SCP_WITH_VALUE,
            };
            for (option, value) in options(args, with_value) {
                match option {
                    "-o" => {
                        if let Some(command) = ssh_command_option(&value.value) {
                            out.nested.push(shell(Arg {
                                value: command.to_string(),
                                ..value
                            }));
                        }
                    }
                    "-S" if program != "ssh" => out.nested.push(shell(value)),
                    "-D" if program == "sftp" => out.nested.push(shell(value)),
                    _ => {}
                }
            }
        }
        "man" => {
            for (option, value) in options(
                args,
                &[
                    "-P", "--pager", "-M", "-L", "-m", "-S", "-s", "-E", "-R", "-T", "-H", "-C",
                    "-p", "-r",
                ],
            ) {
                if matches!(option, "-P" | "--pager" | "-H") {
                    out.nested.push(shell(value));
                }
            }
            for (name, value) in env {
                if matches!(name.as_str(), "MANPAGER" | "PAGER" | "BROWSER") {
                    out.nested.push(shell(value.clone()));
                }
            }
        }
        "zip" => {
            for (option, value) in options(
                args,
                &[
                    "-TT",
                    "--unzip-command",
                    "-b",
                    "-n",
                    "-t",
                    "-tt",
                    "-x",
                    "-i",
                    "-P",
                    "-O",
                    "-Z",
                ],
            ) {
                if matches!(option, "-TT" | "--unzip-command") {
                    out.nested.push(shell(value));
                }
            }
        }
        _ => {}
    }
    out
}

const TAR_WITH_VALUE: &[&str] = &[
    "-f",
    "--file",
    "-C",
    "--directory",
    "-I",
    "--use-compress-program",
    "-F",
    "--info-script",
    "--new-volume-script",
    "--to-command",
    "--checkpoint-action",
    "--rsh-command",
    "--rmt-command",
    "-T",
    "--files-from",
    "-X",
    "--exclude-from",
    "-b",
    "--blocking-factor",
    "-H",
    "--format",
    "-K",
    "--starting-file",
    "-L",
    "--tape-length",
    "-N",
    "--newer",
    "-V",
    "--label",
    "-g",
    "--listed-incremental",
];
const SSH_WITH_VALUE: &[&str] = &[
    "-o", "-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-p",
    "-Q", "-R", "-S", "-W", "-w",
];
const SCP_WITH_VALUE: &[&str] = &[
    "-o", "-S", "-c", "-D", "-F", "-i", "-J", "-l", "-P", "-X", "-B", "-b", "-R", "-s",
];

/// The command of an ssh `-o` option that runs one locally:
/// `ProxyCommand=…`, `LocalCommand=…`, `KnownHostsCommand=…` (also written
/// with a space instead of `=`).
fn ssh_command_option(option: &str) -> Option<&str> {
    let (key, value) = option
        .split_once('=')
        .or_else(|| option.split_once(char::is_whitespace))?;
    let key = key.trim();
    ["proxycommand", "localcommand", "knownhostscommand"]
        .iter()
        .any(|k| key.eq_ignore_ascii_case(k))
        .then(|| value.trim())
        .filter(|v| !v.eq_ignore_ascii_case("none") && !v.is_empty())
}

fn shell(text: Arg) -> Launch {
    Launch::Shell {
        text,
        positional: Vec::new(),
    }
}

/// The options among `args` that take a value, with it: `--opt=value`,
/// `--opt value` and `-o value` / `-ovalue` for the options in `with_value`.
/// Options end at `--`; operands are skipped.
fn options<'a>(
    args: &'a [Arg],
    with_value: &'a [&'a str],
) -> impl Iterator<Item = (&'a str, Arg)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        while let Some(arg) = args.get(i) {
            i += 1;
            let v = arg.value.as_str();
            if v == "--" {
                i = args.len();
                return None;
            }
            if let Some((option, value)) = v.split_once('=').filter(|(o, _)| o.starts_with("--")) {
                return Some((
                    option,
                    Arg {
                        value: value.to_string(),
                        ..arg.clone()
                    },
                ));
            }
            if let Some(option) = with_value.iter().find(|o| **o == v) {
                let value = args.get(i).cloned()?;
                i += 1;
                return Some((option, value));
            }
            // `-oValue`: a short option with its value attached.
            if !v.starts_with("--")
                && v.len() > 2
                && let Some(option) = with_value
                    .iter()
                    .find(|o| o.len() == 2 && v.starts_with(**o))
            {
                return Some((
                    option,
                    Arg {
                        value: v[2..].to_string(),
                        ..arg.clone()
                    },
                ));
            }
        }
        None
    })
}

// --- git ----------------------------------------------------------------------

/// git's global options that take a value as the next argument.
const GIT_GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--config-env",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--attr-source",
];

/// Configuration keys (lower case; `*` stands for a subsection) whose value
/// is a command git runs through the shell.
const GIT_COMMAND_KEYS: &[&str] = &[
    "core.pager",
    "pager.*",
    "core.editor",
    "sequence.editor",
    "core.sshcommand",
    "core.askpass",
    "core.fsmonitor",
    "core.gitproxy",
    "core.alternaterefscommand",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "gpg.program",
    "gpg.*.program",
    "sendemail.sendmailcmd",
    "sendemail.tocmd",
    "sendemail.cccmd",
    "web.browser",
    "browser.*.cmd",
    "mergetool.*.cmd",
    "difftool.*.cmd",
    "man.*.cmd",
    "uploadpack.packobjectshook",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "credential.helper",
    "credential.*.helper",
    "ssh.variant",
];

/// Environment variables whose value is a command git runs.
const GIT_COMMAND_ENV: &[&str] = &[
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "EDITOR",
    "VISUAL",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND",
];

/// git's subcommand options that name a command to run.
const GIT_SUBCOMMAND_COMMANDS: &[(&str, &[&str])] = &[
    ("clone", &["-u", "--upload-pack"]),
    ("fetch", &["--upload-pack"]),
    ("pull", &["--upload-pack"]),
    ("ls-remote", &["--upload-pack"]),
    ("push", &["--receive-pack", "--exec"]),
    ("archive", &["--exec"]),
    ("rebase", &["-x", "--exec"]),
    ("difftool", &["-x", "--extcmd"]),
    ("grep", &["-O", "--open-files-in-pager"]),
    (
        "send-email",
        &["--sendmail-cmd", "--to-cmd", "--cc-cmd", "--smtp-server"],
    ),
    ("instaweb", &["--browser", "-b", "--httpd", "-d"]),
    (
        "filter-branch",
        &[
            "--env-filter",
            "--tree-filter",
            "--index-filter",
            "--parent-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
        ],
    ),
];

/// The hooks each subcommand may run (from githooks(5)).
const GIT_HOOKS: &[(&str, &[&str])] = &[
    (
        "commit",
        &[
            "pre-commit",
            "prepare-commit-msg",
            "commit-msg",
            "post-commit",
        ],
    ),
    (
        "merge",
        &[
            "pre-merge-commit",
            "prepare-commit-msg",
            "commit-msg",
            "post-merge",
        ],
    ),
    (
        "pull",
        &[
            "pre-merge-commit",
            "post-merge",
            "post-checkout",
            "post-rewrite",
        ],
    ),
    ("push", &["pre-push", "reference-transaction"]),
    ("checkout", &["post-checkout"]),
    ("switch", &["post-checkout"]),
    ("clone", &["post-checkout"]),
    ("rebase", &["pre-rebase", "post-rewrite", "post-checkout"]),
    (
        "am",
        &["applypatch-msg", "pre-applypatch", "post-applypatch"],
    ),
    ("worktree", &["post-checkout"]),
    ("gc", &["pre-auto-gc"]),
    ("send-email", &["sendemail-validate"]),
];

/// A configuration key in lower case but for its subsection (git compares
/// section and variable names without case, subsections with it).
fn config_key(key: &str) -> String {
    match (key.find('.'), key.rfind('.')) {
        (Some(first), Some(last)) if first != last => format!(
            "{}{}{}",
            key[..first].to_ascii_lowercase(),
            &key[first..last],
            key[last..].to_ascii_lowercase()
        ),
        _ => key.to_ascii_lowercase(),
    }
}

/// Whether a key (as from [`config_key`]) holds a command.
fn is_command_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let (Some(first), Some(last)) = (lower.find('.'), lower.rfind('.')) else {
        return false;
    };
    let (section, variable) = (&lower[..first], &lower[last + 1..]);
    let has_subsection = first != last;
    GIT_COMMAND_KEYS.iter().any(|pattern| {
        let parts: Vec<&str> = pattern.split('.').collect();
        match parts.as_slice() {
            [s, "*"] => *s == section && !has_subsection,
            [s, v] => *s == section && *v == variable && !has_subsection,
            [s, _, v] => *s == section && *v == variable && has_subsection,
            _ => false,
        }
    })
}

/// `-c` settings and the like, as (key, value) with the key in config form.
type Config = Vec<(String, Arg)>;

fn git(args: &[Arg], env: &[(String, Arg)], out: &mut Launches) {
    let mut config: Config = Vec::new();
    let mut exec_path: Option<Arg> = None;
    env_config(env, &mut config);
    // Borrowed until an alias is expanded: most git commands have none.
    let mut args: Cow<[Arg]> = Cow::Borrowed(args);
    let mut expansions = 0;
    let mut rewritten = false;
    let mut i = 0;
    // Global options, then the subcommand, which may be an alias to expand.
    let sub = loop {
        let Some(arg) = args.get(i) else { break None };
        let v = arg.value.as_str();
        if !v.starts_with('-') {
            let name = v.to_ascii_lowercase();
            let alias = config
                .iter()
                .rev()
                .find(|(k, _)| {
                    k.strip_prefix("alias.")
                        .is_some_and(|a| a.eq_ignore_ascii_case(&name))
                })
                .map(|(_, value)| value.clone());
            match alias {
                Some(value) if expansions < 10 => {
                    expansions += 1;
                    if let Some(text) = value.value.strip_prefix('!') {
                        // A shell alias: `sh -c 'ALIAS "$@"' ALIAS ARGS…`.
                        let mut positional = vec![Arg {
                            value: text.to_string(),
                            literal: true,
                            glob: false,
                        }];
                        positional.extend(args[i + 1..].iter().cloned());
                        out.nested.push(Launch::Shell {
                            text: Arg {
                                value: format!("{text} \"$@\""),
                                ..value
                            },
                            positional,
                        });
                        break None;
                    }
                    if !value.literal {
                        out.nested.push(Launch::Unknown(format!(
                            "git alias '{v}' has a computed definition"
                        )));
                        break None;
                    }
                    match super::words::split_words(&value.value) {
                        Some(words) if !words.is_empty() => {
                            args.to_mut().splice(i..=i, words);
                            rewritten = true;
                            continue;
                        }
                        _ => {
                            out.nested.push(Launch::Unknown(format!(
                                "git alias '{v}' = '{}' does not split into words",
                                value.value
                            )));
                            break None;
                        }
                    }
                }
                _ => break Some(i),
            }
        }
        let (option, attached) = match v.split_once('=') {
            Some((o, value)) if o.starts_with("--") => (o, Some(value)),
            _ => (v, None),
        };
        let value = match attached {
            Some(value) => Some(Arg {
                value: value.to_string(),
                ..arg.clone()
            }),
            None if GIT_GLOBAL_WITH_VALUE.contains(&option) => {
                i += 1;
                args.get(i).cloned()
            }
            None => None,
        };
        i += 1;
        let Some(value) = value else { continue };
        match option {
            "-c" => setting(&value, &mut config),
            "--config-env" => {
                // `key=ENVVAR`: the value is the variable's, known only when
                // the command line sets it.
                if let Some((key, var)) = value.value.split_once('=') {
                    let known = env
                        .iter()
                        .rev()
                        .find(|(n, _)| n == var)
                        .map(|(_, a)| a.clone());
                    let value = known.unwrap_or(Arg {
                        value: format!("${{{var}}}"),
                        literal: false,
                        glob: false,
                    });
                    config.push((config_key(key), value));
                }
            }
            "--exec-path" => exec_path = Some(value),
            _ => {}
        }
    };
    if rewritten {
        out.rewrite = Some(args.to_vec());
    }
    // What the configuration runs.
    for (key, value) in &config {
        if is_command_key(key) {
            out.nested.push(config_command(key, value.clone()));
        } else if key == "core.hookspath" {
            let hooks = sub
                .and_then(|s| GIT_HOOKS.iter().find(|(name, _)| *name == args[s].value))
                .map_or(&["pre-commit"][..], |(_, hooks)| hooks);
            for hook in hooks {
                out.nested.push(Launch::Argv(vec![Arg {
                    value: format!("{}/{hook}", value.value.trim_end_matches('/')),
                    ..value.clone()
                }]));
            }
        } else if key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"))
        {
            out.nested.push(Launch::Unknown(format!(
                "git reads configuration (aliases, pagers, hooks) from {}",
                value.value
            )));
        }
    }
    for (name, value) in env {
        if GIT_COMMAND_ENV.contains(&name.as_str()) {
            out.nested.push(shell(value.clone()));
        } else if name == "GIT_EXEC_PATH" {
            exec_path = Some(value.clone());
        }
    }
    let Some(s) = sub else { return };
    let subcommand = args[s].value.as_str();
    if let Some(dir) = exec_path {
        // git runs its subcommands from there.
        out.nested.push(Launch::Argv(vec![Arg {
            value: format!("{}/git-{subcommand}", dir.value.trim_end_matches('/')),
            ..dir
        }]));
    }
    let rest = &args[s + 1..];
    match subcommand {
        "config" => config_set(rest, out),
        "submodule" => {
            // `git submodule [--quiet] foreach [--recursive] COMMAND…`
            if let Some(k) = rest.iter().position(|a| a.value == "foreach") {
                let words: Vec<&Arg> = rest[k + 1..]
                    .iter()
                    .skip_while(|a| a.value.starts_with('-'))
                    .collect();
                if !words.is_empty() {
                    out.nested.push(shell(Arg::joined(words)));
                }
            }
        }
        "bisect" if rest.first().is_some_and(|a| a.value == "run") && rest.len() > 1 => {
            out.nested.push(Launch::Argv(rest[1..].to_vec()));
        }
        "clone" => {
            let mut clone_config = Vec::new();
            for (option, value) in options(rest, &["-c", "--config"]) {
                if matches!(option, "-c" | "--config") {
                    setting(&value, &mut clone_config);
                }
            }
            for (key, value) in clone_config {
                if is_command_key(&key) {
                    out.nested.push(config_command(&key, value));
                }
            }
        }
        _ => {}
    }
    if let Some((_, commands)) = GIT_SUBCOMMAND_COMMANDS
        .iter()
        .find(|(name, _)| *name == subcommand)
    {
        for (option, value) in options(rest, commands) {
            if commands.contains(&option) {
                out.nested.push(shell(value));
            }
        }
    }
}

/// A `-c key=value` setting (a key alone means `true`).
fn setting(value: &Arg, config: &mut Config) {
    let (key, v) = value
        .value
        .split_once('=')
        .unwrap_or((&value.value, "true"));
    config.push((
        config_key(key),
        Arg {
            value: v.to_string(),
            ..value.clone()
        },
    ));
}

/// A command-valued setting as what runs: `credential.helper` names a
/// `git credential-NAME` helper unless it is a path or starts with `!`.
fn config_command(key: &str, value: Arg) -> Launch {
    let helper = key.starts_with("credential.") && key.ends_with(".helper");
    match value.value.strip_prefix('!') {
        Some(text) => shell(Arg {
            value: text.to_string(),
            ..value
        }),
        None if helper && !value.value.contains('/') => shell(Arg {
            value: format!("git credential-{}", value.value),
            ..value
        }),
        None => shell(value),
    }
}

/// The configuration the environment gives git: `GIT_CONFIG_COUNT` with
/// `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`, and `GIT_CONFIG_PARAMETERS`.
fn env_config(env: &[(String, Arg)], config: &mut Config) {
    let get = |name: &str| env.iter().rev().find(|(n, _)| n == name).map(|(_, a)| a);
    if let Some(count) = get("GIT_CONFIG_COUNT").and_then(|c| c.value.parse::<usize>().ok()) {
        for n in 0..count.min(100) {
            if let (Some(key), Some(value)) = (
                get(&format!("GIT_CONFIG_KEY_{n}")),
                get(&format!("GIT_CONFIG_VALUE_{n}")),
            ) {
                config.push((config_key(&key.value), value.clone()));
            }
        }
    }
    if let Some(parameters) = get("GIT_CONFIG_PARAMETERS") {
        // `'key'='value' 'key2'='value2'`, as git quotes them.
        for pair in parameters.value.split("' '") {
            let pair = pair.trim_matches('\'');
            if let Some((key, value)) = pair.split_once("'='").or_else(|| pair.split_once('=')) {
                config.push((
                    config_key(key),
                    Arg {
                        value: value.to_string(),
                        ..parameters.clone()
                    },
                ));
            }
        }
    }
}

/// `git config [--global|--file F|…] [set] KEY VALUE`: a setting that runs a
/// command later is judged now, and an alias to a git command as that command.
fn config_set(rest: &[Arg], out: &mut Launches) {
    const WITH_VALUE: &[&str] = &[
        "-f",
        "--file",
        "--blob",
        "--type",
        "--default",
        "--comment",
        "--value",
    ];
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(arg) = rest.get(i) {
        let v = arg.value.as_str();
        if WITH_VALUE.contains(&v) {
            i += 2;
            continue;
        }
        if v.starts_with('-') && v != "-" {
            // Any other option but setting ones (`--add`, `--replace-all`) reads.
            if matches!(
                v,
                "--get"
                    | "--get-all"
                    | "--get-regexp"
                    | "--list"
                    | "-l"
                    | "--unset"
                    | "--unset-all"
                    | "-e"
                    | "--edit"
                    | "--remove-section"
                    | "--rename-section"
            ) {
                return;
            }
            i += 1;
            continue;
        }
        operands.push(arg);
        i += 1;
    }
    let operands: &[&Arg] = match operands.as_slice() {
        [first, rest @ ..] if first.value == "set" => rest,
        [first, ..]
            if matches!(
                first.value.as_str(),
                "get" | "list" | "unset" | "rename-section" | "remove-section" | "edit"
            ) =>
        {
            return;
        }
        all => all,
    };
    let [key, value, ..] = operands else { return };
    let key = config_key(&key.value);
    if is_command_key(&key) {
        out.nested.push(config_command(&key, (*value).clone()));
    } else if key.starts_with("alias.") {
        match value.value.strip_prefix('!') {
            Some(text) => out.nested.push(shell(Arg {
                value: text.to_string(),
                ..(*value).clone()
            })),
            None => out.nested.push(shell(Arg {
                value: format!("git {}", value.value),
                ..(*value).clone()
            })),
        }
    } else if key == "core.hookspath" {
        out.nested.push(Launch::Argv(vec![Arg {
            value: format!("{}/pre-commit", value.value.trim_end_matches('/')),
            ..(*value).clone()
        }]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_keys_match_with_and_without_subsections() {
        assert!(is_command_key("core.pager"));
        assert!(is_command_key("pager.log"));
        assert!(is_command_key("diff.Word.textconv"));
        assert!(is_command_key("credential.https://example.com.helper"));
        assert!(!is_command_key("core.autocrlf"));
        assert!(!is_command_key("diff.textconv"));
        assert!(!is_command_key("user.name"));
    }

    #[test]
    fn config_keys_keep_the_case_of_their_subsection() {
        assert_eq!(config_key("Alias.P"), "alias.p");
        assert_eq!(config_key("Diff.Word.TextConv"), "diff.Word.textconv");
    }

    #[test]
    fn every_option_reading_program_passes_the_first_byte_filter() {
        for p in ["git", "tar", "rsync", "ssh", "scp", "sftp", "man", "zip"] {
            assert!(reads_options(p), "{p}");
        }
    }
}
