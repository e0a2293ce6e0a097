//! listwatch-core: a deterministic, sans-IO simulation of Kubernetes list-then-watch.
//!
//! Inputs go in (`Sim::handle_input`), virtual time is passed in (`Sim::handle_timeout`), and the
//! output is a trace of every state change with its cause. No clock, no IO, no threads; all
//! randomness comes from the configured seed.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod cache;
pub mod config;
pub mod esr;
pub mod model;
pub mod object;
pub mod order;
pub mod program;
pub mod queue;
pub mod reconcile;
pub mod sim;
pub mod store;
pub mod trace;
pub mod validation;

pub use config::*;
pub use model::*;
pub use sim::{Sim, Stop, CACHE_RELIST_MS};
pub use trace::*;
pub mod explore;
pub mod invariants;
pub mod verdict;
pub mod view;
