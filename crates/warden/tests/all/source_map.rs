//! Where each value of a YAML file is written (`warden_runtime::source_map`):
//! the lines a decision's rule is named with.

use warden_runtime::source_map::SourceMap;

fn line(map: &SourceMap, pointer: &str) -> Option<u32> {
    map.get(pointer).map(|p| p.line)
}

#[test]
fn block_and_flow_lists_give_each_item_its_line() {
    let text = "permissions:\n  mode: default\n  allow:\n    - Bash(git status)\n    - Read(src/**)\n  deny: [Bash(rm *), 'Bash(curl *)']\n";
    let map = SourceMap::of_yaml(text, "w.yaml");
    assert_eq!(line(&map, "/permissions/allow/0"), Some(4));
    assert_eq!(line(&map, "/permissions/allow/1"), Some(5));
    assert_eq!(line(&map, "/permissions/deny/1"), Some(6));
    assert_eq!(
        map.get("/permissions/mode").unwrap().to_string(),
        "w.yaml:2"
    );
}

#[test]
fn a_mapping_in_a_list_starts_on_its_first_key() {
    let text = "rules:\n  - id: a\n    action: deny\n\n  - id: b\n    when: [{field: x, op: eq, value: y}]\n    action: allow\n";
    let map = SourceMap::of_yaml(text, "r.yaml");
    assert_eq!(line(&map, "/rules/0"), Some(2));
    assert_eq!(line(&map, "/rules/1"), Some(5));
    assert_eq!(line(&map, "/rules/1/when/0/op"), Some(6));
}

#[test]
fn keys_with_slashes_and_tildes_are_escaped() {
    let map = SourceMap::of_yaml("a/b:\n  c~d: 1\n", "f");
    assert_eq!(line(&map, "/a~1b/c~0d"), Some(2));
}

#[test]
fn a_subtree_is_rerooted_and_a_graft_names_its_own_file() {
    let main = SourceMap::of_yaml(
        "p:\n  - config:\n      rules: []\n      default: deny\n",
        "main.yaml",
    );
    let mut config = main.subtree("/p/0/config");
    assert_eq!(line(&config, "/default"), Some(4));
    config.graft(
        "policy",
        SourceMap::of_yaml("rules:\n  - id: x\n", "inc.yaml"),
    );
    let at = config.get("/policy/rules/0").unwrap();
    assert_eq!((at.file.as_str(), at.line), ("inc.yaml", 2));
    assert_eq!(config.get("/default").unwrap().file, "main.yaml");
}

#[test]
fn an_unmapped_pointer_falls_back_to_its_nearest_ancestor() {
    let map = SourceMap::of_yaml("x: 1\npolicy: |\n  rules: []\n", "f");
    // A block scalar's text starts on the line after its key.
    assert_eq!(map.locate("/policy/rules/3").unwrap().line, 3);
    assert_eq!(map.get("/policy/rules/3"), None);
}

#[test]
fn text_that_is_not_yaml_maps_nothing() {
    assert!(SourceMap::of_yaml("a: [1, 2\n", "f").is_empty());
}
