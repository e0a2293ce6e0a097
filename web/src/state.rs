//! The page's state and its reducer (the shape of Yew's function_todomvc): every user action is
//! an `Action`, and `reduce` is the only place state changes.

use std::cell::RefCell;
use std::rc::Rc;

use listwatch_core::verdict::Outcome;
use listwatch_core::view::Timeline;
use listwatch_core::{EventId, Sim, TimeMs};
use listwatch_script::explore::MAX_BUDGET_SCHEDULES;
use listwatch_script::share::Shared;
use listwatch_script::{Diagnostic, Expectation};

/// Events simulated per slice of a long run: about 30 ms of work in the page, so typing and
/// playing stay responsive while a scenario near the event cap is computed.
#[cfg(not(test))]
pub const SLICE_EVENTS: usize = 40_000;
/// A test build slices finer: its long-run test then needs a run of thousands of events, not of
/// a hundred thousand, which a debug build in the browser takes minutes to show.
#[cfg(test)]
pub const SLICE_EVENTS: usize = 2_000;

/// A run still being computed, a slice per `Action::Continue`.
pub struct Computing {
    pub sim: Sim,
    pub scenario: listwatch_script::Scenario,
    pub source: Rc<str>,
}

/// How far a computing run is: events so far, virtual time reached, the run's end and its event
/// cap (it stops at whichever it reaches first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub events: usize,
    pub now_ms: TimeMs,
    pub end_ms: TimeMs,
    pub max_events: u64,
}

impl Progress {
    /// Thousandths of the run done: of its virtual time or of its event cap, whichever is
    /// nearer its end (a run of many events a millisecond ends at the cap long before its end).
    pub fn permille(&self) -> u64 {
        let part = |n: u64, of: u64| (n.saturating_mul(1000) / of.max(1)).min(1000);
        part(self.now_ms.ms(), self.end_ms.ms()).max(part(self.events as u64, self.max_events))
    }
}

/// A finished run and what the page derives from it once.
pub struct Loaded {
    /// The script this run is of (the editor may hold a broken edit of it meanwhile).
    pub source: Rc<str>,
    pub sim: Sim,
    pub timeline: Timeline,
    pub title: String,
    /// Swimlanes, markers, fault windows and jumps, computed once per run by the core.
    pub analysis: listwatch_core::analysis::Analysis,
    /// What each revision's object holds beyond `spec N`/`status N` (its `ObjectFields` body),
    /// by RV in commit order: the picture's tooltips say it.
    pub fields: Vec<(listwatch_core::Rv, listwatch_core::BodyRef)>,
}

impl Loaded {
    /// The fields of the object at revision `rv`, in words (`labels app=web; spec.image="v1"`).
    pub fn fields_at(&self, rv: listwatch_core::Rv) -> Option<String> {
        let i = self.fields.binary_search_by_key(&rv, |f| f.0).ok()?;
        Some(listwatch_core::Labels::fields(&self.sim, self.fields[i].1))
    }
}

/// Every `ObjectFields` event's RV and body, in trace order (which is RV order: etcd commits one
/// revision after another).
fn fields_by_rv(sim: &Sim) -> Vec<(listwatch_core::Rv, listwatch_core::BodyRef)> {
    let out: Vec<_> = (sim.trace().iter())
        .filter_map(|e| match e.kind {
            listwatch_core::EventKind::Store(listwatch_core::StoreEvent::ObjectFields {
                rv,
                body,
                ..
            }) => Some((rv, body)),
            _ => None,
        })
        .collect();
    // Already in RV order: the trace is; a sort would only hide a broken trace.
    debug_assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
    out
}

/// A run is equal only to itself: props holding an `Rc<Loaded>` compare it by identity, in O(1),
/// so a component re-renders when the run is replaced and never because a clock ticked.
impl PartialEq for Loaded {
    fn eq(&self, o: &Self) -> bool {
        std::ptr::eq(self, o)
    }
}
impl Eq for Loaded {}

/// A share compared by identity, in O(1): the state makes a new one whenever what it holds
/// changes (so equal contents in two shares are two states), and holding the `Rc` keeps its
/// address from being reused meanwhile.
pub struct Ptr<T: ?Sized>(pub Rc<T>);

