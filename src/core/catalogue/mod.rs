//! The symptom catalogue: every finding id with its severity and texts
//! (English and Chinese), kept as data in `catalogue.yaml` and embedded in
//! the binary. Rules name an id; renderers take the texts from here.

mod ids;
mod message;
pub use ids::FindingId;
pub use message::{Arg, Args, Message, Template, messages};

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::command::Command;

const CATALOGUE_YAML: &str = include_str!("catalogue.yaml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    // Ordered most severe first, so sorting ascending ranks worst first.
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Zh,
}

impl Lang {
    /// The language a LANG / LC_ALL value asks for (`zh_CN.UTF-8` -> zh).
    pub fn from_locale(value: &str) -> Lang {
        if value.to_ascii_lowercase().starts_with("zh") {
            Lang::Zh
        } else {
            Lang::En
        }
    }
}

/// An error that can say itself in either language. Its English `Display`
/// is `message().en()`; the binary prints `message()` in the language asked
/// for, so every error mdiag raises is data in `errors.yaml` like the views'
/// words.
pub trait Localized {
    fn message(&self) -> Message;
}

/// What a step was doing when the error below it stopped it (`cannot
/// write to stdout`): mdiag's own words above an error of the system.
#[derive(Debug, thiserror::Error)]
#[error("{}", .message.en())]
pub struct Failed {
    pub message: Message,
    #[source]
    pub cause: Box<dyn std::error::Error + Send + Sync>,
}

impl Failed {
    pub fn new(id: &'static str, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        Failed {
            message: Message::new(id),
            cause: Box::new(cause),
        }
    }
}

/// A text in both languages.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Text {
    pub en: String,
    pub zh: String,
}

impl Text {
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => self.en.trim(),
            Lang::Zh => self.zh.trim(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: String,
    pub severity: Severity,
    #[serde(default)]
    pub symptoms: Vec<String>,
    /// Other words people type for it: short names, exit codes, reasons
    /// (`crashloop`, `OOM`, `137`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The few words the headline names the cause with before its id
    /// (`CrashLoopBackOff [crash-loop]`, `manifest unknown
    /// [image-pull-not-found]`): the cluster's own word where it has one.
    pub reason: Text,
    pub title: Text,
    pub cause: Text,
    pub judge: Text,
    /// Read-only commands, with `{placeholders}` for the real names.
    pub check: Vec<String>,
    pub fix: Text,
    pub verify: Text,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    pub version: u32,
    pub entries: Vec<Entry>,
}

/// The placeholders a check template may use.
pub const PLACEHOLDERS: &[&str] = &[
    "namespace",
    "modelservice",
    "inferenceservice",
    "rollout",
    "leaderworkerset",
    "knativeservice",
    "deployment",
    "replicaset",
    "statefulset",
    "daemonset",
    "job",
    "cronjob",
    "workload",
    "pod",
    "container",
    "service",
    "node",
    "controller_namespace",
    "controller",
    "hpa",
    "pdb",
    "resource",
    "target",
];

/// Words that make a check command KServe's own: its runtimes and the
/// container names it gives the predictor's Pods.
const KSERVE_WORDS: &[&str] = &[
    "servingruntimes",
    "-c storage-initializer",
    "-c kserve-container",
];

/// The embedded catalogue. It is checked by tests, so a parse failure here
/// is a build defect, not a user error.
pub fn catalogue() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        serde_saphyr::from_str(CATALOGUE_YAML).expect("the embedded catalogue.yaml is valid")
    })
}

impl Catalogue {
    pub fn get(&self, id: impl AsRef<str>) -> Option<&Entry> {
        let id = id.as_ref();
        self.entries.iter().find(|e| e.id == id)
    }

