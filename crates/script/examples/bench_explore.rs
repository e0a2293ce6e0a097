//! Explorer figures for `cargo xtask bench`, natively: schedules per second per core (median over
//! the gallery), the speed-up from 1 to 2 threads, and the time of an exhaustive search of a
//! gallery-style scenario with 20 objects, 2 apiservers and 3 controllers.

use std::time::Instant;

use listwatch_core::explore::Budget;
use listwatch_script::explore::{explorer, run_threads};
use listwatch_script::gallery::GALLERY;

/// Runs a search on `threads` threads; returns (schedules, seconds, failures).
fn search(src: &str, budget: Budget, threads: usize) -> Option<(u64, f64, usize)> {
    let (mut ex, _) = explorer(src, budget).ok()?;
    let t = Instant::now();
    run_threads(&mut ex, threads, |_| true);
    let secs = t.elapsed().as_secs_f64();
    (ex.stats.tried > 0).then_some((ex.stats.tried, secs, ex.failures.len()))
}

/// 20 objects of three controllers' kinds, on two apiservers.
fn twenty_objects() -> String {
    let mut s = String::from(
        "# 20 objects, 2 apiservers, 3 controllers\n\
         kind ReplicaSet\nkind Pod\nkind Deployment\nkind ConfigMap\nkind Database\nkind Data\n\
         apiserver a\napiserver b\n\
         controller rs for ReplicaSet children Pod\n  apiserver a\n\
         controller dep for Deployment mirror ConfigMap\n  apiserver b\n\
         controller db for Database two-writes Data fixed\n  apiserver a\n",
    );
    for i in 0..7 {
        s += &format!("at {}ms create ReplicaSet rs{i} spec 1\n", 100 * i);
        s += &format!("at {}ms create Deployment d{i} spec {i}\n", 100 * i + 50);
    }
    for i in 0..6 {
        s += &format!("at {}ms create Database db{i} spec {i}\n", 1000 + 100 * i);
    }
    s += "at 5s update ReplicaSet rs0 spec 2\nat 6s update Deployment d0 spec 9\n";
    s += "at 7s delete Database db5\nrun 30s\nexpect esr\n";
    s
}

/// The speed-up this machine gives a plain CPU loop from 1 to 2 threads: on a shared, busy
/// machine it is well under 2, and bounds the explorer's.
fn machine_speedup() -> f64 {
    let spin = |threads: usize| {
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    let mut x = 0u64;
                    for i in 0..std::hint::black_box(300_000_000u64) {
                        x = x.wrapping_add(i.wrapping_mul(i)) ^ (x >> 3);
                    }
                    std::hint::black_box(x);
                });
            }
        });
        t.elapsed().as_secs_f64()
    };
    2.0 * spin(1) / spin(2)
}

fn main() {
    let budget = Budget {
        schedules: 3000,
        first_failure: false,
    };
    let mut rates = vec![];
    let mut rows = vec![];
    for (name, src) in GALLERY {
        let Some((n, secs, _)) = search(src, budget, 1) else {
            continue;
        };
        let rate = n as f64 / secs.max(1e-9);
        rates.push(rate);
        rows.push(format!("    {name:<44} {n:>6} schedules {rate:>10.0} /s"));
    }
    rates.sort_by(f64::total_cmp);
    let median = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
    // Speed-up: the same searches on 1 and 2 threads (the larger gallery searches).
    let (mut t1, mut t2) = (0.0, 0.0);
    for (name, src) in GALLERY {
        if !["19-", "20-", "21-", "22-", "23-", "17-", "01-"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            continue;
        }
        let b = Budget {
            schedules: 20_000,
            first_failure: false,
        };
        if let (Some(a), Some(b)) = (search(src, b, 1), search(src, b, 2)) {
            t1 += a.1;
            t2 += b.1;
        }
    }
    let speedup = t1 / t2.max(1e-9);
    let big = twenty_objects();
    let (ex, _) = explorer(&big, budget).expect("the 20-object scenario parses");
    let space = ex.stats.space;
    let exhaustive = Budget {
        schedules: space,
        first_failure: false,
    };
    let cores = listwatch_script::explore::cores();
    let (n, secs, found) = search(&big, exhaustive, cores).expect("it runs");
    let met = |ok: bool| if ok { "MET" } else { "NOT MET" };
    println!("explorer (native):");
    println!(
        "  schedules per second per core, median over the gallery {median:>9.0}   (goal >= 30,000)   {}",
        met(median >= 30_000.0)
    );
    println!(
        "  speed-up from 1 to 2 threads                           {speedup:>9.2}   (goal >= 1.8)   {}   (a plain CPU loop gets {:.2} here)",
        met(speedup >= 1.8),
        machine_speedup()
    );
    println!(
        "  exhaustive search, 20 objects, 2 apiservers, 3 controllers: {n} schedules ({} candidate faults) in {secs:.1}s on {cores} threads, {found} failures",
        ex.stats.faults
    );
    for r in rows {
        println!("{r}");
    }
}
