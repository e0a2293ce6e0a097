//! Expectations: `expect ...` lines are kept as written and read once every declaration is
//! known (`resolve.rs`); here what they say of the run's end, of its objects, of its events
//! (`message`) and of what a controller saw, got or sent. Probes' are in `probes.rs`, counts'
//! in `counts.rs`.

use listwatch_core::verdict::{Cmp, Expect, Fact, Field, ObjectCount as Counted, ObjectFact};
use listwatch_core::FieldValue;

use super::table::{row, statement, ExpectationFn, Head, Row, Statement, EXPECTATION_WORDS};
use super::writes::MAX_SPEC;
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::lexer::Word;

pub(super) const STATEMENTS: &[Row<Statement>] = &[statement(
    "expect",
    "expect EXPECTATION",
    "expect esr",
    Builder::expect_statement,
)];

pub(super) const EXPECTATIONS: &[Row<ExpectationFn>] = &[
    row(
        "esr",
        "expect esr [CONTROLLER]",
        "expect esr",
        Builder::esr_expectation,
    ),
    row(
        "final",
        "expect final KIND NAME spec | status | spec.FIELD | status.FIELD | finalizers | owners | generation CMP V | has-label K[=V] | lacks-label K[=V]",
        "expect final Db web spec == 3",
        Builder::final_expectation,
    ),
    row(
        "exists",
        "expect exists KIND NAME",
        "expect exists Db web",
        Builder::exists_expectation,
    ),
    row(
        "absent",
        "expect absent KIND NAME",
        "expect absent Pod b",
        Builder::exists_expectation,
    ),
    row(
        "events",
        "expect events [NAME] Normal | Warning REASON CMP N",
        "expect events web Warning ScaleFailed >= 1",
        Builder::events_expectation,
    ),
    row(
        "message",
        "expect message \"TEXT\" [CMP N] [by TIME]",
        "expect message \"the object has been modified\" >= 3",
        Builder::message_expectation,
    ),
];

/// The comparisons of an expectation.
pub(super) const COMPARISONS: &[&str] = &["==", "=", "!=", "<", "<=", ">", ">="];

impl Builder {
    /// Kept as written, read once every declaration is known.
    fn expect_statement(&mut self, p: &mut Cursor, head: Head) -> R<()> {
        self.pending_expects
            .push((p.line, head.text.to_string(), p.words.to_vec()));
        Ok(())
    }

    /// `expect esr [CONTROLLER]`.
    fn esr_expectation(&self, p: &mut Cursor, _: &Word) -> R<Expect> {
        let controller = match p.peek() {
            Some(c) => {
                p.pos += 1;
                Some(self.controller(p, c)?)
            }
            None => None,
        };
        Ok(Expect::Esr { controller })
    }

