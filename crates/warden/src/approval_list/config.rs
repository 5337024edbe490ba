//! The operator's `hitl_approval:` block: which tools need a human's approval,
//! and what an unattended run does with them.

use serde::{Deserialize, Serialize};

use warden_analysis::glob::Glob;

use warden_policy::rules::Rule;

/// `hitl_approval:` in the configuration file. An opt-in gate on selected
/// tools, not a way for an unattended run to wait for a human. The section's
/// `durability` and `store` are the approval store's ([`STORE_KEYS`]): the library skips
/// it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HitlApproval {
    /// Tool names (case-insensitive), globs (`*`, `?`, `[…]`; a tool name
    /// is not a path: `*` matches any run of characters, `/` included) or
    /// permission rules whose calls need a human's approval: `bash`,
    /// `mcp__github__*`, `Bash(git push *)`, `Edit(src/**)`.
    #[serde(default)]
    pub tools: Vec<String>,
    /// What a listed tool does in a run that cannot pause for a human
    /// (scheduled, webhook, autonomous, IM, extension, MCP notification).
    /// Subagents and harnesses that cannot resume always deny, whatever this says.
    #[serde(default)]
    pub non_interactive: NonInteractive,
    /// The most approvals one principal (token) may have pending at once; a
    /// pause past it is not made: its calls are denied
    /// (`warden.approval_quota_exceeded`).
    #[serde(default = "default_max_pending")]
    pub max_pending_per_principal: u64,
    /// Whether tokens with the admin role may answer approvals as approvers do.
    #[serde(default)]
    pub admins_may_approve: bool,
    /// How long an approval may wait unanswered (`90s`, `30m`, `2h`, `1d`)
    /// before it expires to a reject-all, journalled, so that its run can go
    /// on. Absent (the default): approvals wait for a human for ever, as
    /// DeerFlow's approval rules say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_after: Option<String>,
    /// Webhooks told of every pause (`warden serve` only): a signed JSON
    /// notice, sent in the background, retried, never holding the pause up.
    #[serde(default)]
    pub notify: Vec<NotifyHook>,
}

/// One entry of `hitl_approval.notify`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyHook {
    /// Where the notice is POSTed: an `http://` URL.
    pub webhook: String,
    /// The environment variable holding the HMAC-SHA256 key the notice is
    /// signed with.
    pub secret_env: String,
}

impl NotifyHook {
    /// Checks the URL and the variable's name (not its value: that is read
    /// when the daemon starts or reloads).
    pub fn check(&self) -> Result<(), (String, String)> {
        let url = url::Url::parse(&self.webhook).map_err(|err| {
            (
                "webhook".to_string(),
                format!("'{}' is not a URL: {err}", self.webhook),
            )
        })?;
        match url.scheme() {
            "http" => {}
            "https" => {
                return Err((
                    "webhook".into(),
                    format!(
                        "'{}': https webhooks are not supported by this build (it has no TLS client); \
                         send to an http:// receiver on a trusted network, e.g. a local relay",
                        self.webhook
                    ),
                ));
            }
            other => {
                return Err((
                    "webhook".into(),
                    format!("'{}': the scheme must be http, not {other}", self.webhook),
                ));
            }
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err((
                "webhook".into(),
                format!("'{}' names no host", self.webhook),
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err((
                "webhook".into(),
                "must not carry credentials: the notice is signed with secret_env instead".into(),
            ));
        }
        let name = &self.secret_env;
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err((
                "secret_env".into(),
                format!("'{name}' is not an environment variable name (letters, digits, _)"),
            ));
        }
        Ok(())
    }
}

/// The keys of `hitl_approval:` that the approval store reads
/// (`warden_approval::StoreConfig`), not the library.
pub const STORE_KEYS: &[&str] = &["durability", "store"];

/// The default of `max_pending_per_principal`.
pub const DEFAULT_MAX_PENDING: u64 = 100;

fn default_max_pending() -> u64 {
    DEFAULT_MAX_PENDING
}

impl Default for HitlApproval {
    fn default() -> Self {
        HitlApproval {
            tools: Vec::new(),
            non_interactive: NonInteractive::default(),
            max_pending_per_principal: DEFAULT_MAX_PENDING,
            admins_may_approve: false,
            expire_after: None,
            notify: Vec::new(),
        }
    }
}

/// `hitl_approval.non_interactive`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NonInteractive {
    /// The call is denied (the default).
    #[default]
    Deny,
    /// The call runs without approval.
    Allow,
}

