//! The HTTP server behind `--metrics`: `GET` of one path, HTTP/1.0-style (one request per connection, closed
//! after the answer), on one thread that multiplexes its connections with `poll`. It is the one network
//! surface iolab has, so everything a client can make it spend is bounded: a request's head is at most
//! [`MAX_HEAD`] bytes (a longer one gets 431 and is closed), at most [`MAX_CONNECTIONS`] are open at once (a
//! new one closes the oldest, so idle connections cannot lock out a scraper), and a connection lives at most
//! [`MAX_TIME`] from accept to the last byte of its answer. No connection ever gets a thread of its own.

use nix::poll::{PollFd, PollFlags, PollTimeout};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// The largest request head (request line and headers) read, in bytes.
pub const MAX_HEAD: usize = 8 << 10;
/// Connections open at once.
pub const MAX_CONNECTIONS: usize = 16;
/// From accept to the answer's last byte.
pub const MAX_TIME: Duration = Duration::from_secs(3);

/// An answer: status line text, content type, body.
pub struct Answer {
    /// e.g. "200 OK".
    pub status: &'static str,
    /// The Content-Type header.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

/// One client: what it sent so far, then what it is sent.
struct Conn {
    stream: TcpStream,
    accepted: Instant,
    head: Vec<u8>,
    out: Vec<u8>,
    sent: usize,
}

/// What a step left a connection as.
enum Next {
    Keep,
    Close,
}

/// Listens at `addr`, non-blocking.
pub fn bind(addr: &str) -> std::io::Result<TcpListener> {
    let listener = TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serves until the process ends: `GET path` gets `answer()`, any other path 404, any other method 405.
/// `after` runs after each wake-up (the caller accounts this thread's CPU there).
pub fn serve(listener: TcpListener, path: &str, answer: impl Fn() -> Answer, mut after: impl FnMut()) {
    let mut conns: Vec<Conn> = Vec::new();
    loop {
        let ready = wait(&listener, &conns);
        let now = Instant::now();
        let mut due = ready.iter().skip(1);
        conns.retain_mut(|c| {
            let next = if due.next() == Some(&true) { step(c, path, &answer) } else { Next::Keep };
            matches!(next, Next::Keep) && now.duration_since(c.accepted) < MAX_TIME
        });
        if ready.first() == Some(&true) {
            accept(&listener, &mut conns);
        }
        after();
    }
}

/// Waits for the listener or a connection to be ready, or the next connection's deadline. Returns, in the
/// order listener then connections, which are ready.
fn wait(listener: &TcpListener, conns: &[Conn]) -> Vec<bool> {
    let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
    for c in conns {
        let want = if c.out.is_empty() { PollFlags::POLLIN } else { PollFlags::POLLOUT };
        fds.push(PollFd::new(c.stream.as_fd(), want));
    }
    let timeout = match conns.iter().map(|c| c.accepted + MAX_TIME).min() {
        Some(due) => {
            let ms = due.saturating_duration_since(Instant::now()).as_millis() + 1;
            PollTimeout::from(u16::try_from(ms).unwrap_or(u16::MAX))
        }
        None => PollTimeout::NONE,
    };
    if nix::poll::poll(&mut fds, timeout).is_err() {
        return vec![false; fds.len()];
    }
    fds.iter().map(|f| f.revents().is_some_and(|r| !r.is_empty())).collect()
}

/// Takes every pending connection; beyond [`MAX_CONNECTIONS`], the oldest is closed.
fn accept(listener: &TcpListener, conns: &mut Vec<Conn>) {
    while let Ok((stream, _)) = listener.accept() {
        if stream.set_nonblocking(true).is_err() {
            continue;
        }
        if conns.len() >= MAX_CONNECTIONS {
            conns.remove(0);
        }
        let now = Instant::now();
        conns.push(Conn { stream, accepted: now, head: Vec::new(), out: Vec::new(), sent: 0 });
    }
}

/// Reads what a connection sent (answering once its head is complete) or writes what it is owed.
fn step(c: &mut Conn, path: &str, answer: &impl Fn() -> Answer) -> Next {
    if !c.out.is_empty() {
        return write_out(c);
    }
    let mut buf = [0u8; 4096];
    loop {
        match c.stream.read(&mut buf) {
            Ok(0) => return Next::Close,
            Ok(n) => c.head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Keep,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
        if c.head.len() > MAX_HEAD {
            c.out = response(&plain("431 Request Header Fields Too Large", "request head too large\n"));
            return write_out(c);
        }
        if let Some(line) = complete_request_line(&c.head) {
            c.out = response(&route(line, path, answer));
            return write_out(c);
        }
    }
}

/// The request line, once the whole head (up to the blank line) has arrived.
fn complete_request_line(head: &[u8]) -> Option<&[u8]> {
    let ended = head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n");
    ended.then(|| head.split(|&b| b == b'\n').next().unwrap_or(b""))
}

/// What a request line gets.
fn route(line: &[u8], path: &str, answer: &impl Fn() -> Answer) -> Answer {
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    if method != "GET" {
        return plain("405 Method Not Allowed", "iolab serves GET only\n");
    }
    if target.split('?').next() != Some(path) {
        return plain("404 Not Found", "iolab serves /metrics\n");
    }
    answer()
}

fn plain(status: &'static str, body: &str) -> Answer {
    Answer { status, content_type: "text/plain; charset=utf-8", body: body.into() }
}

fn response(a: &Answer) -> Vec<u8> {
    let head = format!(
        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        a.status,
        a.content_type,
        a.body.len()
    );
    [head.as_bytes(), a.body.as_bytes()].concat()
}

/// Writes what the connection is owed; closes once all is written.
fn write_out(c: &mut Conn) -> Next {
    while c.sent < c.out.len() {
        match c.stream.write(&c.out[c.sent..]) {
            Ok(0) => return Next::Close,
            Ok(n) => c.sent += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Keep,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
    }
    let _ = c.stream.shutdown(std::net::Shutdown::Write);
    Next::Close
}
