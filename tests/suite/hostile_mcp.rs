//! `mdiag mcp` against a client that tries to make it read what its
//! operator did not start it for: the binary as a child process, spoken to
//! in raw JSON-RPC lines on its stdin, every reply read as the bytes it
//! wrote to stdout (docs/security.md#mcp).
//!
//! - A call naming another kubeconfig or context, a namespace outside the
//!   server's `-n`, or every namespace is refused, and nothing reaches the
//!   cluster it names (a listener counts its connections, an exec plugin
//!   would leave a file).
//! - A file outside `--allow-file` (`/proc/self/environ`, `../`, a symlink
//!   pointing out, `-`) is refused without a byte of it in the reply; the
//!   same file allowed is read, so the check is what keeps it out.
//! - A line that is too long, not JSON or not a JSON-RPC message is
//!   answered with a JSON-RPC error, and the next request still is.
//! - What reaches the cluster is reads only, as `readOnlyHint` says.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Long enough for a slow shared machine, short enough that a hang fails.
const WAIT: Duration = Duration::from_secs(60);

/// A canary in the server's environment: `/proc/self/environ` holds it.
const ENV_CANARY: &str = "env-canary-4b1d9e";
/// A canary in a file outside the allowed directory.
const FILE_CANARY: &str = "secret-canary-5d1e";
/// Tokens of the clusters a call must not reach.
const LEAK_TOKEN: &str = "hunter2-other-context-token";
const EXEC_TOKEN: &str = "hunter2-exec-plugin-token";

/// `mdiag mcp FLAGS` in `dir`, initialized, with every line it writes
/// collected by a thread (so a hang is a timeout here, not a stuck test).
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    fn start(dir: &Path, flags: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mdiag"))
            .arg("mcp")
            .args(flags)
            .current_dir(dir)
            .env_remove("KUBECONFIG")
            .env("HOME", dir)
            .env("LANG", "C")
            .env("MDIAG_TEST_CANARY", ENV_CANARY)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mdiag mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut server = Server {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "hostile", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "mdiag", "{init}");
        server.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    /// Writes `bytes` and a newline.
    fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line the server writes, raw.
    fn line(&self) -> String {
        match self.lines.recv_timeout(WAIT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no answer within {WAIT:?}: the server hangs"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout (it ended)"),
        }
    }

    /// The next reply, parsed, with its raw line.
    fn reply(&self) -> (Value, String) {
        let line = self.line();
        let value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}"));
        (value, line)
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(message.to_string().as_bytes());
        let (reply, line) = self.reply();
        assert_eq!(reply["id"], id, "an answer to another request: {line}");
        reply
    }

    /// A tool call: whether it is an error, its text, and the whole line.
    fn call(&mut self, tool: &str, args: Value) -> (bool, String, String) {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                             "params": {"name": tool, "arguments": args}});
        self.send(message.to_string().as_bytes());
        let (reply, line) = self.reply();
        assert_eq!(reply["id"], id, "{line}");
        let result = &reply["result"];
        assert!(result.is_object(), "not a tool result: {line}");
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let error = result["isError"] == true;
        // A tool error names its tool first; the cause follows.
        let text = match text.strip_prefix(&format!("{tool}: ")) {
            Some(cause) if error => cause.to_string(),
            _ if error => panic!("a {tool} error that does not name its tool: {text}"),
            _ => text,
        };
        (error, text, line)
    }

    /// A ping answered: the session is alive.
    fn alive(&mut self) {
        let pong = self.request("ping", json!({}));
        assert!(pong["result"].is_object(), "{pong}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain-http stand-in for an apiserver: every request is recorded (its
/// request line and headers) and refused with 403, as RBAC refuses.
struct Apiserver {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Apiserver {
    fn start() -> Apiserver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let record = Arc::clone(&record);
                std::thread::spawn(move || serve(stream, &record));
            }
        });
        Apiserver { port, seen }
    }

    fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut stream: std::net::TcpStream, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            head.push_str(&line);
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        seen.lock().unwrap().push(head);
        let status = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden","reason":"Forbidden","code":403}"#;
        let reply = format!(
            "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{status}",
            status.len()
        );
        if stream.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// The operator's kubeconfig: context `pinned` (namespace `shop`) on
