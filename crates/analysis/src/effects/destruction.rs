//! Destroying the system: the root, the home directory or a system directory
//! removed, its mode or owner changed recursively, deleted through `find` or
//! `rsync`, moved away ([`Effect::DestroySystem`](super::Effect::DestroySystem)).

use crate::shell::{Analysis, Arg, Origin};

use super::command::has_flag;
use super::places::Places;

/// Directories whose recursive removal (or recursive mode or owner change) wrecks a system.
const SYSTEM_DIRS: &[&str] = &[
    "/",
    "/home",
    "/root",
    "/etc",
    "/usr",
    "/var",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/boot",
    "/opt",
    "/sys",
    "/proc",
    "/dev",
    "/srv",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/share",
    "/usr/include",
    "/usr/local",
    "/var/lib",
    "/boot/efi",
];

pub(super) fn is_system_path(places: &Places, path: &str) -> bool {
    SYSTEM_DIRS.contains(&path) || places.is_home(path)
}

/// An operand that is a system directory or the home directory, or a glob
/// directly under one (`/*`, `~/*`).
fn catastrophic<'a>(places: &Places, operands: impl Iterator<Item = &'a Arg>) -> Option<&'a str> {
    operands.map(|a| a.value.as_str()).find(|v| {
        let raw = v.trim_end_matches('*').trim_end_matches('/');
        let raw = if raw.is_empty() { "/" } else { raw };
        is_system_path(places, &places.resolve(raw))
    })
}

pub(super) fn destroys(a: &Analysis, i: usize, places: &Places) -> Option<String> {
    let c = &a.commands[i];
    let program = c.program.as_deref()?;
    match program {
        "rm" | "srm" | "wipe" | "shred" if has_flag(c, &["--recursive", "-r", "-R"]) => {
            if has_flag(c, &["--no-preserve-root"]) {
                return Some(format!("{program} --no-preserve-root"));
            }
            catastrophic(places, c.operands()).map(|t| format!("recursively removes {t}"))
        }
        "rm" if has_flag(c, &["--no-preserve-root"]) => Some("rm --no-preserve-root".into()),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl"
            if has_flag(c, &["--recursive", "-R"]) =>
        {
            catastrophic(places, c.operands().skip(1)).map(|t| format!("{program} -R on {t}"))
        }
        "mv" => {
            let operands: Vec<&Arg> = c.operands().collect();
            let sources = operands.len().saturating_sub(1);
            catastrophic(places, operands.into_iter().take(sources))
                .map(|t| format!("moves {t} away"))
        }
        "rsync"
            if c.args
                .iter()
                .any(|x| x.value.starts_with("--delete") || x.value == "--remove-source-files") =>
        {
            let last = c.operands().last()?;
            (!last.value.contains(':') && catastrophic(places, std::iter::once(last)).is_some())
                .then(|| format!("rsync --delete into {}", last.value))
        }
        "find" => {
            let deletes = c.args.iter().any(|x| x.value == "-delete")
                || a.commands.iter().any(|d| {
                    d.origin == Origin::FindExec
                        && d.parent == Some(i)
                        && matches!(
                            d.program.as_deref(),
                            Some("rm" | "shred" | "unlink" | "srm" | "wipe")
                        )
                });
            if !deletes {
                return None;
            }
            let roots = c
                .args
                .iter()
                .take_while(|x| !x.value.starts_with(['-', '(', '!']));
            catastrophic(places, roots).map(|t| format!("find deletes everything under {t}"))
        }
        _ => None,
    }
}

/// A recursive remover or a shredder whose targets nobody sees before it
/// runs: the arguments `xargs` or `parallel` read from their input, or
/// `find -exec`'s `{}` ([`Effect::BlindDestruction`](super::Effect::BlindDestruction)).
pub(super) fn destroys_unseen(c: &crate::shell::Command) -> Option<String> {
    let program = c.program.as_deref()?;
    let destructive = match program {
        "rm" => has_flag(c, &["--recursive", "-r", "-R"]),
        "shred" | "srm" | "wipe" => true,
        _ => false,
    };
    let unseen = match c.origin {
        Origin::Xargs => true,
        Origin::FindExec => c.args.iter().any(|a| a.value.contains("{}")),
        _ => false,
    };
    (destructive && unseen).then(|| format!("{program} removes targets only known when it runs"))
}
