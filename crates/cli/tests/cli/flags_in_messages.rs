//! Issue 14, item 15: hints named flags that do not exist (`--jobs`, in the low-depth and sync-engine
//! warnings). Every `--flag` that a message, warning or hint of iolab's own code names (a string literal in
//! non-test source) must be a flag of some `iolab` command, as its `--help` lists them.

use crate::util::iolab;
use std::collections::BTreeSet;
use std::path::Path;

/// Flags of other programs that iolab's messages name on purpose (fio's, in the notes on imported fio results;
/// losetup's, in the warning about a loop device read through the page cache; pg_config's and useradd's in
/// `iolab db`'s hints) or passes them (initdb's, for a private PostgreSQL server; pg_basebackup's, for `iolab
/// db copy`).
const OTHER_PROGRAMS: &[&str] = &[
    "--lat_percentiles",
    "--group_reporting",
    // fio's flags `iolab run` takes, hidden from `--help` (args/hints.rs): their notes name them as fio's.
    "--time_based",
    "--direct",
    "--direct-io",
    "--bindir",
    "--system",
    "--auth",
    "--no-locale",
    "--no-sync",
    "--checkpoint",
    "--wal-method",
    "--no-password",
    // libtest's, which iolab-testkit's `in_own_process` passes to a test binary it runs again.
    "--test-threads",
    "--nocapture",
];

/// The subcommands `iolab CMD --help` lists under "Commands:" (the first word of each entry, `help` aside).
fn subcommands(help: &str) -> Vec<String> {
    let Some(at) = help.find("\nCommands:\n") else { return Vec::new() };
    help[at + 11..]
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .map(str::to_string)
        .collect()
}

/// Every flag of every command, found by walking `--help` from `iolab` down (so a new command is in without
/// a word here).
fn help_flags() -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    let mut commands: Vec<Vec<String>> = vec![Vec::new()];
    let mut walked = 0;
    while let Some(cmd) = commands.pop() {
        let out = iolab().args(&cmd).arg("--help").output().expect("spawn iolab");
        assert!(out.status.success(), "iolab {} --help", cmd.join(" "));
        let help = String::from_utf8_lossy(&out.stdout);
        flags.extend(flag_tokens(&help));
        for sub in subcommands(&help) {
            commands.push(cmd.iter().cloned().chain([sub]).collect());
        }
        walked += 1;
    }
    assert!(walked > 20, "the walk found {walked} commands");
    flags
}

/// Every `--name` in `text` (letters, digits and dashes after the two dashes).
fn flag_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text[i..].find("--") {
        let start = i + at;
        let before_ok = start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'-');
        let mut end = start + 2;
        // Underscores too: iolab's flags have none, other programs' (fio's `--group_reporting`) do.
        while end < bytes.len()
            && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'-' || bytes[end] == b'_')
        {
            end += 1;
        }
        let name = &text[start..end];
        if before_ok && name.len() > 2 && bytes[start + 2].is_ascii_lowercase() {
            out.push(name.trim_end_matches('-').to_string());
        }
        i = end.max(start + 2);
    }
    out
}

/// The string literals of Rust source `code`, with the line each starts on; comments are skipped, and a
/// literal may span lines (a `\` continuation). Good enough for iolab's own source: no raw strings hold
/// flags.
fn string_literals(code: &str) -> Vec<(usize, String)> {
    let (mut out, mut chars, mut line) = (Vec::new(), code.chars().peekable(), 1);
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '\'' => {
                // A char literal ('"', '\'') or a lifetime ('a): skip what a char literal can hold.
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    chars.nth(2);
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.nth(1);
                }
            }
            '"' => {
                let (start, mut lit) = (line, String::new());
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(next) = chars.next() {
                                line += usize::from(next == '\n');
                                lit.push(next);
                            }
                        }
                        '"' => break,
                        c => {
                            line += usize::from(c == '\n');
                            lit.push(c);
                        }
                    }
                }
                out.push((start, lit));
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_flag_named_in_a_message_is_a_real_flag() {
    let known = help_flags();
    assert!(known.contains("--workers") && known.contains("--qd"), "the help lists flags: {known:?}");
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut unknown = Vec::new();
    let mut files = Vec::new();
    let mut stack = vec![crates];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("read dir") {
            let p = e.expect("entry").path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if p.is_dir() && !matches!(name.as_str(), "tests" | "target" | "testdata") {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") && name != "tests.rs" {
                files.push(p);
            }
        }
    }
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read source");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (line, lit) in string_literals(code) {
            for flag in flag_tokens(&lit) {
                if !known.contains(&flag) && !OTHER_PROGRAMS.contains(&flag.as_str()) {
                    unknown.push(format!("{}:{line}: {flag}", f.display()));
                }
            }
        }
    }
    assert!(unknown.is_empty(), "messages name flags no iolab command has:\n{}", unknown.join("\n"));
}
