//! The command line, defined once: the binary parses it, and the xtask
//! generates completions and the man page from it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::exit::exit_codes_help;
use mdiag_core::analysis::gate::DEFAULT_FAIL_ON;
use mdiag_source::live::LogCaps;

#[derive(Debug, Parser)]
#[command(
    name = "mdiag",
    version,
    about = "Explains why a ModelService rollout on Kubernetes is not serving yet, and proves when it is.",
    long_about = "Explains why a ModelService rollout on Kubernetes is not serving yet, and proves when it is.\n\nmdiag only reads: get, list, watch and logs. It works with the built-in `view` ClusterRole; what it may not read is reported, not fatal.",
    after_help = exit_codes_help(),
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The flags every command takes, listed under their own heading in each
/// command's help and accepted before or after the command's name.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use; triage reads several at once when
    /// given a comma-separated list (`--context prod-eu,prod-us`).
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// Namespace of the target (default: the context's namespace, or the one in the snapshot).
    #[arg(short = 'n', long, global = true, value_name = "NS")]
    pub namespace: Option<String>,
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
    /// How long to wait for each API request, and for the kubeconfig's
    /// credential plugin: 30s, 2m, or a number of seconds.
    #[arg(long, global = true, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub request_timeout: std::time::Duration,
    #[command(flatten)]
    pub redaction: RedactArgs,
}

/// A snapshot file to read instead of the cluster, and the time to judge
/// it at: the commands that judge objects (trace, triage, explain, mcp).
#[derive(Debug, Args, Clone, Default)]
pub struct FileArgs {
    /// Read objects from a file instead of a cluster: an mdiag snapshot, or
    /// `kubectl get -o yaml|json` output (.gz is decompressed; `-` reads stdin).
    #[arg(short = 'f', long = "snapshot", value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Judge the snapshot as it stood at this time (RFC 3339) instead of its
    /// capture time: what it dates after TIME is left out (docs/contract.md).
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,
}

/// Which workloads: the commands that judge many (triage, mcp).
#[derive(Debug, Args, Clone, Default)]
pub struct ScopeArgs {
    /// Look in every namespace.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Label selector to filter workloads (as kubectl -l).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Trace one ModelService (or deploy/NAME, sts/NAME, ds/NAME, rs/NAME, pod/NAME): the object chain,
    /// each Pod's moments, where the rollout stopped, why, and what to run next.
    #[command(after_help = exit_codes_help())]
    Trace(TraceArgs),
    /// Rank every ModelService (and plain Deployment, StatefulSet, DaemonSet,
    /// ReplicaSet no Deployment owns, ownerless Pod, and what fails outside
    /// them) of a namespace, or of all with -A, by how broken it is: one line
    /// each, worst first.
    #[command(after_help = exit_codes_help())]
    Triage(TriageArgs),
    /// Wait on a rollout after `helm upgrade`: exit 0 the moment it serves, 1 on
    /// a definitive symptom, 3 on timeout; write reports and evidence for CI.
    #[command(after_help = exit_codes_help())]
    Gate(GateArgs),
    /// Capture the evidence (objects, events, current and previous logs) into
    /// one file that every command reads back with --snapshot.
    #[command(after_help = exit_codes_help())]
    Snapshot(SnapshotArgs),
    /// Explain a symptom: the documented cause, the check, the fix and how to verify it.
    #[command(after_help = exit_codes_help())]
    Explain(ExplainArgs),
    /// Serve trace, triage, explain and a snapshot file's summary to an
    /// agent as Model Context Protocol tools, on stdin and stdout.
    ///
    /// Each tool answers with the mdiag/v1 report that -o json prints and a
    /// short text: the headline and the next command. stdout carries only
    /// protocol messages (JSON-RPC); anything else goes to stderr. The
    /// global flags given here pin what every call reads: --kubeconfig and
    /// --context are the only cluster, -n (or -A) the widest namespace
    /// scope, and a call may read only the files --allow-file allows (none
    /// by default). A call may narrow that scope, never widen it; what
    /// would widen it is refused, naming the flag that allows it. Like every
    /// command it only reads. Register it with an agent as the command
    /// `mdiag` with the argument `mcp` (docs/mcp.md, docs/security.md).
    #[command(after_help = exit_codes_help())]
    Mcp(McpArgs),
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// NAME (a ModelService), msvc/NAME, isvc/NAME, rollout/NAME, lws/NAME, ksvc/NAME, deploy/NAME, sts/NAME, ds/NAME,
    /// rs/NAME or pod/NAME.
    pub target: String,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Read the logs of the Pods the findings are about (live only;
    /// pods/log get, the last lines, size-capped): a crash's own words
    /// are shown under its finding.
    #[arg(long)]
    pub logs: bool,
    #[command(flatten)]
    pub file: FileArgs,
    #[command(flatten)]
    pub view: ViewArgs,
}

/// How the human view of a trace is laid out; trace, triage --alert and
/// the gate's final report share these.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct ViewArgs {
    /// Show every finding in full (cause, every check, fix, verify) and
    /// each Pod's moments; by default the lead finding is shown with its
    /// evidence, first check and fix, the others one line each.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Fit the view to N columns (default: the terminal's width; when
    /// stdout is not a terminal, $COLUMNS, else 80).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(40..))]
    pub width: Option<u16>,
}

