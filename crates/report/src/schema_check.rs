//! Test support: the JSON Schema drift guard shared by every document's tests. A serialised document is
//! walked beside its schema file in `docs/schema/`: every object key it emits must be declared, every key the
//! schema requires must be emitted and declared, values must have the declared JSON `type`, `const` and
//! `enum`, and `$ref`s are followed, to `$defs` in the same file and to another document's file (a sweep
//! point's run result is checked against `iolab.result.v1.json`).

use serde_json::Value;

/// `iolab.result/1`.
pub const RESULT_SCHEMA: &str = include_str!("../../../docs/schema/iolab.result.v1.json");
/// `iolab.sweep/1`.
pub const SWEEP_SCHEMA: &str = include_str!("../../../docs/schema/iolab.sweep.v1.json");
/// `iolab.compare/1`.
pub const COMPARE_SCHEMA: &str = include_str!("../../../docs/schema/iolab.compare.v1.json");
/// `iolab.findmax/1`.
pub const FIND_MAX_SCHEMA: &str = include_str!("../../../docs/schema/iolab.findmax.v1.json");
/// `iolab.mrc/1`.
pub const MRC_SCHEMA: &str = include_str!("../../../docs/schema/iolab.mrc.v1.json");
/// `iolab.db/1`.
pub const DB_SCHEMA: &str = include_str!("../../../docs/schema/iolab.db.v1.json");
/// `iolab.dbsweep/1`.
pub const DB_SWEEP_SCHEMA: &str = include_str!("../../../docs/schema/iolab.dbsweep.v1.json");
/// `iolab.dbtpch/1`.
pub const DB_TPCH_SCHEMA: &str = include_str!("../../../docs/schema/iolab.dbtpch.v1.json");
/// `iolab.dbcopy/1`.
pub const DB_COPY_SCHEMA: &str = include_str!("../../../docs/schema/iolab.dbcopy.v1.json");

/// The schema file a `$ref` names (`iolab.db.v1.json`: any file of `docs/schema/`, so a new kind's schema
/// needs no line here), parsed (leaked: tests only, a handful of files).
fn schema_file(name: &str) -> &'static Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("$ref to schema file '{name}' ({}): {e}", path.display()));
    Box::leak(Box::new(serde_json::from_str(&text).expect("schema file is JSON")))
}

/// `schema` with its `$ref` followed, and the root its own `$ref`s resolve against.
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> (&'a Value, &'a Value) {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            // `#/$defs/NAME` in this file, `FILE` or `FILE#/$defs/NAME` in another; any other JSON pointer
            // (`FILE#/properties/engine`) points into the file the same way.
            let (file, def) = r.split_once('#').unwrap_or((r, ""));
            let root = if file.is_empty() { root } else { schema_file(file) };
            match def.strip_prefix("/$defs/") {
                Some(name) => (&root["$defs"][name], root),
                None if def.is_empty() => (root, root),
                None => (root.pointer(def).unwrap_or_else(|| panic!("$ref {r}: no such place")), root),
            }
        }
        None => (schema, root),
    }
}

/// True when `value` has the JSON type `ty` (`integer` is a number without a fraction).
fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        other => panic!("unknown JSON type '{other}' in a schema"),
    }
}

/// Checks `value` against `schema` (whose `$ref`s resolve in `root`); `path` names the place in messages.
pub fn check_against_schema(value: &Value, schema: &Value, root: &Value, path: &str) {
    let (schema, root) = resolve(schema, root);
    if let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
        if value.is_null() {
            assert!(branches.iter().any(|b| b["type"] == "null"), "{path}: null not allowed");
            return;
        }
        // Pick the branch whose `kind` const matches (tagged enum), else the non-null branch.
        let (branch, root) = branches
            .iter()
            .map(|b| resolve(b, root))
            .find(|(b, _)| match value.get("kind") {
                Some(kind) => b["properties"]["kind"]["const"] == *kind,
                None => b["type"] != "null",
            })
            .unwrap_or_else(|| panic!("{path}: no schema branch for {value}"));
        return check_against_schema(value, branch, root, path);
    }
    match schema.get("type") {
        Some(Value::String(t)) => assert!(has_type(value, t), "{path}: {value} is not of type {t}"),
        Some(Value::Array(ts)) => assert!(
            ts.iter().filter_map(Value::as_str).any(|t| has_type(value, t)),
            "{path}: {value} is none of the types {ts:?}"
        ),
        _ => {}
    }
    if let Some(c) = schema.get("const") {
        assert_eq!(value, c, "{path}: the schema fixes the value");
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        assert!(e.contains(value), "{path}: {value} is not one of {e:?}");
    }
    if let (Some(props), Some(obj)) = (schema.get("properties").and_then(Value::as_object), value.as_object())
    {
        // Every serialised key is declared; every declared key is serialised unless the schema marks it
        // optional (left out of "required": sections such as `verdict` that only some runs have).
        let required: Vec<&str> =
            schema["required"].as_array().map_or(vec![], |r| r.iter().filter_map(Value::as_str).collect());
        for k in obj.keys() {
            assert!(props.contains_key(k), "{path}.{k} is serialised but not declared in the schema");
        }
        for k in &required {
            assert!(props.contains_key(*k), "{path}: required '{k}' is not declared");
            assert!(obj.contains_key(*k), "{path}.{k} is required but was not serialised");
        }
        for (k, v) in obj {
            check_against_schema(v, &props[k], root, &format!("{path}.{k}"));
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, v) in array.iter().enumerate() {
            check_against_schema(v, items, root, &format!("{path}[{i}]"));
        }
    }
}

/// Checks a whole document against the schema file `text`.
pub fn check_document(value: &Value, text: &str) {
    let schema: Value = serde_json::from_str(text).expect("schema file is JSON");
    check_against_schema(value, &schema, &schema, "$");
}
