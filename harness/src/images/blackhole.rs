//! A TCP listener that accepts every connection and never answers: the
//! "registry" of the pull-timeout case. Each connection is held open (what
//! the client sends is read and dropped) until the client closes it or the
//! process ends.

use std::io::Read;
use std::net::{SocketAddr, TcpListener};

use anyhow::Context;

/// Serves forever on `addr`, logging each connection to stderr.
pub fn serve(addr: SocketAddr) -> anyhow::Result<()> {
    let l = TcpListener::bind(addr).with_context(|| format!("binding {addr}"))?;
    eprintln!(
        "mdiag-blackhole: listening on {}; accepting and never answering",
        l.local_addr()?
    );
    for conn in l.incoming() {
        match conn {
            Ok(mut s) => {
                let peer = s.peer_addr().map(|a| a.to_string()).unwrap_or_default();
                eprintln!("mdiag-blackhole: accepted {peer}");
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let mut total = 0usize;
                    while let Ok(n) = s.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        total += n;
                    }
                    eprintln!("mdiag-blackhole: {peer} closed after sending {total} bytes");
                });
            }
            Err(e) => eprintln!("mdiag-blackhole: accept: {e}"),
        }
    }
    Ok(())
}
