//! What every line says of where and under what it was written: the node's
//! name (`server.node_name`, default the host name), and what the line's
//! generation was loaded from (the configuration's SHA-256, the passport).
//! The facade keeps the recent generations ([`Generations`]) and records a
//! generation before it serves, so a line always names the configuration of
//! the generation that judged its call, never the one serving when it is
//! written.

use std::collections::VecDeque;

/// How many generations are remembered: a line is written within moments of
/// its judgment (a shadowed one within the shadow queue's bound), far fewer
/// reloads than this apart.
const KEPT: usize = 16;

/// The most characters a node name may have (a DNS name's).
pub const MAX_NODE_NAME: usize = 253;

/// What one generation (one loaded configuration) was loaded from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Generation {
    /// The SHA-256 (hex) of the configuration text.
    pub config_sha256: Option<String>,
    /// `guardrails.passport`: the agent id calls are attributed to.
    pub passport: Option<String>,
}

/// The recent generations, by number.
#[derive(Clone, Debug, Default)]
pub struct Generations(VecDeque<(u64, Generation)>);

impl Generations {
    /// These, and `generation` loaded as `facts`; the oldest forgotten past
    /// the last 16.
    pub fn with(&self, generation: u64, facts: Generation) -> Generations {
        let mut kept = self.0.clone();
        kept.retain(|(g, _)| *g != generation);
        kept.push_back((generation, facts));
        while kept.len() > KEPT {
            kept.pop_front();
        }
        Generations(kept)
    }

    /// What `generation` was loaded from, if it is remembered.
    pub fn get(&self, generation: u64) -> Option<&Generation> {
        self.0
            .iter()
            .rev()
            .find(|(g, _)| *g == generation)
            .map(|(_, facts)| facts)
    }
}

/// This host's name: the kernel's (Linux), else `/etc/hostname`, else
/// `$HOSTNAME`. Where none is found, `server.node_name` must name the node.
pub fn host_name() -> Option<String> {
    let named = |text: String| Some(text.trim().to_string()).filter(|name| !name.is_empty());
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .into_iter()
        .find_map(|file| std::fs::read_to_string(file).ok().and_then(named))
        .or_else(|| std::env::var("HOSTNAME").ok().and_then(named))
}

/// The default node name: the host name, when it is a valid node name.
pub fn default_node_name() -> Option<String> {
    host_name().filter(|name| check_node_name(name).is_ok())
}

/// Checks a node name: 1 to 253 characters, ASCII letters, digits, `-`, `_`
/// and `.`, as host names and metric labels take them.
pub fn check_node_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NODE_NAME {
        return Err(format!(
            "must have 1 to {MAX_NODE_NAME} characters, not {}",
            name.len()
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        Some(c) => Err(format!(
            "'{}' is not allowed (ASCII letters, digits, '-', '_' and '.' are)",
            c.escape_default()
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(text: &str) -> Generation {
        Generation {
            config_sha256: Some(text.into()),
            passport: None,
        }
    }

    #[test]
    fn each_generation_keeps_what_it_was_loaded_from() {
        let known = Generations::default()
            .with(3, digest("aaa"))
            .with(4, digest("bbb"));
        assert_eq!(known.get(3), Some(&digest("aaa")));
        assert_eq!(known.get(4), Some(&digest("bbb")));
        assert_eq!(known.get(5), None);
    }

    #[test]
    fn only_the_recent_generations_are_kept() {
        let known = (0..KEPT as u64 + 4).fold(Generations::default(), |known, g| {
            known.with(g, digest(&g.to_string()))
        });
        assert_eq!(known.get(3), None);
        assert_eq!(known.get(4), Some(&digest("4")));
        assert_eq!(known.get(KEPT as u64 + 3), Some(&digest("19")));
    }

    #[test]
    fn the_default_node_name_is_the_host_name() {
        assert!(host_name().is_some());
        assert_eq!(default_node_name(), host_name());
    }

    #[test]
    fn a_node_name_with_a_space_or_nothing_in_it_is_refused() {
        assert!(check_node_name("warden-eu-1.example").is_ok());
        let err = check_node_name("eu 1").unwrap_err();
        assert!(err.contains("' '"), "{err}");
        assert!(check_node_name("").is_err());
        assert!(check_node_name(&"a".repeat(254)).is_err());
    }
}
