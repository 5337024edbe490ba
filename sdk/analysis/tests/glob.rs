//! Glob matching for paths and rule specifiers.

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
