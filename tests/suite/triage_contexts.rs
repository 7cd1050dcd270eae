//! A triage over several clusters (`--context a,b`, `--all-contexts`):
//! one ranked table with a CONTEXT column, the same cause in several
//! clusters once with its count, a cluster that cannot be read as a gap
//! (never healthy), and printed commands that name the context. The live
//! ring reads two real control planes (tests/live/contexts.rs); here the
//! views are fed judged fixtures, and the binary clusters that do not answer.

use std::net::TcpListener;

use mdiag_core::analysis::triage::{self, Triage};
use mdiag_core::catalogue::Lang;
use mdiag_core::model::{Gap, OriginKind};
use mdiag_render::Style;
use mdiag_render::report::RunInfo;
use mdiag_render::triage::{
    ClusterInfo, clusters_report, report_with_gaps, streamed_clusters_report, streamed_report,
    table,
};

use crate::common::{clock, load, mdiag};

/// The triage of a demo fixture as if read live in `context`.
fn judged_in(fixture: &str, context: &str) -> (Triage, mdiag_core::model::Snapshot) {
    let mut snapshot = load(fixture);
    let now = clock(&snapshot).now;
    snapshot.origin.kind = OriginKind::Live;
    snapshot.origin.named_context = Some(context.to_string());
    let t = triage::triage(&snapshot, None, None, None, now);
    (t, snapshot)
}

fn fleet(parts: Vec<Triage>, contexts: &[&str]) -> Triage {
    let mut all = Triage::default();
    for t in parts {
        all.append(t);
    }
    all.contexts = contexts.iter().map(|c| c.to_string()).collect();
    all.rank();
    all
}

fn style(now: jiff::Timestamp) -> Style {
    Style {
        width: 120,
        ..Style::plain(Lang::En, now)
    }
}

#[test]
fn the_same_cause_in_two_clusters_is_one_row_naming_both_with_its_count() {
    let (eu, snapshot) = judged_in("crash-loop", "prod-eu");
    let (us, _) = judged_in("crash-loop", "prod-us");
    let now = clock(&snapshot).now;
    let t = fleet(vec![eu, us], &["prod-eu", "prod-us"]);
    let out = table(&t, &[], false, &style(now));
    let chart_demo = t.items.iter().filter(|d| d.target.name == "chart-demo");
    assert_eq!(chart_demo.count(), 2, "one diagnosis per cluster");
    let lines: Vec<&str> = out.lines().collect();
    // Counted per cluster: the row below stands for two diagnoses.
    assert!(
        lines[0].starts_with("4 workloads in 2 contexts: 2 with errors, 2 healthy"),
        "{out}"
    );
    assert!(lines[1].starts_with("CONTEXT"), "{out}");
    let rows: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("msvc/chart-demo"))
        .collect();
    assert_eq!(rows.len(), 1, "{out}");
    assert!(rows[0].starts_with("prod-eu,prod-us  "), "{out}");
    assert!(rows[0].contains("✘ crash-loop ×2"), "{out}");
    // The next command reads the cluster of the row it names.
    let next = lines.iter().find(|l| l.starts_with("next:")).unwrap();
    assert!(next.ends_with("--context prod-eu"), "{out}");
    // The row's own next command (its verdict.next, in the JSON and in
    // `trace`) reads the same cluster.
    let lead = t
        .items
        .iter()
        .find(|d| d.target.name == "chart-demo" && d.target.context.as_deref() == Some("prod-eu"))
        .unwrap();
    let own = lead.verdict.next.as_ref().unwrap();
    assert_eq!(
        &own.argv()[..3],
        ["kubectl", "--context", "prod-eu"],
        "{own}"
    );
    // In Chinese, mdiag's own words are Chinese: the column, the count.
    let zh = table(
        &t,
        &[],
        false,
        &Style {
            lang: Lang::Zh,
            ..style(now)
        },
    );
    assert!(zh.starts_with("2 个上下文中的 4 个工作负载"), "{zh}");
    assert!(zh.lines().nth(1).unwrap().starts_with("上下文"), "{zh}");
    assert!(!zh.contains("contexts") && !zh.contains("CONTEXT"), "{zh}");
}