impl<T: ?Sized> Clone for Ptr<T> {
    fn clone(&self) -> Self {
        Ptr(self.0.clone())
    }
}
impl<T: ?Sized> PartialEq for Ptr<T> {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.0, &o.0)
    }
}
impl<T: ?Sized> std::ops::Deref for Ptr<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
impl<T: Default> Default for Ptr<T> {
    fn default() -> Self {
        Ptr(Rc::default())
    }
}
impl<T> Ptr<T> {
    pub fn new(value: T) -> Ptr<T> {
        Ptr(Rc::new(value))
    }
}

/// The page's theme: the operating system's, or one chosen. Stored (localStorage, shared with
/// nothing else) as `system`, `light` or `dark`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    #[default]
    System,
    Light,
    Dark,
}

impl Theme {
    /// In the order the theme menu lists them.
    pub const ALL: [Theme; 3] = [Theme::System, Theme::Light, Theme::Dark];

    /// The stored word, which is also the menu's option and the `data-theme` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// The theme a stored word names, if any.
    pub fn from_stored(word: &str) -> Option<Theme> {
        match word {
            "system" => Some(Theme::System),
            "light" => Some(Theme::Light),
            "dark" => Some(Theme::Dark),
            _ => None,
        }
    }
}

/// The page's state, plain Rust (yew's glue is `reducer.rs`). What a clock tick copies is shared,
/// not copied: the script, the kept script, the run and the lists are `Rc`s. Two states are
/// equal when the run and the lists are the same ones (`Ptr`, `Loaded`'s identity) and
/// everything else is equal: an action that makes a new list or run makes a new state.
#[derive(Clone, PartialEq)]
pub struct State {
    pub source: Rc<str>,
    pub run: Option<Rc<Loaded>>,
    /// The expectations of the current text, checked against `run`.
    pub outcomes: Ptr<Vec<(Expectation, Outcome)>>,
    /// The script has errors; the last good run stays on screen.
    pub stale: bool,
    pub diagnostics: Ptr<Vec<Diagnostic>>,
    /// Events applied: the moment on screen.
    pub cursor: usize,
    pub playing: bool,
    /// Virtual seconds per real second while playing (log-scale control, `playback::SPEED_MIN`
    /// to `SPEED_MAX`).
    pub speed: f64,
    /// The virtual clock on screen: from the last applied event's time up to the next event's
    /// (playback in virtual time stands between events; every other move puts it at the event).
    pub at_ms: f64,
    /// How far the beat of the event on screen is, 0 to 1 (`playback::Clock`): a message of a
    /// link without delay crosses it during its event's beat.
    pub beat: f64,
    pub selected: Option<EventId>,
    pub help: bool,
    /// Why the link in the address bar could not be opened (the autosaved text was kept).
    pub link_error: Option<String>,
    /// A short notice ("Link copied").
    pub notice: Option<String>,
    /// The autosaved script, set aside while a link's script is on screen: the autosave is not
    /// overwritten until the user edits the link's script or accepts it, and "Restore" brings
    /// this back.
    pub kept: Option<Rc<str>>,
    /// The script on screen while one is kept came from "Paste your logs", not from a link.
    pub imported: bool,
    /// A long run the user cancelled: how far it had gone (the last finished run stays on
    /// screen, and the text is not run again until asked).
    pub cancelled: Option<Progress>,
    /// What the fault menu is open on, if it is.
    pub fault_menu: Option<FaultTarget>,
    /// The scripts before each fault added by hand, newest last: Undo brings them back.
    pub undo: Ptr<Vec<Rc<str>>>,
    /// A long run being computed in slices (the last finished run stays on screen meanwhile).
    pub computing: Option<Ptr<RefCell<Option<Computing>>>>,
    pub progress: Option<Progress>,
    pub theme: Theme,
    /// CodeMirror has replaced the highlighted preview.
    pub editor_loaded: bool,
    pub explore: Explore,
    pub compare: Comparison,
}