/// `pinned`, context `other` on `other` with a token of its own.
fn operator_kubeconfig(dir: &Path, pinned: &Apiserver, other: &Apiserver) -> PathBuf {
    write(
        dir,
        "operator.kubeconfig",
        &format!(
            "apiVersion: v1
kind: Config
clusters:
- name: pinned
  cluster: {{server: 'http://127.0.0.1:{}'}}
- name: other
  cluster: {{server: 'http://127.0.0.1:{}'}}
users:
- name: pinned
  user: {{token: pinned-token}}
- name: other
  user: {{token: {LEAK_TOKEN}}}
contexts:
- name: pinned
  context: {{cluster: pinned, user: pinned, namespace: shop}}
- name: other
  context: {{cluster: other, user: other, namespace: shop}}
current-context: pinned
",
            pinned.port, other.port
        ),
    )
}

/// A kubeconfig a client wrote: plain http to its listener, and an exec
/// plugin that leaves `marker` behind and hands over a token.
fn hostile_kubeconfig(dir: &Path, listener: &Apiserver, marker: &Path) -> PathBuf {
    let credential = format!(
        r#"{{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{{"token":"{EXEC_TOKEN}"}}}}"#
    );
    let script = format!("touch '{}'; echo '{credential}'", marker.display());
    let args = serde_json::to_string(&["-c", &script]).unwrap();
    write(
        dir,
        "hostile/kubeconfig",
        &format!(
            "apiVersion: v1
kind: Config
clusters:
- name: h
  cluster: {{server: 'http://127.0.0.1:{}'}}
users:
- name: h
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: /bin/sh
      args: {args}
      interactiveMode: Never
contexts:
- name: h
  context: {{cluster: h, user: h, namespace: shop}}
current-context: h
",
            listener.port
        ),
    )
}

