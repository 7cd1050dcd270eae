//! `mdiag-blackhole --listen ADDR`: accepts TCP connections on ADDR and never
//! answers (the registry of the harness's pull-timeout case). Stop it with
//! SIGTERM.

use std::net::SocketAddr;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Accept TCP connections and never answer")]
struct Args {
    /// host:port to listen on, e.g. 127.0.0.1:5002
    #[arg(long)]
    listen: SocketAddr,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    mdiag_harness::images::blackhole::serve(a.listen)
}
