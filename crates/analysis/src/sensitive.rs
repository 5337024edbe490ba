//! Sensitive paths: credentials and keys that no tool call may touch, the
//! one list Warden's native permission engine and the OAP provider share.
//!
//! Patterns are matched against canonical paths in comparison form (NFKC, lower
//! case), component by component, anywhere in the path:
//! - `.ssh/` (ends with `/`): a directory of that name anywhere;
//! - `.aws/credentials` (has a `/`): those components in sequence anywhere;
//! - `*.pem`, `id_rsa*`, `.env` (no `/`): any component matching the glob.
//!
//! The line between secret and public is drawn by the path's shape alone, and
//! only where the shape is unambiguous ([`is_public`]): a public key (`*.pub`,
//! which an SSH certificate is too), a certificate that is not a key
//! (`cert.pem`, `fullchain.pem`, `ca.pem`, the system's trust store), and
//! `known_hosts` when it is read, are public; everything else the patterns
//! match stays protected, keys and tokens first.

use crate::glob::wildcard;
use crate::shell::{Command, RedirectOp};

/// The defaults: every one always applies unless dropped explicitly.
pub const DEFAULT_SENSITIVE_PATHS: &[&str] = &[
    ".ssh/",
    ".aws/credentials",
    ".aws/config",
    ".aws/sso/",
    ".aws/cli/",
    ".config/gcloud/",
    ".azure/",
    ".gnupg/",
    ".docker/config.json",
    ".kube/config",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    "secrets.json",
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    // Account databases: password hashes, by any reader.
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/master.passwd",
    // Browsers' password databases and the keys that open them, desktop
    // keyrings, password stores, and CLIs' stored tokens.
    "login data",
    "login data for account",
    "key3.db",
    "key4.db",
    ".mozilla/firefox/*/logins.json",
    "firefox/profiles/*/logins.json",
    ".local/share/keyrings/",
    "library/keychains/",
    ".password-store/",
    ".config/gh/hosts.yml",
    ".config/glab-cli/config.yml",
    ".config/hub",
];

/// How a path is used: public material may be read, and some of it written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// The path is read.
    Read,
    /// The path is written, removed or has its mode changed.
    Write,
}

/// Whether a canonical path in comparison form is public material by its
/// shape: a public key or SSH certificate (`*.pub`), a certificate that is not
/// a key, or `known_hosts` read (writing it changes which hosts are trusted).
pub fn is_public(path: &str, access: Access) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    if name.ends_with(".pub") {
        return true;
    }
    if matches!(name, "known_hosts" | "known_hosts.old" | "known_hosts2") {
        return access == Access::Read;
    }
    let Some(stem) = name.strip_suffix(".pem") else {
        return false;
    };
    // A name that says key or private is a key, whatever else it says.
    if names_a_secret(stem) {
        return false;
    }
    stem.contains("cert")
        || stem.contains("chain")
        || stem.contains("ca-bundle")
        || stem == "ca"
        || stem.ends_with("-ca")
        || stem.ends_with("_ca")
        || stem.starts_with("ca-")
        || stem.starts_with("ca_")
        || SYSTEM_TRUST_STORES.iter().any(|dir| path.starts_with(dir))
}

/// A file name (without its extension) that says key, private or secret.
fn names_a_secret(stem: &str) -> bool {
    stem.contains("key") || stem.contains("priv") || stem.contains("secret")
}

/// The words of a command that name a file it uses only for public material,
/// by the program's own flags: `openssl dhparam`'s `-in`, `-out` and standard
/// output (Diffie-Hellman parameters), `openssl x509`'s `-in`, `-out` and
/// standard output (it reads and prints certificates, never a private key;
/// `-signkey` and `-CAkey` name keys and are not among them). The words are
/// the command's own (`&str`s into its arguments and redirections), so a
/// caller tells this use of a file from another use of the same name by
/// position. Empty for every other command.
pub fn public_by_use(command: &Command) -> Vec<&str> {
    let mut out = Vec::new();
    if !command.is("openssl") {
        return out;
    }
    let Some(sub) = command.args.first() else {
        return out;
    };
    if !matches!(sub.value.as_str(), "dhparam" | "x509") {
        return out;
    }
    let mut args = command.args[1..].iter();
    while let Some(arg) = args.next() {
        if matches!(arg.value.as_str(), "-in" | "-out")
            && let Some(file) = args.next().filter(|a| a.literal)
        {
            out.push(file.value.as_str());
        }
    }
    for r in &command.redirects {
        if matches!(
            r.op,
            RedirectOp::Output | RedirectOp::Append | RedirectOp::Clobber
        ) && matches!(r.fd, None | Some(1))
            && r.target.literal
        {
            out.push(r.target.value.as_str());
        }
    }
    out
}

