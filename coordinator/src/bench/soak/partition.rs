//! A silent partition, played by a TCP proxy between a process and a
//! server: cut, it stops passing bytes on (without closing anything, as a
//! network that drops packets does), and passes what it held once it is
//! joined again.

use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A proxy in front of one server, for one process's connections.
pub(super) struct Proxy {
    cut: Arc<AtomicBool>,
    closed: Arc<AtomicBool>,
    port: u16,
}

impl Proxy {
    /// A proxy in front of the server `url` names (`default_port` when it
    /// names none), and `url` rewritten to go through it.
    pub(super) fn before(url: &url::Url, default_port: u16) -> Result<(Proxy, String)> {
        let host = url.host_str().context("the URL names no host")?.to_string();
        let upstream = format!("{host}:{}", url.port().unwrap_or(default_port));
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let proxy = Proxy {
            cut: Arc::new(AtomicBool::new(false)),
            closed: Arc::new(AtomicBool::new(false)),
            port,
        };
        let (cut, closed) = (proxy.cut.clone(), proxy.closed.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if closed.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                for (from, to) in [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ] {
                    if let (Ok(from), Ok(to)) = (from, to) {
                        let cut = cut.clone();
                        std::thread::spawn(move || pass_on(from, to, &cut));
                    }
                }
            }
        });
        let mut through = url.clone();
        through
            .set_host(Some("127.0.0.1"))
            .context("the URL takes no host")?;
        through
            .set_port(Some(port))
            .map_err(|()| anyhow::anyhow!("the URL takes no port"))?;
        Ok((proxy, through.to_string()))
    }

    /// Cuts the connections (`true`) or joins them again.
    pub(super) fn cut(&self, cut: bool) {
        self.cut.store(cut, Ordering::Relaxed);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::Relaxed);
        // Wakes the accepting thread, which then sees it is closed.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Passes bytes from `from` to `to`, holding them while `cut`.
fn pass_on(mut from: TcpStream, mut to: TcpStream, cut: &AtomicBool) {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        while cut.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
