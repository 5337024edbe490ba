//! Lexical path canonicalisation, the comparison form and suspicious characters.

use warden_analysis::path::{
    SuspiciousKind, canonicalize, comparison_form, expand_home, find_suspicious,
};

const HOME: Option<&str> = Some("/home/u");

#[test]
fn tilde_and_home_variables_expand_to_the_given_home() {
    for p in ["~/.ssh/id_rsa", "$HOME/.ssh/id_rsa", "${HOME}/.ssh/id_rsa"] {
        assert_eq!(expand_home(p, HOME), "/home/u/.ssh/id_rsa", "{p}");
    }
    assert_eq!(expand_home("~", HOME), "/home/u");
}

#[test]
fn a_home_variable_that_is_only_a_prefix_is_left_alone() {
    assert_eq!(expand_home("$HOMEDIR/x", HOME), "$HOMEDIR/x");
    assert_eq!(expand_home("~user/x", HOME), "~user/x");
}

#[test]
fn without_a_home_nothing_expands() {
    assert_eq!(canonicalize("~/x", None, None), "~/x");
}

#[test]
fn relative_paths_join_the_working_directory() {
    assert_eq!(canonicalize("a/b", Some("/work"), HOME), "/work/a/b");
    assert_eq!(
        canonicalize("./a/../.ssh/id_rsa", Some("/home/u"), HOME),
        "/home/u/.ssh/id_rsa"
    );
}

#[test]
fn dots_and_repeated_slashes_collapse() {
    assert_eq!(canonicalize("/a//b/./c/../d/", None, None), "/a/b/d");
}

#[test]
fn dot_dot_never_climbs_above_root() {
    assert_eq!(canonicalize("/../../etc/passwd", None, None), "/etc/passwd");
    assert_eq!(canonicalize("../../../../etc", Some("/work"), None), "/etc");
}

#[test]
fn a_relative_path_without_a_working_directory_stays_relative() {
    assert_eq!(canonicalize("a/../../b", None, None), "../b");
    assert_eq!(canonicalize("./", None, None), ".");
}

#[test]
fn a_working_directory_with_a_tilde_expands_too() {
    assert_eq!(
        canonicalize(".env", Some("~/proj"), HOME),
        "/home/u/proj/.env"
    );
}

#[test]
fn case_differences_compare_equal() {
    assert_eq!(
        comparison_form("/home/u/.AWS/Credentials"),
        "/home/u/.aws/credentials"
    );
}

#[test]
fn full_width_look_alikes_compare_equal() {
    // U+FF0E FULLWIDTH FULL STOP, U+FF53 FULLWIDTH S, U+FF53, U+FF48.
    assert_eq!(
        comparison_form("/home/u/\u{FF0E}\u{FF53}\u{FF53}\u{FF48}/id_rsa"),
        "/home/u/.ssh/id_rsa"
    );
}

#[test]
fn plain_text_is_not_suspicious() {
    assert_eq!(find_suspicious("ls -la /tmp\n\tcd é"), None);
}

#[test]
fn control_characters_are_suspicious() {
    let s = find_suspicious("rm\u{1b}[2K").unwrap();
    assert_eq!((s.kind, s.offset), (SuspiciousKind::Control, 2));
}

#[test]
fn bidi_overrides_and_isolates_are_suspicious() {
    for c in ['\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}'] {
        assert_eq!(
            find_suspicious(&format!("a{c}b")).unwrap().kind,
            SuspiciousKind::Bidi,
            "{c:?}"
        );
    }
}

#[test]
fn tag_characters_are_suspicious() {
    assert_eq!(
        find_suspicious("ok\u{E0041}").unwrap().kind,
        SuspiciousKind::Tag
    );
}

#[test]
fn zero_width_characters_are_suspicious() {
    assert_eq!(
        find_suspicious("r\u{200B}m").unwrap().kind,
        SuspiciousKind::ZeroWidth
    );
}
