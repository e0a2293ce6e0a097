//! The reducer's transitions, natively (`cargo test -p listwatch-web`): `State` and `Action` hold
//! no yew types, so these need no browser.

use std::rc::Rc;

use listwatch_core::TimeMs;
use listwatch_script::share::Shared;

use super::*;

/// A link's script replaces the editor text but the previous text is kept (the autosave
/// is not written meanwhile) until an edit or a restore; a second link keeps the first kept.
#[test]
fn a_link_keeps_the_previous_script_until_edited_or_restored() {
    let gallery = listwatch_script::gallery::GALLERY;
    let (mine, a, b) = (gallery[0].1, gallery[1].1, gallery[2].1);
    let open = |s: std::rc::Rc<State>, script: &str, at_ms| {
        s.apply(Action::Script(Script::OpenLink {
            shared: Shared {
                script: script.to_string(),
                at_ms,
                events: None,
            },
            keep_previous: true,
        }))
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
    let restored = s.clone().apply(Action::Script(Script::Restore));
    assert_eq!((&*restored.source, restored.kept.as_deref()), (mine, None));
    // The editor echoing the same text is not an edit; a real change is.
    let same = s.clone().apply(Action::Script(Script::Edit(b.to_string())));
    assert_eq!(same.kept.as_deref(), Some(mine));
    // Nor is an echo with other line ends (a link's CRLF text, through CodeMirror).
    let crlf = open(s.clone(), &b.replace('\n', "\r\n"), None);
    let echo = crlf.apply(Action::Script(Script::Edit(b.to_string())));
    assert_eq!(echo.kept.as_deref(), Some(mine));
    let edited = s
        .clone()
        .apply(Action::Script(Script::Edit(format!("{b}\n# mine now"))));
    assert_eq!(edited.kept, None);
    assert_eq!(s.apply(Action::Script(Script::AcceptLink)).kept, None);
    // A broken link only reports.
    let e = open(std::rc::Rc::new(State::new(mine.to_string())), mine, None)
        .apply(Action::Page(Page::LinkError("bad".into())));
    assert_eq!((&*e.source, e.kept.as_deref()), (mine, None));
    assert_eq!(e.link_error.as_deref(), Some("bad"));
}

/// A run stopped at a limit of the reconcile language shows the limit's diagnostic at its
/// statement, as the CLI does, and again after an edit.
#[test]
fn a_run_stopped_at_a_limit_shows_its_located_diagnostic() {
    let src = "kind Parent\nkind Child\nkind Other\ncontroller kids for Parent\n  logic\n    get p = Parent key\n    scale Child owned-by p to 1000\n    list others = Other owned-by p\n    if others.alive >= 1500\n      delete others\ncontroller grand for Child\n  logic\n    get c = Child key\n    get p = Parent owner c\n    create Other key-x owner p\n    create Other key-y owner p\nat 0s create Parent a\nrun 1m\n";
    let mut s = std::rc::Rc::new(State::new(src.to_string()));
    while s.progress.is_some() {
        s = s.apply(Action::Script(Script::Continue));
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
    let mut s = s.apply(Action::Script(Script::Edit(format!("{src}# a comment\n"))));
    while s.progress.is_some() {
        s = s.apply(Action::Script(Script::Continue));
    }
    assert_eq!(at(&s), [(10, 7)], "the same run, the same diagnostic");
}

/// A run too long for one task is computed a slice at a time (`Script::Continue`), with
/// its progress on the state, and ends exactly as a run in one go.
#[test]
fn a_long_run_is_computed_in_slices_with_progress() {
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
        s = s.apply(Action::Script(Script::Continue));
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
#[test]
fn a_long_run_can_be_cancelled_and_run_again() {
    let long = "kind Pod\nkind Other\ncontroller c for Pod children Other\n\
                every 1ms 1000 times create Pod p{i} spec 1\nrun 2m\nexpect esr\n";
    let mine = gallery("02-");
    let s = std::rc::Rc::new(State::new(mine.to_string()))
        .apply(Action::Script(Script::Edit(long.into())));
    let progress = s.progress.expect("computing in slices");
    let c = s.apply(Action::Script(Script::CancelRun));
    assert!(c.progress.is_none() && c.computing.is_none());
    assert_eq!(c.cancelled, Some(progress));
    assert_eq!(
        c.run.as_ref().map(|r| &*r.source),
        Some(mine),
        "the last run stays"
    );
    assert_eq!(&*c.source, long, "the text stays the user's");
    let late = c.clone().apply(Action::Script(Script::Continue));
    assert!(
        std::rc::Rc::ptr_eq(&late, &c),
        "no slice runs after a cancel"
    );
    let again = c.apply(Action::Script(Script::Rerun));
    assert!(again.progress.is_some() && again.cancelled.is_none());
}

/// A scenario made by "Paste your logs" opens as a link's does: the script it replaces is
/// kept (the autosave is not written) until Restore or Keep; a link later is a link again.
#[test]
fn an_imported_scenario_keeps_the_script_it_replaces() {
    let (mine, made) = (gallery("01-"), gallery("40-"));
    let s = std::rc::Rc::new(State::new(mine.to_string()))
        .apply(Action::Script(Script::OpenImported(made.to_string())));
    assert_eq!(
        (&*s.source, s.kept.as_deref(), s.imported),
        (made, Some(mine), true)
    );
    let restored = s.clone().apply(Action::Script(Script::Restore));
    assert_eq!((&*restored.source, restored.kept.as_deref()), (mine, None));
    let kept = s.clone().apply(Action::Script(Script::AcceptLink));
    assert_eq!((&*kept.source, kept.kept.as_deref()), (made, None));
    let link = s.apply(Action::Script(Script::OpenLink {
        shared: listwatch_script::share::Shared {
            script: gallery("02-").to_string(),
            at_ms: None,
            events: None,
        },
        keep_previous: true,
    }));
    assert_eq!((link.kept.as_deref(), link.imported), (Some(mine), false));
}

/// The explorer's settings and search are the page's state: a start takes the next job, only
/// the running search's reports count, and a cancel or the end stops it; a cancelled search's
/// last report stays on screen until the next search.
#[test]
fn the_explorer_goes_through_the_reducer() {
    let s = std::rc::Rc::new(State::new(String::new()));
    let s = s
        .apply(Action::Search(Search::Budget(0)))
        .apply(Action::Search(Search::All(true)));
    assert_eq!((s.explore.budget, s.explore.all), (1, true));
    let most = listwatch_script::explore::MAX_BUDGET_SCHEDULES;
    let big = s.clone().apply(Action::Search(Search::Budget(u32::MAX)));
    assert_eq!(
        u64::from(big.explore.budget),
        most,
        "the CLI's and the worker's limit"
    );
    let report = |job, done| {
        Action::Search(Search::Report {
            job,
            report: "{}".into(),
            found: None,
            done,
        })
    };
    let s = s.apply(report(0, false));
    assert!(s.explore.report.is_none(), "no search runs: ignored");
    let s = s
        .apply(Action::Search(Search::Start))
        .apply(report(0, false));
    assert!(
        s.explore.report.is_none(),
        "an older search's report: ignored"
    );
    let s = s.apply(report(1, false));
    assert!(s.explore.running && s.explore.job == 1 && s.explore.report.is_some());
    let cancelled = s.clone().apply(Action::Search(Search::Cancel));
    assert!(!cancelled.explore.running);
    assert_eq!(
        cancelled.explore.report, s.explore.report,
        "a cancel keeps the last report: how far the search went and what it found"
    );
    let late = cancelled.clone().apply(Action::Search(Search::Report {
        job: 1,
        report: "{\"late\":1}".into(),
        found: None,
        done: true,
    }));
    assert_eq!(
        late.explore.report, s.explore.report,
        "the cancelled search's worker is not heard"
    );
    let again = cancelled.apply(Action::Search(Search::Start));
    assert!(again.explore.running && again.explore.job == 2 && again.explore.report.is_none());
    let again = again.apply(report(1, false));
    assert!(
        again.explore.report.is_none(),
        "the cancelled search's report, once another runs: ignored"
    );
    let done = s.apply(report(1, true));
    assert!(!done.explore.running && done.explore.report.is_some());
}

/// The failures found so far are the page's: a report without any keeps the last list, a
/// cancel keeps it and says the search was cancelled, and the next search starts with none.
#[test]
fn the_failures_found_so_far_and_the_cancel_are_the_pages() {
    let report = |job, found: Option<&[(&str, &str)]>, done| {
        Action::Search(Search::Report {
            job,
            report: "{\"kind\":\"progress\"}".into(),
            found: found.map(|f| {
                (f.iter())
                    .map(|(w, s)| (w.to_string(), s.to_string()))
                    .collect()
            }),
            done,
        })
    };
    let words =
        |s: &State| -> Vec<String> { s.explore.found.iter().map(|(w, _)| w.to_string()).collect() };
    let s = Rc::new(State::new(gallery("19-").to_string()))
        .apply(Action::Search(Search::Start))
        .apply(report(1, Some(&[("crash at 1s", "x")]), false));
    assert_eq!(words(&s), ["crash at 1s"]);
    assert_eq!(&*s.explore.found[0].1, "x", "the counterexample script");
    let s = s.apply(report(1, None, false));
    assert_eq!(
        words(&s),
        ["crash at 1s"],
        "no new failures: the list stays"
    );
    let s = s.apply(report(
        1,
        Some(&[("crash at 1s", "x"), ("stale at 2s", "y")]),
        false,
    ));
    assert_eq!(words(&s), ["crash at 1s", "stale at 2s"]);
    assert!(!s.explore.cancelled);
    let cancelled = s.clone().apply(Action::Search(Search::Cancel));
    assert!(cancelled.explore.cancelled && !cancelled.explore.running);
    assert_eq!(
        words(&cancelled),
        words(&s),
        "a cancel keeps what was found"
    );
    let late = cancelled
        .clone()
        .apply(report(1, Some(&[("late", "z")]), true));
    assert_eq!(
        words(&late),
        words(&s),
        "the cancelled search's worker is not heard"
    );
    let again = cancelled.clone().apply(Action::Search(Search::Cancel));
    assert!(again.explore.cancelled, "a second cancel changes nothing");
    let next = cancelled.apply(Action::Search(Search::Start));
    assert!(!next.explore.cancelled && next.explore.found.is_empty());
    // Another scenario: the search and what it found go.
    let left = s.apply(Action::Script(Script::Open(gallery("20-").to_string())));
    assert!(left.explore.found.is_empty() && !left.explore.cancelled);
    let cancelled_first = Rc::new(State::new(gallery("19-").to_string()))
        .apply(Action::Search(Search::Start))
        .apply(Action::Search(Search::Cancel));
    assert!(
        cancelled_first.explore.cancelled,
        "cancelled before any report"
    );
    let left = cancelled_first.apply(Action::Script(Script::Open(gallery("20-").to_string())));
    assert!(
        !left.explore.cancelled,
        "left behind: nothing to say about it"
    );
}

/// The controller under test is one of the script's `controller NAME` lines or none: an
/// unknown name is ignored, and an edit that removes the controller drops the choice.
#[test]
fn the_controller_under_test_is_one_of_the_scripts() {
    let script = "kind Pod\ncontroller op for Pod\ncontroller\thelper for Pod\ncontrollers x\n#controller y\nrun 1s\n";
    assert_eq!(controllers(script), ["op", "helper"]);
    let many: String = (0..100)
        .map(|i| format!("controller c{i} for Pod\n"))
        .collect();
    assert_eq!(controllers(&many).len(), CONTROLLERS_MAX);
    let s = Rc::new(State::new(script.to_string()));
    let s = s.apply(Action::Search(Search::Against("op".into())));
    assert_eq!(&*s.explore.against, "op");
    let s = s.apply(Action::Search(Search::Against("nobody".into())));
    assert_eq!(
        &*s.explore.against, "op",
        "not a controller of the script: ignored"
    );
    let kept = s
        .clone()
        .apply(Action::Script(Script::Edit(format!("{script}# more\n"))));
    assert_eq!(
        &*kept.explore.against, "op",
        "an edit that keeps it keeps the choice"
    );
    let gone = s.apply(Action::Script(Script::Edit(script.replace("op", "other"))));
    assert_eq!(
        &*gone.explore.against, "",
        "its controller gone: every controller"
    );
    let every = kept.apply(Action::Search(Search::Against(String::new())));
    assert_eq!(&*every.explore.against, "");
}

/// A clock tick shares the script, the kept script and the diagnostics with the state
/// before it rather than copying them, and an edit to the same text is no new state.
#[test]
fn a_tick_shares_the_script_and_an_echo_changes_nothing() {
    let src = listwatch_script::gallery::GALLERY[0].1;
    // A broken edit: the last good run plays on, with the edit's diagnostics.
    let s = Rc::new(State::new(src.to_string()))
        .apply(Action::Script(Script::Edit(format!("{src}\nbogus line"))));
    let mut s = Rc::try_unwrap(s).ok().expect("a new state");
    s.kept = Some(Rc::from("kept"));
    let s = Rc::new(s).apply(Action::Moment(Moment::Play));
    let ticked = s.clone().apply(Action::Moment(Moment::Tick(50.0)));
    assert!(ticked.cursor > s.cursor, "the clock moved");
    assert!(Rc::ptr_eq(&s.source, &ticked.source));
    assert!(Rc::ptr_eq(
        s.kept.as_ref().unwrap(),
        ticked.kept.as_ref().unwrap()
    ));
    assert!(!ticked.diagnostics.is_empty());
    assert!(Rc::ptr_eq(&s.diagnostics.0, &ticked.diagnostics.0));
    let echo = ticked
        .clone()
        .apply(Action::Script(Script::Edit(ticked.source.to_string())));
    assert!(Rc::ptr_eq(&echo, &ticked), "the same text: the same state");
    // Fixed, and edited again without errors: the empty list stays the same one, so the
    // editor (which compares diagnostics by pointer) does not draw them again.
    let fixed = echo.apply(Action::Script(Script::Edit(src.to_string())));
    assert!(fixed.diagnostics.is_empty() && !fixed.stale);
    let again = fixed
        .clone()
        .apply(Action::Script(Script::Edit(format!("{src}\n# a note"))));
    assert!(Rc::ptr_eq(&fixed.diagnostics.0, &again.diagnostics.0));
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
#[test]
fn another_scenario_opens_at_its_start_and_an_edit_keeps_the_moment() {
    let s = std::rc::Rc::new(State::new(gallery("11-").to_string()))
        .apply(Action::Moment(Moment::Seek(42)));
    let edited = s.clone().apply(Action::Script(Script::Edit(format!(
        "{}\nseed 7\n",
        gallery("11-")
    ))));
    assert_eq!(edited.cursor, 42, "an edit keeps the moment");
    let opened = s
        .clone()
        .apply(Action::Script(Script::Open(gallery("30-").to_string())));
    assert_eq!((opened.cursor, opened.playing), (0, false));
    let playing = s
        .apply(Action::Moment(Moment::Play))
        .apply(Action::Script(Script::Open(gallery("39-").to_string())));
    assert_eq!((playing.cursor, playing.playing), (0, false));
    let mut tour = playing.apply(Action::Moment(Moment::Play));
    for _ in 0..1000 {
        if !tour.playing {
            break;
        }
        tour = tour.apply(Action::Moment(Moment::Tick(50.0)));
    }
    let said = &tour.run.as_ref().unwrap().sim.trace()[tour.cursor - 1].kind;
    assert!(
        matches!(
            said,
            listwatch_core::EventKind::Say(listwatch_core::SayEvent { wait: true, .. })
        ),
        "stopped at the tour's first remark: {said:?}"
    );
    assert!(waiting_at(tour.run.as_ref().unwrap(), tour.cursor));
}

/// Playback runs in virtual time: at 1× three seconds of real time are at most three of
/// virtual time (less only by the beats of the events on the way), ten times as much at 10×;
/// events of one moment are played one a tick at most, in order; between events the clock
/// moves on while the event on screen stays.
#[test]
fn playback_runs_in_virtual_time_at_the_speed_it_is_set_to() {
    use crate::playback::{BEAT_MS, SPEED_MAX};
    let src = "kind Pod\nkind Other\ncontroller c for Pod children Other\n\
               every 2s 5 times create Pod p{i}\nrun 30s\n";
    let s = std::rc::Rc::new(State::new(src.to_string()));
    let tick = TICK_MS as f64;
    for (speed, real_ms) in [(1.0, 3000.0), (10.0, 1000.0)] {
        let mut p = s
            .clone()
            .apply(Action::Moment(Moment::Speed(speed)))
            .apply(Action::Moment(Moment::Play));
        let (mut between, mut most) = (0, 0);
        for _ in 0..(real_ms / tick) as usize {
            let before = (p.cursor, p.at_ms);
            p = p.apply(Action::Moment(Moment::Tick(tick)));
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
        .apply(Action::Moment(Moment::Speed(SPEED_MAX)))
        .apply(Action::Moment(Moment::Play));
    for _ in 0..200 {
        p = p.apply(Action::Moment(Moment::Tick(tick)));
    }
    assert_eq!((p.cursor, p.playing), (s.len(), false));
    // A step puts the clock at the event on screen.
    let stepped = p
        .apply(Action::Moment(Moment::Seek(3)))
        .apply(Action::Moment(Moment::StepForward));
    let t = stepped.run.as_ref().unwrap().sim.trace()[3].time_ms.ms() as f64;
    assert_eq!((stepped.cursor, stepped.at_ms), (4, t));
}

/// Opening another scenario stops the search of the one left behind and clears its results;
/// opening a counterexample the search found (an edit) keeps them.
#[test]
fn another_scenario_stops_the_search_and_clears_its_results() {
    let s = std::rc::Rc::new(State::new(gallery("19-").to_string()))
        .apply(Action::Search(Search::Start))
        .apply(Action::Search(Search::Report {
            job: 1,
            report: "{\"kind\":\"progress\"}".into(),
            found: None,
            done: false,
        }));
    assert!(s.explore.running && s.explore.report.is_some());
    let kept = s.clone().apply(Action::Script(Script::Edit(format!(
        "{}\n# found\n",
        gallery("19-")
    ))));
    assert!(kept.explore.running && kept.explore.report.is_some());
    let left = s.apply(Action::Script(Script::Open(gallery("20-").to_string())));
    assert!(!left.explore.running && left.explore.report.is_none());
    assert_eq!(
        left.explore.job, 2,
        "the next number: panels.js drops what it showed"
    );
    let late = left.clone().apply(Action::Search(Search::Report {
        job: 1,
        report: "{}".into(),
        found: None,
        done: true,
    }));
    assert!(late.explore.report.is_none(), "the old search is not heard");
    let again = left.apply(Action::Search(Search::Start));
    assert!(again.explore.running && again.explore.job == 3);
}

/// A link carries the event of its moment, so it opens there and not at the last event of
/// that millisecond (gallery 02: the 410 is event 69 of the 74 at 2.200 s); an event the
/// run does not have at that moment is not trusted.
#[test]
fn a_link_opens_at_its_event_not_at_the_end_of_its_millisecond() {
    let src = gallery("02-");
    let s = std::rc::Rc::new(State::new(src.to_string())).apply(Action::Moment(Moment::Seek(69)));
    let trace = s.run.as_ref().unwrap().sim.trace();
    assert!(trace[68].kind.gone().is_some(), "event 69 is the 410");
    assert_eq!(s.now_ms(), TimeMs(2200));
    let at = crate::link::fragment_for(&s.source, s.now_ms(), s.cursor);
    let shared = listwatch_script::share::decode(&at).unwrap();
    let open = |shared: Shared| {
        std::rc::Rc::new(State::new(String::new())).apply(Action::Script(Script::OpenLink {
            shared,
            keep_previous: false,
        }))
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
#[test]
fn themes_keep_their_stored_words() {
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

#[test]
fn reducer_keeps_the_last_good_run_while_the_script_is_broken() {
    let src = listwatch_script::gallery::GALLERY[0].1.to_string();
    let s = std::rc::Rc::new(State::new(src.clone()));
    assert!(s.run.is_some() && s.diagnostics.is_empty());
    let s = s.apply(Action::Script(Script::Edit(format!("{src}\nbogus line"))));
    assert!(s.stale && s.run.is_some());
    assert_eq!(s.diagnostics[0].line, src.lines().count() + 2);
    // A comment changes nothing that runs: the run is kept, expectations are re-checked.
    let fixed = std::rc::Rc::new(State::new(src.clone()));
    let before = fixed.run.clone().unwrap();
    let (first, rest) = src.split_once('\n').unwrap();
    let commented = fixed.apply(Action::Script(Script::Edit(format!(
        "{first}\n# a note\n{rest}"
    ))));
    assert!(
        std::rc::Rc::ptr_eq(&before, commented.run.as_ref().unwrap()),
        "same run reused"
    );
    assert_eq!(commented.outcomes.len(), before_outcomes(&src));
    assert!(
        commented.outcomes.iter().all(|(x, _)| x.line > 1),
        "expectations moved down a line"
    );
    let reseeded = commented.apply(Action::Script(Script::Edit(format!("{src}\nseed 99"))));
    assert!(
        !std::rc::Rc::ptr_eq(&before, reseeded.run.as_ref().unwrap()),
        "a real change runs again"
    );
    let s = s
        .apply(Action::Moment(Moment::StepForward))
        .apply(Action::Moment(Moment::StepForward));
    assert_eq!(s.cursor, 2);
    let s = s.apply(Action::Moment(Moment::StepBack));
    assert_eq!(s.cursor, 1);
}

/// A seek goes to the moment asked, never past the run's end, with the clock at that event;
/// a seek to the moment on screen is no new state (no render).
#[test]
fn a_seek_moves_the_moment_within_the_run() {
    let s = Rc::new(State::new(gallery("02-").to_string()));
    let len = s.len();
    assert!(len > 40, "gallery 02 has {len} events");
    let at = s.clone().apply(Action::Moment(Moment::Seek(40)));
    let t = at.run.as_ref().unwrap().sim.trace()[39].time_ms;
    assert_eq!((at.cursor, at.now_ms(), at.at_ms), (40, t, t.ms() as f64));
    let past = at.clone().apply(Action::Moment(Moment::Seek(len + 1000)));
    assert_eq!(past.cursor, len, "clamped to the run's end");
    let same = at.clone().apply(Action::Moment(Moment::Seek(40)));
    assert!(
        Rc::ptr_eq(&same, &at),
        "the moment on screen: the same state"
    );
    let start = at.apply(Action::Moment(Moment::Seek(0)));
    assert_eq!((start.cursor, start.now_ms()), (0, TimeMs::ZERO));
}

/// Play plays (from the start when at the end), Pause stops, and a paused clock's tick is no
/// new state; opening the fault menu pauses too.
#[test]
fn play_and_pause() {
    let s = Rc::new(State::new(gallery("02-").to_string()));
    let len = s.len();
    let playing = s.clone().apply(Action::Moment(Moment::Play));
    assert!(playing.playing);
    let ticked = playing
        .clone()
        .apply(Action::Moment(Moment::Tick(TICK_MS as f64)));
    assert!(
        ticked.cursor > playing.cursor || ticked.at_ms > playing.at_ms,
        "the clock runs"
    );
    let paused = ticked.apply(Action::Moment(Moment::Pause));
    assert!(!paused.playing);
    let still = paused
        .clone()
        .apply(Action::Moment(Moment::Tick(TICK_MS as f64)));
    assert!(Rc::ptr_eq(&still, &paused), "a paused tick changes nothing");
    let at_end = paused.apply(Action::Moment(Moment::Seek(len)));
    let again = at_end.apply(Action::Moment(Moment::Play));
    assert_eq!(
        (again.cursor, again.playing),
        (0, true),
        "from the start again"
    );
    let menu = again.apply(Action::Page(Page::FaultMenu(Some(FaultTarget::Link(0)))));
    assert_eq!(
        (menu.playing, menu.fault_menu),
        (false, Some(FaultTarget::Link(0)))
    );
}

/// A link to another script and Restore leave the search behind as a picked scenario does: it
/// stops and its results go; a link to the same script keeps them.
#[test]
fn a_link_or_restore_to_another_script_clears_the_search() {
    let searching = |src: &str| {
        Rc::new(State::new(src.to_string()))
            .apply(Action::Search(Search::Start))
            .apply(Action::Search(Search::Report {
                job: 1,
                report: "{}".into(),
                found: None,
                done: false,
            }))
    };
    let link = |script: &str| {
        Action::Script(Script::OpenLink {
            shared: Shared {
                script: script.to_string(),
                at_ms: None,
                events: None,
            },
            keep_previous: true,
        })
    };
    let s = searching(gallery("19-"));
    assert!(s.explore.running && s.explore.report.is_some());
    let same = s.clone().apply(link(gallery("19-")));
    assert!(same.explore.running && same.explore.report.is_some());
    let other = s.apply(link(gallery("20-")));
    assert!(!other.explore.running && other.explore.report.is_none());
    let s = other.apply(Action::Search(Search::Start));
    assert!(s.explore.running);
    let restored = s.apply(Action::Script(Script::Restore));
    assert_eq!(&*restored.source, gallery("19-"));
    assert!(!restored.explore.running && restored.explore.job == 4);
}

/// Compare two runs keeps its picks and its clock in the page's state: B starts as a fix twin,
/// a file not in the gallery is no pick, and what `compare.js` says becomes its action.
#[test]
fn the_comparisons_picks_and_clock_are_the_pages() {
    let said = |s: &str| Action::Compare(Compare::from_said(s).expect(s));
    let s = Rc::new(State::new(String::new()));
    let c = &s.compare;
    assert!(
        !c.versions && c.a.is_empty() && c.b.contains("fixed"),
        "{c:?}"
    );
    assert_eq!(
        (&*c.setting, &*c.version_a, &*c.version_b),
        ("kubernetes", "1.34", "1.35")
    );
    let file = listwatch_script::gallery::INDEX[3].0;
    let s = s
        .apply(said(&format!("a:{file}")))
        .apply(said(&format!("b:{file}")))
        .apply(said("clock:22000"));
    assert_eq!(
        (&*s.compare.a, &*s.compare.b, s.compare.clock_ms),
        (file, file, 22000)
    );
    let same = s.clone().apply(said("b:nothing.lw")).apply(said("a:../x"));
    assert!(Rc::ptr_eq(&same, &s), "not in the gallery: no pick");
    let editor = s.clone().apply(said("a:"));
    assert!(editor.compare.a.is_empty(), "the script in the editor");
    assert!(
        s.clone().apply(said("b:")).compare.b == s.compare.b,
        "B is always a file"
    );
    let v = s
        .apply(said("versions:true"))
        .apply(said("setting:controller-runtime,0.22,0.23"))
        .apply(said("version-b:0.21"));
    let c = &v.compare;
    assert!(c.versions);
    assert_eq!(
        (&*c.setting, &*c.version_a, &*c.version_b),
        ("controller-runtime", "0.22", "0.21")
    );
    for bad in [
        "",
        "a",
        "clock:",
        "clock:-1",
        "clock:1.5",
        "versions:yes",
        "setting:k,1",
        "setting:k,1,2,3",
        "mode:x",
    ] {
        assert_eq!(Compare::from_said(bad), None, "{bad:?}");
    }
}
