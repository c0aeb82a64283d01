//! One flag, one meaning, in every command: a flag spelled the same in two commands (`--seed` in `run` and
//! `db tpcc`) is the same definition, so it takes the same values with the same parser and says the same
//! about them, and a short flag stands for one long flag everywhere (`-w` is `--workers`, never also
//! `--warehouses`). What a flag's values mean to the command may differ (a filter of `iolab runs` names what
//! `iolab run` set), how they are spelled and parsed may not.

use super::Cli;
use clap::{Arg, Command, CommandFactory};
use std::collections::BTreeMap;

/// Every argument of `cmd` and its subcommands, with the command path it belongs to (`iolab db tpcc`).
fn walk<'a>(cmd: &'a Command, path: &str, out: &mut Vec<(String, &'a Arg)>) {
    let path = format!("{path} {}", cmd.get_name()).trim().to_string();
    for a in cmd.get_arguments().filter(|a| a.get_long().is_some()) {
        out.push((path.clone(), a));
    }
    for sub in cmd.get_subcommands() {
        walk(sub, &path, out);
    }
}

/// What must be the same in every command that has a flag: its aliases, whether it takes a value, and its
/// values' parser. (Help may differ: `iolab runs --target TEXT` filters on what `iolab run --target` ran.
/// The short names are checked apart: one long flag may have a short name where it is used most.)
fn shape(a: &Arg) -> String {
    format!(
        "aliases {:?}; takes a value {}; parser {:?}",
        a.get_all_aliases(),
        a.get_action().takes_values(),
        a.get_value_parser().type_id(),
    )
}

#[test]
fn every_flag_spelled_the_same_in_two_commands_is_one_definition() {
    let cli = Cli::command();
    let mut args = Vec::new();
    walk(&cli, "", &mut args);
    let mut by_long: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    for (path, a) in &args {
        by_long.entry(a.get_long().unwrap_or_default()).or_default().push((path.clone(), shape(a)));
    }
    let mut differ = Vec::new();
    for (long, uses) in &by_long {
        if let Some((first_path, first)) = uses.first() {
            for (path, s) in &uses[1..] {
                if s != first {
                    differ.push(format!("--{long}: '{first_path}' has {first}\n    '{path}' has {s}"));
                }
            }
        }
    }
    assert!(differ.is_empty(), "flags spelled the same that differ:\n  {}", differ.join("\n  "));
}

#[test]
fn a_short_flag_stands_for_one_long_flag_in_every_command() {
    let cli = Cli::command();
    let mut args = Vec::new();
    walk(&cli, "", &mut args);
    let mut by_short: BTreeMap<char, BTreeMap<&str, Vec<String>>> = BTreeMap::new();
    for (path, a) in &args {
        if let (Some(c), Some(long)) = (a.get_short(), a.get_long()) {
            by_short.entry(c).or_default().entry(long).or_default().push(path.clone());
        }
    }
    let many: Vec<String> = by_short
        .iter()
        .filter(|(_, longs)| longs.len() > 1)
        .map(|(c, longs)| format!("-{c}: {longs:?}"))
        .collect();
    assert!(many.is_empty(), "short flags with more than one meaning:\n  {}", many.join("\n  "));
}

#[test]
fn a_long_flag_is_never_another_flag_s_alias() {
    let cli = Cli::command();
    let mut args = Vec::new();
    walk(&cli, "", &mut args);
    let longs: BTreeMap<&str, &str> =
        args.iter().filter_map(|(p, a)| Some((a.get_long()?, p.as_str()))).collect();
    let mut clash = Vec::new();
    for (path, a) in &args {
        for alias in a.get_all_aliases().into_iter().flatten() {
            if let Some(other) = longs.get(alias) {
                clash.push(format!(
                    "--{alias} is an alias of --{} in '{path}' and a flag of its own in '{other}'",
                    a.get_long().unwrap_or_default()
                ));
            }
        }
    }
    assert!(clash.is_empty(), "{}", clash.join("\n"));
}
