//! Explorer throughput for `cargo xtask bench`: schedules per second over the gallery, natively.

use std::time::Instant;

use listwatch_core::explore::Budget;
use listwatch_script::explore::explorer;
use listwatch_script::gallery::GALLERY;

fn main() {
    let budget = Budget {
        schedules: 3000,
        first_failure: false,
    };
    let (mut total_schedules, mut total_secs) = (0u64, 0f64);
    let mut rows = vec![];
    let mut rates = vec![];
    for (name, src) in GALLERY {
        let Ok((mut ex, _)) = explorer(src, budget) else {
            continue;
        };
        let t = Instant::now();
        ex.run();
        let secs = t.elapsed().as_secs_f64();
        let s = ex.stats;
        if s.tried == 0 {
            continue;
        }
        total_schedules += s.tried;
        total_secs += secs;
        rates.push(s.tried as f64 / secs.max(1e-9));
        rows.push(format!(
            "    {name:<44} {:>6} schedules ({:>4} skipped) {:>10.0} /s",
            s.tried,
            s.skipped,
            s.tried as f64 / secs.max(1e-9)
        ));
    }
    let rate = total_schedules as f64 / total_secs.max(1e-9);
    rates.sort_by(f64::total_cmp);
    let median = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
    println!(
        "explorer (native, gallery, up to {} schedules each, no stop at the first failure):",
        budget.schedules
    );
    println!(
        "  schedules per second, median scenario {:>9.0}   (goal >= 10,000; the page's worker is measured by e2e/bench.mjs)   {}",
        median,
        if median >= 10_000.0 { "MET" } else { "NOT MET" }
    );
    println!(
        "  schedules per second, all scenarios   {:>9.0}   (dominated by 04, 05, 07: thousands of writes, each fork runs minutes of settling)",
        rate
    );
    for r in rows {
        println!("{r}");
    }
}
