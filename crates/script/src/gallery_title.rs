// Included by lib.rs (`gallery::title`) and by build.rs (the titles of `gallery::INDEX`), so the
// page's index and a script read at run time name a scenario alike. Not a module: the build
// script cannot use the library it builds.

/// The first comment line of a script: its one-line description.
pub fn title(script: &str) -> &str {
    script
        .lines()
        .find_map(|l| l.trim().strip_prefix('#'))
        .map(str::trim)
        .unwrap_or("")
}
