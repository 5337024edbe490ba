//! `hitl_approval.durability`: how hard the approval store waits for the disk.
//! The key is written in the `hitl_approval:` section, beside the library's
//! keys, but the store is what reads it: the library skips it.

use serde::Deserialize;
use warden::ConfigError;

/// How hard a commit waits for the disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Commits reach the OS before they return and the disk at checkpoints
    /// (WAL with `synchronous=NORMAL`): a pause or a resume survives a crash or
    /// kill of the process; if the machine loses power, the last few may be
    /// lost (never half-written). Losing one fails safe: a lost pause is a 404
    /// on resume (nothing ran), a lost resume leaves the approval pending.
    #[default]
    Normal,
    /// Every commit reaches the disk before it returns (`synchronous=FULL`),
    /// surviving a power cut too, at one fsync per write.
    Full,
}

impl Durability {
    /// The name as written in the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Normal => "normal",
            Durability::Full => "full",
        }
    }
}

/// The approval store's settings in the configuration file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreConfig {
    /// `hitl_approval.durability`: `normal` (the default: a pause survives a
    /// crash or kill of the process) or `full` (a power cut too, at one fsync
    /// per write). Read when the store opens.
    pub durability: Durability,
}

impl StoreConfig {
    /// Reads the store's keys from configuration text (the file the library's
    /// [`warden::Config`] is read from, which skips them); an error names the
    /// file, the key and the line.
    pub fn parse(text: &str, file: &str) -> Result<StoreConfig, ConfigError> {
        let keys: File = warden::config::parse_yaml(text, file)?;
        Ok(StoreConfig {
            durability: keys.hitl_approval.durability,
        })
    }
}

/// What the store reads of the file; the library reads and checks the rest.
#[derive(Deserialize)]
struct File {
    #[serde(default)]
    hitl_approval: Section,
}

#[derive(Default, Deserialize)]
struct Section {
    #[serde(default)]
    durability: Durability,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_reads_durability_and_the_library_skips_it() {
        let text = "hitl_approval:\n  tools: [bash]\n  durability: full\n";
        let store = StoreConfig::parse(text, "test.yaml").unwrap();
        assert_eq!(store.durability, Durability::Full);
        let library = warden::Config::parse(text, "test.yaml", ".".into()).unwrap();
        assert_eq!(library.hitl_approval.tools, ["bash"]);
    }
}
