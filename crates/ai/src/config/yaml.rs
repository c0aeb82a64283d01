//! The YAML that DLIO's workload files are written in, read as what they are: block mappings of scalars,
//! nested by indentation, flattened into DLIO's dotted keys (`dataset.num_files_train`), the form
//! `--param` takes too. A block list (`- item`) becomes its parent's value, `[a, b]`, as a flow list is
//! kept. What a workload file never holds (anchors, aliases, multi-line scalars, tabs for indentation) is
//! refused with its line, never guessed.

/// One scalar of the file: its dotted key, its value (quotes taken off; empty for a key with nothing under
/// it) and its line (from 1).
#[derive(Clone, Debug, PartialEq)]
pub struct YamlScalar {
    /// `dataset.num_files_train`.
    pub key: String,
    /// `168`.
    pub value: String,
    /// From 1.
    pub line: usize,
}

/// Reads `text` into its scalars, in file order; the error names the line and says what is not read.
pub fn entries(text: &str) -> Result<Vec<YamlScalar>, String> {
    let mut out: Vec<YamlScalar> = Vec::new();
    // The open mappings: (indent, key, index in `out` of its own entry while it has no children).
    let mut open: Vec<(usize, String, Option<usize>)> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let body = strip_comment(raw);
        if body.trim().is_empty() || (open.is_empty() && matches!(body.trim(), "---" | "...")) {
            continue;
        }
        let indent = body.len() - body.trim_start_matches(' ').len();
        if body[indent..].starts_with('\t') {
            return Err(format!("line {line}: a tab indents it; YAML indents with spaces"));
        }
        let item = body.trim();
        while open.last().is_some_and(|(i, _, _)| *i >= indent) {
            open.pop();
        }
        if let Some(v) = item.strip_prefix("- ").or((item == "-").then_some("")) {
            list_item(&mut out, &open, v, line)?;
            continue;
        }
        let Some((key, value)) = split_key(item) else {
            return Err(format!("line {line}: '{item}' is not 'key: value'"));
        };
        let dotted = open.iter().map(|(_, k, _)| k.as_str()).chain([key]).collect::<Vec<_>>().join(".");
        if let Some((_, _, own)) = open.last_mut() {
            if let Some(i) = own.take() {
                out.remove(i);
            }
        }
        let value = scalar(value, line)?;
        if out.iter().any(|e| e.key == dotted) {
            return Err(format!("line {line}: '{dotted}' is set twice"));
        }
        out.push(YamlScalar { key: dotted.clone(), value: value.clone(), line });
        if value.is_empty() {
            open.push((indent, key.to_string(), Some(out.len() - 1)));
        }
    }
    Ok(out)
}

/// `- value` under a key: appended to the key's flow list.
fn list_item(
    out: &mut [YamlScalar],
    open: &[(usize, String, Option<usize>)],
    v: &str,
    line: usize,
) -> Result<(), String> {
    let Some((_, _, Some(i))) = open.last() else {
        return Err(format!("line {line}: a list item with no key above it"));
    };
    let v = scalar(v, line)?;
    let e = &mut out[*i];
    e.value = match e.value.strip_suffix(']') {
        Some(head) => format!("{head}, {v}]"),
        None => format!("[{v}]"),
    };
    Ok(())
}

/// `key: value` or `key:`.
fn split_key(item: &str) -> Option<(&str, &str)> {
    let (k, v) = match item.find(": ") {
        Some(i) => (&item[..i], &item[i + 2..]),
        None => (item.strip_suffix(':')?, ""),
    };
    let k = k.trim().trim_matches(|c| c == '"' || c == '\'');
    (!k.is_empty() && !k.contains(' ')).then_some((k, v.trim()))
}

/// A scalar without its quotes; anchors, aliases and multi-line scalars refused.
fn scalar(v: &str, line: usize) -> Result<String, String> {
    let v = v.trim();
    if v.starts_with('&')
        || v.starts_with('*')
        || v == "|"
        || v == ">"
        || v.starts_with("|-")
        || v.starts_with(">-")
    {
        return Err(format!("line {line}: '{v}': anchors, aliases and multi-line scalars are not read"));
    }
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return Ok(v[1..v.len() - 1].to_string());
        }
    }
    Ok(v.to_string())
}

/// The line without a comment (`#` at its start or after a space, outside quotes).
fn strip_comment(raw: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in raw.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev == ' ' || prev == '\t' => return &raw[..i],
            _ => {}
        }
        prev = c;
    }
    raw
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(text: &str) -> Vec<(String, String)> {
        entries(text).unwrap().into_iter().map(|e| (e.key, e.value)).collect()
    }

    #[test]
    fn nested_mappings_flatten_to_dotted_keys() {
        let t = "model: \n  name: unet3d # the model\n\nframework: pytorch\nreader:\n batch_size: 7\n file_shuffle: 'seed'\n";
        assert_eq!(
            kv(t),
            [
                ("model.name".into(), "unet3d".into()),
                ("framework".into(), "pytorch".into()),
                ("reader.batch_size".into(), "7".into()),
                ("reader.file_shuffle".into(), "seed".into()),
            ]
        );
    }

    #[test]
    fn lists_and_empty_keys_are_values() {
        assert_eq!(
            kv("a:\n  - 1\n  - 2\nb: [3, 4]\nc:\n"),
            [("a".into(), "[1, 2]".into()), ("b".into(), "[3, 4]".into()), ("c".into(), "".into())]
        );
    }

    #[test]
    fn what_is_not_read_is_refused_with_its_line() {
        assert!(entries("a: &x 1\n").unwrap_err().starts_with("line 1:"));
        assert!(entries("a:\n\tb: 1\n").unwrap_err().contains("line 2: a tab"));
        assert!(entries("a: 1\nwhat\n").unwrap_err().contains("line 2: 'what'"));
        assert!(entries("a: 1\na: 2\n").unwrap_err().contains("'a' is set twice"));
    }
}
