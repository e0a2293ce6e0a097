//! One component per part of the page.

pub mod announce;
pub mod controls;
pub mod editor;
pub mod explore;
pub mod export;
pub mod faults;
pub mod import;
pub mod layout;
pub mod legend;
pub mod objects;
pub mod panels;
pub mod sequence;
pub mod system;
pub mod timeline;

use listwatch_core::TimeMs;

/// What an effect leaves to run when its component unmounts.
pub type Teardown = Box<dyn FnOnce()>;

/// `use_effect_with((), effect)` with the effect boxed: yew's effect code is a copy per closure
/// type, so the page's effects that run once, on mount, share one copy instead of eleven (1.4 KB less gzipped, 0.9 KB packed).
#[yew::hook]
pub fn use_mount(effect: Box<dyn FnOnce() -> Teardown>) {
    yew::use_effect_with((), move |_| effect());
}

/// The teardown of an effect that leaves nothing to undo.
pub fn nothing() -> Teardown {
    Box::new(|| ())
}

/// `12.345s`: the clock's format.
pub fn clock(t: TimeMs) -> String {
    let ms = t.ms();
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

/// A coordinate for SVG: at most one decimal (`12`, `12.5`, `-3.2`). Written with integers, so
/// the page's wasm carries none of the standard library's float formatting (about 10 KB).
pub fn num(v: f64) -> String {
    let t = (v * 10.0 + 0.5).floor() as i64;
    let (sign, a) = if t < 0 {
        ("-", t.unsigned_abs())
    } else {
        ("", t as u64)
    };
    if a % 10 == 0 {
        format!("{sign}{}", a / 10)
    } else {
        format!("{sign}{}.{}", a / 10, a % 10)
    }
}

/// The browser's sine and cosine: the picture's rings need a few, and the browser's cost the
/// wasm nothing (Rust's own bring libm's argument reduction, about 6 KB).
pub fn sin(x: f64) -> f64 {
    web_sys::js_sys::Math::sin(x)
}

pub fn cos(x: f64) -> f64 {
    web_sys::js_sys::Math::cos(x)
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::*;

    #[wasm_bindgen_test]
    fn num_writes_one_decimal_at_most() {
        for (v, s) in [
            (0.0, "0"),
            (12.0, "12"),
            (12.54, "12.5"),
            (12.56, "12.6"),
            (-3.24, "-3.2"),
            (-0.04, "0"),
            (1399.95, "1400"),
            (700.0, "700"),
        ] {
            assert_eq!(super::num(v), s, "{v}");
        }
    }
}
