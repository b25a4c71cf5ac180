//! The layering rules ARCHITECTURE.md names, checked on the code itself (rust-analyzer's "tidy"
//! tests): which crate may depend on which, and what the store may speak.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// `cargo tree` of `package` over edges `edges` (with `features`), a line per node.
fn cargo_tree(package: &str, edges: &str, features: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(root()).args([
        "tree",
        "--offline",
        "-e",
        edges,
        "--prefix",
        "none",
        "-p",
        package,
    ]);
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let out = cmd.output().expect("cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The crates `package` depends on in normal builds (with `features`), by name.
fn dependencies(package: &str, features: &[&str]) -> Vec<String> {
    cargo_tree(package, "normal", features)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

fn assert_none_of(package: &str, features: &[&str], forbidden: &[&str]) {
    let deps = dependencies(package, features);
    assert!(deps.len() > 1, "{package}: no dependency tree: {deps:?}");
    for f in forbidden {
        assert!(
            !deps
                .iter()
                .any(|d| d == f || d.starts_with(&format!("{f}-"))),
            "{package} depends on {f}"
        );
    }
}

#[test]
fn engines_depend_on_no_web_database_or_runtime_crate() {
    let web = ["axum", "sqlx", "leptos", "tokio", "tower", "hyper"];
    assert_none_of("natstudy-engine", &[], &web);
    assert_none_of("natstudy-vocab", &[], &web);
    assert_none_of("natstudy-types", &[], &web);
    assert_none_of("natstudy-nlm", &[], &web);
}

#[test]
fn app_depends_on_no_database_parser_or_plotting_crate() {
    let heavy = [
        "sqlx",
        "tree-sitter",
        "tree-sitter-java",
        "plotters",
        "natstudy-engine",
        "natstudy-nlm",
        "candle-core",
    ];
    assert_none_of("app", &["ssr"], &heavy);
    assert_none_of("app", &["hydrate"], &heavy);
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_store_speaks_its_own_types_and_spells_no_status() {
    let mut files = Vec::new();
    rust_files(&root().join("crates/core/src/store"), &mut files);
    assert!(files.len() > 10, "store sources: {files:?}");
    let words = [
        "'assigned'",
        "'leased'",
        "'done'",
        "'released'",
        "'queued'",
        "'running'",
        "'failed'",
        "'fixed_groups'",
        "'dynamic_queue'",
        "'admin'",
        "'researcher'",
        "'annotator'",
        "'owner'",
        "'member'",
        "'score'",
        "'verify'",
    ];
    for f in files {
        let text = std::fs::read_to_string(&f).expect("source");
        let name = f.display();
        if f.ends_with("codec.rs") {
            continue;
        }
        for w in words {
            assert!(
                !text.contains(w),
                "{name}: spells {w} in SQL; bind the enum from store/codec.rs"
            );
        }
    }
}

/// The core crate (domain, store, services) knows no UI and no transport: the pages and the
/// HTTP server depend on it, never the other way round.
#[test]
fn core_depends_on_no_ui_or_web_crate() {
    let ui = [
        "app",
        "leptos",
        "leptos_axum",
        "axum",
        "tower-http",
        "tower-sessions",
        "hyper",
    ];
    assert_none_of("natstudy-core", &[], &ui);
}

/// The web adapter and the command line reach the data only through core's services: core's
/// store is private unless its `testing` feature is on, and the `natstudy` crate does not turn
/// it on (only `tests/` does), so `cargo build -p natstudy` fails on any `store::` path there.
#[test]
fn the_server_builds_without_the_store_in_reach() {
    let tree = cargo_tree("natstudy", "features", &[]);
    assert!(
        tree.contains("natstudy-core"),
        "natstudy depends on natstudy-core: {tree}"
    );
    assert!(
        !tree.contains("natstudy-core feature \"testing\""),
        "the natstudy crate turns on core's testing feature (the store in reach)"
    );
    let lib = std::fs::read_to_string(root().join("crates/core/src/lib.rs")).expect("lib.rs");
    assert!(lib.contains("#[cfg(not(feature = \"testing\"))]"));
    assert!(lib.contains("pub(crate) mod store;"));
    // and the proof that the rule would hold: the feature tree of the tests' crate has it on
    assert!(
        cargo_tree("natstudy-tests", "features", &[]).contains("natstudy-core feature \"testing\"")
    );
}

/// The pages' use cases (`natstudy_types::backend`) are implemented in core (`api`), a file per
/// area, each a short list of service calls: none over 300 lines, none naming the store (the
/// compiler cannot say it inside core, where the store is in reach), and the server holds no
/// adapter of its own (#69: one was 988 lines in `server/src/web/backend`).
#[test]
fn the_pages_use_cases_live_in_core_by_area_and_short() {
    assert!(!root().join("server/src/web/backend").exists());
    let mut files = Vec::new();
    rust_files(&root().join("crates/core/src/api"), &mut files);
    assert!(files.len() >= 5, "api sources: {files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).expect("source");
        let lines = text.lines().count();
        assert!(lines <= 300, "{}: {lines} lines", f.display());
        assert!(
            !text.contains("store::"),
            "{}: reaches the store; call a service",
            f.display()
        );
    }
}

/// The lines of a source file that are not its inline test module: all of them but an
/// inline `#[cfg(test)] mod … { … }` (by convention the file's end). A `#[cfg(test)]` on a
/// declaration (`mod tests;`, a `use`, a function) cuts nothing: the file's own code after it
/// counts (#82: `transform/src/lib.rs` declared `#[cfg(test)] mod tests;` on its line 30 and
/// counted 30 lines of its 730).
fn body_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if !l.starts_with("#[cfg(test)]") {
            continue;
        }
        let next = lines[i + 1..]
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or("", |l| l.trim());
        let inline_mod = next
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ")
            .strip_prefix("mod ")
            .is_some_and(|rest| rest.trim_end().ends_with('{'));
        if inline_mod {
            return i;
        }
    }
    lines.len()
}

#[test]
fn a_file_is_counted_to_its_inline_test_module_only() {
    let code = "fn a() {}\n".repeat(3);
    assert_eq!(
        body_lines(&format!("{code}#[cfg(test)]\nmod tests {{\n}}\n")),
        3
    );
    assert_eq!(
        body_lines(&format!("#[cfg(test)]\nmod tests;\n{code}")),
        5,
        "a declared test module cuts nothing"
    );
    assert_eq!(body_lines(&format!("#[cfg(test)]\nuse x::y;\n{code}")), 5);
}

/// No source file's body (all but its inline test module, [`body_lines`]) is over 600 lines
/// (#69: the last six were split by what they hold).
#[test]
fn no_source_file_is_over_600_lines() {
    let mut files = Vec::new();
    for dir in ["app/src", "server/src", "crates"] {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 150, "sources: {}", files.len());
    let mut over = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(root())
            .expect("under the root")
            .display()
            .to_string();
        if rel.contains("/tests/") || rel.ends_with("/tests.rs") || rel.contains("/benches/") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("source");
        let body = body_lines(&text);
        if body > 600 {
            over.push(format!("{rel}: {body} lines"));
        }
    }
    assert!(over.is_empty(), "split by what they hold: {over:#?}");
}

/// The workspace's members, as its `Cargo.toml` lists them.
fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let line = manifest
        .lines()
        .find(|l| l.starts_with("members = ["))
        .expect("a members line");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn unsafe_code_lives_only_in_the_allocator() {
    let members = members();
    assert!(members.len() >= 6, "members: {members:?}");
    assert!(members.iter().any(|m| m == "crates/allocator"));
    let workspace = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    assert!(workspace.contains("[workspace.lints.rust]\nunsafe_code = \"forbid\""));
    for m in &members {
        let manifest = std::fs::read_to_string(root().join(m).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{m}/Cargo.toml: {e}"));
        let inherits = manifest.contains("[lints]\nworkspace = true");
        assert_eq!(
            inherits,
            m != "crates/allocator",
            "{m}: every crate but the allocator takes the workspace's lints (unsafe code forbidden)"
        );
    }
    let mut files = Vec::new();
    rust_files(&root().join("crates/allocator/src"), &mut files);
    assert_eq!(files.len(), 1, "the allocator is one module: {files:?}");
}

/// Every CSV the server writes goes through `store::export::SafeCsv`, which neutralises cells
/// a spreadsheet would run: no other module of the server (or the engine's exports) builds a
/// raw `csv::Writer`.
#[test]
fn every_csv_goes_through_the_neutralising_writer() {
    let mut files = Vec::new();
    rust_files(&root().join("server/src"), &mut files);
    rust_files(&root().join("crates/core/src"), &mut files);
    assert!(files.len() > 50, "server and core sources: {files:?}");
    for f in files {
        if f.ends_with("store/export.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("source");
        for raw in ["csv::Writer", "csv::WriterBuilder"] {
            assert!(
                !text.contains(raw),
                "{}: builds a raw {raw}; write through store::export::SafeCsv",
                f.display()
            );
        }
    }
}

/// A crate's modules by path (`store::group_commit::shared`), each with its file.
fn modules(src: &Path) -> std::collections::BTreeMap<Vec<String>, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(src).expect("under src").with_extension("");
            let mut path: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                path.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                path.pop();
            }
            (path, f)
        })
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The leading `a::b::c` path at the start of `s`.
fn leading_path(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    loop {
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(rest[..end].to_owned());
        match rest[end..].strip_prefix("::") {
            Some(r) if r.starts_with(is_ident) => rest = r,
            _ => break,
        }
    }
    out
}

