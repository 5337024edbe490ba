//! The layout stays as drawn (README, "Layout"): no crate imports from a crate
//! above it, and inside each crate no two modules need each other, so the
//! graph of `use` between modules has no cycle.
//!
//! How the graph is read, from the sources with `syn`:
//! - A node is a module: a file, or an inline `mod x { ... }`. Test modules
//!   (`#[cfg(test)]`) are left out: a test may use anything.
//! - An edge goes from a module to the module that *defines* what it names:
//!   every `use` and every path in its code that starts with `crate::`,
//!   `super::`, `self::` or a workspace crate's name, resolved down the module
//!   tree as far as modules go, through re-exports (`pub use b::X` in `a`
//!   makes `a::X` an edge to `b`).
//! - Containment is not a dependency: a parent's `mod child;` and its
//!   `pub use child::X` re-exports are how a module shows its children. A
//!   child that uses its parent's own items does depend on it, and then the
//!   parent must not use the child's.
//! - Between crates, an edge must point down the order below.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::Path;

use syn::visit_mut::{self, VisitMut};

/// The workspace's crates, lowest first: a crate may use only crates before it.
const ORDER: &[&str] = &[
    "warden_types",
    "warden_analysis",
    "warden_policy",
    "warden_runtime",
    "warden_log",
    "warden",
    "warden_approval",
    "warden_server",
    "warden_bench",
    "warden_mcp",
    "warden_cli",
    "warden_testkit",
];

/// `warden_policy::triage`, as segments.
type ModPath = Vec<String>;

/// One module of one crate.
struct Module {
    /// Items `pub use`d here from elsewhere, by the name they have here.
    reexports: HashMap<String, ModPath>,
    /// Every name a `use` brings in, to the path it names.
    imports: HashMap<String, ModPath>,
    /// The paths this module's code names, with where (`use` or code).
    names: Vec<ModPath>,
    children: BTreeSet<String>,
}

/// A dependency between two modules, and one path that makes it.
#[derive(Clone, Debug)]
struct Edge {
    from: ModPath,
    to: ModPath,
    via: String,
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {} (names `{}`)",
            self.from.join("::"),
            self.to.join("::"),
            self.via
        )
    }
}

struct Workspace {
    modules: BTreeMap<ModPath, Module>,
    crates: BTreeSet<String>,
}

impl Workspace {
    fn read(root: &Path) -> Workspace {
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let mut workspace = Workspace {
            modules: BTreeMap::new(),
            crates: BTreeSet::new(),
        };
        for dir in members(&manifest) {
            let dir = root.join(dir);
            let Some(name) = package_name(&dir) else {
                continue;
            };
            let crate_name = name.replace('-', "_");
            if !ORDER.contains(&crate_name.as_str()) {
                continue; // guests and examples: not part of the host's layout
            }
            workspace.crates.insert(crate_name.clone());
            let (lib, main) = (dir.join("src/lib.rs"), dir.join("src/main.rs"));
            if lib.is_file() {
                workspace.read_file(vec![crate_name.clone()], &lib, &dir.join("src"));
            }
            if main.is_file() {
                // A binary beside a library is a crate of its own that uses
                // the library; it is read as a module under it that nothing
                // in the library can name.
                let mut root = vec![crate_name.clone()];
                if lib.is_file() {
                    root.push("<main>".into());
                }
                workspace.read_file(root, &main, &dir.join("src"));
            }
        }
        workspace
    }

    /// Reads a module file; `dir` is where its `mod x;` children live.
    fn read_file(&mut self, path: ModPath, file: &Path, dir: &Path) {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        let syntax =
            syn::parse_file(&text).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        self.read_items(path, dir, syntax.items);
    }

