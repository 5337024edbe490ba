//! Download, decode, execute: code a shell or an interpreter is given inline or as
//! a script, what it does, and the files a command downloads
//! ([`Effect::DownloadExec`](super::Effect::DownloadExec),
//! [`Effect::HiddenCode`](super::Effect::HiddenCode),
//! [`Effect::SocketShell`](super::Effect::SocketShell)).

use crate::shell::Command;

use super::command::value_of;

/// `printf '\x72\x6d'` and friends: text that spells something else.
pub(super) fn has_escapes(c: &Command) -> bool {
    (c.is("printf") || c.is("echo"))
        && c.args
            .iter()
            .any(|a| ["\\x", "\\0", "\\u"].iter().any(|e| a.value.contains(e)))
}

/// The code an interpreter is given inline (`python -c CODE`, `perl -e CODE`,
/// `php -r CODE`, `node -e CODE`, `ruby -e CODE`).
pub(super) fn inline_code(c: &Command) -> Option<&str> {
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

pub(super) fn connects_a_shell(code: &str) -> bool {
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

pub(super) fn decodes_and_runs(code: &str) -> bool {
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
pub(super) fn script_operand(c: &Command) -> Option<&str> {
    if inline_code(c).is_some() {
        return None;
    }
    c.operands().next().map(|a| a.value.as_str())
}

/// The files a downloader saves (`curl -o F`, `curl -O URL`, `wget URL`, `wget -O F`).
pub(super) fn downloads(c: &Command) -> Vec<String> {
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
