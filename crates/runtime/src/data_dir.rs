//! The data directory and the files Warden keeps in it (the approval store and
//! its WAL and SHM, the decision and swap logs, the compiled-artifact cache):
//! directories are created readable by their owner only (0700) and files
//! readable and writable by their owner only (0600), whatever the umask, since
//! they hold paused calls' arguments, decisions and compiled machine code.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::Path;

/// Creates `dir` and any missing parent, each new one 0700. An existing
/// directory is left as it is (an operator may have chosen its mode), with a
/// warning when other users may enter it.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    let existed = dir.is_dir();
    builder.create(dir)?;
    #[cfg(unix)]
    if existed {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = fs::metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                dir = %dir.display(),
                mode = format!("{:o}", mode & 0o777),
                "the data directory is open to other users; `chmod 700` it"
            );
        }
    } else {
        // The umask may have taken bits off, never added any; set exactly 0700.
        set_mode(dir, 0o700)?;
    }
    Ok(())
}

/// Opens `path` for appending, creating it 0600; an existing file of ours is
/// made 0600 too.
pub fn open_private_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    restrict(&file)?;
    Ok(file)
}

/// Creates `path` empty and 0600 if it does not exist, and makes it 0600 if it
/// does: for files another library creates (SQLite gives its WAL and SHM files
/// the database file's mode).
pub fn ensure_private_file(path: &Path) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    restrict(&options.open(path)?)
}

/// Makes an existing file 0600; a file that does not exist is fine.
pub fn make_private(path: &Path) -> io::Result<()> {
    match File::open(path) {
        Ok(file) => restrict(&file),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}

#[cfg(unix)]
fn restrict(file: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    if file.metadata()?.permissions().mode() & 0o777 != 0o600 {
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict(_file: &File) -> io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_directory_and_its_new_parents_are_0700() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        create_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
    }

    #[test]
    fn an_appended_file_is_0600_even_if_it_existed_wider() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("log");
        fs::write(&path, "old\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        open_private_append(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(fs::read_to_string(&path).unwrap(), "old\n");
    }

    #[test]
    fn ensuring_a_private_file_creates_it_empty() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("db");
        ensure_private_file(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(fs::metadata(&path).unwrap().len(), 0);
    }
}
