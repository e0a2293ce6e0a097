//! The messages between the page (`panels.js`, `compare.js`, the export button) and the
//! explorer's Web Worker (`src/bin/explore_worker.rs`, which includes this file): one enum per
//! direction, passed as plain JS objects with serde-wasm-bindgen. Each message carries its `kind`
//! (`{kind: "explore", script, budget}`), so the JS side reads and writes the same shapes; tuples
//! travel as arrays. The page's wasm does not include this module: serde-wasm-bindgen costs about
//! 23 KB gzipped there, and its one message (`Export`) is written by `export.js`. The tests below pin each message's JSON shape, what the JS side reads.

use serde::{Deserialize, Serialize};

/// To the worker: one job per message.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToWorker {
    /// Search fault schedules; `all` keeps going after the first failure.
    Explore {
        script: String,
        #[serde(default = "default_budget")]
        budget: f64,
        #[serde(default)]
        all: bool,
        /// Faults only against this controller (`explore --controller NAME`); empty: every one.
        #[serde(default)]
        controller: String,
    },
    /// The trace as JSON (the CLI's `--json`).
    Export { script: String },
    /// Two runs for the comparison.
    Compare { script: String, other: String },
    /// One script under two versions ("what changes if I upgrade"), as the CLI's `run
    /// --compare`: `versions` is its argument, `kubernetes=1.34,1.35`.
    CompareVersions { script: String, versions: String },
    /// Pasted log lines for `listwatch import`. A paste too large to send whole is sent as its
    /// size alone (`text` empty): the worker then says the importer's own message.
    Import {
        text: String,
        #[serde(default)]
        bytes: f64,
    },
    /// The objects panel's table at `cursor`, with the history of the object picked.
    Objects {
        script: String,
        cursor: f64,
        #[serde(default)]
        pick_kind: String,
        #[serde(default)]
        pick_name: String,
        /// Which page of `OBJECTS_PAGE` objects (0 first), so a thousand objects stay fast.
        #[serde(default)]
        page: f64,
    },
}

fn default_budget() -> f64 {
    2000.0
}

/// The search's figures so far.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Figures {
    pub tried: f64,
    pub space: f64,
    pub states: f64,
    pub skipped: f64,
    pub faults: f64,
    pub per_second: f64,
    pub failures: f64,
}

/// One run of a comparison: its error, or what the comparison shows of it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum CompareRun {
    Error {
        error: String,
    },
    Run {
        title: String,
        end: f64,
        /// (expectation, pass, found)
        outcomes: Vec<(String, bool, String)>,
        /// (holds, found)
        esr: (bool, String),
        /// (what, how many)
        counts: Vec<(String, f64)>,
        /// (time, text)
        events: Vec<(f64, String)>,
        /// (time, watcher, state)
        states: Vec<(f64, String, String)>,
    },
}

/// One object in the objects panel: kind, name, each holder's copy, and its history when picked
/// (event, text, later than the moment).
pub type ObjectRow = (
    String,
    String,
    Vec<CopyRow>,
    Option<Vec<(f64, String, bool)>>,
);

/// One holder's copy of an object.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct CopyRow {
    pub holder: String,
    /// `fresh`, `stale`, `missing`, `ghost` (`view::Mark`).
    pub mark: String,
    /// What the copy holds as (key, value): `rv`, `spec`, `status`, the body's entries
    /// (`spec.image`, `labels.app`, `annotations.x`, `finalizers`), `ownerReferences`,
    /// `deletionTimestamp`, `uid`. Empty when the holder has no copy.
    pub cells: Vec<(String, String)>,
    /// The keys whose values differ from etcd's copy (or that only one of them has).
    pub differs: Vec<String>,
}

/// From the worker.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FromWorker {
    /// Listening: messages sent before this are lost.
    Ready,
    /// How far the search is, with the failures found so far (as in `Done`), so a cancelled
    /// search still shows them. `found` only when it grew since the search's last report
    /// (`panels.js` keeps the last list it got): up to 50 scripts of up to 64 KiB each would
    /// otherwise go with every report, several a second.
    Progress {
        #[serde(flatten)]
        figures: Figures,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        found: Option<Vec<(String, String)>>,
        more: f64,
    },
    Done {
        #[serde(flatten)]
        figures: Figures,
        /// (the faults in words, the counterexample script)
        found: Vec<(String, String)>,
        /// Failures found beyond those sent.
        more: f64,
        /// What already fails without faults (empty when nothing does).
        base_broken: String,
    },
    Error {
        message: String,
    },
    Export {
        json: String,
    },
    Compare {
        runs: Vec<CompareRun>,
        /// A comparison of versions: the facts that differ (fact, A's value, B's value).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        differences: Vec<(String, String, String)>,
        /// A comparison of versions: where the traces first differ (the event's index, each
        /// side's event as its moment and text, empty where that run had ended); none when
        /// they are the same event for event.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        divergence: Option<(f64, String, String)>,
    },
    /// What an import made: `listwatch import --json`'s document (empty when nothing could be
    /// imported) and the importer's message when it refused the paste or recognised no line
    /// (its report is in `json` then, with an empty script).
    Import {
        json: String,
        error: String,
    },
    Objects {
        cursor: f64,
        script: String,
        pick: String,
        seen: f64,
        /// The page shown (after clamping to the objects there are) and its size.
        page: f64,
        per_page: f64,
        list: Vec<ObjectRow>,
    },
}

