//! A shadow configuration's candidate (`shadow: {config, until, sample}`): a
//! whole candidate, its native core and its providers, read from its own
//! file, loaded and gated like a live set (`registry::Shadowing`), judging a
//! sample of the live set's calls on the shadow queue (see `shadow`) until its
//! end, and made live by [`crate::Warden::promote`].
//!
//! The candidate is read from its own file with the library's sections only:
//! the faces' sections (`server:`, `decision_log:`) and the data directory stay
//! the live file's, and so do the reason-redaction patterns.

use crate::config::{Config, ConfigError, ConfigFile, FACE_SECTIONS};

impl Config {
    /// The configuration of a candidate read from `file`, as this (live)
    /// configuration's shadow or promoted set: the file's library sections,
    /// with this configuration's data directory and redaction patterns (its
    /// `server:` and `decision_log:` are not read). A candidate with a
    /// `shadow:` of its own is refused.
    pub fn candidate(&self, file: &ConfigFile) -> Result<Config, ConfigError> {
        let mut candidate =
            Config::parse_own(&file.text, &file.name, file.base_dir.clone(), FACE_SECTIONS)?;
        if candidate.shadow.is_some() {
            return Err(candidate.invalid(
                "shadow".into(),
                "a candidate cannot have a shadow configuration of its own",
            ));
        }
        candidate.set_data_dir(&self.data_dir());
        candidate.redact = self.redact.clone();
        Ok(candidate)
    }
}
