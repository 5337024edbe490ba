//! The hosts a command would contact over the network: the URLs of `curl` and
//! `wget`, the remotes of `git`, the destinations of `ssh`, `scp`, `sftp`,
//! `rsync`, `nc` and `telnet`, and bash's `/dev/tcp/HOST/PORT`. For a provider
//! that allows only listed hosts; a destination that is not literal (a
//! variable, a substitution) is reported with no host, so that such a provider
//! can refuse what it cannot check.

use crate::shell::{Analysis, Arg, Command};

/// A host and its port, as read from a word.
type HostPort = Option<(String, Option<u16>)>;

/// One place a command would contact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contact {
    /// The program that would contact it (`curl`, `git`, …; `bash` for
    /// `/dev/tcp/…`).
    pub program: String,
    /// The word it was read from, as the program receives it (a URL, `user@host:path`, a host).
    pub target: String,
    /// The host, lower-cased, without user or port (an IPv6 address without
    /// its brackets); `None` when the word is not literal and the host cannot
    /// be known.
    pub host: Option<String>,
    /// The port, when the word or an option names one.
    pub port: Option<u16>,
}

/// Programs whose operands are URLs; a word without a scheme is a host (and
/// path), as they read it.
const URL_PROGRAMS: &[&str] = &["curl", "wget", "http", "https", "xh", "aria2c"];
/// Programs whose destination is `[user@]host[:path]` or a URL.
const REMOTE_COPY: &[&str] = &["scp", "rsync", "sftp"];
/// Programs whose first operand is the host.
const HOST_FIRST: &[&str] = &["ssh", "nc", "ncat", "netcat", "telnet", "ftp"];

impl Command {
    /// The places this command would contact over the network (see [`Contact`]).
    pub fn contacts(&self) -> Vec<Contact> {
        let Some(program) = self.program.as_deref() else {
            return Vec::new();
        };
        let contact = |arg: &Arg, host: HostPort| Contact {
            program: program.to_string(),
            target: arg.value.clone(),
            port: host.as_ref().and_then(|h| h.1),
            host: host.map(|h| h.0),
        };
        let literal = |arg: &Arg, read: fn(&str) -> HostPort| {
            if arg.literal { read(&arg.value) } else { None }
        };
        let mut out = Vec::new();
        if URL_PROGRAMS.contains(&program) {
            for arg in self.operands() {
                if !arg.literal || url_host(&arg.value).is_some() || bare_host(&arg.value).is_some()
                {
                    out.push(contact(
                        arg,
                        literal(arg, |w| url_host(w).or_else(|| bare_host(w))),
                    ));
                }
            }
            // curl's proxy is contacted too.
            for (option, value) in self.options() {
                if let Some(value) = value
                    && program == "curl"
                    && matches!(option, "-x" | "--proxy")
                {
                    out.push(contact(
                        value,
                        literal(value, |w| url_host(w).or_else(|| bare_host(w))),
                    ));
                }
            }
        } else if program == "git" {
            for arg in self.operands() {
                if !arg.literal || url_host(&arg.value).is_some() || scp_host(&arg.value).is_some()
                {
                    out.push(contact(
                        arg,
                        literal(arg, |w| url_host(w).or_else(|| scp_host(w))),
                    ));
                }
            }
        } else if REMOTE_COPY.contains(&program) {
            for arg in self.operands() {
                if !arg.literal || url_host(&arg.value).is_some() || scp_host(&arg.value).is_some()
                {
                    out.push(contact(
                        arg,
                        literal(arg, |w| url_host(w).or_else(|| scp_host(w))),
                    ));
                } else if program == "sftp" {
                    out.push(contact(arg, bare_host(&arg.value)));
                }
            }
        } else if HOST_FIRST.contains(&program)
            && let Some(arg) = self.operands().next()
        {
            let mut host = literal(arg, |w| url_host(w).or_else(|| bare_host(w)));
            let port = self.options().find_map(|(option, value)| {
                (option == "-p" && program == "ssh").then_some(value?.value.parse().ok()?)
            });
            let port = port.or_else(|| {
                (program != "ssh")
                    .then(|| self.operands().nth(1)?.value.parse().ok())
                    .flatten()
            });
            if let Some((_, p)) = &mut host
                && p.is_none()
            {
                *p = port;
            }
            out.push(contact(arg, host));
        }
        out
    }
}

impl Analysis {
    /// The places every command of the line would contact, `/dev/tcp/HOST/PORT`
    /// redirections included (see [`Contact`]).
    pub fn contacts(&self) -> Vec<Contact> {
        let mut out: Vec<Contact> = self.commands.iter().flat_map(Command::contacts).collect();
        for path in &self.network_paths {
            let mut parts = path.trim_start_matches('/').split('/').skip(2);
            let host = parts
                .next()
                .filter(|h| !h.is_empty())
                .map(str::to_ascii_lowercase);
            let port = parts.next().and_then(|p| p.parse().ok());
            out.push(Contact {
                program: "bash".to_string(),
                target: path.clone(),
                host,
                port,
            });
        }
        out
    }
}

/// `scheme://[user@]host[:port][/…]` → host and port.
fn url_host(word: &str) -> Option<(String, Option<u16>)> {
    let (scheme, rest) = word.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b))
    {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    authority_host(authority)
}