#[derive(Debug, Args)]
pub struct TriageArgs {
    /// Trace what an alert is about: an Alertmanager webhook payload, a list
    /// of alerts, one alert or its labels (JSON or YAML, gzip too, up to
    /// 16 MiB; `-` reads stdin).
    /// Its labels name the namespace and the ModelService, Deployment,
    /// StatefulSet, DaemonSet, Pod, ReplicaSet or Service.
    #[arg(long, value_name = "FILE|-")]
    pub alert: Option<PathBuf>,
    /// Show healthy workloads too (they are folded into a count).
    #[arg(long)]
    pub all: bool,
    /// Read every context of the kubeconfig, one cluster each, into one
    /// table (a cluster that cannot be read is listed as a gap).
    #[arg(long)]
    pub all_contexts: bool,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub scope: ScopeArgs,
    #[command(flatten)]
    pub file: FileArgs,
    #[command(flatten)]
    pub view: ViewArgs,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// NAME (a ModelService), msvc/NAME, isvc/NAME, rollout/NAME, lws/NAME, ksvc/NAME, deploy/NAME, sts/NAME or
    /// ds/NAME.
    pub target: String,
    /// How long to wait for the rollout to converge (`90s`, `10m`, `1h30m`;
    /// a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    // The help lists the default from the policy's own list.
    #[arg(
        long,
        value_name = "IDS",
        value_delimiter = ',',
        default_values = default_fail_on(),
        hide_default_value = true,
        help = fail_on_help()
    )]
    pub fail_on: Vec<String>,
    /// A crash loop fails the gate once a Pod of the new revision restarted this often.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub max_restarts: i32,
    /// Write the JSON report (schema mdiag/v1, with outcome and elapsed_seconds) here.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Write JUnit XML (one test case per check) here, for CI systems.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the report as one self-contained HTML page here (also on
    /// timeout and interrupt), for a CI artifact or an incident ticket.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// On failure or timeout, capture a snapshot (objects, events, logs) into
    /// this file before anyone rolls back.
    #[arg(long, value_name = "FILE")]
    pub evidence: Option<PathBuf>,
    /// The Helm release that installed the target: its status and revision
    /// are read from Helm's storage Secret metadata (never its values).
    #[arg(long, value_name = "NAME")]
    pub helm_release: Option<String>,
    /// Output format of the final report on stdout.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    #[command(flatten)]
    pub view: ViewArgs,
}