    /// An entry by id, symptom word (`CrashLoopBackOff`) or alias (`OOM`,
    /// `137`), ignoring case, spaces, `-` and `_`. A word several entries
    /// share (`Pending`) finds them all, ranked: an id before a symptom
    /// (the reason the cluster shows) before an alias, then in the
    /// catalogue's order, which puts the more common cause first (`137` is
    /// a kill, a crash loop, unless the reason says OOMKilled).
    pub fn lookup(&self, query: &str) -> Vec<&Entry> {
        let q = normalize(query);
        if q.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<(usize, usize, &Entry)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(order, e)| {
                let class = if normalize(&e.id) == q {
                    0
                } else if e.symptoms.iter().any(|w| normalize(w) == q) {
                    1
                } else if e.aliases.iter().any(|w| normalize(w) == q) {
                    2
                } else {
                    return None;
                };
                Some((class, order, e))
            })
            .collect();
        // An id is the entry asked for: the others sharing the word are not.
        if found.iter().any(|(class, _, _)| *class == 0) {
            found.retain(|(class, _, _)| *class == 0);
        }
        found.sort_by_key(|(class, order, _)| (*class, *order));
        found.into_iter().map(|(_, _, e)| e).collect()
    }

    /// For a word that finds nothing: the entries whose words are close to
    /// it (a typo, or part of a longer word), best first, at most three,
    /// each with the word that matched.
    /// An exit code is never "close" to another one, nor to anything else
    /// (`x0` is not a typo of exit code 0).
    pub fn suggest(&self, query: &str) -> Vec<(&Entry, &str)> {
        let q = normalize(query);
        if q.is_empty() || q.bytes().all(|b| b.is_ascii_digit()) {
            return Vec::new();
        }
        let mut scored: Vec<(usize, &Entry, &str)> = Vec::new();
        for e in &self.entries {
            let best = e
                .words()
                .filter_map(|w| {
                    let n = normalize(w);
                    if n.bytes().all(|b| b.is_ascii_digit()) {
                        return None;
                    }
                    let distance = strsim::damerau_levenshtein(&q, &n);
                    let close = distance <= (q.len().max(n.len()) / 4).max(1);
                    let part = q.len() >= 3 && (n.contains(&q) || (n.len() >= 3 && q.contains(&n)));
                    (close || part).then_some((if close { distance } else { 10 + distance }, w))
                })
                .min_by_key(|(d, _)| *d);
            if let Some((d, w)) = best {
                scored.push((d, e, w));
            }
        }
        scored.sort_by_key(|(d, e, _)| (*d, e.id.clone()));
        scored.into_iter().take(3).map(|(_, e, w)| (e, w)).collect()
    }
}

/// A word as [`Catalogue::lookup`] compares it: lowercase, without spaces,
/// `-` or `_` (`Crash-Loop` and `crashloop` are the same word).
/// An exit code may be asked for as `137`, `exit 137` or `exit code 137`.
fn normalize(word: &str) -> String {
    let word: String = word
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_' | '='))
        .flat_map(char::to_lowercase)
        .collect();
    for prefix in ["exitcode", "exit"] {
        if let Some(code) = word.strip_prefix(prefix)
            && !code.is_empty()
            && code.bytes().all(|b| b.is_ascii_digit())
        {
            return code.to_string();
        }
    }
    word
}

/// The severity the catalogue gives an id (`Info` for an unknown id, which
/// tests rule out).
pub fn severity_of(id: &str) -> Severity {
    catalogue()
        .get(id)
        .map(|e| e.severity)
        .unwrap_or(Severity::Info)
}

/// How this program is run, for the `mdiag ...` commands it prints:
/// `mdiag`, or `kubectl mdiag` when it runs as the kubectl plugin
/// (`kubectl-mdiag`). Set once at start-up by `main`.
static PROGRAM: OnceLock<&'static str> = OnceLock::new();

/// The program as a person types it: `mdiag` unless [`set_program`] said otherwise.
pub fn program() -> &'static str {
    PROGRAM.get().copied().unwrap_or("mdiag")
}

/// Sets [`program`] (the first call wins).
pub fn set_program(name: &'static str) {
    let _ = PROGRAM.set(name);
}

/// The program name for the path this binary was started as: kubectl runs
/// a plugin named `kubectl-mdiag` for `kubectl mdiag`.
pub fn program_for(argv0: &std::ffi::OsStr) -> &'static str {
    let file = std::path::Path::new(argv0)
        .file_stem()
        .and_then(|f| f.to_str())
        .unwrap_or("");
    if file == "kubectl-mdiag" {
        "kubectl mdiag"
    } else {
        "mdiag"
    }
}

