//! The gallery's index for the page: (file, title) of every scenario, as listwatch-script's build
//! lists them (`listwatch_script::gallery::INDEX`), so `scenarios/` is read in one place. The
//! scripts themselves are copied beside the page (`scenarios/` in dist/, see index.html) and
//! fetched when picked, so they are not part of the page's first load.

fn main() {
    // The index changes with listwatch-script, which this crate is rebuilt after: nothing here
    // reads `scenarios/`.
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(
        out_dir.join("gallery_index.rs"),
        "pub use listwatch_script::gallery::INDEX;\n",
    )
    .unwrap();
}
