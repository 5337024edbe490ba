//! What a shell command line would do, judged by effect rather than by the
//! spelling of a program: a small table of effects ([`Effect`]), and for each
//! the ways common programs express it (their flags, operands, redirections
//! and pipelines), seen through every wrapper and nesting the flattener sees
//! through. The severity and whether an effect is a floor are part of the
//! table; what a caller does with them is its own (Warden's risk triage, the
//! OAP provider's dangerous operations).
//!
//! The table and [`detect`] are here; each family of effects has a module of
//! its own with the ways programs express it. A new family is a new module
//! and an entry in the table ([`Effect`], [`Effect::ALL`], [`Effect::name`])
//! and in [`detect`].
//!
//! ```
//! use warden_analysis::effects::{Effect, Places, detect};
//! use warden_analysis::shell::analyze;
//!
//! let found = detect(&analyze("cryptsetup luksFormat /dev/sdb"), &Places::default());
//! assert_eq!(found[0].effect, Effect::DiskWrite);
//! assert!(detect(&analyze("mkfs.ext4 disk.img"), &Places::default()).is_empty());
//! ```

mod command;
mod credentials;
mod defence_evasion;
mod destruction;
mod disk_writers;
mod download;
mod exfiltration;
mod host_state;
mod one_liners;
mod persistence;
mod places;
mod privilege;
mod processes;
mod programs;
mod system_files;
mod written_files;

pub use places::Places;
pub use written_files::written;

use crate::path::canonicalize;
use crate::shell::{Analysis, Command, Origin, analyze};

use command::name;
use credentials::prints_credential;
use defence_evasion::{evades, is_trace_file};
use destruction::{destroys, destroys_unseen, is_system_path};
use disk_writers::{disk_operand, disk_writer};
use download::{
    connects_a_shell, decodes_and_runs, downloads, has_escapes, inline_code, script_operand,
};
use exfiltration::{sends_local_data, socket_exec, uploads};
use host_state::{changes_host, is_kernel_file};
use persistence::{is_persistence_file, schedules};
use privilege::privilege;
use processes::{fork_bomb, signals_all};
use programs::{is_decoder, is_downloader, is_interpreter, is_shell, is_socket_client};
use system_files::is_system_file;
use written_files::{is_account_file, is_block_device};

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
    /// Sets up code to run later, unseen: a scheduled job (`crontab -`, `at`),
    /// a service unit written or enabled, a shell or session start-up file, an
    /// authorized key, a git hook or `core.hooksPath`, a preload library.
    Persistence,
    /// Turns off or erases what watches the machine: the shell history, the
    /// firewall, SELinux or AppArmor, audit rules and `auditd`, logs and login records.
    DefenceEvasion,
    /// Changes the running host: power, services stopped or masked, kernel
    /// parameters and modules, remounts.
    HostState,
    /// Writes, removes or moves a file under the system's directories
    /// (`/etc`, `/boot`, `/usr`, `/var/lib`, `/bin`, `/sbin`, `/lib*`).
    SystemFile,
    /// Removes recursively or shreds targets nobody sees before it runs: the
    /// input of `xargs` or `parallel`, `find -exec`'s `{}`.
    BlindDestruction,
    /// Gives a whole disk (`/dev/sda`, `/dev/nvme0n1`) as an operand to a
    /// program not known to only read it, which may write it.
    DiskOperand,
    /// Prints a credential a tool keeps (`gh auth token`, `aws configure get
    /// aws_secret_access_key`, `gcloud auth print-access-token`, a keyring's
    /// or password manager's entry): a secret into the call's output.
    CredentialRead,
}

/// How strict the verdict on an effect is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// A human should approve the call.
    Ask,
    /// The call must not run.
    Deny,
}

impl Effect {
    /// Every effect, in the order of the table.
    pub const ALL: [Effect; 18] = [
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
        Effect::Persistence,
        Effect::DefenceEvasion,
        Effect::HostState,
        Effect::SystemFile,
        Effect::BlindDestruction,
        Effect::DiskOperand,
        Effect::CredentialRead,
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
            Effect::Persistence => "persistence",
            Effect::DefenceEvasion => "defence_evasion",
            Effect::HostState => "host_state",
            Effect::SystemFile => "system_file",
            Effect::BlindDestruction => "blind_destruction",
            Effect::DiskOperand => "disk_operand",
            Effect::CredentialRead => "credential_read",
        }
    }

    /// The effect named so (`disk_write`, ...); `None` for any other name.
    pub fn from_name(name: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Deny for what cannot be undone or hands the machine to someone else;
    /// ask for what an operator commonly does on purpose.
    pub fn severity(self) -> Severity {
        match self {
            Effect::Upload
            | Effect::Privilege
            | Effect::Persistence
            | Effect::DefenceEvasion
            | Effect::HostState
            | Effect::SystemFile
            | Effect::BlindDestruction
            | Effect::DiskOperand => Severity::Ask,
            _ => Severity::Deny,
        }
    }

    /// A floor applies whatever an explicit rule allows (like the sensitive
    /// paths); an advisory effect only when no explicit rule decided the call.
    /// Every deny is a floor; so are the asks for what an agent's everyday
    /// work never needs but an operator sometimes does on purpose
    /// (persistence, defence evasion, host state, system files): a human
    /// approves them even under an allow-all rule.
    pub fn floor(self) -> bool {
        !matches!(
            self,
            Effect::Upload | Effect::Privilege | Effect::BlindDestruction
        )
    }
}

