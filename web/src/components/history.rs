//! Local history: the last 30 versions of the script, kept in this browser (localStorage) and
//! restorable. A version is recorded once the text has rested for a moment, so typing does not
//! fill the list with every keystroke.

use gloo_timers::callback::Timeout;
use web_sys::js_sys::Date;
use yew::prelude::*;

const KEY: &str = "listwatch.history";
pub const KEEP: usize = 30;
/// Separates entries, and each entry's time from its text; a script holding either is not kept.
const RECORD: char = '\u{1e}';
const UNIT: char = '\u{1f}';

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// (time in ms since the epoch, script), newest first.
pub fn load() -> Vec<(f64, String)> {
    let raw = storage()
        .and_then(|s| s.get_item(KEY).ok().flatten())
        .unwrap_or_default();
    raw.split(RECORD)
        .filter_map(|e| {
            let (t, s) = e.split_once(UNIT)?;
            Some((t.parse().ok()?, s.to_string()))
        })
        .take(KEEP)
        .collect()
}

fn save(list: &[(f64, String)]) {
    let raw = list
        .iter()
        .map(|(t, s)| format!("{t}{UNIT}{s}"))
        .collect::<Vec<_>>()
        .join(&RECORD.to_string());
    if let Some(s) = storage() {
        let _ = s.set_item(KEY, &raw);
    }
}

/// Records `script` as the newest version unless it is the newest already (or empty).
pub fn record(script: &str) -> bool {
    if script.trim().is_empty() || script.contains(RECORD) || script.contains(UNIT) {
        return false;
    }
    let mut list = load();
    if list.first().is_some_and(|(_, s)| s == script) {
        return false;
    }
    list.retain(|(_, s)| s != script);
    list.insert(0, (Date::now(), script.to_string()));
    list.truncate(KEEP);
    save(&list);
    true
}

fn when(t: f64) -> String {
    let d = Date::new(&t.into());
    format!(
        "{:02}:{:02}:{:02}",
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub source: String,
    pub on_restore: Callback<String>,
}

#[function_component(History)]
pub fn history(p: &Props) -> Html {
    let open = use_state(|| false);
    let version = use_state(|| 0u32);
    // Record the text once it has rested for 800 ms.
    {
        let version = version.clone();
        use_effect_with(p.source.clone(), move |src| {
            let src = src.clone();
            let t = Timeout::new(800, move || {
                if record(&src) {
                    version.set(*version + 1);
                }
            });
            move || drop(t)
        });
    }
    let list = if *open { load() } else { vec![] };
    let toggle = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    html! {
        <div class="history-panel">
            <h2 class="panel-head">
                <button class="disclose" data-testid="history-toggle" aria-expanded={(*open).to_string()} onclick={toggle}>
                    { if *open { "▾ History" } else { "▸ History" } }
                </button>
                <span class="hint">{" your last 30 scripts, in this browser"}</span>
            </h2>
            if *open {
                <ol data-testid="history" class="history-list">
                    if list.is_empty() { <li class="hint">{"Nothing yet: versions are kept as you edit."}</li> }
                    { for list.into_iter().map(|(t, s)| {
                        let current = s == p.source;
                        let title = listwatch_script::gallery::title(&s).to_string();
                        let lines = s.lines().count();
                        let restore = p.on_restore.clone();
                        let text = s.clone();
                        html! {
                            <li data-testid="history-entry" class={classes!(current.then_some("current"))}>
                                <span class="when">{when(t)}</span>{" "}
                                <span class="what">{if title.is_empty() { "(untitled)".to_string() } else { title.clone() }}</span>
                                <span class="hint">{format!(" · {lines} lines")}</span>{" "}
                                if current {
                                    <span class="hint">{"(in the editor)"}</span>
                                } else {
                                    <button data-testid="history-restore" aria-label={format!("Restore the version of {}", when(t))}
                                        onclick={move |_| restore.emit(text.clone())}>{"Restore"}</button>
                                }
                            </li>
                        }
                    }) }
                </ol>
            }
        </div>
    }
}
