//! The JSON export (`listwatch-trace/3`): every gallery scenario's document validates against
//! docs/trace-format.schema.json, its texts say what the one-line trace says, and its size per
//! event does not grow with the length of names.

use listwatch_script::export;
use listwatch_script::gallery::GALLERY;
use serde_json::Value;

fn schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/trace-format.schema.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A small JSON Schema checker: the keywords the trace's schema uses (`$ref` to `#/$defs/...`,
/// `oneOf`, `type`, `const`, `enum`, `required`, `properties`, `additionalProperties: false`,
/// `items`, `minimum`, and `pattern` as "is a string"). Returns the first violation.
fn check(root: &Value, schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    let s = schema
        .as_object()
        .ok_or(format!("{at}: schema is not an object"))?;
    for key in s.keys() {
        let known = [
            "$schema",
            "$id",
            "$ref",
            "$defs",
            "title",
            "description",
            "oneOf",
            "type",
            "const",
            "enum",
            "required",
            "properties",
            "additionalProperties",
            "items",
            "minimum",
            "pattern",
        ];
        assert!(known.contains(&key.as_str()), "the checker lacks `{key}`");
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local $ref");
        check(root, &root["$defs"][name], v, at)?;
    }
    if let Some(all) = s.get("oneOf").and_then(Value::as_array) {
        let ok = all
            .iter()
            .filter(|alt| check(root, alt, v, at).is_ok())
            .count();
        if ok != 1 {
            // Name the closest alternative: the one of the event's type.
            let detail = all
                .iter()
                .map(|alt| check(root, alt, v, at))
                .find_map(|r| r.err().filter(|e| !e.contains("is not the const")))
                .unwrap_or_default();
            return Err(format!(
                "{at}: matches {ok} alternatives of oneOf, not 1 {detail}"
            ));
        }
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => panic!("bad type"),
        };
        let is = |t: &str| match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            other => panic!("type {other}"),
        };
        if !types.iter().any(|t| is(t)) {
            return Err(format!("{at}: {v} is not {types:?}"));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            return Err(format!("{at}: {v} is not the const {c}"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            return Err(format!("{at}: {v} is not one of {e:?}"));
        }
    }
    if let (Some(min), Some(n)) = (s.get("minimum").and_then(Value::as_i64), v.as_i64()) {
        if n < min {
            return Err(format!("{at}: {n} < {min}"));
        }
    }
    if s.contains_key("pattern") && !v.is_string() {
        return Err(format!("{at}: {v} is not a string"));
    }
    if let Some(obj) = v.as_object() {
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().unwrap();
            if !obj.contains_key(r) {
                return Err(format!("{at}: `{r}` is missing"));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, x) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(p) => check(root, p, x, &format!("{at}.{k}"))?,
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{at}: `{k}` is not in the schema"))
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            check(root, items, x, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

#[test]
fn every_gallery_export_validates_against_the_schema() {
    let schema = schema();
    let mut types = std::collections::BTreeSet::new();
    for (name, src) in GALLERY {
        let report = listwatch_script::run(src).unwrap();
        let doc: Value = serde_json::from_str(&export::report(&report)).unwrap();
        check(&schema, &schema, &doc, name).unwrap();
        assert_eq!(doc["format"], "listwatch-trace/3");
        assert_eq!(
            doc["events"].as_array().unwrap().len(),
            report.sim.trace().len()
        );
        for e in doc["events"].as_array().unwrap() {
            types.insert(e["type"].as_str().unwrap().to_string());
        }
    }
    // The gallery exercises most event types; the schema is checked against each of those.
    assert!(types.len() >= 25, "{types:?}");
}

/// Version 3 added the collector's `owner_ref_invalid` (gallery 56 has one) and a probe list's
/// `selector` (written only when it has one); a version 2 document
/// (here one the version 2 exporter wrote of gallery 53, with its `object_fields` events, which
/// version 2 gained without a version change) still reads: it validates against the schema, and
/// its events are today's run of gallery 53.
#[test]
fn version_3_adds_owner_ref_invalid_and_a_version_2_document_still_reads() {
    let schema = schema();
    let (_, src) = (GALLERY.iter())
        .find(|(n, _)| n.starts_with("56-"))
        .expect("gallery 56");
    let doc: Value =
        serde_json::from_str(&export::report(&listwatch_script::run(src).unwrap())).unwrap();
    let warning = (doc["events"].as_array().unwrap().iter())
        .find(|e| e["type"] == "owner_ref_invalid")
        .expect("an owner_ref_invalid event");
    let name = |i: &Value| doc["names"][i.as_u64().unwrap() as usize].clone();
    assert_eq!(name(&warning["name"]), "pv-1");
    assert_eq!(name(&warning["owner_name"]), "default/web");

    let src = "kind Pod\nat 0s create Pod a labels app=web\nat 1s probe list Pod selector app=web\nat 1s probe list Pod\nrun 2s\n";
    let doc: Value =
        serde_json::from_str(&export::report(&listwatch_script::run(src).unwrap())).unwrap();
    check(&schema, &schema, &doc, "probe selector").unwrap();
    let probes: Vec<&Value> = (doc["events"].as_array().unwrap().iter())
        .filter(|e| e["type"] == "probe_request")
        .collect();
    let name = |i: &Value| doc["names"][i.as_u64().unwrap() as usize].clone();
    assert_eq!(name(&probes[0]["selector"]), "selector app=web");
    assert!(
        probes[1].get("selector").is_none(),
        "written only when there is one"
    );

    let v2 = include_str!("fixtures/trace-v2-gallery-53.json");
    let old: Value = serde_json::from_str(v2).unwrap();
    assert_eq!(old["format"], "listwatch-trace/2");
    check(&schema, &schema, &old, "v2").unwrap();
    assert!((old["events"].as_array().unwrap().iter()).any(|e| e["type"] == "object_fields"));
    let (_, src) = (GALLERY.iter())
        .find(|(n, _)| n.starts_with("53-"))
        .expect("gallery 53");
    let now: Value =
        serde_json::from_str(&export::report(&listwatch_script::run(src).unwrap())).unwrap();
    let types = |d: &Value| -> Vec<Value> {
        (d["events"].as_array().unwrap().iter())
            .map(|e| e["type"].clone())
            .collect()
    };
    assert_eq!(old["trace_hash"], now["trace_hash"], "the same run");
    assert_eq!(types(&old), types(&now), "read as today's events");
    let mut bad = old.clone();
    bad["format"] = "listwatch-trace/1".into();
    assert!(check(&schema, &schema, &bad, "v1").is_err());
}

#[test]
fn the_checker_refuses_what_the_schema_does_not_allow() {
    let schema = schema();
    let report = listwatch_script::run(GALLERY[1].1).unwrap();
    let doc: Value = serde_json::from_str(&export::report(&report)).unwrap();
    let mut bad = doc.clone();
    bad["events"][0].as_object_mut().unwrap().remove("rv");
    assert!(check(&schema, &schema, &bad, "doc").is_err());
    let mut bad = doc.clone();
    bad["events"][0]["surprise"] = Value::Bool(true);
    assert!(check(&schema, &schema, &bad, "doc").is_err());
    let mut bad = doc.clone();
    bad["events"][0]["type"] = "nonsense".into();
    assert!(check(&schema, &schema, &bad, "doc").is_err());
    let mut bad = doc;
    bad.as_object_mut().unwrap().remove("names");
    assert!(check(&schema, &schema, &bad, "doc").is_err());
}

/// Each event's text, its names filled in, is the one-line trace's message; the structured
/// fields name what the text names.
#[test]
fn texts_render_to_the_one_line_trace() {
    for (name, src) in GALLERY {
        let report = listwatch_script::run(src).unwrap();
        let doc: Value = serde_json::from_str(&export::report(&report)).unwrap();
        let names: Vec<String> = doc["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        for (e, out) in report
            .sim
            .trace()
            .iter()
            .zip(doc["events"].as_array().unwrap())
        {
            let text = export::render_text(out["text"].as_str().unwrap(), &names);
            assert_eq!(
                text.as_deref(),
                Some(listwatch_core::describe(&e.kind, &report.sim).as_str()),
                "{name}: {out}"
            );
            assert_eq!(
                names[out["actor"].as_u64().unwrap() as usize],
                listwatch_core::actor_label(e.actor, &report.sim),
                "{name}: {out}"
            );
        }
    }
}

#[test]
fn braces_in_names_and_narration_survive() {
    let src =
        "kind Pod\nat 1s say \"a {0} b }} {{\"\nat 1s create Pod x{1}\nexpect exists Pod x{1}\n";
    let report = listwatch_script::run(src).unwrap();
    let doc: Value = serde_json::from_str(&export::report(&report)).unwrap();
    let names: Vec<String> = serde_json::from_value(doc["names"].clone()).unwrap();
    for (e, out) in report
        .sim
        .trace()
        .iter()
        .zip(doc["events"].as_array().unwrap())
    {
        assert_eq!(
            export::render_text(out["text"].as_str().unwrap(), &names).unwrap(),
            listwatch_core::describe(&e.kind, &report.sim)
        );
    }
}

/// 100,000 events about objects with 240-character names, a 63-character kind and controller:
/// the document stays under 260 bytes an event (about 215, names included once), where
/// `listwatch-trace/1`, which wrote the names in every event, took about 420.
#[test]
fn an_export_of_100k_events_with_long_names_stays_small() {
    let long = "x".repeat(240);
    let kind = format!("K{}", "k".repeat(62));
    let ctl = format!("c{}", "c".repeat(62));
    let src = format!(
        "kind {kind}\nkind Other\ncontroller {ctl} for {kind} children Other\n\
         every 10ms 17000 times create {kind} {long}-{{i}}\nrun 200s\n"
    );
    let report = listwatch_script::run(&src).unwrap();
    let events = report.sim.trace().len();
    assert!(events >= 100_000, "{events} events");
    let doc = export::report(&report);
    let per_event = doc.len() / events;
    assert!(
        per_event < 260,
        "{} bytes for {events} events: {per_event} an event",
        doc.len()
    );
}
