//! The other documentation integrations (docs/embedding.md): the Docusaurus component and the
//! Hugo shortcode, tested by `e2e/docs-integrations.mjs` with Node (and Hugo, when it is on
//! PATH). Run from here so `cargo test` covers them; without Node 20.6 or later (module hooks)
//! this says so and passes.

use std::path::Path;
use std::process::Command;

#[test]
fn the_docusaurus_component_and_the_hugo_shortcode() {
    let version = Command::new("node").arg("--version").output();
    let Ok(version) = version.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()) else {
        eprintln!("note: node is not on PATH: e2e/docs-integrations.mjs is skipped");
        return;
    };
    let mut parts = version
        .trim_start_matches('v')
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if (major, minor) < (20, 6) {
        eprintln!(
            "note: node {version} has no module.register: e2e/docs-integrations.mjs is skipped"
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("node")
        .arg("e2e/docs-integrations.mjs")
        .current_dir(&root)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("# fail 0"), "{report}");
    if report.contains("# skipped 1") {
        eprintln!("note: hugo is not on PATH: the shortcode's build was skipped");
    }
}
