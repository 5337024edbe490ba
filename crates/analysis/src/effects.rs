//! What a shell command line would do, judged by effect rather than by the
//! spelling of a program: a small table of effects ([`Effect`]), and for each
//! the ways common programs express it (their flags, operands, redirections
//! and pipelines), seen through every wrapper and nesting the flattener sees
//! through. The severity and whether an effect is a floor are part of the
//! table; what a caller does with them is its own (Warden's risk triage, the
//! OAP provider's dangerous operations).
//!
//! ```
//! use warden_analysis::effects::{Effect, Places, detect};
//! use warden_analysis::shell::analyze;
//!
//! let found = detect(&analyze("cryptsetup luksFormat /dev/sdb"), &Places::default());
//! assert_eq!(found[0].effect, Effect::DiskWrite);
//! assert!(detect(&analyze("mkfs.ext4 disk.img"), &Places::default()).is_empty());
//! ```

use crate::path::{canonicalize, comparison_form};
use crate::shell::{Analysis, Arg, Command, Origin, RedirectOp};

/// One effect of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Effect {
    /// Writes a disk raw: a file system made, an image written, a device
    /// encrypted, partitioned, wiped or its firmware or boot loader changed,
    /// a file system repaired or edited in place.
    DiskWrite,
    /// Destroys the root, the home directory or a system directory
    /// (recursive removal, recursive mode or owner change, `find -delete`,
    /// `rsync --delete` into it, moving it away).
    DestroySystem,
    /// Changes an account or privilege file (`/etc/passwd`, `/etc/shadow`,
    /// `/etc/sudoers*`, PAM, …): written, removed, moved, truncated,
    /// shredded, copied over, linked, its mode or owner changed.
    AccountFile,
    /// Connects a shell to a socket: a reverse or bind shell.
    SocketShell,
    /// Signals every process (`kill -9 -1`) or init (`kill 1`).
    SignalAll,
    /// A function that multiplies itself: a fork bomb.
    ForkBomb,
    /// Runs what a download produced: piped or substituted into an
    /// interpreter, or saved and then run.
    DownloadExec,
    /// Runs decoded or escaped text as code, or hides the program name in escapes.
    HiddenCode,
    /// Sends local data over a raw socket (`nc`, `socat`, `/dev/tcp`) or in
    /// DNS lookups built from command output.
    RawExfiltration,
    /// Uploads local files with a client (`curl -T`, `-F f=@x`, `wget
    /// --post-file`, `scp`/`rsync`/`rclone` to a remote, cloud storage copies, …).
    Upload,
    /// Runs with elevated privileges or grants them (`sudo`, `su`, setuid
    /// bits, files given to root, capabilities, account tools).
    Privilege,
}

/// How strict the verdict on an effect is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Ask,
    Deny,
}

impl Effect {
    /// Every effect, in the order of the table.
    pub const ALL: [Effect; 11] = [
        Effect::DiskWrite,
        Effect::DestroySystem,
        Effect::AccountFile,
        Effect::SocketShell,
        Effect::SignalAll,
        Effect::ForkBomb,
        Effect::DownloadExec,
        Effect::HiddenCode,
        Effect::RawExfiltration,
        Effect::Upload,
        Effect::Privilege,
    ];

    /// The effect's name, as the corpus and the docs write it.
    pub fn name(self) -> &'static str {
        match self {
            Effect::DiskWrite => "disk_write",
            Effect::DestroySystem => "destroy_system",
            Effect::AccountFile => "account_file",
            Effect::SocketShell => "socket_shell",
            Effect::SignalAll => "signal_all",
            Effect::ForkBomb => "fork_bomb",
            Effect::DownloadExec => "download_exec",
            Effect::HiddenCode => "hidden_code",
            Effect::RawExfiltration => "raw_exfiltration",
            Effect::Upload => "upload",
            Effect::Privilege => "privilege",
        }
    }

    pub fn from_name(name: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Deny for what cannot be undone or hands the machine to someone else;
    /// ask for what an operator commonly does on purpose.
    pub fn severity(self) -> Severity {
        match self {
            Effect::Upload | Effect::Privilege => Severity::Ask,
            _ => Severity::Deny,
        }
    }

    /// A floor applies whatever an explicit rule allows (like the sensitive
    /// paths); an advisory effect only when no explicit rule decided the call.
    pub fn floor(self) -> bool {
        self.severity() == Severity::Deny
    }
}

/// One effect found, with what shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub effect: Effect,
    pub message: String,
}

/// Where relative and home paths point: the caller's home and working
/// directory. Without them, `~` and `$HOME` are the home whatever it is, and a
/// relative path is not a system directory.
#[derive(Clone, Copy, Debug, Default)]
pub struct Places<'a> {
    pub home: Option<&'a str>,
    pub cwd: Option<&'a str>,
}

impl Places<'_> {
    /// A path in canonical comparison form.
    fn resolve(&self, raw: &str) -> String {
        // Without a home, `$HOME` is `~`, which stays as it is.
        comparison_form(&canonicalize(raw, self.cwd, Some(self.home.unwrap_or("~"))))
    }

    /// Whether a canonical path is the home directory.
    fn is_home(&self, path: &str) -> bool {
        path == "~"
            || self
                .home
                .is_some_and(|h| comparison_form(&canonicalize(h, None, None)) == path)
    }
}