/// The `{name}` at the start of `text` when `name` is a placeholder, with
/// the length of the whole `{name}`.
fn placeholder_at(text: &str) -> Option<(&'static str, usize)> {
    let inner = text.strip_prefix('{')?;
    let end = inner.find('}')?;
    let key = &inner[..end];
    PLACEHOLDERS
        .iter()
        .find(|p| **p == key)
        .map(|p| (*p, end + 2))
}

/// What mdiag itself is told to trace: the ModelService by its name, else
/// `deploy/NAME`.
fn target_of(vars: &BTreeMap<String, String>) -> Option<String> {
    vars.get("target").cloned().or_else(|| {
        vars.get("modelservice")
            .cloned()
            .or_else(|| vars.get("inferenceservice").map(|n| format!("isvc/{n}")))
            .or_else(|| vars.get("rollout").map(|n| format!("rollout/{n}")))
            .or_else(|| vars.get("deployment").map(|d| format!("deploy/{d}")))
    })
}

/// A check template filled in for one target: the template is read as
/// shell words first and each word filled from `vars` (the names in
/// [`PLACEHOLDERS`]), so a name can never become more than the one word it
/// stands in (a name from a file is not validated by any apiserver). Every
/// other brace is literal, so a jsonpath stays as kubectl reads it.
/// `{target}` defaults to the ModelService, else `deploy/DEPLOYMENT`. A
/// placeholder without a value is shown as `<name>` so the user sees what
/// to fill in. An `mdiag` command names the program as it was run
/// ([`program`]) and, when `vars` say the diagnosis was read from a file,
/// reads that file again (`--snapshot FILE`, and `--at` when the clock was
/// not the file's own: [`REPLAY_FILE`], [`REPLAY_AT`]).
pub fn fill(template: &str, vars: &BTreeMap<String, String>) -> Command {
    let words = crate::command::split(template).unwrap_or_else(|| vec![template.to_string()]);
    as_run(Command::new(words.iter().map(|w| fill_word(w, vars))), vars)
}

/// The var holding the file a diagnosis was read from.
pub const REPLAY_FILE: &str = "snapshot";
/// The var holding the kubeconfig context a live read named
/// (`--context`): kubectl and mdiag commands printed about it name it too.
pub const REPLAY_CONTEXT: &str = "context";
/// The var holding the clock (`--at`) a file was judged at, when it was
/// not the file's own.
pub const REPLAY_AT: &str = "at";

