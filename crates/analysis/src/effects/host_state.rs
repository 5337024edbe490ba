//! Host state: power, services, kernel parameters and modules, remounts
//! ([`Effect::HostState`](super::Effect::HostState)).

use crate::shell::Command;

use super::command::{has_flag, value_of};

pub(super) fn changes_host(c: &Command) -> Option<String> {
    let program = c.program.as_deref()?;
    // A `match` rejects most programs in one comparison by length.
    if !matches!(
        program,
        "shutdown"
            | "reboot"
            | "poweroff"
            | "halt"
            | "kexec"
            | "init"
            | "telinit"
            | "systemctl"
            | "service"
            | "sysctl"
            | "modprobe"
            | "rmmod"
            | "insmod"
            | "mount"
            | "swapoff"
            | "swapon"
    ) {
        return None;
    }
    let operands: Vec<&str> = c.operands().map(|a| a.value.as_str()).collect();
    let first = operands.first().copied().unwrap_or("");
    match program {
        "shutdown" | "reboot" | "poweroff" | "halt" | "kexec" if !has_flag(c, &["--help"]) => {
            Some(format!("{program} stops or restarts the machine"))
        }
        "init" | "telinit" if matches!(first, "0" | "1" | "6" | "s" | "S" | "q") => {
            Some(format!("{program} {first} changes the run level"))
        }
        "systemctl" => operands
            .iter()
            .find(|o| {
                matches!(
                    **o,
                    "poweroff"
                        | "reboot"
                        | "halt"
                        | "kexec"
                        | "suspend"
                        | "hibernate"
                        | "hybrid-sleep"
                        | "rescue"
                        | "emergency"
                        | "isolate"
                        | "stop"
                        | "disable"
                        | "mask"
                        | "kill"
                        | "default"
                        | "set-default"
                )
            })
            .map(|o| format!("systemctl {o} changes the running system")),
        "service"
            if operands
                .get(1)
                .is_some_and(|o| matches!(*o, "stop" | "restart")) =>
        {
            Some(format!(
                "service {} {} changes the running system",
                first, operands[1]
            ))
        }
        "sysctl"
            if has_flag(c, &["-w", "--write", "-p", "--load", "--system"])
                || operands.iter().any(|o| o.contains('=')) =>
        {
            Some("sysctl changes kernel parameters".into())
        }
        "modprobe"
            if !has_flag(
                c,
                &[
                    "-n",
                    "--dry-run",
                    "-c",
                    "--showconfig",
                    "-D",
                    "--show-depends",
                ],
            ) =>
        {
            Some("modprobe loads or removes kernel modules".into())
        }
        "rmmod" | "insmod" => Some(format!("{program} changes the kernel's modules")),
        "mount"
            if value_of(c, &["-o", "--options"])
                .is_some_and(|o| o.split(',').any(|x| x == "remount")) =>
        {
            Some("mount remounts a file system".into())
        }
        "swapoff" | "swapon" if has_flag(c, &["-a", "--all"]) => {
            Some(format!("{program} changes the swap space"))
        }
        _ => None,
    }
}

/// Kernel interfaces whose writing changes the running system.
pub(super) fn is_kernel_file(path: &str) -> bool {
    path.starts_with("/proc/sys/") || path == "/proc/sysrq-trigger" || path.starts_with("/sys/")
}