#[test]
fn different_causes_are_rows_of_their_own_and_checks_name_their_context() {
    let (eu, snapshot) = judged_in("crash-loop", "prod-eu");
    let (us, _) = judged_in("image-pull-not-found", "prod-us");
    let now = clock(&snapshot).now;
    let t = fleet(vec![eu, us], &["prod-eu", "prod-us"]);
    let out = table(&t, &[], false, &style(now));
    let row = |context: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{context}  ")))
            .unwrap_or_else(|| panic!("no row of {context}:\n{out}"))
            .to_string()
    };
    assert!(row("prod-eu").contains("crash-loop"), "{out}");
    assert!(row("prod-us").contains("image-pull"), "{out}");
    assert!(!out.contains('×'), "{out}");
    // Every kubectl check of a finding names the cluster it was seen in,
    // right after the program (before any `--` of an exec).
    for d in t.items.iter().filter(|d| d.lead().is_some()) {
        let context = d.target.context.as_deref().unwrap();
        let checks = d.lead().unwrap().vars.clone();
        let command = mdiag_core::catalogue::fill(
            "kubectl -n {namespace} get pods",
            &checks.into_iter().collect(),
        );
        assert_eq!(&command.argv()[..3], ["kubectl", "--context", context]);
    }
}

#[test]
fn a_cluster_not_read_is_a_gap_and_never_all_healthy() {
    let (eu, snapshot) = judged_in("healthy", "prod-eu");
    let now = clock(&snapshot).now;
    let t = fleet(vec![eu], &["prod-eu", "prod-us"]);
    let gaps = [Gap::cluster_unread(
        "prod-us",
        "cannot reach the cluster at https://10.0.0.9:6443/".into(),
    )];
    let out = table(&t, &gaps, false, &style(now));
    assert!(
        out.starts_with("2 workloads in 1 of 2 contexts: 2 healthy\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "nothing could be read from context prod-us: cannot reach the cluster at https://10.0.0.9:6443/"
        ),
        "{out}"
    );
    // And the JSON says which cluster was read, and which not.
    let (_, snap) = judged_in("healthy", "prod-eu");
    let run = RunInfo {
        origin: &snap.origin,
        clock: clock(&snap),
        requests: Some(12),
    };
    let unread = mdiag_core::model::Origin::default();
    let clusters = [
        ClusterInfo {
            context: "prod-eu",
            run: RunInfo {
                origin: &snap.origin,
                clock: clock(&snap),
                requests: Some(12),
            },
            unread: None,
        },
        ClusterInfo {
            context: "prod-us",
            run: RunInfo {
                origin: &unread,
                clock: clock(&snap),
                requests: None,
            },
            unread: Some("cannot reach the cluster"),
        },
    ];
    let report = clusters_report(&t, &gaps, &run, &clusters, Lang::En);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["items"][0]["target"]["context"], "prod-eu");
    assert_eq!(json["items"][0]["source"]["requests"], 12);
    assert_eq!(json["contexts"][0]["read"], true);
    assert_eq!(json["contexts"][0]["workloads"], 2);
    assert_eq!(json["contexts"][1]["read"], false);
    assert_eq!(json["contexts"][1]["reason"], "cannot reach the cluster");
    assert_eq!(json["gaps"][0]["resource"], "*");
    assert_eq!(json["gaps"][0]["contexts"][0], "prod-us");
}

