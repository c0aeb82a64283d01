//! What fio substitutes in option values before it reads them (options.c, `fio_option_dup_subs` and
//! `fio_keyword_replace`): `${NAME}` from the environment, and its keywords `$pagesize`, `$mb_memory` and
//! `$ncpus`. Each substitution is said in a note, so the translation shows what the values were.

use super::{ini, FioError, Note};
use std::collections::BTreeMap;

/// What fio reads besides the job file's text: the environment and machine facts it substitutes
/// ([`FioVars::of_process`] reads this process's), and the job sections its command line picks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FioVars {
    /// fio's `--section NAME` (repeatable): only these job sections (and `[global]`) are read, the others
    /// skipped unread, as fio skips them; empty (the default): every section.
    pub sections: Vec<String>,
    /// The environment variables `${NAME}` reads.
    pub env: BTreeMap<String, String>,
    /// `$pagesize`: the page size in bytes.
    pub pagesize: u64,
    /// `$mb_memory`: the machine's memory in MiB.
    pub mb_memory: u64,
    /// `$ncpus`: the CPUs configured.
    pub ncpus: u64,
}

impl FioVars {
    /// This process's environment, page size, memory (/proc/meminfo's MemTotal) and CPUs configured.
    pub fn of_process() -> FioVars {
        use nix::unistd::{sysconf, SysconfVar};
        let conf = |v| sysconf(v).ok().flatten().filter(|n| *n > 0).map_or(1, |n| n as u64);
        let (page, cpus) = (conf(SysconfVar::PAGE_SIZE), conf(SysconfVar::_NPROCESSORS_CONF));
        let mem_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
            t.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
        FioVars {
            sections: Vec::new(),
            env: std::env::vars().collect(),
            pagesize: page,
            mb_memory: mem_kib.unwrap_or(0) / 1024,
            ncpus: cpus,
        }
    }

    /// The sections with every value substituted, and a note for each value that changed.
    pub(super) fn expand(&self, sections: &mut [ini::Section], file: &str) -> Result<Vec<Note>, FioError> {
        let mut notes = Vec::new();
        for s in sections.iter_mut() {
            for o in s.options.iter_mut() {
                let Some(v) = o.value.clone().filter(|v| v.contains('$')) else { continue };
                let new = self.value(&v).map_err(|expected| FioError::BadValue {
                    file: file.to_string(),
                    option: o.key.clone(),
                    value: v.clone(),
                    expected,
                    section: s.name.clone(),
                    line: o.line,
                })?;
                if new != v {
                    let text =
                        format!("{}={v} is {}={new} (fio substitutes it; iolab did the same)", o.key, o.key);
                    notes.push(Note { section: s.name.clone(), line: o.line, text });
                    o.value = Some(new);
                }
            }
        }
        Ok(notes)
    }

    /// One value, `${NAME}` from the environment, then the keywords; arithmetic after a keyword (fio hands it
    /// to `bc`) is refused.
    fn value(&self, v: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = v;
        while let Some(i) = rest.find("${") {
            let Some(end) = rest[i..].find('}').map(|e| i + e).filter(|e| *e > i + 2) else { break };
            out.push_str(&rest[..i]);
            let name = &rest[i + 2..end];
            // An unset variable stays as written: the option that reads it is refused then, naming it (fio would
            // read it as empty), after the engine and the options refused before it.
            out.push_str(self.env.get(name).map_or(&rest[i..=end], String::as_str));
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        let mut keyword = false;
        for (word, n) in
            [("$pagesize", self.pagesize), ("$mb_memory", self.mb_memory), ("$ncpus", self.ncpus)]
        {
            keyword |= out.contains(word);
            out = out.replace(word, &n.to_string());
        }
        if keyword && out.contains(['+', '-', '*', '/']) {
            return Err("a value without arithmetic (fio computes it with bc; write the result)".into());
        }
        Ok(out)
    }
}
