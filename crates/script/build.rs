//! Embeds every scenario of `scenarios/` so the CLI's tests and the web page share one gallery.
use std::fmt::Write;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "lw"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::from("/// (file name, script) of every gallery scenario, in file order.\npub const GALLERY: &[(&str, &str)] = &[\n");
    for f in files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            f.canonicalize().unwrap().display().to_string()
        )
        .unwrap();
    }
    out += "];\n";
    std::fs::write(
        std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("gallery.rs"),
        out,
    )
    .unwrap();
}
