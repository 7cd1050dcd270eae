//! `--lang zh` is Chinese throughout: no English word is
//! left in the human trace views of any demo or fixture, except what is not
//! mdiag's to translate: the cluster's own words (object names, reasons,
//! event and log messages, label values: every string of the input file),
//! field paths, commands, finding ids and the Kubernetes terms of
//! [`ALLOWED`].

use crate::common;
use std::collections::BTreeSet;

use std::path::Path;

use assert_cmd::Command;

fn mdiag() -> Command {
    let mut cmd = Command::cargo_bin("mdiag").unwrap();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KUBECONFIG")
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .env("LANG", "C");
    cmd
}

/// Words of Kubernetes and of its tools that Chinese Kubernetes texts keep
/// in English (kubernetes.io/zh-cn writes `Pod`, `Deployment`, `kubelet`,
/// `requests`...), and the field names and values mdiag quotes as the API
/// spells them. Each is a name, not an English word a reader must know.
const ALLOWED: &[&str] = &[
    // KServe's model states and its predictor component, as its status
    // writes them.
    "Loading",
    "Loaded",
    "predictor",
    // Argo Rollouts: the project's name, its kind and the status field an
    // abort sets.
    "Argo",
    "Rollout",
    "Rollouts",
    "abort",
    // LeaderWorkerSet: the condition its status writes when every group is
    // ready.
    "Available",
    // Knative Serving: the project's name and its kinds, as its API names
    // them (its Service is `KnativeService` in mdiag's own output).
    "Knative",
    "Serving",
    "KnativeService",
    "Revision",
    "Revisions",
    "Configuration",
    // Kinds and objects.
    "ModelService",
    "ModelServices",
    "Deployment",
    "Deployments",
    "ReplicaSet",
    "ReplicaSets",
    "StatefulSet",
    "StatefulSets",
    "DaemonSet",
    "DaemonSets",
    "ControllerRevision",
    "ControllerRevisions",
    "Job",
    "Jobs",
    "CronJob",
    "CronJobs",
    "Pod",
    "Pods",
    "Service",
    "Services",
    "EndpointSlice",
    "EndpointSlices",
    "Node",
    "Nodes",
    "Lease",
    "Leases",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "ResourceQuota",
    "LimitRange",
    "PodSecurity",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
    "HPA",
    "PDB",
    "PVC",
    "StorageClass",
    "Webhook",
    "API",
    // Components and tools (Helm's Chinese docs keep "release").
    "kubelet",
    "apiserver",
    "kube",
    "scheduler",
    "controller",
    "manager",
    "kubectl",
    "mdiag",
    "helm",
    "Helm",
    "release",
    "chart",
    "values",
    "kind",
    "CNI",
    "DNS",
    "UTC",
    "QoS",
    "Guaranteed",
    // Field names and API values mdiag quotes as the API spells them.
    "generation",
    "observedGeneration",
    "nodeName",
    "exitCode",
    "reason",
    "status",
    "spec",
    "limits",
    "requests",
    "memory",
    "cpu",
    "nvidia",
    "failureThreshold",
    "maxSurge",
    "maxUnavailable",
    "updateStrategy",
    "partition",
    "OnDelete",
    // A Job's restart policy, conditions and Pod phases.
    "Never",
    "OnFailure",
    // A sidecar's restart policy; the init containers' condition.
    "Always",
    "Initialized",
    "Complete",
    "Succeeded",
    "RollingUpdate",
    "httpGet",
    "tcpSocket",
    "exec",
    "grpc",
    "probe",
    "uid",
    "ready",
    "true",
    "false",
    "True",
    "False",
    "Unknown",
    "Running",
    "Ready",
    "Progressing",
    "ReplicaFailure",
    "ScalingActive",
    "AbleToScale",
    "ScalingLimited",
    "PodScheduled",
    "ownerReference",
    "managedFields",
    "selector",
    "labels",
    "taints",
    "holderIdentity",
    "renewTime",
    "leaseDurationSeconds",
    "targetPort",
    "readinessProbe",
    "initialDelaySeconds",
    "periodSeconds",
    "nodeSelector",
    "tolerations",
    "toleration",
    "affinity",
    "imagePullSecrets",
    // Single-capital reasons and API values (PascalCase ones with two
    // capitals or more, and acronyms, pass by their shape: see `api_word`).
    "Started",
    "Pulled",
    "Created",
    "Scheduled",
    "Pending",
    "Terminating",
    "Failed",
    "Recreate",
    "Role",
    "Container",
    // Lower-case API fields, resources and RBAC verbs the texts quote.
    "command",
    "args",
    "env",
    "key",
    "optional",
    "allocatable",
    "replicas",
    "desired",
    "current",
    "value",
    "conditions",
    "phase",
    "services",
    "endpointslices",
    "replicasets",
    "pods",
    "nodes",
    "secrets",
    "deployments",
    "statefulsets",
    "daemonsets",
    "controllerrevisions",
    "modelservices",
    "events",
    "leases",
    "list",
    "get",
    "watch",
    "create",
    "update",
    "apply",
    "delete",
    "privileged",
    "revision",
    "forbidden",
    // Terms of images, registries, nodes and Linux that Chinese Kubernetes
    // texts keep in English.
    "manifest",
    "digest",
    "tag",
    "registry",
    "mirror",
    "localhost",
    "webhook",
    "kubeconfig",
    "sandbox",
    "init",
    "shell",
    "entrypoint",
    "distroless",
    "taint",
    "cordon",
    "drain",
    "cgroup",
    "killer",
    "ndots",
    "curl",
    "nslookup",
    "getent",
    "hosts",
    "credential",
    "provider",
    "admission",
    "limit",
    "message",
    "toomanyrequests",
    "Docker",
    "Hub",
    "conflict",
    "invalid",
    // What the catalogue's Chinese prose (explain) keeps as Kubernetes and
    // its tools spell it: state and field names, reasons and event types it
    // quotes, and terms zh-cn Kubernetes texts leave in English.
    "waiting",
    "terminated",
    "state",
    "metadata",
    "name",
    "port",
    "scale",
    "operation",
    "series",
    "search",
    "headless",
    "unreachable",
    "view",
    "force",
    "rollout",
    "restart",
    "leader",
    "worker",
    "root",
    "token",
    "batch",
    "kubeadm",
    "containerd",
    "Warning",
    "Error",
    "Completed",
    "Killing",
    "Unhealthy",
    "Evicted",
    "Pulling",
    "Unschedulable",
    "Insufficient",
    // Signals, DNS answers and protocols, in the capitals they are written in.
    "SIGTERM",
    "SIGKILL",
    "NXDOMAIN",
    "SERVFAIL",
    "HTTPS",
    // English terms the Chinese texts give in parentheses after their own
    // words: 调度门控（scheduling gate）, 工作集（working set）.
    "scheduling",
    "gate",
    "working",
    "set",
    // EndpointSlice fields and conditions.
    "endpoints",
    "serving",
    "terminating",
    // A registry's words, which catalogue titles quote in parentheses.
    "unknown",
    "denied",
    "unauthorized",
];

