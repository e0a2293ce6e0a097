//! The user's writes on the timeline: `create`, `update`, `patch`, `status`, `label`,
//! `annotate`, `delete`. A write that names only `spec N` is the shorthand of the first
//! scripts (`WriteInput::Create`/`Update`), so their traces and share links stay as they were; one
//! that names fields, labels, annotations, finalizers or owners is a `WriteInput::Edits`.

use listwatch_core::*;

use super::table::{row, ActionFn, Row};
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::lexer::Word;
use listwatch_core::object::{MAX_ENTRIES, MAX_LABEL_VALUE_LEN, MAX_VALUE_LEN};

/// The largest spec or status a script writes or expects.
pub(super) const MAX_SPEC: i64 = 1_000_000_000;

pub(super) const ACTIONS: &[Row<ActionFn>] = &[
    row(
        "create",
        "create KIND NAME [spec N] [spec.FIELD=V] [labels K=V,...] [annotations K=V,...] [finalizer F] [owner KIND/NAME [controller] [block-owner-deletion]] [generate-name]",
        "at 0s create Db web spec 3",
        Builder::create_or_update_input,
    ),
    row(
        "update",
        "update KIND NAME [spec N] [spec.FIELD=V|null] [labels K=V|K-,...] [finalizer F|F-] ...",
        "at 5s update Db web spec 2",
        Builder::create_or_update_input,
    ),
    row(
        "patch",
        "patch KIND NAME [spec.FIELD=V|null] [status.FIELD=V|null] [labels K=V|K-,...] [finalizer F|F-] ...",
        "at 5s patch Db web status.ready=2",
        Builder::create_or_update_input,
    ),
    row(
        "label",
        "label KIND NAME K=V|K- ...",
        "at 5s label Pod web-0 app=web",
        Builder::label_input,
    ),
    row(
        "annotate",
        "annotate KIND NAME K=V|K- ...",
        "at 5s annotate Pod web-0 note=hello",
        Builder::label_input,
    ),
    row(
        "status",
        "status KIND NAME N",
        "every 100ms 50 times status Db web {i}",
        Builder::status_input,
    ),
    row(
        "delete",
        "delete KIND NAME [propagation background | foreground | orphan]",
        "at 9s delete Pod web-0",
        Builder::delete_input,
    ),
];

/// `delete`'s propagation policies.
const PROPAGATIONS: &[&str] = &["background", "foreground", "orphan"];

impl Builder {
    /// `create KIND NAME [spec N] CLAUSE...`, `update KIND NAME [spec N] CLAUSE...`,
    /// `patch KIND NAME CLAUSE...`.
    fn create_or_update_input(&self, p: &mut Cursor, aw: &Word) -> R<Input> {
        let kind = self.next_kind(p)?;
        let name = self.object_name_of(p, kind)?;
        let verb = match aw.text.as_str() {
            "create" => Verb::Create,
            "update" => Verb::Update,
            _ => Verb::Patch,
        };
        let edits = self.edits(p, verb, kind)?;
        // The shorthand of the first scripts keeps its own input, and so its trace.
        match (verb, edits.as_slice()) {
            (Verb::Create, []) => {
                return Ok(Input::Write(WriteInput::Create {
                    kind,
                    name,
                    spec: 0,
                }))
            }
            (Verb::Create, [Edit::Spec(spec)]) => {
                let spec = *spec;
                return Ok(Input::Write(WriteInput::Create { kind, name, spec }));
            }
            (Verb::Update, [Edit::Spec(spec)]) => {
                let spec = *spec;
                return Ok(Input::Write(WriteInput::Update { kind, name, spec }));
            }
            (Verb::Update | Verb::Patch, []) => {
                let a = if verb == Verb::Update {
                    "an update"
                } else {
                    "a patch"
                };
                return Err(p.err_at(aw, format!("{a} needs `spec N` or what it changes: a field (`spec.replicas=3`), `labels`, `annotations`, `finalizer` or `owner`")));
            }
            _ => {}
        }
        Ok(Input::Write(WriteInput::Edits {
            verb,
            kind,
            name,
            edits,
        }))
    }