impl HitlApproval {
    /// Checks every setting; on error, the key under `hitl_approval` and why.
    pub fn check(&self) -> Result<(), (String, String)> {
        for (i, entry) in self.tools.iter().enumerate() {
            Entry::parse(entry).map_err(|message| (format!("tools[{i}]"), message))?;
        }
        if !(1..=1_000_000).contains(&self.max_pending_per_principal) {
            return Err((
                "max_pending_per_principal".into(),
                format!(
                    "{} is out of range 1..=1000000",
                    self.max_pending_per_principal
                ),
            ));
        }
        for (i, hook) in self.notify.iter().enumerate() {
            hook.check()
                .map_err(|(key, message)| (format!("notify[{i}].{key}"), message))?;
        }
        if let Some(after) = &self.expire_after {
            parse_duration(after).map_err(|message| ("expire_after".to_string(), message))?;
        }
        Ok(())
    }

    /// `expire_after`, when set and valid.
    pub fn expiry(&self) -> Option<std::time::Duration> {
        self.expire_after
            .as_deref()
            .and_then(|after| parse_duration(after).ok())
    }
}

/// The longest `expire_after`: a year.
const MAX_EXPIRY_SECS: u64 = 366 * 24 * 3600;

/// A duration as an operator writes one: a whole number and a unit, `s`, `m`,
/// `h` or `d` (`90s`, `30m`, `2h`, `1d`).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let unit_at = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(unit_at);
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "'{text}' is not a duration: write a whole number and a unit, s, m, h or d (e.g. 30m)"
            ));
        }
    };
    let secs = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|s| (1..=MAX_EXPIRY_SECS).contains(s))
        .ok_or_else(|| format!("'{text}' is out of range: from 1s to 366d"))?;
    Ok(std::time::Duration::from_secs(secs))
}

/// One entry of `hitl_approval.tools`, compiled.
#[derive(Clone, Debug)]
pub enum Entry {
    /// A tool name or a glob over tool names, case-insensitive; `*` matches
    /// any run of characters, `/` included ([`Glob::name`]).
    Name(Glob),
    /// A permission rule: `Bash(git push *)`, `Edit`, `WebFetch(domain:x)`.
    Rule(Rule),
}

impl Entry {
    /// A rule when it has a specifier or names a kind of tool (`Bash`, `Edit`);
    /// otherwise a name or glob.
    pub fn parse(entry: &str) -> Result<Entry, String> {
        if entry.trim().is_empty() {
            return Err("must name a tool".into());
        }
        if entry.contains('(') || entry.contains(')') || Rule::is_kind_alias(entry) {
            return Rule::parse(entry)
                .map(Entry::Rule)
                .map_err(|e| e.to_string());
        }
        if entry.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "'{entry}' is not a tool name, glob or rule (it contains whitespace or control characters)"
            ));
        }
        Glob::name(entry)
            .map(Entry::Name)
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_is_a_number_and_a_unit() {
        assert_eq!(parse_duration("90s").unwrap().as_secs(), 90);
        assert_eq!(parse_duration("30m").unwrap().as_secs(), 1800);
        assert_eq!(parse_duration("2h").unwrap().as_secs(), 7200);
        assert_eq!(parse_duration("1d").unwrap().as_secs(), 86_400);
    }

    #[test]
    fn a_duration_without_a_unit_or_out_of_range_is_refused() {
        for bad in ["30", "m", "0s", "1w", "-5m", "400d", "1.5h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_expiry_is_refused_naming_the_key() {
        let config = HitlApproval {
            expire_after: Some("soon".into()),
            ..HitlApproval::default()
        };
        let (key, message) = config.check().unwrap_err();
        assert_eq!(key, "expire_after");
        assert!(message.contains("'soon' is not a duration"), "{message}");
    }
}