fn tool_properties(server: &mut Server) -> Vec<(String, Vec<String>, Value)> {
    let listed = server.request("tools/list", json!({}));
    listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let props = t["inputSchema"]["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            (
                t["name"].as_str().unwrap().to_string(),
                props,
                t["annotations"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_call_cannot_name_another_kubeconfig_context_or_namespace() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let pinned = Apiserver::start();
    let other = Apiserver::start();
    let attacker = Apiserver::start();
    let marker = dir.join("the-plugin-ran");
    let operator = operator_kubeconfig(dir, &pinned, &other);
    let hostile = hostile_kubeconfig(dir, &attacker, &marker);
    let operator = operator.to_str().unwrap();
    let hostile = hostile.to_str().unwrap();
    let mut server = Server::start(
        dir,
        &[
            "--kubeconfig",
            operator,
            "--context",
            "pinned",
            "-n",
            "shop",
            "--request-timeout",
            "2s",
        ],
    );

    // Neither is a parameter any more.
    for (name, props, _) in tool_properties(&mut server) {
        assert!(
            !props.iter().any(|p| p == "kubeconfig" || p == "context"),
            "{name}: {props:?}"
        );
    }

    let target = json!("deploy/chart-demo");
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "trace",
            json!({"target": target, "kubeconfig": hostile}),
            "`mdiag mcp --kubeconfig FILE`",
        ),
        (
            "triage",
            json!({"kubeconfig": hostile, "namespace": "shop"}),
            "`mdiag mcp --kubeconfig FILE`",
        ),
        (
            "explain",
            json!({"query": "crash-loop", "target": target, "kubeconfig": hostile}),
            "`mdiag mcp --kubeconfig FILE`",
        ),
        (
            "trace",
            json!({"target": target, "context": "other"}),
            "`mdiag mcp --context NAME`",
        ),
        (
            "triage",
            json!({"context": "other"}),
            "`mdiag mcp --context NAME`",
        ),
        (
            "trace",
            json!({"target": target, "namespace": "kube-system"}),
            "`mdiag mcp -n NS`",
        ),
        ("triage", json!({"namespace": "prod"}), "`mdiag mcp -n NS`"),
        ("triage", json!({"all_namespaces": true}), "`mdiag mcp -A`"),
    ];
    for (tool, args, flag) in &cases {
        let (error, text, line) = server.call(tool, args.clone());
        assert!(error, "{tool} {args}: {line}");
        assert!(text.starts_with("refused: "), "{tool} {args}: {text}");
        assert!(text.contains(flag), "{tool} {args}: want {flag} in {text}");
        for secret in [LEAK_TOKEN, EXEC_TOKEN, "pinned-token"] {
            assert!(!line.contains(secret), "{secret} in {line}");
        }
    }
    // Nothing reached the clusters the calls named, no plugin ran, and
    // nothing was read from the pinned one either: refusals come first.
    assert_eq!(other.requests(), Vec::<String>::new());
    assert_eq!(attacker.requests(), Vec::<String>::new());
    assert!(!marker.exists(), "the call's exec plugin ran");
    assert_eq!(pinned.requests(), Vec::<String>::new());

    // Inside the scope, the pinned cluster is read (the listener would
    // have seen the refused calls), with the pinned token, and naming the
    // pinned kubeconfig and context again changes nothing.
    for args in [
        json!({"target": target}),
        json!({"target": target, "namespace": "shop", "kubeconfig": operator, "context": "pinned"}),
    ] {
        let (_, text, _) = server.call("trace", args.clone());
        assert!(!text.starts_with("refused"), "{args}: {text}");
    }
    let seen = pinned.requests();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|r| r.contains("Bearer pinned-token")),
        "{seen:?}"
    );
    // The target's namespace, and the few places every read looks beside
    // the chain (the controller's, kube-system's Leases), as the CLI reads
    // them with the same flags.
    for r in &seen {
        if let Some((_, rest)) = r.split_once("/namespaces/") {
            let ns = rest.split(['/', '?', ' ']).next().unwrap();
            assert!(
                ["shop", "modeldock-system", "kube-system"].contains(&ns),
                "{r}"
            );
        }
    }
    assert_eq!(other.requests(), Vec::<String>::new());
    assert_eq!(attacker.requests(), Vec::<String>::new());
    server.alive();
}

#[test]
fn without_n_or_a_a_call_reads_only_the_contexts_namespace() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let pinned = Apiserver::start();
    let other = Apiserver::start();
    let operator = operator_kubeconfig(dir, &pinned, &other);
    let mut server = Server::start(
        dir,
        &[
            "--kubeconfig",
            operator.to_str().unwrap(),
            "--request-timeout",
            "2s",
        ],
    );
    // The context's namespace is `shop`: naming it is not a change.
    let (_, text, _) = server.call("triage", json!({"namespace": "shop"}));
    assert!(!text.starts_with("refused"), "{text}");
    let before = pinned.requests().len();
    assert!(before > 0);
    let (error, text, _) = server.call(
        "trace",
        json!({"target": "chart-demo", "namespace": "prod"}),
    );
    assert!(error);
    assert!(
        text.starts_with(
            "refused: namespace \"prod\" is outside this server's scope: `mdiag mcp` was started without -n or -A, so it reads only its context's namespace (\"shop\")"
        ),
        "{text}"
    );
    // Connected to learn the context's namespace, and read nothing of prod.
    let seen = pinned.requests();
    assert!(
        !seen[before..]
            .iter()
            .any(|r| r.contains("/namespaces/prod")),
        "{seen:?}"
    );
    let (error, text, _) = server.call("triage", json!({"all_namespaces": true}));
    assert!(error && text.contains("`mdiag mcp -A`"), "{text}");
    assert!(
        !pinned
            .requests()
            .iter()
            .any(|r| r.contains("/namespaces/prod"))
    );
    // A context is refused too: none was pinned, the current one is used.
    let (error, text, _) = server.call("triage", json!({"context": "other"}));
    assert!(
        error && text.contains("the kubeconfig's current context"),
        "{text}"
    );
    assert_eq!(other.requests(), Vec::<String>::new());
}

