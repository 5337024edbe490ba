//! Where the CLI's commands and the hook keep their data (the compiled cache):
//! the user's state directory (`$XDG_STATE_HOME/warden`, else
//! `~/.local/state/warden`), not the working directory, which for a hook is
//! the user's project. A configuration's `data_dir` still decides. `warden
//! serve` and the `warden approval` commands (which open the daemon's approval
//! store) keep `./.warden`, so that existing stores are not stranded.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use warden::config::DEFAULT_DATA_DIR;

/// The file in the state directory that lists the old data directories the
/// user was already told about, one absolute path a line.
const WARNED_FILE: &str = "moved-from.txt";

/// Puts `config`'s data directory in the user's state directory unless its
/// file names one; where a `./.warden` from before exists, says once (per
/// directory) that it is no longer used and how to keep it.
pub(crate) fn place(config: &mut warden::Config, command: &str) {
    if config.data_dir.is_some() {
        return;
    }
    let Some(dir) = user_state_dir() else {
        // No home to put it in: the working directory, as before.
        return;
    };
    config.set_data_dir(&dir);
    warn_about_old_dir(&dir, command);
}

/// `$XDG_STATE_HOME/warden` when that is an absolute path (the XDG base
/// directory specification ignores a relative one), else
/// `$HOME/.local/state/warden`.
pub(crate) fn user_state_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute());
    let base = xdg.or_else(|| {
        std::env::home_dir()
            .filter(|home| home.is_absolute())
            .map(|home| home.join(".local").join("state"))
    })?;
    Some(base.join("warden"))
}

fn warn_about_old_dir(state_dir: &Path, command: &str) {
    let old = Path::new(DEFAULT_DATA_DIR);
    if !old.is_dir() {
        return;
    }
    let old = std::path::absolute(old).unwrap_or_else(|_| old.to_path_buf());
    let warned = state_dir.join(WARNED_FILE);
    let line = old.display().to_string();
    let already = std::fs::read_to_string(&warned).unwrap_or_default();
    if already.lines().any(|l| l == line) {
        return;
    }
    eprintln!(
        "warden: `warden {command}` no longer keeps its data in {old} (the compiled cache): \
         the CLI and the hook now use {state} (XDG state directory). To keep the old place, \
         set `data_dir: {DEFAULT_DATA_DIR}` in the configuration; otherwise {old} can be \
         deleted unless `warden serve` runs here (the daemon still uses it). This is said \
         once.",
        old = old.display(),
        state = state_dir.display(),
    );
    // Remembered in the state directory; if it cannot be written, the warning
    // comes again next time, which is all that is lost.
    if warden_runtime::data_dir::create_private_dir(state_dir).is_ok()
        && let Ok(mut file) = warden_runtime::data_dir::open_private_append(&warned)
    {
        let _ = writeln!(file, "{line}");
    }
}
