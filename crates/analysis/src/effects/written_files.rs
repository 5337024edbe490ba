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
        "cp" | "install" | "ln" | "rsync" => {
            if let Some(dir) = value_of(c, &["-t", "--target-directory"]) {
                out.push(dir);
            } else if let Some(last) = operands().last() {
                out.push(last);
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
