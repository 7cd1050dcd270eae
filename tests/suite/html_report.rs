//! The HTML report (`trace -o html`, `triage -o html`, `gate --html`)
//! without a browser: the binary on every demo writes one page whose text
//! holds what `-o json` says (the headline, every finding id, every gap),
//! that refers to nothing outside itself, and in which every string from
//! the cluster is inert text. tests/html_browser.rs loads the same pages
//! in headless Chromium.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{NAMESPACE, mdiag, scenarios};
use mdiag_core::analysis::gate::{self, GatePolicy, Outcome};
use mdiag_core::analysis::{self};
use mdiag_core::catalogue::Lang;
use mdiag_core::chain::walk;
use mdiag_core::model::{Clock, ClockSource, Origin, OriginKind, TargetSpec};
use mdiag_render::gate::{GateDetails, GateReport, ReportCheck};
use mdiag_render::report::{ReportTarget, RunInfo, trace_report};
use serde_json::Value;

fn run(args: &[&str]) -> (String, i32) {
    let out = mdiag().args(args).output().unwrap();
    assert!(
        out.stderr.is_empty() || out.status.code() != Some(2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

fn json(args: &[&str]) -> Value {
    let mut with = args.to_vec();
    with.extend(["-o", "json"]);
    serde_json::from_str(&run(&with).0).unwrap()
}

/// The page's text as a reader sees it: tags removed, the escapes undone.
fn visible_text(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut in_tag = false;
    for c in page.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// What a page may not hold: anything fetched from elsewhere.
fn assert_self_contained(page: &str, what: &str) {
    let lower = page.to_lowercase();
    for bad in [
        "src=\"http",
        "src=\"//",
        "href=\"http",
        "href=\"//",
        "src='http",
        "href='http",
        "url(",
        "@import",
        "rel=\"stylesheet\"",
        "<link",
        "<iframe",
        "<object",
        "<embed",
        "<img",
    ] {
        assert!(!lower.contains(bad), "{what}: the page holds {bad:?}");
    }
    // Only our own script, once, and a policy that forbids fetching.
    assert_eq!(lower.matches("<script").count(), 1, "{what}: one script");
    assert!(
        page.contains("default-src 'none'"),
        "{what}: no Content-Security-Policy"
    );
    // Every href is a link inside the page.
    for (i, _) in lower.match_indices("href=\"") {
        let rest = &page[i + 6..];
        assert!(
            rest.starts_with('#'),
            "{what}: href {}",
            &rest[..40.min(rest.len())]
        );
    }
}

/// The headline as the page shows it: the state's word, then the sentence.
fn assert_headline(text: &str, summary: &str, what: &str) {
    let (word, sentence) = summary.split_once("  ").unwrap();
    let shown = format!("{word} {sentence}");
    assert!(
        text.contains(&shown),
        "{what}: the headline {shown:?} is not in the page"
    );
}

/// A gap as the page words it, in English.
fn gap_words(g: &Value) -> Vec<String> {
    let mut words = vec![
        format!(
            "{} {}",
            g["verb"].as_str().unwrap(),
            g["resource"].as_str().unwrap()
        ),
        g["reason"].as_str().unwrap().to_string(),
    ];
    if let Some(c) = g["complete_with"].as_str() {
        words.push(c.to_string());
    }
    words
}

#[test]
fn every_demo_trace_page_holds_the_json_reports_facts() {
    let demos = scenarios();
    assert!(demos.len() >= 10, "{demos:?}");
    for demo in &demos {
        let file = format!("fixtures/demo/{demo}.yaml");
        let args = ["trace", "chart-demo", "--snapshot", file.as_str()];
        let report = json(&args);
        let (page, code) = run(&[&args[..], &["-o", "html"]].concat());
        // Same exit code as the other views.
        let (_, json_code) = run(&[&args[..], &["-o", "json"]].concat());
        assert_eq!(code, json_code, "{demo}");
        assert!(page.starts_with("<!DOCTYPE html>"), "{demo}");
        assert!(page.contains("<html lang=\"en\">"), "{demo}");
        assert_self_contained(&page, demo);
        let text = visible_text(&page);
        assert_headline(&text, report["verdict"]["summary"].as_str().unwrap(), demo);
        let state = report["verdict"]["state"].as_str().unwrap();
        assert!(
            page.contains(&format!("class=\"headline state-{state}\"")),
            "{demo}: the headline is not coloured as {state}"
        );
        if let Some(next) = report["verdict"]["next"].as_str() {
            assert!(text.contains(next), "{demo}: next command {next}");
        }
        let findings = report["findings"].as_array().unwrap();
        for f in findings {
            let id = f["id"].as_str().unwrap();
            assert!(
                page.contains(&format!("data-finding=\"{id}\"")),
                "{demo}: no finding {id}"
            );
            assert!(text.contains(f["title"].as_str().unwrap()), "{demo}: {id}");
            assert!(text.contains(f["detail"].as_str().unwrap()), "{demo}: {id}");
            for c in f["check"].as_array().unwrap() {
                assert!(text.contains(c.as_str().unwrap()), "{demo}: {id} check");
            }
            assert!(text.contains(f["fix"].as_str().unwrap()), "{demo}: {id}");
            for e in f["evidence"].as_array().unwrap() {
                for line in e["log"]["lines"].as_array().into_iter().flatten() {
                    assert!(text.contains(line.as_str().unwrap()), "{demo}: log line");
                }
            }
        }
        // One copy button per command.
        let commands = findings
            .iter()
            .map(|f| f["check"].as_array().unwrap().len())
            .sum::<usize>()
            + usize::from(report["verdict"]["next"].is_string())
            + report["gaps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|g| g["complete_with"].is_string())
                .count();
        assert_eq!(
            page.matches("<button class=\"copy\"").count(),
            commands,
            "{demo}"
        );
        for g in report["gaps"].as_array().unwrap() {
            for w in gap_words(g) {
                assert!(text.contains(&w), "{demo}: gap {w:?} is not in the page");
            }
        }
        // Every Pod is in the tree and, with a moment, in the chart.
        for p in report["pods"].as_array().unwrap() {
            let name = p["name"].as_str().unwrap();
            assert!(text.contains(name), "{demo}: Pod {name}");
        }
        // The waterfall has a bar per timed step, the moments a dot per time.
        let timed = report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["at"].is_string())
            .count();
        assert_eq!(page.matches("<rect class=\"bar").count(), timed, "{demo}");
        let moments: usize = report["pods"]
            .as_array()
            .unwrap()
            .iter()
            .take(40)
            .map(|p| {
                ["stored", "bound", "started", "ready"]
                    .iter()
                    .filter(|m| p["moments"][**m].is_string())
                    .count()
            })
            .sum();
        // Four more dots: the legend.
        let legend = if moments > 0 { 4 } else { 0 };
        assert_eq!(
            page.matches("<circle class=\"moment").count(),
            moments + legend,
            "{demo}"
        );
    }
}

#[test]
fn the_chinese_page_is_marked_chinese_and_uses_the_catalogues_words() {
    let args = [
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/crash-loop.yaml",
        "--lang",
        "zh",
    ];
    let report = json(&args);
    let (page, _) = run(&[&args[..], &["-o", "html"]].concat());
    assert!(page.contains("<html lang=\"zh-CN\">"));
    let text = visible_text(&page);
    assert_headline(&text, report["verdict"]["summary"].as_str().unwrap(), "zh");
    for zh in ["对象链", "时间线", "发现", "证据", "修复", "验证", "复制"] {
        assert!(text.contains(zh), "{zh} is not in the Chinese page");
    }
    assert!(!text.contains("Findings"), "an English heading in zh");
}

#[test]
fn triage_page_ranks_the_workloads_and_links_to_each() {
    let args = [
        "triage",
        "-n",
        NAMESPACE,
        "--snapshot",
        "fixtures/demo/oom-killed.yaml",
    ];
    let report = json(&args);
    let (page, code) = run(&[&args[..], &["-o", "html"]].concat());
    let (_, json_code) = run(&[&args[..], &["-o", "json"]].concat());
    assert_eq!(code, json_code);
    assert_self_contained(&page, "triage");
    let text = visible_text(&page);
    let items = report["items"].as_array().unwrap();
    assert!(!items.is_empty());
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        assert!(page.contains(&format!("href=\"#w{n}\"")), "link {n}");
        assert!(page.contains(&format!("id=\"w{n}\"")), "section {n}");
        assert_headline(
            &text,
            item["verdict"]["summary"].as_str().unwrap(),
            "triage",
        );
        for f in item["findings"].as_array().unwrap() {
            let id = f["id"].as_str().unwrap();
            assert!(page.contains(&format!("data-finding=\"{id}\"")), "{id}");
        }
    }
    // Ranked as JSON ranks them: the section order is the items' order.
    let mut at = 0;
    for item in items {
        let name = item["target"]["name"].as_str().unwrap();
        let heading = format!("{NAMESPACE}/{name}</h2>");
        let found = page[at..]
            .find(&heading)
            .expect("a section per item, in order");
        at += found + heading.len();
    }
    for o in report["outside"].as_array().unwrap() {
        assert!(text.contains(o["name"].as_str().unwrap()));
    }
    for g in report["gaps"].as_array().unwrap() {
        for w in gap_words(g) {
            assert!(text.contains(&w), "triage gap {w:?}");
        }
    }
}

#[test]
fn triage_alert_page_lists_the_alerts_and_traces_each_workload() {
    let args = [
        "triage",
        "--alert",
        "fixtures/alerts/several.json",
        "--snapshot",
        "fixtures/demo/crash-loop.yaml",
    ];
    let report = json(&args);
    let (page, code) = run(&[&args[..], &["-o", "html"]].concat());
    let (_, json_code) = run(&[&args[..], &["-o", "json"]].concat());
    assert_eq!(code, json_code);
    assert_self_contained(&page, "alert");
    let text = visible_text(&page);
    let alerts = report["alerts"].as_array().unwrap();
    assert!(alerts.len() > 1, "{alerts:?}");
    for a in alerts {
        let name = a["alertname"].as_str().unwrap();
        assert!(page.contains(&format!("data-alert=\"{name}\"")), "{name}");
        if let Some(note) = a["note"].as_str() {
            assert!(text.contains(note), "{name}: {note}");
        }
        if let Some(i) = a["item"].as_u64() {
            assert!(page.contains(&format!("href=\"#w{}\"", i + 1)), "{name}");
        }
    }
    let items = report["items"].as_array().unwrap();
    assert!(!items.is_empty());
    for (i, item) in items.iter().enumerate() {
        assert!(page.contains(&format!("id=\"w{}\"", i + 1)));
        assert_headline(&text, item["verdict"]["summary"].as_str().unwrap(), "alert");
        for f in item["findings"].as_array().unwrap() {
            let id = f["id"].as_str().unwrap();
            assert!(page.contains(&format!("data-finding=\"{id}\"")), "{id}");
        }
    }
}

/// The crash-loop snapshot with a hostile Pod name and log line: markup in
/// them must stay text.
fn hostile_snapshot(dir: &Path) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text =
        std::fs::read_to_string(root.join("fixtures/demo/snapshot-crash-loop.yaml")).unwrap();
    let pod = "chart-demo-ntmp458kfb-pvgk2";
    assert!(text.contains(pod), "the fixture's Pod is renamed");
    let log = "FATAL missing env MODEL_PATH";
    assert!(text.contains(log), "the fixture's log line is replaced");
    let text = text
        .replace(pod, "pvgk2<script>document.title=document.URL</script>")
        .replace(
            log,
            "<img src=x onerror=\"document.title='pwned'\"><b>bold</b> & </pre></code>",
        );
    let path = dir.join("hostile.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn markup_from_the_cluster_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_snapshot(dir.path());
    let file = file.to_str().unwrap();
    let report = json(&["trace", "chart-demo", "--snapshot", file]);
    let dump = serde_json::to_string(&report).unwrap();
    assert!(dump.contains("<script>"), "the name reached the report");
    assert!(
        dump.contains("<img src=x"),
        "the log line reached the report"
    );
    let (page, _) = run(&["trace", "chart-demo", "--snapshot", file, "-o", "html"]);
    assert_eq!(page.matches("<script").count(), 1, "only our own script");
    assert!(!page.contains("<img"));
    assert!(!page.contains("<b>bold"));
    assert!(page.contains("pvgk2&lt;script&gt;document.title=document.URL&lt;/script&gt;"));
    assert!(page.contains("&lt;img src=x onerror=&quot;document.title='pwned'&quot;&gt;"));
    assert!(page.contains("&lt;/pre&gt;&lt;/code&gt;"));
    assert!(page.contains("&amp; "));
    // Nothing leaves the elements it was put in: the page still holds
    // every finding and ends where it should.
    assert!(page.trim_end().ends_with("</html>"));
    let text = visible_text(&page);
    assert!(text.contains("pvgk2<script>document.title=document.URL</script>"));
}

/// One small page, whole, as people review a change to it.
#[test]
fn service_missing_page_snapshot() {
    let (page, _) = run(&[
        "trace",
        "chart-demo",
        "--snapshot",
        "fixtures/demo/service-missing.yaml",
        "-o",
        "html",
    ]);
    // The style sheet and script are the same on every page; the body is
    // what changes. One tag per line, to read the diff.
    let start = page.find("<main>").unwrap();
    let end = page.find("</footer>").unwrap() + "</footer>".len();
    let body = page[start..end].replace("><", ">\n<");
    insta::with_settings!({
        snapshot_path => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/snapshots/html_report"),
        prepend_module_to_snapshot => false,
        description => "trace chart-demo --snapshot fixtures/demo/service-missing.yaml -o html: <main> and <footer>",
        omit_expression => true,
    }, {
        insta::assert_snapshot!("service-missing.en", body);
    });
}

/// `gate --html` writes the gate report's page: the gate only runs live,
/// so this is its render function fed a demo moment as the loop judges it.
#[test]
fn gate_page_shows_the_outcome_checks_and_trace() {
    for (fixture, outcome, word) in [
        ("crash-loop", Outcome::Failed, "FAILED"),
        ("healthy", Outcome::Converged, "CONVERGED"),
        ("rollout-in-progress", Outcome::TimedOut, "TIMED OUT"),
    ] {
        let snapshot = common::load(fixture);
        let target = TargetSpec::parse("chart-demo", None).unwrap();
        let chain = walk(&snapshot, &target, NAMESPACE, None).unwrap();
        let now = common::clock(&snapshot).now;
        let d = analysis::analyze(&snapshot, &chain, now);
        let crashes = mdiag_core::analysis::crashes::CrashHistory::default();
        let decision = gate::decide(
            gate::Observation {
                snapshot: &snapshot,
                chain: &chain,
                diagnosis: &d,
                crashes: &crashes,
            },
            &GatePolicy::default(),
            None,
        );
        let details = GateDetails {
            timeout_seconds: 600.0,
            fail_on: vec![],
            max_restarts: 3,
            decided_by: gate::decided_by(outcome, Some(&decision), Some(&d)),
            waiting_for: None,
            waiting: None,
            reason: None,
            said_reason: None,
            checks: decision.view.checks.iter().map(ReportCheck::from).collect(),
            relists: 0,
            disconnects: 0,
            helm: None,
            evidence_file: Some("evidence.yaml.gz".into()),
        };
        let origin = Origin {
            kind: OriginKind::Live,
            location: "https://127.0.0.1:6443".into(),
            ..Origin::default()
        };
        let run = RunInfo {
            origin: &origin,
            clock: Clock {
                now,
                source: ClockSource::Live,
            },
            requests: None,
        };
        let trace = trace_report(&d, &run, Lang::En);
        let summary = trace.verdict.summary.clone();
        let ids: Vec<String> = trace.findings.iter().map(|f| f.id.clone()).collect();
        let target = ReportTarget {
            kind: "ModelService".into(),
            namespace: NAMESPACE.into(),
            name: "chart-demo".into(),
            uid: String::new(),
            context: None,
        };
        let report = GateReport::new(
            Some(trace),
            target,
            outcome,
            Duration::from_secs(83),
            details,
        );
        let page = mdiag_render::html::gate(&report, Lang::En);
        assert_self_contained(&page, fixture);
        let text = visible_text(&page);
        assert!(
            page.contains(&format!("data-outcome=\"{}\"", outcome.as_str())),
            "{fixture}"
        );
        assert!(text.contains(word), "{fixture}: {word}");
        assert!(text.contains("after 1m23s"), "{fixture}");
        assert_headline(&text, &summary, fixture);
        for c in &report.gate.checks {
            assert!(text.contains(&c.detail), "{fixture}: check {}", c.name);
        }
        for id in ids {
            assert!(
                page.contains(&format!("data-finding=\"{id}\"")),
                "{fixture}: {id}"
            );
        }
        assert!(text.contains("evidence.yaml.gz"));
        // In Chinese, the outcome and the checks are worded from the catalogue.
        let zh = visible_text(&mdiag_render::html::gate(&report, Lang::Zh));
        let word_id = match outcome {
            Outcome::Failed => "html.outcome_failed",
            Outcome::Converged => "html.outcome_converged",
            _ => "html.outcome_timed_out",
        };
        let word = mdiag_core::catalogue::Message::new(word_id).render(Lang::Zh);
        assert!(zh.contains(&word), "{fixture}: {word}");
        for c in &report.gate.checks {
            let said = c.said_detail.as_ref().unwrap().render(Lang::Zh);
            assert!(zh.contains(&said), "{fixture}: zh check {said}");
        }
    }
    // Without a view (the API never answered): the outcome and the reason.
    let report = GateReport::new(
        None,
        ReportTarget {
            kind: "ModelService".into(),
            namespace: NAMESPACE.into(),
            name: "chart-demo".into(),
            uid: String::new(),
            context: None,
        },
        Outcome::CouldNotDecide,
        Duration::from_millis(3200),
        GateDetails {
            timeout_seconds: 600.0,
            fail_on: vec![],
            max_restarts: 3,
            decided_by: None,
            waiting_for: None,
            waiting: None,
            reason: Some("cannot reach the API server <at> https://127.0.0.1:1".into()),
            said_reason: None,
            checks: vec![],
            relists: 0,
            disconnects: 0,
            helm: None,
            evidence_file: None,
        },
    );
    let page = mdiag_render::html::gate(&report, Lang::En);
    assert_self_contained(&page, "could-not-decide");
    let text = visible_text(&page);
    assert!(text.contains("COULD NOT DECIDE"));
    assert!(text.contains("cannot reach the API server <at> https://127.0.0.1:1"));
    assert!(text.contains("modeldock-lab/chart-demo"));
}
