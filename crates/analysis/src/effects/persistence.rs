//! Persistence: something set up to run later, unseen: scheduled jobs, service
//! units enabled or written, shell and session start-up files, authorized keys,
//! git hooks and hook paths, preload libraries
//! ([`Effect::Persistence`](super::Effect::Persistence)).

use crate::shell::Command;

use super::command::has_flag;

/// Files and directories (canonical, lower case) whose writing makes code run
/// later: at boot, at login, on a schedule, on every program start.
const SYSTEM: &[&str] = &[
    "/etc/cron.d",
    "/etc/cron.hourly",
    "/etc/cron.daily",
    "/etc/cron.weekly",
    "/etc/cron.monthly",
    "/etc/crontab",
    "/etc/anacrontab",
    "/var/spool/cron",
    "/etc/systemd",
    "/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/usr/lib/systemd/user",
    "/etc/init.d",
    "/etc/rc.local",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/zsh",
    "/etc/environment",
    "/etc/ld.so.preload",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/xdg/autostart",
    "/etc/udev/rules.d",
    "/etc/update-motd.d",
    // Environment files read at login, and version-control settings that
    // name programs to run (hooks, pagers, editors).
    "/etc/security/pam_env.conf",
    "/etc/gitconfig",
    "/etc/mercurial/hgrc",
    "/etc/mercurial/hgrc.d",
];

/// The same under a home directory (relative to it).
const HOME: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".config/fish/config.fish",
    ".config/fish/conf.d",
    ".config/systemd",
    ".config/autostart",
    ".config/environment.d",
    ".pam_environment",
    ".xinitrc",
    ".xprofile",
    ".xsession",
    ".ssh/authorized_keys",
    ".ssh/authorized_keys2",
    ".ssh/rc",
    ".ssh/environment",
    ".local/share/systemd",
    ".bash_aliases",
    ".xsessionrc",
    ".config/plasma-workspace/env",
    // Version-control settings: a hook, pager, editor or filter they name runs.
    ".gitconfig",
    ".config/git/config",
    ".hgrc",
    ".config/hg/hgrc",
    // Interpreters', editors' and debuggers' start-up files: code run each start.
    ".vimrc",
    ".config/nvim/init.vim",
    ".config/nvim/init.lua",
    ".emacs",
    ".emacs.d/init.el",
    ".gdbinit",
    ".config/gdb/gdbinit",
    ".lldbinit",
    ".irbrc",
    ".pryrc",
    ".rprofile",
    ".perldb",
    ".ipython/profile_default/startup",
    ".config/ipython/profile_default/startup",
];

fn under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|r| r.is_empty() || r.starts_with('/'))
}

/// Whether writing the canonical `path` sets up persistence (`home`: the
/// home directory in comparison form).
pub(super) fn is_persistence_file(path: &str, home: &str) -> bool {
    if SYSTEM.iter().any(|d| under(path, d)) {
        return true;
    }
    // Any account's home: `/root/.ssh/authorized_keys`, `/home/x/.bashrc`.
    let rest = path
        .strip_prefix(&format!("{home}/"))
        .or_else(|| path.strip_prefix("/root/"))
        .or_else(|| {
            path.strip_prefix("/home/")
                .and_then(|r| r.split_once('/').map(|(_, r)| r))
        });
    if rest.is_some_and(|r| HOME.iter().any(|f| under(r, f))) {
        return true;
    }
    // A git hook, a repository's own settings (`.git/config`, `.hg/hgrc`:
    // hooks, pagers, filters), and Python's start-up hooks (`*.pth` in
    // site-packages).
    path.contains("/.git/hooks/")
        || path.ends_with("/.git/config")
        || path.ends_with("/.hg/hgrc")
        || (path.ends_with(".pth") && path.contains("-packages/"))
        || path.ends_with("/sitecustomize.py")
        || path.ends_with("/usercustomize.py")
}

/// Git settings whose value is a program git runs.
const RUNS_A_PROGRAM: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.fsmonitor",
    "core.askpass",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "pager.log",
    "pager.diff",
    "pager.show",
    "core.gitproxy",
    "init.templatedir",
    "uploadpack.packobjectshook",
    "include.path",
];

/// Whether a git setting names a program git runs later: the list above, a
/// filter's or a diff or merge driver's command (`filter.x.clean`,
/// `diff.x.textconv`, `merge.x.driver`), an included file's path.
fn runs_a_program(setting: &str) -> bool {
    if RUNS_A_PROGRAM.contains(&setting) {
        return true;
    }
    let (section, key) = match (setting.split_once('.'), setting.rsplit_once('.')) {
        (Some((section, _)), Some((_, key))) => (section, key),
        _ => return false,
    };
    matches!(
        (section, key),
        ("filter", "clean" | "smudge" | "process")
            | ("diff", "textconv" | "command")
            | ("merge", "driver")
            | ("includeif", "path")
    )
}

/// Programs that install something to run later.
pub(super) fn schedules(c: &Command) -> Option<String> {
    let program = c.program.as_deref()?;
    if !matches!(program, "crontab" | "at" | "batch" | "systemctl" | "git") {
        return None;
    }
    let operands: Vec<&str> = c.operands().map(|a| a.value.as_str()).collect();
    match program {
        // `crontab -` or `crontab FILE` installs a table; `-e` edits it; `-l` lists.
        "crontab" if !has_flag(c, &["-l", "-r"]) => Some("crontab installs a job table".into()),
        "at" if !has_flag(c, &["-l", "-r", "-d", "-c"]) => {
            Some("at schedules a job to run later".into())
        }
        "batch" => Some("batch schedules a job to run later".into()),
        "systemctl" => operands
            .iter()
            .find(|o| matches!(**o, "enable" | "reenable" | "link" | "preset" | "add-wants"))
            .map(|o| format!("systemctl {o} makes a unit start by itself")),
        "git" => {
            let reads = has_flag(
                c,
                &[
                    "--get",
                    "--get-all",
                    "--get-regexp",
                    "--unset",
                    "--unset-all",
                    "--list",
                    "-l",
                ],
            );
            // Compared without a lower-cased copy of every argument.
            const HOOKS_PATH: &str = "core.hookspath";
            let setting = c
                .args
                .iter()
                .find(|a| {
                    a.value
                        .as_bytes()
                        .get(..HOOKS_PATH.len())
                        .is_some_and(|p| p.eq_ignore_ascii_case(HOOKS_PATH.as_bytes()))
                })
                .map(|a| a.value.to_ascii_lowercase());
            if let Some(setting) = setting
                && (!reads || setting.contains('='))
            {
                return Some("git runs hooks from another directory (core.hooksPath)".into());
            }
            // A stored setting that names a program runs it on later git commands.
            let stored = operands.first() == Some(&"config")
                && !reads
                && operands.len() >= 3
                && (runs_a_program(&operands[1].to_ascii_lowercase())
                    // An alias or a credential helper runs a program when
                    // spelt `!shell text` (a helper also as a path).
                    || (operands[1].to_ascii_lowercase().starts_with("alias.")
                        && operands[2].starts_with('!'))
                    || (operands[1].eq_ignore_ascii_case("credential.helper")
                        && (operands[2].starts_with('!') || operands[2].starts_with('/'))));
            stored.then(|| format!("git stores {} to run later", operands[1]))
        }
        _ => None,
    }
}
