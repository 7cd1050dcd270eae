//! The local registries for the real node, for real: Debian's
//! docker-registry (open and htpasswd), the never-answering listener, the
//! images pushed over the registry API and read back.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mdiag_harness::images::{
    self, MISSING_TAG, MODEL_SERVER_REPO, MODEL_SERVER_TAGS, PAUSE_REPO, PAUSE_TAG, PlanOptions,
    Registry,
};

/// The started processes; killed when the test ends, pass or fail.
struct Procs(Vec<Child>);

impl Drop for Procs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn logs(dir: &Path) -> String {
    let mut s = String::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        s.push_str(&format!(
            "--- {}\n{}\n",
            e.path().display(),
            fs::read_to_string(e.path()).unwrap_or_default()
        ));
    }
    s
}

#[test]
fn registries_serve_pushed_images_deny_and_hang() {
    assert!(
        Path::new(images::registry::DOCKER_REGISTRY).is_file(),
        "{} is missing: apt-get install docker-registry (the real node's registries are Debian's)",
        images::registry::DOCKER_REGISTRY
    );
    let dir = tempfile::tempdir().unwrap();
    let plan = images::plan_with(
        &dir.path().join("registry"),
        &PlanOptions {
            blackhole_exe: Some(env!("CARGO_BIN_EXE_mdiag-blackhole").into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(plan.processes.len(), 3);
    let log_dir = dir.path().join("logs");
    fs::create_dir_all(&log_dir).unwrap();
    let mut procs = Procs(Vec::new());
    for p in &plan.processes {
        let log = File::create(log_dir.join(&p.log)).unwrap();
        procs.0.push(
            Command::new(&p.exe)
                .args(&p.args)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("starting {}: {e}", p.exe.display())),
        );
    }
    // The push as the node would make it from inside its network namespace:
    // the binary reads plan.json and writes images.json.
    let reloaded = images::RegistryPlan::load(&plan.dir).unwrap();
    assert_eq!(reloaded.processes, plan.processes);
    assert_eq!(reloaded.password, plan.password);
    let out = Command::new(env!("CARGO_BIN_EXE_mdiag-images"))
        .arg("push")
        .arg(&plan.dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mdiag-images push: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        logs(&log_dir)
    );
    let imgs = images::Images::load(&plan.dir).unwrap();
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["pause"], imgs.pause.as_str());

    // What was pushed is what is served, byte for byte.
    let built = images::build(&images::busybox_path()).unwrap();
    let open = Registry::new(plan.open, None);
    for tag in MODEL_SERVER_TAGS {
        let r = open.get_manifest(MODEL_SERVER_REPO, tag).unwrap();
        assert_eq!(r.status, 200, "{tag}: {}", r.text());
        assert_eq!(r.body, built.model_server[*tag].manifest.bytes);
        assert_eq!(
            r.docker_digest.as_deref(),
            Some(built.model_server[*tag].manifest.digest.as_str())
        );
        assert_eq!(r.content_type.as_deref(), Some(images::oci::MEDIA_MANIFEST));
        assert_eq!(
            imgs.model_server(tag),
            format!("{}/{MODEL_SERVER_REPO}:{tag}", plan.open)
        );
    }
    let cfg = &built.model_server[MODEL_SERVER_TAGS[0]].config;
    let blob = open
        .request(
            "GET",
            &format!("/v2/{MODEL_SERVER_REPO}/blobs/{}", cfg.digest),
            None,
            None,
            None,
        )
        .unwrap();
    assert_eq!(blob.status, 200);
    assert_eq!(images::oci::digest(&blob.body), cfg.digest);
    let pause = open.get_manifest(PAUSE_REPO, PAUSE_TAG).unwrap();
    assert_eq!(pause.body, built.pause.manifest.bytes);
    assert_eq!(
        imgs.pause,
        format!("{}/{PAUSE_REPO}:{PAUSE_TAG}", plan.open)
    );

    // A tag that was never pushed: the registry's own "not found".
    assert!(imgs.not_found.ends_with(&format!(":{MISSING_TAG}")));
    let missing = open.get_manifest(MODEL_SERVER_REPO, MISSING_TAG).unwrap();
    assert_eq!(missing.status, 404);
    assert!(
        missing.text().contains("MANIFEST_UNKNOWN"),
        "{}",
        missing.text()
    );

    // The auth registry: 401 without credentials, the image with them.
    assert!(imgs.denied.starts_with(&format!("{}/", plan.auth)));
    let anon = Registry::new(plan.auth, None);
    let denied = anon
        .get_manifest(MODEL_SERVER_REPO, MODEL_SERVER_TAGS[0])
        .unwrap();
    assert_eq!(denied.status, 401);
    assert!(denied.text().contains("UNAUTHORIZED"), "{}", denied.text());
    assert_eq!(
        denied.www_authenticate.as_deref(),
        Some("Basic realm=\"mdiag-registry\"")
    );
    let wrong = Registry::new(plan.auth, Some((&plan.username, "wrong")));
    assert_eq!(
        wrong
            .get_manifest(MODEL_SERVER_REPO, MODEL_SERVER_TAGS[0])
            .unwrap()
            .status,
        401
    );
    let creds = &imgs.credentials;
    let authed = Registry::new(plan.auth, Some((&creds.username, &creds.password)));
    let ok = authed
        .get_manifest(MODEL_SERVER_REPO, MODEL_SERVER_TAGS[0])
        .unwrap();
    assert_eq!(ok.status, 200);
    assert_eq!(
        ok.body,
        built.model_server[MODEL_SERVER_TAGS[0]].manifest.bytes
    );

    // The blackhole accepts and never answers.
    assert!(imgs.timeout.starts_with(&format!("{}/", plan.blackhole)));
    let mut s = TcpStream::connect_timeout(&plan.blackhole, Duration::from_secs(2))
        .expect("the blackhole accepts connections");
    s.write_all(b"GET /v2/ HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = [0u8; 16];
    let e = s.read(&mut buf).expect_err("the blackhole answered");
    assert!(
        matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{e}"
    );

    // The unreachable one: no connection completes.
    assert!(
        imgs.unreachable
            .starts_with(&format!("{}/", plan.unreachable))
    );
    let e = TcpStream::connect_timeout(&plan.unreachable, Duration::from_secs(2))
        .expect_err("a connection to the unreachable address completed");
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");

    // containerd's plain-HTTP hosts, one per registry host.
    let hosts: Vec<&str> = imgs
        .containerd
        .hosts
        .iter()
        .map(|(h, _)| h.as_str())
        .collect();
    assert_eq!(
        hosts,
        [
            plan.open.to_string(),
            plan.auth.to_string(),
            plan.blackhole.to_string(),
            plan.unreachable.to_string()
        ]
    );
    let hd = dir.path().join("certs.d");
    imgs.containerd.write_hosts_dir(&hd).unwrap();
    let t = fs::read_to_string(hd.join(plan.open.to_string()).join("hosts.toml")).unwrap();
    assert!(t.contains(&format!("server = \"http://{}\"", plan.open)));
    drop(procs);
}
