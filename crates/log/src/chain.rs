//! The tamper-evident trail: each line of a chained log carries the hash of
//! the line before it, and every `checkpoint_every` lines (and when the file is
//! closed) the writer adds a checkpoint, signed where a key is configured, that
//! it also appends to a file of its own the operator can ship elsewhere.
//!
//! - A line's hash is the SHA-256 of its exact bytes, without the newline.
//! - A chained line ends with `"chain":{"seq":N,"prev":"sha256:HEX"}`: `seq`
//!   counts the lines of the chain from 0 (across rotated files), `prev` is the
//!   previous line's hash (64 zeros for the first line of a new chain).
//! - A checkpoint line is `{"checkpoint":{...},"chain":{...}}`: `seq` and
//!   `hash` name the line before it, `time` when it was made, `kid` and
//!   `signature` (`ed25519:` + base64 over [`Checkpoint::signed_bytes`]) where
//!   a key signs. The checkpoint file holds the same checkpoints, one a line,
//!   and one more when the log is closed (not in the log: a closed log gains
//!   no line), which vouches for its last line.
//!
//! The chain alone shows an edited, deleted, inserted or reordered line; a
//! truncated tail or a file forged and re-chained from start to end is shown
//! only by the checkpoints kept outside the log or by their signatures.
//! [`crate::verify`](mod@crate::verify) checks all three.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signer as _, SigningKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The prefix of a line's hash.
pub const HASH_PREFIX: &str = "sha256:";
/// The prefix of a checkpoint's signature.
pub const SIGNATURE_PREFIX: &str = "ed25519:";
/// What the signature covers, before the checkpoint's fields: a signature made
/// for something else never reads as a checkpoint's.
pub const SIGNING_CONTEXT: &[u8] = b"warden decision log checkpoint v1\n";

/// `sha256:` + hex SHA-256 of a line (without its newline).
pub fn line_hash(line: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(HASH_PREFIX.len() + 64);
    out.push_str(HASH_PREFIX);
    for byte in Sha256::digest(line) {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The `prev` of the first line of a chain.
pub fn genesis() -> String {
    format!("{HASH_PREFIX}{}", "0".repeat(64))
}

/// The link a chained line carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// The line's place in the chain, from 0.
    pub seq: u64,
    /// The previous line's hash.
    pub prev: String,
}

/// A checkpoint: the chain's head at some line, signed where a key is configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// The `seq` of the line it vouches for (the line before it in the log).
    pub seq: u64,
    /// That line's hash.
    pub hash: String,
    /// When it was made (RFC 3339, UTC).
    pub time: String,
    /// True for the checkpoint that ends a file the writer rotated: the
    /// chain goes on in the next file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rotated: bool,
    /// The signing key's id; absent when unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kid: Option<String>,
    /// `ed25519:` + base64 of the signature over [`Checkpoint::signed_bytes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Checkpoint {
    /// The bytes a signature covers: the context, then `seq`, `hash`, `time`,
    /// `rotated` and `kid`, one a line.
    pub fn signed_bytes(&self) -> Vec<u8> {
        let mut out = SIGNING_CONTEXT.to_vec();
        for part in [
            self.seq.to_string().as_str(),
            &self.hash,
            &self.time,
            if self.rotated { "rotated" } else { "" },
            self.kid.as_deref().unwrap_or(""),
        ] {
            out.extend_from_slice(part.as_bytes());
            out.push(b'\n');
        }
        out
    }
}

/// The key that signs checkpoints (the decision-signing key) and its id.
pub struct CheckpointKey {
    /// The Ed25519 private key.
    pub key: SigningKey,
    /// The key id written into every checkpoint.
    pub kid: String,
}

/// A checkpoint line of the log.
#[derive(Serialize)]
struct CheckpointLine<'a> {
    checkpoint: &'a Checkpoint,
}

/// The writer's end of a chain: the next line's `seq` and `prev`, and how many
/// lines since the last checkpoint.
pub struct Chain {
    next_seq: u64,
    prev: String,
    since_checkpoint: u64,
    every: u64,
    key: Option<CheckpointKey>,
}

impl Chain {
    /// A chain that continues the file whose end is `tail` (whole lines, or
    /// nothing): after its last line, chained or not, numbered after the last
    /// chained one; with a checkpoint every `every` lines (0: only in the
    /// checkpoint file, when closed).
    pub fn resume(tail: &[u8], every: u64, key: Option<CheckpointKey>) -> Chain {
        let body = tail.strip_suffix(b"\n").unwrap_or(tail);
        let mut lines = body.rsplit(|&b| b == b'\n').filter(|l| !l.is_empty());
        let prev = lines.clone().next().map_or_else(genesis, line_hash);
        // A torn or unchained last line takes no number: the next follows
        // the last line that has one.
        let next_seq = lines
            .find_map(|line| {
                serde_json::from_slice::<serde_json::Value>(line)
                    .ok()?
                    .get("chain")?
                    .get("seq")?
                    .as_u64()
            })
            .map_or(0, |s| s.saturating_add(1));
        Chain {
            next_seq,
            prev,
            since_checkpoint: 0,
            every,
            key,
        }
    }