    /// The clauses of a write, each a located error when misused; at most
    /// `object::MAX_ENTRIES` of them.
    fn edits(&self, p: &mut Cursor, verb: Verb, kind: KindId) -> R<Vec<Edit>> {
        let mut edits = vec![];
        let (mut status_word, mut other_word) = (None, None);
        // What each clause sets, to refuse a second setting of the same thing.
        let mut set: Vec<(Option<KindId>, String)> = vec![];
        while let Some(w) = p.peek() {
            p.pos += 1;
            let before = edits.len();
            match w.text.as_str() {
                "spec" => edits.push(Edit::Spec(p.number("a spec value", MAX_SPEC)?)),
                "status" => edits.push(Edit::Status(p.number("a status value", MAX_SPEC)?)),
                "labels" | "annotations" => {
                    let list = p.next("`KEY=VALUE` pairs, separated by commas")?;
                    let label = w.text == "labels";
                    for (key, value) in pairs(p, list, label, verb)? {
                        edits.push(if label {
                            Edit::Label { key, value }
                        } else {
                            Edit::Annotation { key, value }
                        });
                    }
                }
                "finalizer" => {
                    let f = p.next("a finalizer's name")?;
                    let (name, add) = match f.text.strip_suffix('-') {
                        Some(n) if verb != Verb::Create => (n, false),
                        _ => (f.text.as_str(), true),
                    };
                    check_key(p, f, name, "finalizer")?;
                    let name = name.to_string();
                    edits.push(Edit::Finalizer { name, add });
                }
                "owner" => edits.push(self.owner_edit(p)?),
                "generate-name" if verb == Verb::Create => edits.push(Edit::GenerateName),
                t if t.starts_with("spec.") || t.starts_with("status.") => {
                    edits.push(field_edit(p, w)?)
                }
                _ => {
                    return Err(unknown(p, w, "part of a write", WRITE_CLAUSES)
                        .help("a field is written `spec.NAME=VALUE` or `status.NAME=VALUE`"))
                }
            }
            for e in &edits[before..] {
                let target = edit_target(e);
                if set.contains(&target) {
                    let target = target.1;
                    // At the words that say it (a label's list, not the word `labels`).
                    let w = if matches!(e, Edit::Label { .. } | Edit::Annotation { .. }) {
                        &p.words[p.pos - 1]
                    } else {
                        w
                    };
                    // A JSON object with a key twice is ambiguous: the apiserver's strict
                    // decoding refuses it (apimachinery `pkg/runtime/serializer/json/json.go`,
                    // `duplicate field`), and the default warns and keeps the last.
                    return Err(p
                        .err_at(w, format!("this write sets {target} twice"))
                        .help("say each field, label, finalizer and owner once a write"));
                }
                set.push(target);
            }
            let status = edits[before..]
                .iter()
                .any(|e| matches!(e, Edit::Status(_) | Edit::Field { status: true, .. }));
            if status {
                status_word.get_or_insert(w);
            } else {
                other_word.get_or_insert(w);
            }
            if edits.len() > MAX_ENTRIES {
                return Err(p.err_at(
                    w,
                    format!("a write names at most {MAX_ENTRIES} fields, labels, annotations, finalizers and owners"),
                ));
            }
        }
        // The status subresource (`apiextensions-apiserver/pkg/registry/customresource/
        // strategy.go`): a create and a write of the main resource ignore status, a write to
        // `/status` ignores everything else; a line that mixes them would silently lose half.
        // A kind without it (`status-subresource off`) takes both in one write.
        if !self.config.status_subresource(kind) {
            return Ok(edits);
        }
        if let (Some(s), Some(o)) = (status_word, other_word) {
            let later = if s.col > o.col { s } else { o };
            return Err(p
                .err_at(
                    later,
                    "a write changes either the status (through `/status`) or the rest, not both",
                )
                .help("write the status in a `patch` line of its own"));
        }
        if let (Verb::Create, Some(s)) = (verb, status_word) {
            return Err(p
                .err_at(s, "a create ignores the status (the status subresource)")
                .help("set it afterwards with `patch KIND NAME status.FIELD=V`"));
        }
        Ok(edits)
    }