/// The default pattern of env files other than `.env` itself.
const ENV_FILES: &str = ".env.*";

/// An env file's template read (`.env.example`, `.env.sample`,
/// `.env.local.example`): committed to repositories with placeholder values
/// for people and agents to copy. Only where `.env.*` is what protects the
/// path (a template under `.ssh/` stays protected), and only read: writing
/// one could plant values a later copy picks up.
fn is_env_template(path: &str, access: Access) -> bool {
    let name = path.rsplit('/').next().unwrap_or("");
    access == Access::Read
        && name.starts_with(".env.")
        && (name.ends_with(".example") || name.ends_with(".sample"))
}

/// Where the system keeps the certificates of the authorities it trusts.
const SYSTEM_TRUST_STORES: &[&str] = &[
    "/etc/ssl/certs/",
    "/usr/share/ca-certificates/",
    "/etc/ca-certificates/",
    "/etc/pki/ca-trust/",
    "/usr/local/share/ca-certificates/",
];

/// One component of a pattern: a glob over a single path component, with the
/// literal text before its first and after its last wildcard, which every
/// match starts and ends with (a cheap test that rules out most components).
#[derive(Clone, Debug)]
struct Part {
    glob: String,
    prefix: String,
    suffix: String,
    literal: bool,
}

impl Part {
    fn new(glob: &str) -> Part {
        let first = glob.find(['*', '?']).unwrap_or(glob.len());
        let last = glob.rfind(['*', '?']).map_or(glob.len(), |i| i + 1);
        Part {
            glob: glob.to_string(),
            prefix: glob[..first].to_string(),
            suffix: glob[last.max(first)..].to_string(),
            literal: first == glob.len(),
        }
    }

    fn matches(&self, component: &str) -> bool {
        let c = component.as_bytes();
        if self.literal {
            return same_bytes(c, self.glob.as_bytes());
        }
        let (prefix, suffix) = (self.prefix.as_bytes(), self.suffix.as_bytes());
        c.len() >= prefix.len() + suffix.len()
            && same_bytes(&c[..prefix.len()], prefix)
            && same_bytes(&c[c.len() - suffix.len()..], suffix)
            && wildcard(&self.glob, component)
    }
}

/// Byte equality without a call to `memcmp`: these are a few bytes each, and
/// on some machines the C library's vectorised `memcmp` costs tens of
/// nanoseconds per call (measured: a path check took 700 ns instead of 90).
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A compiled pattern: its components, which must appear in sequence anywhere
/// in a path (`.ssh/` and `*.pem` are sequences of one).
#[derive(Clone, Debug)]
struct Compiled {
    text: String,
    parts: Vec<Part>,
}

/// The compiled patterns, indexed by the first byte their first component
/// must start with (most path components start with none of them).
#[derive(Clone, Debug)]
pub struct SensitivePaths {
    patterns: Vec<Compiled>,
    /// Patterns whose first component starts with a given byte.
    by_first_byte: Vec<Vec<usize>>,
    /// Patterns whose first component starts with a wildcard.
    any_first_byte: Vec<usize>,
}

