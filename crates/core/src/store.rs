//! An informer's local store (`client-go/tools/cache` `threadSafeMap`) with an owner index, so a
//! reconcile's "my children" is a lookup, not a scan of every object (controller-runtime lists
//! children through a field index the same way).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::model::{KindId, NameId, Object};

#[derive(Clone, Debug, Default, Hash, PartialEq, Eq)]
pub struct Store {
    /// Shared with the watch events they came in (`Change::object`).
    objects: NameMap<Arc<Object>>,
    /// Owner UID -> names of the objects it owns.
    by_owner: BTreeMap<u64, BTreeSet<NameId>>,
    /// Owner UID -> how many of those are not marked for deletion (a reconcile's
    /// `children.alive`, counted without a walk).
    live_by_owner: BTreeMap<u64, u32>,
}

impl Store {
    pub fn get(&self, name: &NameId) -> Option<&Object> {
        self.objects.get(name).map(|o| &**o)
    }

    pub fn contains_key(&self, name: &NameId) -> bool {
        self.objects.contains_key(name)
    }

    pub fn insert(&mut self, name: NameId, o: Arc<Object>) -> Option<Arc<Object>> {
        let (owner, live) = (o.owner, o.deletion_ms.is_none());
        let old = self.objects.insert(name, o);
        if let Some(old) = &old {
            self.unindex(old);
        }
        if let Some(owner) = owner {
            self.by_owner.entry(owner.uid).or_default().insert(name);
            if live {
                *self.live_by_owner.entry(owner.uid).or_default() += 1;
            }
        }
        old
    }

    pub fn remove(&mut self, name: &NameId) -> Option<Arc<Object>> {
        let old = self.objects.remove(name);
        if let Some(old) = &old {
            self.unindex(old);
        }
        old
    }

    fn unindex(&mut self, o: &Object) {
        if let Some(owner) = o.owner {
            if let Some(set) = self.by_owner.get_mut(&owner.uid) {
                set.remove(&o.name);
                if set.is_empty() {
                    self.by_owner.remove(&owner.uid);
                }
            }
            if o.deletion_ms.is_none() {
                if let Some(n) = self.live_by_owner.get_mut(&owner.uid) {
                    *n -= 1;
                    if *n == 0 {
                        self.live_by_owner.remove(&owner.uid);
                    }
                }
            }
        }
    }

    pub fn clear(&mut self) {
        self.objects.clear();
        self.by_owner.clear();
        self.live_by_owner.clear();
    }

    pub fn values(&self) -> impl Iterator<Item = &Object> {
        self.objects.values().map(|o| &**o)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&NameId, &Object)> {
        self.objects.iter().map(|(name, o)| (name, &**o))
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// How many objects the object with this UID owns, in O(log n).
    pub fn owned_count(&self, uid: u64) -> usize {
        self.by_owner.get(&uid).map_or(0, |s| s.len())
    }

    /// How many of those are not marked for deletion, in O(log n).
    pub fn live_owned_count(&self, uid: u64) -> usize {
        self.live_by_owner.get(&uid).copied().unwrap_or(0) as usize
    }

    /// The objects owned by the object with this UID, in name order.
    pub fn owned_by(&self, uid: u64) -> impl Iterator<Item = &Object> {
        self.by_owner
            .get(&uid)
            .into_iter()
            .flatten()
            .filter_map(|n| self.get(n))
    }
}

/// A map from names to values, for the maps every event touches (etcd's objects, the watch
/// caches' and informers' stores, ESR's states). Names are interned, so a name is an index:
/// `slots[name]` is one more than the position of the name's entry in `entries` (0: absent), and
/// a lookup is two array reads, with no hashing. Entries sit together in the order they came, so
/// writes to objects created together touch neighbouring memory (a hash table scatters them,
/// and each lookup missed the cache). Walks go in name order, as a `BTreeMap`'s, by the slots;
/// `slots` ends at the largest name held, so a walk costs at most that many steps, which for the
/// dense names of a run is a small multiple of the entries. Its `Hash` is a `BTreeMap`'s (the
/// length, then each entry in name order).
#[derive(Clone)]
pub struct NameMap<V> {
    slots: Vec<u32>,
    entries: Vec<(NameId, V)>,
}

impl<V> Default for NameMap<V> {
    fn default() -> Self {
        NameMap {
            slots: Vec::new(),
            entries: Vec::new(),
        }
    }
}

impl<V> NameMap<V> {
    /// Where the name's entry is in `entries`.
    fn position(&self, name: NameId) -> Option<usize> {
        match self.slots.get(name.index()) {
            Some(&slot) if slot != 0 => Some(slot as usize - 1),
            _ => None,
        }
    }

