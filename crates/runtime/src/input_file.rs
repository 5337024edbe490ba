//! Every file Warden reads because its configuration names it (the
//! configuration itself, provider components, `config_files` such as
//! passports, the signing key) is read here, one way: a regular file only,
//! once symlinks are followed (a device, a FIFO, a socket or a directory is
//! refused before a byte is read, and a FIFO never blocks the open), and no
//! more than the cap of its kind. `/dev/zero` named as a component fails at
//! once with an error that says so, instead of a read that never ends.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// What a file is to Warden, which sets how large it may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputKind {
    /// The configuration file (`warden.yaml`).
    Config,
    /// A provider's WebAssembly component.
    Component,
    /// A provider's `config_files` entry (a passport, a rule set).
    ConfigFile,
    /// A signing or verifying key (PEM).
    Key,
}

impl InputKind {
    /// The largest file of this kind, in bytes.
    pub const fn limit(self) -> u64 {
        match self {
            InputKind::Config => 4 << 20,
            InputKind::Component => 64 << 20,
            InputKind::ConfigFile => 4 << 20,
            InputKind::Key => 64 << 10,
        }
    }

    fn what(self) -> &'static str {
        match self {
            InputKind::Config => "a configuration file",
            InputKind::Component => "a component",
            InputKind::ConfigFile => "a provider's config file",
            InputKind::Key => "a key file",
        }
    }
}

/// A file opened for reading and checked: regular, and within its cap.
pub struct InputFile {
    file: File,
    kind: InputKind,
    /// Its size when it was opened.
    pub len: u64,
}

impl InputFile {
    /// Opens `path` as a file of `kind`: refused (with an error of kind
    /// `InvalidInput` that says what it is instead) unless it is a regular file
    /// of at most [`InputKind::limit`] bytes.
    pub fn open(path: &Path, kind: InputKind) -> io::Result<InputFile> {
        // Checked before the open, which a FIFO would block...
        check(&std::fs::metadata(path)?, kind)?;
        // ... and again on what was opened, in case the path changed between.
        let file = open_nonblocking(path)?;
        let metadata = file.metadata()?;
        check(&metadata, kind)?;
        Ok(InputFile {
            file,
            kind,
            len: metadata.len(),
        })
    }

    /// The file's bytes, at most the cap of its kind (a file that grew past
    /// it since it was opened is refused).
    pub fn read_all(self) -> io::Result<Vec<u8>> {
        let kind = self.kind;
        let mut bytes = Vec::with_capacity(self.len as usize);
        self.reader().read_to_end(&mut bytes)?;
        too_large(bytes.len() as u64, kind)?;
        Ok(bytes)
    }

    /// A reader of the file that stops one byte past the cap: a caller that
    /// streams the file checks [`InputKind::limit`] against what it read.
    pub fn reader(self) -> io::Take<File> {
        self.file.take(self.kind.limit() + 1)
    }
}

/// The bytes of `path`, a file of `kind`; see [`InputFile::open`].
pub fn read(path: &Path, kind: InputKind) -> io::Result<Vec<u8>> {
    InputFile::open(path, kind)?.read_all()
}

/// The text of `path`, a file of `kind`: as [`read`], and UTF-8.
pub fn read_to_string(path: &Path, kind: InputKind) -> io::Result<String> {
    String::from_utf8(read(path, kind)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the file is not UTF-8 text"))
}

/// An error unless `len` bytes (read so far, or the whole file) fit the cap of
/// `kind`.
pub fn too_large(len: u64, kind: InputKind) -> io::Result<()> {
    if len > kind.limit() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the file is over {}, the limit for {}",
                size(kind.limit()),
                kind.what()
            ),
        ));
    }
    Ok(())
}

fn check(metadata: &Metadata, kind: InputKind) -> io::Result<()> {
    if !metadata.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "not a regular file but {}; {} must be a regular file",
                file_type(metadata),
                kind.what()
            ),
        ));
    }
    too_large(metadata.len(), kind)
}

fn file_type(metadata: &Metadata) -> &'static str {
    let kind = metadata.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// Opens for reading without waiting for a FIFO's writer: a path swapped for
/// a FIFO after it was checked is found out by the second check, not hung on.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options.open(path)
}

/// `64 MiB`, `4 MiB`, `64 KiB`.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(path: &Path, kind: InputKind) -> String {
        let err = read(path, kind).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        err.to_string()
    }

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("warden.yaml");
        std::fs::write(&path, "guardrails: {}\n").unwrap();
        assert_eq!(read(&path, InputKind::Config).unwrap(), b"guardrails: {}\n");
    }

    #[test]
    fn a_symlink_to_a_regular_file_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.pem");
        std::fs::write(&path, "pem").unwrap();
        let link = dir.path().join("link.pem");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read(&link, InputKind::Key).unwrap(), b"pem");
    }

    #[test]
    fn a_character_device_is_refused_before_it_is_read() {
        let message = refused(Path::new("/dev/zero"), InputKind::Component);
        assert!(message.contains("a character device"), "{message}");
    }

    #[test]
    fn a_symlink_to_a_device_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("provider.wasm");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let message = refused(&link, InputKind::Component);
        assert!(message.contains("a character device"), "{message}");
    }

    #[test]
    fn a_fifo_without_a_writer_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("passport.json");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let message = refused(&fifo, InputKind::ConfigFile);
        assert!(message.contains("a FIFO"), "{message}");
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let message = refused(dir.path(), InputKind::Config);
        assert!(message.contains("a directory"), "{message}");
    }

    #[test]
    fn a_file_over_the_cap_of_its_kind_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.pem");
        std::fs::write(&path, vec![b'a'; InputKind::Key.limit() as usize + 1]).unwrap();
        let message = refused(&path, InputKind::Key);
        assert!(
            message.contains("over 64 KiB, the limit for a key file"),
            "{message}"
        );
        assert!(
            read(&path, InputKind::Config).is_ok(),
            "a config may be larger"
        );
    }

    #[test]
    fn a_missing_file_says_so() {
        let err = read(Path::new("/nonexistent/warden.yaml"), InputKind::Config).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
