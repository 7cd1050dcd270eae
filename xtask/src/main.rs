//! Project automation: generated files and the test control plane.
//! Run as `cargo xtask <command>`.

mod bench;
mod cluster;
mod generate;
mod msrv;
mod test;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "xtask", about = "mdiag project automation")]
struct Xtask {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Regenerate completions/, docs/mdiag.1 and docs/symptoms.md (`--check` fails when stale).
    Generate(generate::GenerateArgs),
    /// The whole test suite, as CI runs it (README's test command).
    Test(test::TestArgs),
    /// Benchmarks against kubectl on the local control plane.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Check that the dependency tree allows the rust-version of Cargo.toml.
    Msrv,
    /// The local Kubernetes control plane used by the live tests.
    #[command(subcommand)]
    Cluster(cluster::ClusterCommand),
}

fn main() -> anyhow::Result<()> {
    match Xtask::parse().command {
        Command::Generate(args) => generate::run(args),
        Command::Test(args) => test::run(args),
        Command::Cluster(cmd) => cluster::run(cmd),
        Command::Bench(cmd) => bench::run(cmd),
        Command::Msrv => msrv::run(),
    }
}
