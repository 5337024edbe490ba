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

/// `hitl_approval.store`: which database keeps the approvals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Backend {
    /// One SQLite file in the data directory, for one daemon (the default).
    #[default]
    Sqlite,
    /// A PostgreSQL database that several daemons share.
    Postgres {
        /// The environment variable that holds the URL
        /// (`postgres://user:password@host:port/db?sslmode=...`).
        url_env: String,
        /// At most this many connections per daemon (16 when absent).
        #[serde(default)]
        pool_size: Option<u32>,
    },
}

/// The approval store's settings in the configuration file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreConfig {
    /// `hitl_approval.store`: SQLite in the data directory (the default) or
    /// a shared PostgreSQL database.
    pub backend: Backend,
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
        if let Backend::Postgres {
            pool_size: Some(0), ..
        } = keys.hitl_approval.store
        {
            return Err(ConfigError::Invalid {
                file: file.to_string(),
                key: "hitl_approval.store.pool_size".into(),
                message: "must be at least 1".into(),
                location: warden::config::Location(None),
            });
        }
        Ok(StoreConfig {
            backend: keys.hitl_approval.store,
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
    #[serde(default)]
    store: Backend,
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

    #[test]
    fn the_store_is_sqlite_unless_the_configuration_names_postgres() {
        let old = StoreConfig::parse("hitl_approval:\n  durability: full\n", "w.yaml").unwrap();
        assert_eq!(old.backend, Backend::Sqlite);
        let text = "hitl_approval:\n  tools: [bash]\n  store: {kind: postgres, url_env: WARDEN_DATABASE_URL, pool_size: 4}\n";
        let store = StoreConfig::parse(text, "w.yaml").unwrap();
        assert_eq!(
            store.backend,
            Backend::Postgres {
                url_env: "WARDEN_DATABASE_URL".into(),
                pool_size: Some(4)
            }
        );
        warden::Config::parse(text, "w.yaml", ".".into()).expect("the library skips it");
    }

    #[test]
    fn a_store_of_an_unknown_kind_or_key_or_an_empty_pool_is_refused() {
        for (text, names) in [
            ("hitl_approval:\n  store: {kind: mysql}\n", "mysql"),
            (
                "hitl_approval:\n  store: {kind: postgres, url: 'postgres://u:p@h/db'}\n",
                "url",
            ),
            (
                "hitl_approval:\n  store: {kind: postgres, url_env: DB, pool_size: 0}\n",
                "pool_size",
            ),
        ] {
            let err = StoreConfig::parse(text, "w.yaml").unwrap_err().to_string();
            assert!(err.contains(names), "{text}: {err}");
        }
    }
}
