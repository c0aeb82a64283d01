//! Issue 15, item 12: commands in README and docs/ went stale (a placeholder target, a job file never shown).
//! Every `iolab` command in their shell blocks that needs no hardware and no earlier output runs here as
//! shown: emulated devices on virtual time, and `iolab profiles`. Commands with placeholders (ID, PATH,
//! /data/, /dev/, job files, traces an earlier step captured) are the reader's to fill in and are left out;
//! so are real-clock runs (seconds each). A duration over 10 s (a benchmark's minute on virtual time) runs
//! as 2 s: the flags are what is checked. A command that is refused (exit 2) or crashes fails the test, naming the file and the command.

use crate::util::{iolab, tempdir};
use std::path::Path;

/// Words that mark a command the reader must complete before it runs.
const PLACEHOLDERS: &[&str] = &[
    "ID",
    "TARGET",
    "QD",
    "FILE",
    "PATH",
    "DIR",
    "SHELL",
    "NAME",
    "/data/",
    "/dev/",
    ".toml",
    ".icf",
    ".fio",
    ".iolabtrace",
    "<",
    "...",
    "|",
    "tag:",
    "$((",
];

/// The `iolab ...` commands of the shell blocks of one Markdown text: `\` continuations joined, `$ ` prompts
/// and trailing `# comments` dropped, `a ; b` split.
fn commands(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_shell = false;
    let mut block = String::new();
    for line in markdown.lines() {
        let fence = line.trim_start().starts_with("```");
        if fence && !in_shell {
            let lang = line.trim_start().trim_start_matches('`').trim();
            in_shell = matches!(lang, "" | "sh" | "bash" | "console" | "shell");
            block.clear();
            continue;
        }
        if fence && in_shell {
            in_shell = false;
            for l in block.replace("\\\n", " ").lines() {
                let l = l.trim().trim_start_matches("$ ");
                if !l.starts_with("iolab ") {
                    continue;
                }
                let l = l.split(" # ").next().unwrap_or(l);
                out.extend(l.split(" ; ").map(|c| c.split_whitespace().collect::<Vec<_>>().join(" ")));
            }
            continue;
        }
        if in_shell {
            block.push_str(line);
            block.push('\n');
        }
    }
    out
}

/// Splits a command line into words, honouring double quotes.
fn words(command: &str) -> Vec<String> {
    let (mut out, mut word, mut quoted) = (Vec::new(), String::new(), false);
    for c in command.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// `args` with a `-d`/`--duration` over 10 s cut to 2 s.
fn shortened(mut args: Vec<String>) -> Vec<String> {
    let long = |v: &str| match v.strip_suffix('s').and_then(|n| n.parse::<f64>().ok()) {
        Some(secs) => secs > 10.0,
        None => v.ends_with('m') || v.ends_with('h'),
    };
    for i in 1..args.len() {
        if matches!(args[i - 1].as_str(), "-d" | "--duration") && long(&args[i]) {
            args[i] = "2s".into();
        }
    }
    args
}

fn runnable(command: &str) -> bool {
    let placeholder = PLACEHOLDERS.iter().any(|p| {
        command
            .split(' ')
            .any(|w| w == *p || (p.len() > 2 && w.contains(p)) || (*p == "<" && w.starts_with('<')))
    });
    !placeholder && (command.contains("--clock virtual") || command == "iolab profiles")
}

#[test]
fn doc_commands_that_need_no_hardware_run_as_shown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> =
        std::fs::read_dir(root.join("docs")).unwrap().flatten().map(|e| e.path()).collect();
    docs.sort();
    files.extend(docs.into_iter().filter(|p| p.extension().is_some_and(|e| e == "md")));
    let dir = tempdir();
    let mut ran = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for command in commands(&text).into_iter().filter(|c| runnable(c)) {
            let args = shortened(words(&command));
            let out = iolab()
                .current_dir(dir.path())
                .env("IOLAB_DB", dir.path().join("doc.db"))
                .args(&args[1..])
                .output()
                .expect("spawn iolab");
            let code = out.status.code();
            assert!(
                matches!(code, Some(0) | Some(1)),
                "{}: `{command}` exited {code:?}\n{}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 6, "only {ran} documented commands were found to run: the extraction broke");
}

#[test]
fn the_extraction_joins_lines_and_drops_prompts_and_comments() {
    let md = "text\n```sh\n$ iolab run --target sim:x \\\n    --clock virtual   # emulated\niolab runs ; iolab show ID\n```\n```toml\niolab = 1\n```\n";
    assert_eq!(commands(md), ["iolab run --target sim:x --clock virtual", "iolab runs", "iolab show ID"]);
    assert!(runnable("iolab run --target sim:x --clock virtual"));
    assert!(!runnable("iolab show ID") && !runnable("iolab run --target /data/f --clock virtual"));
    assert_eq!(words("iolab run --note \"a b\" -q"), ["iolab", "run", "--note", "a b", "-q"]);
}
