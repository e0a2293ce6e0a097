//! A small static file server for the built page, for the browser tests and page benchmarks
//! (`cargo xtask serve` uses `trunk serve`): loopback only, GET and HEAD only, no path escapes,
//! bounded request size.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

fn resolve(dir: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let mut out = dir.to_path_buf();
    for c in Path::new(path.trim_start_matches('/')).components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if out.is_dir() {
        out.push("index.html");
    }
    out.is_file().then_some(out)
}

fn handle(dir: &Path, mut s: TcpStream) {
    let mut line = String::new();
    let mut reader = BufReader::new((&s).take(16 * 1024));
    if reader.read_line(&mut line).is_err() {
        return;
    }
    // Drain the headers.
    let mut h = String::new();
    while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
        h.clear();
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let reply = |s: &mut TcpStream, code: &str, ty: &str, body: &[u8], head: bool| {
        let _ = write!(s, "HTTP/1.1 {code}\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n", body.len());
        if !head {
            let _ = s.write_all(body);
        }
    };
    if method != "GET" && method != "HEAD" {
        reply(
            &mut s,
            "405 Method Not Allowed",
            "text/plain",
            b"method not allowed",
            false,
        );
        return;
    }
    match resolve(dir, target).and_then(|p| std::fs::read(&p).ok().map(|b| (p, b))) {
        Some((p, body)) => reply(&mut s, "200 OK", content_type(&p), &body, method == "HEAD"),
        None => reply(
            &mut s,
            "404 Not Found",
            "text/plain",
            b"not found",
            method == "HEAD",
        ),
    }
}

/// Serves `dir` on 127.0.0.1:`port` until `stop` is set (and one more connection arrives).
fn serve(dir: &Path, port: u16, stop: Arc<AtomicBool>) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    for s in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if let Ok(s) = s {
            let dir = dir.to_path_buf();
            std::thread::spawn(move || handle(&dir, s));
        }
    }
    Ok(())
}

/// Serves `dir` on a free loopback port in a thread; returns the port and a stopper.
pub fn serve_in_background(dir: &Path) -> Result<(u16, impl FnOnce()), String> {
    let probe = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = probe.local_addr().map_err(|e| e.to_string())?.port();
    drop(probe);
    let stop = Arc::new(AtomicBool::new(false));
    let (dir, flag) = (dir.to_path_buf(), stop.clone());
    std::thread::spawn(move || serve(&dir, port, flag));
    std::thread::sleep(std::time::Duration::from_millis(200));
    Ok((port, move || {
        stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", port));
    }))
}
