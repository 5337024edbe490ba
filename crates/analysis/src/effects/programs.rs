//! The kinds of program the families look for: shells, interpreters, downloaders,
//! socket clients and decoders.

use crate::shell::Command;

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

/// Shells by name. A `match` rather than a list: every command of every call
/// asks (twice for interpreters), and it rejects most names in one
/// comparison by length.
fn is_shell_name(p: &str) -> bool {
    matches!(
        p,
        "sh" | "bash"
            | "zsh"
            | "dash"
            | "ksh"
            | "mksh"
            | "ash"
            | "fish"
            | "yash"
            | "posh"
            | "rbash"
            | "pwsh"
            | "powershell"
    )
}

/// Interpreters other than shells, by name.
fn is_interpreter_name(p: &str) -> bool {
    matches!(
        p,
        "python"
            | "python2"
            | "python3"
            | "perl"
            | "ruby"
            | "node"
            | "nodejs"
            | "php"
            | "lua"
            | "tclsh"
            | "source"
            | "."
            | "osascript"
            | "irb"
            | "deno"
            | "bun"
            | "Rscript"
            | "awk"
            | "gawk"
    )
}

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

pub(super) fn is_shell(c: &Command) -> bool {
    c.program.as_deref().is_some_and(is_shell_name)
}

pub(super) fn is_interpreter(c: &Command) -> bool {
    c.program.as_deref().is_some_and(|p| {
        is_shell_name(p)
            || is_interpreter_name(p)
            || (p.starts_with("python") && p[6..].bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    }) && !(c.is("awk") || c.is("gawk"))
}

pub(super) fn is_downloader(c: &Command) -> bool {
    c.program
        .as_deref()
        .is_some_and(|p| DOWNLOADERS.contains(&p))
}

pub(super) fn is_socket_client(c: &Command) -> bool {
    c.program
        .as_deref()
        .is_some_and(|p| SOCKET_CLIENTS.contains(&p))
        || (c.is("openssl") && c.args.first().is_some_and(|a| a.value == "s_client"))
}

/// `base64 -d`, `base32 --decode`, `basenc -d`, `xxd -r`, `openssl … -d`, `uudecode`.
pub(super) fn is_decoder(c: &Command) -> bool {
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

/// Programs that rewrite text in ways Warden does not evaluate (`tr`, `rev`,
/// `sed`, `awk`, `perl -p`): what they pipe into a shell is hidden code.
pub(super) fn transforms_text(c: &Command) -> bool {
    matches!(
        c.program.as_deref(),
        Some(
            "tr" | "rev" | "sed" | "awk" | "gawk" | "mawk" | "nawk" | "iconv" | "caesar" | "rot13"
        )
    ) || (c.is("perl")
        && c.args
            .iter()
            .any(|a| a.value.starts_with("-p") || a.value.starts_with("-n")))
}
