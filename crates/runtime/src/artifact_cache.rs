//! The on-disk cache of compiled components: what wasmtime compiled from a
//! component's bytes, kept under the data directory so that the next process
//! loads a multi-megabyte provider in milliseconds instead of compiling it again.
//!
//! An entry is keyed by the component's SHA-256 and the engine's compatibility
//! hash (wasmtime version, compiler settings, target): the artifact as wasmtime
//! serialised it (`.cwasm`, mapped straight from the file when loaded) and a
//! record of what it was compiled from and its BLAKE3 digest (`.record`). Both
//! are written atomically, and read back only if the artifact is provably the
//! one this host wrote: see [`ArtifactCache::load`]. Any problem with the cache (unreadable, corrupt,
//! foreign, a full disk) only costs a compilation; it never fails a load.

use std::fs;
use std::hash::{Hash as _, Hasher as _};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

/// Marks an entry's record, written by this host, and its format.
const MAGIC: &[u8; 8] = b"WRDNCW02";
/// Magic, the component's SHA-256, the artifact's length, the artifact's BLAKE3.
const RECORD_LEN: usize = MAGIC.len() + 32 + 8 + 32;
/// The compiled artifact, exactly as `Component::serialize` made it.
const ARTIFACT: &str = "cwasm";
/// The record written with it: what it was compiled from and its digest.
const RECORD: &str = "record";
/// The cache keeps its entries under this many bytes, dropping the least
/// recently used first: a few dozen interpreter components (~40 MB compiled
/// each) or thousands of Rust ones.
const MAX_BYTES: u64 = 1 << 30;

/// Compiled components under one directory (`<data_dir>/compiled`).
#[derive(Clone, Debug)]
pub struct ArtifactCache {
    dir: PathBuf,
}

/// Why a cached entry was not used; the component is compiled instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheMiss {
    /// Nothing is cached for this component and engine.
    #[error("no entry")]
    Absent,
    /// A file of the entry could not be read.
    #[error("cannot read the entry: {0}")]
    Io(#[from] std::io::Error),
    /// A file of the entry is not a regular file of ours that only we may write.
    #[error("the entry is not trusted: {0}")]
    Untrusted(String),
    /// The record is not ours, or the artifact does not match it (length or BLAKE3 digest).
    #[error("the entry is corrupt: {0}")]
    Corrupt(String),
    /// wasmtime would not load the artifact (another engine configuration, say).
    #[error("wasmtime refused the entry: {0}")]
    Refused(String),
}

impl ArtifactCache {
    /// The cache under `dir`; the directory is created on the first store.
    pub fn new(dir: impl Into<PathBuf>) -> ArtifactCache {
        ArtifactCache { dir: dir.into() }
    }

    /// The cache of a data directory: `<data_dir>/compiled`.
    pub fn in_data_dir(data_dir: &Path) -> ArtifactCache {
        ArtifactCache::new(data_dir.join("compiled"))
    }

    /// The directory the entries are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the compiled artifact for a component lives on this engine; its
    /// record is beside it.
    pub fn entry_path(&self, engine: &Engine, sha256: &str) -> PathBuf {
        self.path(engine, sha256, ARTIFACT)
    }

    fn path(&self, engine: &Engine, sha256: &str, extension: &str) -> PathBuf {
        self.dir
            .join(format!("{sha256}-{}.{extension}", compatibility(engine)))
    }

