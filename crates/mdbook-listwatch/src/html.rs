//! The HTML a block becomes: the live embed and its static fallback, on one line.
//!
//! One line, because the Markdown renderer passes an HTML block through only up to the next blank
//! line: the script's line breaks are written `&#10;`, which `<pre>` shows as line breaks.

use listwatch_core::TimeMs;
use listwatch_script::share::{self, Shared};

use crate::options::Options;
use crate::RunFacts;

/// Text for HTML: element content and quoted attribute values alike.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&#39;",
            // Any line break, so the HTML stays on one line.
            '\n' => out += "&#10;",
            '\r' => out += "&#13;",
            c => out.push(c),
        }
    }
    out
}

/// The playground's page: `…/index.html` (its embed view is `index.html?embed`).
fn page(playground: &str) -> String {
    if playground.ends_with(".html") {
        playground.to_string()
    } else if playground.ends_with('/') {
        format!("{playground}index.html")
    } else {
        format!("{playground}/index.html")
    }
}

/// The embed view's address for a block: its options in the query, the script in the fragment.
pub fn embed_src(playground: &str, options: &Options, script: &str) -> String {
    let mut query = vec!["embed".to_string()];
    if let Some(panels) = &options.panels {
        query.push(format!("panels={}", panels.join(",")));
    }
    if let Some(theme) = &options.theme {
        query.push(format!("theme={theme}"));
    }
    if options.autoplay {
        query.push("autoplay".into());
    }
    format!(
        "{}?{}#{}",
        page(playground),
        query.join("&"),
        share::encode(&shared(options, script))
    )
}

/// The playground itself with the block's script: "Open in the playground".
pub fn playground_link(playground: &str, options: &Options, script: &str) -> String {
    share::link(&page(playground), &shared(options, script))
}

fn shared(options: &Options, script: &str) -> Shared {
    Shared {
        script: script.to_string(),
        at_ms: options.at.filter(|d| d.0 > 0).map(|d| TimeMs::ZERO + d),
        events: None,
    }
}

/// Pixels the embed view takes: its bar, title, controls and picture, and each panel shown (the
/// default shows the timeline and the explanation). Measured at 1200 px wide, the fixture book's
/// embeds reported 870 to 960 px with the default panels. The page also reports its real height,
/// which `RESIZE` applies where scripts run.
pub fn default_height_px(options: &Options) -> u32 {
    let shown = |p: &str| match &options.panels {
        Some(panels) => panels.iter().any(|x| x == p),
        None => p != "editor",
    };
    let mut px = 620;
    for (panel, height_px) in [("editor", 320), ("timeline", 160), ("explanation", 220)] {
        if shown(panel) {
            px += height_px;
        }
    }
    px
}

/// Applies the height each embed reports (`postMessage({listwatch: "height"})`) to its iframe,
/// unless the block fixed one; once a page, however many blocks (mdBook's print page joins
/// every chapter). No text from a script is in it.
const RESIZE: &str = "<script>if(!window.listwatchResize){window.listwatchResize=1;addEventListener('message',function(e){var d=e.data;if(!d||d.listwatch!=='height')return;var h=parseInt(d.height,10);if(!(h>100&&h<5000))return;document.querySelectorAll('iframe.listwatch-embed:not([data-listwatch-height])').forEach(function(f){if(f.contentWindow===e.source)f.style.height=h+'px';});});}</script>";

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the run did, in words: the fallback's first paragraph.
pub fn facts_text(f: &RunFacts) -> String {
    let cap = if f.at_cap {
        " (stopped at a cap on its work)"
    } else {
        ""
    };
    let passed = f.expectations.iter().filter(|x| x.pass).count();
    let expectations = match f.expectations.len() {
        0 => "No expectations.".to_string(),
        n if passed == n => format!("Expectations: all {n} pass."),
        n => format!("Expectations: {passed} of {n} pass."),
    };
    format!(
        "Run when this page was built: {} of virtual time, {}{cap}: {} × 410 Gone, {}, {}. {expectations} ESR {}.",
        f.end_ms,
        plural(f.events, "event", "events"),
        f.gone,
        plural(f.relists, "relist", "relists"),
        plural(f.reconciles, "reconcile", "reconciles"),
        if f.esr_holds { "holds" } else { "does not hold" },
    )
}

