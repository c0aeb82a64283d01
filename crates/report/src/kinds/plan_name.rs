//! The name an entry lists under when its job had none: a run without a job file, profile or `--name` is
//! planned as `iolab`, which says nothing, so the catalog names it by what it did, as fio names a workload:
//! `randread 4k qd32`. The target is left to the targets column (and `iolab runs --target`), which shows it
//! beside the name. A sweep leaves out what it swept (`randread 4k` for a qd sweep).

use iolab_doc::workload::{bs_text, io_text, DEFAULT_JOB_NAME};
use serde_json::Value;

/// The name of a plan (`config.plan`): its own, or for an unnamed one a description of its workload; `swept`
/// are the sweep's axis keys (`qd`, `bs`, `rw`, ...), left out of the description.
pub fn plan_name(plan: &Value, swept: &[&str]) -> Option<String> {
    let name = plan.get("name")?.as_str()?;
    if name != DEFAULT_JOB_NAME {
        return Some(name.to_string());
    }
    let words = describe(plan, swept);
    Some(if words.is_empty() { name.to_string() } else { words.join(" ") })
}

/// The workload's words: mix, block size, depth, workers; a facet the workers differ in is left out.
fn describe(plan: &Value, swept: &[&str]) -> Vec<String> {
    let workers = plan["workers"].as_array().map(Vec::as_slice).unwrap_or_default();
    let specs: Vec<&Value> =
        workers.iter().flat_map(|w| w["specs"].as_array().into_iter().flatten()).collect();
    let keep = |keys: &[&str]| !keys.iter().any(|k| swept.contains(k));
    let mut out = Vec::new();
    if keep(&["rw", "read_pct", "random_pct"]) {
        out.extend(shared(specs.iter().map(|s| io_text(s))));
    }
    if keep(&["bs"]) {
        out.extend(shared(specs.iter().map(|s| bs_text(s))).filter(|b| !b.is_empty()));
    }
    if keep(&["qd"]) {
        out.extend(shared(workers.iter().map(|w| format!("qd{}", w["qd"]))));
    }
    if workers.len() > 1 && keep(&["workers"]) {
        out.push(format!("x{} workers", workers.len()));
    }
    out
}

/// The one value all of `texts` share, if they do.
fn shared(mut texts: impl Iterator<Item = String>) -> Option<String> {
    let first = texts.next()?;
    texts.all(|t| t == first).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(name: &str, qd: u32) -> Value {
        json!({
            "name": name,
            "targets": [{"name": "mem:256M"}],
            "workers": [{"qd": qd, "specs": [{"read_pct": 100.0, "random_pct": 100.0,
                                              "bs": [{"size_bytes": 4096, "weight": 1}]}]}]
        })
    }

    #[test]
    fn an_unnamed_run_is_named_by_its_workload() {
        assert_eq!(plan_name(&plan("iolab", 32), &[]).as_deref(), Some("randread 4k qd32"));
        assert_eq!(plan_name(&plan("oltp", 32), &[]).as_deref(), Some("oltp"));
        assert_eq!(plan_name(&plan("iolab", 32), &["qd"]).as_deref(), Some("randread 4k"));
        assert_eq!(plan_name(&json!({"name": "iolab"}), &[]).as_deref(), Some("iolab"));
    }
}
