//! The command line, defined once: the binary parses it, and the xtask
//! generates completions and the man page from it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::exit::EXIT_CODES_HELP;

#[derive(Debug, Parser)]
#[command(
    name = "mdiag",
    version,
    about = "Explains why a ModelService rollout on Kubernetes is not serving yet, and proves when it is.",
    long_about = "Explains why a ModelService rollout on Kubernetes is not serving yet, and proves when it is.\n\nmdiag only reads: get, list, watch and logs. It works with the built-in `view` ClusterRole; what it may not read is reported, not fatal.",
    after_help = EXIT_CODES_HELP,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone, Default)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Namespace of the target (default: the context's namespace, or the one in the snapshot).
    #[arg(short = 'n', long, global = true, value_name = "NS")]
    pub namespace: Option<String>,
    /// Look in every namespace.
    #[arg(short = 'A', long, global = true)]
    pub all_namespaces: bool,
    /// Label selector to filter workloads (as kubectl -l).
    #[arg(short = 'l', long, global = true, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Read objects from a file instead of a cluster: an mdiag snapshot, or
    /// `kubectl get -o yaml|json` output (.gz is decompressed).
    #[arg(long, global = true, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Judge a snapshot at this time (RFC 3339) instead of its capture time.
    #[arg(long, global = true, value_name = "TIME")]
    pub at: Option<String>,
    /// Language of the explanations (default: from LANG).
    #[arg(long, global = true, value_enum)]
    pub lang: Option<LangArg>,
    /// When to colour the output (NO_COLOR is honoured).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// The ModelService resource, if not found by its short name `msvc`
    /// (e.g. `modelservices.modeldock.io`).
    #[arg(long, global = true, value_name = "RESOURCE")]
    pub resource: Option<String>,
    /// Where the ModelService controller runs, as NS/NAME
    /// (default: modeldock-controller in the target namespace, then in modeldock-system).
    #[arg(long, global = true, value_name = "NS/NAME")]
    pub controller: Option<String>,
    /// Seconds to wait for each API request.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 30)]
    pub request_timeout: u64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Trace one ModelService (or deploy/NAME, pod/NAME): the object chain,
    /// each Pod's moments, where the rollout stopped, why, and what to run next.
    Trace(TraceArgs),
    /// Rank every ModelService (and plain Deployment) of a namespace, or of
    /// all with -A, by how broken it is: one line each, worst first.
    Triage(TriageArgs),
    /// Capture the evidence (objects, events, current and previous logs) into
    /// one file that every command reads back with --snapshot.
    Snapshot(SnapshotArgs),
    /// Explain a symptom: the documented cause, the check, the fix and how to verify it.
    Explain(ExplainArgs),
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// NAME (a ModelService), msvc/NAME, deploy/NAME or pod/NAME.
    pub target: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}

#[derive(Debug, Args)]
pub struct TriageArgs {
    /// Show healthy workloads too (they are folded into a count).
    #[arg(long)]
    pub all: bool,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// What to capture: NAME (a ModelService), msvc/NAME, deploy/NAME or
    /// pod/NAME; without it, the whole namespace.
    pub target: Option<String>,
    /// The file to write: .yaml or .json, gzip-compressed when it ends in .gz.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub file: std::path::PathBuf,
    /// Keep at most this many bytes of each log (the end of it).
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024)]
    pub log_bytes: i64,
    /// Keep at most this many lines of each log (the last ones).
    #[arg(long, value_name = "LINES", default_value_t = 2000)]
    pub log_lines: i64,
    /// Also replace text matching this regular expression, in objects and
    /// logs (repeatable). Credential-like environment values are always replaced.
    #[arg(long, value_name = "REGEX")]
    pub redact: Vec<String>,
    /// Log reads to run at once.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub concurrency: usize,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A finding id (`crash-loop`) or a symptom (`CrashLoopBackOff`).
    #[arg(required_unless_present = "list")]
    pub symptom: Option<String>,
    /// List every finding id.
    #[arg(long)]
    pub list: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum OutputFormat {
    /// For people: tree, timeline, findings.
    #[default]
    Table,
    /// The versioned JSON report (schema mdiag/v1).
    Json,
    /// The same report as YAML.
    Yaml,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    En,
    Zh,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}