    /// `owner KIND/NAME [controller] [block-owner-deletion]`.
    fn owner_edit(&self, p: &mut Cursor) -> R<Edit> {
        let w = p.next("an owner, `KIND/NAME`")?;
        let Some((kind_text, name)) = w.text.split_once('/') else {
            return Err(p
                .err_at(w, format!("`{}` is not `KIND/NAME`", w.text))
                .help("an owner is its kind and name: `owner ReplicaSet/web`"));
        };
        let kind = self.config.kind_id(kind_text).ok_or_else(|| {
            let kinds: Vec<&str> = self.config.kinds.iter().map(|k| k.name.as_str()).collect();
            unknown(p, w, "kind", &kinds)
        })?;
        if name.is_empty() || name.len() > 253 {
            return Err(p.err_at(w, "an owner's name is 1 to 253 characters"));
        }
        if self.config.cluster_scoped(kind) && name.contains('/') {
            return Err(p
                .err_at(
                    w,
                    format!("`{kind_text}` is cluster-scoped: its objects have no namespace"),
                )
                .help(format!(
                    "name the owner without a namespace: `owner {kind_text}/NAME`"
                )));
        }
        let controller = p.eat("controller");
        let block_owner_deletion = p.eat("block-owner-deletion");
        Ok(Edit::Owner {
            kind,
            name: name.to_string(),
            controller,
            block_owner_deletion,
        })
    }

    /// `label KIND NAME K=V|K- ...`, `annotate KIND NAME K=V|K- ...`: merge patches, as kubectl's.
    fn label_input(&self, p: &mut Cursor, aw: &Word) -> R<Input> {
        let kind = self.next_kind(p)?;
        let name = self.object_name_of(p, kind)?;
        let label = aw.text == "label";
        let mut edits = vec![];
        while let Some(w) = p.peek() {
            p.pos += 1;
            for (key, value) in pairs(p, w, label, Verb::Patch)? {
                edits.push(if label {
                    Edit::Label { key, value }
                } else {
                    Edit::Annotation { key, value }
                });
            }
            if edits.len() > MAX_ENTRIES {
                return Err(p.err_at(
                    w,
                    format!("a write names at most {MAX_ENTRIES} labels or annotations"),
                ));
            }
        }
        if edits.is_empty() {
            return Err(p.err_at(
                aw,
                format!(
                    "`{}` needs at least one `KEY=VALUE` (or `KEY-` to remove one)",
                    aw.text
                ),
            ));
        }
        Ok(Input::Write(WriteInput::Edits {
            verb: Verb::Patch,
            kind,
            name,
            edits,
        }))
    }

    /// `status KIND NAME N`.
    fn status_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let kind = self.next_kind(p)?;
        let name = self.object_name_of(p, kind)?;
        let status = p.number("a status value", MAX_SPEC)?;
        Ok(Input::Write(WriteInput::UpdateStatus {
            kind,
            name,
            status,
        }))
    }

    /// `delete KIND NAME [propagation POLICY]`.
    fn delete_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let kind = self.next_kind(p)?;
        let name = self.object_name_of(p, kind)?;
        if !p.eat("propagation") {
            return Ok(Input::Write(WriteInput::Delete { kind, name }));
        }
        let w = p.next("a propagation policy: background, foreground or orphan")?;
        let propagation = match w.text.as_str() {
            "background" => Propagation::Background,
            "foreground" => Propagation::Foreground,
            "orphan" => Propagation::Orphan,
            _ => return Err(unknown(p, w, "propagation policy", PROPAGATIONS)),
        };
        Ok(Input::Write(WriteInput::DeleteWith {
            kind,
            name,
            propagation,
        }))
    }
}

/// The clauses a write may have.
const WRITE_CLAUSES: &[&str] = &[
    "spec",
    "status",
    "labels",
    "annotations",
    "finalizer",
    "owner",
    "generate-name",
];

/// A key (a label's, an annotation's, a field's, a finalizer's name) read in `w`.
pub(super) fn check_key(p: &Cursor, w: &Word, key: &str, what: &str) -> R<()> {
    crate::name_rules::check_key(key, what, |m| p.err_at(w, m))
}

/// A value's text: at most `max` characters, no commas or quotes (they separate and delimit).
pub(super) fn check_value(p: &Cursor, w: &Word, value: &str, what: &str, max: usize) -> R<()> {
    if value.chars().count() > max {
        return Err(p.err_at(
            w,
            format!(
                "the {what} value is {} characters long, more than the limit of {max}",
                value.chars().count()
            ),
        ));
    }
    if what == "label" && !listwatch_core::validation::label_value_ok(value) {
        return Err(p
            .err_at(w, format!("`{value}` is not a valid label value"))
            .help("a label value is empty or at most 63 ASCII letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"));
    }
    if value.contains(['"', ',']) || value.chars().any(char::is_control) {
        return Err(p.err_at(
            w,
            format!("a {what} value holds no quotes, commas or control characters"),
        ));
    }
    Ok(())
}

