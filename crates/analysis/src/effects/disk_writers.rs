//! Programs that write a disk raw: file systems made, images written, devices
//! encrypted, partitioned, wiped or their firmware or boot loader changed
//! ([`Effect::DiskWrite`](super::Effect::DiskWrite)).

use crate::path::{canonicalize, comparison_form};
use crate::shell::Command;

use super::command::{has_flag, value_of};
use super::written_files::is_block_device;

/// Programs that write a disk raw, and whether this invocation does.
pub(super) fn disk_writer(c: &Command) -> Option<String> {
    let program = c.program.as_deref()?;
    let device = || {
        c.operands()
            .map(|a| a.value.as_str())
            .find(|v| is_block_device(&comparison_form(&canonicalize(v, None, None))))
    };
    let first_operand = || c.operands().next().map(|a| a.value.as_str()).unwrap_or("");
    let reads_only = |flags: &[&str]| has_flag(c, flags);
    let only_flags = |allowed: &[&str]| {
        let flags = c.flags();
        !flags.is_empty() && flags.iter().all(|f| allowed.contains(&f))
    };
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
        "pvcreate" | "vgcreate" | "vgextend" => "puts a volume on",
        "grub-install" | "grub2-install" | "install-mbr" | "syslinux" | "extlinux" | "lilo" => {
            "installs a boot loader on"
        }
        // Printing the super block, label or UUID only reads.
        "tune2fs" if only_flags(&["-l"]) => return None,
        "xfs_admin" if only_flags(&["-l", "-u", "-f"]) => return None,
        // A label program given only the device prints its label.
        "e2label" | "dosfslabel" | "fatlabel" | "exfatlabel" | "ntfslabel"
            if c.operands().count() < 2 && !reads_only(&["-r", "--reset", "-i", "--volume-id"]) =>
        {
            return None;
        }
        "swaplabel" if !reads_only(&["-L", "--label", "-U", "--uuid"]) => return None,
        "tune2fs" | "e2label" | "xfs_admin" | "btrfstune" | "ntfsfix" | "ntfslabel"
        | "dosfslabel" | "fatlabel" | "exfatlabel" | "swaplabel" | "resize2fs" | "growpart" => {
            "edits the file system on"
        }
        "mlabel" if !reads_only(&["-s", "-n"]) || c.operands().any(|a| a.value.contains("::")) => {
            let device = value_of(c, &["-i"]).unwrap_or_default();
            return Some(format!("mlabel writes the label of {device}"));
        }
        // Pools and volumes destroyed need no device operand.
        "zpool" | "zfs" => {
            let sub = first_operand();
            return match sub {
                "destroy" | "labelclear" => {
                    Some(format!("{program} {sub} destroys a pool or data set"))
                }
                "create" | "add" | "attach" | "replace" | "split" | "initialize" | "remove"
                    if device().is_some() || sub != "create" =>
                {
                    Some(format!("{program} {sub} writes to the pool's devices"))
                }
                "rollback" if reads_only(&["-r", "-R"]) => {
                    Some(format!("{program} rollback destroys later snapshots"))
                }
                _ => None,
            };
        }
        "lvremove" | "vgremove" | "pvremove" | "lvreduce" => {
            return Some(format!("{program} destroys a volume"));
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

/// Programs the table above judges itself (their read-only forms decided by
/// their flags), those whose writes [`super::written`] sees (`ddrescue`'s
/// output), and programs that only read a disk given as an operand or print
/// what they know of it.
const DISK_READERS: &[&str] = &[
    "tune2fs",
    "xfs_admin",
    "e2label",
    "dosfslabel",
    "fatlabel",
    "exfatlabel",
    "ntfslabel",
    "swaplabel",
    "btrfstune",
    "ntfsfix",
    "resize2fs",
    "growpart",
    "mlabel",
    "zpool",
    "zfs",
    "dosfsck",
    "ntfsclone",
    "cfdisk",
    "cgdisk",
    "systemd-cryptenroll",
    "cryptsetup",
    "integritysetup",
    "veritysetup",
    "nvme",
    "xorriso",
    "xorrisofs",
    "xorrecord",
    "growisofs",
    "wodim",
    "cdrecord",
    "qemu-img",
    "bmaptool",
    "ddrescue",
    "dc3dd",
    "dcfldd",
    "lsblk",
    "blkid",
    "file",
    "stat",
    "ls",
    "smartctl",
    "hdparm",
    "fdisk",
    "sfdisk",
    "gdisk",
    "parted",
    "sgdisk",
    "partx",
    "partprobe",
    "blockdev",
    "udevadm",
    "wipefs",
    "badblocks",
    "e2fsck",
    "fsck",
    "xfs_repair",
    "dumpe2fs",
    "debugfs",
    "ntfsresize",
    "mdadm",
    "efibootmgr",
    "btrfs",
    "cat",
    "od",
    "xxd",
    "hexdump",
    "hd",
    "strings",
    "cmp",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "pv",
    "isoinfo",
    "sg_inq",
    "eject",
    "mount",
    "umount",
    "findmnt",
    "df",
    "pvs",
    "pvdisplay",
    "pvck",
    "echo",
    "printf",
    "systemctl",
    "journalctl",
];

/// A whole disk (not a partition) named literally: `/dev/sda`, `/dev/vdb`,
/// `/dev/nvme0n1`, `/dev/mmcblk0`, macOS's `/dev/disk2` and `/dev/rdisk2`.
fn is_whole_disk(value: &str) -> bool {
    let Some(name) = value.strip_prefix("/dev/") else {
        return false;
    };
    let letters = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase()))
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    letters("sd")
        || letters("hd")
        || letters("vd")
        || letters("xvd")
        || name
            .strip_prefix("nvme")
            .and_then(|r| r.split_once('n'))
            .is_some_and(|(c, n)| digits(c) && digits(n))
        || name.strip_prefix("mmcblk").is_some_and(digits)
        || name.strip_prefix("disk").is_some_and(digits)
        || name.strip_prefix("rdisk").is_some_and(digits)
}

/// A program the table does not know as a disk's reader, given a whole disk
/// as an operand: it may write it, so a human says whether it does
/// ([`Effect::DiskOperand`](super::Effect::DiskOperand)).
pub(super) fn disk_operand(c: &Command) -> Option<String> {
    // Most commands name no device: the cheap test first.
    if !c.args.iter().any(|a| a.value.starts_with("/dev/")) {
        return None;
    }
    let program = c.program.as_deref().unwrap_or(&c.written);
    if DISK_READERS.contains(&program) || program.starts_with("fsck") {
        return None;
    }
    let disk = c.operands().find(|a| is_whole_disk(&a.value))?;
    Some(format!(
        "{program} is given the whole disk {}, which it may write",
        disk.value
    ))
}
