//! An object's body beyond the shorthand `spec N` / `status N`: labels, annotations, named spec
//! and status fields, named finalizers and further owner references. One `Arc` shared by every
//! copy of the object (etcd, the watch caches, informer stores, messages in flight, the explorer's
//! forks) and copied only by a write that changes it (`Body::edit`, `Arc::make_mut`), so an event
//! costs a reference count, never a copy. An object without any of these has no body at all
//! (`None`): every scenario written with `spec N` alone runs exactly as before.

use std::sync::Arc;

use crate::model::{NameId, Names, Owner};

/// At most this many labels, annotations, fields, finalizers and owner references together on
/// one object (a bound on every copy's memory).
pub const MAX_ENTRIES: usize = 64;
/// A label's, annotation's or field's key: a qualified name's prefix (253) and `/` and name (63).
pub const MAX_KEY_LEN: usize = 317;
/// A label value (`apimachinery/pkg/util/validation` `LabelValueMaxLength`).
pub const MAX_LABEL_VALUE_LEN: usize = 63;
/// An annotation's or a string field's value (Kubernetes allows 256 KiB of annotations in all;
/// a scenario needs far less).
pub const MAX_VALUE_LEN: usize = 1024;

/// The words `Body::describe` keeps (a trace line per write of an object with a body; the
/// timeline's 100,000 writes then take at most about 50 MB of names).
pub const MAX_DESCRIBE_CHARS: usize = 480;

/// A named field's value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Value {
    Int(i64),
    Str(NameId),
}

impl Value {
    /// As JSON writes it: a number, or a quoted string.
    pub fn text(self, names: &Names) -> String {
        match self {
            Value::Int(n) => n.to_string(),
            Value::Str(s) => format!("{:?}", names.resolve(s)),
        }
    }
}

/// The parts of an object a body holds. Every map is kept sorted by key id, so two bodies with
/// the same entries are equal and hash alike (the explorer's state hash).
#[derive(Clone, Default, PartialEq, Eq, Hash, Debug)]
pub struct BodyData {
    pub labels: Vec<(NameId, NameId)>,
    pub annotations: Vec<(NameId, NameId)>,
    pub spec: Vec<(NameId, Value)>,
    pub status: Vec<(NameId, Value)>,
    /// Named finalizers (a user's or another team's); controllers' own are `Object::finalizers`.
    pub finalizers: Vec<NameId>,
    /// Owner references after `Object::owner` (the controller's own, with `controller` and
    /// `blockOwnerDeletion` set, as controller-runtime's `SetControllerReference` writes it).
    pub owners: Vec<OwnerRef>,
}

impl BodyData {
    /// How many entries the object carries (bounded by `MAX_ENTRIES`).
    pub fn entries(&self) -> usize {
        self.labels.len()
            + self.annotations.len()
            + self.spec.len()
            + self.status.len()
            + self.finalizers.len()
            + self.owners.len()
    }
}

/// One entry of `metadata.ownerReferences`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct OwnerRef {
    pub owner: Owner,
    pub controller: bool,
    pub block_owner_deletion: bool,
}

/// An object's body: shared, copied on write; `None` when empty.
#[derive(Clone, Default, PartialEq, Eq, Hash, Debug)]
pub struct Body(Option<Arc<BodyData>>);

static EMPTY: BodyData = BodyData {
    labels: vec![],
    annotations: vec![],
    spec: vec![],
    status: vec![],
    finalizers: vec![],
    owners: vec![],
};

impl Body {
    pub const EMPTY: Body = Body(None);