#[test]
fn every_request_a_tool_sends_to_the_cluster_is_a_read() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    let pinned = Apiserver::start();
    let other = Apiserver::start();
    let operator = operator_kubeconfig(dir, &pinned, &other);
    let mut server = Server::start(
        dir,
        &[
            "--kubeconfig",
            operator.to_str().unwrap(),
            "-A",
            "--request-timeout",
            "2s",
        ],
    );
    for (name, _, annotations) in tool_properties(&mut server) {
        assert_eq!(annotations["readOnlyHint"], true, "{name}");
    }
    for (tool, args) in [
        ("trace", json!({"target": "chart-demo", "logs": true})),
        (
            "trace",
            json!({"target": "sts/db", "namespace": "data", "logs": true}),
        ),
        ("triage", json!({})),
        ("triage", json!({"namespace": "shop", "selector": "app=x"})),
        (
            "explain",
            json!({"query": "crash-loop", "target": "deploy/chart-demo"}),
        ),
    ] {
        let (_, text, _) = server.call(tool, args.clone());
        assert!(!text.starts_with("refused"), "{tool} {args}: {text}");
    }
    let seen = pinned.requests();
    assert!(seen.len() >= 5, "{seen:?}");
    for r in &seen {
        assert!(r.starts_with("GET "), "a request that is not a read: {r}");
    }
}

/// A directory with an allowed part and a secret beside it.
struct Files {
    root: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        let demo = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/crash-loop.yaml"),
        )
        .unwrap();
        write(dir, "allowed/crash-loop.yaml", &demo);
        // A valid file, so that read it would show its names; and one
        // the YAML parser would quote in its error.
        write(
            dir,
            "secret/objects.yaml",
            &demo.replace("chart-demo", FILE_CANARY),
        );
        write(
            dir,
            "secret/broken.yaml",
            &format!("a: 1\nkey: [unclosed {FILE_CANARY}\nb: 2\n"),
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(
                dir.join("secret/objects.yaml"),
                dir.join("allowed/link.yaml"),
            )
            .unwrap();
            std::os::unix::fs::symlink(dir.join("secret"), dir.join("allowed/secret-dir")).unwrap();
        }
        Files { root }
    }

    fn dir(&self) -> &Path {
        self.root.path()
    }
}

#[test]
fn a_file_outside_the_allowed_is_refused_without_its_content() {
    let files = Files::new();
    let dir = files.dir();
    let mut server = Server::start(dir, &["--allow-file", "allowed"]);
    let absolute = dir.join("secret/objects.yaml");
    let mut outside: Vec<String> = vec![
        "/proc/self/environ".into(),
        "secret/objects.yaml".into(),
        "secret/broken.yaml".into(),
        absolute.to_string_lossy().into_owned(),
        "allowed/../secret/objects.yaml".into(),
        "allowed/../secret/broken.yaml".into(),
        "./allowed/./../secret/broken.yaml".into(),
        "allowed/missing/../../secret/broken.yaml".into(),
        "allowed/../secret/not-there.yaml".into(),
    ];
    if cfg!(unix) {
        outside.push("allowed/link.yaml".into());
        outside.push("allowed/secret-dir/broken.yaml".into());
    }
    for path in &outside {
        for (tool, args) in [
            ("trace", json!({"target": "chart-demo", "snapshot": path})),
            ("triage", json!({"snapshot": path})),
            (
                "explain",
                json!({"query": "crash-loop", "target": "chart-demo", "snapshot": path}),
            ),
            ("snapshot_summary", json!({"snapshot": path})),
        ] {
            let (error, text, line) = server.call(tool, args);
            assert!(error, "{tool} {path}: {line}");
            let want = format!(
                "refused: {path:?} is outside the files this server may read (it may read allowed (a directory)); to let calls read it, start the server as `mdiag mcp --allow-file DIR`"
            );
            assert!(text.starts_with(&want), "{tool} {path}: {text}");
            for canary in [FILE_CANARY, ENV_CANARY, "MDIAG_TEST_CANARY"] {
                assert!(!line.contains(canary), "{canary} in {line}");
            }
        }
    }
    // Inside, the file is read.
    let (error, text, _) = server.call(
        "trace",
        json!({"target": "chart-demo", "snapshot": "allowed/crash-loop.yaml"}),
    );
    assert!(!error, "{text}");
    server.alive();

    // The same file, allowed: its names do reach the reply, so what kept
    // them out above is the check.
    let mut open = Server::start(dir, &["--allow-file", "secret"]);
    let (error, text, line) = open.call("triage", json!({"snapshot": "secret/objects.yaml"}));
    assert!(!error, "{text}");
    assert!(line.contains(FILE_CANARY), "{line}");
}

