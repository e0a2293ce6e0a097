//! Minimisation: a failing schedule's unneeded faults dropped, its windows shortened and its
//! crash points moved earlier (each on a fork) while it still fails. Replays are a pure function
//! of the schedule, so every thread may remember and reuse their answers.

use std::collections::HashMap;

use super::faults::Fault;
use super::{all_up, broken_words, history, judged, replay, Job, Judged, Minimal, Runner};
use crate::sim::Sim;

#[derive(Default)]
pub(super) struct Replays {
    fails: HashMap<Vec<Fault>, bool>,
    /// An estimate of the memory `fails` takes (see [`replay_bytes`]).
    bytes: usize,
}

/// The memory the remembered replays may take, about (what is left of it unused once full).
const REPLAYS_BYTES: usize = 32 << 20;

/// About the memory one remembered replay takes: its faults (a hold's object name included),
/// the entry, and as much again for the hash table's empty slots.
fn replay_bytes(faults: &[Fault]) -> usize {
    let names: usize = faults.iter().map(Fault::heap_bytes).sum();
    2 * (std::mem::size_of::<(Vec<Fault>, bool)>() + 1) + std::mem::size_of_val(faults) + names
}

/// A failing run, settled as it was judged, and whether it broke at the end the script gives
/// (see [`Judged::Broke`]).
type Failed = (Sim, bool);

impl Runner {
    /// Does this schedule fail (expectations or ESR, with every fault effective, once settled)
    /// when replayed from scratch (`scratch`) or forked from the fault-free run? The search
    /// minimises its own judged fork (debug builds replay it from scratch too, the check of the
    /// fork), and forks the smaller
    /// ones it tries: a fork runs as a fresh run of the extended timeline does
    /// (`Sim::schedule_input`), without running the fault-free part again.
    pub(super) fn fails(&self, faults: &[Fault], scratch: bool) -> Option<Failed> {
        let job = Job {
            index: u64::MAX,
            faults: faults.to_vec(),
        };
        let fork = (!scratch).then(|| self.fork(&job)).flatten();
        let (mut sim, past) = match fork {
            Some(fork) => {
                let mut sim = fork.sim;
                sim.run();
                let mut past = fork.past;
                let events = sim.trace().range(fork.past_len..);
                history(&sim, events, &self.0.expects, &mut past);
                (sim, past)
            }
            None => {
                let sim = replay(&self.0.config, faults).ok()?;
                let mut past = vec![0; self.0.expects.len()];
                history(&sim, sim.trace().iter(), &self.0.expects, &mut past);
                (sim, past)
            }
        };
        let at_end = match judged(&mut sim, &self.0.expects, &past) {
            Judged::Broke { at_end } => at_end,
            Judged::Pass | Judged::Unsettled => return None,
        };
        (all_up(&sim) && faults.iter().all(|f| f.had_effect(&sim))).then_some((sim, at_end))
    }

    /// Does this schedule fail, as [`Runner::fails`] says (forked)? `None`: no; `Some(run)`:
    /// yes, with the run when it was made now (not when the answer was remembered).
    pub(super) fn fails_remembered(&self, faults: &[Fault]) -> Option<Option<Failed>> {
        let known = self.replays().fails.get(faults).copied();
        if let Some(fails) = known {
            return fails.then_some(None);
        }
        let run = self.fails(faults, false);
        self.remember(faults, run.is_some());
        run.map(Some)
    }

    fn replays(&self) -> std::sync::MutexGuard<'_, Replays> {
        self.0.replays.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn remember(&self, faults: &[Fault], fails: bool) {
        let mut replays = self.replays();
        let bytes = replay_bytes(faults);
        if replays.bytes + bytes <= REPLAYS_BYTES && !replays.fails.contains_key(faults) {
            replays.fails.insert(faults.to_vec(), fails);
            replays.bytes += bytes;
        }
    }

    /// Replays a failing schedule from scratch, drops every fault that is not needed, shortens
    /// windows and moves crash points earlier while it still fails (forking each). The last
    /// failing run is the one reported (forked again only if its answer was remembered).
    pub fn minimise(&self, faults: &[Fault]) -> Option<Minimal> {
        let run = self.fails(faults, true);
        self.minimise_run(faults, run)
    }

    /// [`Runner::minimise`] of a schedule whose failing run is `run` (`None`: it passed), as
    /// [`Runner::fails`] gives it: the search's own judged fork, which is not run again.
    pub(super) fn minimise_run(&self, faults: &[Fault], run: Option<Failed>) -> Option<Minimal> {
        let mut needed = faults.to_vec();
        let mut last = run;
        self.remember(&needed, last.is_some());
        last.as_ref()?;
        let mut i = 0;
        while needed.len() > 1 && i < needed.len() {
            let mut without = needed.clone();
            without.remove(i);
            match self.fails_remembered(&without) {
                None => i += 1,
                Some(run) => (needed, last) = (without, run),
            }
        }
        for i in 0..needed.len() {
            for smaller in needed[i].shrinks() {
                let mut t = needed.clone();
                t[i] = smaller;
                if let Some(run) = self.fails_remembered(&t) {
                    (needed, last) = (t, run);
                    break;
                }
            }
        }
        let (sim, at_end) = match last {
            Some(run) => run,
            None => self.fails(&needed, false)?,
        };
        let broken = broken_words(&sim, &self.0.expects, at_end);
        let effects = needed.iter().map(|f| f.effect(&sim)).collect();
        Some((needed, broken, effects))
    }
}