    pub fn data(&self) -> &BodyData {
        self.0.as_deref().unwrap_or(&EMPTY)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Changes the body through `f`, copying it first only if another object shares it; an edit
    /// that leaves it empty drops it.
    pub fn edit<T>(&mut self, f: impl FnOnce(&mut BodyData) -> T) -> T {
        let arc = self.0.get_or_insert_with(Default::default);
        let out = f(Arc::make_mut(arc));
        if arc.entries() == 0 {
            self.0 = None;
        }
        out
    }

    /// Do two bodies share one allocation (or are both empty)? What the tests of sharing ask.
    pub fn shares(&self, other: &Body) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    pub fn label(&self, key: NameId) -> Option<NameId> {
        get(&self.data().labels, key).copied()
    }
}

impl Body {
    /// What the body holds, in words, its maps sorted by key: `labels app=web; spec.image="v1";
    /// finalizers example.com/a; owners ReplicaSet/default/web (controller, blocks)`.
    /// `kind` names a kind by its id.
    pub fn describe(&self, names: &Names, kind: impl Fn(crate::model::KindId) -> String) -> String {
        let d = self.data();
        let mut parts = vec![];
        let pairs = |m: &[(NameId, NameId)]| -> String {
            let v: Vec<String> = (sorted(names, m).iter())
                .map(|(k, v)| format!("{k}={}", names.resolve(*v)))
                .collect();
            v.join(",")
        };
        if !d.labels.is_empty() {
            parts.push(format!("labels {}", pairs(&d.labels)));
        }
        if !d.annotations.is_empty() {
            parts.push(format!("annotations {}", pairs(&d.annotations)));
        }
        for (prefix, map) in [("spec", &d.spec), ("status", &d.status)] {
            if !map.is_empty() {
                let v: Vec<String> = (sorted(names, map).iter())
                    .map(|(k, v)| format!("{prefix}.{k}={}", v.text(names)))
                    .collect();
                parts.push(v.join(" "));
            }
        }
        if !d.finalizers.is_empty() {
            let mut v: Vec<&str> = d.finalizers.iter().map(|&f| names.resolve(f)).collect();
            crate::order::sort_by_text(&mut v, |s| *s);
            parts.push(format!("finalizers {}", v.join(",")));
        }
        if !d.owners.is_empty() {
            let v: Vec<String> = (d.owners.iter())
                .map(|r| {
                    let flags: Vec<&str> = [
                        (r.controller, "controller"),
                        (r.block_owner_deletion, "blocks"),
                    ]
                    .iter()
                    .filter_map(|&(on, w)| on.then_some(w))
                    .collect();
                    let owner = format!("{}/{}", kind(r.owner.kind), names.resolve(r.owner.name));
                    if flags.is_empty() {
                        owner
                    } else {
                        format!("{owner} ({})", flags.join(", "))
                    }
                })
                .collect();
            parts.push(format!("owners {}", v.join(",")));
        }
        let text = parts.join("; ");
        match text.char_indices().nth(MAX_DESCRIBE_CHARS) {
            Some((cut, _)) => format!("{}...", &text[..cut]),
            None => text,
        }
    }
}

/// The value of `key` in a map sorted by key.
pub fn get<V>(map: &[(NameId, V)], key: NameId) -> Option<&V> {
    map.binary_search_by_key(&key, |e| e.0)
        .ok()
        .map(|i| &map[i].1)
}

/// Sets (`Some`) or removes (`None`, a merge patch's `null`) `key` in a map sorted by key; true
/// when it changed.
pub fn set<V: PartialEq>(map: &mut Vec<(NameId, V)>, key: NameId, value: Option<V>) -> bool {
    match (map.binary_search_by_key(&key, |e| e.0), value) {
        (Ok(i), Some(v)) => {
            let changed = map[i].1 != v;
            map[i].1 = v;
            changed
        }
        (Ok(i), None) => {
            map.remove(i);
            true
        }
        (Err(i), Some(v)) => {
            map.insert(i, (key, v));
            true
        }
        (Err(_), None) => false,
    }
}

/// A map's entries by their keys' text (ids follow interning order): what displays show.
pub fn sorted<'a, V: Copy>(names: &'a Names, map: &[(NameId, V)]) -> Vec<(&'a str, V)> {
    let mut out: Vec<(&str, V)> = map.iter().map(|&(k, v)| (names.resolve(k), v)).collect();
    crate::order::sort_by_text(&mut out, |e| e.0);
    out
}

/// A label and field selector (`apimachinery/pkg/labels/selector.go`,
/// `apimachinery/pkg/fields/selector.go`): requirements that must all hold.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Selector {
    pub requirements: Vec<Requirement>,
    /// `metadata.name` and `metadata.namespace` requirements (a field selector).
    pub fields: Vec<FieldRequirement>,
}

