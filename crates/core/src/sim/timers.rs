//! The scheduled work: actions due at a moment, run in order of (time, sequence number).
//!
//! The heap orders small entries (time, sequence, slot) and the actions wait in slots beside
//! it: an action carries an object or a list, and a heap that moved whole actions on every push
//! and pop spent a sixth of the explorer's time copying them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::{Hash, Hasher};

use super::Action;
use crate::model::TimeMs;
use crate::trace::EventId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    at: TimeMs,
    seq: u64,
    slot: u32,
}

#[derive(Debug, Default)]
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<Entry>>,
    /// The actions, by slot; `None` for a free slot.
    slots: Vec<Option<(EventId, Action)>>,
    free: Vec<u32>,
}

impl Clone for Timers {
    fn clone(&self) -> Timers {
        // With room for what a fork schedules next: a clone's vectors are exactly full, and its
        // first push would copy each into a larger one.
        fn roomy<T: Clone>(v: &[T]) -> Vec<T> {
            let mut copy = Vec::with_capacity(v.len() + v.len() / 2 + 8);
            copy.extend_from_slice(v);
            copy
        }
        Timers {
            // A heap's slice is in heap order already: rebuilding it moves nothing.
            heap: BinaryHeap::from(roomy(self.heap.as_slice())),
            slots: roomy(&self.slots),
            free: roomy(&self.free),
        }
    }
}

impl Timers {
    pub fn push(&mut self, at: TimeMs, seq: u64, cause: EventId, action: Action) {
        let waiting = Some((cause, action));
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = waiting;
                slot
            }
            None => {
                self.slots.push(waiting);
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Reverse(Entry { at, seq, slot }));
    }

    /// When the next action is due.
    pub fn next_at(&self) -> Option<TimeMs> {
        self.heap.peek().map(|e| e.0.at)
    }

    /// The next action, if it is due at or before `until`: its time, cause and action.
    pub fn pop_due(&mut self, until: TimeMs) -> Option<(TimeMs, EventId, Action)> {
        if self.next_at()? > until {
            return None;
        }
        let Reverse(e) = self.heap.pop()?;
        let (cause, action) = self.slots[e.slot as usize]
            .take()
            .expect("a heap entry's slot holds its action");
        self.free.push(e.slot);
        Some((e.at, cause, action))
    }

    /// Every action waiting, in no particular order.
    pub fn pending(&self) -> impl Iterator<Item = &Action> {
        self.slots.iter().flatten().map(|(_, action)| action)
    }

    /// Hashes the pending work in the order it will run: times and actions, not the sequence
    /// numbers or slots, which differ between equal states reached by different paths.
    pub fn hash_pending<H: Hasher>(&self, h: &mut H) {
        let mut pending: Vec<&Entry> = self.heap.iter().map(|Reverse(e)| e).collect();
        pending.sort();
        for e in pending {
            e.at.hash(h);
            if let Some((_, action)) = &self.slots[e.slot as usize] {
                action.hash(h);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::EtcdAction;

    #[test]
    fn actions_come_out_by_time_then_sequence_and_slots_are_reused() {
        let mut t = Timers::default();
        t.push(TimeMs(20), 1, 0, Action::Etcd(EtcdAction::CompactTick));
        t.push(TimeMs(10), 3, 1, Action::Etcd(EtcdAction::CompactTick));
        t.push(TimeMs(10), 2, 2, Action::Etcd(EtcdAction::CompactTick));
        assert_eq!(t.pop_due(TimeMs(5)).map(|x| x.1), None, "nothing due yet");
        let order: Vec<_> = std::iter::from_fn(|| t.pop_due(TimeMs(15)).map(|x| x.1)).collect();
        assert_eq!(order, [2, 1], "same time: by sequence");
        t.push(TimeMs(30), 4, 3, Action::Etcd(EtcdAction::CompactTick));
        assert_eq!(t.slots.len(), 3, "a freed slot is reused");
        assert_eq!(t.next_at(), Some(TimeMs(20)));
    }
}
