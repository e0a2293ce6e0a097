//! Start here: a path through the gallery, from the first list to the bugs Sieve found, one
//! scenario a step, with what to look for. The step the reader reached is remembered in this
//! browser, so the tour picks up where they stopped.

use yew::prelude::*;

const KEY: &str = "listwatch.tour";

/// (gallery file prefix, what to look for).
pub const STEPS: &[(&str, &str)] = &[
    (
        "01-",
        "A reflector lists, then watches from the list's resourceVersion.",
    ),
    (
        "02-",
        "A small watch cache overflows: the re-watch gets 410 Gone and relists.",
    ),
    (
        "03-",
        "Exactly where \"too old\" starts: the oldest RV the cache still holds.",
    ),
    (
        "04-",
        "Bookmarks move the watcher's RV forward, so a reconnect needs no relist.",
    ),
    (
        "06-",
        "A watch times out and is simply opened again from the last RV.",
    ),
    ("07-", "A dynamic cache grows while events are fresh."),
    (
        "09-",
        "The work queue collapses many events for a key into one reconcile.",
    ),
    ("10-", "Errors back off and requeue."),
    (
        "24-",
        "A streaming list: one watch with the initial events in place of a list.",
    ),
    (
        "25-",
        "A paged list whose continue token expires: 410 in the middle of a list.",
    ),
    (
        "11-",
        "A stale apiserver sends a controller back in time: open the Objects panel at 21 s.",
    ),
    ("12-", "The fix: a delete with a UID precondition."),
    (
        "13-",
        "A controller never sees a state it should have acted on.",
    ),
    (
        "15-",
        "A crash between two writes leaves half the work done.",
    ),
    ("17-", "Level-triggered reconciles recover a missed delete."),
    ("19-", "Let the explorer find the fault that breaks it."),
];

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn script_of(prefix: &str) -> Option<(&'static str, &'static str)> {
    listwatch_script::gallery::GALLERY
        .iter()
        .find(|(n, _)| n.starts_with(prefix))
        .copied()
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub on_pick: Callback<String>,
}

#[function_component(Tour)]
pub fn tour(p: &Props) -> Html {
    // The step reached, remembered across visits (None: never started).
    let step = use_state(|| {
        storage()
            .and_then(|s| s.get_item(KEY).ok().flatten())
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&i| i < STEPS.len())
    });
    let open = use_state(|| false);
    let go = {
        let (step, open, pick) = (step.clone(), open.clone(), p.on_pick.clone());
        Callback::from(move |i: usize| {
            if let Some((_, src)) = STEPS.get(i).and_then(|(pre, _)| script_of(pre)) {
                if let Some(s) = storage() {
                    let _ = s.set_item(KEY, &i.to_string());
                }
                step.set(Some(i));
                open.set(true);
                pick.emit(src.to_string());
            }
        })
    };
    let toggle = {
        let open = open.clone();
        Callback::from(move |_: MouseEvent| open.set(!*open))
    };
    let (label, next) = match *step {
        None => ("Start the tour".to_string(), 0),
        Some(i) if i + 1 < STEPS.len() => (
            format!("Continue: step {} of {}", i + 2, STEPS.len()),
            i + 1,
        ),
        Some(i) => (
            "Start again".to_string(),
            if i + 1 >= STEPS.len() { 0 } else { i + 1 },
        ),
    };
    let on_next = {
        let go = go.clone();
        Callback::from(move |_: MouseEvent| go.emit(next))
    };
    html! {
        <div class="tour" data-testid="tour" data-step={step.map(|i| (i + 1).to_string()).unwrap_or_default()}>
            <div class="tour-bar">
                <b>{"Start here"}</b>
                if let Some(i) = *step {
                    <span class="hint" data-testid="tour-where">{format!("you stopped at step {} of {}", i + 1, STEPS.len())}</span>
                }
                <button data-testid="tour-next" onclick={on_next}>{label}</button>
                if let Some(i) = (*step).filter(|&i| i > 0) {
                    <button data-testid="tour-prev" onclick={{ let go = go.clone(); move |_| go.emit(i - 1) }}>{"Previous step"}</button>
                }
                <button class="disclose" aria-expanded={(*open).to_string()} data-testid="tour-toggle" onclick={toggle}>
                    { if *open { "▾ all steps" } else { "▸ all steps" } }
                </button>
            </div>
            if let Some(i) = *step {
                <p class="tour-now" aria-live="polite">{format!("Step {}: {}", i + 1, STEPS[i].1)}</p>
            }
            if *open {
                <ol class="tour-steps">
                    { for STEPS.iter().enumerate().map(|(j, (pre, what))| {
                        let Some((file, src)) = script_of(pre) else { return html! {} };
                        let go = go.clone();
                        let done = step.is_some_and(|i| j < i);
                        let here = *step == Some(j);
                        html! {
                            <li data-testid="tour-step" data-file={file} class={classes!(here.then_some("here"), done.then_some("done"))}>
                                <button class="link" aria-current={here.then_some("step")} onclick={move |_| go.emit(j)}>
                                    {if done { "✓ " } else if here { "▶ " } else { "" }}<b>{listwatch_script::gallery::title(src)}</b>
                                </button>
                                <span class="hint">{format!(" {what}")}</span>
                            </li>
                        }
                    }) }
                </ol>
            }
        </div>
    }
}
