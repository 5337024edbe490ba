//! Privileges: running elevated, or granting privileges (setuid bits, files given
//! to root, capabilities, account tools)
//! ([`Effect::Privilege`](super::Effect::Privilege)).

use crate::shell::Command;

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
