//! Privileges: running elevated, or granting privileges (setuid bits, files given
//! to root, capabilities, account tools)
//! ([`Effect::Privilege`](super::Effect::Privilege)).

use crate::shell::Command;

use super::command::has_flag;

const ELEVATORS: &[&str] = &["sudo", "doas", "su", "pkexec", "runuser", "run0"];

pub(super) fn privilege(c: &Command) -> Option<String> {
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
        "docker" | "podman" | "nerdctl"
            if matches!(
                c.operands().next().map(|a| a.value.as_str()),
                Some("run" | "create")
            ) && escapes_the_container(c) =>
        {
            Some(format!(
                "{program} runs a container with the host's privileges"
            ))
        }
        "nsenter"
            if c.args
                .windows(2)
                .any(|w| matches!(w[0].value.as_str(), "-t" | "--target") && w[1].value == "1")
                || c.args
                    .iter()
                    .any(|a| a.value == "--target=1" || a.value == "-t1") =>
        {
            Some("nsenter enters the namespaces of init".into())
        }
        // Listing an account's ageing or the shells changes nothing.
        "chage" | "chsh" if has_flag(c, &["-l", "--list", "--list-shells"]) => None,
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

/// A container given the host: `--privileged`, the host's root mounted, the
/// host's process namespace, every capability or `SYS_ADMIN`.
fn escapes_the_container(c: &Command) -> bool {
    let args = &c.args;
    args.iter().enumerate().any(|(k, a)| {
        let v = a.value.as_str();
        let next = args.get(k + 1).map_or("", |n| n.value.as_str());
        let value = |long: &str| {
            v.strip_prefix(long)
                .and_then(|r| r.strip_prefix('='))
                .or((v == long).then_some(next))
        };
        let host_root = |m: &str| m == "/" || m.starts_with("/:");
        v == "--privileged"
            || value("--pid").is_some_and(|x| x == "host")
            || value("--cap-add").is_some_and(|x| {
                x.eq_ignore_ascii_case("all") || x.eq_ignore_ascii_case("sys_admin")
            })
            || (v == "-v" && host_root(next))
            || value("--volume").is_some_and(host_root)
            || value("--mount").is_some_and(|m| {
                m.split(',')
                    .any(|kv| matches!(kv, "source=/" | "src=/" | "source=/," | "src=/,"))
            })
    })
}