#[test]
fn without_allow_file_no_file_is_read_but_the_one_snapshot_names() {
    let files = Files::new();
    let dir = files.dir();
    let mut server = Server::start(dir, &[]);
    let (error, text, _) = server.call(
        "snapshot_summary",
        json!({"snapshot": "allowed/crash-loop.yaml"}),
    );
    assert!(error);
    assert!(
        text.starts_with(
            "refused: \"allowed/crash-loop.yaml\" is outside the files this server may read (none: it was started without --allow-file)"
        ),
        "{text}"
    );
    // `--snapshot FILE` is every call's file, and the only one.
    let mut pinned = Server::start(dir, &["--snapshot", "allowed/crash-loop.yaml"]);
    let (error, text, _) = pinned.call("trace", json!({"target": "chart-demo"}));
    assert!(!error, "{text}");
    let (error, text, _) = pinned.call(
        "snapshot_summary",
        json!({"snapshot": "allowed/crash-loop.yaml"}),
    );
    assert!(!error, "{text}");
    let (error, text, line) = pinned.call("triage", json!({"snapshot": "secret/objects.yaml"}));
    assert!(error && text.starts_with("refused: "), "{text}");
    assert!(!line.contains(FILE_CANARY));
}

#[test]
fn standard_input_is_refused_and_the_requests_after_it_are_answered() {
    let files = Files::new();
    let mut server = Server::start(files.dir(), &["--allow-file", "allowed"]);
    // The call and a ping in one write: a read of stdin would swallow the ping.
    let call = json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
                      "params": {"name": "triage", "arguments": {"snapshot": "-"}}});
    let ping = json!({"jsonrpc": "2.0", "id": 51, "method": "ping"});
    server.send(format!("{call}\n{ping}").as_bytes());
    let mut replies: Vec<Value> = (0..2).map(|_| server.reply().0).collect();
    replies.sort_by_key(|r| r["id"].as_u64());
    assert_eq!(replies[0]["id"], 50);
    assert_eq!(replies[0]["result"]["isError"], true);
    let text = replies[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("triage: refused: \"-\" (standard input) is the protocol's own stream"),
        "{text}"
    );
    assert_eq!(replies[1]["id"], 51);
    assert!(replies[1]["result"].is_object(), "{}", replies[1]);
    for (tool, args) in [
        ("trace", json!({"target": "chart-demo", "snapshot": "-"})),
        (
            "explain",
            json!({"query": "crash-loop", "target": "chart-demo", "snapshot": "-"}),
        ),
        ("snapshot_summary", json!({"snapshot": "-"})),
    ] {
        let (error, text, _) = server.call(tool, args);
        assert!(
            error && text.starts_with("refused: \"-\""),
            "{tool}: {text}"
        );
    }
    server.alive();
    // Nor can the operator pin it.
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
        .args(["mcp", "--snapshot", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("protocol's own stream"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_oversized_line_is_answered_with_an_error_and_the_next_request_still_is() {
    let files = Files::new();
    let mut server = Server::start(files.dir(), &[]);
    // A real request, 2 MiB long: over the 1 MiB cap.
    let huge = json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                      "params": {"name": "explain", "arguments": {"query": "x".repeat(2 << 20)}}});
    server.send(huge.to_string().as_bytes());
    let (reply, line) = server.reply();
    assert_eq!(reply["id"], Value::Null, "{line}");
    assert_eq!(reply["error"]["code"], -32600, "{line}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the message is longer than 1048576 bytes (1 MiB)"),
        "{line}"
    );
    assert!(
        line.len() < 1024,
        "the reply quotes the line: {} bytes",
        line.len()
    );
    server.alive();
    // One just under the cap is read, and its over-long argument refused
    // before any work is done on it.
    let query = "x".repeat((1 << 20) - 200);
    let (error, text, line) = server.call("explain", json!({"query": query}));
    assert!(error, "{line}");
    assert_eq!(
        text,
        format!(
            "refused: the argument `query` is {} bytes, over the 4096 a call may send in one argument",
            query.len()
        )
    );
    server.alive();
}

