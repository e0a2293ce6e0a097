//! Arbitrary input never panics or hangs: random strings, and gallery scripts mutated at random.
//! Every error carries a line and column inside the script.

use listwatch_core::TimeMs;
use listwatch_script::gallery::GALLERY;
use proptest::prelude::*;

fn check_diagnostics(
    src: &str,
    diags: &[listwatch_script::Diagnostic],
) -> Result<(), TestCaseError> {
    prop_assert!(!diags.is_empty());
    let lines = src.lines().count().max(1);
    for d in diags {
        prop_assert!(
            d.line >= 1 && d.line <= lines + 1,
            "line {} of {lines}",
            d.line
        );
        prop_assert!(d.col >= 1);
        prop_assert!(!d.message.is_empty());
        // Rendering never panics either.
        let _ = listwatch_script::render(d, "x.lw", src);
    }
    Ok(())
}

/// Parse, and when it parses run it with small caps: neither may panic.
fn exercise(src: &str) -> Result<(), TestCaseError> {
    match listwatch_script::parse(src) {
        Err(d) => check_diagnostics(src, &d),
        Ok(mut s) => {
            s.config.limits.max_events = 20_000;
            s.config.end_ms = s.config.end_ms.min(TimeMs(3_600_000));
            s.config.timeline.retain(|t| t.at_ms <= s.config.end_ms);
            let _ = listwatch_script::run_scenario(&s);
            Ok(())
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapWords(usize, usize, usize),
    ReplaceWord(usize, usize, String),
    InsertChar(usize, char),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let word = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("99999999999999999999".to_string()),
        Just("1e308s".to_string()),
        Just("\"".to_string()),
        Just("{i}".to_string()),
        Just("Pod".to_string()),
        Just("every".to_string()),
        Just("expect".to_string()),
        "[a-z0-9./{}-]{0,12}",
        any::<String>(),
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(l, a, b)| Mutation::SwapWords(l, a, b)),
        (any::<usize>(), any::<usize>(), word).prop_map(|(l, w, s)| Mutation::ReplaceWord(l, w, s)),
        (any::<usize>(), any::<char>()).prop_map(|(p, c)| Mutation::InsertChar(p, c)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(src: &str, ms: &[Mutation]) -> String {
    let mut lines: Vec<String> = src.lines().map(String::from).collect();
    for m in ms {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match m {
            Mutation::DeleteLine(i) => {
                lines.remove(i % n);
            }
            Mutation::DuplicateLine(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::SwapWords(l, ..) | Mutation::ReplaceWord(l, ..)
                if lines[l % n].split_whitespace().count() == 0 => {}
            Mutation::SwapWords(l, a, b) => {
                let mut w: Vec<&str> = lines[l % n].split_whitespace().collect();
                let k = w.len();
                w.swap(a % k, b % k);
                lines[l % n] = w.join(" ");
            }
            Mutation::ReplaceWord(l, a, s) => {
                let mut w: Vec<String> =
                    lines[l % n].split_whitespace().map(String::from).collect();
                let k = w.len();
                w[a % k] = s.clone();
                lines[l % n] = w.join(" ");
            }
            Mutation::InsertChar(p, c) => {
                let l = &mut lines[p % n];
                let at = l
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(p % (l.chars().count() + 1))
                    .unwrap_or(l.len());
                l.insert(at, *c);
            }
            Mutation::Truncate(p) => {
                let l = &mut lines[p % n];
                let at = l
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(p % (l.chars().count() + 1))
                    .unwrap_or(l.len());
                l.truncate(at);
            }
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(src in any::<String>()) {
        exercise(&src)?;
    }

    #[test]
    fn arbitrary_statement_soup_never_panics(lines in prop::collection::vec(
        "(kind|controller|at|every|expect|run|seed|apiserver|compaction|bookmarks|  workers|  watches) [ -~]{0,40}", 0..12)) {
        exercise(&lines.join("\n"))?;
    }

    #[test]
    fn mutated_gallery_scripts_never_panic(
        which in 0..GALLERY.len(),
        ms in prop::collection::vec(mutation(), 1..6),
    ) {
        exercise(&mutate(GALLERY[which].1, &ms))?;
    }
}

#[test]
fn oversized_and_absurd_inputs_get_clear_errors() {
    let big = "# x\n".repeat(20_000);
    let e = listwatch_script::parse(&big).unwrap_err();
    assert!(e[0].message.contains("64 KiB"), "{}", e[0].message);
    for (src, needle) in [
        ("kind Pod cache fixed 0", "at least 1"),
        ("kind Pod cache fixed 999999999", "out of range"),
        ("kind Pod\nat 25h create Pod a", "24h"),
        (
            "kind Pod\nevery 1ms 200000 times create Pod a{i}",
            "out of range",
        ),
        (
            "kind Pod\nat 1s create Pod a spec 99999999999",
            "out of range",
        ),
        (
            "kind Pod\ncontroller c for Pod children Pod\n  workers 1000",
            "out of range",
        ),
        ("kind Pod\nrun 100h", "24h"),
        ("kind Pod\nat 1s say \"unterminated", "closing"),
        (
            "kind Pod\nat 1s create Pod a/b/c",
            "not a valid object name",
        ),
    ] {
        let e = listwatch_script::parse(src).unwrap_err();
        assert!(
            e.iter().any(|d| d.message.contains(needle)),
            "{src}: {:?}",
            e
        );
    }
}

#[test]
fn typos_get_the_nearest_word() {
    let e =
        listwatch_script::parse("kind Deployment\ncontroller c for Deploymnet mirror Deployment")
            .unwrap_err();
    assert_eq!(e[0].message, "unknown kind `Deploymnet`");
    assert_eq!(e[0].help.as_deref(), Some("did you mean `Deployment`?"));
    assert_eq!((e[0].line, e[0].col, e[0].len), (2, 18, 10));
    let e = listwatch_script::parse("kind Pod\nat 1s crate Pod a").unwrap_err();
    assert_eq!(e[0].help.as_deref(), Some("did you mean `create`?"));
    let e = listwatch_script::parse("kidn Pod").unwrap_err();
    assert_eq!(e[0].help.as_deref(), Some("did you mean `kind`?"));
    let rendered = listwatch_script::render(&e[0], "t.lw", "kidn Pod");
    assert!(
        rendered.contains("--> t.lw:1:1") && rendered.contains("^^^^"),
        "{rendered}"
    );
}

#[test]
fn runs_over_the_event_cap_stop_and_say_so() {
    let src = "kind Pod\nkind Copy\ncontroller c for Pod mirror Copy\nevery 1ms 100000 times create Pod p{i}\n";
    let mut s = listwatch_script::parse(src).unwrap();
    s.config.limits.max_events = 1000;
    let r = listwatch_script::run_scenario(&s).unwrap();
    assert_eq!(r.sim.stopped(), Some(listwatch_core::Stop::EventCap));
    assert!(r.sim.trace().len() <= 1000);
}

// ----- Hostile inputs (issue 21): each ends quickly with a clear answer, none walks all of
// history or all of an object's children for one event. No test here reads a clock: each
// asserts the answer, and the counting reader below asserts the work of one read.

/// Parses `src` and runs it with at most `max_events` events (a debug build runs slower than
/// the release CLI the limits are stated for).
fn run_capped(src: &str, max_events: u64) -> listwatch_script::Report {
    let mut s = listwatch_script::parse(src).unwrap_or_else(|d| panic!("{d:?}"));
    s.config.limits.max_events = max_events;
    listwatch_script::run_scenario(&s).unwrap()
}

/// `n` parents of spec 1000 and a controller that keeps their children: `behaviour` is
/// `children Child`, or empty for the same written out in the language (`library::CHILDREN`).
fn children_script(n: usize, behaviour: &str) -> String {
    let logic = if behaviour.is_empty() {
        "  logic\n    get parent = Parent key\n    if parent absent or parent deleting\n      done\n    scale Child owned-by parent to parent.spec\n  desired\n    get parent = Parent key\n    list children = Child owned-by parent\n    require children.alive == parent.spec\n"
    } else {
        ""
    };
    format!("kind Parent\nkind Child\ncontroller op for Parent {behaviour}\n{logic}every 1ms {n} times create Parent p{{i}} spec 1000\n")
}

/// A run cut off before its end is not judged for ESR.
fn assert_esr_not_judged(r: &listwatch_script::Report) {
    let esr = listwatch_core::analysis::esr_outcome(&r.sim, None);
    assert!(
        matches!(esr, listwatch_core::analysis::EsrOutcome::NotJudged { .. }),
        "{esr:?}"
    );
}

/// A reader that counts the objects it hands out (a list's items are copies): a read
/// through an owner index hands out none.
struct Counting<'a> {
    inner: &'a dyn listwatch_core::reconcile::Reader,
    copied: std::cell::Cell<usize>,
}

impl listwatch_core::reconcile::Reader for Counting<'_> {
    fn get(
        &self,
        kind: listwatch_core::KindId,
        name: listwatch_core::NameId,
    ) -> Option<listwatch_core::Object> {
        self.copied.set(self.copied.get() + 1);
        self.inner.get(kind, name)
    }
    fn owned_by(&self, kind: listwatch_core::KindId, uid: u64) -> Vec<listwatch_core::Object> {
        let items = self.inner.owned_by(kind, uid);
        self.copied.set(self.copied.get() + items.len());
        items
    }
    fn live_owned(&self, kind: listwatch_core::KindId, uid: u64) -> usize {
        self.inner.live_owned(kind, uid)
    }
    fn count_owned(&self, kind: listwatch_core::KindId, uid: u64) -> usize {
        self.inner.count_owned(kind, uid)
    }
    fn select(
        &self,
        kind: listwatch_core::KindId,
        keep: &dyn Fn(&listwatch_core::Object) -> bool,
    ) -> Vec<listwatch_core::Object> {
        let items = self.inner.select(kind, keep);
        self.copied.set(self.copied.get() + items.len());
        items
    }
}

/// The language path uses the built-ins' indexes: ESR's check after a child's write (the
/// `desired` block's `list` and `.alive`) and a reconcile with nothing to do read the parent
/// only, not its 1000 children (1000 parents of spec 1000 took 27.7 s and 1.07 GB, the
/// built-in 2 s: every write of a child copied all its siblings). The trace is the built-in's.
#[test]
fn the_children_behaviour_in_the_language_reads_no_child_to_count_them() {
    use listwatch_core::program;
    let lang = run_capped(&children_script(3, ""), 5_000_000);
    let builtin = run_capped(&children_script(3, "children Child"), 5_000_000);
    // The same run: the language's trace has the reads a program records besides.
    let read = |e: &&listwatch_core::Event| {
        matches!(
            e.kind,
            listwatch_core::EventKind::Controller(
                listwatch_core::ControllerEvent::ReconcileRead { .. }
            )
        )
    };
    let events = |r: &listwatch_script::Report| r.sim.trace().iter().filter(|e| !read(e)).count();
    assert_eq!(events(&lang), events(&builtin));
    assert_eq!(lang.sim.etcd().rev(), builtin.sim.etcd().rev());
    let sim = &lang.sim;
    assert_eq!(sim.etcd().objects().len(), 3 + 3000);
    let p = sim.config().controllers[0].program.clone().unwrap();
    let etcd = listwatch_core::sim::EtcdReader(sim.etcd());
    let counting = Counting {
        inner: &etcd,
        copied: Default::default(),
    };
    for parent in ["default/p0", "default/p1", "default/p2"] {
        let key = sim.names().get(parent).unwrap();
        counting.copied.set(0);
        assert!(program::desired_holds(&p, key, 1, &counting, sim.names()));
        assert_eq!(counting.copied.get(), 1, "ESR reads the parent only");
        counting.copied.set(0);
        let mut names = sim.names().clone();
        let mut memory = Default::default();
        let plan = program::plan(
            &p,
            key,
            1,
            &counting,
            Some(&counting),
            &mut names,
            &mut memory,
            listwatch_core::TimeMs(0),
        );
        assert!(plan.writes.is_empty() && plan.exceeded.is_none());
        assert_eq!(
            counting.copied.get(),
            1,
            "a scale with nothing to do reads no child"
        );
    }
}

/// Without a `desired` block ESR asks whether a reconcile of etcd would write anything: it
/// stops at the first write, so a list of 250 children deleted one by one is not copied for
/// the question (it was after every one of its writes: over 60 s).
#[test]
fn esr_of_a_program_without_desired_stops_at_its_first_write() {
    use listwatch_core::program;
    let src = "kind Parent\nkind Child\ncontroller op for Parent\n  logic\n    get p = Parent key\n    if p absent\n      done\n    list kids = Child owned-by p\n    delete kids\n    scale Child owned-by p to 250\nat 0s create Parent a\n";
    let r = run_capped(src, 20_000);
    assert_eq!(r.sim.stopped(), Some(listwatch_core::Stop::EventCap));
    let sim = &r.sim;
    let p = sim.config().controllers[0].program.clone().unwrap();
    let etcd = listwatch_core::sim::EtcdReader(sim.etcd());
    let counting = Counting {
        inner: &etcd,
        copied: Default::default(),
    };
    let key = sim.names().get("default/a").unwrap();
    assert!(!program::desired_holds(&p, key, 1, &counting, sim.names()));
    assert_eq!(counting.copied.get(), 1, "the parent, then the first write");
}

/// Scripts that write for ever reach the event cap after a bounded amount of work per event:
/// (script, what the run must have done by then). Each took over 60 s before.
#[test]
fn endless_writers_reach_the_event_cap_and_say_so() {
    let table = [
        // Scales its children between 0 and 1000 on every pass, for 24 h.
        "kind Parent\nkind Child\ncontroller op for Parent\n  logic\n    get p = Parent key\n    if p absent\n      done\n    scale Child owned-by p to 1000\n    scale Child owned-by p to 0\nat 0s create Parent a\nrun 24h\n",
        // A target that grows with every write.
        "kind A\nkind B\ncontroller op for A\n  logic\n    get a = A key\n    if a absent\n      done\n    update a status a.rv\n    scale B owned-by a to a.rv\nat 0s create A a\nrun 24h\n",
        // 200 parents that scale to 1000 and delete the list each pass, 64 workers.
        "kind Parent\nkind Child\ncontroller op for Parent\n  workers 64\n  logic\n    get p = Parent key\n    if p absent\n      done\n    list kids = Child owned-by p\n    scale Child owned-by p to 1000\n    delete kids\nevery 1ms 200 times create Parent p{i}\nrun 24h\n",
        // A list of 250 objects deleted one by one each pass.
        "kind Parent\nkind Child\ncontroller op for Parent\n  logic\n    get p = Parent key\n    if p absent\n      done\n    list kids = Child owned-by p\n    delete kids\n    scale Child owned-by p to 250\nat 0s create Parent a\nrun 24h\n",
    ];
    for src in table {
        let r = run_capped(src, 300_000);
        assert_eq!(
            r.sim.stopped(),
            Some(listwatch_core::Stop::EventCap),
            "{src}"
        );
        assert!(r.sim.trace().len() <= 300_000);
        // Each made tens of thousands of writes by then.
        assert!(r.sim.etcd().rev() > 20_000, "{} {src}", r.sim.etcd().rev());
        assert_esr_not_judged(&r);
    }
}

/// A logic block of 255 `scale` statements could make 255,000 writes in one reconcile: it is
/// refused where a path first passes the limit of 4096 writes per reconcile (it ran for over
/// 60 s, every reconcile computing them all).
#[test]
fn a_block_that_could_write_past_the_limit_is_refused_at_the_line() {
    let mut src = String::from(
        "kind Parent\nkind Child\ncontroller op for Parent\n  logic\n    get p = Parent key\n",
    );
    for i in 0..255 {
        src += &format!(
            "    scale Child owned-by p to {}\n",
            if i % 2 == 0 { 1000 } else { 0 }
        );
    }
    src += "at 0s create Parent a\nrun 24h\n";
    let e = listwatch_script::parse(&src).unwrap_err();
    assert_eq!(
        (e[0].line, e[0].col, e[0].len),
        (10, 5, 5),
        "the fifth scale"
    );
    assert_eq!(
        e[0].message,
        "a reconcile could make 5000 writes by this line, more than the limit of 4096 writes per reconcile"
    );
    // Branches count apart, and a path that returns adds nothing after it.
    let branches = "kind Parent\nkind Child\nkind Other\ncontroller op for Parent\n  logic\n    get p = Parent key\n    list kids = Child owned-by p\n    if p deleting\n      delete kids\n      scale Other owned-by p to 0\n      done\n    if p.spec > 3\n      scale Child owned-by p to 1000\n      scale Other owned-by p to 1000\n    else\n      scale Child owned-by p to 1\n    scale Child owned-by p to 1000\n    scale Other owned-by p to 1000\n    create Other key-x\nat 0s create Parent a\n";
    assert!(listwatch_script::parse(branches).is_ok(), "4001 at most");
    let over = branches.replace(
        "    create Other key-x\n",
        "    create Other key-x\n    scale Other owned-by p to 1\n",
    );
    let e = listwatch_script::parse(&over).unwrap_err();
    assert_eq!(e[0].line, 20);
}

/// An object that owns more live children than a `delete` of a list handles stops the run at
/// that statement, with a diagnostic naming the limit.
#[test]
fn a_delete_of_more_than_1000_live_children_stops_the_run_at_its_line() {
    let src = "kind Parent\nkind Child\nkind Other\ncontroller kids for Parent\n  logic\n    get p = Parent key\n    scale Child owned-by p to 1000\n    list others = Other owned-by p\n    if others.alive >= 1500\n      delete others\ncontroller grand for Child\n  logic\n    get c = Child key\n    get p = Parent owner c\n    create Other key-x owner p\n    create Other key-y owner p\nat 0s create Parent a\nrun 1m\n";
    let r = run_capped(src, 5_000_000);
    let Some(listwatch_core::Stop::Limit { exceeded, .. }) = r.sim.stopped() else {
        panic!("{:?}", r.sim.stopped());
    };
    let listwatch_core::program::Exceeded::ChildrenPerObject { children, line, .. } = exceeded
    else {
        panic!("{exceeded:?}");
    };
    assert_eq!((children, line), (1500, 10));
    let d = listwatch_script::logic::stopped_at_limit(&r.sim, src).unwrap();
    assert_eq!((d.line, d.col, d.len), (10, 7, 6));
    assert_eq!(
        d.message,
        "the run stopped here: default/a owns 1500 live Other objects, more than the limit of 1000 children per object"
    );
    assert!(d
        .help
        .unwrap()
        .contains("a reconcile of `kids` for default/a"));
    assert_esr_not_judged(&r);
}

/// 50,000 probes answered from etcd's indexes: an Exact list's size by binary search in the
/// count history (each walked all of history: over 60 s), a watch's replay from a kind without
/// a cache as a range of its own log (each filtered the whole log: 11.3 s). The answers are
/// those the full walks gave.
#[test]
fn fifty_thousand_probes_are_answered_from_etcd_s_indexes() {
    let exact = "kind Pod\ncompaction off\nevery 1ms 50000 times create Pod p{i}\nevery 1ms 50000 times from 50s probe list Pod resourceVersion=\"{i}\" exact\nrun 2m\nexpect probe listed 25000 items at rv 25001\nexpect probe listed 49998 items at rv 49999\nexpect probe listed 0 items at rv 1\n";
    let r = run_capped(exact, 5_000_000);
    assert_eq!(r.sim.stopped(), Some(listwatch_core::Stop::End));
    assert!(r.passed(), "{:?}", r.outcomes);
    // 49,999 Pods (rv 2 to 50,001) and one Other (rv 10,003), which no Pod watch replays.
    let watch = "kind Pod cache off\nkind Other cache off\ncompaction off\nevery 1ms 49999 times create Pod p{i}\nat 10s create Other o\nevery 1ms 50000 times from 50s probe watch Pod resourceVersion=\"{i}\"\nrun 2m\nexpect probe opened replaying 49999\nexpect probe opened replaying 40000\nexpect probe opened replaying 2\n";
    let r = run_capped(watch, 5_000_000);
    assert_eq!(r.sim.stopped(), Some(listwatch_core::Stop::End));
    assert!(r.passed(), "{:?}", r.outcomes);
}

/// A selector list that matches more than 1000 objects stops the run at its line (a list's
/// items are copies: a bound on a reconcile's memory and on the writes of its `delete`).
#[test]
fn a_selector_list_of_more_than_1000_objects_stops_the_run_at_its_line() {
    let src = "kind Db\nkind Pod\ncontroller op for Db\n  logic\n    get db = Db key\n    list web = Pod selector app=web live\n    requeue after 500ms\nat 0s create Db a\nevery 1ms 1001 times from 1s create Pod p-{i} labels app=web\nrun 3s\n";
    let r = run_capped(src, 5_000_000);
    let Some(listwatch_core::Stop::Limit { exceeded, .. }) = r.sim.stopped() else {
        panic!("{:?}", r.sim.stopped());
    };
    let listwatch_core::program::Exceeded::ListItems { items, line, .. } = exceeded else {
        panic!("{exceeded:?}");
    };
    assert_eq!((items, line), (1001, 6));
    let d = listwatch_script::logic::stopped_at_limit(&r.sim, src).unwrap();
    assert_eq!((d.line, d.col), (6, 5));
    assert_eq!(
        d.message,
        "the run stopped here: this list has 1001 Pod objects, more than the limit of 1000 a list holds"
    );
}

/// A controller whose selector list grows with every reconcile (each pass creates as many Pods
/// as the list found, plus one it labels) costs the square of its objects: every reconcile and
/// every ESR check after a write walks them all. Before the cap on reads, 24 hours of it ran
/// for minutes (2 s of virtual time took over 100 s); now it stops once its lists looked at
/// `max_objects_read` objects, with the run cut off and ESR not judged, and far fewer events
/// than the event cap.
#[test]
fn selector_lists_that_grow_every_reconcile_stop_at_the_cap_on_reads() {
    let src = "kind Db\nkind Pod\ncontroller op for Db\n  reconcile 1ms\n  logic\n    get db = Db key\n    if db absent\n      done\n    list pods = Pod selector x=y\n    for p in pods\n      create Pod key- generate-name spec.a = 1\n    create Pod key- generate-name metadata.labels.x = \"y\"\n    requeue after 1ms\nat 0s create Db web\nrun 24h\n";
    let mut s = listwatch_script::parse(src).unwrap_or_else(|d| panic!("{d:?}"));
    s.config.limits.max_objects_read = 2_000_000;
    let r = listwatch_script::run_scenario(&s).unwrap();
    assert_eq!(r.sim.stopped(), Some(listwatch_core::Stop::ReadCap));
    assert!(
        r.sim.trace().len() < 100_000,
        "{} events",
        r.sim.trace().len()
    );
    assert_esr_not_judged(&r);
    // The same run with room to spare for its reads runs on: the cap is what stopped it.
    s.config.limits.max_objects_read = 4_000_000;
    let longer = listwatch_script::run_scenario(&s).unwrap();
    assert!(longer.sim.trace().len() > r.sim.trace().len());
}

/// A list that does not grow is never stopped by the cap on reads, however long the run: 100
/// children listed every 200 ms for two hours look at 3.6 M objects, past a cap of 2 M, but at
/// far fewer than `READS_PER_EVENT_MAX` an event, so the run ends and ESR is judged.
#[test]
fn a_steady_selector_list_runs_to_its_end_past_the_cap_on_reads() {
    let src = "kind Db\nkind Pod\ncontroller op for Db\n  reconcile 1ms\n  logic\n    get db = Db key\n    if db absent\n      done\n    scale Pod owned-by db to 100\n    list pods = Pod selector x=y\n    requeue after 200ms\nat 0s create Db web\nrun 2h\nexpect esr\n";
    let mut s = listwatch_script::parse(src).unwrap_or_else(|d| panic!("{d:?}"));
    s.config.limits.max_objects_read = 2_000_000;
    let r = listwatch_script::run_scenario(&s).unwrap();
    assert_eq!(r.sim.stopped(), Some(listwatch_core::Stop::End));
    assert!(r.outcomes.iter().all(|(_, o)| o.pass), "{:?}", r.outcomes);
}
