//! docs/ARCHITECTURE.md stays true: the crate dependency graph it states is the one `cargo metadata` reports,
//! every crate has its paragraph, and no crate's top-level modules import each other in a circle (a module
//! cycle is the first sign that a concern has drifted into the wrong place).
//!
//! The graph lives in a fenced block of ARCHITECTURE.md marked `deps`, one line per crate:
//! `engine: cache device plan sim spec stats verify` (short names; `cli` is the binary crate `iolab`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

fn short(package: &str) -> String {
    if package == "iolab" {
        "cli".to_string()
    } else {
        package.trim_start_matches("iolab-").to_string()
    }
}

/// Crate -> the workspace crates it depends on (normal dependencies), from `cargo metadata`.
fn actual_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(workspace_root())
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut graph = BTreeMap::new();
    for p in packages {
        let deps = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|n| names.contains(n))
            .map(short)
            .collect();
        graph.insert(short(p["name"].as_str().expect("name")), deps);
    }
    graph
}

/// The graph ARCHITECTURE.md states in its `deps` block.
fn stated_graph(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let block = doc
        .split("```deps\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/ARCHITECTURE.md has a ```deps block");
    block
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (name, deps) = l.split_once(':').unwrap_or_else(|| panic!("deps line without ':': {l}"));
            (name.trim().to_string(), deps.split_whitespace().map(str::to_string).collect())
        })
        .collect()
}

fn architecture_doc() -> String {
    std::fs::read_to_string(workspace_root().join("docs/ARCHITECTURE.md")).expect("read docs/ARCHITECTURE.md")
}

#[test]
fn architecture_dependency_graph_matches_cargo_metadata() {
    let stated = stated_graph(&architecture_doc());
    let actual = actual_graph();
    let mut wrong = Vec::new();
    for name in stated.keys().chain(actual.keys()).collect::<BTreeSet<_>>() {
        let (s, a) = (stated.get(name), actual.get(name));
        if s != a {
            let fmt = |x: Option<&BTreeSet<String>>| {
                x.map_or("(no such crate)".to_string(), |d| d.iter().cloned().collect::<Vec<_>>().join(" "))
            };
            wrong.push(format!(
                "{name}:\n  ARCHITECTURE.md says: {}\n  cargo metadata says:  {}",
                fmt(s),
                fmt(a)
            ));
        }
    }
    assert!(wrong.is_empty(), "docs/ARCHITECTURE.md's deps block is out of date:\n{}", wrong.join("\n"));
}

#[test]
fn architecture_every_crate_has_its_paragraph() {
    let doc = architecture_doc();
    for name in actual_graph().keys() {
        let package = if name == "cli" { "iolab".to_string() } else { format!("iolab-{name}") };
        assert!(
            doc.contains(&format!("(`{package}`")),
            "docs/ARCHITECTURE.md has no paragraph for crate {name} (`{package}`)"
        );
    }
}

/// Top-level module name -> the top-level modules of the same crate it names as `crate::NAME` or `super::NAME`
/// from its file or folder.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(src).expect("read src") {
        let path = entry.expect("dir entry").path();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if matches!(stem.as_str(), "lib" | "main" | "tests") {
            continue;
        }
        if path.is_dir() {
            let mut stack = vec![path.clone()];
            while let Some(dir) = stack.pop() {
                for e in std::fs::read_dir(&dir).expect("read module folder") {
                    let p = e.expect("dir entry").path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|x| x == "rs") {
                        files.push((stem.clone(), p));
                    }
                }
            }
        } else if path.extension().is_some_and(|x| x == "rs") {
            files.push((stem, path));
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).expect("read module");
        // Test code may reach anywhere; only the module's own code counts.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let edges = graph.entry(module.clone()).or_default();
        for other in &modules {
            if other != module
                && (code.contains(&format!("crate::{other}::"))
                    || code.contains(&format!("crate::{other}}}"))
                    || code.contains(&format!("crate::{other};"))
                    || code.contains(&format!("crate::{{{other}")))
            {
                edges.insert(other.clone());
            }
        }
    }
    graph
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut cycle = path[i..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn architecture_no_crate_has_a_module_cycle() {
    let crates = workspace_root().join("crates");
    let mut cycles = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("read crates/") {
        let src = entry.expect("dir entry").path().join("src");
        if !src.is_dir() {
            continue;
        }
        if let Some(cycle) = find_cycle(&module_graph(&src)) {
            cycles.push(format!("{}: {}", src.display(), cycle.join(" -> ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "module cycles (each names a module of the same crate):\n{}",
        cycles.join("\n")
    );
}
