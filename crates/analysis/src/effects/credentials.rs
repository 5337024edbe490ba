//! Credential stores that are not key files: command-line tools that print a
//! token or secret they keep (`gh auth token`, `aws configure get
//! aws_secret_access_key`, `gcloud auth print-access-token`, a keyring's
//! lookup, a password manager's show) ([`Effect::CredentialRead`](super::Effect::CredentialRead)).
//! Browser password databases and account databases are files, and the
//! sensitive paths protect them from every reader.

use crate::shell::Command;

use super::command::has_flag;

/// What the command prints of a stored credential, if it prints one.
pub(super) fn prints_credential(c: &Command) -> Option<String> {
    let program = c.program.as_deref()?;
    if let Some(helper) = program.strip_prefix("docker-credential-") {
        let words: Vec<&str> = c.operands().map(|a| a.value.as_str()).collect();
        return (words.first() == Some(&"get"))
            .then(|| format!("docker-credential-{helper} get prints a registry's password"));
    }
    if !matches!(
        program,
        "gh" | "glab"
            | "aws"
            | "gcloud"
            | "az"
            | "kubectl"
            | "git"
            | "secret-tool"
            | "security"
            | "pass"
            | "gopass"
            | "op"
            | "bw"
            | "lpass"
            | "heroku"
    ) {
        return None;
    }
    let words: Vec<String> = c.operands().map(|a| a.value.to_ascii_lowercase()).collect();
    // Global options may come before the subcommand (`aws --profile prod
    // configure get …`, `kubectl --context x config view`), and their values
    // read as words: the subcommand is the first word that is one.
    let start = words
        .iter()
        .position(|w| {
            matches!(
                w.as_str(),
                "auth" | "configure" | "ecr" | "ecr-public" | "codeartifact" | "config" | "account"
            )
        })
        .filter(|_| matches!(program, "gh" | "glab" | "aws" | "gcloud" | "az" | "kubectl"))
        .unwrap_or(0);
    let w = |i: usize| words.get(start + i).map(String::as_str).unwrap_or("");
    let prints = match program {
        "gh" => {
            (w(0) == "auth" && w(1) == "token")
                || (w(0) == "auth" && w(1) == "status" && has_flag(c, &["-t", "--show-token"]))
        }
        "glab" => {
            (w(0) == "auth" && w(1) == "status" && has_flag(c, &["-t", "--show-token"]))
                || (w(0) == "config" && w(1) == "get" && w(2).contains("token"))
        }
        "aws" => {
            (w(0) == "configure"
                && w(1) == "get"
                && (w(2).contains("secret") || w(2).contains("session_token")))
                || (w(0) == "configure" && w(1) == "export-credentials")
                || (matches!(w(0), "ecr" | "ecr-public") && w(1) == "get-login-password")
                || (w(0) == "codeartifact" && w(1) == "get-authorization-token")
        }
        "gcloud" => {
            w(0) == "auth"
                && (matches!(w(1), "print-access-token" | "print-identity-token")
                    || (w(1) == "application-default" && w(2) == "print-access-token"))
                || (w(0) == "config" && w(1) == "config-helper")
        }
        "az" => w(0) == "account" && w(1) == "get-access-token",
        "kubectl" => w(0) == "config" && w(1) == "view" && has_flag(c, &["--raw"]),
        "git" => w(0) == "credential" && w(1) == "fill",
        "secret-tool" => w(0) == "lookup",
        "security" => {
            matches!(w(0), "find-generic-password" | "find-internet-password")
                && has_flag(c, &["-w", "-g"])
        }
        // `pass NAME` shows the entry as `pass show NAME` does; `pass` alone lists.
        "pass" => {
            w(0) == "show"
                || (!w(0).is_empty()
                    && !matches!(
                        w(0),
                        "ls" | "list"
                            | "find"
                            | "search"
                            | "grep"
                            | "init"
                            | "insert"
                            | "add"
                            | "edit"
                            | "generate"
                            | "rm"
                            | "remove"
                            | "delete"
                            | "mv"
                            | "rename"
                            | "cp"
                            | "copy"
                            | "git"
                            | "help"
                            | "version"
                    ))
        }
        "gopass" => matches!(w(0), "show" | "cat"),
        "op" => w(0) == "read" || (w(0) == "item" && w(1) == "get" && has_flag(c, &["--reveal"])),
        "bw" => w(0) == "get" && matches!(w(1), "password" | "totp" | "notes" | "item"),
        "lpass" => w(0) == "show",
        "heroku" => w(0) == "auth:token",
        _ => false,
    };
    prints.then(|| {
        let shown: Vec<&str> = std::iter::once(program)
            .chain(words.iter().skip(start).take(2).map(String::as_str))
            .collect();
        format!("{} prints a stored credential", shown.join(" "))
    })
}