/// The Explore panel's search: what it is set to, where it is and what it found. `panels.js`
/// draws the panel from it and asks `worker.js` for search `job` while `running`.
#[derive(Clone, PartialEq)]
pub struct Explore {
    /// Schedules to try at most.
    pub budget: u32,
    /// Keep searching after the first failure, up to the budget.
    pub all: bool,
    /// The controller under test (faults only against it, as `explore --controller NAME`): one
    /// of the script's `controller NAME` lines (`controllers`), or empty for every controller.
    pub against: Rc<str>,
    /// The search on screen: each start takes the next number, and reports of an older one
    /// are ignored.
    pub job: u32,
    pub running: bool,
    /// The reader cancelled the search on screen: its last figures and failures stay until the
    /// next search.
    pub cancelled: bool,
    /// The worker's last report (`protocol::FromWorker`'s progress, done or error) as JSON,
    /// without its failures (`found`): only `panels.js` reads its fields. Shared, so a render
    /// copies no text. A new search clears it.
    pub report: Option<Rc<str>>,
    /// The failures found so far, (the faults in words, the counterexample script): a progress
    /// report carries them only when there are new ones, so the last list stays until the next.
    pub found: Ptr<Vec<(Rc<str>, Rc<str>)>>,
}

// The budget is kept as a `u32` (a plain number in JS); every budget allowed fits.
const _: () = assert!(MAX_BUDGET_SCHEDULES <= u32::MAX as u64);

impl Default for Explore {
    fn default() -> Explore {
        Explore {
            budget: 2000,
            all: false,
            against: Rc::from(""),
            job: 0,
            running: false,
            cancelled: false,
            report: None,
            found: Ptr::default(),
        }
    }
}

/// At most this many controllers are offered as the one under test.
pub const CONTROLLERS_MAX: usize = 64;

/// The names of the script's `controller NAME` lines, in order (the choice of the controller
/// under test): read from the text, so a script with errors still offers them.
pub fn controllers(source: &str) -> Vec<&str> {
    (source.lines())
        .filter_map(|l| l.strip_prefix("controller"))
        .filter(|rest| rest.starts_with([' ', '\t']))
        .filter_map(|rest| rest.split_whitespace().next())
        .take(CONTROLLERS_MAX)
        .collect()
}

/// Compare two runs: what is picked and the clock both runs share. `web/compare.js` draws it,
/// with the runs it got from the worker.
#[derive(Clone, PartialEq, Debug)]
pub struct Comparison {
    /// One script under two versions, rather than two scripts.
    pub versions: bool,
    /// Run A (or the one script): a gallery file, or empty for the script in the editor.
    pub a: Rc<str>,
    /// Run B: a gallery file.
    pub b: Rc<str>,
    /// The setting whose versions are compared (`kubernetes`, `controller-runtime`) and its two
    /// versions.
    pub setting: Rc<str>,
    pub version_a: Rc<str>,
    pub version_b: Rc<str>,
    /// The moment both runs show, in virtual milliseconds.
    pub clock_ms: u64,
}

impl Default for Comparison {
    fn default() -> Comparison {
        let index = listwatch_script::gallery::INDEX;
        // B starts as a fix twin: what a comparison is most often for.
        let b = (index.iter().find(|(f, _)| f.contains("fixed")))
            .or(index.first())
            .map_or("", |(f, _)| f);
        Comparison {
            versions: false,
            a: Rc::from(""),
            b: Rc::from(b),
            setting: Rc::from("kubernetes"),
            version_a: Rc::from("1.34"),
            version_b: Rc::from("1.35"),
            clock_ms: 0,
        }
    }
}

/// What Compare two runs says: a pick or the clock.
#[derive(Clone)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub enum Compare {
    Versions(bool),
    /// Run A's gallery file, or empty for the script in the editor; a file not in the gallery is
    /// ignored.
    A(String),
    /// Run B's gallery file; a file not in the gallery is ignored.
    B(String),
    /// Another setting, with the pair of versions it starts with.
    Setting {
        setting: String,
        version_a: String,
        version_b: String,
    },
    VersionA(String),
    VersionB(String),
    Clock(u64),
}

