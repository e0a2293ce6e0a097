//! `cargo xtask build|serve|test|bench`: every set-up step, check and figure of the project, in Rust
//! so they run the same on every machine. Tools are installed only when missing, so a second run
//! skips every install.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

#[cfg(test)]
mod map;
mod serve;

const TOOLCHAIN: &str = "1.95.0";
const TRUNK_VERSION: &str = "0.21.14";

const HELP: &str = "\
cargo xtask COMMAND

    serve [--port N]   install what is missing, then `trunk serve`: build the page (release,
                       wasm-opt), serve it on http://127.0.0.1:8080 (or N), rebuild and reload
                       it on every change
    build              install what is missing and build the page into dist/
    test               every check: fmt, clippy, native tests, wasm tests in headless Chromium,
                       the release page build and the browser end-to-end tests
    bench              every benchmark, each figure beside its goal
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = root();
    std::env::set_current_dir(&root).expect("the workspace root exists");
    let result = match args.first().map(String::as_str) {
        Some("serve") => {
            let port = match args
                .iter()
                .position(|a| a == "--port")
                .and_then(|i| args.get(i + 1))
            {
                Some(p) => match p.parse() {
                    Ok(p) => p,
                    Err(_) => {
                        eprintln!("xtask: --port takes a number, not `{p}`");
                        return ExitCode::from(2);
                    }
                },
                None => 8080,
            };
            ensure_tools().and_then(|_| trunk_serve(port))
        }
        Some("build") => build_page(),
        Some("test") => test(),
        Some("bench") => bench(),
        _ => {
            print!("{HELP}");
            return if args.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: from the `CARGO_MANIFEST_DIR` cargo gives the command it runs (`cargo
/// xtask`), else the one it was built in. Two checkouts that share a target directory share
/// this binary, so the build-time path alone would send one checkout's command to the other's
/// files.
fn root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir
        .ancestors()
        .nth(2)
        .expect("crates/xtask is two levels down")
        .to_path_buf()
}

fn say(msg: &str) {
    eprintln!("==> {msg}");
}

/// Runs a command, streaming its output; an error names it.
fn run(cmd: &mut Command) -> Result<(), String> {
    let shown = format!("{:?}", cmd).replace('"', "");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start `{shown}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn cargo_bin() -> PathBuf {
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into())).join(".cargo")
        });
    home.join("bin")
}

/// PATH with cargo's bin folder and the npm tools (wasm-opt) first.
fn tool_path() -> String {
    let mut parts = vec![root().join("node_modules/.bin"), cargo_bin()];
    parts.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(parts)
        .unwrap()
        .to_string_lossy()
        .to_string()
}

fn tool(name: &str) -> Command {
    let mut c = Command::new(name);
    c.env("PATH", tool_path());
    c
}

/// The exact wasm-bindgen version in Cargo.lock: the CLI must match it.
fn locked_wasm_bindgen() -> Result<String, String> {
    let lock = std::fs::read_to_string("Cargo.lock")
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    Err("Cargo.lock has no wasm-bindgen entry".into())
}

/// rustup's wasm32 standard library, which clippy's page pass, the wasm tests and Trunk need.
/// `RUSTUP_AUTO_INSTALL=0` on these machines, so rust-toolchain.toml's `targets` alone does not
/// fetch it.
fn ensure_wasm_target() -> Result<(), String> {
    let targets = output(Command::new("rustup").args([
        "target",
        "list",
        "--installed",
        "--toolchain",
        TOOLCHAIN,
    ]))
    .unwrap_or_default();
    if !targets.lines().any(|l| l == "wasm32-unknown-unknown") {
        say("installing the wasm32-unknown-unknown target");
        run(Command::new("rustup").args([
            "target",
            "add",
            "wasm32-unknown-unknown",
            "--toolchain",
            TOOLCHAIN,
        ]))?;
    }
    Ok(())
}

/// Installs whatever the page build needs and is missing.
fn ensure_tools() -> Result<(), String> {
    let t = Instant::now();
    ensure_wasm_target()?;
    let trunk = output(tool("trunk").arg("--version")).unwrap_or_default();
    if trunk != format!("trunk {TRUNK_VERSION}") {
        say(&format!("installing trunk {TRUNK_VERSION} (compiles from crates.io: about 8 minutes on 2 cores, once)"));
        run(Command::new("cargo").args([
            "install",
            "--locked",
            &format!("trunk@{TRUNK_VERSION}"),
        ]))?;
    }
    let wbg = locked_wasm_bindgen()?;
    let have = output(tool("wasm-bindgen").arg("--version")).unwrap_or_default();
    if have != format!("wasm-bindgen {wbg}") {
        // Without --locked: the CLI's own lockfile wants a crate the registry lacks.
        say(&format!(
            "installing wasm-bindgen-cli {wbg} (matches Cargo.lock; about 3 minutes, once)"
        ));
        run(Command::new("cargo").args(["install", &format!("wasm-bindgen-cli@{wbg}")]))?;
    }
    if npm_stale() {
        say("installing npm packages (binaryen's wasm-opt, esbuild, playwright-core, axe-core)");
        run(Command::new("npm").args(["ci", "--no-audit", "--no-fund"]))?;
    }
    bundle_editor()?;
    say(&format!("tools ready ({:.1}s)", t.elapsed().as_secs_f64()));
    Ok(())
}

/// node_modules is missing, or older than package-lock.json (a pull added a package): npm ci
/// writes `node_modules/.package-lock.json` after every install.
fn npm_stale() -> bool {
    let modified = |p: &str| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (
        modified("node_modules/.package-lock.json"),
        modified("package-lock.json"),
    ) {
        (Some(installed), Some(lock)) => installed < lock,
        _ => true,
    }
}

/// Bundles CodeMirror and the editor glue into `web/editor/editor.js`, which the page loads on
/// demand (committed, so a checkout builds before npm ran; `test` checks it is up to date).
fn bundle_editor() -> Result<(), String> {
    uses(&[Tool::Npm])?;
    run(Command::new("node_modules/.bin/esbuild").args([
        "web/editor/main.js",
        "--bundle",
        "--format=esm",
        "--minify",
        "--legal-comments=none",
        "--log-level=warning",
        "--outfile=web/editor/editor.js",
    ]))
}

fn build_page() -> Result<(), String> {
    ensure_tools()?;
    trunk_build()
}

/// Where Trunk has wasm-bindgen write: under the target directory, wherever CARGO_TARGET_DIR
/// puts it.
fn wasm_bindgen_out() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
        .join("wasm-bindgen")
}

/// `trunk build`, after removing wasm-bindgen's output: it never deletes snippet files that the
/// code no longer uses, and Trunk would ship (and preload) them.
fn trunk_build() -> Result<(), String> {
    uses(&[Tool::WasmTarget, Tool::Trunk, Tool::WasmBindgen, Tool::Npm])?;
    let _ = std::fs::remove_dir_all(wasm_bindgen_out());
    say("building the page (release, wasm-opt)");
    let t = Instant::now();
    run(tool("trunk").args(["build", "--release", "--offline"]))?;
    say(&format!(
        "page built into dist/ ({:.1}s)",
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// `trunk serve`: builds the page like `trunk_build`, serves it on the loopback address only,
/// and rebuilds and reloads it when a watched file changes (`[watch]` in Trunk.toml).
fn trunk_serve(port: u16) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(wasm_bindgen_out());
    say(&format!(
        "trunk serve on http://127.0.0.1:{port}/ (rebuilds and reloads on change; Ctrl+C to stop)"
    ));
    run(tool("trunk").args([
        "serve",
        "--release",
        "--offline",
        "--address",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ]))
}

fn chromium() -> Result<(), String> {
    if Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists() {
        return Ok(());
    }
    let cmd = "apt-get update && apt-get install -y chromium chromium-driver";
    let root = output(Command::new("id").arg("-u")).is_some_and(|u| u == "0");
    if root && Path::new("/usr/bin/apt-get").exists() {
        say("installing Debian's chromium and chromium-driver for the browser tests");
        run(Command::new("sh").args(["-c", &format!("DEBIAN_FRONTEND=noninteractive {cmd}")]))
    } else {
        Err(format!(
            "headless Chromium is missing; install it with:\n    sudo sh -c '{cmd}'"
        ))
    }
}

/// A tool some check of `xtask test` needs, which a fresh machine lacks until a step installs
/// it. Each step says what it needs and what it installs; `check_order` refuses a list where a
/// step needs a tool no earlier step installed (a fresh clone once failed at clippy's wasm pass,
/// second of seven steps, because the wasm target came with the fourth).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    /// rustup's wasm32-unknown-unknown standard library.
    WasmTarget,
    /// Trunk, which builds the page.
    Trunk,
    /// The wasm-bindgen CLI and its test runner, matching Cargo.lock.
    WasmBindgen,
    /// node_modules: wasm-opt, esbuild, playwright-core, axe-core.
    Npm,
    /// Debian's chromium and chromedriver.
    Chromium,
}

/// One check of `xtask test`.
#[derive(Clone, Copy)]
struct Step {
    name: &'static str,
    /// Tools its commands use: each must be installed by an earlier step.
    needs: &'static [Tool],
    /// Tools it installs (when missing) for the steps after it.
    installs: &'static [Tool],
    run: fn() -> Result<(), String>,
}

/// Every check, in order; the first that fails stops the run. Cheap checks that need nothing
/// come first, so a format slip is reported in seconds even on a fresh machine.
const STEPS: &[Step] = &[
    Step {
        name: "format",
        needs: &[],
        installs: &[],
        run: || run(Command::new("cargo").args(["fmt", "--all", "--check"])),
    },
    Step {
        name: "wasm target",
        needs: &[],
        installs: &[Tool::WasmTarget],
        run: ensure_wasm_target,
    },
    Step {
        name: "clippy",
        needs: &[Tool::WasmTarget],
        installs: &[],
        run: clippy,
    },
    Step {
        name: "native tests",
        needs: &[],
        installs: &[],
        run: || run(Command::new("cargo").args(["test", "--workspace"])),
    },
    Step {
        name: "tools",
        needs: &[Tool::WasmTarget],
        installs: &[Tool::Trunk, Tool::WasmBindgen, Tool::Npm, Tool::Chromium],
        run: tools_and_fresh_editor,
    },
    Step {
        name: "wasm tests in headless Chromium",
        needs: &[Tool::WasmTarget, Tool::WasmBindgen, Tool::Chromium],
        installs: &[],
        run: wasm_tests,
    },
    Step {
        name: "release page build",
        needs: &[Tool::WasmTarget, Tool::Trunk, Tool::WasmBindgen, Tool::Npm],
        installs: &[],
        run: trunk_build,
    },
    Step {
        name: "browser end-to-end tests",
        needs: &[Tool::Npm, Tool::Chromium],
        installs: &[],
        run: e2e_tests,
    },
];

/// The running step's declared tools (needs and installs); `None` outside `xtask test`.
static DECLARED: std::sync::Mutex<Option<(&'static str, Vec<Tool>)>> = std::sync::Mutex::new(None);

/// Called by every command that uses a tool: inside `xtask test` a step that did not declare the
/// tool fails here, naming it, so a declaration cannot silently fall out of date.
fn uses(tools: &[Tool]) -> Result<(), String> {
    let declared = DECLARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((step, have)) = declared.as_ref() {
        if let Some(t) = tools.iter().find(|t| !have.contains(t)) {
            return Err(format!(
                "step `{step}` uses {t:?} but does not declare it in STEPS"
            ));
        }
    }
    Ok(())
}

/// Every step's needs are installed by a step before it.
fn check_order(steps: &[Step]) -> Result<(), String> {
    let mut installed: Vec<Tool> = Vec::new();
    for step in steps {
        if let Some(missing) = step.needs.iter().find(|t| !installed.contains(t)) {
            return Err(format!(
                "step `{}` needs {missing:?}, which no earlier step installs",
                step.name
            ));
        }
        installed.extend_from_slice(step.installs);
    }
    Ok(())
}

fn test() -> Result<(), String> {
    check_order(STEPS)?;
    let started = Instant::now();
    let mut passed = 0;
    let result = STEPS.iter().try_for_each(|step| {
        say(step.name);
        let t = Instant::now();
        let declared = step.needs.iter().chain(step.installs).copied().collect();
        *DECLARED.lock().unwrap_or_else(|e| e.into_inner()) = Some((step.name, declared));
        (step.run)().map_err(|e| format!("{}: {e}", step.name))?;
        say(&format!(
            "{}: ok ({:.1}s)",
            step.name,
            t.elapsed().as_secs_f64()
        ));
        passed += 1;
        Ok(())
    });
    // Steps after a failure did not run: they count as failed.
    let summary = format!("{passed} passed, {} failed", STEPS.len() - passed);
    eprintln!("\nxtask test took {:.0}s", started.elapsed().as_secs_f64());
    println!("xtask: {summary}");
    result
}

/// Clippy over the workspace natively, and over the page for the browser's target.
fn clippy() -> Result<(), String> {
    uses(&[Tool::WasmTarget])?;
    let deny = ["--", "-D", "warnings"];
    run(Command::new("cargo")
        .args(["clippy", "--workspace", "--all-targets"])
        .args(deny))?;
    run(Command::new("cargo")
        .args([
            "clippy",
            "-p",
            "listwatch-web",
            "--target",
            "wasm32-unknown-unknown",
        ])
        .args(deny))
}

/// The tools the browser tests need, and the committed editor bundle as its sources build it.
fn tools_and_fresh_editor() -> Result<(), String> {
    ensure_tools().and_then(|_| chromium())?;
    let fresh = Command::new("git")
        .args(["diff", "--quiet", "--", "web/editor/editor.js"])
        .status();
    match fresh {
        Ok(s) if !s.success() => Err(
            "web/editor/editor.js changed when rebuilt from web/editor/main.js: commit it".into(),
        ),
        _ => Ok(()),
    }
}

fn wasm_tests() -> Result<(), String> {
    uses(&[Tool::WasmTarget, Tool::WasmBindgen, Tool::Chromium])?;
    run(tool("cargo")
        .args([
            "test",
            "-p",
            "listwatch-web",
            "--target",
            "wasm32-unknown-unknown",
        ])
        .env("CHROMEDRIVER", "/usr/bin/chromedriver")
        .env("WASM_BINDGEN_TEST_TIMEOUT", "120"))
}

/// `e2e/run.mjs` against the release page, served from `dist/` for the run.
fn e2e_tests() -> Result<(), String> {
    uses(&[Tool::Npm, Tool::Chromium])?;
    let (port, stop) = serve::serve_in_background(&root().join("dist"))?;
    let r = run(Command::new("node")
        .arg("e2e/run.mjs")
        .arg(format!("http://127.0.0.1:{port}/")));
    stop();
    r
}

fn bench() -> Result<(), String> {
    say("native benchmarks (release)");
    run(Command::new("cargo").args([
        "run",
        "--release",
        "-q",
        "-p",
        "listwatch-core",
        "--example",
        "bench",
    ]))?;
    run(Command::new("cargo").args([
        "run",
        "--release",
        "-q",
        "-p",
        "listwatch-script",
        "--example",
        "bench_explore",
    ]))?;
    // The release CLI: the page benchmark runs its 1.2 M-event script natively too.
    run(Command::new("cargo").args(["build", "--release", "-q", "-p", "listwatch"]))?;
    build_page()?;
    chromium()?;
    say("page benchmarks (headless Chromium)");
    let (port, stop) = serve::serve_in_background(&root().join("dist"))?;
    let r = run(Command::new("node")
        .arg("e2e/bench.mjs")
        .arg(format!("http://127.0.0.1:{port}/")));
    stop();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_needs_only_tools_installed_before_it() {
        check_order(STEPS).unwrap();
    }

    #[test]
    fn a_step_before_its_tools_install_is_refused() {
        // The order that failed on a fresh machine: clippy's wasm pass before the wasm target.
        let wasm_target = STEPS.iter().position(|s| s.name == "wasm target").unwrap();
        let clippy = STEPS.iter().position(|s| s.name == "clippy").unwrap();
        let mut steps = STEPS.to_vec();
        steps.swap(wasm_target, clippy);
        let err = check_order(&steps).unwrap_err();
        assert!(err.contains("`clippy` needs WasmTarget"), "{err}");
    }

    #[test]
    fn a_tool_used_without_declaring_it_fails() {
        *DECLARED.lock().unwrap() = Some(("format", vec![]));
        let err = uses(&[Tool::Trunk]).unwrap_err();
        *DECLARED.lock().unwrap() = None;
        assert!(err.contains("`format` uses Trunk"), "{err}");
        assert!(
            uses(&[Tool::Trunk]).is_ok(),
            "outside `xtask test` nothing is checked"
        );
    }
}
