//! The `names` table every event refers to by index, the configuration's entities in it, and the
//! events' texts written with placeholders for names.

use std::collections::HashMap;

use listwatch_core::*;

/// The names table: each string once, in order of first use.
#[derive(Default)]
pub(super) struct Interner {
    pub(super) strings: Vec<String>,
    index: HashMap<String, u32>,
    /// The table index of each of the run's `NameId`s that events use.
    pub(super) objects: HashMap<NameId, u32>,
    /// The table index of the words of each object body an `ObjectFields` event points to.
    pub(super) fields: HashMap<BodyRef, u32>,
}

impl Interner {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }

    pub(super) fn object(&mut self, sim: &Sim, id: NameId) -> u32 {
        if let Some(&i) = self.objects.get(&id) {
            return i;
        }
        let i = self.intern(sim.names().resolve(id));
        self.objects.insert(id, i);
        i
    }

    /// An object body's words (`Labels::fields`), made once per event that points to it.
    pub(super) fn fields(&mut self, sim: &Sim, body: BodyRef) -> u32 {
        if let Some(&i) = self.fields.get(&body) {
            return i;
        }
        let i = self.intern(&Labels::fields(sim, body));
        self.fields.insert(body, i);
        i
    }
}

/// Table indices of the configuration's entities.
pub(super) struct Actors {
    user: u32,
    etcd: u32,
    narrator: u32,
    gc: u32,
    probe: u32,
    pub(super) kinds: Vec<u32>,
    pub(super) apiservers: Vec<u32>,
    pub(super) controllers: Vec<u32>,
    pub(super) watchers: Vec<u32>,
}

impl Actors {
    pub(super) fn new(sim: &Sim, n: &mut Interner) -> Actors {
        let all = |count: usize, label: &dyn Fn(usize) -> String, n: &mut Interner| {
            (0..count).map(|i| n.intern(&label(i))).collect::<Vec<_>>()
        };
        Actors {
            user: n.intern("user"),
            etcd: n.intern("etcd"),
            narrator: n.intern("say"),
            gc: n.intern("garbage-collector"),
            probe: n.intern("probe"),
            kinds: all(
                sim.config().kinds.len(),
                &|i| Labels::kind(sim, KindId(i as u16)).to_string(),
                n,
            ),
            apiservers: all(
                sim.config().apiservers.len(),
                &|i| Labels::apiserver(sim, ApiserverId(i as u8)).to_string(),
                n,
            ),
            controllers: all(
                sim.config().controllers.len(),
                &|i| Labels::controller(sim, ControllerId(i as u16)).to_string(),
                n,
            ),
            watchers: all(
                sim.reflectors().len(),
                &|i| Labels::watcher(sim, WatcherId(i as u16)),
                n,
            ),
        }
    }
    pub(super) fn actor(&self, a: Actor) -> u32 {
        match a {
            Actor::User => self.user,
            Actor::Etcd => self.etcd,
            Actor::Apiserver(a) => self.apiservers[a.index()],
            Actor::Watcher(w) => self.watchers[w.index()],
            Actor::Controller(c) => self.controllers[c.index()],
            Actor::Narrator => self.narrator,
            Actor::GarbageCollector => self.gc,
            Actor::Probe => self.probe,
        }
    }
}

/// Opening and closing a placeholder while the text is built: characters core's prose never
/// holds (names never reach the text, only their indices do).
const OPEN: char = '\u{e000}';
const CLOSE: char = '\u{e001}';

/// `Labels` that give each name as its placeholder: core's own `describe` then writes the
/// text's template, so it says exactly what the one-line trace says.
pub(super) struct Placeholders {
    kinds: Vec<String>,
    apiservers: Vec<String>,
    controllers: Vec<String>,
    watchers: Vec<String>,
    objects: HashMap<NameId, String>,
    fields: HashMap<BodyRef, String>,
}

impl Placeholders {
    pub(super) fn new(names: &Interner, a: &Actors) -> Placeholders {
        let p = |i: &u32| format!("{OPEN}{i}{CLOSE}");
        Placeholders {
            kinds: a.kinds.iter().map(p).collect(),
            apiservers: a.apiservers.iter().map(p).collect(),
            controllers: a.controllers.iter().map(p).collect(),
            watchers: a.watchers.iter().map(p).collect(),
            objects: names.objects.iter().map(|(id, i)| (*id, p(i))).collect(),
            fields: names.fields.iter().map(|(b, i)| (*b, p(i))).collect(),
        }
    }

    /// The event's one-line text with `{N}` for `names[N]`, and `{{` `}}` for literal braces.
    pub(super) fn text(&self, k: &EventKind) -> String {
        let raw = describe(k, self);
        let mut out = String::with_capacity(raw.len());
        for c in raw.chars() {
            match c {
                '{' => out += "{{",
                '}' => out += "}}",
                OPEN => out.push('{'),
                CLOSE => out.push('}'),
                c => out.push(c),
            }
        }
        out
    }
}

impl Labels for Placeholders {
    fn name(&self, id: NameId) -> &str {
        self.objects.get(&id).map_or("?", String::as_str)
    }
    fn kind(&self, id: KindId) -> &str {
        self.kinds.get(id.index()).map_or("?", String::as_str)
    }
    fn apiserver(&self, id: ApiserverId) -> &str {
        self.apiservers.get(id.index()).map_or("?", String::as_str)
    }
    fn controller(&self, id: ControllerId) -> &str {
        self.controllers.get(id.index()).map_or("?", String::as_str)
    }
    fn watcher(&self, id: WatcherId) -> String {
        self.watchers.get(id.index()).cloned().unwrap_or_default()
    }
    fn fields(&self, body: BodyRef) -> String {
        self.fields.get(&body).cloned().unwrap_or_default()
    }
}

/// A template's text with its names filled in: what `listwatch run --trace` shows.
pub fn render_text(template: &str, names: &[String]) -> Option<String> {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut n = String::new();
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                    n.push(d);
                }
                out += names.get(n.parse::<usize>().ok()?)?;
            }
            '}' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}