impl Compare {
    /// What `compare.js` says (`versions:true|false`, `a:FILE`, `b:FILE`,
    /// `setting:NAME,A,B`, `version-a:V`, `version-b:V`, `clock:MS`) as the action; anything else
    /// is none.
    pub fn from_said(said: &str) -> Option<Compare> {
        let (what, value) = said.split_once(':')?;
        let value = value.to_string();
        Some(match what {
            "versions" => Compare::Versions(value.parse().ok()?),
            "a" => Compare::A(value),
            "b" => Compare::B(value),
            "setting" => {
                let mut parts = value.split(',').map(str::to_string);
                let (setting, version_a, version_b) = (parts.next()?, parts.next()?, parts.next()?);
                if parts.next().is_some() {
                    return None;
                }
                Compare::Setting {
                    setting,
                    version_a,
                    version_b,
                }
            }
            "version-a" => Compare::VersionA(value),
            "version-b" => Compare::VersionB(value),
            "clock" => Compare::Clock(value.parse().ok()?),
            _ => return None,
        })
    }
}

impl Comparison {
    fn reduce(&mut self, action: Compare) {
        let in_gallery = |f: &str| {
            listwatch_script::gallery::INDEX
                .iter()
                .any(|(g, _)| *g == f)
        };
        match action {
            Compare::Versions(v) => self.versions = v,
            Compare::A(f) => {
                if f.is_empty() || in_gallery(&f) {
                    self.a = f.into();
                }
            }
            Compare::B(f) => {
                if in_gallery(&f) {
                    self.b = f.into();
                }
            }
            Compare::Setting {
                setting,
                version_a,
                version_b,
            } => {
                self.setting = setting.into();
                self.version_a = version_a.into();
                self.version_b = version_b.into();
            }
            Compare::VersionA(v) => self.version_a = v.into(),
            Compare::VersionB(v) => self.version_b = v.into(),
            Compare::Clock(ms) => self.clock_ms = ms,
        }
    }
}

/// Something in the picture a fault can be injected into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultTarget {
    /// A controller (its watchers or its queue).
    Controller(usize),
    /// The link between a controller and its apiserver.
    Link(usize),
    /// An apiserver (one of its watch caches: the kind).
    Apiserver(usize, usize),
}

/// Every user action, in families: `State::apply` matches each family once, and each family's
/// reducer matches all of its variants, so a new action cannot fall through a catch-all.
#[derive(Clone)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub enum Action {
    Script(Script),
    Moment(Moment),
    Page(Page),
    Search(Search),
    Compare(Compare),
}

/// Actions that change the script on screen or its run.
#[derive(Clone)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub enum Script {
    Edit(String),
    /// Another scenario (the gallery, the tour): shown from its start, paused, and the search
    /// of the one left behind stops.
    Open(String),
    /// Open what a link carries (on load or when the fragment changes). With `keep_previous`,
    /// the text it replaces is kept aside (see `State::kept`).
    OpenLink {
        shared: Shared,
        keep_previous: bool,
    },
    /// Back to the kept (autosaved) script.
    Restore,
    /// Keep the link's script: it becomes the autosaved text.
    AcceptLink,
    /// A scenario "Paste your logs" made: shown like a link's script, the script it replaces
    /// kept for Restore.
    OpenImported(String),
    /// Stop computing a long run (its progress banner's Cancel).
    CancelRun,
    /// Run the same text again from scratch.
    Rerun,
    /// Append a timeline line (a fault at this moment) and re-run, keeping the moment.
    InjectFault(String),
    /// Back to the script before the last fault added by hand.
    Undo,
    /// The default scenario, fetched on a first visit: shown only if the editor is still empty.
    FirstVisit(String),
    /// Simulate the next slice of a long run.
    Continue,
}

/// Actions that move the moment on screen: play, step, seek, the clock, jumps.
#[derive(Clone, Copy)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub enum Moment {
    Play,
    Pause,
    StepBack,
    StepForward,
    Seek(usize),
    Speed(f64),
    /// One animation frame of `elapsed_ms`.
    Tick(f64),
    /// Jump to an event and explain it.
    JumpTo(EventId),
}

/// The rest of the page: help, notices, banners, the fault menu, theme, the editor.
#[derive(Clone)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub enum Page {
    ToggleHelp,
    Notice(Option<String>),
    DismissLinkError,
    /// A link that could not be opened: say why, touch nothing else.
    LinkError(String),
    /// Open (or close) the fault menu; playback pauses.
    FaultMenu(Option<FaultTarget>),
    /// The theme chosen.
    Theme(Theme),
    /// CodeMirror is loaded and shows the script.
    EditorLoaded,
}