/// The module paths a file's code names through `crate::`, `super::` or `self::` (in `use`
/// trees too), as (base, number of `super`s, path). Comments are skipped.
fn references(text: &str) -> Vec<(&'static str, usize, Vec<String>)> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    for base in ["crate", "super", "self"] {
        let pat = format!("{base}::");
        for (at, _) in code.match_indices(&pat) {
            if code[..at].ends_with(is_ident) || code[..at].ends_with("::") {
                continue;
            }
            let mut rest = &code[at + pat.len()..];
            let mut supers = usize::from(base == "super");
            while let Some(r) = rest.strip_prefix("super::") {
                supers += 1;
                rest = r;
            }
            let base = if base == "crate" { "crate" } else { "relative" };
            let supers = if base == "crate" { 0 } else { supers };
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 1;
                let mut item_start = 0;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' | ',' if depth == 1 => {
                            out.push((base, supers, leading_path(&group[item_start..i])));
                            item_start = i + 1;
                            if c == '}' {
                                break;
                            }
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
            } else {
                out.push((base, supers, leading_path(rest)));
            }
        }
    }
    out
}

/// The cycles among a crate's modules: strongly connected components of "names something in"
/// between modules neither of which contains the other (a module and its children share their
/// helpers by nature; siblings and cousins that name each other are one module in two files).
fn module_cycles(src: &Path) -> Vec<Vec<String>> {
    let mods = modules(src);
    let mut edges: std::collections::BTreeMap<
        &Vec<String>,
        std::collections::BTreeSet<&Vec<String>>,
    > = Default::default();
    for (module, file) in &mods {
        let text = std::fs::read_to_string(file).expect("source");
        for (base, supers, path) in references(&text) {
            let start: Vec<String> = if base == "crate" {
                Vec::new()
            } else {
                // `self::` and `super::` count from the file's module (a `mod.rs` is its folder's)
                module[..module.len().saturating_sub(supers)].to_vec()
            };
            let full: Vec<String> = start.into_iter().chain(path).collect();
            let Some(target) = (1..=full.len())
                .rev()
                .find_map(|k| mods.get_key_value(&full[..k]).map(|(m, _)| m))
            else {
                continue;
            };
            let nested = target.starts_with(module) || module.starts_with(target);
            if !nested {
                edges.entry(module).or_default().insert(target);
            }
        }
    }
    // Tarjan's strongly connected components
    struct Tarjan<'a> {
        edges: &'a std::collections::BTreeMap<
            &'a Vec<String>,
            std::collections::BTreeSet<&'a Vec<String>>,
        >,
        index: std::collections::HashMap<&'a Vec<String>, (usize, usize)>,
        stack: Vec<&'a Vec<String>>,
        on_stack: std::collections::HashSet<&'a Vec<String>>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a Vec<String>) {
            self.index.insert(v, (self.next, self.next));
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            for &w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[v].1.min(self.index[w].1);
                    self.index.entry(v).and_modify(|e| e.1 = low);
                } else if self.on_stack.contains(w) {
                    let low = self.index[v].1.min(self.index[w].0);
                    self.index.entry(v).and_modify(|e| e.1 = low);
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.join("::"));
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges: &edges,
        index: Default::default(),
        stack: Vec::new(),
        on_stack: Default::default(),
        next: 0,
        found: Vec::new(),
    };
    for m in mods.keys() {
        if !t.index.contains_key(m) {
            t.visit(m);
        }
    }
    t.found
}

