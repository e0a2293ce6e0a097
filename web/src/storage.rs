//! The browser's localStorage, as plain strings: the keys' values are the texts themselves
//! (`panels.js` and the browser tests read and write the same keys), and a page where storage is
//! blocked (a sandboxed iframe, some private modes) simply keeps nothing.
//!
//! gloo-storage was weighed and not used: it stores every value JSON-encoded (a script would be
//! saved as a quoted string, unreadable by `panels.js` and by existing autosaves), brings
//! serde_json into the first load, and throws when storage is blocked.

fn local() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

pub fn get(key: &str) -> Option<String> {
    local()?.get_item(key).ok()?
}

pub fn set(key: &str, value: &str) {
    if let Some(s) = local() {
        let _ = s.set_item(key, value);
    }
}
