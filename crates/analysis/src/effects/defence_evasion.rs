//! Defence evasion: history, firewalls, mandatory access control, audit, logs
//! and login records turned off, flushed or removed
//! ([`Effect::DefenceEvasion`](super::Effect::DefenceEvasion)).

use crate::shell::Command;

use super::command::has_flag;

/// Services that watch or protect the machine.
pub(super) const GUARDS: &[&str] = &[
    "auditd",
    "rsyslog",
    "syslog",
    "syslog-ng",
    "systemd-journald",
    "apparmor",
    "firewalld",
    "ufw",
    "nftables",
    "iptables",
    "netfilter-persistent",
    "fail2ban",
    "falco",
    "osqueryd",
    "wazuh-agent",
    "crowdstrike",
    "falcon-sensor",
];

fn is_guard(unit: &str) -> bool {
    let name = unit.strip_suffix(".service").unwrap_or(unit);
    GUARDS.contains(&name)
}

/// History, logs and login records (canonical, lower case; `home`: the home
/// directory in comparison form).
pub(super) fn is_trace_file(path: &str, home: &str) -> bool {
    let history = [
        ".bash_history",
        ".zsh_history",
        ".history",
        ".sh_history",
        ".python_history",
        ".lesshst",
        ".local/share/fish/fish_history",
    ];
    path.starts_with("/var/log/")
        || path == "/var/log"
        || matches!(path, "/var/run/utmp" | "/run/utmp" | "/var/log/wtmp")
        || history.iter().any(|h| {
            path.strip_prefix(home)
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|r| r == *h)
                || path.strip_prefix("/root/") == Some(h)
        })
}

pub(super) fn evades(c: &Command) -> Option<String> {
    let program = c.program.as_deref().unwrap_or("");
    // A `match` rejects most programs in one comparison by length.
    if c.assignments.is_empty()
        && !matches!(
            program,
            "history"
                | "unset"
                | "export"
                | "declare"
                | "typeset"
                | "readonly"
                | "set"
                | "iptables"
                | "ip6tables"
                | "iptables-legacy"
                | "ip6tables-legacy"
                | "iptables-nft"
                | "ebtables"
                | "arptables"
                | "nft"
                | "ufw"
                | "setenforce"
                | "aa-disable"
                | "aa-complain"
                | "aa-teardown"
                | "auditctl"
                | "journalctl"
                | "systemctl"
                | "service"
        )
    {
        return None;
    }
    let operands: Vec<&str> = c.operands().map(|a| a.value.as_str()).collect();
    let history_var = |v: &str| {
        let name = v.split('=').next().unwrap_or("");
        matches!(name, "HISTFILE" | "HISTSIZE" | "HISTFILESIZE")
            && (!v.contains('=') || name == "HISTFILE" || v.ends_with("=0"))
    };
    if c.assignments
        .iter()
        .any(|(k, v)| k == "HISTFILE" || (k.starts_with("HIST") && v.value == "0"))
    {
        return Some("turns the shell history off".into());
    }
    match program {
        "history" if has_flag(c, &["-c", "-d", "-w"]) => Some("history clears the history".into()),
        "unset" | "export" | "declare" | "typeset" | "readonly"
            if c.args.iter().any(|a| history_var(&a.value)) =>
        {
            Some(format!("{program} turns the shell history off"))
        }
        "set" if c.args.iter().any(|a| a.value == "+o") && operands.contains(&"history") => {
            Some("set +o history turns the shell history off".into())
        }
        "iptables" | "ip6tables" | "iptables-legacy" | "ip6tables-legacy" | "iptables-nft"
        | "ebtables" | "arptables"
            if has_flag(
                c,
                &["-F", "--flush", "-X", "--delete-chain", "-P", "--policy"],
            ) =>
        {
            Some(format!("{program} flushes the firewall"))
        }
        "nft"
            if operands
                .first()
                .is_some_and(|o| matches!(*o, "flush" | "delete")) =>
        {
            Some("nft flushes the firewall".into())
        }
        "ufw"
            if operands
                .first()
                .is_some_and(|o| matches!(*o, "disable" | "reset")) =>
        {
            Some("ufw turns the firewall off".into())
        }
        "setenforce"
            if operands
                .first()
                .is_some_and(|o| matches!(*o, "0" | "Permissive" | "permissive")) =>
        {
            Some("setenforce 0 turns SELinux off".into())
        }
        "aa-disable" | "aa-complain" | "aa-teardown" => {
            Some(format!("{program} turns AppArmor off"))
        }
        "auditctl"
            if has_flag(c, &["-D"])
                || c.args
                    .windows(2)
                    .any(|w| w[0].value == "-e" && w[1].value == "0") =>
        {
            Some("auditctl clears or turns off the audit rules".into())
        }
        "journalctl"
            if c.args
                .iter()
                .any(|a| a.value.starts_with("--vacuum") || a.value == "--rotate") =>
        {
            Some("journalctl removes logs".into())
        }
        "systemctl" | "service" => {
            let stops = operands
                .iter()
                .any(|o| matches!(*o, "stop" | "disable" | "mask" | "kill"));
            operands
                .iter()
                .find(|o| is_guard(o))
                .filter(|_| stops)
                .map(|unit| format!("{program} stops {unit}"))
        }
        _ => None,
    }
}
