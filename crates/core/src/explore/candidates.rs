//! The stream of candidate single faults: each type's source, visited round-robin so a budget
//! of N covers every pattern before it goes deep into one, and the numbering of pairs.

use super::faults::{sources, Fault, StaleGen, FAULT_TYPES};
use super::MAX_SINGLES;
use crate::sim::Sim;

/// A candidate source: a list, or the stale pairs generated on demand.
#[derive(Clone, Debug)]
pub enum Source {
    List(Vec<Fault>, usize),
    Stale(Vec<StaleGen>, usize),
}

impl Source {
    fn count(&self) -> u64 {
        match self {
            Source::List(v, _) => v.len() as u64,
            Source::Stale(g, _) => g.iter().map(StaleGen::count).sum(),
        }
    }

    fn next(&mut self) -> Option<Fault> {
        match self {
            Source::List(v, i) => {
                let f = v.get(*i).cloned();
                *i += 1;
                f
            }
            Source::Stale(gens, turn) => {
                for _ in 0..gens.len() {
                    let k = *turn % gens.len();
                    *turn += 1;
                    if let Some(f) = gens[k].next() {
                        return Some(f);
                    }
                }
                None
            }
        }
    }
}

/// The candidate singles, round-robin over the fault types.
#[derive(Clone, Debug)]
pub struct Candidates {
    sources: Vec<Source>,
    turn: usize,
    produced: u64,
    total: u64,
    pub(super) by_type: [u64; FAULT_TYPES.len()],
}

impl Candidates {
    /// Candidates read off a fault-free run.
    /// The candidates read off the fault-free run `sim`, against every controller or only
    /// `only` (the others are the cluster's helpers).
    pub fn new(sim: &Sim, only: Option<crate::model::ControllerId>) -> Candidates {
        let sources = sources(sim, only);
        let mut by_type = [0; FAULT_TYPES.len()];
        for (i, s) in sources.iter().enumerate() {
            by_type[i] = s.count();
        }
        let total = by_type.iter().sum::<u64>().min(MAX_SINGLES);
        Candidates {
            sources,
            turn: 0,
            produced: 0,
            total,
            by_type,
        }
    }

    /// How many singles there are (capped).
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

impl Iterator for Candidates {
    type Item = Fault;
    fn next(&mut self) -> Option<Fault> {
        if self.produced >= self.total {
            return None;
        }
        let n = self.sources.len();
        for _ in 0..n {
            let k = self.turn % n;
            self.turn += 1;
            if let Some(f) = self.sources[k].next() {
                self.produced += 1;
                return Some(f);
            }
        }
        None
    }
}

/// The `q`-th pair `(i, j)`, `i < j`, in the order (0,1), (0,2), (1,2), (0,3), ...: pairs among
/// the first singles come first.
pub(super) fn pair(q: u64) -> (u64, u64) {
    let j = ((((8 * q + 1) as f64).sqrt() + 1.0) / 2.0).floor() as u64;
    let j = (j.saturating_sub(1)..=j + 1)
        .rev()
        .find(|&j| j * j.saturating_sub(1) / 2 <= q)
        .unwrap_or(1)
        .max(1);
    (q - j * (j - 1) / 2, j)
}

/// Candidate faults read off a fault-free run, in the order the explorer tries them (capped).
pub fn candidates(sim: &Sim) -> Vec<Fault> {
    Candidates::new(sim, None).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::faults::{CrashBetweenWrites, Disconnect, Stale};
    use crate::model::{ApiserverId, ControllerId, DurationMs, TimeMs};

    fn disconnect(at_ms: TimeMs) -> Fault {
        Fault::Disconnect(Disconnect {
            controller: ControllerId(0),
            at_ms,
            duration_ms: DurationMs(5_000),
            after_writes: None,
        })
    }

    fn crash(at_ms: TimeMs) -> Fault {
        Fault::CrashBetweenWrites(CrashBetweenWrites {
            controller: ControllerId(0),
            at_ms,
            after_writes: 1,
        })
    }

    #[test]
    fn stale_pairs_go_diagonally() {
        let mut g = StaleGen {
            controller: ControllerId(0),
            stale: ApiserverId(1),
            pauses: vec![(TimeMs(10), 0), (TimeMs(20), 1)],
            restarts: [15, 25, 35].map(TimeMs).to_vec(),
            d: 0,
            p: 0,
            max_d: 3,
        };
        assert_eq!(g.count(), 5);
        let got: Vec<(u64, u64)> = std::iter::from_fn(|| g.next())
            .map(|f| match f {
                Fault::Stale(Stale {
                    pause_ms,
                    restart_ms,
                    ..
                }) => (pause_ms.ms(), restart_ms.ms()),
                other => panic!("a stale generator made {other:?}"),
            })
            .collect();
        assert_eq!(got, [(10, 15), (20, 25), (10, 25), (20, 35), (10, 35)]);
    }

    #[test]
    fn types_take_turns_and_the_cap_holds() {
        let mut c = Candidates {
            sources: vec![
                Source::List(
                    vec![crash(TimeMs(1)), crash(TimeMs(2)), crash(TimeMs(3))],
                    0,
                ),
                Source::List(vec![], 0),
                Source::Stale(vec![], 0),
                Source::List(vec![], 0),
                Source::List(vec![disconnect(TimeMs(1))], 0),
            ],
            turn: 0,
            produced: 0,
            total: 3,
            by_type: [3, 0, 0, 0, 1],
        };
        let got: Vec<Fault> = c.by_ref().collect();
        assert_eq!(
            got,
            [crash(TimeMs(1)), disconnect(TimeMs(1)), crash(TimeMs(2))]
        );
    }

    #[test]
    fn pairs_are_numbered_in_order() {
        let mut q = 0u64;
        for j in 1..2_000u64 {
            for i in 0..j {
                assert_eq!(pair(q), (i, j));
                q += 1;
            }
        }
    }
}