    fn read_items(&mut self, path: ModPath, dir: &Path, mut items: Vec<syn::Item>) {
        let mut module = Module {
            reexports: HashMap::new(),
            imports: HashMap::new(),
            names: Vec::new(),
            children: BTreeSet::new(),
        };
        let mut submodules = Vec::new();
        for item in &mut items {
            match item {
                syn::Item::Mod(m) if is_test(&m.attrs) => {}
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    module.children.insert(name.clone());
                    submodules.push((
                        name,
                        m.content.take().map(|(_, items)| items),
                        path_attr(&m.attrs),
                    ));
                }
                syn::Item::Use(u) => {
                    let public = !matches!(u.vis, syn::Visibility::Inherited);
                    let mut leaves = Vec::new();
                    flatten(&u.tree, Vec::new(), &mut leaves);
                    for (full, alias) in leaves {
                        if let Some(alias) = alias {
                            if public {
                                module.reexports.insert(alias.clone(), full.clone());
                            }
                            module.imports.insert(alias, full.clone());
                        }
                        module.names.push(full);
                    }
                }
                item if has_test_attr(item) => {}
                item => {
                    let mut paths = Paths(Vec::new());
                    paths.visit_item_mut(item);
                    module.names.extend(paths.0);
                }
            }
        }
        self.modules.insert(path.clone(), module);
        for (name, inline, explicit) in submodules {
            let mut child = path.clone();
            child.push(name.clone());
            match inline {
                Some(items) => self.read_items(child, &dir.join(&name), items),
                None => {
                    let (file, child_dir) = match explicit {
                        Some(p) => {
                            let f = dir.join(p);
                            let d = f.with_extension("");
                            (f, d)
                        }
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            if flat.is_file() {
                                (flat, dir.join(&name))
                            } else {
                                (dir.join(&name).join("mod.rs"), dir.join(&name))
                            }
                        }
                    };
                    self.read_file(child, &file, &child_dir);
                }
            }
        }
    }

    /// The module a path names from `at`, and the item name left over, if
    /// the path is one of the workspace's; through re-exports.
    fn resolve(&self, at: &ModPath, path: &[String]) -> Option<ModPath> {
        self.resolve_within(at, path, 8)
    }

    /// `resolve`, following at most `hops` imports and re-exports (a `use`
    /// can name what another `use` brought in; a chain that long is a loop).
    fn resolve_within(&self, at: &ModPath, path: &[String], hops: usize) -> Option<ModPath> {
        let hops = hops.checked_sub(1)?;
        let (mut current, rest): (ModPath, &[String]) = match path.first()?.as_str() {
            "crate" => (vec![at[0].clone()], &path[1..]),
            "self" => (at.clone(), &path[1..]),
            "super" => {
                let mut base = at.clone();
                let mut rest = path;
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop();
                    rest = &rest[1..];
                }
                if base.is_empty() {
                    return None;
                }
                (base, rest)
            }
            first if self.crates.contains(first) => (vec![first.to_string()], &path[1..]),
            first => {
                let module = self.modules.get(at)?;
                if module.children.contains(first) {
                    // A child module, in scope by its `mod`.
                    let mut child = at.clone();
                    child.push(first.to_string());
                    (child, &path[1..])
                } else {
                    // A name a `use` brought in (`use crate::approval;` then
                    // `approval::x`), else something outside the workspace.
                    let imported = module.imports.get(first)?;
                    if imported.len() == 1 && imported[0] == first {
                        return None; // `use serde_json;` and the like
                    }
                    let mut full = imported.clone();
                    full.extend(path[1..].iter().cloned());
                    return self.resolve_within(at, &full, hops);
                }
            }
        };
        for (i, segment) in rest.iter().enumerate() {
            let module = self.modules.get(&current)?;
            if module.children.contains(segment) {
                current.push(segment.clone());
                continue;
            }
            if let Some(target) = module.reexports.get(segment) {
                // A re-export: what it names, from where it is.
                let mut full = target.clone();
                full.extend(rest[i + 1..].iter().cloned());
                let resolved = self
                    .resolve_within(&current, &full, hops)
                    .unwrap_or(current.clone());
                return Some(resolved);
            }
            break;
        }
        Some(current)
    }

    fn edges(&self) -> Vec<Edge> {
        let mut edges = Vec::new();
        for (path, module) in &self.modules {
            for name in &module.names {
                let Some(to) = self.resolve(path, name) else {
                    continue;
                };
                if &to == path
                    || is_reexport_of_child(path, module, name, &to)
                    || edges.iter().any(|e: &Edge| e.from == *path && e.to == to)
                {
                    continue;
                }
                edges.push(Edge {
                    from: path.clone(),
                    to,
                    via: name.join("::"),
                });
            }
        }
        edges
    }
}

/// A parent showing its child: `pub use child::X` (or `mod child`), which
/// is containment, not a dependency.
fn is_reexport_of_child(at: &ModPath, module: &Module, name: &[String], to: &ModPath) -> bool {
    to.len() > at.len()
        && to.starts_with(at)
        && module
            .reexports
            .values()
            .any(|target| target.as_slice() == name)
}

/// `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

fn has_test_attr(item: &syn::Item) -> bool {
    match item {
        syn::Item::Fn(f) => is_test(&f.attrs),
        syn::Item::Impl(i) => is_test(&i.attrs),
        _ => false,
    }
}

/// `#[path = "..."]`.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Every leaf of a `use` tree: its full path, and the name it is known by
/// here (`None` for a glob).
fn flatten(tree: &syn::UseTree, prefix: ModPath, out: &mut Vec<(ModPath, Option<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            let mut next = prefix;
            next.push(p.ident.to_string());
            flatten(&p.tree, next, out);
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                let alias = prefix.last().cloned();
                out.push((prefix, alias));
            } else {
                let mut full = prefix;
                full.push(name.clone());
                out.push((full, Some(name)));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix;
            full.push(r.ident.to_string());
            out.push((full, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix, None)),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                flatten(tree, prefix.clone(), out);
            }
        }
    }
}

/// Every path in an item's code (types, expressions, patterns, impls),
/// skipping test functions and modules inside it.
struct Paths(Vec<ModPath>);

impl VisitMut for Paths {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        if path.segments.len() > 1 {
            self.0
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        visit_mut::visit_path_mut(self, path);
    }

