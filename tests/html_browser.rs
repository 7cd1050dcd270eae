//! The HTML report in a real browser: headless Chromium (the Debian
//! package `chromium`, which `.ci/run` installs) loads each demo's page from
//! a file:// URL; the test reads the DOM Chromium rendered (`--dump-dom`)
//! and the console messages it logged on stderr.
//!
//! Console capture: with `--enable-logging=stderr --v=0` Chromium writes
//! every console message of the page, uncaught exceptions and
//! Content-Security-Policy refusals included, as a line holding `:CONSOLE`
//! on stderr. Our page logs nothing, so any such line fails the test; the
//! first trial loads a page that throws and logs to prove the capture
//! sees both. This needs no extra crate (a DevTools-protocol client such
//! as chromiumoxide would add a large async dependency tree for the same
//! two facts).
//!
//! Plain `cargo test` lists these trials as ignored (a browser is not
//! assumed); `cargo xtask test` sets MDIAG_LIVE=1 and runs them, and then a
//! missing Chromium is a failure, not a skip. By hand:
//! `MDIAG_LIVE=1 cargo test --test html_browser`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;

const LIVE_ENV: &str = "MDIAG_LIVE";
/// The longest a page may take to load and dump.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn demos() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("fixtures/demo"))
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".yaml")?;
            (stem != "expected").then(|| stem.to_string())
        })
        .collect();
    names.sort();
    names
}

fn chromium() -> Result<PathBuf, Failed> {
    for candidate in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(out) = Command::new("which").arg(candidate).output()
            && out.status.success()
        {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            return Ok(PathBuf::from(path));
        }
    }
    Err("no chromium on PATH: install the Debian package (apt-get install chromium), as .ci/run does".into())
}

/// What Chromium made of a page: the serialized DOM and the console lines.
struct Loaded {
    dom: String,
    console: Vec<String>,
}

fn load(page: &Path) -> Result<Loaded, Failed> {
    let browser = chromium()?;
    let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
    let url = format!(
        "file://{}",
        page.canonicalize().map_err(|e| e.to_string())?.display()
    );
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start chromium: {e}"))?;
    // Read both pipes while waiting, so neither fills up.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).map(|_| s)
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).map(|_| s)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("chromium did not finish {url} in {BROWSER_TIMEOUT:?}").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let dom = out.join().unwrap().map_err(|e| e.to_string())?;
    let log = err.join().unwrap().map_err(|e| e.to_string())?;
    if !status.success() || dom.is_empty() {
        return Err(format!("chromium failed on {url} ({status}):\n{log}").into());
    }
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    Ok(Loaded { dom, console })
}