/// `[user@]host[:port]`, the authority of a URL.
fn authority_host(authority: &str) -> Option<(String, Option<u16>)> {
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        Some(p) if !p.is_empty() => Some(p.parse().ok()?),
        _ => None,
    };
    Some((host.to_ascii_lowercase(), port))
}

/// A word without a scheme that curl or wget read as `host[:port][/path]`:
/// it has a dot or is `localhost`, and is not a path.
fn bare_host(word: &str) -> Option<(String, Option<u16>)> {
    if word.contains("://") || word.starts_with(['/', '.', '~', '-']) {
        return None;
    }
    let authority = word.split(['/', '?', '#']).next()?;
    let (host, port) = authority_host(authority)?;
    let plausible = (host.contains('.') || host == "localhost" || host.contains(':'))
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-_:".contains(&b));
    plausible.then_some((host, port))
}

/// `[user@]host:path` (scp's and git's short form; rsync's `host::module`
/// too): a colon before any slash, and not a local path.
fn scp_host(word: &str) -> Option<(String, Option<u16>)> {
    if word.contains("://") || word.starts_with(['/', '.', '~']) {
        return None;
    }
    let (before, _) = word.split_once(':')?;
    if before.contains('/') {
        return None;
    }
    let host = before.rsplit_once('@').map_or(before, |(_, h)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), None))
}

#[cfg(test)]
mod tests {
    use crate::shell::analyze;

    fn hosts(line: &str) -> Vec<(String, Option<String>, Option<u16>)> {
        analyze(line)
            .contacts()
            .into_iter()
            .map(|c| (c.program, c.host, c.port))
            .collect()
    }

    fn host(program: &str, host: &str, port: Option<u16>) -> (String, Option<String>, Option<u16>) {
        (program.to_string(), Some(host.to_string()), port)
    }

    #[test]
    fn curl_contacts_its_urls_not_its_option_values() {
        assert_eq!(
            hosts("curl -o out.html -H 'X: y' https://Example.com:8443/a?b https://api.test/v1"),
            [
                host("curl", "example.com", Some(8443)),
                host("curl", "api.test", None)
            ]
        );
    }

    #[test]
    fn curl_and_wget_read_a_word_without_a_scheme_as_a_host() {
        assert_eq!(
            hosts("wget -O - example.org/x"),
            [host("wget", "example.org", None)]
        );
        assert_eq!(
            hosts("curl localhost:3000"),
            [host("curl", "localhost", Some(3000))]
        );
    }

    #[test]
    fn curl_contacts_its_proxy() {
        assert_eq!(
            hosts("curl -x http://proxy.corp:3128 https://a.test"),
            [
                host("curl", "a.test", None),
                host("curl", "proxy.corp", Some(3128))
            ]
        );
    }

    #[test]
    fn git_contacts_url_and_scp_like_remotes_only() {
        assert_eq!(
            hosts(
                "git clone git@github.test:o/r.git && git push origin main && git fetch https://h.test/r"
            ),
            [
                host("git", "github.test", None),
                host("git", "h.test", None)
            ]
        );
    }

    #[test]
    fn ssh_contacts_its_destination_at_the_port_it_is_given() {
        assert_eq!(
            hosts("ssh -p 2222 -i key deploy@Build.Host uptime"),
            [host("ssh", "build.host", Some(2222))]
        );
        assert_eq!(
            hosts("ssh ssh://u@h.test:22"),
            [host("ssh", "h.test", Some(22))]
        );
    }

    #[test]
    fn scp_and_rsync_contact_their_remote_side() {
        assert_eq!(
            hosts("scp -P 22 ./f u@a.test:/tmp/"),
            [host("scp", "a.test", None)]
        );
        assert_eq!(
            hosts("rsync -av -e 'ssh -p 2' src/ b.test::mod/ ./local"),
            [host("rsync", "b.test", None)]
        );
    }

    #[test]
    fn nc_and_dev_tcp_contact_a_host_and_port() {
        assert_eq!(
            hosts("nc -v 10.0.0.1 4444"),
            [host("nc", "10.0.0.1", Some(4444))]
        );
        assert_eq!(
            hosts("cat < /dev/tcp/evil.test/80"),
            [host("bash", "evil.test", Some(80))]
        );
    }

    #[test]
    fn a_destination_that_is_not_literal_has_no_host() {
        let contacts = analyze("curl \"$URL\"").contacts();
        assert_eq!(contacts.len(), 1);
        assert_eq!(contacts[0].host, None);
    }

    #[test]
    fn a_wrapped_or_nested_command_is_seen_through() {
        assert_eq!(
            hosts("sudo bash -c 'curl https://x.test'"),
            [host("curl", "x.test", None)]
        );
    }

    #[test]
    fn local_commands_contact_nothing() {
        assert!(hosts("ls -la /tmp; cp a b; git status; grep -e x file").is_empty());
    }

    #[test]
    fn an_ipv6_host_loses_its_brackets() {
        assert_eq!(
            hosts("curl http://[::1]:80/"),
            [host("curl", "::1", Some(80))]
        );
    }
}