/// Every effect of a command line, in the order found (at most one finding
/// per effect and command).
pub fn detect(a: &Analysis, places: &Places) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut add = |effect: Effect, message: String| {
        if !found
            .iter()
            .any(|f: &Finding| f.effect == effect && f.message == message)
        {
            found.push(Finding { effect, message });
        }
    };
    for path in &a.network_paths {
        let shell = a.commands.iter().any(|c| {
            (is_shell(c) || c.program.is_none() || c.is("exec"))
                && c.redirects.iter().any(|r| {
                    r.target.value.contains("/dev/tcp") || r.target.value.contains("/dev/udp")
                })
        });
        if shell {
            add(Effect::SocketShell, format!("connects a shell to {path}"));
        } else {
            add(
                Effect::RawExfiltration,
                format!("opens a network connection through {path}"),
            );
        }
    }
    if let Some(name) = fork_bomb(a) {
        add(Effect::ForkBomb, format!("defines a fork bomb ({name})"));
    }
    let substituted = |c: &Command| {
        matches!(
            c.origin,
            Origin::CommandSubstitution | Origin::ProcessSubstitution
        )
    };
    let runs_computed = !a.opaque.is_empty()
        || a.commands
            .iter()
            .any(|c| (is_interpreter(c) || c.is("eval")) && c.args.iter().any(|x| !x.literal));
    if runs_computed
        && a.commands
            .iter()
            .any(|c| substituted(c) && is_downloader(c))
    {
        add(
            Effect::DownloadExec,
            "runs code produced by a download".into(),
        );
    }
    if runs_computed && a.commands.iter().any(|c| substituted(c) && is_decoder(c)) {
        add(Effect::HiddenCode, "runs code produced by decoding".into());
    }
    let mut downloaded: Vec<String> = Vec::new();
    // `cd DIR` at the top level moves the commands after it (`cd /etc && rm passwd`).
    let mut moved: Option<String> = None;
    for (i, c) in a.commands.iter().enumerate() {
        let cwd = moved.clone();
        let places = &Places {
            home: places.home,
            cwd: cwd.as_deref().or(places.cwd),
        };
        if c.is("cd")
            && c.origin == Origin::TopLevel
            && let Some(dir) = c.operands().next().filter(|d| d.literal && !d.glob)
        {
            moved = Some(canonicalize(&dir.value, places.cwd, places.home));
        }
        let program = c.program.as_deref().unwrap_or("");
        let upstream = || a.upstream(i).into_iter().map(|j| &a.commands[j]);

        // Files the command writes: devices and account files.
        for target in written(c) {
            let path = places.resolve(target);
            if is_block_device(&path) {
                add(
                    Effect::DiskWrite,
                    format!("{} writes to the device {target}", name(c)),
                );
            }
            if is_account_file(&path) {
                add(Effect::AccountFile, format!("{} changes {target}", name(c)));
            }
        }
        if let Some(why) = disk_writer(c) {
            add(Effect::DiskWrite, why);
        }
        if let Some(why) = destroys(a, i, places) {
            add(Effect::DestroySystem, why);
        }
        if let Some(why) = signals_all(c) {
            add(Effect::SignalAll, why);
        }

        // Shells and interpreters: what feeds them.
        if is_interpreter(c) || c.is("eval") {
            let feeds: Vec<&Command> = upstream().collect();
            if let Some(d) = feeds.iter().find(|u| is_downloader(u)) {
                add(
                    Effect::DownloadExec,
                    format!("pipes a download ({}) into {program}", name(d)),
                );
            }
            if let Some(s) = feeds.iter().find(|u| is_socket_client(u)) {
                add(
                    Effect::SocketShell,
                    format!("feeds {program} from a socket ({})", name(s)),
                );
            }
            if feeds.iter().any(|u| is_decoder(u)) {
                add(
                    Effect::HiddenCode,
                    format!("pipes decoded text into {program}"),
                );
            }
            if feeds.iter().any(|u| has_escapes(u)) {
                add(
                    Effect::HiddenCode,
                    format!("pipes escaped text into {program}"),
                );
            }
            if let Some(code) = inline_code(c) {
                if connects_a_shell(code) {
                    add(
                        Effect::SocketShell,
                        format!("{program} connects a socket to a shell"),
                    );
                }
                if decodes_and_runs(code) {
                    add(Effect::HiddenCode, format!("{program} runs decoded text"));
                }
            }
            if let Some(script) = script_operand(c)
                && downloaded.contains(&places.resolve(script))
            {
                add(
                    Effect::DownloadExec,
                    format!("{program} runs the downloaded {script}"),
                );
            }
        }
        if let Some(path) = c.path.as_deref()
            && path.contains('/')
            && downloaded.contains(&places.resolve(path))
        {
            add(Effect::DownloadExec, format!("runs the downloaded {path}"));
        }
        if c.written.starts_with("$'")
            && ["\\x", "\\0", "\\u"].iter().any(|e| c.written.contains(e))
        {
            add(
                Effect::HiddenCode,
                format!("hides the program name in escapes: {}", c.written),
            );
        }

        // Sockets.
        if is_socket_client(c) {
            if let Some(how) = socket_exec(c) {
                add(
                    Effect::SocketShell,
                    format!("{program} runs {how} on a socket"),
                );
            }
            if let Some(shell) = upstream().find(|u| is_interpreter(u)) {
                add(
                    Effect::SocketShell,
                    format!("pipes {} into a socket ({program})", name(shell)),
                );
            } else if sends_local_data(a, i) {
                add(
                    Effect::RawExfiltration,
                    format!("sends local data over a raw socket ({program})"),
                );
            }
        }
        if matches!(
            program,
            "dig" | "nslookup" | "host" | "drill" | "ping" | "getent" | "resolvectl"
        ) && c.args.iter().any(|x| !x.literal && x.value.contains("$("))
        {
            add(
                Effect::RawExfiltration,
                format!("{program} looks up a name built from command output"),
            );
        }

        if let Some(how) = uploads(a, i) {
            add(
                Effect::Upload,
                format!("{} uploads local data ({how})", name(c)),
            );
        }
        if let Some(why) = privilege(c) {
            add(Effect::Privilege, why);
        }
        for file in downloads(c) {
            downloaded.push(places.resolve(&file));
        }
    }
    found
}