/// The Explore panel's search.
#[derive(Clone)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub enum Search {
    /// Schedules to try at most (clamped to 1..=`MAX_BUDGET_SCHEDULES`).
    Budget(u32),
    /// Whether the explorer goes on after the first failure.
    All(bool),
    /// Search the script on screen (a search still running is stopped).
    Start,
    Cancel,
    /// The controller under test (empty: every controller); a name that is not one of the
    /// script's controllers is ignored.
    Against(String),
    /// Search `job`'s worker reports its progress, its result (`done`) or an error (`done`),
    /// as JSON without its failures, and the failures found so far when the report has them; a
    /// report of any other search than the one running is dropped.
    Report {
        job: u32,
        report: String,
        found: Option<Vec<(String, String)>>,
        done: bool,
    },
}

impl State {
    pub fn new(source: String) -> State {
        let mut s = State {
            source: Rc::from(""),
            run: None,
            outcomes: Ptr::new(vec![]),
            stale: false,
            diagnostics: Ptr::default(),
            cursor: 0,
            playing: false,
            speed: 1.0,
            at_ms: 0.0,
            beat: 1.0,
            selected: None,
            help: false,
            link_error: None,
            notice: None,
            kept: None,
            imported: false,
            cancelled: None,
            fault_menu: None,
            undo: Ptr::default(),
            computing: None,
            progress: None,
            theme: Theme::System,
            editor_loaded: false,
            explore: Explore::default(),
            compare: Comparison::default(),
        };
        s.load(source.into());
        s
    }

    /// Shows a link's script at its moment. The text it replaces goes to `kept` when asked (and
    /// different), unless something is kept already: that is still the autosaved text.
    pub fn open_link(&mut self, shared: Shared, keep_previous: bool) {
        if keep_previous && self.kept.is_none() && *self.source != shared.script {
            self.kept = Some(self.source.clone());
        }
        if shared.script != *self.source {
            self.load(shared.script.into());
            self.cursor = 0;
            self.leave_explore();
        }
        if let Some(run) = &self.run {
            let trace = run.sim.trace();
            // The link's event where this run has it at the link's moment (the same script runs
            // the same), else the last event of that millisecond.
            let at_ms = shared.at_ms.unwrap_or(TimeMs::ZERO);
            let event = shared.events.map(|n| n as usize).filter(|&n| {
                n <= trace.len() && n.checked_sub(1).is_none_or(|i| trace[i].time_ms == at_ms)
            });
            self.cursor = event
                .or(shared.at_ms.map(|t| Timeline::index_at_time(&run.sim, t)))
                .unwrap_or(self.cursor)
                .min(trace.len());
        }
        self.playing = false;
        self.selected = None;
        self.link_error = None;
        // The clock at the link's event (on load this runs outside the reducer).
        self.at_ms = self.now_ms().ms() as f64;
        self.beat = 1.0;
    }

    /// The search on screen was of a script left behind: it stops, and its results go. The
    /// next number tells `panels.js` that what it shows is of an older search.
    fn leave_explore(&mut self) {
        let x = &mut self.explore;
        if x.running || x.cancelled || x.report.is_some() || !x.found.is_empty() {
            x.job += 1;
            x.running = false;
            x.cancelled = false;
            x.report = None;
            x.found = Ptr::default();
        }
    }

    /// The view time on screen.
    pub fn now_ms(&self) -> TimeMs {
        match (&self.run, self.cursor) {
            (Some(r), c) if c > 0 => r.sim.trace()[c - 1].time_ms,
            _ => TimeMs::ZERO,
        }
    }

