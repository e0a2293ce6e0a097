//! Statements whose effect is a setting: checked through the compiled configuration.

use listwatch_core::CacheMode;

fn config(src: &str) -> listwatch_core::Config {
    listwatch_script::parse(src)
        .unwrap_or_else(|d| panic!("{d:?}"))
        .config
}

#[test]
fn kubernetes_version_picks_that_versions_defaults_where_the_script_does_not_choose() {
    let old = config("kubernetes 1.18\nkind Pod\nkind Node cache dynamic\n");
    assert_eq!(old.kinds[0].cache, CacheMode::Fixed { capacity: 100 });
    assert!(
        matches!(old.kinds[1].cache, CacheMode::Dynamic { .. }),
        "an explicit choice stays"
    );
    assert!(old.reflector.bookmarks && !old.reflector.streaming_list);
    let ancient = config("kubernetes 1.14\nkind Pod\nbookmarks on\n");
    assert!(ancient.reflector.bookmarks, "explicit bookmarks win");
    assert!(!config("kubernetes 1.14\nkind Pod\n").reflector.bookmarks);
    let new = config("kubernetes 1.35\nkind Pod\n");
    assert!(new.reflector.streaming_list);
    assert!(matches!(new.kinds[0].cache, CacheMode::Dynamic { .. }));
    let default = config("kind Pod\n");
    assert!(
        !default.reflector.streaming_list && default.reflector.bookmarks,
        "1.34 without a version"
    );
    let e = listwatch_script::parse("kubernetes 2.0\nkind Pod\n").unwrap_err();
    assert!(e[0].message.contains("not a Kubernetes version"), "{:?}", e);
}

#[test]
fn page_size_and_streaming_list_are_settings() {
    let c = config("page-size 2\nstreaming-list on\nkind Pod\n");
    assert_eq!(c.reflector.page_size, 2);
    assert!(c.reflector.streaming_list);
    assert_eq!(
        config("kind Pod\n").reflector.page_size,
        500,
        "client-go's pager default"
    );
}
