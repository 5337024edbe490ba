//! Files a command writes (redirections, `tee`, `dd of=`, `cp`/`mv` targets, …),
//! and the ones that matter: block devices and account or privilege files.

use crate::shell::Command;

use super::command::value_of;

/// The files a command writes, removes or changes the mode or owner of: its
/// redirections' targets and, for the programs that do so, the operands
/// concerned (`cp`'s destination, `mv`'s sources and destination, `rm`'s
/// operands, `sed -i`'s files, `dd of=`, `tee`, `curl -o`, …).
pub fn written(c: &Command) -> Vec<&str> {
    let mut out: Vec<&str> = c
        .redirects
        .iter()
        .filter(|r| {
            r.op.writes()
                && !matches!(
                    r.target.value.as_str(),
                    "/dev/null" | "/dev/stdout" | "/dev/stderr"
                )
        })
        .map(|r| r.target.value.as_str())
        .collect();
    let Some(program) = c.program.as_deref() else {
        return out;
    };
    let operands = || c.operands().map(|a| a.value.as_str());
    match program {
        "tee" | "rm" | "unlink" | "shred" | "truncate" | "wipe" | "srm" | "rmdir" | "touch"
        | "vi" | "vim" | "nvim" | "nano" | "emacs" | "ed" | "ex" | "pico" | "joe" | "vipw"
        | "vigr" => out.extend(operands()),
        "ddrescue" | "dd_rescue" => out.extend(operands().nth(1)),
        // Deleting is writing: archivers that remove what they archive (every
        // operand, the archive included, which they write anyway), trash
        // commands, and find's starting points when it deletes or runs a
        // remover on what it finds (rsync's removed sources: below).
        "tar" | "bsdtar" if c.args.iter().any(|a| a.value == "--remove-files") => {
            out.extend(operands())
        }
        "zip"
            if c.args.iter().any(|a| {
                a.value == "--move"
                    || (!a.value.starts_with("--")
                        && a.value.starts_with('-')
                        && a.value.contains('m'))
            }) =>
        {
            out.extend(operands())
        }
        "7z" | "7za" | "7zr" if c.args.iter().any(|a| a.value == "-sdel") => out.extend(operands()),
        "trash-put" | "trash" | "gio-trash" => out.extend(operands()),
        "gio" if matches!(operands().next(), Some("trash" | "remove" | "rm")) => {
            out.extend(operands().skip(1))
        }
        "find" if find_removes(c) => {
            // The starting points follow find's own options (`-L`, `-O3`, `-D x`).
            let mut args = c.args.iter().map(|a| a.value.as_str()).peekable();
            while let Some(o) =
                args.next_if(|a| matches!(*a, "-H" | "-L" | "-P" | "-D") || a.starts_with("-O"))
            {
                if o == "-D" {
                    args.next();
                }
            }
            out.extend(args.take_while(|a| !(a.starts_with('-') || *a == "(" || *a == "!")))
        }
        "cp" | "install" | "ln" | "rsync" => {
            if let Some(dir) = value_of(c, &["-t", "--target-directory"]) {
                out.push(dir);
            } else if let Some(last) = operands().last() {
                out.push(last);
            }
            if program == "rsync" && c.args.iter().any(|a| a.value == "--remove-source-files") {
                let all: Vec<&str> = operands().collect();
                let sources = &all[..all.len().saturating_sub(1)];
                out.extend(sources.iter().filter(|s| !s.contains(':')));
            }
        }
        "mv" => out.extend(operands()),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => out.extend(operands().skip(1)),
        "sed" | "perl"
            if c.args.iter().any(|a| {
                a.value.starts_with("-i")
                    || a.value.starts_with("--in-place")
                    || (program == "perl" && a.value.starts_with("-p") && a.value.contains('i'))
            }) =>
        {
            out.extend(operands())
        }
        "dd" | "dc3dd" => out.extend(c.args.iter().filter_map(|a| {
            a.value
                .strip_prefix("of=")
                .or_else(|| a.value.strip_prefix("hof="))
                .or_else(|| a.value.strip_prefix("ofs="))
        })),
        "curl" => out.extend(value_of(c, &["-o", "--output"])),
        "wget" => out.extend(value_of(c, &["-O", "--output-document"])),
        _ => {}
    }
    out
}

/// Whether `find` deletes what it finds (`-delete`) or runs a remover on it
/// (`-exec rm {} +`).
fn find_removes(c: &Command) -> bool {
    c.args.iter().any(|a| a.value == "-delete")
        || c.args.windows(2).any(|w| {
            matches!(w[0].value.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                && matches!(
                    w[1].value.rsplit('/').next(),
                    Some("rm" | "shred" | "unlink" | "srm" | "wipe" | "truncate")
                )
        })
}

/// A block device, by its path: anything under `/dev/` but the devices that
/// are not disks (`/dev/null`, ttys, `/dev/fd/N`, RAM, loop and tape devices, …).
pub(super) fn is_block_device(path: &str) -> bool {
    let path = path.strip_prefix("stdio:").unwrap_or(path);
    let Some(name) = path.strip_prefix("/dev/") else {
        return false;
    };
    const NOT_DISKS: &[&str] = &[
        "null",
        "zero",
        "full",
        "random",
        "urandom",
        "tty",
        "pts/",
        "pty",
        "stdin",
        "stdout",
        "stderr",
        "fd/",
        "shm/",
        "mqueue/",
        "console",
        "ptmx",
        "kmsg",
        "log",
        "loop",
        "net/",
        "snd/",
        "input/",
        "dri/",
        "bus/",
        "cpu",
        "hugepages",
        "st",
        "nst",
        "nrst",
        "rst",
        "ram",
        "zram",
        "tcp/",
        "udp/",
        "vcs",
        "watchdog",
        "rtc",
        "hwrng",
        "fuse",
        "kvm",
        "vhost",
        "autofs",
        "ppp",
        "tun",
        "uinput",
        "video",
        "mem",
        "kmem",
        "port",
        "char/",
        "block/",
        "term/",
    ];
    !name.is_empty() && !NOT_DISKS.iter().any(|p| name.starts_with(p))
}

pub(super) fn is_account_file(path: &str) -> bool {
    const FILES: &[&str] = &[
        "/etc/passwd",
        "/etc/shadow",
        "/etc/group",
        "/etc/gshadow",
        "/etc/sudoers",
        "/etc/subuid",
        "/etc/subgid",
        "/etc/doas.conf",
        "/etc/login.defs",
    ];
    const DIRS: &[&str] = &[
        "/etc/sudoers.d",
        "/etc/pam.d",
        "/etc/security",
        "/etc/polkit-1",
    ];
    FILES.contains(&path)
        || DIRS.iter().any(|d| {
            path.strip_prefix(d)
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        })
}
