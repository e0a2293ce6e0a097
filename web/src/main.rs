//! The listwatch playground: edit a scenario, watch it run, travel in time.

mod app;
mod components;
mod state;

fn main() {
    yew::Renderer::<app::App>::new().render();
}