/// One requirement of a label selector: `k=v`, `k!=v`, `k` (exists), `!k` (does not exist),
/// `k in (v,...)`, `k notin (v,...)` (the values sorted by id).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Requirement {
    Equals(NameId, NameId),
    NotEquals(NameId, NameId),
    Exists(NameId),
    NotExists(NameId),
    In(NameId, Box<[NameId]>),
    NotIn(NameId, Box<[NameId]>),
}

/// One requirement of a field selector: the object's name or namespace is (`equal`) or is not
/// `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    pub field: crate::config::SelectorField,
    pub equal: bool,
    pub value: NameId,
}

impl Selector {
    /// The selectors as written, with their names interned; `None` when neither is given.
    pub fn resolve(
        labels: Option<&crate::config::LabelSelector>,
        fields: Option<&crate::config::FieldSelector>,
        names: &mut Names,
    ) -> Option<Selector> {
        use crate::config::SelectorOp;
        if labels.is_none() && fields.is_none() {
            return None;
        }
        let requirements = (labels.iter().flat_map(|l| l.0.iter()))
            .map(|r| {
                let k = names.intern(&r.key);
                let mut values: Vec<NameId> = r.values.iter().map(|v| names.intern(v)).collect();
                crate::order::sort_by_u64(&mut values, |v| v.0 as u64);
                values.dedup();
                let one = || values.first().copied().unwrap_or(NameId(0));
                match r.op {
                    SelectorOp::Equals => Requirement::Equals(k, one()),
                    SelectorOp::NotEquals => Requirement::NotEquals(k, one()),
                    SelectorOp::Exists => Requirement::Exists(k),
                    SelectorOp::NotExists => Requirement::NotExists(k),
                    SelectorOp::In => Requirement::In(k, values.into()),
                    SelectorOp::NotIn => Requirement::NotIn(k, values.into()),
                }
            })
            .collect();
        let fields = (fields.iter().flat_map(|f| f.0.iter()))
            .map(|r| FieldRequirement {
                field: r.field,
                equal: r.equal,
                value: names.intern(&r.value),
            })
            .collect();
        Some(Selector {
            requirements,
            fields,
        })
    }

    /// `cache_watcher.go` `convertToWatchEvent`: what a watch with this selector makes of a
    /// change. The new object passes unless the change is a delete; the old one (none for a
    /// create) is compared too: both pass, MODIFIED; only the new, ADDED; only the old, DELETED
    /// (with the old object's content at the change's RV); neither, nothing.
    pub fn convert(
        &self,
        change: &crate::model::Change,
        names: &Names,
    ) -> Option<crate::model::EventType> {
        use crate::model::EventType;
        let o = &change.object;
        let cur = change.event != EventType::Deleted && self.matches_object(o, names);
        let old = change.event != EventType::Added
            && match &change.prev {
                Some(prev) => self.matches_object(prev, names),
                None => self.fields_match(o, names) && self.matches(&Body::EMPTY),
            };
        match (cur, old) {
            (true, true) => Some(EventType::Modified),
            (true, false) => Some(EventType::Added),
            (false, true) => Some(EventType::Deleted),
            (false, false) => None,
        }
    }

    /// Does the object pass both the field and the label selector?
    pub fn matches_object(&self, o: &crate::model::Object, names: &Names) -> bool {
        self.fields_match(o, names) && self.matches(&o.body)
    }

    /// `fields.Selector.Matches` on the object's `metadata.name` (its interned name is
    /// `namespace/name`) and `metadata.namespace`.
    fn fields_match(&self, o: &crate::model::Object, names: &Names) -> bool {
        use crate::config::SelectorField;
        self.fields.iter().all(|f| {
            let holds = match f.field {
                SelectorField::Name => {
                    let full = names.resolve(o.name);
                    let short = full.rsplit('/').next().unwrap_or(full);
                    short == names.resolve(f.value)
                }
                SelectorField::Namespace => o.namespace == f.value,
            };
            holds == f.equal
        })
    }