    fn load(&mut self, source: Rc<str>) {
        let parsed = listwatch_script::parse(&source);
        // An edit that leaves the run's configuration as it was (comments, narration-free
        // rewording of expectations, blank lines) keeps the run: only expectations are re-checked.
        let same_run = match (&parsed, &self.run) {
            (Ok(s), Some(run)) => *run.sim.config() == s.config && run.title == s.title,
            _ => false,
        };
        // A newer text replaces a run still being computed.
        self.computing = None;
        self.progress = None;
        self.cancelled = None;
        match parsed {
            Ok(scenario) if same_run => {
                self.check(&scenario);
                self.stale = false;
                self.run_diagnostics(&source);
            }
            Ok(scenario) => match Sim::new(scenario.config.clone()) {
                Ok(mut sim) => {
                    self.no_diagnostics();
                    if sim.run_slice(SLICE_EVENTS) {
                        self.install(source.clone(), scenario, sim);
                    } else {
                        self.progress = Some(progress(&sim));
                        self.stale = self.run.is_some();
                        self.computing = Some(Ptr::new(RefCell::new(Some(Computing {
                            sim,
                            scenario,
                            source: source.clone(),
                        }))));
                    }
                }
                Err(e) => {
                    self.diagnostics = Ptr::new(vec![Diagnostic::at(1, 1, 1, e.to_string())]);
                    self.stale = self.run.is_some();
                }
            },
            Err(d) => {
                self.diagnostics = Ptr::new(d);
                self.stale = self.run.is_some();
            }
        }
        // The controller under test is one of the script's, or none.
        if !self.explore.against.is_empty()
            && !controllers(&source).contains(&&*self.explore.against)
        {
            self.explore.against = Rc::from("");
        }
        self.source = source;
    }

    /// A run that stopped at a limit of the reconcile language: its diagnostic, at the statement
    /// that hit it (the run up to there stays on screen); else none.
    fn run_diagnostics(&mut self, source: &str) {
        let limit = (self.run.as_ref())
            .and_then(|r| listwatch_script::logic::stopped_at_limit(&r.sim, source));
        match limit {
            Some(d) => self.diagnostics = Ptr::new(vec![d]),
            None => self.no_diagnostics(),
        }
    }

    /// A script without errors: its diagnostics stay the same (empty) list when they already
    /// were, so the editor, which compares them by pointer, does not draw them again.
    fn no_diagnostics(&mut self) {
        if !self.diagnostics.is_empty() {
            self.diagnostics = Ptr::default();
        }
    }

    /// The next slice of a long run; the run goes on screen once it is over.
    fn continue_run(&mut self) {
        let Some(cell) = self.computing.clone() else {
            return;
        };
        let mut slot = cell.borrow_mut();
        let Some(c) = slot.as_mut() else {
            return;
        };
        if c.sim.run_slice(SLICE_EVENTS) {
            let c = slot.take().expect("computing");
            drop(slot);
            self.computing = None;
            self.progress = None;
            self.install(c.source, c.scenario, c.sim);
        } else {
            self.progress = Some(progress(&c.sim));
        }
    }

    /// A finished run goes on screen, with its expectations checked.
    fn install(&mut self, source: Rc<str>, scenario: listwatch_script::Scenario, sim: Sim) {
        let timeline = Timeline::new(&sim);
        let len = sim.trace().len();
        let analysis = listwatch_core::analysis::Analysis::of(&sim);
        let fields = fields_by_rv(&sim);
        self.run = Some(Rc::new(Loaded {
            source,
            timeline,
            sim,
            title: scenario.title.clone(),
            analysis,
            fields,
        }));
        self.cursor = self.cursor.min(len);
        self.check(&scenario);
        self.stale = false;
        let source = self
            .run
            .as_ref()
            .map(|r| r.source.clone())
            .unwrap_or_default();
        self.run_diagnostics(&source);
    }

    /// Re-checks the text's expectations against the run on screen.
    fn check(&mut self, scenario: &listwatch_script::Scenario) {
        if let Some(run) = &self.run {
            let outcomes = scenario
                .expectations
                .iter()
                .map(|x| {
                    (
                        x.clone(),
                        listwatch_core::verdict::check(&run.sim, &x.expect),
                    )
                })
                .collect();
            self.outcomes = Ptr::new(outcomes);
        }
    }

    pub fn len(&self) -> usize {
        self.run.as_ref().map(|r| r.sim.trace().len()).unwrap_or(0)
    }
}

fn progress(sim: &Sim) -> Progress {
    Progress {
        events: sim.trace().len(),
        now_ms: sim.now_ms(),
        end_ms: sim.config().end_ms,
        max_events: sim.config().limits.max_events,
    }
}

