//! `data.file.read` and `data.file.write`: the path is canonicalised lexically
//! before any match. Deny lists match loosely (the comparison form: NFKC,
//! lower case); allow lists match exactly, so that no look-alike of an allowed
//! directory is allowed. Order: built-in sensitive paths, `allowed_paths`,
//! `blocked_paths`, `blocked_patterns`, and for writes `allowed_extensions`.

use serde_json::{Map, Value};
use std::sync::OnceLock;
use warden_analysis::dirs::DirList;
use warden_analysis::glob::Glob;
use warden_analysis::globs::GlobList;

use warden_analysis::path::{canonicalize, comparison_form, find_suspicious};
use warden_analysis::sensitive::{Access, SensitivePaths};

use crate::passport::Limits;
use crate::{Check, deny};

/// A capability's file limits, compiled.
#[derive(Debug, Default)]
pub struct FilePolicy {
    /// Indexed: a call is checked against the directories its path is under,
    /// not against every one.
    allowed_paths: Option<DirList>,
    blocked_paths: DirList,
    /// Indexed: a path is tried only against the patterns whose literal
    /// text it contains. Each pattern as given, for messages.
    blocked_patterns: GlobList,
    blocked_pattern_texts: Vec<String>,
    allowed_extensions: Option<Vec<String>>,
}

impl FilePolicy {
    pub fn compile(capability: &str, limits: Option<&Limits>) -> Result<FilePolicy, String> {
        let Some(limits) = limits else {
            return Ok(FilePolicy::default());
        };
        let at = format!("passport.limits.{capability}");
        let allowed_paths = limits
            .allowed_paths
            .as_ref()
            .map(|paths| DirList::new(paths.iter().map(|p| canonicalize(p, None, None)).collect()));
        let blocked_paths = DirList::new(
            limits
                .blocked_paths
                .iter()
                .flatten()
                .map(|p| comparison_form(&canonicalize(p, None, None)))
                .collect(),
        );
        let mut blocked_patterns = Vec::new();
        let mut blocked_pattern_texts = Vec::new();
        for (i, pattern) in limits.blocked_patterns.iter().flatten().enumerate() {
            let form = comparison_form(pattern);
            // A pattern without a slash names a file anywhere (like .gitignore);
            // a relative one with a slash may sit under any directory.
            let full = if !form.contains('/') || form.starts_with('/') || form.starts_with('~') {
                form
            } else {
                format!("**/{}", form.trim_start_matches("./"))
            };
            let glob = Glob::case_insensitive(&full)
                .map_err(|e| format!("{at}.blocked_patterns[{i}]: {e}"))?;
            // A pattern with a slash is matched against the whole path, one
            // without against the file name.
            let subject = if pattern.contains('/') { WHOLE } else { NAME };
            blocked_patterns.push((glob, subject));
            blocked_pattern_texts.push(pattern.clone());
        }
        let allowed_extensions = limits.allowed_extensions.as_ref().map(|exts| {
            exts.iter()
                .map(|e| e.trim_start_matches('.').to_lowercase())
                .collect()
        });
        Ok(FilePolicy {
            allowed_paths,
            blocked_paths,
            blocked_patterns: GlobList::new(blocked_patterns),
            blocked_pattern_texts,
            allowed_extensions,
        })
    }
}

/// What a `blocked_patterns` glob is matched against: the whole path (in the
/// comparison form) or its file name.
const WHOLE: usize = 0;
const NAME: usize = 1;

/// The arguments that name the file(s) a call touches: `file_path`, `path`,
/// DeerFlow's `image_path` (view_image) and each of its `filepaths`
/// (present_files).
const PATH_KEYS: [&str; 3] = ["file_path", "path", "image_path"];
const PATH_LIST_KEY: &str = "filepaths";

/// Judges a file call: every path it names, and at least one.
pub fn check(policy: &FilePolicy, args: &Map<String, Value>, write: bool) -> Check {
    let mut paths: Vec<&str> = PATH_KEYS
        .iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str))
        .collect();
    if let Some(list) = args.get(PATH_LIST_KEY).and_then(Value::as_array) {
        for item in list {
            paths.push(item.as_str().ok_or_else(|| {
                deny(
                    "oap.invalid_tool_arguments",
                    format!("`{PATH_LIST_KEY}` must hold only strings"),
                )
            })?);
        }
    }
    if paths.is_empty() || paths.iter().any(|p| p.is_empty()) {
        return Err(deny(
            "oap.missing_file_path",
            "the call has no `file_path`, `path`, `image_path` or `filepaths`",
        ));
    }
    paths
        .into_iter()
        .try_for_each(|path| check_path(policy, path, write))
}

/// Judges one path.
fn check_path(policy: &FilePolicy, path: &str, write: bool) -> Check {
    if let Some(s) = find_suspicious(path) {
        return Err(deny(
            "oap.invalid_tool_arguments",
            format!(
                "the path contains a {} (U+{:04X})",
                s.kind.as_str(),
                s.character as u32
            ),
        ));
    }
    let canonical = canonicalize(path, None, None);
    let form = comparison_form(&canonical);
    if let Some(what) = sensitive(&form, write) {
        return Err(deny(
            "oap.blocked_pattern",
            format!("'{canonical}' is a sensitive path ({what})"),
        ));
    }
    if let Some(allowed) = &policy.allowed_paths
        && allowed.containing(&canonical).is_none()
    {
        return Err(deny(
            "oap.path_not_allowed",
            format!("'{canonical}' is not under any of allowed_paths"),
        ));
    }
    if let Some(dir) = policy.blocked_paths.containing(&form) {
        return Err(deny(
            "oap.path_blocked",
            format!("'{canonical}' is under the blocked path '{dir}'"),
        ));
    }
    let basename = form.rsplit('/').next().unwrap_or(&form);
    let subjects = [form.as_str(), basename];
    if let Some(i) = policy.blocked_patterns.first(&subjects) {
        let pattern = &policy.blocked_pattern_texts[i];
        return Err(deny(
            "oap.blocked_pattern",
            format!("'{canonical}' matches the blocked pattern '{pattern}'"),
        ));
    }
    if write && let Some(extensions) = &policy.allowed_extensions {
        let extension = basename.rsplit_once('.');
        let ok = matches!(extension, Some((stem, ext)) if !stem.is_empty() && extensions.iter().any(|e| e == ext));
        if !ok {
            return Err(deny(
                "oap.extension_not_allowed",
                format!("'{canonical}' does not have one of the allowed extensions"),
            ));
        }
    }
    Ok(())
}

/// The built-in sensitive paths, always denied (the list Warden's native
/// engine uses): which pattern matched, unless the path is public material
/// (a public key, a certificate, `known_hosts` read).
fn sensitive(form: &str, write: bool) -> Option<&'static str> {
    static PATHS: OnceLock<SensitivePaths> = OnceLock::new();
    let access = if write { Access::Write } else { Access::Read };
    PATHS
        .get_or_init(SensitivePaths::default)
        .protecting(form, access)
}