impl FromWorker {
    /// As a plain JS object (`null` for a missing history, objects rather than maps).
    pub fn to_js(&self) -> wasm_bindgen::JsValue {
        self.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
            .unwrap_or(wasm_bindgen::JsValue::NULL)
    }
}

/// The shapes `panels.js`, `compare.js` and `components/export.rs` write and read, pinned as
/// JSON: a renamed field or variant, or a tuple turned into an object, fails here.
#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;
    use web_sys::js_sys::JSON;

    fn json(msg: &FromWorker) -> String {
        JSON::stringify(&msg.to_js()).unwrap().into()
    }

    /// A job as the page writes it (JSON text turned into a plain JS object).
    fn job(text: &str) -> ToWorker {
        let value = JSON::parse(text).expect("valid JSON");
        serde_wasm_bindgen::from_value(value).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[wasm_bindgen_test]
    fn jobs_are_read_as_the_page_writes_them() {
        assert_eq!(
            job(r#"{"kind":"explore","script":"s","budget":500,"all":true}"#),
            ToWorker::Explore {
                script: "s".into(),
                budget: 500.0,
                all: true,
                controller: String::new()
            }
        );
        assert_eq!(
            job(r#"{"kind":"explore","script":"s"}"#),
            ToWorker::Explore {
                script: "s".into(),
                budget: 2000.0,
                all: false,
                controller: String::new()
            },
            "budget and all have defaults"
        );
        assert_eq!(
            job(r#"{"kind":"explore","script":"s","controller":"op"}"#),
            ToWorker::Explore {
                script: "s".into(),
                budget: 2000.0,
                all: false,
                controller: "op".into()
            },
            "faults only against op"
        );
        assert_eq!(
            job(r#"{"kind":"export","script":"s"}"#),
            ToWorker::Export { script: "s".into() }
        );
        assert_eq!(
            job(r#"{"kind":"compare","script":"a","other":"b"}"#),
            ToWorker::Compare {
                script: "a".into(),
                other: "b".into()
            }
        );
        assert_eq!(
            job(r#"{"kind":"objects","script":"s","cursor":7,"pick_kind":"Pod","pick_name":"a"}"#),
            ToWorker::Objects {
                script: "s".into(),
                cursor: 7.0,
                pick_kind: "Pod".into(),
                pick_name: "a".into(),
                page: 0.0
            }
        );
        assert_eq!(
            job(r#"{"kind":"objects","script":"s","cursor":7,"page":3}"#),
            ToWorker::Objects {
                script: "s".into(),
                cursor: 7.0,
                pick_kind: String::new(),
                pick_name: String::new(),
                page: 3.0
            }
        );
        assert_eq!(
            job(r#"{"kind":"objects","script":"s","cursor":0}"#),
            ToWorker::Objects {
                script: "s".into(),
                cursor: 0.0,
                pick_kind: String::new(),
                pick_name: String::new(),
                page: 0.0
            },
            "no object picked"
        );
        for bad in [
            r#"{"kind":"explore"}"#,
            r#"{"kind":"search","script":"s"}"#,
            r#"{"script":"s"}"#,
            r#""explore""#,
        ] {
            let value = JSON::parse(bad).unwrap();
            assert!(
                serde_wasm_bindgen::from_value::<ToWorker>(value).is_err(),
                "{bad}"
            );
        }
    }

    fn figures() -> Figures {
        Figures {
            tried: 10.0,
            space: 20.0,
            states: 9.0,
            skipped: 1.0,
            faults: 4.0,
            per_second: 2.5,
            failures: 1.0,
        }
    }

    const FIGURES: &str =
        r#""tried":10,"space":20,"states":9,"skipped":1,"faults":4,"per_second":2.5,"failures":1"#;

    #[wasm_bindgen_test]
    fn the_search_reports_as_panels_js_reads_them() {
        assert_eq!(json(&FromWorker::Ready), r#"{"kind":"ready"}"#);
        let found = vec![("crash ctl".to_string(), "kind Pod\n".to_string())];
        assert_eq!(
            json(&FromWorker::Progress {
                figures: figures(),
                found: Some(found.clone()),
                more: 0.0,
            }),
            format!(
                r#"{{"kind":"progress",{FIGURES},"found":[["crash ctl","kind Pod\n"]],"more":0}}"#
            )
        );
        // Unchanged since the last report: no list at all (not an empty one).
        assert_eq!(
            json(&FromWorker::Progress {
                figures: figures(),
                found: None,
                more: 0.0,
            }),
            format!(r#"{{"kind":"progress",{FIGURES},"more":0}}"#)
        );
        assert_eq!(
            json(&FromWorker::Done {
                figures: figures(),
                found,
                more: 3.0,
                base_broken: String::new(),
            }),
            format!(
                r#"{{"kind":"done",{FIGURES},"found":[["crash ctl","kind Pod\n"]],"more":3,"base_broken":""}}"#
            )
        );
        assert_eq!(
            json(&FromWorker::Error {
                message: "line 1: no".into()
            }),
            r#"{"kind":"error","message":"line 1: no"}"#
        );
        assert_eq!(
            json(&FromWorker::Export { json: "{}".into() }),
            r#"{"kind":"export","json":"{}"}"#
        );
    }

    #[wasm_bindgen_test]
    fn a_comparison_is_as_compare_js_reads_it() {
        let run = CompareRun::Run {
            title: "T".into(),
            end: 1500.0,
            outcomes: vec![("expect esr".into(), true, "ok".into())],
            esr: (false, "wrong".into()),
            counts: vec![("events".into(), 12.0)],
            events: vec![(0.0, "ctl: list".into())],
            states: vec![(5.0, "ctl/Pod".into(), "watching".into())],
        };
        let error = CompareRun::Error {
            error: "line 2: bad".into(),
        };
        assert_eq!(
            json(&FromWorker::Compare {
                runs: vec![run.clone(), error],
                differences: vec![],
                divergence: None,
            }),
            concat!(
                r#"{"kind":"compare","runs":[{"title":"T","end":1500,"#,
                r#""outcomes":[["expect esr",true,"ok"]],"esr":[false,"wrong"],"counts":[["events",12]],"#,
                r#""events":[[0,"ctl: list"]],"states":[[5,"ctl/Pod","watching"]]},"#,
                r#"{"error":"line 2: bad"}]}"#
            )
        );
        // A comparison of versions adds what compare.js lists under the runs.
        let versions = json(&FromWorker::Compare {
            runs: vec![],
            differences: vec![("ctl/Pod: lists".into(), "2".into(), "1".into())],
            divergence: Some((7.0, "1.000s ctl: list".into(), String::new())),
        });
        assert_eq!(
            versions,
            r#"{"kind":"compare","runs":[],"differences":[["ctl/Pod: lists","2","1"]],"divergence":[7,"1.000s ctl: list",""]}"#
        );
    }

    #[wasm_bindgen_test]
    fn an_import_is_as_import_js_writes_and_reads_it() {
        assert_eq!(
            job(r#"{"kind":"import","text":"a line"}"#),
            ToWorker::Import {
                text: "a line".into(),
                bytes: 0.0
            }
        );
        assert_eq!(
            job(r#"{"kind":"import","text":"","bytes":5000000}"#),
            ToWorker::Import {
                text: String::new(),
                bytes: 5e6
            }
        );
        assert_eq!(
            job(r#"{"kind":"compare_versions","script":"s","versions":"kubernetes=1.34,1.35"}"#),
            ToWorker::CompareVersions {
                script: "s".into(),
                versions: "kubernetes=1.34,1.35".into()
            }
        );
        assert_eq!(
            json(&FromWorker::Import {
                json: "{}".into(),
                error: "too big".into()
            }),
            r#"{"kind":"import","json":"{}","error":"too big"}"#
        );
    }

    #[wasm_bindgen_test]
    fn the_objects_table_is_as_panels_js_reads_it() {
        let copy = |holder: &str, mark: &str, cells: &[(&str, &str)], differs: &[&str]| CopyRow {
            holder: holder.into(),
            mark: mark.into(),
            cells: cells
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            differs: differs.iter().map(|d| d.to_string()).collect(),
        };
        let row = |history| -> ObjectRow {
            (
                "Pod".into(),
                "a".into(),
                vec![
                    copy("etcd", "fresh", &[("rv", "3"), ("labels.app", "web")], &[]),
                    copy("ctl/Pod", "stale", &[("rv", "2")], &["rv", "labels.app"]),
                ],
                history,
            )
        };
        assert_eq!(
            json(&FromWorker::Objects {
                cursor: 4.0,
                script: "s".into(),
                pick: "Pod/a".into(),
                seen: 2.0,
                page: 0.0,
                per_page: 25.0,
                list: vec![
                    row(Some(vec![(3.0, "0.001s rv 3".into(), false)])),
                    row(None)
                ],
            }),
            concat!(
                r#"{"kind":"objects","cursor":4,"script":"s","pick":"Pod/a","seen":2,"page":0,"per_page":25,"list":["#,
                r#"["Pod","a",[{"holder":"etcd","mark":"fresh","cells":[["rv","3"],["labels.app","web"]],"differs":[]},"#,
                r#"{"holder":"ctl/Pod","mark":"stale","cells":[["rv","2"]],"differs":["rv","labels.app"]}],[[3,"0.001s rv 3",false]]],"#,
                r#"["Pod","a",[{"holder":"etcd","mark":"fresh","cells":[["rv","3"],["labels.app","web"]],"differs":[]},"#,
                r#"{"holder":"ctl/Pod","mark":"stale","cells":[["rv","2"]],"differs":["rv","labels.app"]}],null]]}"#
            )
        );
    }
}