fn mdiag(args: &[&str]) -> Result<String, Failed> {
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .current_dir(repo())
        .env_remove("KUBECONFIG")
        .env("LANG", "C")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if matches!(out.status.code(), Some(2) | None) {
        return Err(format!(
            "mdiag {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string().into())
}

/// Text as the DOM serializer writes it inside an element.
fn as_dom_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\u{a0}', "&nbsp;")
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(what().into()) }
}

/// The page rendered with no console message, its script ran (the
/// policy let it), and its DOM holds the headline, every finding id and
/// every gap of the JSON report.
fn check_page(page: &Path, report: &Value, items: &[&Value]) -> Result<Loaded, Failed> {
    let loaded = load(page)?;
    check(loaded.console.is_empty(), || {
        format!("console messages:\n{}", loaded.console.join("\n"))
    })?;
    let dom = &loaded.dom;
    check(dom.contains("data-js=\"ready\""), || {
        "the page's script did not run (a Content-Security-Policy hash out of date?)".into()
    })?;
    for item in items {
        let summary = item["verdict"]["summary"].as_str().unwrap();
        let (word, sentence) = summary.split_once("  ").unwrap();
        for part in [word, sentence] {
            check(dom.contains(&as_dom_text(part)), || {
                format!("the headline part {part:?} is not in the DOM")
            })?;
        }
        for f in item["findings"].as_array().unwrap() {
            let id = f["id"].as_str().unwrap();
            check(dom.contains(&format!("data-finding=\"{id}\"")), || {
                format!("finding {id} is not in the DOM")
            })?;
        }
        for g in item["gaps"].as_array().unwrap() {
            let reason = g["reason"].as_str().unwrap();
            check(dom.contains(&as_dom_text(reason)), || {
                format!("gap {reason:?} is not in the DOM")
            })?;
        }
    }
    for g in report["gaps"].as_array().into_iter().flatten() {
        let resource = g["resource"].as_str().unwrap();
        check(
            dom.contains(&format!(
                "data-gap=\"{} {resource}\"",
                g["verb"].as_str().unwrap()
            )),
            || format!("gap {resource} is not in the DOM"),
        )?;
    }
    check(dom.contains("<svg"), || "no chart in the DOM".into())?;
    Ok(loaded)
}

fn trace_trial(demo: String) -> Trial {
    Trial::test(format!("trace_page_renders::{demo}"), move || {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let file = format!("fixtures/demo/{demo}.yaml");
        let args = ["trace", "chart-demo", "--snapshot", file.as_str()];
        let report: Value = serde_json::from_str(&mdiag(&[&args[..], &["-o", "json"]].concat())?)
            .map_err(|e| e.to_string())?;
        let page = dir.path().join(format!("{demo}.html"));
        std::fs::write(&page, mdiag(&[&args[..], &["-o", "html"]].concat())?)
            .map_err(|e| e.to_string())?;
        check_page(&page, &Value::Null, &[&report])?;
        Ok(())
    })
}

fn main() -> ExitCode {
    let mut args = Arguments::from_args();
    let mut trials = vec![
        Trial::test("console_capture_sees_errors", || {
            // The capture itself: a page that logs and throws must be seen.
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let page = dir.path().join("bad.html");
            std::fs::write(
                &page,
                "<!DOCTYPE html><html><body><p>x</p><script>console.error('logged-on-purpose'); \
                 undefinedOnPurpose();</script></body></html>",
            )
            .map_err(|e| e.to_string())?;
            let loaded = load(&page)?;
            let all = loaded.console.join("\n");
            check(all.contains("logged-on-purpose"), || {
                format!("console.error not captured: {all:?}")
            })?;
            check(all.contains("undefinedOnPurpose"), || {
                format!("an uncaught error not captured: {all:?}")
            })?;
            Ok(())
        }),
        Trial::test("triage_page_renders", || {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let args = [
                "triage",
                "-n",
                "modeldock-lab",
                "--all",
                "--snapshot",
                "fixtures/demo/snapshot-crash-loop.yaml",
            ];
            let report: Value =
                serde_json::from_str(&mdiag(&[&args[..], &["-o", "json"]].concat())?)
                    .map_err(|e| e.to_string())?;
            let page = dir.path().join("triage.html");
            std::fs::write(&page, mdiag(&[&args[..], &["-o", "html"]].concat())?)
                .map_err(|e| e.to_string())?;
            let items: Vec<&Value> = report["items"].as_array().unwrap().iter().collect();
            check(!items.is_empty(), || "no items".into())?;
            let loaded = check_page(&page, &report, &items)?;
            check(loaded.dom.contains("href=\"#w1\""), || {
                "no link to the first workload".into()
            })?;
            Ok(())
        }),
        Trial::test("alert_page_renders", || {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let args = [
                "triage",
                "--alert",
                "fixtures/alerts/several.json",
                "--snapshot",
                "fixtures/demo/crash-loop.yaml",
            ];
            let report: Value =
                serde_json::from_str(&mdiag(&[&args[..], &["-o", "json"]].concat())?)
                    .map_err(|e| e.to_string())?;
            let page = dir.path().join("alert.html");
            std::fs::write(&page, mdiag(&[&args[..], &["-o", "html"]].concat())?)
                .map_err(|e| e.to_string())?;
            let items: Vec<&Value> = report["items"].as_array().unwrap().iter().collect();
            let loaded = check_page(&page, &Value::Null, &items)?;
            for a in report["alerts"].as_array().unwrap() {
                let name = a["alertname"].as_str().unwrap();
                check(
                    loaded.dom.contains(&format!("data-alert=\"{name}\"")),
                    || format!("alert {name} is not in the DOM"),
                )?;
            }
            Ok(())
        }),
        Trial::test("chinese_page_renders", || {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let args = [
                "trace",
                "chart-demo",
                "--lang",
                "zh",
                "--snapshot",
                "fixtures/demo/oom-killed.yaml",
            ];
            let report: Value =
                serde_json::from_str(&mdiag(&[&args[..], &["-o", "json"]].concat())?)
                    .map_err(|e| e.to_string())?;
            let page = dir.path().join("zh.html");
            std::fs::write(&page, mdiag(&[&args[..], &["-o", "html"]].concat())?)
                .map_err(|e| e.to_string())?;
            let loaded = check_page(&page, &Value::Null, &[&report])?;
            check(loaded.dom.contains("lang=\"zh-CN\""), || {
                "lang is not zh-CN".into()
            })?;
            Ok(())
        }),
        Trial::test("hostile_names_stay_text", || {
            // A Pod name and a log line carrying markup: the DOM holds them
            // as text, and the script they carry never ran.
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let text =
                std::fs::read_to_string(repo().join("fixtures/demo/snapshot-crash-loop.yaml"))
                    .map_err(|e| e.to_string())?
                    .replace(
                        "chart-demo-ntmp458kfb-pvgk2",
                        "pvgk2<script>document.title=document.URL</script>",
                    )
                    .replace(
                        "FATAL missing env MODEL_PATH",
                        "<img src=x onerror=\"document.title='pwned'\">",
                    );
            let input = dir.path().join("hostile.yaml");
            std::fs::write(&input, text).map_err(|e| e.to_string())?;
            let page = dir.path().join("hostile.html");
            let html = mdiag(&[
                "trace",
                "chart-demo",
                "--snapshot",
                input.to_str().unwrap(),
                "-o",
                "html",
            ])?;
            std::fs::write(&page, html).map_err(|e| e.to_string())?;
            let loaded = load(&page)?;
            check(loaded.console.is_empty(), || loaded.console.join("\n"))?;
            check(
                !loaded.dom.contains("<title>pwned") && !loaded.dom.contains("<title>file:"),
                || "a script from the cluster's text ran".into(),
            )?;
            check(!loaded.dom.contains("<img"), || {
                "an img element was made".into()
            })?;
            check(loaded.dom.contains("&lt;img src=x onerror="), || {
                "the log line is not shown".into()
            })?;
            check(loaded.dom.contains("pvgk2&lt;script&gt;"), || {
                "the Pod name is not shown".into()
            })?;
            Ok(())
        }),
    ];
    trials.extend(demos().into_iter().map(trace_trial));
    if std::env::var_os(LIVE_ENV).is_none_or(|v| v.is_empty() || v == "0") {
        eprintln!(
            "browser tests not run: they need Chromium (Debian package `chromium`); \
             run them with `cargo xtask test`, or `{LIVE_ENV}=1 cargo test --test html_browser`"
        );
        args.ignored = false;
        args.include_ignored = false;
        let trials = trials
            .into_iter()
            .map(|t| t.with_ignored_flag(true))
            .collect();
        return libtest_mimic::run(&args, trials).exit_code();
    }
    // Two browsers at once at most: the machine is shared.
    args.test_threads = Some(args.test_threads.unwrap_or(2).min(2));
    libtest_mimic::run(&args, trials).exit_code()
}