/// A block's HTML: the iframe, a note for readers without JavaScript, and the fallback with the
/// script and what its run did. Everything from the script is escaped.
pub fn block(
    playground: &str,
    options: &Options,
    script: &str,
    facts: &RunFacts,
    first_in_chapter: bool,
) -> String {
    let title = if facts.title.is_empty() {
        "listwatch scenario".to_string()
    } else {
        format!("listwatch scenario: {}", facts.title)
    };
    let (height_px, fixed) = match options.height_px {
        Some(px) => (px, format!(" data-listwatch-height=\"{px}\"")),
        None => (default_height_px(options), String::new()),
    };
    let mut s = String::from("<div class=\"listwatch\">");
    s += &format!(
        "<iframe class=\"listwatch-embed\" src=\"{}\" title=\"{}\" loading=\"lazy\"{fixed} style=\"display:block;width:100%;height:{height_px}px;border:1px solid #d9dde3;border-radius:6px\"></iframe>",
        escape(&embed_src(playground, options, script)),
        escape(&title),
    );
    s += "<noscript><style>.listwatch-embed{display:none!important}</style><p>The live example needs JavaScript: its script and what its run did are below.</p></noscript>";
    s += "<details class=\"listwatch-fallback\"><summary>The scenario&#39;s script and what its run did</summary>";
    s += &format!("<p>{}</p>", escape(&facts_text(facts)));
    if !facts.expectations.is_empty() {
        s += "<ul>";
        for x in &facts.expectations {
            s += &format!(
                "<li>{} line {}: {} (found {})</li>",
                if x.pass { "PASS" } else { "FAIL" },
                x.line,
                escape(&x.text),
                escape(&x.found)
            );
        }
        s += "</ul>";
    }
    s += &format!(
        "<pre><code class=\"language-text\">{}</code></pre>",
        escape(script)
    );
    s += &format!(
        "<p><a href=\"{}\">Open in the playground</a></p></details>",
        escape(&playground_link(playground, options, script))
    );
    if first_in_chapter {
        s += RESIZE;
    }
    s + "</div>"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_leaves_no_markup_and_no_line_break() {
        let e = escape("</iframe><script>alert('x\" & y')</script>\r\nnext");
        assert_eq!(
            e,
            "&lt;/iframe&gt;&lt;script&gt;alert(&#39;x&quot; &amp; y&#39;)&lt;/script&gt;&#13;&#10;next"
        );
    }

    #[test]
    fn the_embed_address_carries_options_and_script() {
        let o =
            crate::options::parse("panels=editor,timeline theme=dark autoplay at=2.2s").unwrap();
        let src = embed_src("https://example.org/lw/", &o, "kind Pod\n");
        let (page, fragment) = src.split_once('#').unwrap();
        assert_eq!(
            page,
            "https://example.org/lw/index.html?embed&panels=editor,timeline&theme=dark&autoplay"
        );
        let shared = share::decode(fragment).unwrap();
        assert_eq!(shared.script, "kind Pod\n");
        assert_eq!(shared.at_ms, Some(TimeMs(2200)));
        // A base without a slash, or naming its page, gets the same page.
        for base in [
            "https://example.org/lw",
            "https://example.org/lw/index.html",
        ] {
            assert!(embed_src(base, &Options::default(), "")
                .starts_with("https://example.org/lw/index.html?embed#lw2."));
        }
    }

    #[test]
    fn heights_follow_the_panels() {
        let h = |o: &str| default_height_px(&crate::options::parse(o).unwrap());
        assert_eq!(h(""), h("panels=timeline,explanation"));
        assert!(h("panels=timeline") < h(""));
        assert!(h("panels=editor,timeline,explanation") > h(""));
    }
}