/// `triage -o json|yaml` writes its items as it makes them; HTML and
/// `mdiag mcp` build them first: both are the same bytes, for one cluster
/// and for several (each item's source its own cluster's).
#[test]
fn the_report_written_item_by_item_is_the_report_built() {
    let (eu, snap_eu) = judged_in("crash-loop", "prod-eu");
    let (us, snap_us) = judged_in("image-pull-not-found", "prod-us");
    let encodings = [mdiag_render::Encoding::Json, mdiag_render::Encoding::Yaml];
    let gaps: Vec<Gap> = Vec::new();
    let one = run_of(&snap_eu, 7);
    for encoding in encodings {
        let built = report_with_gaps(&eu, &gaps, &one, Lang::Zh);
        let streamed = streamed_report(&eu, &gaps, &one, Lang::Zh);
        let built = mdiag_render::encode(&built, encoding).unwrap();
        assert!(built.contains("crash-loop"), "{built}");
        assert_eq!(mdiag_render::encode(&streamed, encoding).unwrap(), built);
    }
    let t = fleet(vec![eu, us], &["prod-eu", "prod-us"]);
    let clusters = [
        ClusterInfo {
            context: "prod-eu",
            run: run_of(&snap_eu, 12),
            unread: None,
        },
        ClusterInfo {
            context: "prod-us",
            run: run_of(&snap_us, 30),
            unread: None,
        },
    ];
    let whole = run_of(&snap_eu, 42);
    for encoding in encodings {
        let built = clusters_report(&t, &gaps, &whole, &clusters, Lang::En);
        let streamed = streamed_clusters_report(&t, &gaps, &whole, &clusters, Lang::En);
        let built = mdiag_render::encode(&built, encoding).unwrap();
        assert_eq!(mdiag_render::encode(&streamed, encoding).unwrap(), built);
    }
    // Each item's source is its own cluster's, streamed as built.
    let streamed = streamed_clusters_report(&t, &gaps, &whole, &clusters, Lang::En);
    let json = serde_json::to_value(&streamed).unwrap();
    let requests: Vec<_> = json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["target"]["context"].clone(),
                i["source"]["requests"].clone(),
            )
        })
        .collect();
    assert!(
        requests.contains(&("prod-eu".into(), 12.into())),
        "{requests:?}"
    );
    assert!(
        requests.contains(&("prod-us".into(), 30.into())),
        "{requests:?}"
    );
}

fn run_of(snap: &mdiag_core::model::Snapshot, requests: u32) -> RunInfo<'_> {
    RunInfo {
        origin: &snap.origin,
        clock: clock(snap),
        requests: Some(requests),
    }
}

