//! Native benchmarks for `cargo xtask bench`: each figure is printed beside its goal.
//!
//! 1,000,000 writes, 10 watchers, cache capacity 100, trace recorded: simulated events per
//! second, trace bytes per event, and the time to rebuild the state at a random moment.

use std::time::Instant;

use listwatch_core::view::Timeline;
use listwatch_core::*;

fn config() -> Config {
    let mut c = Config::new(&["Pod", "Copy"]);
    c.kinds[0].cache = CacheMode::Fixed { capacity: 100 };
    c.compaction_ms = DurationMs(0);
    c.limits.max_events = 50_000_000;
    c.end_ms = TimeMs(3_600_000);
    // Ten watchers: ten controllers, each with one informer on Pods and no handler on it.
    for i in 0..10 {
        let mut ctl = Config::controller(
            &format!("w{i}"),
            KindId(0),
            Behaviour::Mirror { target: KindId(1) },
        );
        ctl.watches = vec![WatchConfig {
            kind: KindId(0),
            map: KeyMap::ReadOnly,
            namespace: None,
            selector: None,
            fields: None,
            predicate: Predicate::All,
        }];
        c.controllers.push(ctl);
    }
    c
}

fn main() {
    // `BENCH_WRITES=20000 BENCH_ONLY=core` gives a run small enough to count instructions of
    // under cachegrind; the figures printed against the goals are for the default.
    let writes: u64 = std::env::var("BENCH_WRITES")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(1_000_000);
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only != "owners" {
        core(writes);
    }
    if only != "core" {
        owners();
    }
}

fn core(writes: u64) {
    const OBJECTS: u64 = 1000;
    let mut sim = Sim::new(config()).expect("valid config");
    sim.handle_timeout(TimeMs(1));
    for i in 0..OBJECTS {
        sim.handle_input(Input::Write(WriteInput::Create {
            kind: KindId(0),
            name: format!("p{i}"),
            spec: 0,
        }));
    }
    let names: Vec<String> = (0..OBJECTS).map(|i| format!("p{i}")).collect();
    let start = Instant::now();
    let events_before = sim.trace().len();
    for i in 0..writes {
        // One write every millisecond of virtual time, status only.
        sim.handle_timeout(TimeMs(1000 + i));
        let name = names[(i % OBJECTS) as usize].clone();
        sim.handle_input(Input::Write(WriteInput::UpdateStatus {
            kind: KindId(0),
            name,
            status: (i / OBJECTS + 1) as i64,
        }));
    }
    sim.handle_timeout(TimeMs(1000 + writes + 1000));
    let secs = start.elapsed().as_secs_f64();
    let events = (sim.trace().len() - events_before) as f64;
    let per_sec = events / secs;
    let bytes = std::mem::size_of::<Event>();
    println!(
        "core: {writes} writes, 10 watchers, cache 100: {:.0} events in {secs:.2}s",
        events
    );
    println!(
        "  simulated events per second   {:>12.2} M/s   (goal >= 5 M/s)   {}",
        per_sec / 1e6,
        verdict(per_sec >= 5e6)
    );
    println!(
        "  trace bytes per event         {:>12}       (in memory, Event is Copy)",
        bytes
    );
    let t = Instant::now();
    let timeline = Timeline::new(&sim);
    println!(
        "  checkpointing the trace       {:>12.2} s",
        t.elapsed().as_secs_f64()
    );
    let mut rng = Rng::new(7);
    let mut worst = 0f64;
    let mut total = 0f64;
    const SEEKS: u32 = 200;
    for _ in 0..SEEKS {
        let n = rng.below(sim.trace().len() as u64) as usize;
        let t = Instant::now();
        let v = timeline.at(&sim, n);
        std::hint::black_box(&v);
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        worst = worst.max(ms);
        total += ms;
    }
    println!(
        "  state at a random moment      {:>12.3} ms mean, {:.3} ms worst   (goal <= 16 ms)   {}",
        total / SEEKS as f64,
        worst,
        verdict(worst <= 16.0)
    );
}

/// 1000 parents with 1000 children each (the documented limits): owner lookups and ESR are
/// indexed, so this is linear (it ran for minutes when each reconcile scanned the store).
fn owners() {
    let mut c = Config::new(&["ReplicaSet", "Pod"]);
    c.compaction_ms = DurationMs(0);
    c.end_ms = TimeMs(600_000);
    c.limits.max_events = 50_000_000;
    c.controllers.push(Config::controller(
        "rs",
        KindId(0),
        Behaviour::Children {
            child: KindId(1),
            finalizer: false,
        },
    ));
    c.timeline = (0..1000)
        .map(|i| TimedInput {
            at_ms: TimeMs(i),
            input: Input::Write(WriteInput::Create {
                kind: KindId(0),
                name: format!("r{i}"),
                spec: 1000,
            }),
        })
        .collect();
    let t = Instant::now();
    let sim = verdict::run(c).expect("valid config");
    let s = t.elapsed().as_secs_f64();
    println!(
        "owners: 1000 parents x 1000 children, {} events in {:.2}s   (goal <= 15 s)   {}",
        sim.trace().len(),
        s,
        verdict(s <= 15.0)
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "MET"
    } else {
        "NOT MET"
    }
}
