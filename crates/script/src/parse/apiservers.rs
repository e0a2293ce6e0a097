//! Apiservers: `apiserver NAME [lag D] [fake [1.N]] [initial-events-end off]`. The first
//! declared replaces the default one; controllers and faults name them.

use listwatch_core::*;

use super::spans::Span;
use super::table::{statement, Head, Row, Statement};
use super::versions::minor_version;
use super::Builder;
use crate::cursor::{unknown, Cursor, R};
use crate::name_rules::{check_name, is_name_char};

pub(super) const STATEMENTS: &[Row<Statement>] = &[statement(
    "apiserver",
    "apiserver NAME [lag D] [fake [1.N]] [initial-events-end off]",
    "apiserver c lag 2s",
    Builder::apiserver_statement,
)];

/// What may follow an apiserver's name.
const OPTIONS: &[&str] = &["lag", "fake", "initial-events-end"];

impl Builder {
    /// `apiserver NAME [lag D] [fake [1.N]] [initial-events-end off]`.
    fn apiserver_statement(&mut self, p: &mut Cursor, _: Head) -> R<()> {
        let name = p.next("an apiserver name")?;
        check_name(p, name, "apiserver", is_name_char)?;
        let mut lag_ms = DurationMs::ZERO;
        let mut fake = None;
        let mut omits_initial_events_end = false;
        while let Some(w) = p.peek() {
            match w.text.as_str() {
                "lag" => {
                    p.pos += 1;
                    lag_ms = p.duration("a lag")?;
                }
                "fake" => {
                    p.pos += 1;
                    fake = Some(match p.peek() {
                        Some(v) if v.text.starts_with("1.") => {
                            p.pos += 1;
                            let help =
                                "write 1.N, e.g. `fake 1.35` (no resourceVersion) or `fake 1.36`";
                            let v = &p.words[p.pos - 1];
                            Some(minor_version(
                                p,
                                v,
                                ("1.", 10),
                                "a client-go version",
                                help,
                            )?)
                        }
                        _ => None,
                    });
                }
                "initial-events-end" => {
                    p.pos += 1;
                    omits_initial_events_end = !self.switch(p, "initial-events-end", None)?;
                }
                _ => return Err(unknown(p, w, "apiserver option", OPTIONS)),
            }
        }
        if !self.apiservers_declared {
            self.config.apiservers.clear();
            self.fakes.clear();
            self.apiservers_declared = true;
        }
        if self.config.apiservers.iter().any(|a| a.name == name.text) {
            return Err(p.err_at(name, format!("apiserver `{}` is declared twice", name.text)));
        }
        if self.config.apiservers.len() >= MAX_APISERVERS {
            return Err(p.err_at(name, format!("more than {MAX_APISERVERS} apiservers")));
        }
        self.spans.apiservers.push(Span::of(p, name));
        self.fakes.push(fake);
        self.config.apiservers.push(ApiserverConfig {
            name: name.text.clone(),
            lag_ms,
            fake: None,
            omits_initial_events_end,
        });
        Ok(())
    }
}