    /// Appends `line` (one serialised JSON object, without a newline) to
    /// `out` with its link and a newline, and a checkpoint after it when one
    /// is due, which it returns (to be written outside the log too).
    pub fn link(&mut self, line: &[u8], out: &mut Vec<u8>) -> Option<Checkpoint> {
        self.push(line, out);
        self.since_checkpoint += 1;
        if self.every > 0 && self.since_checkpoint >= self.every {
            return Some(self.checkpoint(out, false));
        }
        None
    }

    /// Appends a checkpoint to `out` as the last line of a file about to be
    /// rotated (marked so: the verifier then knows the chain goes on in
    /// another file); returns it.
    pub fn rotate(&mut self, out: &mut Vec<u8>) -> Checkpoint {
        self.checkpoint(out, true)
    }

    /// A checkpoint of the chain's head for the checkpoint file alone, unless
    /// no line came since the last one.
    pub fn close(&mut self) -> Option<Checkpoint> {
        (self.since_checkpoint > 0).then(|| {
            self.since_checkpoint = 0;
            self.sign(false)
        })
    }

    /// A checkpoint of the chain's head, appended to `out` as a line of the chain.
    fn checkpoint(&mut self, out: &mut Vec<u8>, rotated: bool) -> Checkpoint {
        let checkpoint = self.sign(rotated);
        // Serialising these two plain structs cannot fail.
        let line = serde_json::to_vec(&CheckpointLine {
            checkpoint: &checkpoint,
        })
        .unwrap_or_default();
        self.push(&line, out);
        self.since_checkpoint = 0;
        checkpoint
    }

    /// The head of the chain, signed where a key is configured.
    fn sign(&self, rotated: bool) -> Checkpoint {
        let mut checkpoint = Checkpoint {
            seq: self.next_seq.saturating_sub(1),
            hash: self.prev.clone(),
            time: warden_policy::clock::now_rfc3339(),
            rotated,
            kid: self.key.as_ref().map(|k| k.kid.clone()),
            signature: None,
        };
        if let Some(key) = &self.key {
            let signature = key.key.sign(&checkpoint.signed_bytes());
            checkpoint.signature = Some(format!(
                "{SIGNATURE_PREFIX}{}",
                BASE64.encode(signature.to_bytes())
            ));
        }
        checkpoint
    }

    fn push(&mut self, line: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        // The record is a JSON object: the link goes in before its last brace.
        let body = line.strip_suffix(b"}").unwrap_or(line);
        out.extend_from_slice(body);
        if body.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(b"\"chain\":{\"seq\":");
        out.extend_from_slice(self.next_seq.to_string().as_bytes());
        out.extend_from_slice(b",\"prev\":\"");
        out.extend_from_slice(self.prev.as_bytes());
        out.extend_from_slice(b"\"}}");
        self.prev = line_hash(&out[start..]);
        self.next_seq += 1;
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn lines(out: &[u8]) -> Vec<Value> {
        out.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    #[test]
    fn each_line_names_the_hash_of_the_one_before() {
        let mut chain = Chain::resume(b"", 0, None);
        let mut out = Vec::new();
        chain.link(br#"{"a":1}"#, &mut out);
        chain.link(br#"{"b":2}"#, &mut out);
        let first = out.split(|&b| b == b'\n').next().unwrap();
        let parsed = lines(&out);
        assert_eq!(parsed[0]["chain"]["prev"], genesis());
        assert_eq!(parsed[1]["chain"]["prev"], line_hash(first));
        assert_eq!(parsed[1]["chain"]["seq"], 1);
        assert_eq!(parsed[0]["a"], 1);
    }

    #[test]
    fn a_checkpoint_follows_every_nth_line_and_names_it() {
        let mut chain = Chain::resume(b"", 2, None);
        let mut out = Vec::new();
        assert!(chain.link(b"{\"a\":1}", &mut out).is_none());
        let checkpoint = chain.link(b"{\"a\":2}", &mut out).unwrap();
        let parsed = lines(&out);
        assert_eq!(parsed.len(), 3);
        assert_eq!(checkpoint.seq, 1);
        assert_eq!(parsed[2]["checkpoint"]["hash"], parsed[2]["chain"]["prev"]);
        assert!(chain.close().is_none(), "nothing since");
    }

    #[test]
    fn a_chain_resumes_after_the_last_line_of_a_file() {
        let mut chain = Chain::resume(b"", 0, None);
        let mut out = Vec::new();
        chain.link(b"{\"a\":1}", &mut out);
        let mut resumed = Chain::resume(&out, 0, None);
        let mut more = Vec::new();
        resumed.link(b"{\"a\":2}", &mut more);
        assert_eq!(lines(&more)[0]["chain"]["seq"], 1);
        assert_eq!(
            lines(&more)[0]["chain"]["prev"],
            line_hash(out.strip_suffix(b"\n").unwrap())
        );
    }

    #[test]
    fn a_torn_last_line_is_chained_after_but_takes_no_number() {
        let mut chain = Chain::resume(b"", 0, None);
        let mut out = Vec::new();
        chain.link(b"{\"a\":1}", &mut out);
        out.extend_from_slice(b"{\"a\"\n");
        let mut resumed = Chain::resume(&out, 0, None);
        let mut more = Vec::new();
        resumed.link(b"{\"a\":2}", &mut more);
        assert_eq!(lines(&more)[0]["chain"]["seq"], 1);
        assert_eq!(lines(&more)[0]["chain"]["prev"], line_hash(b"{\"a\""));
    }
}