    /// `expect final KIND NAME spec|status CMP N`, and what an object holds beyond them.
    fn final_expectation(&self, p: &mut Cursor, _: &Word) -> R<Expect> {
        let kind = self.next_kind(p)?;
        let name = self.object_name_of(p, kind)?;
        let f = p.next("`spec` or `status`")?;
        let count = Some;
        let object = match f.text.as_str() {
            "spec" | "status" => None,
            "finalizers" => count(Counted::Finalizers),
            "owners" => count(Counted::Owners),
            "generation" => count(Counted::Generation),
            "has-label" | "lacks-label" => {
                let w = p.next("a label, `KEY` or `KEY=VALUE`")?;
                let (key, value) = match w.text.split_once('=') {
                    Some((k, v)) => (k.to_string(), Some(v.to_string())),
                    None => (w.text.clone(), None),
                };
                p.done()?;
                let negated = f.text == "lacks-label";
                let fact = ObjectFact::HasLabel {
                    key,
                    value,
                    negated,
                };
                return Ok(Expect::Object { kind, name, fact });
            }
            t if t.starts_with("spec.") || t.starts_with("status.") => {
                let status = t.starts_with("status.");
                let path = t.split_once('.').map_or("", |x| x.1).to_string();
                let cmp = cmp(p)?;
                let v = p.next("a value: a whole number, \"text\" or null")?;
                let text = v.quoted || v.text == "null";
                if text && !matches!(cmp, Cmp::Eq | Cmp::Ne) {
                    return Err(p.err_at(v, "text and null compare only with `==` and `!=`"));
                }
                let value = if v.quoted {
                    Some(FieldValue::Str(v.text.clone()))
                } else if v.text == "null" {
                    None
                } else {
                    p.pos -= 1;
                    Some(FieldValue::Int(p.number("a value", MAX_SPEC)?))
                };
                p.done()?;
                let fact = ObjectFact::Field {
                    status,
                    path,
                    cmp,
                    value,
                };
                return Ok(Expect::Object { kind, name, fact });
            }
            _ => {
                let all = [
                    "spec",
                    "status",
                    "finalizers",
                    "owners",
                    "generation",
                    "has-label",
                    "lacks-label",
                ];
                return Err(unknown(p, f, "field", &all)
                    .help("a named field is `spec.NAME` or `status.NAME`"));
            }
        };
        if let Some(what) = object {
            let cmp = cmp(p)?;
            let value = p.number("a count", MAX_SPEC)?;
            let fact = ObjectFact::Count { what, cmp, value };
            return Ok(Expect::Object { kind, name, fact });
        }
        let field = if f.text == "spec" {
            Field::Spec
        } else {
            Field::Status
        };
        let cmp = cmp(p)?;
        Ok(Expect::Final {
            kind,
            name,
            field,
            cmp,
            value: p.number("a value", MAX_SPEC)?,
        })
    }

    /// `expect exists KIND NAME`, `expect absent KIND NAME`.
    fn exists_expectation(&self, p: &mut Cursor, w: &Word) -> R<Expect> {
        let kind = self.next_kind(p)?;
        Ok(Expect::Exists {
            kind,
            name: self.object_name_of(p, kind)?,
            negated: w.text == "absent",
        })
    }

    /// `expect CONTROLLER ...`: what a controller saw, got or sent.
    pub(super) fn controller_expectation(&self, p: &mut Cursor, w: &Word) -> R<Expect> {
        // `expect CONTROLLER [never] saw KIND NAME spec N`
        let cw = w;
        let controller = self.controller(p, cw).map_err(|_| {
            let mut all: Vec<&str> = EXPECTATION_WORDS.to_vec();
            all.extend(self.config.controllers.iter().map(|c| c.name.as_str()));
            unknown(p, cw, "expectation", &all)
        })?;
        // `expect CONTROLLER [KIND] got "TEXT" | sent list|watch resourceVersion="RV"
        //  [by T] [between D1 and D2 after got ... | sent ...]`
        let kind = match p.peek() {
            Some(k) if self.config.kind_id(&k.text).is_some() => {
                p.pos += 1;
                self.config.kind_id(&k.text)
            }
            _ => None,
        };
        if matches!(p.peek().map(|x| x.text.as_str()), Some("got" | "sent")) {
            let fact = read_fact(p)?;
            let by_ms = if p.eat("by") {
                Some(p.moment("a time")?)
            } else {
                None
            };
            let after = if p.eat("between") {
                let lo = p.duration("the earliest delay")?;
                p.expect_kw("and")?;
                let hi = p.duration("the latest delay")?;
                p.expect_kw("after")?;
                if hi < lo {
                    return Err(p.err_at(&p.words[p.pos - 2], "the window ends before it starts"));
                }
                Some((lo, hi, read_fact(p)?))
            } else {
                None
            };
            p.done()?;
            return Ok(Expect::Trace {
                controller,
                kind,
                fact,
                by_ms,
                after,
            });
        }
        if kind.is_some() {
            return Err(p.err_at(
                &p.words[p.pos - 1],
                "after a kind comes `got \"TEXT\"` or `sent list|watch resourceVersion=\"RV\"`",
            ));
        }
        let negated = p.eat("never");
        p.expect_kw("saw")?;
        let kind = self.next_kind(p)?;
        let name = self.object_name_of(p, kind)?;
        p.expect_kw("spec")?;
        let spec = p.number("a spec value", MAX_SPEC)?;
        p.done()?;
        Ok(Expect::Saw {
            controller,
            kind,
            name,
            spec,
            negated,
        })
    }