fn name(c: &Command) -> &str {
    c.program.as_deref().unwrap_or(&c.written)
}

// --- files written --------------------------------------------------------------

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

/// The value of the first of `options` (`-o VALUE`, `-oVALUE`, `-so VALUE`,
/// `--opt=VALUE`, `--opt VALUE`).
fn value_of<'a>(c: &'a Command, options: &[&str]) -> Option<&'a str> {
    let args = &c.args;
    for (k, a) in args.iter().enumerate() {
        let v = a.value.as_str();
        if v == "--" {
            return None;
        }
        for o in options {
            if v == *o {
                return args.get(k + 1).map(|n| n.value.as_str());
            }
            if o.starts_with("--") {
                if let Some(rest) = v.strip_prefix(o).and_then(|r| r.strip_prefix('=')) {
                    return Some(rest);
                }
            } else if o.len() == 2 && v.len() > 2 && v.starts_with('-') && !v.starts_with("--") {
                // `-oFILE`, or a cluster of flags ending with it: `-so FILE`, `-qO-`.
                let letter = &o[1..];
                if let Some(at) = v[1..].find(letter).map(|p| p + 1)
                    && v[1..at].bytes().all(|b| b.is_ascii_alphabetic())
                {
                    return match &v[at + 1..] {
                        "" => args.get(k + 1).map(|n| n.value.as_str()),
                        rest => Some(rest),
                    };
                }
            }
        }
    }
    None
}

/// Whether any of `flags` is given, in any spelling (`-rf` has `-r`), or
/// written as one word (`-toc`).
fn has_flag(c: &Command, flags: &[&str]) -> bool {
    if c.args.iter().any(|a| flags.contains(&a.value.as_str())) {
        return true;
    }
    let set = c.flags();
    flags.iter().any(|f| set.contains(f))
}

