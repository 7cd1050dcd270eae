//! The tools' arguments as an MCP client sends them (their JSON schemas
//! are what `tools/list` shows).

use schemars::JsonSchema;
use serde::Deserialize;

/// The language of the answer's words (`title`, `cause`, `fix`, `verify`,
/// `summary`); ids and states are the same in every language.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    En,
    Zh,
}

/// Where the objects come from: the cluster `mdiag mcp` was started for,
/// or a snapshot file it may read. Every field is optional.
///
/// The kubeconfig and the context are not arguments: they are pinned by the
/// server's flags. A call that sends `kubeconfig` or `context` anyway (they
/// are not in the schema) is refused unless it names the pinned one.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Source {
    /// Namespace (default: the server's `-n`, else its context's, or the one
    /// a snapshot file captured). Live, it must lie inside the scope the
    /// server was started with (`-n NS`: only NS; `-A`: any; neither: the
    /// context's).
    pub namespace: Option<String>,
    #[schemars(skip)]
    pub context: Option<String>,
    #[schemars(skip)]
    pub kubeconfig: Option<String>,
    /// Read objects from this file instead of a cluster: an mdiag snapshot,
    /// or `kubectl get -o yaml|json` output (.gz is decompressed). Only
    /// files the server was started to allow (`mdiag mcp --allow-file DIR`)
    /// are read; a relative path is read from the server's working
    /// directory.
    pub snapshot: Option<String>,
    /// Judge the snapshot file at this time (RFC 3339) instead of its capture time.
    pub at: Option<String>,
    /// Language of the explanations: en or zh (default: from LANG).
    pub lang: Option<Language>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TraceParams {
    /// NAME (a ModelService), msvc/NAME, isvc/NAME, rollout/NAME, lws/NAME, ksvc/NAME, deploy/NAME,
    /// sts/NAME, ds/NAME, rs/NAME or pod/NAME.
    pub target: String,
    #[serde(flatten)]
    pub source: Source,
    /// Read the logs of the Pods the findings are about (live only): a
    /// crash's own last lines are shown under its finding.
    #[serde(default)]
    pub logs: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TriageParams {
    #[serde(flatten)]
    pub source: Source,
    /// Look in every namespace (not with `namespace`); live, only when the
    /// server was started with `-A`.
    #[serde(default)]
    pub all_namespaces: bool,
    /// Label selector to filter workloads (as kubectl -l).
    pub selector: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExplainParams {
    /// A finding id (`crash-loop`), a symptom or reason (`CrashLoopBackOff`,
    /// `ErrImagePull`, `Pending`), a word for it (`crashloop`, `OOM`) or an
    /// exit code (`137`). Without it, every entry of the catalogue.
    pub query: Option<String>,
    /// Fill the real names of this target into the check commands: NAME (a
    /// ModelService), msvc/NAME, isvc/NAME, rollout/NAME, lws/NAME, ksvc/NAME, deploy/NAME,
    /// sts/NAME, ds/NAME, rs/NAME or pod/NAME, read live or from `snapshot`.
    /// Needs `query`.
    pub target: Option<String>,
    #[serde(flatten)]
    pub source: Source,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SummaryParams {
    /// The snapshot file: an mdiag snapshot, or `kubectl get -o yaml|json`
    /// output (.gz is decompressed). Only files the server was started to
    /// allow (`mdiag mcp --allow-file DIR`) are read; a relative path is
    /// read from the server's working directory.
    pub snapshot: String,
    /// Judge it at this time (RFC 3339) instead of its capture time.
    pub at: Option<String>,
    /// Language of the explanations: en or zh (default: from LANG).
    pub lang: Option<Language>,
}