impl SensitivePaths {
    /// The defaults (unless `drop_defaults`) and the patterns of `add`; an
    /// error names the index of a pattern in `add` that is not one.
    pub fn new(add: &[String], drop_defaults: bool) -> Result<Self, String> {
        let mut patterns = Vec::new();
        if !drop_defaults {
            for text in DEFAULT_SENSITIVE_PATHS {
                patterns.push(compile(text).expect("the defaults compile"));
            }
        }
        for (i, text) in add.iter().enumerate() {
            let pattern =
                compile(text).ok_or_else(|| format!("add[{i}]: '{text}' is not a path pattern"))?;
            patterns.push(pattern);
        }
        let mut by_first_byte = vec![Vec::new(); 256];
        let mut any_first_byte = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            match pattern.parts[0].prefix.bytes().next() {
                Some(b) => by_first_byte[b as usize].push(i),
                None => any_first_byte.push(i),
            }
        }
        Ok(SensitivePaths {
            patterns,
            by_first_byte,
            any_first_byte,
        })
    }

    /// The pattern a canonical path in comparison form matches, unless the
    /// path is public material ([`is_public`]) for this kind of access.
    pub fn protecting(&self, path: &str, access: Access) -> Option<&str> {
        let pattern = self.matching(path)?;
        let public =
            is_public(path, access) || (pattern == ENV_FILES && is_env_template(path, access));
        (!public).then_some(pattern)
    }

    /// As [`SensitivePaths::protecting`], for a path the call uses only where
    /// a program reads or writes public material ([`public_by_use`]): there a
    /// PEM file whose name says neither key nor secret (`dhparams.pem`,
    /// `server.pem`) is public too. Only when `*.pem` is the one pattern that
    /// protects it: a file under `.ssh/`, named by an operator's pattern or
    /// spelt as a key stays protected, whatever the use.
    pub fn protecting_used_publicly(&self, path: &str, access: Access) -> Option<&str> {
        let pattern = self.protecting(path, access)?;
        let name = path.rsplit('/').next().unwrap_or("");
        let ambiguous = name
            .strip_suffix(".pem")
            .is_some_and(|stem| !names_a_secret(stem))
            && self.only_pem_protects(path);
        (!ambiguous).then_some(pattern)
    }

    /// Whether `*.pem` is the only pattern that matches the path, anywhere.
    fn only_pem_protects(&self, path: &str) -> bool {
        let mut start = 0;
        for component in path.split('/') {
            let at = start;
            start += component.len() + 1;
            for pattern in &self.patterns {
                if pattern.text != "*.pem" && pattern.matches_at(component, &path[at..]) {
                    return false;
                }
            }
        }
        true
    }

    /// The pattern a path in comparison form matches, if any (the one that
    /// matches earliest in the path).
    pub fn matching(&self, path: &str) -> Option<&str> {
        let mut start = 0;
        for component in path.split('/') {
            let at = start;
            start += component.len() + 1;
            let Some(&first) = component.as_bytes().first() else {
                continue;
            };
            let candidates = [&self.by_first_byte[first as usize], &self.any_first_byte];
            for &i in candidates.into_iter().flatten() {
                let pattern = &self.patterns[i];
                if pattern.matches_at(component, &path[at..]) {
                    return Some(&pattern.text);
                }
            }
        }
        None
    }
}

impl Compiled {
    /// Whether the pattern matches starting at `component`, the first
    /// component of `rest` (the path from there on).
    fn matches_at(&self, component: &str, rest: &str) -> bool {
        match self.parts.as_slice() {
            [only] => only.matches(component),
            parts => {
                let mut components = rest.split('/').filter(|c| !c.is_empty());
                parts
                    .iter()
                    .all(|part| components.next().is_some_and(|c| part.matches(c)))
            }
        }
    }
}

impl Default for SensitivePaths {
    fn default() -> Self {
        SensitivePaths::new(&[], false).expect("the defaults compile")
    }
}

