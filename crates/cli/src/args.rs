//! The command line, declared with clap's derive: one variant per subcommand, each with its own
//! `--help`. Usage errors exit with 2, like invalid scripts; `--help` and `--version` with 0.

use std::process::ExitCode;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use listwatch_core::TimeMs;

/// The address a share link points at unless `--base` says otherwise.
pub const DEFAULT_BASE: &str = "http://127.0.0.1:8080/";

/// The largest `--budget` of `explore`: the page's and its worker's too.
const MAX_BUDGET: u64 = listwatch_script::explore::MAX_BUDGET_SCHEDULES;

const EXIT_CODES: &str = "\
Exit codes:
  0  ok: every file parses and every expectation holds (explore: nothing breaks it)
  1  an expectation failed (explore: a counterexample was found)
  2  invalid input: a script with diagnostics, a file that cannot be read, a bad argument";

const EXAMPLES: &str = "\
Examples:
  listwatch run scenarios/02-overflow-410-relist.lw --trace   the summary, then the event log
  listwatch run scenarios/02-overflow-410-relist.lw --json    the run as JSON (docs/trace-format.md)
  listwatch run FILE --compare kubernetes=1.34,1.35           what changes if I upgrade
  listwatch check scenarios/*.lw                              check every expectation
  listwatch share FILE --at 2.2s --base URL                   a share link to a moment
  listwatch open LINK                                         the script a share link carries
  listwatch explore FILE --budget 1000 --all --json           search fault schedules
  listwatch import incident.log > incident.lw                 a scenario from pasted logs
  listwatch completions bash > /etc/bash_completion.d/listwatch

FILE may be `-` for standard input.";

/// listwatch: run Kubernetes list-then-watch scenarios and check their expectations
#[derive(Parser, Debug)]
#[command(
    name = "listwatch",
    version,
    after_help = format!("{EXAMPLES}\n\n{EXIT_CODES}")
)]
pub struct Cli {
    /// When to colour the output (auto: on a terminal, unless NO_COLOR is set)
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto, global = true)]
    pub color: ColorWhen,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario and print a summary
    ///
    /// The summary tells each watcher's lists, watches and 410s, each controller's reconciles,
    /// why the relists happened, every expectation's verdict and whether ESR holds.
    #[command(after_help = EXIT_CODES)]
    Run {
        /// The scenario script (`-` for standard input)
        #[arg(value_name = "FILE")]
        file: String,
        /// Print the one-line-per-event log after the summary
        #[arg(long)]
        trace: bool,
        /// Print the run as JSON (docs/trace-format.md) instead of the summary
        #[arg(long)]
        json: bool,
        /// Run it under two versions on one clock and print the facts that differ
        /// (kubernetes=1.34,1.35 or controller-runtime=0.22,0.23)
        #[arg(long, value_name = "SETTING=A,B", conflicts_with_all = ["trace", "json"])]
        compare: Option<listwatch_script::compare::Versions>,
    },
    /// Check that files parse and every expectation holds
    #[command(after_help = EXIT_CODES)]
    Check {
        /// The scenario scripts (`-` for standard input)
        #[arg(value_name = "FILE", required = true)]
        files: Vec<String>,
    },
    /// Print a share link carrying the scenario (and a moment)
    Share {
        /// The scenario script (`-` for standard input)
        #[arg(value_name = "FILE")]
        file: String,
        /// The page the link opens
        #[arg(long, value_name = "URL", default_value = DEFAULT_BASE)]
        base: String,
        /// The moment the page shows (2s, 250ms, 1m)
        #[arg(long, value_name = "TIME", value_parser = parse_moment)]
        at: Option<TimeMs>,
    },
    /// Print the script a share link carries
    Open {
        /// A share link (`…#lw1.…`)
        #[arg(value_name = "LINK")]
        link: String,
    },
    /// Search fault schedules that break the expectations
    ///
    /// Single faults, then pairs, only those a real cluster has: a crash between two writes, a
    /// state hidden from the controller (its notifications held until a later state arrives), a
    /// restart against a stale apiserver, a disconnect long enough for a 410. A watch stream
    /// never loses an event. The first schedule that breaks an expectation or ESR is printed as
    /// a scenario to run, share and open in the page (exit 1); none within the budget: exit 0.
    #[command(after_help = EXIT_CODES)]
    Explore {
        /// The scenario script (`-` for standard input)
        #[arg(value_name = "FILE", required_unless_present = "merge")]
        file: Option<String>,
        /// How many fault schedules to try at most (1 to 10000000)
        #[arg(long, value_name = "N", value_parser = parse_budget)]
        budget: Option<u64>,
        /// Keep searching after the first counterexample and print every one found
        #[arg(long)]
        all: bool,
        /// Print the search's figures and counterexamples as JSON
        #[arg(long)]
        json: bool,
        /// Stop after this long (2s, 30s, 5m) and report what was found so far
        #[arg(long, value_name = "TIME", value_parser = parse_time_limit)]
        time: Option<Duration>,
        /// Threads to run schedules on (default: every core); the result does not depend on it
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: Option<u16>,
        /// Put faults only on this controller (the others are the cluster's helpers)
        #[arg(long, value_name = "NAME", conflicts_with = "merge")]
        controller: Option<String>,
        /// Explore only shard I of N (0-based) of the schedules; merge the shards' --json with --merge
        #[arg(long, value_name = "I/N", value_parser = parse_shard, conflicts_with = "merge")]
        shard: Option<(u64, u64)>,
        /// Merge shards' --json output into the unsharded result
        #[arg(long, value_name = "FILES", num_args = 1.., conflicts_with = "file")]
        merge: Vec<String>,
    },
    /// Turn pasted logs, audit events and metrics into a scenario
    ///
    /// Reads client-go reflector and informer log lines (klog's printf style up to client-go
    /// 1.32 and the structured style from 1.33, with or without klog's header, or as JSON),
    /// kube-apiserver audit events of lists and watches (one JSON object a line) and
    /// apiserver_watch_cache_* metric samples, and writes a scenario whose timeline reproduces
    /// what they show: the script to standard output, a report of what each line became (and
    /// why a line was not recognised) to standard error. Every choice the input does not make is
    /// an `# assumed:` comment in the script. At most 1 MiB and 10,000 lines (docs/import.md).
    #[command(after_help = EXIT_CODES)]
    Import {
        /// The pasted lines (`-` for standard input)
        #[arg(value_name = "FILE")]
        file: String,
        /// Print the script and the report as one JSON document instead
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script (bash, elvish, fish, powershell, zsh)
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
}

/// `--at`: a moment of the run, written as the time since its start.
fn parse_moment(t: &str) -> Result<TimeMs, String> {
    listwatch_script::parse_time_arg(t).map(|d| TimeMs::ZERO + d)
}

/// `--time`: a limit on the search's wall-clock time, written as scripts write a duration.
fn parse_time_limit(t: &str) -> Result<Duration, String> {
    listwatch_script::parse_time_arg(t).map(|d| Duration::from_millis(d.ms()))
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("`{s}` is not a shard: write I/N with 0 <= I < N, e.g. 0/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.trim().parse::<u64>().map_err(|_| bad())?,
        n.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n || n > listwatch_script::explore::MAX_SHARDS {
        return Err(bad());
    }
    Ok((i, n))
}

fn parse_budget(n: &str) -> Result<u64, String> {
    match n.parse::<u64>() {
        Ok(n) if (1..=MAX_BUDGET).contains(&n) => Ok(n),
        _ => Err(format!(
            "--budget takes a number of schedules from 1 to {MAX_BUDGET}"
        )),
    }
}

/// Parses the process's arguments. Help and version go to standard output (exit 0); usage errors
/// to standard error, with whatever the user typed escaped like every other text (exit 2). No
/// arguments at all prints the help, as `help` does.
pub fn parse() -> Result<Cli, ExitCode> {
    if std::env::args_os().len() <= 1 {
        let _ = Cli::command().print_help();
        return Err(ExitCode::SUCCESS);
    }
    Cli::try_parse().map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::InvalidSubcommand => {
            let word = match e.get(ContextKind::InvalidSubcommand) {
                Some(ContextValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            let mut msg = format!("error: unknown command `{word}`\n");
            if let Some(ContextValue::Strings(s)) = e.get(ContextKind::SuggestedSubcommand) {
                msg += &format!("\n  tip: did you mean `{}`?\n", s.join("` or `"));
            }
            msg += "\nFor the commands, try 'listwatch --help'.\n";
            eprint!("{}", crate::term(&msg));
            ExitCode::from(2)
        }
        _ => {
            eprint!("{}", crate::term(&e.render().to_string()));
            ExitCode::from(2)
        }
    })
}

/// The completion script for `shell` (made in memory: clap_complete panics on a write error,
/// such as a closed pipe).
pub fn completions(shell: clap_complete::Shell) -> String {
    let mut script = vec![];
    clap_complete::generate(shell, &mut Cli::command(), "listwatch", &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
        // The help says the budget's limit in words a doc comment cannot compute.
        let mut explore = Cli::command();
        let help = explore
            .find_subcommand_mut("explore")
            .expect("explore")
            .render_help()
            .to_string();
        assert!(help.contains(&format!("1 to {MAX_BUDGET}")), "{help}");
    }
}
