//! The listwatch playground: edit a scenario, watch it run, travel in time.

// talc rather than the standard library's dlmalloc: about 3 KB less of the wasm every visit
// downloads, and as fast. The page is single-threaded wasm, which `new_global` requires.
#[cfg(target_family = "wasm")]
#[global_allocator]
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

mod app;
mod components;
mod gallery;
mod js;
mod link;
mod playback;
mod state;
mod storage;

fn main() {
    yew::Renderer::<app::App>::new().render();
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::*;
    wasm_bindgen_test_configure!(run_in_browser);

    /// The page computes exactly the traces the CLI checks: same hash for every gallery scenario
    /// as the native run recorded in `scenarios/trace-hashes.txt`.
    /// Lets the browser run its other tasks before going on: the test runner's driver polls
    /// the page, and a test that holds the main thread for two minutes (the gallery in a debug
    /// build on a busy machine) fails on the driver's timeout, not on its assertions.
    async fn yield_to_browser() {
        let wait = web_sys::js_sys::Promise::new(&mut |resolve, _| {
            if let Some(w) = web_sys::window() {
                let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
            }
        });
        let _ = wasm_bindgen_futures::JsFuture::from(wait).await;
    }

    #[wasm_bindgen_test]
    async fn page_traces_equal_native_traces() {
        let native = include_str!("../../scenarios/trace-hashes.txt");
        let mut checked = 0;
        for (name, src) in listwatch_script::gallery::GALLERY {
            yield_to_browser().await;
            let report = listwatch_script::run(src).expect("gallery scenarios parse");
            let hash = format!("{:016x}", listwatch_core::sim::trace_hash(&report.sim));
            let want = native
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .expect("a native hash");
            assert_eq!(
                hash, want,
                "{name}: the page's trace differs from the native one"
            );
            checked += 1;
        }
        assert!(checked >= 1);
    }

    /// A link's script replaces the editor text but the previous text is kept (the autosave
    /// is not written meanwhile) until an edit or a restore; a second link keeps the first kept.
    #[wasm_bindgen_test]
    fn a_link_keeps_the_previous_script_until_edited_or_restored() {
        use crate::state::{Action, State};
        use listwatch_core::TimeMs;
        use listwatch_script::share::Shared;
        use yew::Reducible;
        let gallery = listwatch_script::gallery::GALLERY;
        let (mine, a, b) = (gallery[0].1, gallery[1].1, gallery[2].1);
        let open = |s: std::rc::Rc<State>, script: &str, at_ms| {
            s.reduce(Action::OpenLink {
                shared: Shared {
                    script: script.to_string(),
                    at_ms,
                    events: None,
                },
                keep_previous: true,
            })
        };
        let s = std::rc::Rc::new(State::new(mine.to_string()));
        let s = open(s, a, Some(TimeMs(1000)));
        assert_eq!((&*s.source, s.kept.as_deref()), (a, Some(mine)));
        assert!(
            s.now_ms() <= TimeMs(1000) && s.cursor > 0,
            "at the link's moment"
        );
        let s = open(s, b, None);
        assert_eq!(s.kept.as_deref(), Some(mine), "still the autosaved script");
        let restored = s.clone().reduce(Action::Restore);
        assert_eq!((&*restored.source, restored.kept.as_deref()), (mine, None));
        // The editor echoing the same text is not an edit; a real change is.
        let same = s.clone().reduce(Action::Edit(b.to_string()));
        assert_eq!(same.kept.as_deref(), Some(mine));
        // Nor is an echo with other line ends (a link's CRLF text, through CodeMirror).
        let crlf = open(s.clone(), &b.replace('\n', "\r\n"), None);
        let echo = crlf.reduce(Action::Edit(b.to_string()));
        assert_eq!(echo.kept.as_deref(), Some(mine));
        let edited = s.clone().reduce(Action::Edit(format!("{b}\n# mine now")));
        assert_eq!(edited.kept, None);
        assert_eq!(s.reduce(Action::AcceptLink).kept, None);
        // A broken link only reports.
        let e = open(std::rc::Rc::new(State::new(mine.to_string())), mine, None)
            .reduce(Action::LinkError("bad".into()));
        assert_eq!((&*e.source, e.kept.as_deref()), (mine, None));
        assert_eq!(e.link_error.as_deref(), Some("bad"));
    }

    /// A run stopped at a limit of the reconcile language shows the limit's diagnostic at its
    /// statement, as the CLI does, and again after an edit.
    #[wasm_bindgen_test]
    fn a_run_stopped_at_a_limit_shows_its_located_diagnostic() {
        use crate::state::{Action, State};
        use yew::Reducible;
        let src = "kind Parent\nkind Child\nkind Other\ncontroller kids for Parent\n  logic\n    get p = Parent key\n    scale Child owned-by p to 1000\n    list others = Other owned-by p\n    if others.alive >= 1500\n      delete others\ncontroller grand for Child\n  logic\n    get c = Child key\n    get p = Parent owner c\n    create Other key-x owner p\n    create Other key-y owner p\nat 0s create Parent a\nrun 1m\n";
        let mut s = std::rc::Rc::new(State::new(src.to_string()));
        while s.progress.is_some() {
            s = s.reduce(Action::Continue);
        }
        let at = |s: &State| {
            s.diagnostics
                .iter()
                .map(|d| (d.line, d.col))
                .collect::<Vec<_>>()
        };
        assert_eq!(at(&s), [(10, 7)]);
        assert!(s.diagnostics[0]
            .message
            .contains("limit of 1000 children per object"));
        let mut s = s.reduce(Action::Edit(format!("{src}# a comment\n")));
        while s.progress.is_some() {
            s = s.reduce(Action::Continue);
        }
        assert_eq!(at(&s), [(10, 7)], "the same run, the same diagnostic");
    }

    /// A run too long for one task is computed a slice at a time (`Action::Continue`), with
    /// its progress on the state, and ends exactly as a run in one go.
    #[wasm_bindgen_test]
    async fn a_long_run_is_computed_in_slices_with_progress() {
        use crate::state::{Action, State, SLICE_EVENTS};
        use yew::Reducible;
        let src = "kind Pod\nkind Other\ncontroller c for Pod children Other\n\
                   every 1ms 1000 times create Pod p{i} spec 1\nrun 2m\nexpect esr\n";
        let mut s = std::rc::Rc::new(State::new(src.to_string()));
        assert!(
            s.run.is_none() && s.computing.is_some(),
            "too long for one slice"
        );
        let first = s.progress.expect("progress").events;
        assert!(first >= SLICE_EVENTS);
        let mut slices = 1;
        while s.progress.is_some() {
            yield_to_browser().await;
            s = s.reduce(Action::Continue);
            slices += 1;
            assert!(slices < 10_000);
        }
        assert!(slices > 2, "{slices} slices");
        let whole = listwatch_script::run(src).unwrap();
        let run = s.run.as_ref().expect("the run is on screen");
        assert_eq!(
            listwatch_core::sim::trace_hash(&run.sim),
            listwatch_core::sim::trace_hash(&whole.sim)
        );
        assert!(s.outcomes.iter().all(|(_, o)| o.pass));
    }

    /// A long run's Cancel stops computing it: the last finished run stays on screen, how far
    /// the cancelled run went is said, a late slice changes nothing, and Rerun starts it again.
    #[wasm_bindgen_test]
    fn a_long_run_can_be_cancelled_and_run_again() {
        use crate::state::{Action, State};
        use yew::Reducible;
        let long = "kind Pod\nkind Other\ncontroller c for Pod children Other\n\
                    every 1ms 1000 times create Pod p{i} spec 1\nrun 2m\nexpect esr\n";
        let mine = gallery("02-");
        let s = std::rc::Rc::new(State::new(mine.to_string())).reduce(Action::Edit(long.into()));
        let progress = s.progress.expect("computing in slices");
        let c = s.reduce(Action::CancelRun);
        assert!(c.progress.is_none() && c.computing.is_none());
        assert_eq!(c.cancelled, Some(progress));
        assert_eq!(
            c.run.as_ref().map(|r| &*r.source),
            Some(mine),
            "the last run stays"
        );
        assert_eq!(&*c.source, long, "the text stays the user's");
        let late = c.clone().reduce(Action::Continue);
        assert!(
            std::rc::Rc::ptr_eq(&late, &c),
            "no slice runs after a cancel"
        );
        let again = c.reduce(Action::Rerun);
        assert!(again.progress.is_some() && again.cancelled.is_none());
    }

    /// A scenario made by "Paste your logs" opens as a link's does: the script it replaces is
    /// kept (the autosave is not written) until Restore or Keep; a link later is a link again.
    #[wasm_bindgen_test]
    fn an_imported_scenario_keeps_the_script_it_replaces() {
        use crate::state::{Action, State};
        use yew::Reducible;
        let (mine, made) = (gallery("01-"), gallery("40-"));
        let s = std::rc::Rc::new(State::new(mine.to_string()))
            .reduce(Action::OpenImported(made.to_string()));
        assert_eq!(
            (&*s.source, s.kept.as_deref(), s.imported),
            (made, Some(mine), true)
        );
        let restored = s.clone().reduce(Action::Restore);
        assert_eq!((&*restored.source, restored.kept.as_deref()), (mine, None));
        let kept = s.clone().reduce(Action::AcceptLink);
        assert_eq!((&*kept.source, kept.kept.as_deref()), (made, None));
        let link = s.reduce(Action::OpenLink {
            shared: listwatch_script::share::Shared {
                script: gallery("02-").to_string(),
                at_ms: None,
                events: None,
            },
            keep_previous: true,
        });
        assert_eq!((link.kept.as_deref(), link.imported), (Some(mine), false));
    }

    /// The explorer's settings and search are the page's state: a start takes the next job, only
    /// the running search's reports count, and a cancel or the end stops it; a cancelled search's
    /// last report stays on screen until the next search.
    #[wasm_bindgen_test]
    fn the_explorer_goes_through_the_reducer() {
        use crate::state::{Action, State};
        use yew::Reducible;
        let s = std::rc::Rc::new(State::new(String::new()));
        let s = s
            .reduce(Action::ExploreBudget(0))
            .reduce(Action::ExploreAll(true));
        assert_eq!((s.explore.budget, s.explore.all), (1, true));
        let most = listwatch_script::explore::MAX_BUDGET_SCHEDULES;
        let big = s.clone().reduce(Action::ExploreBudget(u32::MAX));
        assert_eq!(
            u64::from(big.explore.budget),
            most,
            "the CLI's and the worker's limit"
        );
        let report = |job, done| Action::ExploreReport {
            job,
            report: "{}".into(),
            done,
        };
        let s = s.reduce(report(0, false));
        assert!(s.explore.report.is_none(), "no search runs: ignored");
        let s = s.reduce(Action::ExploreStart).reduce(report(0, false));
        assert!(
            s.explore.report.is_none(),
            "an older search's report: ignored"
        );
        let s = s.reduce(report(1, false));
        assert!(s.explore.running && s.explore.job == 1 && s.explore.report.is_some());
        let cancelled = s.clone().reduce(Action::ExploreCancel);
        assert!(!cancelled.explore.running);
        assert_eq!(
            cancelled.explore.report, s.explore.report,
            "a cancel keeps the last report: how far the search went and what it found"
        );
        let late = cancelled.clone().reduce(Action::ExploreReport {
            job: 1,
            report: "{\"late\":1}".into(),
            done: true,
        });
        assert_eq!(
            late.explore.report, s.explore.report,
            "the cancelled search's worker is not heard"
        );
        let again = cancelled.reduce(Action::ExploreStart);
        assert!(again.explore.running && again.explore.job == 2 && again.explore.report.is_none());
        let again = again.reduce(report(1, false));
        assert!(
            again.explore.report.is_none(),
            "the cancelled search's report, once another runs: ignored"
        );
        let done = s.reduce(report(1, true));
        assert!(!done.explore.running && done.explore.report.is_some());
    }

    /// A clock tick shares the script, the kept script and the diagnostics with the state
    /// before it rather than copying them, and an edit to the same text is no new state.
    #[wasm_bindgen_test]
    fn a_tick_shares_the_script_and_an_echo_changes_nothing() {
        use crate::state::{Action, State};
        use std::rc::Rc;
        use yew::Reducible;
        let src = listwatch_script::gallery::GALLERY[0].1;
        // A broken edit: the last good run plays on, with the edit's diagnostics.
        let s =
            Rc::new(State::new(src.to_string())).reduce(Action::Edit(format!("{src}\nbogus line")));
        let mut s = Rc::try_unwrap(s).ok().expect("a new state");
        s.kept = Some(Rc::from("kept"));
        let s = Rc::new(s).reduce(Action::Play);
        let ticked = s.clone().reduce(Action::Tick(50.0));
        assert!(ticked.cursor > s.cursor, "the clock moved");
        assert!(Rc::ptr_eq(&s.source, &ticked.source));
        assert!(Rc::ptr_eq(
            s.kept.as_ref().unwrap(),
            ticked.kept.as_ref().unwrap()
        ));
        assert!(!ticked.diagnostics.is_empty());
        assert!(Rc::ptr_eq(&s.diagnostics, &ticked.diagnostics));
        let echo = ticked
            .clone()
            .reduce(Action::Edit(ticked.source.to_string()));
        assert!(Rc::ptr_eq(&echo, &ticked), "the same text: the same state");
        // Fixed, and edited again without errors: the empty list stays the same one, so the
        // editor (which compares diagnostics by pointer) does not draw them again.
        let fixed = echo.reduce(Action::Edit(src.to_string()));
        assert!(fixed.diagnostics.is_empty() && !fixed.stale);
        let again = fixed
            .clone()
            .reduce(Action::Edit(format!("{src}\n# a note")));
        assert!(Rc::ptr_eq(&fixed.diagnostics, &again.diagnostics));
    }

    /// A gallery scenario by its file name.
    fn gallery(file: &str) -> &'static str {
        listwatch_script::gallery::GALLERY
            .iter()
            .find(|(f, _)| f.starts_with(file))
            .expect("a gallery scenario")
            .1
    }

    /// Another scenario (the gallery, the tour) opens at its start, paused, whatever moment the
    /// one before was at; an edit of the same scenario keeps the moment. The tour's first step
    /// then stops at its first remark, not past all of them.
    #[wasm_bindgen_test]
    fn another_scenario_opens_at_its_start_and_an_edit_keeps_the_moment() {
        use crate::state::{Action, State};
        use yew::Reducible;
        let s = std::rc::Rc::new(State::new(gallery("11-").to_string())).reduce(Action::Seek(42));
        let edited = s
            .clone()
            .reduce(Action::Edit(format!("{}\nseed 7\n", gallery("11-"))));
        assert_eq!(edited.cursor, 42, "an edit keeps the moment");
        let opened = s.clone().reduce(Action::Open(gallery("30-").to_string()));
        assert_eq!((opened.cursor, opened.playing), (0, false));
        let playing = s
            .reduce(Action::Play)
            .reduce(Action::Open(gallery("39-").to_string()));
        assert_eq!((playing.cursor, playing.playing), (0, false));
        let mut tour = playing.reduce(Action::Play);
        for _ in 0..1000 {
            if !tour.playing {
                break;
            }
            tour = tour.reduce(Action::Tick(50.0));
        }
        let said = &tour.run.as_ref().unwrap().sim.trace()[tour.cursor - 1].kind;
        assert!(
            matches!(
                said,
                listwatch_core::EventKind::Say(listwatch_core::SayEvent { wait: true, .. })
            ),
            "stopped at the tour's first remark: {said:?}"
        );
        assert!(crate::state::waiting_at(
            tour.run.as_ref().unwrap(),
            tour.cursor
        ));
    }

    /// Playback runs in virtual time: at 1× three seconds of real time are at most three of
    /// virtual time (less only by the beats of the events on the way), ten times as much at 10×;
    /// events of one moment are played one a tick at most, in order; between events the clock
    /// moves on while the event on screen stays.
    #[wasm_bindgen_test]
    fn playback_runs_in_virtual_time_at_the_speed_it_is_set_to() {
        use crate::playback::{BEAT_MS, SPEED_MAX};
        use crate::state::{Action, State, TICK_MS};
        use yew::Reducible;
        let src = "kind Pod\nkind Other\ncontroller c for Pod children Other\n\
                   every 2s 5 times create Pod p{i}\nrun 30s\n";
        let s = std::rc::Rc::new(State::new(src.to_string()));
        let tick = TICK_MS as f64;
        for (speed, real_ms) in [(1.0, 3000.0), (10.0, 1000.0)] {
            let mut p = s.clone().reduce(Action::Speed(speed)).reduce(Action::Play);
            let (mut between, mut most) = (0, 0);
            for _ in 0..(real_ms / tick) as usize {
                let before = (p.cursor, p.at_ms);
                p = p.reduce(Action::Tick(tick));
                most = most.max(p.cursor - before.0);
                assert!(p.at_ms >= before.1, "the clock never goes back");
                if p.cursor == before.0 && p.at_ms > before.1 {
                    between += 1;
                }
            }
            let beats = p.cursor as f64 * BEAT_MS / speed;
            let virtual_ms = speed * real_ms;
            assert!(
                p.at_ms <= virtual_ms && p.at_ms >= speed * (real_ms - beats) - speed * tick,
                "{speed}×: {} ms of virtual time in {real_ms} ms ({} events)",
                p.at_ms,
                p.cursor
            );
            assert!(between > 0, "{speed}×: the clock ran between events");
            if speed == 1.0 {
                assert_eq!(most, 1, "at 1× one event a tick at most");
            }
        }
        // Fast-forward still stops at the end, having played everything.
        let mut p = s
            .clone()
            .reduce(Action::Speed(SPEED_MAX))
            .reduce(Action::Play);
        for _ in 0..200 {
            p = p.reduce(Action::Tick(tick));
        }
        assert_eq!((p.cursor, p.playing), (s.len(), false));
        // A step puts the clock at the event on screen.
        let stepped = p.reduce(Action::Seek(3)).reduce(Action::StepForward);
        let t = stepped.run.as_ref().unwrap().sim.trace()[3].time_ms.ms() as f64;
        assert_eq!((stepped.cursor, stepped.at_ms), (4, t));
    }

    /// Opening another scenario stops the search of the one left behind and clears its results;
    /// opening a counterexample the search found (an edit) keeps them.
    #[wasm_bindgen_test]
    fn another_scenario_stops_the_search_and_clears_its_results() {
        use crate::state::{Action, State};
        use yew::Reducible;
        let s = std::rc::Rc::new(State::new(gallery("19-").to_string()))
            .reduce(Action::ExploreStart)
            .reduce(Action::ExploreReport {
                job: 1,
                report: "{\"kind\":\"progress\"}".into(),
                done: false,
            });
        assert!(s.explore.running && s.explore.report.is_some());
        let kept = s
            .clone()
            .reduce(Action::Edit(format!("{}\n# found\n", gallery("19-"))));
        assert!(kept.explore.running && kept.explore.report.is_some());
        let left = s.reduce(Action::Open(gallery("20-").to_string()));
        assert!(!left.explore.running && left.explore.report.is_none());
        assert_eq!(
            left.explore.job, 2,
            "the next number: panels.js drops what it showed"
        );
        let late = left.clone().reduce(Action::ExploreReport {
            job: 1,
            report: "{}".into(),
            done: true,
        });
        assert!(late.explore.report.is_none(), "the old search is not heard");
        let again = left.reduce(Action::ExploreStart);
        assert!(again.explore.running && again.explore.job == 3);
    }

    /// A link carries the event of its moment, so it opens there and not at the last event of
    /// that millisecond (gallery 02: the 410 is event 69 of the 74 at 2.200 s); an event the
    /// run does not have at that moment is not trusted.
    #[wasm_bindgen_test]
    fn a_link_opens_at_its_event_not_at_the_end_of_its_millisecond() {
        use crate::state::{Action, State};
        use listwatch_core::TimeMs;
        use listwatch_script::share::Shared;
        use yew::Reducible;
        let src = gallery("02-");
        let s = std::rc::Rc::new(State::new(src.to_string())).reduce(Action::Seek(69));
        let trace = s.run.as_ref().unwrap().sim.trace();
        assert!(trace[68].kind.gone().is_some(), "event 69 is the 410");
        assert_eq!(s.now_ms(), TimeMs(2200));
        let at = crate::link::fragment_for(&s.source, s.now_ms(), s.cursor);
        let shared = listwatch_script::share::decode(&at).unwrap();
        let open = |shared: Shared| {
            std::rc::Rc::new(State::new(String::new())).reduce(Action::OpenLink {
                shared,
                keep_previous: false,
            })
        };
        assert_eq!(open(shared.clone()).cursor, 69);
        let elsewhere = Shared {
            events: Some(10),
            ..shared.clone()
        };
        assert_eq!(open(elsewhere).cursor, 74, "the millisecond's last event");
        let old = Shared {
            events: None,
            ..shared
        };
        assert_eq!(
            open(old).cursor,
            74,
            "a link made before: as it opened then"
        );
        // Events at the start (time 0) are told apart too.
        let start = crate::link::fragment_for(src, TimeMs::ZERO, 5);
        let opened = open(listwatch_script::share::decode(&start).unwrap());
        assert_eq!(opened.cursor, 5);
    }

    /// The theme is stored, and put on the page, in the words it always was.
    #[wasm_bindgen_test]
    fn themes_keep_their_stored_words() {
        use crate::state::Theme;
        let words: Vec<&str> = Theme::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(words, ["system", "light", "dark"]);
        for t in Theme::ALL {
            assert_eq!(Theme::from_stored(t.as_str()), Some(t));
        }
        for word in ["", "System", "auto", "dark "] {
            assert_eq!(Theme::from_stored(word), None, "{word:?}");
        }
        assert_eq!(Theme::default(), Theme::System);
    }

    fn before_outcomes(src: &str) -> usize {
        listwatch_script::parse(src).unwrap().expectations.len()
    }

    #[wasm_bindgen_test]
    fn reducer_keeps_the_last_good_run_while_the_script_is_broken() {
        use crate::state::{Action, State};
        use yew::Reducible;
        let src = listwatch_script::gallery::GALLERY[0].1.to_string();
        let s = std::rc::Rc::new(State::new(src.clone()));
        assert!(s.run.is_some() && s.diagnostics.is_empty());
        let s = s.reduce(Action::Edit(format!("{src}\nbogus line")));
        assert!(s.stale && s.run.is_some());
        assert_eq!(s.diagnostics[0].line, src.lines().count() + 2);
        // A comment changes nothing that runs: the run is kept, expectations are re-checked.
        let fixed = std::rc::Rc::new(State::new(src.clone()));
        let before = fixed.run.clone().unwrap();
        let (first, rest) = src.split_once('\n').unwrap();
        let commented = fixed.reduce(Action::Edit(format!("{first}\n# a note\n{rest}")));
        assert!(
            std::rc::Rc::ptr_eq(&before, commented.run.as_ref().unwrap()),
            "same run reused"
        );
        assert_eq!(commented.outcomes.len(), before_outcomes(&src));
        assert!(
            commented.outcomes.iter().all(|(x, _)| x.line > 1),
            "expectations moved down a line"
        );
        let reseeded = commented.reduce(Action::Edit(format!("{src}\nseed 99")));
        assert!(
            !std::rc::Rc::ptr_eq(&before, reseeded.run.as_ref().unwrap()),
            "a real change runs again"
        );
        let s = s.reduce(Action::StepForward).reduce(Action::StepForward);
        assert_eq!(s.cursor, 2);
        let s = s.reduce(Action::StepBack);
        assert_eq!(s.cursor, 1);
    }
}