impl State {
    /// The state after `action`: the page's only way to change state (yew's `Reducible`, in
    /// `reducer.rs`, calls this). An action that changes nothing returns the same `Rc`, so yew
    /// renders nothing.
    pub fn apply(self: Rc<Self>, action: Action) -> Rc<Self> {
        // The clock's tick while paused changes nothing: no new state, no render.
        let tick = matches!(action, Action::Moment(Moment::Tick(_)));
        if tick && !self.playing {
            return self;
        }
        let mut s = (*self).clone();
        match action {
            Action::Script(a) => s.reduce_script(a),
            Action::Moment(a) => s.reduce_moment(a),
            Action::Page(a) => s.reduce_page(a),
            Action::Search(a) => s.reduce_search(a),
            Action::Compare(a) => s.compare.reduce(a),
        }
        // Every move but playback's own puts the clock at the event on screen.
        if !tick && (s.cursor != self.cursor || s.run != self.run) {
            s.at_ms = s.now_ms().ms() as f64;
            s.beat = 1.0;
        }
        // An action that changed nothing (the editor echoing the text it was given, a seek to
        // the moment on screen) keeps the same state: yew then renders nothing.
        if s == *self {
            return self;
        }
        Rc::new(s)
    }

    /// Actions that change the script: edits, faults by hand, links, restores.
    fn reduce_script(&mut self, action: Script) {
        match action {
            Script::Edit(src) => self.edit(src),
            Script::Open(src) => {
                self.edit(src);
                self.cursor = 0;
                self.playing = false;
                self.selected = None;
                self.leave_explore();
            }
            Script::InjectFault(line) => {
                let before = self.source.clone();
                let mut src = before.trim_end().to_string();
                src.push('\n');
                src.push_str(&line);
                src.push('\n');
                let undo = Rc::make_mut(&mut self.undo.0);
                undo.push(before);
                if undo.len() > 50 {
                    undo.remove(0);
                }
                self.load(src.into());
                self.kept = None;
                self.fault_menu = None;
            }
            Script::FirstVisit(src) => {
                if self.source.is_empty() {
                    self.load(src.into());
                }
            }
            Script::Undo => {
                if let Some(prev) = self.undo.last().cloned() {
                    Rc::make_mut(&mut self.undo.0).pop();
                    self.load(prev);
                    self.fault_menu = None;
                }
            }
            Script::OpenLink {
                shared,
                keep_previous,
            } => {
                self.open_link(shared, keep_previous);
                self.imported = false;
            }
            Script::Restore => {
                if let Some(k) = self.kept.take() {
                    self.load(k);
                    self.cursor = 0;
                    self.playing = false;
                    self.selected = None;
                    self.leave_explore();
                }
            }
            Script::AcceptLink => self.kept = None,
            Script::OpenImported(script) => {
                self.open_link(
                    Shared {
                        script,
                        at_ms: None,
                        events: None,
                    },
                    true,
                );
                self.imported = self.kept.is_some();
            }
            Script::Continue => self.continue_run(),
            Script::CancelRun => {
                if self.computing.take().is_some() {
                    self.cancelled = self.progress.take();
                }
            }
            Script::Rerun => {
                let src = self.source.clone();
                self.run = None;
                self.load(src);
            }
        }
    }

    /// A new text in the editor.
    fn edit(&mut self, src: String) {
        if *src != *self.source {
            // The editor hands back the text it was given with its own line ends: while a
            // link's script is shown, that echo is not the user's edit.
            let unix = listwatch_script::share::unix_lines;
            let echo = self.kept.is_some() && unix(&src) == unix(&self.source);
            self.load(src.into());
            if !echo {
                // The user's own change: from now on it is their work, autosaved.
                self.kept = None;
                self.undo = Ptr::default();
                self.fault_menu = None;
            }
        }
    }

