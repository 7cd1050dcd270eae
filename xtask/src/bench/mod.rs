//! `cargo xtask bench`: the subcommands and their dispatch. Each benchmark
//! is a file of its own; what they share to measure is in measure.rs and,
//! for the two gate benchmarks, gate_common.rs.

mod contexts;
mod dump;
mod gate;
mod gate_common;
mod gate_real;
mod measure;
mod release;
mod scale;
mod snapshot;
mod triage;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Snapshot of a ModelService with N ready Pods (and their logs) vs
    /// `kubectl cluster-info dump` of its namespace.
    Snapshot(snapshot::SnapshotBench),
    /// `mdiag trace` of a ModelService with N ready Pods vs
    /// `kubectl get msvc,deploy,rs,pods,endpointslices -o json` of its namespace.
    Trace(snapshot::SnapshotBench),
    /// `mdiag triage -A` on a loaded cluster (see `cargo xtask cluster load`)
    /// vs `kubectl get deploy,rs,pods,endpointslices,events -A -o json`, a
    /// trace there vs `kubectl get` of its namespace, triage's peak memory,
    /// and offline triage of a dump of the cluster.
    Triage(triage::TriageBench),
    /// Time to verdict of `mdiag gate` beside `kubectl rollout status` and
    /// `helm upgrade --wait` on the same broken upgrades of the chart
    /// (`--real-node`: the real-node scenarios, with Helm 4 too).
    Gate(gate::GateBench),
    /// Load and judge a generated kubectl dump of N MB (YAML, JSON, gzip)
    /// vs a bare serde_json parse of the same objects; peak memory; a gzip
    /// bomb and an endless stream refused at the limit.
    Dump(dump::DumpBench),
    /// The release binary's size and start-up time (`--version`, a trace of
    /// a demo file), optionally beside another build (`--against FILE`).
    Release(release::ReleaseBench),
    /// How trace, `triage -n` and `triage -A` grow with the cluster (1k,
    /// 10k, 50k Pods by default), each beside the `kubectl get` of what it
    /// reads, with peak memory; writes a plot.
    Scale(scale::ScaleBench),
    /// `triage -A --context one,two` over two loaded control planes beside
    /// each alone and beside kubectl of one then the other.
    Contexts(contexts::ContextsBench),
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Snapshot(args) => snapshot::compare(&args, snapshot::Pair::Snapshot),
        BenchCommand::Trace(args) => snapshot::compare(&args, snapshot::Pair::Trace),
        BenchCommand::Triage(args) => triage::run(&args),
        BenchCommand::Gate(args) => gate::run(&args),
        BenchCommand::Dump(args) => dump::run(&args),
        BenchCommand::Release(args) => release::run(&args),
        BenchCommand::Scale(args) => scale::run(&args),
        BenchCommand::Contexts(args) => contexts::run(&args),
    }
}
