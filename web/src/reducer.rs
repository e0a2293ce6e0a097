//! The yew glue of the page's state: `State` as yew's `Reducible` (its reducer is the plain
//! `State::apply`, tested natively) and `Latest`, the handle of the state last rendered.

use std::cell::RefCell;
use std::rc::Rc;

use yew::{Reducible, UseReducerHandle};

use crate::state::{Action, Ptr, State};

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        self.apply(action)
    }
}

/// The state as of the last render, for callbacks that read it only when they run (copy a link,
/// export, the keyboard): handing them this rather than the state keeps their components from
/// re-rendering on every tick. Equal only to itself.
#[derive(Clone, Default, PartialEq)]
pub struct Latest(Ptr<RefCell<Option<UseReducerHandle<State>>>>);

impl Latest {
    pub fn set(&self, state: &UseReducerHandle<State>) {
        *self.0.borrow_mut() = Some(state.clone());
    }
    pub fn get(&self) -> Option<UseReducerHandle<State>> {
        self.0.borrow().clone()
    }
}
