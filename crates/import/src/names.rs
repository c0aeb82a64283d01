//! Names the translators make up for what they emit (worker tables, phases, targets), shared by the fio and
//! Iometer translators.

use std::collections::HashSet;

/// `name`, or `name_2`, `name_3`, ... : the first not in `taken`, which then holds it.
pub(crate) fn unique(name: String, taken: &mut HashSet<String>) -> String {
    let mut n = name.clone();
    let mut i = 2;
    while taken.contains(&n) {
        n = format!("{name}_{i}");
        i += 1;
    }
    taken.insert(n.clone());
    n
}
