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

/// The crates `package` depends on in normal builds (with `features`), by name.
fn dependencies(package: &str, features: &[&str]) -> Vec<String> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(root()).args([
        "tree",
        "--offline",
        "-e",
        "normal",
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
    String::from_utf8_lossy(&out.stdout)
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
    rust_files(&root().join("server/src/store"), &mut files);
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
    ];
    for f in files {
        let text = std::fs::read_to_string(&f).expect("source");
        let name = f.display();
        assert!(
            !text.contains("app::"),
            "{name}: the store returns its own row types, not app's wire types"
        );
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

/// The web layer adapts: it calls services, never the store (authorisation, rules and
/// queries live below it). A tower-sessions `session_store` is not the store.
#[test]
fn the_web_layer_calls_services_never_the_store() {
    let mut files = Vec::new();
    rust_files(&root().join("server/src/web"), &mut files);
    assert!(files.len() > 5, "web sources: {files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).expect("source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let reaches_store = code
                .match_indices("store::")
                .any(|(i, _)| !code[..i].ends_with("session_"));
            assert!(
                !reaches_store,
                "{}:{}: the web layer reaches the store; call a service: {line}",
                f.display(),
                n + 1
            );
        }
    }
}

/// The pages' domain handle is implemented a file per area, each a short list of service calls:
/// none over 300 lines (one file of 880 held rules, caches and store calls before).
#[test]
fn the_backend_adapter_is_split_by_area_and_short() {
    let mut files = Vec::new();
    rust_files(&root().join("server/src/web/backend"), &mut files);
    assert!(files.len() >= 5, "backend sources: {files:?}");
    for f in files {
        let lines = std::fs::read_to_string(&f).expect("source").lines().count();
        assert!(lines <= 300, "{}: {lines} lines", f.display());
    }
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
    assert!(files.len() > 50, "server sources: {files:?}");
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
