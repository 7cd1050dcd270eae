//! Untrusted input stays bounded, and files are written as users expect:
//! the binary on hostile inputs (an endless device, a FIFO, gzip bombs, a
//! multi-megabyte log line, free text shaped like a time, the last second
//! of year 9999) and on the files it writes (umask, symlinks, `-`).
//! docs/security.md says what each test holds mdiag to.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::common::mdiag;

const BASE: &str = "fixtures/hostile/clock-free-text.yaml";
const TARGET: &str = "deploy/web";
const POD: &str = "web-7d9f8b6c5d-x2k4p";
const ALERT_CAP: &str = "larger than the alert limit of 16 MiB (16777216 bytes)";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn base_text() -> String {
    std::fs::read_to_string(root().join(BASE)).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The binary run by `sh` with `setup` first (a umask, a memory limit),
/// from the project root, in English, with no kubeconfig.
fn mdiag_under(setup: &str, args: &[&str]) -> Output {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!("{setup} && exec \"$0\" \"$@\""))
        .arg(assert_cmd::cargo::cargo_bin("mdiag"))
        .args(args)
        .current_dir(root())
        .env_remove("KUBECONFIG")
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .env("LANG", "C");
    cmd.output().unwrap()
}

/// An address-space limit far below what reading an endless input whole
/// would take, far above what mdiag needs: 256 MiB.
const SMALL_MEMORY: &str = "ulimit -v 262144";

fn gzip(parts: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    for part in parts {
        e.write_all(&part).unwrap();
    }
    e.finish().unwrap()
}

/// A gzip alert of about 20 KiB that inflates to 20 MiB of white space
/// inside a webhook body: small on disk, over the alert cap inflated.
fn alert_bomb() -> Vec<u8> {
    let mut parts = vec![b"{\"alerts\": [".to_vec()];
    parts.extend((0..20).map(|_| vec![b' '; 1 << 20]));
    let bytes = gzip(parts);
    assert!(bytes.len() < 32 * 1024, "{} bytes", bytes.len());
    bytes
}

// --- one cap for every input -------------------------------------------

#[test]
fn an_endless_device_as_the_alert_stops_at_the_alert_cap() {
    let out = mdiag_under(
        SMALL_MEMORY,
        &["triage", "--alert", "/dev/zero", "--snapshot", BASE],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("/dev/zero is {ALERT_CAP}")), "{err}");
    assert!(
        err.contains("an alert payload is small: pass the Alertmanager webhook body"),
        "{err}"
    );
}

#[test]
fn a_gzip_bomb_as_the_alert_stops_at_the_cap_once_decompressed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("webhook.json.gz");
    std::fs::write(&path, alert_bomb()).unwrap();
    let out = mdiag_under(
        SMALL_MEMORY,
        &[
            "triage",
            "--alert",
            path.to_str().unwrap(),
            "--snapshot",
            BASE,
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{} is {ALERT_CAP} once decompressed (the read stopped there)",
            path.display()
        )),
        "{err}"
    );
}

#[test]
fn a_gzip_bomb_on_standard_input_is_recognised_and_capped() {
    let out = mdiag()
        .args(["triage", "--alert", "-", "--snapshot", BASE])
        .write_stdin(alert_bomb())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("standard input is {ALERT_CAP} once decompressed")),
        "{err}"
    );
}

#[test]
fn a_compressed_alert_under_the_cap_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("labels.yaml.gz");
    let labels =
        b"alertname: KubePodCrashLooping\nnamespace: hostile-lab\npod: web-7d9f8b6c5d-x2k4p\n";
    std::fs::write(&path, gzip([labels.to_vec()])).unwrap();
    let out = mdiag()
        .args([
            "triage",
            "--alert",
            path.to_str().unwrap(),
            "--snapshot",
            BASE,
        ])
        .args(["-o", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["items"][0]["target"]["name"], "web");
}

/// A FIFO no one stops writing to: read as a stream, stopped at the cap.
#[test]
fn an_endless_fifo_as_the_alert_stops_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("alerts");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    {
        let fifo = fifo.clone();
        // Ends when mdiag closes its end (the write fails with EPIPE).
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            let chunk = vec![b' '; 64 * 1024];
            while w.write_all(&chunk).is_ok() {}
        });
    }
    let out = mdiag_under(
        SMALL_MEMORY,
        &[
            "triage",
            "--alert",
            fifo.to_str().unwrap(),
            "--snapshot",
            BASE,
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(ALERT_CAP), "{err}");
}