/// What a clause sets, as an error names it (`spec.replicas`, `label app`).
fn edit_target(e: &Edit) -> (Option<KindId>, String) {
    let text = match e {
        Edit::Spec(_) => "`spec`".into(),
        Edit::Status(_) => "`status`".into(),
        Edit::Field { status, path, .. } => {
            format!("`{}.{path}`", if *status { "status" } else { "spec" })
        }
        Edit::Label { key, .. } => format!("the label `{key}`"),
        Edit::Annotation { key, .. } => format!("the annotation `{key}`"),
        Edit::Finalizer { name, .. } => format!("the finalizer `{name}`"),
        Edit::GenerateName => "`generate-name`".into(),
        Edit::Owner { kind, name, .. } => {
            return (Some(*kind), format!("an owner reference to `{name}`"))
        }
    };
    (None, text)
}

/// `K=V,K2=V2` (and `K-` to remove, in an update or a patch): labels or annotations.
fn pairs(p: &Cursor, w: &Word, label: bool, verb: Verb) -> R<Vec<(String, Option<String>)>> {
    let what = if label { "label" } else { "annotation" };
    let max = if label {
        MAX_LABEL_VALUE_LEN
    } else {
        MAX_VALUE_LEN
    };
    let mut out = vec![];
    for part in w.text.split(',') {
        if let Some((k, v)) = part.split_once('=') {
            check_key(p, w, k, what)?;
            check_value(p, w, v, what, max)?;
            out.push((k.to_string(), Some(v.to_string())));
        } else if let Some(k) = part.strip_suffix('-').filter(|_| verb != Verb::Create) {
            check_key(p, w, k, what)?;
            out.push((k.to_string(), None));
        } else {
            return Err(p
                .err_at(w, format!("`{part}` is not `KEY=VALUE`"))
                .help(format!(
                    "a {what} is written `app=web`; `app-` removes one in an update or a patch"
                )));
        }
    }
    Ok(out)
}

/// `spec.PATH=VALUE` / `status.PATH=VALUE`: a whole number, `null` (removes it: a merge patch's
/// `null`) or text.
fn field_edit(p: &Cursor, w: &Word) -> R<Edit> {
    let Some((path, value)) = w.text.split_once('=') else {
        return Err(p
            .err_at(w, format!("`{}` has no value", w.text))
            .help("a field is written `spec.replicas=3` (or `=null` to remove it)"));
    };
    let (status, path) = match path.strip_prefix("status.") {
        Some(rest) => (true, rest),
        None => (false, path.strip_prefix("spec.").unwrap_or(path)),
    };
    crate::name_rules::check_field_path(path, "field", |m| p.err_at(w, m))?;
    if path.split('.').any(str::is_empty) {
        return Err(p.err_at(w, format!("`{path}` has an empty part")));
    }
    let value = if value == "null" {
        None
    } else if let Ok(n) = value.parse::<i64>() {
        if n.unsigned_abs() > MAX_SPEC.unsigned_abs() {
            return Err(p.err_at(w, format!("{n} is out of range (at most {MAX_SPEC})")));
        }
        Some(FieldValue::Int(n))
    } else {
        check_value(p, w, value, "field", MAX_VALUE_LEN)?;
        if value.is_empty() {
            return Err(p.err_at(w, "an empty value: write `null` to remove the field"));
        }
        Some(FieldValue::Str(value.to_string()))
    };
    let path = path.to_string();
    Ok(Edit::Field {
        status,
        path,
        value,
    })
}

/// The object a timeline write names.
pub(super) fn written_name(input: &Input) -> Option<&str> {
    let Input::Write(write) = input else {
        return None;
    };
    match write {
        WriteInput::Create { name, .. }
        | WriteInput::Update { name, .. }
        | WriteInput::UpdateStatus { name, .. }
        | WriteInput::Delete { name, .. }
        | WriteInput::Edits { name, .. }
        | WriteInput::DeleteWith { name, .. } => Some(name),
    }
}