/// A block device, by its path: anything under `/dev/` but the devices that
/// are not disks (`/dev/null`, ttys, `/dev/fd/N`, RAM, loop and tape devices, …).
fn is_block_device(path: &str) -> bool {
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

fn is_account_file(path: &str) -> bool {
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

/// Programs that write a disk raw, and whether this invocation does.
fn disk_writer(c: &Command) -> Option<String> {
    let program = c.program.as_deref()?;
    let device = || {
        c.operands()
            .map(|a| a.value.as_str())
            .find(|v| is_block_device(&comparison_form(&canonicalize(v, None, None))))
    };
    let first_operand = || c.operands().next().map(|a| a.value.as_str()).unwrap_or("");
    let reads_only = |flags: &[&str]| has_flag(c, flags);
    let what: &str = match program {
        p if p.starts_with("mkfs") || p.starts_with("mke2fs") || p.starts_with("mkdosfs") => {
            "makes a file system on"
        }
        "mkswap" | "mkntfs" | "mkexfatfs" | "mkudffs" => "makes a file system on",
        "wipefs"
            if reads_only(&["-a", "--all", "-o", "--offset"])
                && !reads_only(&["-n", "--no-act"]) =>
        {
            "erases signatures on"
        }
        "blkdiscard" | "shred" | "wipe" | "scrub" | "srm" | "zerofree" | "sg_format" => "erases",
        "badblocks" if reads_only(&["-w"]) => "overwrites",
        "pvcreate" | "pvremove" | "vgcreate" | "vgextend" => "puts a volume on",
        "grub-install" | "grub2-install" | "install-mbr" | "syslinux" | "extlinux" | "lilo" => {
            "installs a boot loader on"
        }
        "tune2fs" | "e2label" | "xfs_admin" | "btrfstune" | "ntfsfix" | "ntfslabel"
        | "dosfslabel" | "fatlabel" | "swaplabel" | "resize2fs" | "growpart" | "zpool" => {
            "edits the file system on"
        }
        "ntfsresize" if !reads_only(&["-i", "--info", "-n", "--no-action"]) => {
            "resizes the file system on"
        }
        "debugfs" if reads_only(&["-w"]) => "edits the file system on",
        "xfs_repair" | "e2fsck" | "fsck" | "fsck.ext2" | "fsck.ext3" | "fsck.ext4"
        | "fsck.vfat" | "fsck.fat" | "dosfsck" | "fsck.xfs" | "fsck.btrfs" | "ntfsclone"
            if !reads_only(&["-n", "--no-modify"]) =>
        {
            if program == "ntfsclone" && !reads_only(&["-O", "--overwrite"]) {
                return None;
            }
            "repairs the file system on"
        }
        "btrfs" if c.args.iter().any(|a| a.value == "--repair") || first_operand() == "rescue" => {
            "repairs the file system on"
        }
        "fdisk" | "gdisk" | "cfdisk" | "cgdisk" | "sfdisk"
            if !reads_only(&[
                "-l",
                "--list",
                "-d",
                "--dump",
                "-J",
                "--json",
                "-s",
                "--show-size",
                "-V",
                "--verify",
                "-g",
                "--show-geometry",
                "-r",
                "--list-free",
                "-F",
            ]) =>
        {
            "partitions"
        }
        "sgdisk"
            if c.args.iter().any(|a| {
                let v = a.value.as_str();
                matches!(
                    v.get(..2),
                    Some(
                        "-Z" | "-z"
                            | "-o"
                            | "-n"
                            | "-d"
                            | "-t"
                            | "-c"
                            | "-g"
                            | "-R"
                            | "-G"
                            | "-U"
                            | "-s"
                            | "-N"
                            | "-m"
                            | "-e"
                            | "-x"
                            | "-r"
                            | "-l"
                            | "-h"
                            | "-A"
                    )
                ) || [
                    "--zap",
                    "--clear",
                    "--new",
                    "--delete",
                    "--typecode",
                    "--change-name",
                    "--mbrtogpt",
                    "--replicate",
                    "--randomize",
                    "--disk-guid",
                    "--sort",
                    "--largest-new",
                    "--gpttombr",
                    "--move-second-header",
                    "--load-backup",
                    "--hybrid",
                    "--attributes",
                    "--partition-guid",
                    "--transpose",
                    "--transform-bsd",
                ]
                .iter()
                .any(|o| v.starts_with(o))
            }) =>
        {
            "partitions"
        }
        "parted"
            if !reads_only(&["-l", "--list"]) && {
                let commands: Vec<&str> = c.operands().skip(1).map(|a| a.value.as_str()).collect();
                // Without commands it is interactive, and may write.
                commands.is_empty()
                    || commands.iter().any(|w| {
                        matches!(
                            *w,
                            "mklabel"
                                | "mktable"
                                | "mkpart"
                                | "mkpartfs"
                                | "rm"
                                | "resizepart"
                                | "resize"
                                | "move"
                                | "rescue"
                                | "name"
                                | "set"
                                | "toggle"
                                | "disk_set"
                                | "disk_toggle"
                                | "cp"
                                | "mkfs"
                        )
                    })
            } =>
        {
            "partitions"
        }
        "btrfs"
            if matches!(
                (
                    first_operand(),
                    c.operands().nth(1).map(|a| a.value.as_str())
                ),
                ("replace", Some("start")) | ("device", Some("add"))
            ) =>
        {
            "adds to a file system"
        }
        "mdadm"
            if reads_only(&[
                "--create",
                "-C",
                "--zero-superblock",
                "--add",
                "--grow",
                "-G",
                "--build",
                "-B",
            ]) =>
        {
            "puts a RAID volume on"
        }
        "systemd-cryptenroll" if !reads_only(&["--help", "-h", "--version"]) => {
            "rewrites the encryption header of"
        }
        "cryptsetup" | "integritysetup" | "veritysetup" => {
            // The action is the first operand that is one (`--type luks2` puts a value first).
            let writes = c.operands().any(|a| {
                matches!(
                    a.value.as_str(),
                    "luksFormat"
                        | "format"
                        | "reencrypt"
                        | "erase"
                        | "luksErase"
                        | "luksAddKey"
                        | "luksRemoveKey"
                        | "luksKillSlot"
                        | "luksChangeKey"
                        | "luksConvertKey"
                        | "convert"
                        | "luksHeaderRestore"
                        | "repair"
                        | "luksResume"
                        | "token"
                )
            });
            if !writes {
                return None;
            }
            "encrypts or rewrites the header of"
        }
        "nvme" => {
            // `nvme SUB …`, or `nvme PLUGIN SUB …` for the vendor plugins and `zns`.
            let destructive = |sub: &str| {
                matches!(
                    sub,
                    "format"
                        | "sanitize"
                        | "write"
                        | "write-zeroes"
                        | "write-uncor"
                        | "dsm"
                        | "delete-ns"
                        | "fw-download"
                        | "fw-commit"
                        | "fw-activate"
                        | "security-send"
                        | "purge"
                        | "reset-zone"
                        | "zone-append"
                        | "finish-zone"
                        | "offline-zone"
                        | "namespace-resize"
                        | "drive-resize"
                )
            };
            let sub = c
                .operands()
                .take(2)
                .map(|a| a.value.as_str())
                .find(|s| destructive(s))?;
            return Some(format!("nvme {sub} writes to the drive"));
        }
        "hdparm"
            if c.args.iter().any(|a| {
                let v = a.value.as_str();
                v.starts_with("--security-erase")
                    || v.starts_with("--security-set-pass")
                    || v.starts_with("--trim-sector-ranges")
                    || v == "--write-sector"
                    || v == "--repair-sector"
                    || v == "--make-bad-sector"
                    || v.starts_with("--fwdownload")
                    || v.starts_with("--dco-restore")
                    || v.starts_with("--dco-setmax")
                    || v == "--set-sector-size"
                    || (v.starts_with("-N") && v.contains('p'))
            }) =>
        {
            return Some("hdparm rewrites the drive".into());
        }
        "efibootmgr"
            if reads_only(&[
                "-c",
                "--create",
                "-C",
                "--create-only",
                "-B",
                "--delete-bootnum",
                "-o",
                "--bootorder",
                "-O",
                "--delete-bootorder",
                "-a",
                "--active",
                "-A",
                "--inactive",
                "-n",
                "--bootnext",
                "-N",
                "--delete-bootnext",
            ]) =>
        {
            return Some("efibootmgr changes the firmware's boot entries".into());
        }
        "xorriso" | "xorrisofs" | "xorrecord" | "growisofs" | "wodim" | "cdrecord" => {
            if reads_only(&[
                "-toc",
                "-msinfo",
                "-atip",
                "-checkmedia",
                "-print-size",
                "-devices",
                "-scanbus",
                "-mount_cmd",
            ]) {
                return None;
            }
            let target = c.args.iter().enumerate().find_map(|(k, a)| {
                let v = a.value.as_str();
                if matches!(v, "-outdev" | "-dev" | "-Z" | "-M") {
                    c.args
                        .get(k + 1)
                        .map(|n| n.value.split('=').next().unwrap_or(""))
                } else {
                    v.strip_prefix("dev=")
                        .or_else(|| v.strip_prefix("-Z").filter(|r| r.starts_with('/')))
                        .map(|r| r.split('=').next().unwrap_or(""))
                }
            })?;
            let path = comparison_form(&canonicalize(target, None, None));
            if !is_block_device(&path) {
                return None;
            }
            return Some(format!("{program} burns {target}"));
        }
        "qemu-img" | "bmaptool" => {
            let last = c.operands().last()?.value.as_str();
            if !is_block_device(&comparison_form(&canonicalize(last, None, None))) {
                return None;
            }
            return Some(format!("{program} writes an image to {last}"));
        }
        _ => return None,
    };
    let device = device()?;
    Some(format!("{program} {what} {device}"))
}

// --- destroying the system --------------------------------------------------------

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

fn is_system_path(places: &Places, path: &str) -> bool {
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

fn destroys(a: &Analysis, i: usize, places: &Places) -> Option<String> {
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

// --- signals -------------------------------------------------------------------------

fn signals_all(c: &Command) -> Option<String> {
    let program = c.program.as_deref()?;
    match program {
        "kill" => {
            let mut pids = Vec::new();
            let mut k = 0;
            let mut options = true;
            while let Some(a) = c.args.get(k) {
                let v = a.value.as_str();
                k += 1;
                if options {
                    if v == "--" {
                        options = false;
                        continue;
                    }
                    if matches!(v, "-l" | "-L" | "--list" | "--table") {
                        return None;
                    }
                    if matches!(v, "-s" | "-n" | "--signal" | "-q" | "--queue" | "--timeout") {
                        k += 1;
                        continue;
                    }
                    if v.starts_with('-') && pids.is_empty() && k == 1 {
                        // The signal: `-9`, `-KILL`, `-SIGKILL`.
                        continue;
                    }
                    if v.starts_with("--") {
                        continue;
                    }
                    options = false;
                }
                pids.push(v);
            }
            pids.iter().find(|p| matches!(**p, "-1" | "1")).map(|p| {
                if *p == "1" {
                    "kill signals init (pid 1)".to_string()
                } else {
                    "kill signals every process (-1)".to_string()
                }
            })
        }
        "killall5" => Some("killall5 signals every process".into()),
        "pkill" | "killall" => {
            let targets: Vec<&str> = c.operands().map(|a| a.value.as_str()).collect();
            targets
                .iter()
                .find(|t| matches!(**t, "init" | "systemd" | "." | ".*" | "^" | ""))
                .map(|t| {
                    format!(
                        "{program} signals {}",
                        if matches!(*t, "init" | "systemd") {
                            "init"
                        } else {
                            "every process"
                        }
                    )
                })
        }
        _ => None,
    }
}

// --- download, decode, execute --------------------------------------------------------

const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "xh",
    "lwp-request",
    "GET",
];
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "yash",
    "posh",
    "rbash",
    "pwsh",
    "powershell",
];
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "tclsh",
    "source",
    ".",
    "osascript",
    "irb",
    "deno",
    "bun",
    "Rscript",
    "awk",
    "gawk",
];
const SOCKET_CLIENTS: &[&str] = &[
    "nc",
    "ncat",
    "netcat",
    "nc.openbsd",
    "nc.traditional",
    "socat",
    "telnet",
    "cryptcat",
    "pwncat",
];

fn is_shell(c: &Command) -> bool {
    c.program.as_deref().is_some_and(|p| SHELLS.contains(&p))
}

fn is_interpreter(c: &Command) -> bool {
    c.program.as_deref().is_some_and(|p| {
        SHELLS.contains(&p)
            || INTERPRETERS.contains(&p)
            || (p.starts_with("python") && p[6..].bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    }) && !(c.is("awk") || c.is("gawk"))
}

fn is_downloader(c: &Command) -> bool {
    c.program
        .as_deref()
        .is_some_and(|p| DOWNLOADERS.contains(&p))
}

fn is_socket_client(c: &Command) -> bool {
    c.program
        .as_deref()
        .is_some_and(|p| SOCKET_CLIENTS.contains(&p))
        || (c.is("openssl") && c.args.first().is_some_and(|a| a.value == "s_client"))
}

/// `base64 -d`, `base32 --decode`, `basenc -d`, `xxd -r`, `openssl … -d`, `uudecode`.
fn is_decoder(c: &Command) -> bool {
    let decode_flag = || {
        c.args.iter().any(|a| {
            matches!(
                a.value.as_str(),
                "-d" | "-D" | "--decode" | "-r" | "-revert"
            ) || (a.value.starts_with("-d") && !a.value.starts_with("--"))
        })
    };
    match c.program.as_deref() {
        Some("base64" | "base32" | "basenc" | "openssl" | "xxd") => decode_flag(),
        Some("uudecode") => true,
        _ => false,
    }
}

/// `printf '\x72\x6d'` and friends: text that spells something else.
fn has_escapes(c: &Command) -> bool {
    (c.is("printf") || c.is("echo"))
        && c.args
            .iter()
            .any(|a| ["\\x", "\\0", "\\u"].iter().any(|e| a.value.contains(e)))
}

/// The code an interpreter is given inline (`python -c CODE`, `perl -e CODE`,
/// `php -r CODE`, `node -e CODE`, `ruby -e CODE`).
fn inline_code(c: &Command) -> Option<&str> {
    let mut args = c.args.iter();
    while let Some(a) = args.next() {
        let v = a.value.as_str();
        if !v.starts_with('-') {
            return None;
        }
        let flag = v.trim_start_matches('-');
        if matches!(flag, "c" | "e" | "E" | "r" | "eval" | "exec")
            || (v.len() > 2 && !v.starts_with("--") && v.ends_with(['e', 'c']))
        {
            return args.next().map(|a| a.value.as_str());
        }
    }
    None
}

fn connects_a_shell(code: &str) -> bool {
    const SOCKET: &[&str] = &[
        "socket",
        "fsockopen",
        "tcpsocket",
        "net.socket",
        "net.connect",
        "/inet/tcp",
        "/inet/udp",
        "io::socket",
        "/dev/tcp",
    ];
    const SHELL: &[&str] = &[
        "/bin/sh",
        "/bin/bash",
        "sh -i",
        "bash -i",
        "subprocess",
        "pty.spawn",
        "exec(",
        "system(",
        "popen",
        "child_process",
        "spawn(",
        "dup2",
        "\"sh\"",
        "'sh'",
        "cmd.exe",
        "exec \"",
        "exec '",
        "/bin/zsh",
    ];
    let lower = code.to_ascii_lowercase();
    SOCKET.iter().any(|s| lower.contains(s)) && SHELL.iter().any(|s| lower.contains(s))
}

fn decodes_and_runs(code: &str) -> bool {
    const DECODE: &[&str] = &[
        "b64decode",
        "base64",
        "decode_base64",
        "atob(",
        "fromcharcode",
        "unhexlify",
        "codecs.decode",
        "zlib.decompress",
        "bytes.fromhex",
        "pack(\"h",
        "pack('h",
    ];
    const RUN: &[&str] = &["exec(", "eval(", "eval ", "system(", "compile("];
    let lower = code.to_ascii_lowercase();
    DECODE.iter().any(|s| lower.contains(s)) && RUN.iter().any(|s| lower.contains(s))
}

/// The script an interpreter runs from a file: its first operand.
fn script_operand(c: &Command) -> Option<&str> {
    if inline_code(c).is_some() {
        return None;
    }
    c.operands().next().map(|a| a.value.as_str())
}

/// The files a downloader saves (`curl -o F`, `curl -O URL`, `wget URL`, `wget -O F`).
fn downloads(c: &Command) -> Vec<String> {
    let Some(program) = c.program.as_deref() else {
        return Vec::new();
    };
    let urls = || {
        c.operands()
            .map(|a| a.value.as_str())
            .filter(|v| v.contains("://"))
    };
    let url_name = |u: &str| {
        u.split(['?', '#'])
            .next()
            .unwrap_or("")
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string()
    };
    match program {
        "curl" => {
            if let Some(out) = value_of(c, &["-o", "--output"]) {
                return vec![out.to_string()];
            }
            if c.args.iter().any(|a| {
                a.value == "-O"
                    || a.value == "--remote-name"
                    || (a.value.starts_with('-')
                        && !a.value.starts_with("--")
                        && a.value.contains('O'))
            }) {
                return urls().map(url_name).filter(|n| !n.is_empty()).collect();
            }
            Vec::new()
        }
        "wget" | "aria2c" => {
            if let Some(out) =
                value_of(c, &["-O", "--output-document", "-o", "--out"]).filter(|_| {
                    program == "aria2c"
                        || c.args.iter().any(|a| {
                            a.value.starts_with("-O") || a.value.starts_with("--output-document")
                        })
                })
            {
                return if out == "-" {
                    Vec::new()
                } else {
                    vec![out.to_string()]
                };
            }
            let dir = value_of(c, &["-P", "--directory-prefix", "-d", "--dir"]);
            urls()
                .map(url_name)
                .filter(|n| !n.is_empty())
                .map(|n| match dir {
                    Some(d) => format!("{}/{n}", d.trim_end_matches('/')),
                    None => n,
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

// --- sockets and uploads -------------------------------------------------------------

/// `nc -e PROG`, `nc -c CMD`, `ncat --exec/--sh-exec/--lua-exec`, `socat … EXEC:/SYSTEM:` with a network address.
fn socket_exec(c: &Command) -> Option<String> {
    if c.is("socat") {
        let addresses: Vec<String> = c.operands().map(|a| a.value.to_ascii_lowercase()).collect();
        let exec = addresses
            .iter()
            .find(|a| a.starts_with("exec:") || a.starts_with("system:"))?;
        const NETWORK: &[&str] = &[
            "tcp", "udp", "sctp", "openssl", "ssl", "unix", "vsock", "socks", "proxy", "dccp",
            "abstract",
        ];
        addresses
            .iter()
            .any(|a| NETWORK.iter().any(|n| a.starts_with(n)))
            .then(|| exec.split(',').next().unwrap_or("").to_string())
    } else if c.is("openssl") {
        None
    } else {
        let args = &c.args;
        args.iter().enumerate().find_map(|(k, a)| {
            let v = a.value.as_str();
            if matches!(v, "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec") {
                return args.get(k + 1).map(|p| format!("`{}`", p.value));
            }
            ["--exec=", "--sh-exec=", "--lua-exec="]
                .iter()
                .find_map(|o| v.strip_prefix(o))
                .map(|p| format!("`{p}`"))
        })
    }
}

/// Whether what reaches command `i`'s input is local data: a file (`< f`), or
/// a pipeline stage other than literal text (`echo`/`printf` of literal words).
fn sends_local_data(a: &Analysis, i: usize) -> bool {
    let c = &a.commands[i];
    if c.redirects
        .iter()
        .any(|r| r.op == RedirectOp::Input && r.fd.is_none_or(|fd| fd == 0))
    {
        return true;
    }
    a.upstream(i).into_iter().any(|j| {
        let u = &a.commands[j];
        !(matches!(
            u.program.as_deref(),
            Some("echo" | "printf" | "yes" | "true" | ":")
        ) && u.args.iter().all(|x| x.literal)
            && !u.redirects.iter().any(|r| r.op == RedirectOp::Input))
    })
}

/// A remote location of `scp`, `rsync`, `rclone`: `host:path`, `user@host:path`,
/// `rsync://…`, `remote:path`; not `./a:b` or an absolute path.
fn is_remote(location: &str) -> bool {
    if location.contains("://") {
        return true;
    }
    match location.find(':') {
        Some(k) => {
            let before = &location[..k];
            !before.is_empty() && !before.contains('/')
        }
        None => false,
    }
}

const CLOUD_SCHEMES: &[&str] = &[
    "s3://", "gs://", "az://", "r2://", "oss://", "cos://", "b2://",
];

fn is_cloud(location: &str) -> bool {
    CLOUD_SCHEMES.iter().any(|s| location.starts_with(s))
        || location.starts_with("https://") && location.contains(".blob.core.windows.net")
}

/// How command `i` uploads local files, if it does.
fn uploads(a: &Analysis, i: usize) -> Option<String> {
    let c = &a.commands[i];
    let program = c.program.as_deref()?;
    const CLIENTS: &[&str] = &[
        "curl",
        "wget",
        "http",
        "https",
        "xh",
        "scp",
        "rsync",
        "sftp",
        "rclone",
        "s3cmd",
        "aws",
        "gsutil",
        "gcloud",
        "az",
        "ssh",
        "lftp",
        "ftp",
        "tnftp",
        "tftp",
        "smbclient",
    ];
    if !CLIENTS.contains(&program) {
        return None;
    }
    let operands: Vec<&str> = c.operands().map(|x| x.value.as_str()).collect();
    let local_to = |remote: &dyn Fn(&str) -> bool| -> Option<String> {
        let (dest, sources) = operands.split_last()?;
        (remote(dest) && !sources.is_empty() && sources.iter().any(|s| !remote(s)))
            .then(|| format!("to {dest}"))
    };
    match program {
        "curl" => curl_upload(a, i),
        "wget" => c
            .args
            .iter()
            .find(|x| x.value.starts_with("--post-file") || x.value.starts_with("--body-file"))
            .map(|x| x.value.clone()),
        "http" | "https" | "xh" => {
            if c.redirects.iter().any(|r| r.op == RedirectOp::Input)
                || sends_local_data(a, i) && !a.upstream(i).is_empty()
            {
                return Some("a request body from local data".into());
            }
            operands
                .iter()
                .find(|o| {
                    o.find('@').is_some_and(|k| {
                        let key = o[..k].trim_end_matches(['=', ':']);
                        !key.is_empty()
                            && key
                                .bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                            && !o[k + 1..].is_empty()
                    })
                })
                .map(|o| o.to_string())
        }
        "scp" | "rsync" | "sftp" => local_to(&is_remote),
        "rclone" => {
            let sub = *operands.first()?;
            if !matches!(
                sub,
                "copy" | "sync" | "move" | "copyto" | "moveto" | "bisync" | "rcat"
            ) {
                return None;
            }
            if sub == "rcat" {
                return sends_local_data(a, i).then(|| "rclone rcat of local data".into());
            }
            // Locations: operands not taken as an option's value (`--max-age 24h`),
            // unless they look like a path or a remote.
            let mut locations = Vec::new();
            for (k, x) in c
                .args
                .iter()
                .enumerate()
                .skip_while(|(_, x)| x.value != sub)
                .skip(1)
            {
                let v = x.value.as_str();
                if v.starts_with('-') {
                    continue;
                }
                let previous = &c.args[k - 1].value;
                // rclone's one-letter flags take no value.
                let after_option = previous.starts_with("--") && !previous.contains('=');
                let looks =
                    !v.contains(' ') && (v.contains(['/', ':']) || v.starts_with(['.', '~']));
                if !after_option || looks {
                    locations.push(v);
                }
            }
            let (dest, sources) = locations.split_last()?;
            (is_remote(dest) && sources.iter().any(|s| !is_remote(s)))
                .then(|| format!("rclone {sub} to {dest}"))
        }
        "s3cmd" => {
            let sub = *operands.first()?;
            matches!(sub, "put" | "sync" | "cp" | "mv" | "modify")
                .then(|| local_to(&|s: &str| s.starts_with("s3://")))
                .flatten()
                .map(|to| format!("s3cmd {sub} {to}"))
        }
        "aws" | "gsutil" | "gcloud" | "az" => {
            let storage = operands.iter().position(|o| {
                matches!(
                    *o,
                    "cp" | "mv" | "sync" | "rsync" | "upload" | "upload-batch"
                )
            })?;
            let rest = &operands[storage + 1..];
            let (dest, sources) = rest.split_last()?;
            (is_cloud(dest) && sources.iter().any(|s| !is_cloud(s) && !s.starts_with('-')))
                .then(|| format!("to {dest}"))
        }
        "ssh" => {
            let local = c.redirects.iter().any(|r| r.op == RedirectOp::Input)
                || (!a.upstream(i).is_empty() && sends_local_data(a, i));
            local.then(|| "local data on its input".into())
        }
        "lftp" | "ftp" | "tnftp" | "tftp" | "smbclient" => {
            let script = value_of(c, &["-e", "-c"]).unwrap_or("");
            if script.split([';', '\n']).any(|s| {
                let s = s.trim();
                s.starts_with("put ")
                    || s.starts_with("mput ")
                    || s.starts_with("mirror -R")
                    || s.starts_with("mirror --reverse")
            }) {
                return Some(format!("{program} put"));
            }
            (program == "ftp" || program == "tnftp")
                .then(|| value_of(c, &["-u"]).map(|u| format!("-u {u}")))
                .flatten()
        }
        _ => None,
    }
}

/// The upload flag of a curl command, if it sends local data.
fn curl_upload(a: &Analysis, i: usize) -> Option<String> {
    let c = &a.commands[i];
    let args = &c.args;
    for (k, arg) in args.iter().enumerate() {
        let next = args.get(k + 1);
        let v = arg.value.as_str();
        let (flag, value, value_literal) = match v.split_once('=') {
            Some((f, val)) if f.starts_with("--") => (f, val, arg.literal),
            _ if v.len() > 2 && !v.starts_with("--") && matches!(&v[..2], "-d" | "-F" | "-T") => {
                (&v[..2], &v[2..], arg.literal)
            }
            _ => (
                v,
                next.map_or("", |n| n.value.as_str()),
                next.is_none_or(|n| n.literal),
            ),
        };
        let data = matches!(
            flag,
            "-d" | "--data"
                | "--data-binary"
                | "--data-urlencode"
                | "--data-raw"
                | "--json"
                | "--data-ascii"
        );
        let form = matches!(flag, "-F" | "--form" | "--form-string");
        if matches!(flag, "-T" | "--upload-file") {
            return Some(format!("{flag} {value}"));
        }
        let urlencoded_file = flag == "--data-urlencode"
            && value
                .split_once('@')
                .is_some_and(|(name, _)| !name.contains('='));
        if (data && flag != "--data-raw" || form && flag != "--form-string")
            && (value.starts_with('@')
                || value.contains("=@")
                || value.contains("=<")
                || (form && value.contains('@'))
                || urlencoded_file)
        {
            if value == "@-" && !sends_local_data(a, i) {
                continue;
            }
            return Some(format!("{flag} {value}"));
        }
        if (data || form) && !value_literal {
            return Some(format!("{flag} with computed data"));
        }
    }
    None
}

// --- privileges ---------------------------------------------------------------------

const ELEVATORS: &[&str] = &["sudo", "doas", "su", "pkexec", "runuser", "run0"];

fn privilege(c: &Command) -> Option<String> {
    let program = c.program.as_deref().unwrap_or("");
    if let Some(elevator) = c
        .wrappers
        .iter()
        .map(String::as_str)
        .find(|w| ELEVATORS.contains(w))
        .or(ELEVATORS.contains(&program).then_some(program))
    {
        return Some(format!("runs with elevated privileges ({elevator})"));
    }
    match program {
        "chmod" if c.args.iter().any(|a| sets_id_bit(&a.value)) => {
            Some("chmod sets a setuid or setgid bit".into())
        }
        "chown" | "chgrp" => {
            let owner = c.operands().next()?.value.as_str();
            let user = owner.split([':', '.']).next().unwrap_or("");
            (user == "root" || user == "0" || owner.ends_with(":root") || owner.ends_with(":0"))
                .then(|| "gives files to root".to_string())
        }
        "setcap" | "visudo" | "vipw" | "vigr" | "usermod" | "useradd" | "userdel" | "adduser"
        | "deluser" | "addgroup" | "delgroup" | "groupadd" | "groupdel" | "groupmod"
        | "gpasswd" | "passwd" | "chpasswd" | "chage" | "chsh" | "newusers" => {
            Some(format!("{program} changes accounts or privileges"))
        }
        _ => None,
    }
}

/// `u+s`, `g+s`, `+s`, or a four-digit mode with the setuid or setgid bit.
fn sets_id_bit(mode: &str) -> bool {
    if mode.len() == 4 && mode.chars().all(|c| c.is_ascii_digit()) {
        return matches!(mode.as_bytes()[0], b'2' | b'3' | b'4' | b'5' | b'6' | b'7');
    }
    !mode.starts_with('-') && (mode.contains("+s") || mode.contains("=s"))
}

/// A function that runs itself in the background or in a pipeline: `:(){ :|:& };:`.
fn fork_bomb(a: &Analysis) -> Option<String> {
    a.functions.iter().find_map(|f| {
        let body = &a.commands[f.commands.clone()];
        let recursive: Vec<&Command> = body
            .iter()
            .filter(|c| c.program.as_deref() == Some(f.name.as_str()))
            .collect();
        let multiplies = recursive.len() >= 2
            || recursive
                .iter()
                .any(|c| c.background || !c.stdin_from.is_empty());
        multiplies.then(|| f.name.clone())
    })
}