/// `.ssh/`, `.aws/credentials`, `*.pem`, `**/.vault-token`: leading `**/` and
/// `/` and a trailing `/` change nothing, since patterns match anywhere.
fn compile(text: &str) -> Option<Compiled> {
    let lower = text.trim().to_lowercase();
    let trimmed = lower.trim_start_matches("**/").trim_matches('/');
    let parts: Vec<Part> = trimmed
        .split('/')
        .filter(|c| !c.is_empty())
        .map(Part::new)
        .collect();
    (!parts.is_empty()).then(|| Compiled {
        text: text.to_string(),
        parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str) -> Option<String> {
        SensitivePaths::default()
            .protecting(path, Access::Read)
            .map(str::to_string)
    }

    #[test]
    fn account_databases_browser_passwords_keyrings_and_cli_tokens_are_sensitive() {
        for path in [
            "/etc/shadow",
            "/etc/gshadow-",
            "/home/u/.config/google-chrome/default/login data",
            "/home/u/.config/chromium/profile 1/login data for account",
            "/home/u/.mozilla/firefox/x.default/logins.json",
            "/home/u/.mozilla/firefox/x.default/key4.db",
            "/users/u/library/application support/firefox/profiles/x/logins.json",
            "/home/u/.local/share/keyrings/login.keyring",
            "/home/u/.password-store/email.gpg",
            "/home/u/.config/gh/hosts.yml",
        ] {
            assert!(hit(path).is_some(), "{path}");
        }
        for path in [
            "/etc/passwd",
            "/etc/group",
            "/home/u/project/logins.json",
            "/home/u/.config/gh/config.yml",
        ] {
            assert_eq!(hit(path), None, "{path}");
        }
    }

    #[test]
    fn credentials_anywhere_in_a_path_are_sensitive() {
        assert_eq!(hit("/home/u/.ssh/id_rsa").as_deref(), Some(".ssh/"));
        assert_eq!(
            hit("/home/u/.aws/credentials").as_deref(),
            Some(".aws/credentials")
        );
        assert_eq!(hit("/srv/app/.env").as_deref(), Some(".env"));
        assert_eq!(hit("/srv/app/.env.production").as_deref(), Some(".env.*"));
        assert_eq!(hit("/etc/tls/server.pem").as_deref(), Some("*.pem"));
        assert_eq!(hit("/backup/id_ed25519").as_deref(), Some("id_ed25519*"));
        assert_eq!(
            hit("/home/u/.aws/sso/cache/x.json").as_deref(),
            Some(".aws/sso/")
        );
    }

    #[test]
    fn ordinary_paths_are_not_sensitive() {
        for path in [
            "/workspace/src/main.rs",
            "/home/u/.aws",
            "/srv/environment.txt",
            "/home/u/ssh/notes",
        ] {
            assert_eq!(hit(path), None, "{path}");
        }
    }

    #[test]
    fn public_keys_certificates_and_known_hosts_reads_are_public() {
        for path in [
            "/home/u/.ssh/id_rsa.pub",
            "/home/u/.ssh/id_ed25519-cert.pub",
            "/etc/letsencrypt/live/x/fullchain.pem",
            "/etc/letsencrypt/live/x/cert.pem",
            "/etc/ssl/certs/isrg_root_x1.pem",
            "/srv/tls/ca.pem",
            "/home/u/.ssh/known_hosts",
        ] {
            assert_eq!(hit(path), None, "{path}");
        }
    }

    #[test]
    fn env_templates_are_public_to_read_and_env_files_stay_protected() {
        let s = SensitivePaths::default();
        for path in [
            "/work/repo/.env.example",
            "/work/repo/.env.sample",
            "/work/repo/.env.local.example",
        ] {
            assert_eq!(s.protecting(path, Access::Read), None, "{path}");
            assert!(s.protecting(path, Access::Write).is_some(), "{path}");
        }
        for path in [
            "/work/repo/.env",
            "/work/repo/.env.production",
            "/work/repo/.env.example.bak",
            "/work/repo/.env.local",
            "/home/u/.ssh/.env.example",
        ] {
            assert!(s.protecting(path, Access::Read).is_some(), "{path}");
        }
    }

    #[test]
    fn keys_and_writes_to_known_hosts_stay_protected() {
        let s = SensitivePaths::default();
        for path in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.ssh/config",
            "/home/u/.ssh/authorized_keys",
            "/etc/letsencrypt/live/x/privkey.pem",
            "/srv/tls/cert-key.pem",
            "/srv/tls/server.pem",
            "/workspace/certs/server.pem",
            "/etc/ssl/private/x.pem",
        ] {
            assert!(s.protecting(path, Access::Read).is_some(), "{path}");
        }
        assert!(
            s.protecting("/home/u/.ssh/known_hosts", Access::Write)
                .is_some()
        );
    }

    #[test]
    fn added_patterns_apply_too() {
        let s = SensitivePaths::new(&["**/.vault-token".into(), "private/".into()], false).unwrap();
        assert!(s.matching("/home/u/.vault-token").is_some());
        assert!(s.matching("/data/private/x").is_some());
        assert!(s.matching("/home/u/.ssh/config").is_some());
    }

    #[test]
    fn the_defaults_go_only_when_dropped_explicitly() {
        let s = SensitivePaths::new(&["*.secret".into()], true).unwrap();
        assert!(s.matching("/home/u/.ssh/id_rsa").is_none());
        assert!(s.matching("/x/a.secret").is_some());
    }
}
