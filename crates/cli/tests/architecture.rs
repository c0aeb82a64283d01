//! docs/ARCHITECTURE.md stays true: the crate dependency graph it states is the one `cargo metadata` reports,
//! every crate has its paragraph, no module's submodules import each other in a circle, at any depth (a
//! module cycle is the first sign that a concern has drifted into the wrong place), and no two crates declare
//! a public type of the same name (one meaning per name, "Words").
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

/// A module's path inside its crate (`["fio", "job", "io"]`; the crate root is `[]`).
type ModPath = Vec<String>;

/// Every `.rs` file under `src` with the module it is. Test modules are left out (test code may reach
/// anywhere): those named `tests` and those a file declares under `#[cfg(test)]` (`#[cfg(test)] mod toy;`).
fn module_files(src: &Path) -> Vec<(ModPath, PathBuf)> {
    let files = all_module_files(src);
    let mut test_modules = Vec::new();
    for (module, path) in &files {
        let code = blank_literals(&std::fs::read_to_string(path).expect("read module"));
        for marked in code.split("#[cfg(test)]").skip(1) {
            let t = tokens(marked);
            let at = t.iter().position(|x| x == "mod").filter(|&m| m <= 4);
            if let Some(name) = at.filter(|&m| t.get(m + 2).is_some_and(|x| x == ";")).map(|m| &t[m + 1]) {
                test_modules.push(module.iter().chain([name]).cloned().collect::<ModPath>());
            }
        }
    }
    files.into_iter().filter(|(module, _)| !test_modules.iter().any(|t| module.starts_with(t))).collect()
}

/// Every `.rs` file under `src` with the module it is, but those of modules named `tests`.
fn all_module_files(src: &Path) -> Vec<(ModPath, PathBuf)> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read module folder") {
            let path = entry.expect("dir entry").path();
            let rel = path.strip_prefix(src).expect("under src");
            let mut module: ModPath =
                rel.iter().map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
            if module.iter().any(|m| m == "tests") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                if module.last().is_some_and(|m| m == "mod")
                    || matches!(module.as_slice(), [m] if m == "lib" || m == "main")
                {
                    module.pop();
                }
                files.push((module, path));
            }
        }
    }
    files
}

/// The code of a module file as the module graph reads it: comments, strings and character literals blanked
/// out, and every item marked `#[cfg(test)]` left out (test code may reach anywhere).
fn module_code(text: &str) -> String {
    without_test_items(&blank_literals(text))
}

/// The text with its comments, strings and character literals each replaced by one space.
fn blank_literals(text: &str) -> String {
    let code: Vec<char> = text.chars().collect();
    let (mut out, mut i) = (String::new(), 0);
    while i < code.len() {
        let end = literal_or_comment_end(&code, i);
        if end > i {
            out.push(' ');
            i = end;
        } else {
            out.push(code[i]);
            i += 1;
        }
    }
    out
}

