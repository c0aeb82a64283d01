//! Embeds the built-in profiles: every `profiles/*.toml` of the repository becomes an entry of a table of
//! (name, text) generated into OUT_DIR, so adding a profile is adding a file.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../profiles");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "toml") {
                if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                    println!("cargo:rerun-if-changed={}", path.display());
                    files.push((stem.to_string(), path.canonicalize().unwrap_or(path.clone())));
                }
            }
        }
    }
    files.sort();
    let mut out = String::from("/// Built-in profiles: (name, TOML text), sorted by name.\npub static PROFILES: &[(&str, &str)] = &[\n");
    for (name, path) in &files {
        let _ = writeln!(out, "    ({name:?}, include_str!({:?})),", path.display().to_string());
    }
    out.push_str("];\n");
    let dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(dir.join("profiles.rs"), out).expect("write the generated profile table");
    // The names alone, for the flags' completion values (the args module depends on no command module).
    let mut names =
        String::from("/// Built-in profiles' names, sorted.\npub static PROFILE_NAMES: &[&str] = &[\n");
    for (name, _) in &files {
        let _ = writeln!(names, "    {name:?},");
    }
    names.push_str("];\n");
    std::fs::write(dir.join("profile_names.rs"), names).expect("write the generated profile names");
}
