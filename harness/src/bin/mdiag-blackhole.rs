//! `mdiag-blackhole --listen ADDR [--unreachable ADDR2]`: accepts TCP
//! connections on ADDR and never answers; on ADDR2 no connection completes
//! (the registries of the harness's pull-timeout cases). Stop it with
//! SIGTERM.

use std::net::SocketAddr;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Accept TCP connections and never answer")]
struct Args {
    /// host:port to listen on, e.g. 127.0.0.1:5002
    #[arg(long)]
    listen: SocketAddr,
    /// host:port where connects time out (a full accept queue)
    #[arg(long)]
    unreachable: Option<SocketAddr>,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let _held = match a.unreachable {
        Some(u) => Some(mdiag_harness::images::blackhole::unreachable(u)?),
        None => None,
    };
    mdiag_harness::images::blackhole::serve(a.listen)
}
