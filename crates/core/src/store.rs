//! An informer's local store (`client-go/tools/cache` `threadSafeMap`) with an owner index, so a
//! reconcile's "my children" is a lookup, not a scan of every object (controller-runtime lists
//! children through a field index the same way).

use std::collections::{hash_map, BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::ops::RangeBounds;

use crate::model::{NameId, Object};

#[derive(Clone, Debug, Default, Hash, PartialEq, Eq)]
pub struct Store {
    objects: OrderedMap<NameId, Object>,
    /// Owner UID -> names of the objects it owns.
    by_owner: BTreeMap<u64, BTreeSet<NameId>>,
    /// Owner UID -> how many of those are not marked for deletion (a reconcile's
    /// `children.alive`, counted without a walk).
    live_by_owner: BTreeMap<u64, u32>,
}

impl Store {
    pub fn get(&self, name: &NameId) -> Option<&Object> {
        self.objects.get(name)
    }

    pub fn contains_key(&self, name: &NameId) -> bool {
        self.objects.contains_key(name)
    }

    pub fn insert(&mut self, name: NameId, o: Object) -> Option<Object> {
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

    pub fn remove(&mut self, name: &NameId) -> Option<Object> {
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
        self.objects.values()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&NameId, &Object)> {
        self.objects.iter()
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
            .filter_map(|n| self.objects.get(n))
    }
}

/// A map whose lookups hash (O(1)) and whose walks go in key order, as a `BTreeMap`'s do: the
/// keys are kept sorted beside the table, and change only when a key comes or goes, so the
/// commonest write of all, an update of an object that exists, touches the table alone. Its
/// `Hash` is a `BTreeMap`'s (the length, then each entry in key order); the hasher is fixed, so
/// nothing depends on a random seed.
#[derive(Clone)]
pub struct OrderedMap<K, V> {
    table: HashMap<K, V, BuildHasherDefault<IdHasher>>,
    keys: BTreeSet<K>,
}

impl<K, V> Default for OrderedMap<K, V> {
    fn default() -> Self {
        OrderedMap {
            table: HashMap::default(),
            keys: BTreeSet::new(),
        }
    }
}

impl<K: Ord + Hash + Copy, V> OrderedMap<K, V> {
    pub fn get(&self, key: &K) -> Option<&V> {
        self.table.get(key)
    }

    pub fn contains_key(&self, key: &K) -> bool {
        self.table.contains_key(key)
    }

    /// The value the key had, as `BTreeMap::insert`.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.table.entry(key) {
            hash_map::Entry::Occupied(mut e) => Some(e.insert(value)),
            hash_map::Entry::Vacant(e) => {
                e.insert(value);
                self.keys.insert(key);
                None
            }
        }
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let old = self.table.remove(key)?;
        self.keys.remove(key);
        Some(old)
    }

    pub fn clear(&mut self) {
        self.table.clear();
        self.keys.clear();
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every entry, in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + '_ {
        self.keys.iter().map(|k| (k, &self.table[k]))
    }

    /// Every value, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// The entries whose keys are in `range`, in key order.
    pub fn range<R: RangeBounds<K>>(
        &self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = (&K, &V)> + '_ {
        self.keys.range(range).map(|k| (k, &self.table[k]))
    }
}

impl<K: Ord + Hash + Copy, V> FromIterator<(K, V)> for OrderedMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut m = OrderedMap::default();
        iter.into_iter().for_each(|(k, v)| {
            m.insert(k, v);
        });
        m
    }
}

impl<K: Ord + Hash + Copy, V> std::ops::Index<&K> for OrderedMap<K, V> {
    type Output = V;
    fn index(&self, key: &K) -> &V {
        &self.table[key]
    }
}

impl<K: Ord + Hash + Copy, V: Hash> Hash for OrderedMap<K, V> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        self.iter().for_each(|entry| entry.hash(state));
    }
}

impl<K: Ord + Hash + Copy, V: PartialEq> PartialEq for OrderedMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.table == other.table
    }
}

impl<K: Ord + Hash + Copy, V: Eq> Eq for OrderedMap<K, V> {}

impl<K: Ord + Hash + Copy + std::fmt::Debug, V: std::fmt::Debug> std::fmt::Debug
    for OrderedMap<K, V>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// FxHash's step (rustc's hasher): a rotate, a xor and a multiply per word, which is all keys
/// made of small ids need.
#[derive(Clone, Copy, Default)]
pub struct IdHasher(u64);

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.add(b as u64));
    }
    fn write_u8(&mut self, n: u8) {
        self.add(n as u64)
    }
    fn write_u16(&mut self, n: u16) {
        self.add(n as u64)
    }
    fn write_u32(&mut self, n: u32) {
        self.add(n as u64)
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n)
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64)
    }
}

impl FromIterator<(NameId, Object)> for Store {
    fn from_iter<I: IntoIterator<Item = (NameId, Object)>>(iter: I) -> Self {
        let mut s = Store::default();
        for (n, o) in iter {
            s.insert(n, o);
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

    #[test]
    fn the_owner_index_follows_inserts_replacements_and_removals() {
        let mut s = Store::default();
        s.insert(NameId(1), obj(1, Some(7)));
        s.insert(NameId(2), obj(2, Some(7)));
        s.insert(NameId(3), obj(3, Some(8)));
        assert_eq!(s.owned_by(7).count(), 2);
        s.insert(NameId(2), obj(2, Some(8)));
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
        s.insert(NameId(1), marked);
        s.insert(NameId(4), obj(4, Some(7)));
        assert_eq!((s.owned_count(7), s.live_owned_count(7)), (2, 1));
        assert_eq!((s.owned_count(8), s.live_owned_count(8)), (1, 1));
        s.remove(&NameId(4));
        assert_eq!((s.owned_count(7), s.live_owned_count(7)), (1, 0));
        s.clear();
        assert_eq!(s.owned_by(7).count(), 0);
        assert_eq!((s.owned_count(8), s.live_owned_count(8)), (0, 0));
    }
}
