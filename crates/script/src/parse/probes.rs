//! Probes: a request made directly to an apiserver on the timeline (`probe list|watch ...`),
//! and the expectation on its answers (`expect probe ...`).

use listwatch_core::verdict::{Expect, ProbeFact};
use listwatch_core::*;

use super::table::{row, ActionFn, ExpectationFn, Row};
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::lexer::Word;
use crate::selector::{field_selector, label_selector, selector_word};

pub(super) const ACTIONS: &[Row<ActionFn>] = &[row(
    "probe",
    "probe list KIND [resourceVersion=\"N\" [exact]] [selector SEL] [field-selector SEL] [on APISERVER] | probe watch KIND resourceVersion=\"N\" [on APISERVER]",
    "at 4s probe list Pod resourceVersion=\"12\" exact",
    Builder::probe_input,
)];

pub(super) const EXPECTATIONS: &[Row<ExpectationFn>] = &[row(
    "probe",
    "expect probe got \"TEXT\" | expect probe listed N [items] [at rv R] | expect probe opened [replaying N]",
    "expect probe got \"too old resource version: 11 (12)\"",
    Builder::probe_expectation,
)];

impl Builder {
    /// `probe list KIND [resourceVersion="N" [exact]] [on APISERVER]`,
    /// `probe watch KIND resourceVersion="N" [on APISERVER]`.
    fn probe_input(&self, p: &mut Cursor, aw: &Word) -> R<Input> {
        let r = p.next("`list` or `watch`")?;
        let list = match r.text.as_str() {
            "list" => true,
            "watch" => false,
            _ => return Err(unknown(p, r, "probe request", &["list", "watch"])),
        };
        let kind = self.next_kind(p)?;
        let rv = match p.peek() {
            Some(w) if w.text.starts_with("resourceVersion=") => {
                p.pos += 1;
                Some(rv_param(p)?)
            }
            _ => None,
        };
        let exact = list && p.eat("exact");
        let request = if list {
            ProbeRequest::List {
                rv: match rv.as_deref() {
                    None | Some("") => {
                        if exact {
                            return Err(p.err_at(
                                &p.words[p.pos - 1],
                                "an Exact list needs a resourceVersion=\"N\" above 0",
                            ));
                        }
                        ListRv::Consistent
                    }
                    Some("0") if !exact => ListRv::Any,
                    Some(n) => {
                        let n: Rv = n.parse().map_err(|_| {
                            p.err_at(&p.words[p.pos - 1], "a resourceVersion is a number")
                        })?;
                        if exact {
                            ListRv::Exact(n)
                        } else {
                            ListRv::NotOlderThan(n)
                        }
                    }
                },
            }
        } else {
            match rv.as_deref() {
                Some("") => ProbeRequest::WatchMostRecent,
                rv => {
                    let from = rv.and_then(|r| r.parse::<Rv>().ok()).ok_or_else(|| {
                        p.err_at(
                            aw,
                            "a probe's watch needs resourceVersion=\"N\" (or \"\": most recent)",
                        )
                    })?;
                    ProbeRequest::Watch { from }
                }
            }
        };
        let selector = self.probe_selector(p, list, exact)?;
        let apiserver = if p.eat("on") {
            self.next_apiserver(p)?
        } else {
            ApiserverId(0)
        };
        Ok(Input::Probe {
            apiserver,
            kind,
            request,
            selector,
        })
    }

    /// `[selector SEL] [field-selector SEL]` of a probe's list: the apiserver filters the list
    /// with them (`cacher.go` `GetList`, the request's predicate). Not on watches, nor on an
    /// Exact list (etcd's history of counts has no labels).
    fn probe_selector(
        &self,
        p: &mut Cursor,
        list: bool,
        exact: bool,
    ) -> R<Option<Box<ProbeSelector>>> {
        let mut s = ProbeSelector {
            labels: None,
            fields: None,
        };
        while let Some(w) = p
            .peek()
            .filter(|w| w.text == "selector" || w.text == "field-selector")
        {
            p.pos += 1;
            let (given, what) = if w.text == "selector" {
                (
                    s.labels.is_some(),
                    "a label selector: `app=web`, `tier!=db`, `env`, `!legacy`",
                )
            } else {
                (
                    s.fields.is_some(),
                    "a field selector: `metadata.name=web-0`",
                )
            };
            if !list || exact || given {
                let why = if !list {
                    "a probe's watch takes no selector (only `probe list` does)"
                } else if exact {
                    "an Exact list with a selector is not modelled"
                } else {
                    "this selector is given twice"
                };
                return Err(p.err_at(w, why));
            }
            let v = p.next(what)?;
            if w.text == "selector" {
                let v = selector_word(p, v);
                s.labels = Some(label_selector(p, &v)?);
            } else {
                s.fields = Some(field_selector(p, v)?);
            }
        }
        Ok((s.labels.is_some() || s.fields.is_some()).then(|| Box::new(s)))
    }

    /// `expect probe got "TEXT" | listed N [at rv R] | opened [replaying N]`; a controller named
    /// `probe` takes the word over (`expect probe saw ...`).
    fn probe_expectation(&self, p: &mut Cursor, w: &Word) -> R<Expect> {
        if self.config.controllers.iter().any(|c| c.name == "probe") {
            return self.controller_expectation(p, w);
        }
        let what = p.next("`got`, `listed` or `opened`")?;
        let fact = match what.text.as_str() {
            "got" => {
                let t = p.next("the error's text in quotes")?;
                if !t.quoted {
                    return Err(p.err_at(t, "put the error's text in quotes: got \"...\""));
                }
                ProbeFact::Got(t.text.clone())
            }
            "listed" => {
                let items = p.number("how many items", u32::MAX as i64)?;
                p.eat("items");
                let rv = if p.eat("at") {
                    p.expect_kw("rv")?;
                    Some(p.number("a list RV", i64::MAX)? as Rv)
                } else {
                    None
                };
                ProbeFact::Listed {
                    items: items.max(0) as u32,
                    rv,
                }
            }
            "opened" => {
                let replayed = if p.eat("replaying") {
                    Some(p.number("how many events", u32::MAX as i64)?.max(0) as u32)
                } else {
                    None
                };
                ProbeFact::Opened { replayed }
            }
            _ => {
                return Err(unknown(
                    p,
                    what,
                    "probe answer",
                    &["got", "listed", "opened"],
                ))
            }
        };
        Ok(Expect::Probe { fact })
    }
}

/// The word just read, `resourceVersion="N"` (or `"0"`, `""`): the digits between the quotes.
pub(super) fn rv_param(p: &Cursor) -> R<String> {
    let v = &p.words[p.pos - 1];
    v.text
        .strip_prefix("resourceVersion=")
        .filter(|rv| rv.len() >= 2 && rv.starts_with('"') && rv.ends_with('"'))
        .map(|rv| &rv[1..rv.len() - 1])
        .filter(|rv| rv.len() <= 19 && rv.bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_string)
        .ok_or_else(|| {
            p.err_at(
                v,
                "write the parameter as the request does: resourceVersion=\"10\", \
                 resourceVersion=\"0\" or resourceVersion=\"\"",
            )
        })
}