/// API words by their shape: camelCase field names (`availableReplicas`),
/// PascalCase reasons and kinds with two capitals or more (`OOMKilled`,
/// `ReadWriteOnce`) and acronyms (`CPU`, `UID`). An upper-case word longer
/// than an acronym is an English word in capitals (`NAMESPACE`, `SERVING`)
/// unless [`ALLOWED`] names it.
fn api_word(w: &str) -> bool {
    let first = w.chars().next().unwrap_or('a');
    let capitals = w.chars().filter(|c| c.is_ascii_uppercase()).count();
    if capitals == w.len() && w.len() > 4 {
        return false;
    }
    (first.is_ascii_lowercase() && capitals > 0) || capitals >= 2
}

/// The line without what it quotes: “…” and "…" hold the cluster's words
/// (a registry's answer, an event message) or a command.
fn unquoted(line: &str) -> String {
    let mut out = String::new();
    let mut inside: Option<char> = None;
    for c in line.chars() {
        match (inside, c) {
            (None, '“') => inside = Some('”'),
            (None, '"') => inside = Some('"'),
            (Some(end), c) if c == end => inside = None,
            (Some(_), _) => {}
            (None, c) => out.push(c),
        }
    }
    out
}

/// Strings of the input file: everything the cluster said (names, reasons,
/// messages, labels, images, logs), word by word.
fn cluster_words(file: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let value: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let mut strings = Vec::new();
    collect(&value, &mut strings);
    let mut words = BTreeSet::new();
    for s in strings {
        for w in s.split(|c: char| !c.is_ascii_alphabetic()) {
            if !w.is_empty() {
                words.insert(w.to_string());
            }
        }
    }
    words
}

