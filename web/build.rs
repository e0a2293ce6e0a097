//! The gallery's index for the page: (file, title) of every scenario. The scripts themselves are
//! copied beside the page (`scenarios/` in dist/, see index.html) and fetched when picked, so
//! they are not part of the page's first load.
use std::fmt::Write;

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
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
    let mut out = String::from("/// (file name, title) of every gallery scenario, in file order.\npub const INDEX: &[(&str, &str)] = &[\n");
    for f in files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let title = text
            .lines()
            .find_map(|l| l.trim().strip_prefix('#'))
            .map(str::trim)
            .unwrap_or("");
        writeln!(out, "    ({name:?}, {title:?}),").unwrap();
    }
    out += "];\n";
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("gallery_index.rs"), out).unwrap();
}