/// Blanked code (no comments or literals) without the items marked `#[cfg(test)]`: from the attribute to
/// the end of the item it marks (its `;` or `,`, or the `}` that closes its body; or just before the `}`
/// that closes what encloses it).
fn without_test_items(code: &str) -> String {
    const ATTR: &str = "#[cfg(test)]";
    let (mut out, mut rest) = (String::new(), code);
    while let Some(at) = rest.find(ATTR) {
        out.push_str(&rest[..at]);
        rest = &rest[at + ATTR.len()..];
        let mut depth = 0usize;
        let mut end = rest.len();
        for (k, ch) in rest.char_indices() {
            match ch {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if depth == 0 => {
                    end = k;
                    break;
                }
                '}' if depth == 1 => {
                    end = k + 1;
                    break;
                }
                ')' | ']' | '}' => depth -= 1,
                ';' | ',' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        out.push(' ');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Where the comment, string or character literal starting at `i` ends (`i` itself when none starts there).
fn literal_or_comment_end(c: &[char], i: usize) -> usize {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    let find = |from: usize, pat: &str| {
        let pat: Vec<char> = pat.chars().collect();
        (from..c.len()).find(|&k| c[k..].starts_with(&pat)).map_or(c.len(), |k| k + pat.len())
    };
    let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    match (at(i), at(i + 1)) {
        ('/', '/') => find(i, "\n"),
        ('/', '*') => find(i + 2, "*/"),
        ('"', _) => {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            k + 1
        }
        ('r', '"' | '#') if !ident_before => {
            let hashes = (i + 1..c.len()).take_while(|&k| c[k] == '#').count();
            if at(i + 1 + hashes) != '"' {
                return i;
            }
            find(i + 2 + hashes, &format!("\"{}", "#".repeat(hashes)))
        }
        ('\'', '\\') => find(i + 3, "'"),
        ('\'', _) if at(i + 2) == '\'' => i + 3,
        _ => i,
    }
}

/// The code's tokens that matter to paths: identifiers, `::` and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < c.len() {
        let start = i;
        if c[i].is_alphanumeric() || c[i] == '_' {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            i += 1;
        }
        if !c[start].is_whitespace() {
            out.push(c[start..i].iter().collect());
        }
    }
    out
}

/// The paths of a `use` tree, braces expanded (`a::{b, c::{self, d}}` is `a::b`, `a::c`, `a::c::d`).
fn use_tree(t: &[String], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    while *i < t.len() {
        match t[*i].as_str() {
            "::" => *i += 1,
            "{" => {
                *i += 1;
                while *i < t.len() && t[*i] != "}" {
                    use_tree(t, i, &path, out);
                    if t.get(*i).is_some_and(|x| x == ",") {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            "," | "}" | ";" => break,
            "as" => *i += 2,
            "self" if !path.is_empty() => *i += 1,
            word => {
                path.push(word.to_string());
                *i += 1;
            }
        }
    }
    out.push(path);
}

/// Every path in the code that starts with `crate`, `super` or `self`: those of `use` items (braces expanded)
/// and those written in place (`crate::fio::Src`, `super::rate::rate(...)`).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let t = tokens(code);
    let (mut out, mut i) = (Vec::new(), 0);
    while i < t.len() {
        if t[i] == "use" {
            i += 1;
            use_tree(&t, &mut i, &[], &mut out);
        } else if matches!(t[i].as_str(), "crate" | "super" | "self")
            && t.get(i + 1).is_some_and(|x| x == "::")
        {
            let mut path = vec![t[i].clone()];
            while t.get(i + 1).is_some_and(|x| x == "::") && t.get(i + 2).is_some_and(|x| x != "{") {
                path.push(t[i + 2].clone());
                i += 2;
            }
            out.push(path);
        }
        i += 1;
    }
    out.retain(|p| p.first().is_some_and(|f| matches!(f.as_str(), "crate" | "super" | "self")));
    out
}

/// The module of the crate a path written in module `from` names: its longest prefix that is a module.
fn target_module(from: &[String], path: &[String], modules: &BTreeSet<ModPath>) -> ModPath {
    let mut abs = from.to_vec();
    for seg in path {
        match seg.as_str() {
            "crate" => abs.clear(),
            "self" => {}
            "super" => {
                abs.pop();
            }
            name => abs.push(name.to_string()),
        }
    }
    while !modules.contains(&abs) && abs.pop().is_some() {}
    abs
}

/// For every module, the import graph among its submodules: `fio` -> {`emit` -> {`job`}, ...} when code in
/// `fio::emit` (or below it) names something in `fio::job` (or below it). A module naming its own parent or
/// an ancestor's items is no edge: those are the scope it lives in, and its parent declares it.
fn module_graphs(src: &Path) -> BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> {
    let files = module_files(src);
    let modules: BTreeSet<ModPath> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graphs: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (from, path) in &files {
        for (i, name) in from.iter().enumerate() {
            graphs.entry(from[..i].to_vec()).or_default().entry(name.clone()).or_default();
        }
        let text = std::fs::read_to_string(path).expect("read module");
        for to in crate_paths(&module_code(&text)).iter().map(|p| target_module(from, p, &modules)) {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                let graph = graphs.entry(from[..common].to_vec()).or_default();
                graph.entry(from[common].clone()).or_default().insert(to[common].clone());
            }
        }
    }
    graphs
}

/// The module graph reads paths as Rust resolves them: `use` trees with braces, `self`, `super` and `crate`
/// paths in place, nothing in comments, strings or test code.
#[test]
fn architecture_module_paths_are_read_as_rust_reads_them() {
    let code = module_code(
        r##"use super::{io::Pattern, Ctx};
            use crate::fio::{self as f, entry::{Entry, Origin}};
            // crate::comment::x
            fn g() { let _ = ("crate::string::x", r#"crate::raw::x"#, '"'); self::own::g(); super::super::up::h(); }
            #[cfg(test)]
            use crate::tested::x;"##,
    );
    let mut paths: Vec<String> = crate_paths(&code).iter().map(|p| p.join("::")).collect();
    paths.sort();
    let expected = [
        "crate::fio",
        "crate::fio::entry::Entry",
        "crate::fio::entry::Origin",
        "self::own::g",
        "super::Ctx",
        "super::io::Pattern",
        "super::super::up::h",
    ];
    assert_eq!(paths, expected);
    let modules: BTreeSet<ModPath> = [&[][..], &["fio"], &["fio", "emit"], &["fio", "job"]]
        .iter()
        .map(|m| m.iter().map(|s| s.to_string()).collect())
        .collect();
    let from: ModPath = vec!["fio".into(), "job".into(), "io".into()];
    let path = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(target_module(&from, &path("super::super::emit::Entry"), &modules), ["fio", "emit"]);
    assert_eq!(target_module(&from, &path("crate::fio::Src"), &modules), ["fio"]);
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
    let root = workspace_root();
    let mut cycles = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).expect("read crates/") {
        let src = entry.expect("dir entry").path().join("src");
        if !src.is_dir() {
            continue;
        }
        for (parent, graph) in module_graphs(&src) {
            if let Some(cycle) = find_cycle(&graph) {
                let full = |m: &String| parent.iter().chain([m]).cloned().collect::<Vec<_>>().join("::");
                let circle: Vec<String> = cycle.iter().map(full).collect();
                cycles.push(format!(
                    "{}: {}",
                    src.strip_prefix(&root).unwrap_or(&src).display(),
                    circle.join(" -> ")
                ));
            }
        }
    }
    cycles.sort();
    assert!(
        cycles.is_empty(),
        "module cycles (each a circle among the submodules of one module, at any depth, named by their paths in \
         the crate; move what they share to a leaf module, or turn one import around):\n{}",
        cycles.join("\n")
    );
}

/// The section of ARCHITECTURE.md titled `title`: from its heading to the next.
fn section<'a>(doc: &'a str, title: &str) -> &'a str {
    let start = doc.find(&format!("\n## {title}\n")).unwrap_or_else(|| panic!("no section '{title}'"));
    let rest = &doc[start + 1..];
    rest[3..].find("\n## ").map_or(rest, |end| &rest[..end + 3])
}

/// "How a flag is defined once" stays true: the files it names exist, and `iolab run`'s derived arguments
/// declare no flag of a job key (each is built from its definition in `iolab-spec`).
#[test]
fn architecture_a_flag_is_defined_once() {
    let root = workspace_root();
    let doc = architecture_doc();
    let text = section(&doc, "How a flag is defined once");
    let named: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| t.starts_with("crates/") && t.ends_with(".rs"))
        .collect();
    assert!(named.len() >= 2, "the section names the definitions' file and the CLI's: {named:?}");
    for path in named {
        assert!(root.join(path).is_file(), "ARCHITECTURE.md names {path}, which is not there");
    }
    let args = std::fs::read_to_string(root.join("crates/cli/src/args/mod.rs")).expect("read args/mod.rs");
    let run_args =
        args.split("pub struct RunArgs {").nth(1).and_then(|r| r.split("\n}\n").next()).expect("RunArgs");
    for key in iolab_spec::keys::KEYS {
        if let Some(flag) = key.flag {
            let field = format!("pub {}:", flag.long.replace('-', "_"));
            assert!(
                !run_args.contains(&field),
                "RunArgs declares --{} again: it comes from its definition",
                flag.long
            );
        }
    }
}

/// Every public type (`struct`, `enum`, `trait`, `type`, `union`; `pub` of any scope) declared in blanked,
/// test-free code.
fn public_types(code: &str) -> Vec<String> {
    let t = tokens(code);
    let mut names = Vec::new();
    for (i, _) in t.iter().enumerate().filter(|(_, x)| *x == "pub") {
        let mut j = i + 1;
        if t.get(j).is_some_and(|x| x == "(") {
            j += t[j..].iter().position(|x| x == ")").map_or(t.len(), |k| k + 1);
        }
        while t.get(j).is_some_and(|x| x == "unsafe" || x == "auto") {
            j += 1;
        }
        let is_type =
            t.get(j).is_some_and(|x| matches!(x.as_str(), "struct" | "enum" | "trait" | "type" | "union"));
        let name = t.get(j + 1).filter(|n| n.starts_with(|c: char| c.is_alphabetic() || c == '_'));
        if let Some(name) = name.filter(|_| is_type) {
            names.push(name.clone());
        }
    }
    names
}

#[test]
fn architecture_public_types_are_read_as_rust_declares_them() {
    let code = module_code(
        r#"pub struct A; pub(crate) enum B {} pub(super) trait C {} pub(in crate::x) type D = u8;
           pub unsafe trait E {} pub union F { x: u8 } struct Private; pub fn g() {} pub mod h {}
           // pub struct Comment;
           const S: &str = "pub struct Str;";
           macro_rules! m { ($n:ident) => { pub struct $n; } }
           #[cfg(test)]
           pub struct Tested;
           #[cfg(test)]
           impl A { pub fn t() {} }
           pub struct After;"#,
    );
    assert_eq!(public_types(&code), ["A", "B", "C", "D", "E", "F", "After"]);
}

/// One meaning per name (docs/ARCHITECTURE.md, "Words"): no public type's name is declared in two crates
/// (the binary crate is `cli`). One crate may use a name in several modules for one idea (iolab-db's
/// `tpcc::Options`, `tpch::Options`: what a workload asks).
#[test]
fn architecture_no_two_crates_declare_a_public_type_of_one_name() {
    let root = workspace_root();
    let mut declared: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("crates")).expect("read crates/") {
        let dir = entry.expect("dir entry").path();
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let krate = dir.file_name().expect("crate folder").to_string_lossy().to_string();
        for (_, path) in module_files(&src) {
            let code = module_code(&std::fs::read_to_string(&path).expect("read module"));
            let file = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
            for name in public_types(&code) {
                declared.entry(name).or_default().entry(krate.clone()).or_default().insert(file.clone());
            }
        }
    }
    let twice: Vec<String> = declared
        .iter()
        .filter(|(_, crates)| crates.len() > 1)
        .map(|(name, crates)| {
            let wheres: Vec<String> = crates
                .iter()
                .map(|(krate, files)| {
                    format!("{krate} ({})", files.iter().cloned().collect::<Vec<_>>().join(", "))
                })
                .collect();
            format!("{name}: {}", wheres.join("; "))
        })
        .collect();
    assert!(
        twice.is_empty(),
        "public types of one name in two crates (one meaning per name: the crate whose word it is keeps it, \
         the other names what its type is):\n{}",
        twice.join("\n")
    );
}