    /// The component compiled earlier from the bytes with digest `sha256`.
    ///
    /// An entry is deserialised only when all of this holds: its artifact and
    /// its record are regular files (not links) in the cache directory; on
    /// Unix they and the directory belong to this process's user and nobody
    /// else may write to them; the record carries this format's magic and the
    /// component's digest; and the artifact has the length and the BLAKE3
    /// digest the record says it had when this host wrote it. wasmtime then
    /// checks that the artifact was produced by a compatible engine.
    pub fn load(&self, engine: &Engine, sha256: &str) -> Result<Component, CacheMiss> {
        let record_path = self.path(engine, sha256, RECORD);
        let artifact_path = self.path(engine, sha256, ARTIFACT);
        let record_meta = match fs::symlink_metadata(&record_path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(CacheMiss::Absent);
            }
            Err(err) => return Err(err.into()),
        };
        trusted(&record_meta, "the record")?;
        trusted(&fs::symlink_metadata(&artifact_path)?, "the artifact")?;
        owned_by_us(&fs::symlink_metadata(&self.dir)?, "the cache directory")?;
        let record = Record::parse(&fs::read(&record_path)?, sha256)?;
        let length = fs::metadata(&artifact_path)?.len();
        if length != record.length {
            return Err(CacheMiss::Corrupt(format!(
                "the artifact is {length} bytes; {} were written",
                record.length
            )));
        }
        // Mapped and hashed on every core: tens of megabytes in milliseconds.
        let mut hasher = blake3::Hasher::new();
        hasher.update_mmap_rayon(&artifact_path)?;
        if hasher.finalize() != record.digest {
            return Err(CacheMiss::Corrupt(
                "the artifact does not match the digest recorded when it was written".into(),
            ));
        }
        let component = deserialize(engine, &artifact_path)
            .map_err(|err| CacheMiss::Refused(format!("{err:#}")))?;
        // Mark the entry as used, for `prune`; a failure only ages it.
        if let Ok(record) = fs::File::options().append(true).open(&record_path) {
            let _ = record.set_modified(std::time::SystemTime::now());
        }
        Ok(component)
    }

    /// Writes the entry for a compiled component: the artifact, then its
    /// record, each to a private temporary file in the cache directory first
    /// and then renamed into place, so a reader sees whole files or none (and
    /// an artifact without its matching record is not used). Entries of other
    /// engine versions are removed.
    pub fn store(
        &self,
        engine: &Engine,
        sha256: &str,
        component: &Component,
    ) -> std::io::Result<()> {
        let artifact = component.serialize().map_err(std::io::Error::other)?;
        let mut record = Vec::with_capacity(RECORD_LEN);
        record.extend_from_slice(MAGIC);
        record.extend_from_slice(&hex::decode(sha256).map_err(std::io::Error::other)?);
        record.extend_from_slice(&(artifact.len() as u64).to_le_bytes());
        record.extend_from_slice(blake3::hash(&artifact).as_bytes());
        crate::data_dir::create_private_dir(&self.dir)?;
        self.write(&artifact, &self.path(engine, sha256, ARTIFACT))?;
        self.write(&record, &self.path(engine, sha256, RECORD))?;
        self.remove_stale(engine);
        self.prune(MAX_BYTES);
        Ok(())
    }

    fn write(&self, bytes: &[u8], path: &Path) -> std::io::Result<()> {
        let mut file = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&self.dir)?;
        file.write_all(bytes)?;
        file.as_file().sync_data()?;
        file.persist(path).map_err(|err| err.error)?;
        Ok(())
    }

    /// Removes entries compiled by another engine: they can never be used again.
    fn remove_stale(&self, engine: &Engine) {
        let current = format!("-{}.", compatibility(engine));
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let ours =
                name.ends_with(&format!(".{ARTIFACT}")) || name.ends_with(&format!(".{RECORD}"));
            if ours && !name.contains(&current) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

impl ArtifactCache {
    /// Drops the least recently used entries (by their record's modification
    /// time, refreshed on every load) until the cache holds at most
    /// `max_bytes`. The newest entry is always kept.
    pub fn prune(&self, max_bytes: u64) {
        let Ok(dir) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut entries: Vec<(std::time::SystemTime, PathBuf, u64)> = dir
            .flatten()
            .filter_map(|entry| {
                let path = entry.path();
                if path.extension()? != RECORD {
                    return None;
                }
                let used = entry.metadata().ok()?.modified().ok()?;
                let size = fs::metadata(path.with_extension(ARTIFACT)).map_or(0, |m| m.len());
                Some((used, path, size))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|(_, _, size)| size).sum();
        entries.sort_by_key(|(used, _, _)| std::cmp::Reverse(*used));
        while total > max_bytes && entries.len() > 1 {
            let (_, record, size) = entries.pop().expect("more than one entry");
            let _ = fs::remove_file(record.with_extension(ARTIFACT));
            let _ = fs::remove_file(&record);
            total -= size;
        }
    }
}

/// What the record of an entry says.
#[derive(Debug, PartialEq, Eq)]
struct Record {
    length: u64,
    digest: blake3::Hash,
}

impl Record {
    /// Parses a record and checks that it is for the component `sha256`.
    fn parse(bytes: &[u8], sha256: &str) -> Result<Record, CacheMiss> {
        if bytes.len() != RECORD_LEN || &bytes[..MAGIC.len()] != MAGIC {
            return Err(CacheMiss::Corrupt("not a Warden cache record".into()));
        }
        let (source, rest) = bytes[MAGIC.len()..].split_at(32);
        let (length, digest) = rest.split_at(8);
        if hex::encode(source) != sha256 {
            return Err(CacheMiss::Corrupt(
                "the entry was compiled from other bytes".into(),
            ));
        }
        let length = u64::from_le_bytes(length.try_into().expect("8 bytes"));
        let digest: [u8; 32] = digest.try_into().expect("32 bytes");
        Ok(Record {
            length,
            digest: blake3::Hash::from_bytes(digest),
        })
    }
}

/// The engine's compatibility hash as 16 hex digits: equal for engines that
/// can run each other's artifacts (same wasmtime, settings and target).
fn compatibility(engine: &Engine) -> String {
    // SipHash with fixed keys: stable from one run of this binary to the next.
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Maps a verified artifact and turns it back into a component.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, artifact: &Path) -> wasmtime::Result<Component> {
    // SAFETY: `Component::deserialize_file` runs the machine code in the file,
    // so the file must come from `Component::serialize` of a trusted engine.
    // It does: `ArtifactCache::load` only reaches here for a regular file in
    // Warden's own cache directory, which (like the file and its record) must
    // belong to this user and be writable by no one else, whose record names
    // the component it was compiled from, and whose length and BLAKE3 digest,
    // just read in full, equal those this host recorded when it wrote the
    // entry (`ArtifactCache::store`). Only this user, who could as well
    // replace the Warden binary, could change the file between that check and
    // this mapping. Entries never come from a path in the configuration or any
    // other source; wasmtime checks the engine compatibility itself.
    unsafe { Component::deserialize_file(engine, artifact) }
}

/// A regular file of ours that only we may write.
fn trusted(meta: &fs::Metadata, what: &str) -> Result<(), CacheMiss> {
    if !meta.file_type().is_file() {
        return Err(CacheMiss::Untrusted(format!(
            "{what} is not a regular file"
        )));
    }
    owned_by_us(meta, what)
}

#[cfg(unix)]
fn owned_by_us(meta: &fs::Metadata, what: &str) -> Result<(), CacheMiss> {
    use std::os::unix::fs::MetadataExt as _;
    if meta.uid() != rustix::process::getuid().as_raw() {
        return Err(CacheMiss::Untrusted(format!(
            "{what} belongs to another user"
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(CacheMiss::Untrusted(format!(
            "{what} is writable by other users"
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn owned_by_us(_meta: &fs::Metadata, _what: &str) -> Result<(), CacheMiss> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(source: [u8; 32], length: u64) -> Vec<u8> {
        let mut r = MAGIC.to_vec();
        r.extend_from_slice(&source);
        r.extend_from_slice(&length.to_le_bytes());
        r.extend_from_slice(blake3::hash(b"artifact").as_bytes());
        r
    }

    #[test]
    fn a_record_gives_the_length_and_digest_written() {
        let r = Record::parse(&record([7; 32], 8), &hex::encode([7u8; 32])).unwrap();
        assert_eq!(r.length, 8);
        assert_eq!(r.digest, blake3::hash(b"artifact"));
    }

    #[test]
    fn a_record_for_other_bytes_is_refused() {
        let err = Record::parse(&record([7; 32], 8), &hex::encode([8u8; 32])).unwrap_err();
        assert!(matches!(err, CacheMiss::Corrupt(_)), "{err}");
    }

    #[test]
    fn a_truncated_or_foreign_record_is_corrupt() {
        let sha = hex::encode([7u8; 32]);
        let full = record([7; 32], 8);
        assert!(Record::parse(&full[..full.len() - 1], &sha).is_err());
        let mut foreign = full.clone();
        foreign[0] = b'X';
        assert!(Record::parse(&foreign, &sha).is_err());
    }
}