/// The ids the gate fails on unless `--fail-on` says otherwise, from the
/// policy's own list, so the help cannot drift from it.
fn default_fail_on() -> Vec<&'static str> {
    DEFAULT_FAIL_ON.iter().map(|id| id.as_str()).collect()
}

fn fail_on_help() -> String {
    format!(
        "Finding ids that fail the gate at once (comma-separated; replaces the default set; `none` waits for the timeout whatever happens). Default: {}",
        default_fail_on().join(", ")
    )
}

/// `90s`, `10m`, `1h30m`, `PT10M`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let parsed = match text.parse::<u64>() {
        Ok(secs) => Ok(std::time::Duration::from_secs(secs)),
        Err(_) => text
            .parse::<jiff::SignedDuration>()
            .map_err(|e| e.to_string())
            .and_then(|d| std::time::Duration::try_from(d).map_err(|e| e.to_string())),
    };
    match parsed {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("must be longer than zero".into()),
        Err(e) => Err(format!(
            "{text:?} is not a duration such as 90s, 10m or 1h30m ({e})"
        )),
    }
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// What to capture: NAME (a ModelService), msvc/NAME, isvc/NAME, rollout/NAME, lws/NAME, ksvc/NAME, deploy/NAME,
    /// sts/NAME, ds/NAME, rs/NAME or pod/NAME; without it, the whole namespace.
    pub target: Option<String>,
    /// The file to write, gzip-compressed when its name ends in .gz; `-`
    /// writes to stdout. A symlink is written through. Its folder is
    /// checked before anything is read.
    #[arg(long = "output-file", visible_alias = "file", value_name = "FILE|-")]
    pub file: PathBuf,
    /// Format of the file (default: from its name, .json or .json.gz for
    /// JSON, else YAML).
    #[arg(short = 'o', long, value_enum, value_name = "FORMAT")]
    pub output: Option<SnapshotFormat>,
    /// Read the objects from this file instead of a cluster (an mdiag
    /// snapshot, or `kubectl get -o yaml|json` output; `-` reads stdin)
    /// and write them back: the target's chain, or everything.
    #[arg(short = 'f', long = "snapshot", value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Keep at most this many bytes of each log (the end of it).
    #[arg(long, value_name = "BYTES", default_value_t = LogCaps::DEFAULT.bytes)]
    pub log_bytes: i64,
    /// Keep at most this many lines of each log (the last ones).
    #[arg(long, value_name = "LINES", default_value_t = LogCaps::DEFAULT.lines)]
    pub log_lines: i64,
    /// Log reads to run at once.
    #[arg(long, value_name = "N", default_value_t = LogCaps::DEFAULT.concurrency)]
    pub concurrency: usize,
}