#[test]
fn the_cycle_finder_finds_a_cycle_between_siblings_and_none_through_a_parent() {
    let dir = tempfile::tempdir().expect("dir");
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).expect("dir");
    std::fs::write(src.join("lib.rs"), "mod a; mod b;").expect("write");
    std::fs::write(src.join("a/mod.rs"), "mod x; use self::x::X; pub struct A;").expect("write");
    std::fs::write(src.join("a/x.rs"), "use super::A; pub struct X;").expect("write");
    std::fs::write(src.join("b.rs"), "use crate::{a::A, c::C};").expect("write");
    std::fs::write(src.join("c.rs"), "pub struct C; fn f() { crate::b::g() }").expect("write");
    assert_eq!(
        module_cycles(src),
        vec![vec!["b".to_owned(), "c".to_owned()]]
    );
}

/// No two modules of a crate name each other, directly or round a longer loop (measured on
/// the code: every `crate::`, `super::` and `self::` path, `use` trees included, tests too).
#[test]
fn no_module_cycles_in_any_crate() {
    let mut found = Vec::new();
    for member in members() {
        let src = root().join(&member).join("src");
        if src.is_dir() {
            for cycle in module_cycles(&src) {
                found.push(format!("{member}: {}", cycle.join(" ↔ ")));
            }
        }
    }
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}