    fn visit_item_fn_mut(&mut self, f: &mut syn::ItemFn) {
        if !is_test(&f.attrs) {
            visit_mut::visit_item_fn_mut(self, f);
        }
    }

    fn visit_impl_item_fn_mut(&mut self, f: &mut syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            visit_mut::visit_impl_item_fn_mut(self, f);
        }
    }
}

/// The member directories of the workspace manifest.
fn members(manifest: &str) -> Vec<String> {
    let start = manifest.find("members = [").expect("a members list");
    let list = &manifest[start..manifest[start..].find(']').unwrap() + start];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn package_name(dir: &Path) -> Option<String> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    let line = manifest.lines().find(|l| l.starts_with("name = "))?;
    Some(line.split('"').nth(1)?.to_string())
}

/// Every cycle among `edges`: one per group of modules that reach one another
/// (a strongly connected component), shown as the shortest way around from its
/// first module, which is enough to say what to move.
fn cycles(edges: &[Edge]) -> Vec<(BTreeSet<String>, Vec<Edge>)> {
    let mut graph: BTreeMap<&ModPath, Vec<&Edge>> = BTreeMap::new();
    for e in edges {
        graph.entry(&e.from).or_default();
        graph.entry(&e.to).or_default();
        graph.get_mut(&e.from).unwrap().push(e);
    }
    let nodes: Vec<&ModPath> = graph.keys().copied().collect();
    let reach = |from: &ModPath| -> BTreeSet<&ModPath> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(node) = todo.pop() {
            for e in &graph[node] {
                if seen.insert(&e.to) {
                    todo.push(&e.to);
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&ModPath, BTreeSet<&ModPath>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut placed: BTreeSet<&ModPath> = BTreeSet::new();
    let mut found = Vec::new();
    for node in &nodes {
        if placed.contains(node) || !reachable[node].contains(node) {
            continue;
        }
        // The component: every module that `node` reaches and that reaches it.
        let component: BTreeSet<&ModPath> = reachable[node]
            .iter()
            .filter(|other| reachable[*other].contains(node))
            .copied()
            .collect();
        placed.extend(component.iter().copied());
        // The shortest way from `node` back to itself, inside the component.
        let mut came_by: BTreeMap<&ModPath, &Edge> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([*node]);
        'search: while let Some(at) = queue.pop_front() {
            for e in &graph[at] {
                if !component.contains(&e.to) || came_by.contains_key(&e.to) {
                    continue;
                }
                came_by.insert(&e.to, e);
                if &e.to == *node {
                    break 'search;
                }
                queue.push_back(&e.to);
            }
        }
        let mut cycle = Vec::new();
        let mut at = *node;
        loop {
            let e = came_by[at];
            cycle.push(e.clone());
            at = &e.from;
            if at == *node {
                break;
            }
        }
        cycle.reverse();
        found.push((component.iter().map(|m| m.join("::")).collect(), cycle));
    }
    found
}

fn workspace() -> Workspace {
    Workspace::read(warden_testkit::repo_root())
}

#[test]
fn no_crate_uses_a_crate_above_it() {
    let upward: Vec<String> = workspace()
        .edges()
        .into_iter()
        .filter(|e| {
            let rank = |m: &ModPath| ORDER.iter().position(|c| *c == m[0]).unwrap();
            rank(&e.to) > rank(&e.from)
        })
        .map(|e| e.to_string())
        .collect();
    assert!(
        upward.is_empty(),
        "imports that point up:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_two_modules_need_each_other() {
    let found = cycles(&workspace().edges());
    let shown: Vec<String> = found
        .iter()
        .map(|(component, cycle)| {
            let edges: Vec<String> = cycle.iter().map(|e| format!("  {e}")).collect();
            let members: Vec<&str> = component.iter().map(String::as_str).collect();
            format!("{}\n  (modules: {})", edges.join("\n"), members.join(", "))
        })
        .collect();
    assert!(
        shown.is_empty(),
        "{} cycles in the use graph; move what both sides need below both:\n{}",
        shown.len(),
        shown.join("\n\n")
    );
}

#[test]
fn every_crate_of_the_layout_is_read() {
    let workspace = workspace();
    for name in ORDER {
        if *name == "warden_analysis" || workspace.crates.contains(*name) {
            continue;
        }
        panic!("{name} is not a member of the workspace");
    }
    assert!(workspace.modules.len() > 100, "{}", workspace.modules.len());
}

#[test]
fn a_cycle_between_two_modules_is_found() {
    // The check can fail: two modules that import each other are a cycle.
    let a = vec!["c".to_string(), "a".to_string()];
    let b = vec!["c".to_string(), "b".to_string()];
    let edge = |from: &ModPath, to: &ModPath| Edge {
        from: from.clone(),
        to: to.clone(),
        via: String::new(),
    };
    let found = cycles(&[edge(&a, &b), edge(&b, &a)]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1.len(), 2);
    assert!(cycles(&[edge(&a, &b)]).is_empty());
}