/// What everything mdiag prints or writes keeps out: the terminal views,
/// `-o json|yaml|html`, the gate's reports, JUnit and evidence, snapshot
/// files and MCP answers (`mdiag mcp --redact ...` sets it for every tool).
#[derive(Debug, Args, Clone, Default)]
pub struct RedactArgs {
    /// Also replace text matching this regular expression, in everything
    /// printed or written: objects, logs, evidence, names (repeatable).
    /// Credential-like environment values and probe headers, ConfigMap
    /// binaryData and the last-applied annotation are always replaced.
    #[arg(long, global = true, value_name = "REGEX")]
    pub redact: Vec<String>,
    /// Keep the shapes of credentials (JWTs, Bearer and Basic values,
    /// passwords in URLs and DSNs, signed URLs, webhooks, private keys,
    /// cloud and API tokens, password= pairs and --password VALUE flags)
    /// that are otherwise replaced in output, logs, messages and
    /// snapshot files.
    #[arg(long, global = true)]
    pub no_default_redaction: bool,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A finding id (`crash-loop`), a symptom or reason (`CrashLoopBackOff`,
    /// `ErrImagePull`, `Pending`), a word for it (`crashloop`, `OOM`) or an
    /// exit code (`137`). Without it, every id is listed with its title.
    #[arg(value_name = "ID|SYMPTOM")]
    pub symptom: Option<String>,
    /// Fill the real names of this target into the check commands: NAME (a
    /// ModelService), msvc/NAME, isvc/NAME, rollout/NAME, lws/NAME, ksvc/NAME, deploy/NAME, sts/NAME,
    /// ds/NAME, rs/NAME or pod/NAME, read live or from --snapshot.
    #[arg(value_name = "TARGET", requires = "symptom")]
    pub target: Option<String>,
    /// List every finding id with its title (as with no argument).
    #[arg(long, conflicts_with = "symptom")]
    pub list: bool,
    /// Output format (json and yaml: the entries in full, schema mdiag/v1).
    #[arg(short = 'o', long, value_enum, default_value_t = ExplainFormat::Table)]
    pub output: ExplainFormat,
    /// Wrap the entries to N columns (default: the terminal's width; when
    /// stdout is not a terminal, $COLUMNS, else 80).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(40..))]
    pub width: Option<u16>,
    #[command(flatten)]
    pub file: FileArgs,
}

/// What `mdiag mcp` may read besides the cluster its global flags pin.
#[derive(Debug, Args, Default)]
pub struct McpArgs {
    /// Let tool calls read snapshot files in this directory (and below it)
    /// or this one file; repeat it for more. Without it a call may read no
    /// file but the one `--snapshot` names. Paths are resolved when the
    /// server starts; a path a call names is resolved too (`..` and
    /// symlinks followed), and refused unless it ends up inside one of these.
    #[arg(long = "allow-file", value_name = "DIR|FILE")]
    pub allow_file: Vec<PathBuf>,
    /// The widest namespace scope of the calls, and the selector of
    /// triage calls that name none.
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// The file every call reads unless it names another, and the time
    /// it is judged at.
    #[command(flatten)]
    pub file: FileArgs,
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
    /// The same report as one self-contained HTML page (inline CSS and
    /// SVG, no network): headline, tree, waterfall, Pods' moments,
    /// findings with copy buttons, log tails and gaps.
    Html,
}

impl OutputFormat {
    /// The machine encoding, or `None` for a view for people (the
    /// terminal's or the HTML page).
    pub fn encoding(self) -> Option<mdiag_render::Encoding> {
        match self {
            OutputFormat::Table | OutputFormat::Html => None,
            OutputFormat::Json => Some(mdiag_render::Encoding::Json),
            OutputFormat::Yaml => Some(mdiag_render::Encoding::Yaml),
        }
    }

    /// Whether what this format prints may hold mdiag's own colour
    /// sequences: only the terminal's table, and only when `color` is on.
    pub fn paints(self, color: bool) -> bool {
        color && self == OutputFormat::Table
    }
}

/// What `explain` prints: it makes no diagnosis, so it has no HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ExplainFormat {
    /// For people: cause, checks, fix and verification.
    #[default]
    Table,
    /// The entries as JSON (schema mdiag/v1).
    Json,
    /// The same as YAML.
    Yaml,
}

impl From<ExplainFormat> for OutputFormat {
    fn from(f: ExplainFormat) -> Self {
        match f {
            ExplainFormat::Table => OutputFormat::Table,
            ExplainFormat::Json => OutputFormat::Json,
            ExplainFormat::Yaml => OutputFormat::Yaml,
        }
    }
}

/// The encoding of a snapshot file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SnapshotFormat {
    Yaml,
    Json,
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

#[cfg(test)]
mod tests {
    use super::{Cli, parse_duration};
    use clap::CommandFactory;
    use std::time::Duration;

    /// clap's own checks of the definition (conflicting names, a
    /// `requires` naming no argument, a default outside its possible
    /// values...), which it otherwise runs only when a flag is used.
    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("-5m").is_err());
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .contains("not a duration")
        );
    }
}
