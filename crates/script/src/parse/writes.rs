//! The user's writes on the timeline: `create`, `update`, `status`, `delete`.

use listwatch_core::*;

use super::names::object_name;
use super::table::{row, ActionFn, Row};
use super::Builder;
use crate::cursor::{Cursor, R};
use crate::lexer::Word;

/// The largest spec or status a script writes or expects.
pub(super) const MAX_SPEC: i64 = 1_000_000_000;

pub(super) const ACTIONS: &[Row<ActionFn>] = &[
    row(
        "create",
        "create KIND NAME [spec N]",
        "at 0s create Db web spec 3",
        Builder::create_or_update_input,
    ),
    row(
        "update",
        "update KIND NAME spec N",
        "at 5s update Db web spec 2",
        Builder::create_or_update_input,
    ),
    row(
        "status",
        "status KIND NAME N",
        "every 100ms 50 times status Db web {i}",
        Builder::status_input,
    ),
    row(
        "delete",
        "delete KIND NAME",
        "at 9s delete Pod web-0",
        Builder::delete_input,
    ),
];

impl Builder {
    /// `create KIND NAME [spec N]`, `update KIND NAME spec N`.
    fn create_or_update_input(&self, p: &mut Cursor, aw: &Word) -> R<Input> {
        let kind = self.next_kind(p)?;
        let name = object_name(p)?;
        let given = p.eat("spec");
        let spec = if given {
            p.number("a spec value", MAX_SPEC)?
        } else {
            0
        };
        if aw.text == "create" {
            return Ok(Input::Create { kind, name, spec });
        }
        if !given {
            return Err(p.err_at(aw, "an update needs `spec N`"));
        }
        Ok(Input::Update { kind, name, spec })
    }

    /// `status KIND NAME N`.
    fn status_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let kind = self.next_kind(p)?;
        let name = object_name(p)?;
        let status = p.number("a status value", MAX_SPEC)?;
        Ok(Input::UpdateStatus { kind, name, status })
    }

    /// `delete KIND NAME`.
    fn delete_input(&self, p: &mut Cursor, _: &Word) -> R<Input> {
        let kind = self.next_kind(p)?;
        Ok(Input::Delete {
            kind,
            name: object_name(p)?,
        })
    }
}

/// The object a timeline write names.
pub(super) fn written_name(input: &Input) -> Option<&str> {
    match input {
        Input::Create { name, .. }
        | Input::Update { name, .. }
        | Input::UpdateStatus { name, .. }
        | Input::Delete { name, .. } => Some(name),
        _ => None,
    }
}