    /// `events [NAME] TYPE REASON CMP N`: how many times this event was recorded (about NAME),
    /// as the Events' `count`s add up at the end. A controller named `events` takes the word.
    fn events_expectation(&self, p: &mut Cursor, w: &Word) -> R<Expect> {
        if self.config.controllers.iter().any(|c| c.name == "events") {
            return self.controller_expectation(p, w);
        }
        let Some(kind) = self.config.kind_id("Event") else {
            return Err(p
                .err_at(
                    w,
                    "Events are objects of the kind `Event`, which is not declared",
                )
                .help("declare it: `kind Event`"));
        };
        let types = crate::logic::EVENT_TYPES;
        let first = p.next("an object's name, or the event's type (Normal or Warning)")?;
        let (object, t) = if types.contains(&first.text.as_str()) {
            (None, first)
        } else {
            p.pos -= 1;
            let name = super::names::object_name(p)?;
            (Some(name), p.next("the event's type (Normal or Warning)")?)
        };
        if !types.contains(&t.text.as_str()) {
            return Err(unknown(p, t, "event type", types));
        }
        let reason = p.next("the event's reason (ScaleFailed)")?.text.clone();
        let cmp = cmp(p)?;
        let value = p.number("a count", i64::MAX)?;
        Ok(Expect::Events {
            kind,
            object,
            event_type: t.text.clone(),
            reason,
            cmp,
            value,
        })
    }

    /// `message "TEXT" [CMP N] [by TIME]`: events whose one-line message contains the text;
    /// without a comparison, at least one. A controller named `message` takes the word over.
    fn message_expectation(&self, p: &mut Cursor, w: &Word) -> R<Expect> {
        if self.config.controllers.iter().any(|c| c.name == "message") {
            return self.controller_expectation(p, w);
        }
        let t = p.next("the text in quotes")?;
        if !t.quoted || t.text.is_empty() {
            return Err(p.err_at(t, "put the text in quotes: message \"...\""));
        }
        let text = t.text.clone();
        let (cmp, value) = match p.peek() {
            Some(w) if w.text != "by" => {
                let cmp = cmp(p)?;
                (cmp, p.number("a count", i64::MAX)?)
            }
            _ => (Cmp::Ge, 1),
        };
        let by_ms = if p.eat("by") {
            Some(p.moment("a time")?)
        } else {
            None
        };
        Ok(Expect::Message {
            text,
            cmp,
            value,
            by_ms,
        })
    }
}

/// A comparison: `==` (or `=`), `!=`, `<`, `<=`, `>`, `>=`.
pub(super) fn cmp(p: &mut Cursor) -> R<Cmp> {
    let w = p.next("a comparison (==, !=, <, <=, >, >=)")?;
    Ok(match w.text.as_str() {
        "==" | "=" => Cmp::Eq,
        "!=" => Cmp::Ne,
        "<" => Cmp::Lt,
        "<=" => Cmp::Le,
        ">" => Cmp::Gt,
        ">=" => Cmp::Ge,
        _ => {
            return Err(unknown(
                p,
                w,
                "comparison",
                &["==", "!=", "<", "<=", ">", ">="],
            ))
        }
    })
}

/// `got "TEXT"` or `sent list|watch resourceVersion="RV"`.
fn read_fact(p: &mut Cursor) -> R<Fact> {
    let w = p.next("`got` or `sent`")?;
    match w.text.as_str() {
        "got" => {
            let t = p.next("the error's text in quotes")?;
            if !t.quoted {
                return Err(p.err_at(t, "put the error's text in quotes: got \"...\""));
            }
            Ok(Fact::Got(t.text.clone()))
        }
        "sent" => {
            let r = p.next("`list` or `watch`")?;
            let list = match r.text.as_str() {
                "list" => true,
                "watch" => false,
                _ => return Err(unknown(p, r, "request", &["list", "watch"])),
            };
            p.next("resourceVersion=\"RV\"")?;
            let rv = super::probes::rv_param(p)?;
            Ok(Fact::Sent {
                list,
                rv: format!("\"{rv}\""),
            })
        }
        _ => Err(unknown(p, w, "fact", &["got", "sent"])),
    }
}