/// One word of a template with its placeholders filled.
fn fill_word(template: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(pos) = rest.find('{') {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        match placeholder_at(tail) {
            Some((key, len)) => {
                let value = if key == "target" {
                    target_of(vars)
                } else {
                    vars.get(key).cloned()
                };
                match value {
                    Some(value) => out.push_str(&value),
                    None => {
                        out.push('<');
                        out.push_str(key);
                        out.push('>');
                    }
                }
                rest = &tail[len..];
            }
            None => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A check template as `explain` and docs/symptoms.md show it: each
/// `{placeholder}` as `<placeholder>`, the one style for a name to fill in
/// (braces are jsonpath's), and a command that starts with `mdiag` naming
/// the program as it was run.
pub fn template_shown(template: &str) -> Command {
    fill(template, &BTreeMap::new())
}

/// A command as the user runs it: one that starts with `mdiag` names the
/// program as it was run ([`program`]), such as `kubectl mdiag trace ...`,
/// and reads the same file again when `vars` name one.
pub fn as_run(command: Command, vars: &BTreeMap<String, String>) -> Command {
    let context = vars.get(REPLAY_CONTEXT);
    if command.program() == Some("kubectl")
        && let Some(context) = context
        && !command.argv().iter().any(|w| w == "--context")
    {
        // Right after the program: a word after `--` would be the
        // container's.
        let mut words = vec!["kubectl".to_string(), "--context".into(), context.clone()];
        words.extend(command.argv()[1..].iter().cloned());
        return Command::new(words);
    }
    if command.program() != Some("mdiag") {
        return command;
    }
    let mut words: Vec<String> = program().split(' ').map(str::to_string).collect();
    words.extend(command.argv()[1..].iter().cloned());
    let mut run = Command::new(words);
    if let Some(file) = vars.get(REPLAY_FILE) {
        run.push("--snapshot");
        run.push(file.clone());
        if let Some(at) = vars.get(REPLAY_AT) {
            run.push("--at");
            run.push(at.clone());
        }
    }
    if let Some(context) = context
        && !run.argv().iter().any(|w| w == "--context")
    {
        run.push("--context");
        run.push(context.clone());
    }
    run
}

/// The placeholders a template uses: every `{word}` of lowercase letters
/// and underscores (jsonpath's `{end}` aside), so that a misspelt one is
/// caught by the catalogue's tests instead of being printed as it is.
pub fn placeholders_in(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let inner = &rest[start + 1..];
        let word_len = inner
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(inner.len());
        let word = &inner[..word_len];
        if !word.is_empty() && inner[word_len..].starts_with('}') && word != "end" {
            out.push(word.to_string());
        }
        rest = inner;
    }
    out
}

/// Placeholders that name the ModelService: a command using one is not
/// shown for a target that has none.
const MODEL_SERVICE_PLACEHOLDERS: &[&str] = &["modelservice", "resource"];

impl Entry {
    /// The check commands filled in for one target: `vars` hold its real
    /// names. Commands about the ModelService are left out when the target
    /// has none (a plain Deployment or Pod).
    pub fn checks_for(&self, vars: &BTreeMap<String, String>) -> Vec<Command> {
        let has_model_service = vars.contains_key("modelservice");
        // A StatefulSet or DaemonSet has no Deployment and no ReplicaSet:
        // their commands would send the user to objects that do not exist.
        let pod_set = vars.contains_key("statefulset") || vars.contains_key("daemonset");
        self.check
            .iter()
            .filter(|c| {
                has_model_service
                    || !placeholders_in(c)
                        .iter()
                        .any(|p| MODEL_SERVICE_PLACEHOLDERS.contains(&p.as_str()))
            })
            .filter(|c| {
                !pod_set
                    || !(c.contains("replicasets")
                        || placeholders_in(c)
                            .iter()
                            .any(|p| p == "deployment" || p == "replicaset"))
            })
            // A finding with no Pod (a model no runtime serves: no Pod will
            // come) gets no command about one.
            .filter(|c| vars.contains_key("pod") || !placeholders_in(c).iter().any(|p| p == "pod"))
            // Nor one about an InferenceService, a Rollout or a LeaderWorkerSet a chain does
            // not have; a Rollout stands where a Deployment would, so a
            // command about its Deployment would name none.
            .filter(|c| {
                let used = placeholders_in(c);
                let uses = |name: &str| used.iter().any(|p| p == name);
                (vars.contains_key("inferenceservice") || !uses("inferenceservice"))
                    && (vars.contains_key("rollout") || !uses("rollout"))
                    && (vars.contains_key("leaderworkerset") || !uses("leaderworkerset"))
                    && (vars.contains_key("knativeservice") || !uses("knativeservice"))
                    && !(vars.contains_key("rollout") && uses("deployment"))
            })
            // KServe's own objects and container names are no command for
            // a chain KServe does not run.
            .filter(|c| {
                vars.contains_key("inferenceservice") || !KSERVE_WORDS.iter().any(|w| c.contains(w))
            })
            // A container that never restarted has no previous log: its
            // failed run is its current one.
            .filter(|c| {
                !(vars.get("restarted").is_some_and(|r| r == "false") && c.contains("--previous"))
            })
            .map(|c| fill(c, vars))
            .collect()
    }

    /// The first check for one target (the `next` command), as [`Self::checks_for`].
    pub fn first_check_for(&self, vars: &BTreeMap<String, String>) -> Option<Command> {
        self.checks_for(vars).into_iter().next()
    }

    /// Every word that finds this entry: its id, symptoms and aliases.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.id.as_str())
            .chain(self.symptoms.iter().map(String::as_str))
            .chain(self.aliases.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_context_is_in_every_kubectl_and_mdiag_command_once() {
        let mut vars = BTreeMap::new();
        vars.insert(REPLAY_CONTEXT.to_string(), "prod eu".to_string());
        vars.insert("namespace".to_string(), "shop".to_string());
        vars.insert("pod".to_string(), "web-1".to_string());
        let exec = fill("kubectl -n {namespace} exec {pod} -- cat /etc/hosts", &vars);
        assert_eq!(
            exec.shell(),
            "kubectl --context 'prod eu' -n shop exec web-1 -- cat /etc/hosts"
        );
        let trace = fill("mdiag trace {pod} -n {namespace}", &vars);
        assert!(
            trace.shell().ends_with("-n shop --context 'prod eu'"),
            "{trace}"
        );
        // Filled twice (a check quoted in a next command): still once.
        assert_eq!(as_run(exec.clone(), &vars), exec);
        assert_eq!(as_run(trace.clone(), &vars), trace);
        // Other programs are left as they are.
        let curl = fill("curl -s http://x", &vars);
        assert_eq!(curl.shell(), "curl -s http://x");
    }

    #[test]
    fn fill_replaces_known_and_marks_unknown_placeholders() {
        let vars = BTreeMap::from([
            ("namespace".to_string(), "lab".to_string()),
            ("pod".to_string(), "web-1".to_string()),
        ]);
        assert_eq!(
            fill("kubectl -n {namespace} logs {pod} -c {container}", &vars).shell(),
            "kubectl -n lab logs web-1 -c <container>"
        );
        assert_eq!(
            fill("-o jsonpath='{.status}{end}{.x}' {pod} {{pod}}", &vars).argv(),
            ["-o", "jsonpath={.status}{end}{.x}", "web-1", "{web-1}"]
        );
    }

    #[test]
    fn a_hostile_name_fills_exactly_one_word() {
        let vars = BTreeMap::from([
            ("namespace".to_string(), "lab".to_string()),
            (
                "pod".to_string(),
                "x$(touch /tmp/owned)\nSERVING".to_string(),
            ),
        ]);
        let c = fill("kubectl -n {namespace} logs {pod} --previous", &vars);
        assert_eq!(
            c.argv(),
            [
                "kubectl",
                "-n",
                "lab",
                "logs",
                "x$(touch /tmp/owned)\nSERVING",
                "--previous"
            ]
        );
        assert_eq!(crate::command::split(&c.shell()).as_deref(), Some(c.argv()));
    }

    #[test]
    fn an_mdiag_command_reads_the_same_file_again() {
        let mut vars = BTreeMap::from([
            ("namespace".to_string(), "lab".to_string()),
            ("deployment".to_string(), "web".to_string()),
        ]);
        assert_eq!(
            fill("mdiag trace {target} -n {namespace}", &vars).shell(),
            "mdiag trace deploy/web -n lab"
        );
        vars.insert(REPLAY_FILE.into(), "dump dir/all.yaml".into());
        vars.insert(REPLAY_AT.into(), "2026-01-02T03:04:05Z".into());
        assert_eq!(
            fill("mdiag trace {target} -n {namespace}", &vars).shell(),
            "mdiag trace deploy/web -n lab --snapshot 'dump dir/all.yaml' --at 2026-01-02T03:04:05Z"
        );
        assert_eq!(
            fill("kubectl -n {namespace} get pods", &vars).shell(),
            "kubectl -n lab get pods",
            "a kubectl command reads the cluster, not the file"
        );
    }

    /// The headline names every cause alike, `reason [id]`: a reason is a
    /// few words on one line, in both languages.
    #[test]
    fn every_entry_has_a_short_reason_for_the_headline() {
        for e in &catalogue().entries {
            for lang in [Lang::En, Lang::Zh] {
                let reason = e.reason.get(lang);
                assert!(
                    !reason.is_empty() && !reason.contains('\n') && reason.chars().count() <= 28,
                    "{}: {reason:?}",
                    e.id
                );
            }
        }
    }

    #[test]
    fn words_people_type_find_their_entries() {
        let cat = catalogue();
        let ids = |q: &str| -> Vec<&str> { cat.lookup(q).iter().map(|e| e.id.as_str()).collect() };
        assert_eq!(ids("crashloop"), ["crash-loop"]);
        assert_eq!(ids("Crash_Loop"), ["crash-loop"]);
        assert_eq!(ids("exit code 127"), ["container-cannot-run"]);
        assert_eq!(ids("oom"), ["oom-killed"]);
        // Shared words, ranked: 137 is a kill (a crash loop) before it is
        // an OOM; a reason the cluster shows before a word for it.
        assert_eq!(ids("137"), ["crash-loop", "oom-killed"]);
        assert_eq!(ids("NotReady"), ["readiness-failing", "node-not-ready"]);
        assert!(ids("").is_empty());
        assert!(ids("nothing-like-it").is_empty());
        let first = |q: &str| cat.suggest(q).first().map(|(e, w)| (e.id.as_str(), *w));
        assert_eq!(first("oomkiled"), Some(("oom-killed", "oom-killed")));
        assert_eq!(
            first("ImagePullBackof").map(|(id, _)| id),
            Some("image-pull-denied")
        );
        assert_eq!(first("readyness"), Some(("readiness-failing", "readiness")));
        assert!(
            cat.suggest("138").is_empty(),
            "no exit code is near another"
        );
        assert!(cat.suggest("zzzzzzzz").is_empty());
        assert!(cat.suggest("x0").is_empty(), "no exit code is near a word");
    }

    #[test]
    fn a_target_without_a_model_service_gets_its_deployment_commands_only() {
        let e = catalogue().get("rollout-in-progress").unwrap();
        let deploy = BTreeMap::from([
            ("namespace".to_string(), "lab".to_string()),
            ("deployment".to_string(), "web".to_string()),
            ("resource".to_string(), "msvc".to_string()),
        ]);
        let checks: Vec<String> = e.checks_for(&deploy).iter().map(Command::shell).collect();
        assert!(checks.len() < e.check.len());
        assert!(
            checks[0].starts_with("kubectl -n lab get deployment web "),
            "{checks:?}"
        );
        assert!(checks.iter().all(|c| !c.contains("msvc")), "{checks:?}");
        assert!(checks.contains(&"mdiag trace deploy/web -n lab".to_string()));
        let mut msvc = deploy.clone();
        msvc.insert("modelservice".into(), "chart".into());
        let checks: Vec<String> = e.checks_for(&msvc).iter().map(Command::shell).collect();
        // Every command but the Argo Rollout's and the LeaderWorkerSet's.
        let not_rollout = e
            .check
            .iter()
            .filter(|c| {
                !placeholders_in(c)
                    .iter()
                    .any(|p| p == "rollout" || p == "leaderworkerset")
            })
            .count();
        assert!(not_rollout < e.check.len());
        assert_eq!(checks.len(), not_rollout);
        assert!(
            checks[0].starts_with("kubectl -n lab get msvc chart "),
            "{checks:?}"
        );
        assert!(checks.contains(&"mdiag trace chart -n lab".to_string()));
    }

    #[test]
    fn the_plugin_is_named_as_kubectl_runs_it() {
        use std::ffi::OsStr;
        assert_eq!(
            program_for(OsStr::new("/usr/local/bin/kubectl-mdiag")),
            "kubectl mdiag"
        );
        assert_eq!(
            program_for(OsStr::new("kubectl-mdiag.exe")),
            "kubectl mdiag"
        );
        assert_eq!(program_for(OsStr::new("target/debug/mdiag")), "mdiag");
        assert_eq!(program_for(OsStr::new("")), "mdiag");
    }

    #[test]
    fn lang_follows_locale() {
        assert_eq!(Lang::from_locale("zh_CN.UTF-8"), Lang::Zh);
        assert_eq!(Lang::from_locale("en_US.UTF-8"), Lang::En);
        assert_eq!(Lang::from_locale("C"), Lang::En);
    }

    /// The finding ids docs/contract.md#findings makes a contract.
    const SPEC_IDS: &[&str] = &[
        "pod-unschedulable",
        "resource-claim-pending",
        "scheduler-silent",
        "pod-not-started",
        "init-container-failing",
        "crash-loop",
        "container-config-error",
        "container-cannot-run",
        "oom-killed",
        "probe-kills-startup",
        "image-pull-denied",
        "image-pull-not-found",
        "image-pull-timeout",
        "image-pull-failed",
        "readiness-failing",
        "endpoints-not-ready",
        "selector-mismatch",
        "port-mismatch",
        "service-missing",
        "endpoints-stale",
        "dns-check",
        "controller-not-converging",
        "deployment-not-observed",
        "deployment-missing",
        "pods-not-created",
        "rollout-surge-blocked",
        "progress-deadline-exceeded",
        "managed-deployment-edited",
        "field-conflict",
        "hpa-metrics-unavailable",
        "hpa-at-max",
        "hpa-target-missing",
        "node-not-ready",
        "pdb-blocking",
        "rollout-in-progress",
        "group-not-ready",
        "model-not-loaded",
    ];

    #[test]
    fn the_catalogue_covers_every_spec_id_once_in_both_languages() {
        let cat = catalogue();
        for id in SPEC_IDS {
            assert!(cat.get(id).is_some(), "{id} missing");
        }
        let mut ids: Vec<&str> = cat.entries.iter().map(|e| e.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), cat.entries.len(), "duplicate ids");
        for e in &cat.entries {
            for (what, text) in [
                ("title", &e.title),
                ("cause", &e.cause),
                ("judge", &e.judge),
                ("fix", &e.fix),
                ("verify", &e.verify),
            ] {
                assert!(!text.get(Lang::En).is_empty(), "{} {what} en", e.id);
                assert!(!text.get(Lang::Zh).is_empty(), "{} {what} zh", e.id);
            }
            assert!(!e.check.is_empty(), "{} has no check", e.id);
        }
    }

    #[test]
    fn check_templates_use_known_placeholders_and_only_read() {
        for e in &catalogue().entries {
            for c in &e.check {
                for p in placeholders_in(c) {
                    assert!(
                        PLACEHOLDERS.contains(&p.as_str()),
                        "{}: {{{p}}} in {c}",
                        e.id
                    );
                }
                let words = crate::command::split(c)
                    .unwrap_or_else(|| panic!("{}: {c} is not a shell line", e.id));
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                for verb in [
                    "apply", "edit", "delete", "patch", "scale", "create", "replace", "label",
                    "annotate",
                ] {
                    assert!(
                        !(words.first() == Some(&"kubectl") && words.contains(&verb)),
                        "{}: {c} writes",
                        e.id
                    );
                }
            }
        }
    }

    #[test]
    fn a_pod_set_is_not_sent_to_deployments_or_replicasets() {
        let entry = catalogue().get("rollout-in-progress").unwrap();
        let set = BTreeMap::from([
            ("namespace".to_string(), "serve".to_string()),
            ("statefulset".to_string(), "shard".to_string()),
            ("workload".to_string(), "statefulset/shard".to_string()),
            ("target".to_string(), "sts/shard".to_string()),
        ]);
        let checks: Vec<String> = entry.checks_for(&set).iter().map(Command::shell).collect();
        assert_eq!(
            checks.first().map(String::as_str),
            Some("kubectl -n serve rollout status statefulset/shard")
        );
        assert!(
            checks
                .iter()
                .all(|c| !c.contains("deployment") && !c.contains("replicaset")),
            "{checks:?}"
        );
        let deployment = BTreeMap::from([
            ("namespace".to_string(), "shop".to_string()),
            ("deployment".to_string(), "web".to_string()),
        ]);
        assert!(
            entry
                .checks_for(&deployment)
                .iter()
                .any(|c| c.shell().contains("get replicasets"))
        );
    }
}
