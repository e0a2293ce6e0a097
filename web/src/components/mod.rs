//! One component per part of the page.

pub mod controls;
pub mod editor;
pub mod explore;
pub mod export;
pub mod faults;
pub mod objects;
pub mod panels;
pub mod system;
pub mod timeline;

use listwatch_core::TimeMs;

/// `12.345s`: the clock's format.
pub fn clock(ms: TimeMs) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}