#[test]
fn a_snapshot_from_a_fifo_is_read_as_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("dump");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, base_text()).unwrap())
    };
    let out = mdiag()
        .args([
            "trace",
            TARGET,
            "--snapshot",
            fifo.to_str().unwrap(),
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["verdict"]["lead"], "crash-loop");
}

#[test]
fn an_endless_device_as_the_snapshot_is_refused_at_its_first_bytes() {
    let out = mdiag_under(SMALL_MEMORY, &["trace", TARGET, "--snapshot", "/dev/zero"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/dev/zero is not valid UTF-8 text; is it a binary file?"),
        "{err}"
    );
}

#[test]
fn a_missing_alert_says_which_flag_reads_standard_input() {
    let out = mdiag()
        .args([
            "triage",
            "--alert",
            "no/such/webhook.json",
            "--snapshot",
            BASE,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "no/such/webhook.json does not exist; check the path (`--alert -` reads standard input)"
        ),
        "{}",
        stderr(&out)
    );
}

// --- quoted outside text is bounded --------------------------------------

/// The base dump as an mdiag snapshot (JSON) holding a previous log of
/// `log_line` after a first line, with the Pod's termination message and
/// its Event's message replaced.
fn hostile_snapshot(
    log_line: &str,
    termination: &str,
    event: &str,
) -> (tempfile::TempDir, PathBuf) {
    let list: Value = serde_saphyr::from_str(&base_text()).unwrap();
    let mut objects = list["items"].as_array().unwrap().clone();
    for o in &mut objects {
        match o["kind"].as_str() {
            Some("Pod") => {
                o["status"]["containerStatuses"][0]["lastState"]["terminated"]["message"] =
                    termination.into();
            }
            Some("Event") => o["message"] = event.into(),
            _ => {}
        }
    }
    let file = serde_json::json!({
        "format": "mdiag.dev/snapshot",
        "version": 2,
        "captured_at": "2026-05-04T08:31:00Z",
        "objects": objects,
        "logs": [{
            "namespace": "hostile-lab",
            "pod": POD,
            "container": "server",
            "previous": true,
            "truncated": false,
            "text": format!("starting web 1.0.0\n{log_line}\n"),
        }],
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.json");
    std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
    (dir, path)
}

#[test]
fn a_huge_log_line_termination_message_and_event_are_quoted_cut_and_marked() {
    const MIB: usize = 1 << 20;
    let log_line = "x".repeat(8 * MIB);
    let termination: String = (0..10_000).map(|i| format!("frame {i:05}\n")).collect();
    let event = format!("Back-off {}", "e".repeat(MIB));
    let (_dir, path) = hostile_snapshot(&log_line, &termination, &event);
    let file_bytes = std::fs::metadata(&path).unwrap().len();
    for format in ["json", "yaml", "html"] {
        let out = mdiag()
            .args([
                "trace",
                TARGET,
                "--snapshot",
                path.to_str().unwrap(),
                "-o",
                format,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}: {}", stderr(&out));
        // A report of a few quoted lines, not of the file: under 1% of it.
        assert!(
            (out.stdout.len() as u64) < file_bytes / 100,
            "{format}: {} bytes from a {file_bytes}-byte file",
            out.stdout.len()
        );
    }
    let out = mdiag()
        .args([
            "trace",
            TARGET,
            "--snapshot",
            path.to_str().unwrap(),
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let lead = &report["findings"][0];
    assert_eq!(lead["id"], "crash-loop");
    let evidence = lead["evidence"].as_array().unwrap();
    // The log tail: each line cut to 4 KiB and marked with what was cut.
    let log = evidence
        .iter()
        .find(|e| e["log"].is_object())
        .expect("the log tail is evidence");
    let lines = log["log"]["lines"].as_array().unwrap();
    assert_eq!(lines[0], "starting web 1.0.0");
    let cut = lines[1].as_str().unwrap();
    let marker = format!("… [{} bytes cut]", 8 * MIB - 4096);
    assert_eq!(cut, format!("{}{marker}", "x".repeat(4096)));
    assert_eq!(
        log["value"].as_str().unwrap(),
        cut,
        "the last line, cut alike"
    );
    // The termination message: its first 20 lines, and how many more.
    let terminated = evidence
        .iter()
        .find(|e| {
            e["field"]
                .as_str()
                .unwrap()
                .ends_with("lastState.terminated")
        })
        .unwrap();
    // The message (trimmed of its last newline) as the words quote it...
    let words = terminated["value_message"]["args"]["message"]["args"]["message"]
        .as_str()
        .unwrap();
    assert!(words.starts_with("frame 00000\nframe 00001\n"), "{words}");
    assert!(words.contains("frame 00019\n"), "{words}");
    assert!(!words.contains("frame 00020"), "{words}");
    assert!(words.ends_with("\n… [9980 more lines cut]"), "{words}");
    // ...and as the English value does.
    let value = terminated["value"].as_str().unwrap();
    assert!(value.starts_with("exitCode 1 reason Error"), "{value}");
    assert!(value.ends_with("\n… [9980 more lines cut]"), "{value}");
    // The Event's message, with its count: one line, cut.
    let event = evidence
        .iter()
        .find(|e| e["field"] == "event BackOff")
        .unwrap();
    let quoted = event["value"].as_str().unwrap();
    let whole = "Back-off ".len() + MIB + " (x30)".len();
    assert!(quoted.starts_with("Back-off eee"), "{quoted}");
    assert!(
        quoted.ends_with(&format!("e… [{} bytes cut]", whole - 4096)),
        "{}",
        &quoted[4000..]
    );
}

#[test]
fn quoted_text_within_the_bounds_is_quoted_whole() {
    let line = "fatal: cannot bind 0.0.0.0:8080: address already in use";
    let (_dir, path) = hostile_snapshot(line, "panic: bind", "Back-off restarting");
    let out = mdiag()
        .args([
            "trace",
            TARGET,
            "--snapshot",
            path.to_str().unwrap(),
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("\"{line}\"")), "{text}");
    assert!(!text.contains("bytes cut]") && !text.contains("lines cut]"));
}

// --- the clock of a dump and the times it accepts -------------------------

#[test]
fn a_termination_message_shaped_like_a_time_does_not_move_the_clock() {
    let out = mdiag()
        .args(["trace", TARGET, "--snapshot", BASE, "-o", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["clock"]["source"], "newest-timestamp");
    // The BackOff Event's lastTimestamp, not the 2126 of the free text.
    assert_eq!(report["clock"]["now"], "2026-05-04T08:30:12Z");
    assert_eq!(report["verdict"]["lead"], "crash-loop");
    // The message is still quoted as the container wrote it.
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("2126-01-01T00:00:00Z"));
}

/// The base dump with a Ready condition and the Service's creation at
/// the last second of year 9999, as `at` spells it.
fn far_future(at: &str) -> (tempfile::TempDir, PathBuf) {
    let text = base_text()
        .replace(
            "{type: Ready, status: \"False\", reason: ContainersNotReady, lastTransitionTime: \"2026-05-04T08:20:01Z\"}",
            &format!("{{type: Ready, status: \"False\", reason: ContainersNotReady, lastTransitionTime: \"{at}\"}}"),
        )
        .replace(
            "uid: 0b6d1c2e-5a4f-4e0b-9d61-7f2a3c4b5d04\n    creationTimestamp: \"2026-05-04T08:20:00Z\"",
            &format!("uid: 0b6d1c2e-5a4f-4e0b-9d61-7f2a3c4b5d04\n    creationTimestamp: \"{at}\""),
        );
    assert_eq!(text.matches(at).count(), 2, "both times replaced");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("far-future.yaml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn the_last_second_of_year_9999_does_not_make_a_file_unreadable() {
    for at in ["9999-12-31T23:59:59Z", "9999-12-31T23:59:59.999999999Z"] {
        let (_dir, path) = far_future(at);
        let path = path.to_str().unwrap();
        // Judged at a time the user names, the diagnosis is the base's.
        let out = mdiag()
            .args([
                "trace",
                TARGET,
                "--snapshot",
                path,
                "--at",
                "2026-05-04T08:30:12Z",
            ])
            .args(["-o", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{at}: {}", stderr(&out));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["verdict"]["lead"], "crash-loop", "{at}");
        // At the file's own clock: the newest time it holds, held at the
        // last second jiff can represent, and no panic in any view.
        for format in ["json", "table", "html"] {
            let out = mdiag()
                .args(["trace", TARGET, "--snapshot", path, "-o", format])
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(1),
                "{at} {format}: {}",
                stderr(&out)
            );
            if format == "json" {
                let report: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(report["clock"]["now"], "9999-12-30T22:00:00Z");
            }
        }
        let out = mdiag()
            .args(["triage", "-A", "--snapshot", path])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{at} triage: {}", stderr(&out));
    }
}

// --- files written as users expect ----------------------------------------

fn snapshot_to(out: &Path) -> Vec<String> {
    vec![
        "snapshot".into(),
        TARGET.into(),
        "--snapshot".into(),
        BASE.into(),
        "--output-file".into(),
        out.to_str().unwrap().into(),
    ]
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn read_back(path: &Path) -> mdiag_core::model::Snapshot {
    mdiag_source::read_snapshot_file(path).unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(unix)]
#[test]
fn a_new_file_gets_its_mode_from_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    for (umask, want) in [("022", 0o644), ("077", 0o600), ("002", 0o664)] {
        let path = dir.path().join(format!("umask-{umask}.yaml"));
        let args = snapshot_to(&path);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = mdiag_under(&format!("umask {umask}"), &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(mode(&path), want, "umask {umask}: {:o}", mode(&path));
        assert_eq!(read_back(&path).objects.pods.len(), 1);
    }
}

#[cfg(unix)]
#[test]
fn a_file_written_over_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evidence.yaml");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = mdiag().args(snapshot_to(&path)).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mode(&path), 0o640);
    assert_eq!(read_back(&path).objects.pods.len(), 1);
}

#[cfg(unix)]
#[test]
fn a_symlink_is_written_through_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let real = store.join("evidence.yaml.gz");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("latest.yaml.gz");
    std::os::unix::fs::symlink("store/evidence.yaml.gz", &link).unwrap();
    let out = mdiag().args(snapshot_to(&link)).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let kind = std::fs::symlink_metadata(&link).unwrap().file_type();
    assert!(kind.is_symlink(), "the symlink is kept");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("store/evidence.yaml.gz")
    );
    // The target holds the snapshot (gzip, as the link's name says).
    assert_eq!(read_back(&real).objects.pods.len(), 1);
    // No temporary file is left beside the link or the target.
    for folder in [dir.path(), store.as_path()] {
        for entry in std::fs::read_dir(folder).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            assert!(!name.starts_with(".mdiag-"), "{name} left in {folder:?}");
        }
    }
}

#[test]
fn output_file_dash_writes_the_snapshot_to_stdout() {
    let out = mdiag().args(snapshot_to(Path::new("-"))).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(text.starts_with("format: mdiag.dev/snapshot\n"), "{text}");
    let back = mdiag_source::file::parse_snapshot_text(&text, Path::new("stdout")).unwrap();
    assert_eq!(back.objects.pods.len(), 1);
    assert!(
        stderr(&out).contains("mdiag: wrote standard output ("),
        "{}",
        stderr(&out)
    );
    // No file named `-` was made.
    assert!(!root().join("-").exists());
}

#[test]
fn snapshot_dash_o_is_the_format_and_names_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let base = root().join(BASE);
    let base = base.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["snapshot", TARGET, "--snapshot", base];
        all.extend_from_slice(args);
        mdiag().args(&all).current_dir(dir.path()).output().unwrap()
    };
    // JSON to stdout: no file named `json` or `-`.
    let out = run(&["-o", "json", "--output-file", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let back: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back["format"], "mdiag.dev/snapshot");
    // JSON into a file whose name says nothing of its format.
    let out = run(&["--output-file", "evidence", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(dir.path().join("evidence")).unwrap();
    assert!(written.trim_start().starts_with('{'), "{written}");
    // The name's format, and a format against it refused.
    let out = run(&["--output-file", "e.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        std::fs::read_to_string(dir.path().join("e.json"))
            .unwrap()
            .starts_with('{')
    );
    let out = run(&["-o", "json", "--output-file", "e.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("-o json and --output-file e.yaml"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("e.yaml").exists());
    // `-o` alone names no file: the file is asked for.
    let out = run(&["-o", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--output-file"), "{}", stderr(&out));
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["e.json", "evidence"]);
}

#[test]
fn a_missing_folder_is_found_before_anything_is_read() {
    let dir = tempfile::tempdir().unwrap();
    // A cluster that does not answer: were it read first, that would be
    // the error (4), after the whole wait.
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n",
    )
    .unwrap();
    let missing = dir.path().join("no-such-folder").join("evidence.yaml");
    for command in [
        vec!["snapshot", "chart-demo", "--output-file"],
        vec!["gate", "chart-demo", "--report"],
    ] {
        let out = mdiag()
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(&command)
            .arg(&missing)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {err}");
        assert!(
            err.contains(&format!(
                "cannot write {}: there is no folder {}",
                missing.display(),
                missing.parent().unwrap().display()
            )),
            "{command:?}: {err}"
        );
        assert!(!err.contains(".mdiag-"), "no temporary name: {err}");
    }
}
