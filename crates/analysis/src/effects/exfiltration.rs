//! Sockets and uploads: a program run on a socket, local data sent over a raw
//! socket, local files uploaded with a client
//! ([`Effect::RawExfiltration`](super::Effect::RawExfiltration),
//! [`Effect::Upload`](super::Effect::Upload),
//! [`Effect::SocketShell`](super::Effect::SocketShell)).

use crate::shell::{Analysis, Command, RedirectOp};

use super::command::value_of;

/// `nc -e PROG`, `nc -c CMD`, `ncat --exec/--sh-exec/--lua-exec`, `socat … EXEC:/SYSTEM:` with a network address.
pub(super) fn socket_exec(c: &Command) -> Option<String> {
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
    } else if c.is("openssl") || c.is("telnet") {
        // telnet's `-e` is its escape character, not a program.
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
pub(super) fn sends_local_data(a: &Analysis, i: usize) -> bool {
    let c = &a.commands[i];
    if c.redirects.iter().any(|r| {
        r.op == RedirectOp::Input
                && r.fd.is_none_or(|fd| fd == 0)
                // `</dev/null` closes the input: `openssl s_client … </dev/null`.
                && r.target.value != "/dev/null"
    }) {
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
pub(super) fn uploads(a: &Analysis, i: usize) -> Option<String> {
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
            // The locations follow the sub-command: a bucket-to-bucket `mv` uploads nothing.
            let remote = |s: &str| s.starts_with("s3://");
            let (dest, sources) = operands[1..].split_last()?;
            (matches!(sub, "put" | "sync" | "cp" | "mv" | "modify")
                && remote(dest)
                && sources.iter().any(|s| !remote(s)))
            .then_some(dest)
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