    pub fn get(&self, name: &NameId) -> Option<&V> {
        self.position(*name).map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, name: &NameId) -> Option<&mut V> {
        self.position(*name).map(|i| &mut self.entries[i].1)
    }

    pub fn contains_key(&self, name: &NameId) -> bool {
        self.position(*name).is_some()
    }

    /// The value the name had, as `BTreeMap::insert`.
    pub fn insert(&mut self, name: NameId, value: V) -> Option<V> {
        if let Some(i) = self.position(name) {
            return Some(std::mem::replace(&mut self.entries[i].1, value));
        }
        if name.index() >= self.slots.len() {
            self.slots.resize(name.index() + 1, 0);
        }
        self.entries.push((name, value));
        self.slots[name.index()] = self.entries.len() as u32;
        None
    }

    /// The entry, as `BTreeMap::entry(name).or_insert_with(value)`.
    pub fn get_or_insert_with(&mut self, name: NameId, value: impl FnOnce() -> V) -> &mut V {
        let i = match self.position(name) {
            Some(i) => i,
            None => {
                self.insert(name, value());
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }

    pub fn remove(&mut self, name: &NameId) -> Option<V> {
        let i = self.position(*name)?;
        self.slots[name.index()] = 0;
        let (_, old) = self.entries.swap_remove(i);
        if let Some(&(moved, _)) = self.entries.get(i) {
            self.slots[moved.index()] = i as u32 + 1;
        }
        // The slots end at the largest name held, which bounds a walk.
        while self.slots.last() == Some(&0) {
            self.slots.pop();
        }
        Some(old)
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry, in name order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&NameId, &V)> + '_ {
        (self.slots.iter().filter(|&&slot| slot != 0)).map(|&slot| {
            let (name, value) = &self.entries[slot as usize - 1];
            (name, value)
        })
    }

    /// Every value, in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }
}

impl<V> FromIterator<(NameId, V)> for NameMap<V> {
    fn from_iter<I: IntoIterator<Item = (NameId, V)>>(iter: I) -> Self {
        let mut m = NameMap::default();
        iter.into_iter().for_each(|(k, v)| {
            m.insert(k, v);
        });
        m
    }
}

impl<V> std::ops::Index<&NameId> for NameMap<V> {
    type Output = V;
    fn index(&self, name: &NameId) -> &V {
        self.get(name).expect("a name the map holds")
    }
}

impl<V: Hash> Hash for NameMap<V> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        self.iter().for_each(|entry| entry.hash(state));
    }
}

impl<V: PartialEq> PartialEq for NameMap<V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<V: Eq> Eq for NameMap<V> {}

impl<V: std::fmt::Debug> std::fmt::Debug for NameMap<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A `NameMap` per kind: etcd's objects, keyed by (kind, name) and walked in that order (etcd's
/// key order, each kind a key range). Its `Hash` is a `BTreeMap`'s keyed by (kind, name).
#[derive(Clone, PartialEq, Eq)]
pub struct KindNameMap<V> {
    kinds: Vec<NameMap<V>>,
}

impl<V> Default for KindNameMap<V> {
    fn default() -> Self {
        KindNameMap { kinds: Vec::new() }
    }
}

impl<V> KindNameMap<V> {
    pub fn get(&self, &(kind, name): &(KindId, NameId)) -> Option<&V> {
        self.kinds.get(kind.index())?.get(&name)
    }

    pub fn contains_key(&self, key: &(KindId, NameId)) -> bool {
        self.get(key).is_some()
    }

    /// The value the key had, as `BTreeMap::insert`.
    pub fn insert(&mut self, (kind, name): (KindId, NameId), value: V) -> Option<V> {
        if kind.index() >= self.kinds.len() {
            self.kinds.resize_with(kind.index() + 1, NameMap::default);
        }
        self.kinds[kind.index()].insert(name, value)
    }

    pub fn remove(&mut self, &(kind, name): &(KindId, NameId)) -> Option<V> {
        self.kinds.get_mut(kind.index())?.remove(&name)
    }

    pub fn len(&self) -> usize {
        self.kinds.iter().map(NameMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.iter().all(NameMap::is_empty)
    }

    /// The entries of one kind, in name order.
    pub fn of_kind(&self, kind: KindId) -> impl DoubleEndedIterator<Item = (&NameId, &V)> + '_ {
        self.kinds
            .get(kind.index())
            .into_iter()
            .flat_map(NameMap::iter)
    }

    /// Every entry, in (kind, name) order.
    pub fn iter(&self) -> impl Iterator<Item = ((KindId, NameId), &V)> + '_ {
        (self.kinds.iter().enumerate()).flat_map(|(kind, map)| {
            let kind = KindId(kind as u16);
            map.iter().map(move |(&name, v)| ((kind, name), v))
        })
    }

    /// Every value, in (kind, name) order.
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.kinds.iter().flat_map(NameMap::values)
    }
}