/// A kubeconfig of two contexts whose servers do not answer: one refuses
/// (nothing listens on its port), the other is a closed port too.
fn two_dead_clusters(dir: &std::path::Path) -> (std::path::PathBuf, u16, u16) {
    let free = || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (eu, us) = (free(), free());
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\n\
             clusters:\n\
             - name: eu\n  cluster: {{server: \"https://127.0.0.1:{eu}\", insecure-skip-tls-verify: true}}\n\
             - name: us-cluster\n  cluster: {{server: \"https://127.0.0.1:{us}\", insecure-skip-tls-verify: true}}\n\
             users:\n- name: u\n  user: {{token: t}}\n\
             contexts:\n\
             - name: prod-eu\n  context: {{cluster: eu, user: u}}\n\
             - name: prod-us\n  context: {{cluster: us-cluster, user: u}}\n\
             current-context: prod-eu\n"
        ),
    )
    .unwrap();
    (path, eu, us)
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = mdiag()
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn clusters_that_cannot_be_reached_are_gaps_and_exit_4() {
    let dir = tempfile::tempdir().unwrap();
    let (kubeconfig, eu, us) = two_dead_clusters(dir.path());
    let kc = kubeconfig.to_str().unwrap();
    for how in [vec!["--context", "prod-eu,prod-us"], vec!["--all-contexts"]] {
        let mut args = vec![
            "triage",
            "-A",
            "--kubeconfig",
            kc,
            "--request-timeout",
            "5s",
            "--width",
            "400",
        ];
        args.extend(how.iter().copied());
        let (code, out, err) = run(&args);
        assert_eq!(code, Some(4), "{args:?}\n{out}{err}");
        assert!(out.starts_with("no workloads in 0 of 2 contexts"), "{out}");
        assert!(
            out.contains(&format!(
                "nothing could be read from context prod-eu: cannot reach the cluster at https://127.0.0.1:{eu}/"
            )),
            "{out}"
        );
        assert!(out.contains("from context prod-us"), "{out}");
        assert!(out.contains(&format!("127.0.0.1:{us}")), "{out}");
        args.extend(["-o", "json"]);
        let (code, out, _) = run(&args);
        assert_eq!(code, Some(4));
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let read: Vec<(&str, bool)> = json["contexts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["context"].as_str().unwrap(), c["read"].as_bool().unwrap()))
            .collect();
        assert_eq!(read, [("prod-eu", false), ("prod-us", false)]);
        assert_eq!(json["gaps"].as_array().unwrap().len(), 2);
        // What a cluster said goes through the redactor in every field.
        args.extend(["--redact", "127[.]0[.]0[.]1"]);
        let (_, out, _) = run(&args);
        assert!(!out.contains("127.0.0.1"), "{out}");
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(
            json["contexts"][0]["reason"]
                .as_str()
                .unwrap()
                .contains("cannot reach")
        );
    }
}

#[test]
fn context_lists_that_cannot_be_read_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (kubeconfig, ..) = two_dead_clusters(dir.path());
    let kc = kubeconfig.to_str().unwrap();
    let file = "fixtures/demo/crash-loop.yaml";
    for (args, said) in [
        (
            vec![
                "triage",
                "-A",
                "--kubeconfig",
                kc,
                "--context",
                "prod-eu,prod-ap",
            ],
            "has no context named \"prod-ap\" (it has \"prod-eu\", \"prod-us\")",
        ),
        (
            vec!["triage", "-A", "--kubeconfig", kc, "--context", "prod-eu,"],
            "--context names an empty context",
        ),
        (
            vec![
                "triage",
                "-A",
                "--kubeconfig",
                kc,
                "--context",
                "prod-eu",
                "--all-contexts",
            ],
            "use --context NAMES or --all-contexts, not both",
        ),
        (
            vec![
                "triage",
                "-A",
                "--context",
                "prod-eu,prod-us",
                "--snapshot",
                file,
            ],
            "a snapshot file is one read already",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}\n{out}{err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
    }
}

#[test]
fn an_alerts_cluster_label_picks_its_context() {
    let dir = tempfile::tempdir().unwrap();
    let (kubeconfig, eu, us) = two_dead_clusters(dir.path());
    let kc = kubeconfig.to_str().unwrap();
    let alert = |labels: &str| {
        let path = dir.path().join("alert.json");
        std::fs::write(&path, format!("{{\"labels\":{{{labels}}}}}")).unwrap();
        path.display().to_string()
    };
    // By the cluster entry's name (`us-cluster` is prod-us's cluster): the
    // read goes to prod-us's server, not the current context's.
    let a =
        alert(r#""alertname":"Down","namespace":"shop","deployment":"web","cluster":"us-cluster""#);
    let base = [
        "triage",
        "--kubeconfig",
        kc,
        "--request-timeout",
        "5s",
        "--alert",
        &a,
    ];
    let mut args = base.to_vec();
    args.extend(["--context", "prod-eu,prod-us"]);
    let (code, _, err) = run(&args);
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{us}")), "{err}");
    assert!(!err.contains(&format!("127.0.0.1:{eu}")), "{err}");
    // No --context at all: the label still picks the context it names.
    let (code, _, err) = run(&base);
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{us}")), "{err}");
    // Several contexts and no cluster label: which one is not guessed.
    let a = alert(r#""alertname":"Down","namespace":"shop","deployment":"web""#);
    let (code, _, err) = run(&[
        "triage",
        "--kubeconfig",
        kc,
        "--alert",
        &a,
        "--context",
        "prod-eu,prod-us",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("no cluster label, and several contexts are named"),
        "{err}"
    );
}