    /// `labels.Selector.Matches`: every requirement holds. `!=` and `notin` hold for an object
    /// without the key, as `selector.go`'s `Requirement.Matches` does.
    pub fn matches(&self, body: &Body) -> bool {
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => body.label(*k) == Some(*v),
            Requirement::NotEquals(k, v) => body.label(*k) != Some(*v),
            Requirement::Exists(k) => body.label(*k).is_some(),
            Requirement::NotExists(k) => body.label(*k).is_none(),
            Requirement::In(k, vs) => body.label(*k).is_some_and(|v| vs.contains(&v)),
            Requirement::NotIn(k, vs) => !body.label(*k).is_some_and(|v| vs.contains(&v)),
        })
    }

    /// As `selector.go`'s `String` writes it (then the field selector, after a `;`).
    pub fn text(&self, names: &Names) -> String {
        let set = |vs: &[NameId]| {
            let mut v: Vec<&str> = vs.iter().map(|&v| names.resolve(v)).collect();
            crate::order::sort_by_text(&mut v, |s| *s);
            v.join(",")
        };
        let parts: Vec<String> = (self.requirements.iter())
            .map(|r| match r {
                Requirement::Equals(k, v) => {
                    format!("{}={}", names.resolve(*k), names.resolve(*v))
                }
                Requirement::NotEquals(k, v) => {
                    format!("{}!={}", names.resolve(*k), names.resolve(*v))
                }
                Requirement::Exists(k) => names.resolve(*k).to_string(),
                Requirement::NotExists(k) => format!("!{}", names.resolve(*k)),
                Requirement::In(k, vs) => format!("{} in ({})", names.resolve(*k), set(vs)),
                Requirement::NotIn(k, vs) => format!("{} notin ({})", names.resolve(*k), set(vs)),
            })
            .collect();
        let mut text = parts.join(",");
        if !self.fields.is_empty() {
            let fields: Vec<String> = (self.fields.iter())
                .map(|f| {
                    let op = if f.equal { "=" } else { "!=" };
                    format!("{}{op}{}", f.field.as_str(), names.resolve(f.value))
                })
                .collect();
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str(&fields.join(","));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copy on write: a clone shares the body until one copy is edited; an edit that empties it
    /// drops the allocation.
    #[test]
    fn a_body_is_shared_until_an_edit_and_an_empty_one_is_none() {
        let mut names = Names::default();
        let app = names.intern("app");
        let web = names.intern("web");
        let mut a = Body::EMPTY;
        a.edit(|d| set(&mut d.labels, app, Some(web)));
        let mut b = a.clone();
        assert!(a.shares(&b));
        b.edit(|d| set(&mut d.labels, app, None));
        assert!(!a.shares(&b) && b.is_empty() && a.label(app) == Some(web));
    }

    /// A body's words are bounded, however large the body.
    #[test]
    fn a_description_stops_at_its_limit() {
        let mut names = Names::default();
        let mut body = Body::EMPTY;
        for i in 0..MAX_ENTRIES {
            let k = names.intern(&format!("key-{i}"));
            let v = names.intern(&"v".repeat(MAX_VALUE_LEN));
            body.edit(|d| set(&mut d.annotations, k, Some(v)));
        }
        let text = body.describe(&names, |_| String::new());
        assert_eq!(text.chars().count(), MAX_DESCRIBE_CHARS + 3);
    }

    /// `selector.go`: `=` needs the value, `!=` holds when the key is missing, `k` and `!k`.
    #[test]
    fn selectors_match_as_apimachinery_does() {
        let mut names = Names::default();
        let (app, tier, web, db) = (
            names.intern("app"),
            names.intern("tier"),
            names.intern("web"),
            names.intern("db"),
        );
        let mut body = Body::EMPTY;
        body.edit(|d| set(&mut d.labels, app, Some(web)));
        let sel = |r: Vec<Requirement>| Selector {
            requirements: r,
            fields: vec![],
        };
        assert!(sel(vec![Requirement::Equals(app, web)]).matches(&body));
        assert!(!sel(vec![Requirement::Equals(app, db)]).matches(&body));
        assert!(sel(vec![Requirement::NotEquals(tier, db)]).matches(&body));
        assert!(sel(vec![Requirement::Exists(app), Requirement::NotExists(tier)]).matches(&body));
        assert!(
            sel(vec![]).matches(&Body::EMPTY),
            "the empty selector matches all"
        );
    }
}
