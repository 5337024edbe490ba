//! Glob matching for paths, rule specifiers and names.

use warden_analysis::glob::Glob;

#[test]
fn a_star_stays_within_a_segment() {
    let g = Glob::new("/src/*.rs").unwrap();
    assert!(g.matches("/src/main.rs"));
    assert!(!g.matches("/src/a/main.rs"));
}

#[test]
fn a_double_star_crosses_segments() {
    let g = Glob::new("**/.ssh/**").unwrap();
    assert!(g.matches("/home/u/.ssh/id_rsa"));
    assert!(g.matches("a/.ssh/b/c"));
    assert!(!g.matches("/home/u/ssh/id_rsa"));
}

#[test]
fn question_marks_and_classes_match_one_character() {
    let g = Glob::new("id_[re]?a*").unwrap();
    assert!(g.matches("id_rsa.pub"));
    assert!(g.matches("id_eda"));
    assert!(!g.matches("id_dsa"));
}

#[test]
fn matching_is_case_sensitive_by_default() {
    assert!(!Glob::new("*.PEM").unwrap().matches("key.pem"));
}

#[test]
fn a_case_insensitive_glob_ignores_case() {
    let g = Glob::case_insensitive("**/.AWS/credentials").unwrap();
    assert!(g.matches("/home/U/.aws/CREDENTIALS"));
}

#[test]
fn an_unclosed_class_is_refused_naming_the_pattern() {
    let e = Glob::new("a[bc").unwrap_err();
    assert_eq!(e.pattern, "a[bc");
    assert!(e.to_string().contains("a[bc"), "{e}");
}

#[test]
fn negation_is_refused() {
    assert!(Glob::new("!*.rs").is_err());
}

#[test]
fn an_empty_pattern_is_refused() {
    assert!(Glob::new("").is_err());
}

#[test]
fn a_star_in_a_name_glob_matches_any_run_of_characters_slashes_included() {
    let every = Glob::name("*").unwrap();
    for name in ["foo", "foo/bar", "mcp__x__a/b", "/", "a//b/"] {
        assert!(every.matches(name), "{name}");
    }
    let family = Glob::name("mcp__x__*").unwrap();
    assert!(family.matches("mcp__x__a/b"));
    assert!(!family.matches("mcp__y__a/b"));
    assert!(Glob::name("a/*").unwrap().matches("a/b/c"));
    assert!(Glob::name("a/**").unwrap().matches("a/b/c"));
    assert!(Glob::name("**").unwrap().matches("/x/"));
}

#[test]
fn one_character_of_a_name_glob_may_be_a_slash() {
    assert!(Glob::name("a?b").unwrap().matches("a/b"));
    assert!(Glob::name("a[!x]b").unwrap().matches("a/b"));
    assert!(Glob::name("a[/]b").unwrap().matches("a/b"));
    assert!(Glob::name("a\\/b").unwrap().matches("a/b"));
    assert!(!Glob::name("a?b").unwrap().matches("a//b"));
}

#[test]
fn a_name_glob_ignores_case_and_keeps_path_globs_as_they_were() {
    assert!(Glob::name("MCP__X__*").unwrap().matches("mcp__X__A/b"));
    assert!(!Glob::case_insensitive("*").unwrap().matches("foo/bar"));
    assert!(!Glob::new("*").unwrap().matches("/"));
}

#[test]
fn a_name_glob_is_checked_as_a_path_glob_is() {
    assert_eq!(Glob::name("mcp__[").unwrap_err().pattern, "mcp__[");
    assert!(Glob::name("!foo").is_err());
    assert!(Glob::name("").is_err());
}