    /// Actions that move the moment on screen: play, step, seek, the clock, jumps.
    fn reduce_moment(&mut self, action: Moment) {
        let len = self.len();
        match action {
            Moment::Play => {
                if self.cursor >= len {
                    self.cursor = 0;
                }
                self.playing = true;
            }
            Moment::Pause => self.playing = false,
            Moment::StepBack => {
                self.playing = false;
                self.cursor = self.cursor.saturating_sub(1);
                self.selected = self.cursor.checked_sub(1).map(|c| c as EventId);
            }
            Moment::StepForward => {
                self.playing = false;
                self.cursor = (self.cursor + 1).min(len);
                self.selected = self.cursor.checked_sub(1).map(|c| c as EventId);
            }
            Moment::Seek(n) => self.cursor = n.min(len),
            Moment::Speed(v) => {
                self.speed = v.clamp(crate::playback::SPEED_MIN, crate::playback::SPEED_MAX)
            }
            Moment::Tick(elapsed_ms) => {
                if let (true, Some(run)) = (self.playing, self.run.clone()) {
                    let mut clock = crate::playback::Clock {
                        cursor: self.cursor,
                        at_ms: self.at_ms,
                        beat: self.beat,
                    };
                    // A `say "..." and wait` stops playback just after it, for the reader; the
                    // end stops it once the last event's beat is over.
                    if clock
                        .advance(run.sim.trace(), self.speed, elapsed_ms)
                        .is_some()
                    {
                        self.playing = false;
                    }
                    (self.cursor, self.at_ms, self.beat) = (clock.cursor, clock.at_ms, clock.beat);
                }
            }
            Moment::JumpTo(id) => {
                self.playing = false;
                self.cursor = (id as usize + 1).min(len);
                self.selected = Some(id);
            }
        }
    }

    /// The rest of the page: help, notices, banners, the fault menu, theme, the editor.
    fn reduce_page(&mut self, action: Page) {
        match action {
            Page::LinkError(msg) => self.link_error = Some(msg),
            Page::ToggleHelp => self.help = !self.help,
            Page::Notice(n) => self.notice = n,
            Page::DismissLinkError => self.link_error = None,
            Page::FaultMenu(t) => {
                self.playing = false;
                self.fault_menu = t;
            }
            Page::Theme(t) => self.theme = t,
            Page::EditorLoaded => self.editor_loaded = true,
        }
    }

    /// The Explore panel: its settings, starting and cancelling a search, the worker's reports.
    fn reduce_search(&mut self, action: Search) {
        let x = &mut self.explore;
        match action {
            Search::Budget(n) => x.budget = n.clamp(1, MAX_BUDGET_SCHEDULES as u32),
            Search::All(all) => x.all = all,
            Search::Against(name) => {
                if name.is_empty() || controllers(&self.source).contains(&&*name) {
                    x.against = name.into();
                }
            }
            Search::Start => {
                x.job += 1;
                x.running = true;
                x.cancelled = false;
                x.report = None;
                if !x.found.is_empty() {
                    x.found = Ptr::default();
                }
            }
            Search::Cancel => {
                if x.running {
                    x.running = false;
                    x.cancelled = true;
                }
            }
            Search::Report {
                job,
                report,
                found,
                done,
            } => {
                if x.running && job == x.job {
                    x.report = Some(report.into());
                    if let Some(found) = found {
                        let found = found.into_iter().map(|(w, s)| (w.into(), s.into()));
                        x.found = Ptr::new(found.collect());
                    }
                    x.running = !done;
                }
            }
        }
    }
}

/// The playback clock's period: about 30 frames a second, so messages glide along their links.
pub const TICK_MS: u32 = 33;

/// The first `say "..." and wait` among the events `[from, to)`, if any.
pub fn first_wait(run: &Loaded, from: usize, to: usize) -> Option<usize> {
    let says = run
        .analysis
        .events(listwatch_core::analysis::MarkerKind::Say);
    let at = says.partition_point(|&i| (i as usize) < from);
    says[at..]
        .iter()
        .map(|&i| i as usize)
        .take_while(|&i| i < to)
        .find(|&i| {
            matches!(
                run.sim.trace()[i].kind,
                listwatch_core::EventKind::Say(listwatch_core::SayEvent { wait: true, .. })
            )
        })
}

/// Whether playback stands at a `say "..." and wait` for the reader to continue: its event is the
/// one on screen and the run goes on after it.
pub fn waiting_at(run: &Loaded, cursor: usize) -> bool {
    cursor < run.sim.trace().len()
        && cursor
            .checked_sub(1)
            .is_some_and(|i| first_wait(run, i, cursor) == Some(i))
}

#[cfg(test)]
mod tests;