impl<V: Hash> Hash for KindNameMap<V> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        self.iter().for_each(|entry| entry.hash(state));
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for KindNameMap<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl FromIterator<(NameId, Object)> for Store {
    fn from_iter<I: IntoIterator<Item = (NameId, Object)>>(iter: I) -> Self {
        let mut s = Store::default();
        for (n, o) in iter {
            s.insert(n, Arc::new(o));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{KindId, Owner};

    fn obj(name: u32, owner: Option<u64>) -> Object {
        let mut o = Object::fixture(KindId(0), NameId(name), name as u64 + 100, 1);
        o.owner = owner.map(|uid| Owner {
            kind: KindId(0),
            name: NameId(0),
            uid,
        });
        o
    }

    fn hash_of(value: &impl Hash) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        value.hash(&mut h);
        h.finish()
    }

    /// The maps answer, walk and hash as the `BTreeMap`s they replace, under any sequence of
    /// inserts and removes (removes move an entry into the hole, so their order is exercised),
    /// and an emptied map holds no slots.
    #[test]
    fn name_maps_answer_walk_and_hash_as_btree_maps() {
        let mut rng = crate::model::Rng::new(7);
        let (mut map, mut model) = (NameMap::default(), BTreeMap::new());
        let (mut by_kind, mut by_kind_model) = (KindNameMap::default(), BTreeMap::new());
        for step in 0..20_000u32 {
            let name = NameId(rng.below(300) as u32);
            let key = (KindId(rng.below(3) as u16), name);
            if rng.below(3) == 0 {
                assert_eq!(map.remove(&name), model.remove(&name));
                assert_eq!(by_kind.remove(&key), by_kind_model.remove(&key));
            } else {
                assert_eq!(map.insert(name, step), model.insert(name, step));
                assert_eq!(by_kind.insert(key, step), by_kind_model.insert(key, step));
            }
            assert_eq!(map.get(&name), model.get(&name));
            assert_eq!(by_kind.get(&key), by_kind_model.get(&key));
            if step % 101 == 0 {
                assert!(map.iter().eq(model.iter()), "name order");
                assert!(map.iter().rev().eq(model.iter().rev()));
                assert_eq!((map.len(), hash_of(&map)), (model.len(), hash_of(&model)));
                assert!(by_kind
                    .iter()
                    .eq(by_kind_model.iter().map(|(&k, v)| (k, v))));
                let kind_1 = by_kind_model.range((KindId(1), NameId(0))..(KindId(2), NameId(0)));
                assert!(by_kind
                    .of_kind(KindId(1))
                    .eq(kind_1.map(|((_, n), v)| (n, v))));
                assert_eq!(
                    (by_kind.len(), hash_of(&by_kind)),
                    (by_kind_model.len(), hash_of(&by_kind_model))
                );
                assert_eq!(map, model.iter().map(|(&k, &v)| (k, v)).collect());
            }
        }
        for name in model.keys() {
            map.remove(name);
        }
        assert!(map.is_empty() && map.slots.is_empty() && map.iter().next().is_none());
    }

    #[test]
    fn the_owner_index_follows_inserts_replacements_and_removals() {
        let mut s = Store::default();
        s.insert(NameId(1), Arc::new(obj(1, Some(7))));
        s.insert(NameId(2), Arc::new(obj(2, Some(7))));
        s.insert(NameId(3), Arc::new(obj(3, Some(8))));
        assert_eq!(s.owned_by(7).count(), 2);
        s.insert(NameId(2), Arc::new(obj(2, Some(8))));
        assert_eq!(s.owned_by(7).count(), 1);
        assert_eq!(s.owned_by(8).count(), 2);
        s.remove(&NameId(3));
        assert_eq!(
            s.owned_by(8).map(|o| o.name).collect::<Vec<_>>(),
            vec![NameId(2)]
        );
        // The counts follow a mark for deletion, and agree with a walk.
        let mut marked = obj(1, Some(7));
        marked.deletion_ms = Some(crate::model::TimeMs(1));
        s.insert(NameId(1), Arc::new(marked));
        s.insert(NameId(4), Arc::new(obj(4, Some(7))));
        assert_eq!((s.owned_count(7), s.live_owned_count(7)), (2, 1));
        assert_eq!((s.owned_count(8), s.live_owned_count(8)), (1, 1));
        s.remove(&NameId(4));
        assert_eq!((s.owned_count(7), s.live_owned_count(7)), (1, 0));
        s.clear();
        assert_eq!(s.owned_by(7).count(), 0);
        assert_eq!((s.owned_count(8), s.live_owned_count(8)), (0, 0));
    }
}
