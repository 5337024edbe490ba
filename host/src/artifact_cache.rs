//! The on-disk cache of compiled components: what wasmtime compiled from a
//! component's bytes, kept under the data directory so that the next process
//! loads a multi-megabyte provider in milliseconds instead of compiling it again.
//!
//! An entry is keyed by the component's SHA-256 and the engine's compatibility
//! hash (wasmtime version, compiler settings, target), written atomically, and
//! read back only if it is provably the file this host wrote: see
//! [`ArtifactCache::load`]. Any problem with the cache (unreadable, corrupt,
//! foreign, a full disk) only costs a compilation; it never fails a load.

use std::fs;
use std::hash::{Hash as _, Hasher as _};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Marks an entry written by this host, and its format.
const MAGIC: &[u8; 8] = b"WRDNCW01";
/// Magic, the component's SHA-256, the artifact's SHA-256.
const HEADER_LEN: usize = MAGIC.len() + 32 + 32;
/// File extension of an entry.
const EXTENSION: &str = "cwasm";

/// Compiled components under one directory (`<data_dir>/compiled`).
#[derive(Clone, Debug)]
pub struct ArtifactCache {
    dir: PathBuf,
}

/// Why a cached entry was not used; the component is compiled instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheMiss {
    #[error("no entry")]
    Absent,
    #[error("cannot read the entry: {0}")]
    Io(#[from] std::io::Error),
    #[error("the entry is not trusted: {0}")]
    Untrusted(String),
    #[error("the entry is corrupt: {0}")]
    Corrupt(String),
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

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry for a component lives on this engine.
    pub fn entry_path(&self, engine: &Engine, sha256: &str) -> PathBuf {
        self.dir
            .join(format!("{sha256}-{}.{EXTENSION}", compatibility(engine)))
    }

    /// The component compiled earlier from the bytes with digest `sha256`.
    ///
    /// An entry is deserialised only when all of this holds: it is a regular
    /// file (not a link) in the cache directory; on Unix the file and the
    /// directory belong to this process's user and nobody else may write to
    /// them; its header carries this format's magic and the component's
    /// digest; and the SHA-256 of the artifact equals the one recorded in the
    /// header when the entry was written. wasmtime then checks that the
    /// artifact was produced by a compatible engine.
    pub fn load(&self, engine: &Engine, sha256: &str) -> Result<Component, CacheMiss> {
        let path = self.entry_path(engine, sha256);
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(CacheMiss::Absent);
            }
            Err(err) => return Err(err.into()),
        };
        if !meta.file_type().is_file() {
            return Err(CacheMiss::Untrusted("not a regular file".into()));
        }
        owned_by_us(&meta, "the entry")?;
        owned_by_us(&fs::symlink_metadata(&self.dir)?, "the cache directory")?;
        let bytes = fs::read(&path)?;
        let artifact = verified_artifact(&bytes, sha256)?;
        deserialize(engine, artifact).map_err(|err| CacheMiss::Refused(format!("{err:#}")))
    }

    /// Writes the entry for a compiled component: to a private temporary file
    /// in the cache directory first, then renamed into place, so a reader sees
    /// the whole entry or none. Entries of other engine versions are removed.
    pub fn store(
        &self,
        engine: &Engine,
        sha256: &str,
        component: &Component,
    ) -> std::io::Result<()> {
        let artifact = component.serialize().map_err(std::io::Error::other)?;
        create_private_dir(&self.dir)?;
        let mut file = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&self.dir)?;
        file.write_all(MAGIC)?;
        file.write_all(&hex::decode(sha256).map_err(std::io::Error::other)?)?;
        file.write_all(&Sha256::digest(&artifact))?;
        file.write_all(&artifact)?;
        file.as_file().sync_data()?;
        file.persist(self.entry_path(engine, sha256))
            .map_err(|err| err.error)?;
        self.remove_stale(engine);
        Ok(())
    }

    /// Removes entries compiled by another engine: they can never be used again.
    fn remove_stale(&self, engine: &Engine) {
        let current = format!("-{}.{EXTENSION}", compatibility(engine));
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(&format!(".{EXTENSION}")) && !name.ends_with(&current) {
                let _ = fs::remove_file(entry.path());
            }
        }
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

/// The artifact inside an entry, once its header and digest check out.
fn verified_artifact<'a>(entry: &'a [u8], sha256: &str) -> Result<&'a [u8], CacheMiss> {
    if entry.len() < HEADER_LEN || &entry[..MAGIC.len()] != MAGIC {
        return Err(CacheMiss::Corrupt("no Warden header".into()));
    }
    let (source, rest) = entry[MAGIC.len()..].split_at(32);
    let (recorded, artifact) = rest.split_at(32);
    if hex::encode(source) != sha256 {
        return Err(CacheMiss::Corrupt(
            "the entry was compiled from other bytes".into(),
        ));
    }
    if Sha256::digest(artifact).as_slice() != recorded {
        return Err(CacheMiss::Corrupt(
            "the artifact does not match the digest recorded when it was written".into(),
        ));
    }
    Ok(artifact)
}

/// Turns a verified artifact back into a component.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, artifact: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: `Component::deserialize` runs the machine code in the artifact,
    // so the bytes must come from `Component::serialize` of a trusted engine.
    // They do: `ArtifactCache::load` only reaches here for a regular file in
    // Warden's own cache directory, owned (with its directory) by this user and
    // writable by no one else, whose header names the component it was
    // compiled from and whose SHA-256 equals the digest this host recorded when
    // it wrote the entry (`ArtifactCache::store`). Entries never come from a
    // path in the configuration or from any other source. wasmtime checks the
    // engine compatibility itself.
    unsafe { Component::deserialize(engine, artifact) }
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

/// Creates the cache directory, readable and writable by this user only.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(source: &[u8; 32], artifact: &[u8]) -> Vec<u8> {
        let mut e = MAGIC.to_vec();
        e.extend_from_slice(source);
        e.extend_from_slice(&Sha256::digest(artifact));
        e.extend_from_slice(artifact);
        e
    }

    #[test]
    fn an_intact_entry_yields_its_artifact() {
        let sha = hex::encode([7u8; 32]);
        let e = entry(&[7; 32], b"artifact");
        assert_eq!(verified_artifact(&e, &sha).unwrap(), b"artifact");
    }

    #[test]
    fn a_flipped_byte_in_the_artifact_is_corrupt() {
        let sha = hex::encode([7u8; 32]);
        let mut e = entry(&[7; 32], b"artifact");
        *e.last_mut().unwrap() ^= 1;
        assert!(matches!(
            verified_artifact(&e, &sha),
            Err(CacheMiss::Corrupt(_))
        ));
    }

    #[test]
    fn an_entry_for_other_bytes_is_refused() {
        let e = entry(&[7; 32], b"artifact");
        assert!(matches!(
            verified_artifact(&e, &hex::encode([8u8; 32])),
            Err(CacheMiss::Corrupt(_))
        ));
    }

    #[test]
    fn a_file_without_the_header_is_corrupt() {
        assert!(matches!(
            verified_artifact(b"\0asm\x0d\0\x01\0", &hex::encode([7u8; 32])),
            Err(CacheMiss::Corrupt(_))
        ));
    }
}