/// One effect found, with what shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Which effect.
    pub effect: Effect,
    /// What shows it, in words for a reason's message (`connects a shell to /dev/tcp/…`).
    pub message: String,
}

/// The effects of writing, removing or changing the file at `path` (canonical,
/// comparison form; `shown` is how the caller wrote it), whichever tool does
/// it: `writer` is the program or tool, for the message. A device is a disk
/// write; otherwise the first family that claims the file: account file,
/// persistence, defence evasion (logs, history), host state (`/proc/sys`,
/// `/sys`), system file.
pub fn file_effects(path: &str, shown: &str, writer: &str, places: &Places) -> Vec<Finding> {
    let mut found = Vec::new();
    if is_block_device(path) {
        found.push(Finding {
            effect: Effect::DiskWrite,
            message: format!("{writer} writes to the device {shown}"),
        });
    }
    // The home in comparison form, resolved once for both families that
    // look under it.
    let home = places.resolve("~");
    let family = if is_account_file(path) {
        Some((Effect::AccountFile, "changes"))
    } else if is_persistence_file(path, &home) {
        Some((Effect::Persistence, "changes"))
    } else if is_trace_file(path, &home) {
        Some((Effect::DefenceEvasion, "changes or removes"))
    } else if is_kernel_file(path) {
        Some((Effect::HostState, "writes"))
    } else if is_system_file(path) {
        Some((Effect::SystemFile, "changes"))
    } else {
        None
    };
    found.extend(family.map(|(effect, verb)| Finding {
        effect,
        message: format!("{writer} {verb} {shown}"),
    }));
    found
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

        // Files the command writes: devices, account, start-up, log, kernel and system files.
        for target in written(c) {
            for f in file_effects(&places.resolve(target), target, name(c), places) {
                add(f.effect, f.message);
            }
        }
        if let Some(why) = schedules(c) {
            add(Effect::Persistence, why);
        }
        if let Some(why) = evades(c) {
            add(Effect::DefenceEvasion, why);
        } else if let Some(why) = changes_host(c) {
            add(Effect::HostState, why);
        }
        if let Some(why) = disk_writer(c) {
            add(Effect::DiskWrite, why);
        } else if let Some(why) = disk_operand(c) {
            add(Effect::DiskOperand, why);
        }
        if let Some(why) = destroys(a, i, places) {
            add(Effect::DestroySystem, why);
        } else if let Some(why) = destroys_unseen(c) {
            add(Effect::BlindDestruction, why);
        }
        if let Some(why) = signals_all(c) {
            add(Effect::SignalAll, why);
        }
        if let Some(why) = prints_credential(c) {
            add(Effect::CredentialRead, why);
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
            if let Some(t) = feeds.iter().find(|u| programs::transforms_text(u))
                && is_shell(c)
            {
                add(
                    Effect::HiddenCode,
                    format!("pipes text transformed by {} into {program}", name(t)),
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
                if one_liners::fetches_and_runs(code) {
                    add(
                        Effect::DownloadExec,
                        format!("{program} evaluates code it downloads"),
                    );
                }
                // Shell text the one-liner runs, judged as the commands it is
                // (each is a strict part of this line, so this ends).
                for text in one_liners::shell_text(code) {
                    for f in detect(&analyze(&text), places) {
                        add(f.effect, format!("{program} runs `{text}`: {}", f.message));
                    }
                }
                for tree in one_liners::removed_trees(code) {
                    if is_system_path(places, &places.resolve(&tree)) {
                        add(
                            Effect::DestroySystem,
                            format!("{program} removes the tree {tree}"),
                        );
                    }
                }
                for device in one_liners::written_devices(code) {
                    if is_block_device(&places.resolve(&device)) {
                        add(
                            Effect::DiskWrite,
                            format!("{program} writes to the device {device}"),
                        );
                    }
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