#[test]
fn a_long_answer_is_cut_and_says_so() {
    // A file of 3000 Deployments: a target it lacks is answered with every
    // one it has, far over the 64 KiB an answer's text carries.
    let root = tempfile::tempdir().unwrap();
    let items: Vec<Value> = (0..3000)
        .map(|i| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": format!("workload-with-a-long-name-{i:04}"),
                                "namespace": "shop", "uid": format!("uid-{i}")}})
        })
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    write(root.path(), "many.json", &list.to_string());
    let mut server = Server::start(root.path(), &["--allow-file", "many.json"]);
    let (error, text, line) = server.call(
        "trace",
        json!({"target": "deploy/nothing-here", "snapshot": "many.json"}),
    );
    assert!(error, "{line}");
    assert!(text.len() <= 64 << 10, "{}", text.len());
    assert!(
        text.starts_with("Deployment \"nothing-here\" not found"),
        "{}",
        &text[..200]
    );
    let tail = &text[text.rfind('\n').unwrap() + 1..];
    assert!(
        tail.starts_with("[cut by mdiag mcp: the text is ")
            && tail.ends_with(" bytes; an answer carries at most 65536]"),
        "{tail}"
    );
    let full: usize = tail["[cut by mdiag mcp: the text is ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(full > 100_000, "{full}");
    assert!(line.len() < 80 << 10, "{}", line.len());
    server.alive();
}

#[test]
fn a_malformed_line_is_answered_with_a_parse_error() {
    let files = Files::new();
    let mut server = Server::start(files.dir(), &[]);
    let cases: [(&[u8], Value, i64); 5] = [
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\"",
            Value::Null,
            -32700,
        ),
        (b"not json at all", Value::Null, -32700),
        (b"\xff\xfe\x00garbage", Value::Null, -32700),
        (
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"nope"}"#,
            json!(9),
            -32602,
        ),
        (b"[1, 2, 3]", Value::Null, -32600),
    ];
    for (line, id, code) in cases {
        server.send(line);
        let (reply, raw) = server.reply();
        assert_eq!(reply["jsonrpc"], "2.0", "{raw}");
        assert_eq!(reply["id"], id, "{raw}");
        assert_eq!(reply["error"]["code"], code, "{raw}");
        assert!(raw.contains(&format!("\"code\":{code}")), "{raw}");
        server.alive();
    }
    // A notification is never answered, even a broken one: the next line
    // is the ping's.
    server.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":7}"#);
    server.alive();
}

#[test]
fn the_scope_flags_are_checked_when_the_server_starts() {
    let root = tempfile::tempdir().unwrap();
    for (flags, want) in [
        (
            vec!["mcp", "--allow-file", "no-such-dir"],
            "--allow-file no-such-dir: ",
        ),
        (vec!["-n", "shop", "mcp", "-A"], "use -n NS or -A, not both"),
        (
            vec!["mcp", "--snapshot", "no-such.yaml"],
            "--snapshot no-such.yaml: ",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mdiag"))
            .args(&flags)
            .current_dir(root.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(want), "{flags:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}