fn collect(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| collect(v, out)),
        _ => {}
    }
}

/// What is left of a line once the text mdiag does not translate is taken
/// out: commands (to the end of the line), field paths and other tokens with
/// `.`, `[`, `=`, `/`, `:` or `-` in them (paths, ids, images, labels,
/// `crash-loop`), durations and flags.
fn translatable(line: &str) -> String {
    let mut line = line.to_string();
    for command in ["kubectl ", "mdiag ", "helm ", "jsonpath="] {
        if let Some(at) = line.find(command) {
            line.truncate(at);
        }
    }
    line.split(|c: char| c.is_whitespace() || "，：；（）、·“”…←→".contains(c))
        .filter(|token| {
            let t = token.trim_matches(|c: char| "()[],;:'\"".contains(c));
            !(t.contains(['.', '[', '=', '/', ':', '-', '_', '{', '<'])
                || t.starts_with('-')
                || t.chars().next().is_some_and(|c| c.is_ascii_digit()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn english_words(out: &str, cluster: &BTreeSet<String>) -> Vec<String> {
    let allowed: BTreeSet<&str> = ALLOWED.iter().copied().collect();
    let mut found = Vec::new();
    let mut continued = false;
    for line in out.lines() {
        // A command's continuation lines (`... \`) are the command.
        let was_continued = continued;
        continued = line.ends_with(" \\");
        if was_continued {
            continue;
        }
        // `explain`'s symptoms are the cluster's own words, as a person
        // greps for them (event reasons and messages).
        if line.starts_with("症状：") {
            continue;
        }
        for word in translatable(&unquoted(line)).split(|c: char| !c.is_ascii_alphabetic()) {
            if word.len() >= 3
                && !allowed.contains(word)
                && !cluster.contains(word)
                && !api_word(word)
            {
                found.push(format!("{word:<16} in: {}", line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_chinese_views_hold_no_english_word_of_mdiags_own() {
    let mut failures = Vec::new();
    for (file, target) in common::expected_fixtures() {
        let cluster = cluster_words(&file);
        for verbose in [false, true] {
            let mut args = vec![
                "trace",
                &target,
                "--snapshot",
                &file,
                "--lang",
                "zh",
                "--width",
                "1000",
            ];
            if verbose {
                args.push("-v");
            }
            let out = mdiag().args(&args).output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(!text.is_empty(), "{file}: no output");
            for w in english_words(&text, &cluster) {
                failures.push(format!("{file}{}: {w}", if verbose { " -v" } else { "" }));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} English words:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Runs `mdiag ARGS --lang zh` and returns the English words of mdiag's
/// own in what it printed (stdout and stderr), the words of `inputs` (the
/// snapshot and alert files) allowed.
fn zh_english(args: &[&str], inputs: &[&str]) -> Vec<String> {
    let mut cluster = BTreeSet::new();
    for file in inputs {
        cluster.extend(cluster_words(file));
    }
    let mut cmd = mdiag();
    cmd.args(args).args(["--lang", "zh"]);
    cmd.args(["--width", "10000"]);
    let out = cmd.output().unwrap();
    // 2 is a usage error: its words are clap's, and the view was not shown.
    assert_ne!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap();
    assert!(!text.trim().is_empty(), "{args:?}: no output");
    english_words(&text, &cluster)
        .into_iter()
        .map(|w| format!("{}: {w}", args.join(" ")))
        .collect()
}

fn assert_none(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} English words:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The triage table of every demo and fixture, healthy rows included, and
/// of the triage fixtures: headers, cells, the count line and `next:`.
#[test]
fn the_chinese_triage_table_holds_no_english_word_of_mdiags_own() {
    let mut files: Vec<String> = common::expected_fixtures()
        .into_iter()
        .map(|(file, _)| file)
        .collect();
    files.extend(
        common::files_in("fixtures/triage")
            .into_iter()
            .map(|n| format!("fixtures/triage/{n}.yaml")),
    );
    let mut failures = Vec::new();
    for file in &files {
        for all in [false, true] {
            let mut args = vec!["triage", "-A", "--snapshot", file];
            if all {
                args.push("--all");
            }
            failures.extend(zh_english(&args, &[file]));
        }
    }
    assert_none(failures);
}

/// `triage --alert` for every alert fixture: the alert lines (started,
/// now, resolved), how an alert was mapped, and the alerts mapped to nothing.
#[test]
fn the_chinese_alert_view_holds_no_english_word_of_mdiags_own() {
    let snapshot = "fixtures/demo/snapshot-crash-loop.yaml";
    let mut failures = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/alerts");
    let mut alerts: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            format!(
                "fixtures/alerts/{}",
                e.unwrap().file_name().to_string_lossy()
            )
        })
        .collect();
    alerts.sort();
    assert!(alerts.len() >= 4, "{alerts:?}");
    for alert in &alerts {
        failures.extend(zh_english(
            &["triage", "--alert", alert, "--snapshot", snapshot],
            &[snapshot, alert],
        ));
    }
    assert_none(failures);
}

/// `explain`: the list, every entry, and an entry filled in from a snapshot.
#[test]
fn the_chinese_explain_views_hold_no_english_word_of_mdiags_own() {
    let list = mdiag().args(["explain"]).output().unwrap();
    let ids: Vec<String> = String::from_utf8(list.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(ids.len() > 30, "{ids:?}");
    let mut failures = zh_english(&["explain"], &[]);
    for id in &ids {
        failures.extend(zh_english(&["explain", id], &[]));
    }
    let file = "fixtures/demo/snapshot-crash-loop.yaml";
    failures.extend(zh_english(
        &[
            "explain",
            "crash-loop",
            "pod/chart-demo-ntmp458kfb-pvgk2",
            "--snapshot",
            file,
        ],
        &[file],
    ));
    assert_none(failures);
}

/// The gate's views of every demo as its loop would judge it: the progress
/// line, the final line (converged, failed, timed out: what it still waits
/// for), the checks, the Helm release with its notes, and the trace.
#[test]
fn the_chinese_gate_views_hold_no_english_word_of_mdiags_own() {
    use mdiag_core::analysis::gate::{self, GatePolicy, HelmRelease, Outcome};
    use mdiag_core::catalogue::{Lang, Message};
    use mdiag_core::model::{Clock, ClockSource, Origin, OriginKind};
    use mdiag_render::Style;
    use mdiag_render::gate::{
        GateDetails, ReportCheck, ReportHelm, human_report, progress_line, progress_state,
        waiting_message, waiting_text,
    };
    use mdiag_render::report::RunInfo;
    let mut failures = Vec::new();
    for name in common::scenarios() {
        let file = format!("fixtures/demo/{name}.yaml");
        let mut cluster = cluster_words(&file);
        // The Helm release's name and status, which the test makes up.
        cluster.extend(["other".to_string(), "deployed".to_string()]);
        let snapshot = common::load(&name);
        let Ok(target) = mdiag_core::model::TargetSpec::parse("chart-demo", None) else {
            continue;
        };
        let Ok(chain) = mdiag_core::chain::walk(&snapshot, &target, common::NAMESPACE, None) else {
            continue;
        };
        let diagnosis =
            mdiag_core::analysis::analyze(&snapshot, &chain, common::clock(&snapshot).now);
        let crashes = mdiag_core::analysis::crashes::CrashHistory::default();
        let moment = gate::Observation {
            snapshot: &snapshot,
            chain: &chain,
            diagnosis: &diagnosis,
            crashes: &crashes,
        };
        // A release whose annotations name another: the Helm line and a note.
        let helm = gate::helm_matches(
            HelmRelease {
                name: "other".into(),
                namespace: common::NAMESPACE.into(),
                read: true,
                revision: Some(3),
                status: Some("deployed".into()),
                ..HelmRelease::default()
            },
            &snapshot,
            &target,
            common::NAMESPACE,
        );
        let decision = gate::decide(moment, &GatePolicy::default(), Some(&helm));
        let view = &decision.view;
        let outcome = decision.outcome.unwrap_or(Outcome::TimedOut);
        let waits = !matches!(outcome, Outcome::Converged | Outcome::Failed);
        let policy = GatePolicy::default();
        let details = GateDetails {
            timeout_seconds: 600.0,
            fail_on: policy.fail_on.iter().map(|i| i.to_string()).collect(),
            max_restarts: policy.max_restarts,
            decided_by: gate::decided_by(outcome, Some(&decision), Some(&diagnosis)),
            waiting_for: waiting_text(view).filter(|_| waits),
            waiting: waiting_message(view).filter(|_| waits),
            reason: decision.reason.as_ref().map(Message::en),
            said_reason: decision.reason.clone(),
            checks: view.checks.iter().map(ReportCheck::from).collect(),
            relists: 0,
            disconnects: 0,
            helm: Some(ReportHelm::from(&helm)),
            evidence_file: None,
        };
        let origin = Origin {
            kind: OriginKind::Live,
            location: "https://127.0.0.1:6443".into(),
            ..Origin::default()
        };
        let run = RunInfo {
            origin: &origin,
            clock: Clock {
                now: diagnosis.now,
                source: ClockSource::Live,
            },
            requests: None,
        };
        let mut style = Style::plain(Lang::Zh, diagnosis.now);
        style.width = 1000;
        let elapsed = std::time::Duration::from_secs(83);
        let text = format!(
            "{}\n{}",
            progress_line(elapsed, &progress_state(&diagnosis, view, Lang::Zh)),
            human_report(
                outcome,
                elapsed,
                Some((&diagnosis, view)),
                &details,
                &run,
                &style
            )
        );
        for w in english_words(&text, &cluster) {
            failures.push(format!("gate {name} ({}): {w}", outcome.as_str()));
        }
    }
    assert_none(failures);
}

/// The check itself finds what it is for, and lets through what it must.
#[test]
fn the_check_finds_english_and_passes_names_paths_and_commands() {
    let cluster: BTreeSet<String> = ["CrashLoopBackOff", "server"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let found = english_words(
        "container server exits with code 1\n\
         证据 status.containerStatuses[server].state.waiting = CrashLoopBackOff\n\
         检查 kubectl -n lab logs web -c server --previous\n\
         next: kubectl get pod web -o \\\n  jsonpath='{.status}'\n\
         ✘ error crash-loop pod/web 容器 server 以退出码 1 退出，已重启 6 次\n\
          NAMESPACE  WORKLOAD  状态  CPU  HTTPS  OOMKilled",
        &cluster,
    );
    let words: Vec<&str> = found
        .iter()
        .map(|f| f.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        words,
        [
            "container",
            "exits",
            "with",
            "code",
            "next",
            "error",
            "NAMESPACE",
            "WORKLOAD"
        ],
        "{found:#?}"
    );
}

/// The HTML page's text (`-o html --lang zh`): what a reader sees, one
/// line per element, the page's style sheet and script left out.
fn html_lines(page: &str) -> String {
    let cut = |s: &str, open: &str, close: &str| -> String {
        match (s.find(open), s.find(close)) {
            (Some(a), Some(b)) if a < b => format!("{}{}", &s[..a], &s[b + close.len()..]),
            _ => s.to_string(),
        }
    };
    let page = cut(&cut(page, "<style>", "</style>"), "<script>", "</script>");
    let mut out = String::new();
    let mut in_tag = false;
    for c in page.chars() {
        match c {
            '<' => {
                in_tag = true;
                out.push('\n');
            }
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

#[test]
fn the_chinese_html_pages_hold_no_english_word_of_mdiags_own() {
    let mut failures = Vec::new();
    for name in common::scenarios() {
        let file = format!("fixtures/demo/{name}.yaml");
        let cluster = cluster_words(&file);
        let out = mdiag()
            .args([
                "trace",
                "chart-demo",
                "--snapshot",
                &file,
                "--lang",
                "zh",
                "-o",
                "html",
            ])
            .output()
            .unwrap();
        let page = String::from_utf8(out.stdout).unwrap();
        assert!(page.contains("lang=\"zh-CN\""), "{file}");
        for w in english_words(&html_lines(&page), &cluster) {
            failures.push(format!("{file} -o html: {w}"));
        }
    }
    assert_none(failures);
}

/// Every error mdiag raises itself, and what it says on stderr beside an
/// answer (a key named twice), under `--lang zh`: one line, in Chinese, with
/// no English word of mdiag's own. The words of the system are not mdiag's
/// to translate and are allowed case by case: the operating system's
/// (`No such file or directory`), a parser's (jiff's, the regex crate's,
/// serde's) and gzip's.
#[test]
fn the_chinese_errors_hold_no_english_word_of_mdiags_own() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str, text: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let not_gzip = at("plain.yaml.gz", b"plain text");
    let empty = at("empty.yaml", b"");
    let not_yaml = at("broken.yaml", b"items: [a, b\n");
    let future = at(
        "future.yaml",
        b"format: mdiag.dev/snapshot\nversion: 99\nobjects: []\n",
    );
    let not_kube = at("plain.yaml", b"hello: world\n");
    let twice = at(
        "twice.yaml",
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  namespace: lab\n  name: b\n",
    );
    let bad_alert = at("alert.json", b"{\"alerts\": 3}");
    let unmapped_alert = at("unmapped.json", b"{\"labels\": {\"alertname\": \"Disk\"}}");
    let kubeconfig = at(
        "kubeconfig",
        b"apiVersion: v1\nkind: Config\nclusters: []\ncontexts:\n- name: dev\n  context: {cluster: dev, user: dev}\nusers: []\n",
    );
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let folder = dir.path().to_str().unwrap().to_string();
    let healthy = "fixtures/demo/healthy.yaml";
    let crash = "fixtures/demo/crash-loop.yaml";
    let os = ["such", "file", "directory"];
    // Names, not words: the product, the tool and the variable.
    let names = ["Kubernetes", "Alertmanager", "KUBECONFIG"];
    // (arguments, exit code, words of the system allowed)
    let cases: Vec<(Vec<&str>, i32, &[&str])> = vec![
        (vec!["trace", "x", "--snapshot", "no/such.yaml"], 2, &[]),
        (vec!["trace", "x", "--snapshot", &folder], 2, &[]),
        (
            vec!["trace", "x", "--snapshot", &not_gzip],
            2,
            &["invalid", "gzip", "header"],
        ),
        (vec!["trace", "x", "--snapshot", &empty], 2, &[]),
        (
            vec!["trace", "x", "--snapshot", &not_yaml],
            2,
            &[
                "line",
                "column",
                "unexpected",
                "end",
                "flow",
                "sequence",
                "did",
                "find",
                "expected",
                "while",
                "parsing",
                "found",
                "scanning",
                "simple",
                "key",
                "could",
                "not",
            ],
        ),
        (vec!["trace", "x", "--snapshot", &future], 2, &[]),
        (vec!["trace", "x", "--snapshot", &not_kube], 2, &[]),
        (
            vec!["triage", "-n", "nobody", "--snapshot", healthy],
            5,
            &[],
        ),
        (
            vec!["triage", "-A", "-l", "app=none", "--snapshot", healthy],
            5,
            &[],
        ),
        (vec!["triage", "-l", "a(b", "--snapshot", healthy], 2, &[]),
        (
            vec!["triage", "-n", "x", "-A", "--snapshot", healthy],
            2,
            &[],
        ),
        (
            vec!["triage", "--alert", &bad_alert, "--snapshot", healthy],
            2,
            &[],
        ),
        (
            vec!["triage", "--alert", &unmapped_alert, "--snapshot", healthy],
            2,
            &["Disk"],
        ),
        (
            vec!["trace", "chart-demo-typo", "--snapshot", healthy],
            5,
            &[],
        ),
        (vec!["trace", "a/b/c", "--snapshot", healthy], 2, &[]),
        (
            vec!["trace", "chart-demo", "--at", "soon", "--snapshot", healthy],
            2,
            &[
                "failed", "parse", "four", "digit", "integer", "year", "invalid", "expected",
                "but", "got",
            ],
        ),
        (
            vec![
                "trace",
                "chart-demo",
                "--at",
                "2020-01-01T00:00:00Z",
                "--snapshot",
                healthy,
            ],
            2,
            &[],
        ),
        (
            vec!["trace", "chart-demo", "--at", "2026-11-28T10:15:00Z"],
            2,
            &[],
        ),
        (
            vec!["trace", "chart-demo", "--logs", "--snapshot", crash],
            2,
            &[],
        ),
        (
            vec![
                "trace",
                "chart-demo",
                "--controller",
                "nope",
                "--snapshot",
                healthy,
            ],
            2,
            &[],
        ),
        (
            vec![
                "trace",
                "chart-demo",
                "--redact",
                "(",
                "--snapshot",
                healthy,
            ],
            2,
            &["unclosed", "group"],
        ),
        (vec!["trace", "chart-demo"], 2, &[]),
        (
            vec!["trace", "chart-demo", "--kubeconfig", "/no/such/kubeconfig"],
            2,
            &os,
        ),
        (
            vec![
                "trace",
                "chart-demo",
                "--kubeconfig",
                &kubeconfig,
                "--context",
                "prod",
            ],
            4,
            &["dev"],
        ),
        (vec!["trace", "b", "--snapshot", &twice], 5, &[]),
        (vec!["gate", "pod/x"], 2, &[]),
        (vec!["gate", "chart-demo", "--max-restarts", "0"], 2, &[]),
        (vec!["gate", "chart-demo", "--fail-on", "nope"], 2, &[]),
        (
            vec!["gate", "chart-demo", "--fail-on", "none,crash-loop"],
            2,
            &["none"],
        ),
        (vec!["snapshot", "--output-file", "x.yaml"], 2, &[]),
        (
            vec![
                "snapshot",
                "chart-demo",
                "-o",
                "json",
                "--output-file",
                "x.yaml",
            ],
            2,
            &["json", "yaml"],
        ),
        (vec!["explain", "crashlop"], 2, &[]),
        (vec!["explain", "no-such-thing"], 2, &[]),
    ];
    let mut failures = Vec::new();
    for (args, code, system) in cases {
        let out = mdiag()
            .args(&args)
            .args(["--lang", "zh"])
            .env("HOME", &home)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        let mut allowed: BTreeSet<String> =
            system.iter().chain(&names).map(|w| w.to_string()).collect();
        for file in args
            .iter()
            .filter(|a| a.ends_with(".yaml") && Path::new(a).is_file())
        {
            if std::fs::metadata(file).is_ok_and(|m| m.len() > 0)
                && let Ok(text) = std::fs::read_to_string(file)
                && serde_saphyr::from_str::<serde_json::Value>(&text).is_ok()
            {
                allowed.extend(cluster_words(file));
            }
        }
        let lines: Vec<&str> = stderr.lines().collect();
        let error = lines.iter().filter(|l| l.starts_with("mdiag: ")).count();
        assert!(error <= 1, "{args:?}: more than one error line: {stderr}");
        assert!(
            stderr
                .chars()
                .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "{args:?}: no Chinese: {stderr}"
        );
        for line in lines {
            let line = line.strip_prefix("mdiag: ").unwrap_or(line);
            for w in english_words(line, &allowed) {
                failures.push(format!("{}: {w}", args.join(" ")));
            }
        }
    }
    assert_none(failures);
}
