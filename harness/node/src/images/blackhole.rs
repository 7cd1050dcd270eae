//! The "registries" of the pull-timeout cases:
//!
//! - [`serve`]: a TCP listener that accepts every connection and never
//!   answers. Each connection is held open (what the client sends is read
//!   and dropped) until the client closes it or the process ends. A client
//!   without a response timeout waits for ever (containerd 1.6's CRI pull
//!   has none: its pull-progress timeout came in 1.7).
//! - [`unreachable`]: a listener whose accept queue is full (backlog 0, one
//!   connection of its own, never accepted), so the kernel drops every new
//!   SYN and a connect times out as to a host behind a firewall (`dial tcp
//!   ...: i/o timeout` after the client's dial timeout).

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};

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

/// Binds `addr` with an accept queue of one, fills it with a connection of
/// its own and never accepts: returns the listener and that connection,
/// which must both be kept.
pub fn unreachable(addr: SocketAddr) -> anyhow::Result<(TcpListener, TcpStream)> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    s.bind(&addr.into())
        .with_context(|| format!("binding {addr}"))?;
    s.listen(0)?;
    let l: TcpListener = s.into();
    let local = l.local_addr()?;
    let filler = TcpStream::connect(local)
        .with_context(|| format!("filling the accept queue of {local}"))?;
    eprintln!("mdiag-blackhole: {local} takes no connection (its accept queue is full)");
    Ok((l, filler))
}
