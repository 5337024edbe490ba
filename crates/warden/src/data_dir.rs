//! The data directory a configuration names, created private: the approval
//! store, the compiled cache and the daemon's logs live there.

use std::path::PathBuf;

use crate::config::Config;
use crate::error::Error;

impl Config {
    /// Creates [`Config::data_dir`] if it does not exist, readable by its
    /// owner only (0700; an existing directory is left as it is, with a
    /// warning when others may enter it), and returns it.
    pub fn create_data_dir(&self) -> Result<PathBuf, Error> {
        let dir = self.data_dir();
        warden_runtime::data_dir::create_private_dir(&dir).map_err(|source| Error::DataDir {
            path: dir.clone(),
            source,
        })?;
        Ok(dir)
    }
}
