//! Hostile servers for tests of the load engine and the orchestrator: a
//! plain TCP listener on 127.0.0.1 that answers every request with bytes the
//! test chooses (malformed framing, endless bodies, endless heads, slow answers), one
//! thread per connection. Dropping the server stops it: the listener closes
//! and every connection thread ends at its next write. It keeps what it was
//! sent ([`Hostile::received`], its first MiB), so a test can tell what a
//! client put on the wire.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server sends for each request.
#[derive(Debug, Clone)]
pub enum Answer {
    /// These bytes, then wait for the next request on the same connection.
    Fixed(Vec<u8>),
    /// `head`, then `repeat` over and over until the client goes away.
    Endless { head: Vec<u8>, repeat: Vec<u8> },
    /// These bytes after this long (a slow server), then wait for the next request.
    After(Duration, Vec<u8>),
}

/// A running hostile server.
pub struct Hostile {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    received: Arc<Mutex<Vec<u8>>>,
}

/// How much of what clients send the server keeps.
const KEPT: usize = 1 << 20;

impl Hostile {
    pub fn start(answer: Answer) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let received = Arc::new(Mutex::new(Vec::new()));
        let (flag, kept) = (Arc::clone(&stop), Arc::clone(&received));
        std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (answer, flag, kept) = (answer.clone(), Arc::clone(&flag), Arc::clone(&kept));
                        std::thread::spawn(move || serve(conn, &answer, &flag, &kept));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Hostile { addr, stop, received }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The bytes clients have sent so far (the first MiB of them), as text.
    pub fn received(&self) -> String {
        String::from_utf8_lossy(&self.received.lock().expect("not poisoned")).into_owned()
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(mut conn: TcpStream, answer: &Answer, stop: &AtomicBool, kept: &Mutex<Vec<u8>>) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_millis(200)));
    let mut pending = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    while !stop.load(Ordering::Relaxed) {
        // One request: everything up to the blank line (the tests send no bodies).
        while !pending.windows(4).any(|w| w == b"\r\n\r\n") {
            match conn.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    pending.extend_from_slice(&buf[..n]);
                    let mut kept = kept.lock().expect("not poisoned");
                    let room = KEPT.saturating_sub(kept.len()).min(n);
                    kept.extend_from_slice(&buf[..room]);
                }
                Err(e)
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
                {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                }
                Err(_) => return,
            }
        }
        let end = pending.windows(4).position(|w| w == b"\r\n\r\n").expect("found above") + 4;
        pending.drain(..end);
        match answer {
            Answer::Fixed(bytes) => {
                if conn.write_all(bytes).is_err() {
                    return;
                }
            }
            Answer::After(wait, bytes) => {
                std::thread::sleep(*wait);
                if conn.write_all(bytes).is_err() {
                    return;
                }
            }
            Answer::Endless { head, repeat } => {
                if conn.write_all(head).is_err() {
                    return;
                }
                while !stop.load(Ordering::Relaxed) {
                    if conn.write_all(repeat).is_err() {
                        return;
                    }
                }
                return;
            }
        }
    }
}
