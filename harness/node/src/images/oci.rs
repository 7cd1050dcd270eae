//! OCI images made from Debian's busybox-static: layer tars, the image
//! config and the manifest, written here byte for byte (no docker, no
//! download). Every file has uid 0, mtime 0 and a fixed order, so the same
//! busybox binary always gives the same digests.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const MEDIA_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const MEDIA_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
pub const MEDIA_LAYER_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// The model-server stand-in (run by busybox sh).
pub const MODEL_SERVER_SH: &str = include_str!("../../../images/model-server.sh");
/// Its readiness CGI, run by busybox httpd for `/healthz/`.
pub const HEALTHZ_CGI: &str = include_str!("../../../images/healthz.cgi");
/// PID 1 of the pause (sandbox) image.
pub const PAUSE_SH: &str = include_str!("../../../images/pause.sh");

/// Where the model server's script lives in the image.
pub const MODEL_SERVER_PATH: &str = "/usr/local/bin/model-server";
/// Where the pause script lives in the image.
pub const PAUSE_PATH: &str = "/pause";

const PATH_ENV: &str = "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// `sha256:<hex>` of some bytes.
pub fn digest(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in sum {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Content-addressed bytes with their media type.
#[derive(Clone, Debug)]
pub struct Blob {
    pub media_type: &'static str,
    pub digest: String,
    pub bytes: Vec<u8>,
}

impl Blob {
    pub fn new(media_type: &'static str, bytes: Vec<u8>) -> Blob {
        Blob {
            media_type,
            digest: digest(&bytes),
            bytes,
        }
    }

    /// The OCI descriptor of this blob.
    pub fn descriptor(&self) -> Value {
        json!({"mediaType": self.media_type, "digest": self.digest, "size": self.bytes.len()})
    }
}

/// A gzip-compressed layer and the digest of its uncompressed tar (the
/// config's `diff_id`).
#[derive(Clone, Debug)]
pub struct Layer {
    pub blob: Blob,
    pub diff_id: String,
}

/// One image: its layers, config and manifest.
#[derive(Clone, Debug)]
pub struct Image {
    pub layers: Vec<Layer>,
    pub config: Blob,
    pub manifest: Blob,
}

/// What goes into a layer.
enum Entry {
    Dir(&'static str, u32),
    File(String, u32, Vec<u8>),
    Symlink(String, String),
}

fn layer(entries: &[Entry]) -> anyhow::Result<Layer> {
    let mut b = tar::Builder::new(Vec::new());
    b.mode(tar::HeaderMode::Deterministic);
    for e in entries {
        let mut h = tar::Header::new_gnu();
        h.set_uid(0);
        h.set_gid(0);
        h.set_mtime(0);
        match e {
            Entry::Dir(path, mode) => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(*mode);
                h.set_size(0);
                b.append_data(&mut h, format!("{path}/"), std::io::empty())?;
            }
            Entry::File(path, mode, data) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(*mode);
                h.set_size(data.len() as u64);
                b.append_data(&mut h, path, data.as_slice())?;
            }
            Entry::Symlink(path, target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_mode(0o777);
                h.set_size(0);
                b.append_link(&mut h, path, target)?;
            }
        }
    }
    let tar = b.into_inner()?;
    let diff_id = digest(&tar);
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&tar)?;
    Ok(Layer {
        blob: Blob::new(MEDIA_LAYER_GZIP, gz.finish()?),
        diff_id,
    })
}

/// The OCI architecture name of a static ELF binary (`amd64`, `arm64`, ...).
pub fn elf_architecture(bin: &[u8]) -> anyhow::Result<&'static str> {
    if bin.len() < 20 || &bin[..4] != b"\x7fELF" {
        bail!("not an ELF binary");
    }
    // e_machine, little-endian on every platform we run on.
    Ok(match u16::from_le_bytes([bin[18], bin[19]]) {
        0x3e => "amd64",
        0xb7 => "arm64",
        0x03 => "386",
        0x28 => "arm",
        0xf3 => "riscv64",
        0x15 => "ppc64le",
        0x16 => "s390x",
        m => bail!("unknown ELF machine {m:#x}"),
    })
}

/// The busybox binary and where its applets belong (`bin/sh`, `usr/bin/awk`,
/// from `busybox --list-full`).
pub struct Busybox {
    pub binary: Vec<u8>,
    pub applets: Vec<String>,
    pub architecture: &'static str,
}

impl Busybox {
    /// Reads a static busybox (Debian's busybox-static installs
    /// `/bin/busybox`).
    pub fn load(path: &Path) -> anyhow::Result<Busybox> {
        let binary = std::fs::read(path).with_context(|| {
            format!(
                "reading {} (the images are made from Debian's busybox-static: \
                 apt-get install busybox-static, or set MDIAG_BUSYBOX)",
                path.display()
            )
        })?;
        let architecture =
            elf_architecture(&binary).with_context(|| format!("reading {}", path.display()))?;
        let out = Command::new(path)
            .arg("--list-full")
            .output()
            .with_context(|| format!("running {} --list-full", path.display()))?;
        if !out.status.success() {
            bail!("{} --list-full failed: {}", path.display(), out.status);
        }
        let mut applets: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().trim_start_matches('/').to_owned())
            .filter(|l| l.contains('/') && l != "bin/busybox")
            .collect();
        if !applets.iter().any(|a| a == "bin/sh") {
            bail!("{} has no sh applet; is it busybox-static?", path.display());
        }
        applets.sort();
        applets.dedup();
        Ok(Busybox {
            binary,
            applets,
            architecture,
        })
    }

    /// The shared base layer: a root filesystem with busybox and its applets
    /// as symlinks, /etc/passwd and /etc/group, and an empty /tmp.
    pub fn base_layer(&self) -> anyhow::Result<Layer> {
        let mut e = vec![
            Entry::Dir("bin", 0o755),
            Entry::Dir("dev", 0o755),
            Entry::Dir("etc", 0o755),
            Entry::Dir("proc", 0o555),
            Entry::Dir("root", 0o700),
            Entry::Dir("run", 0o755),
            Entry::Dir("sbin", 0o755),
            Entry::Dir("sys", 0o555),
            Entry::Dir("tmp", 0o1777),
            Entry::Dir("usr", 0o755),
            Entry::Dir("usr/bin", 0o755),
            Entry::Dir("usr/local", 0o755),
            Entry::Dir("usr/local/bin", 0o755),
            Entry::Dir("usr/sbin", 0o755),
            Entry::Dir("var", 0o755),
            Entry::File("bin/busybox".into(), 0o755, self.binary.clone()),
            Entry::File(
                "etc/passwd".into(),
                0o644,
                b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
                    .to_vec(),
            ),
            Entry::File(
                "etc/group".into(),
                0o644,
                b"root:x:0:\nnogroup:x:65534:\n".to_vec(),
            ),
        ];
        for a in &self.applets {
            // Only into the folders made above (busybox lists nothing else).
            if a.rsplit_once('/')
                .is_some_and(|(d, _)| ["bin", "sbin", "usr/bin", "usr/sbin"].contains(&d))
            {
                e.push(Entry::Symlink(a.clone(), "/bin/busybox".into()));
            }
        }
        layer(&e)
    }
}

/// What the image config's `config` says.
pub struct RunConfig {
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub env: Vec<String>,
    pub exposed_ports: Vec<u16>,
    pub labels: Vec<(String, String)>,
}

/// Puts layers and a run config together into an image.
pub fn image(
    architecture: &str,
    layers: Vec<Layer>,
    run: &RunConfig,
    created_by: &[&str],
) -> anyhow::Result<Image> {
    let mut env = vec![PATH_ENV.to_owned()];
    env.extend(run.env.iter().cloned());
    let ports: serde_json::Map<String, Value> = run
        .exposed_ports
        .iter()
        .map(|p| (format!("{p}/tcp"), json!({})))
        .collect();
    let labels: serde_json::Map<String, Value> = run
        .labels
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let mut cfg = json!({
        "Env": env,
        "Entrypoint": run.entrypoint,
        "WorkingDir": "/",
        "StopSignal": "SIGTERM",
    });
    if !run.cmd.is_empty() {
        cfg["Cmd"] = json!(run.cmd);
    }
    if !ports.is_empty() {
        cfg["ExposedPorts"] = Value::Object(ports);
    }
    if !labels.is_empty() {
        cfg["Labels"] = Value::Object(labels);
    }
    let history: Vec<Value> = created_by
        .iter()
        .map(|c| json!({"created": "1970-01-01T00:00:00Z", "created_by": c}))
        .collect();
    let config = json!({
        "created": "1970-01-01T00:00:00Z",
        "architecture": architecture,
        "os": "linux",
        "config": cfg,
        "rootfs": {
            "type": "layers",
            "diff_ids": layers.iter().map(|l| l.diff_id.clone()).collect::<Vec<_>>(),
        },
        "history": history,
    });
    let config = Blob::new(MEDIA_CONFIG, serde_json::to_vec(&config)?);
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "config": config.descriptor(),
        "layers": layers.iter().map(|l| l.blob.descriptor()).collect::<Vec<_>>(),
    });
    let manifest = Blob::new(MEDIA_MANIFEST, serde_json::to_vec(&manifest)?);
    Ok(Image {
        layers,
        config,
        manifest,
    })
}

/// The pause (sandbox) image: PID 1 sleeps until SIGTERM or SIGINT.
pub fn pause_image(bb: &Busybox, base: &Layer) -> anyhow::Result<Image> {
    let top = layer(&[Entry::File(
        PAUSE_PATH.trim_start_matches('/').into(),
        0o755,
        PAUSE_SH.as_bytes().to_vec(),
    )])?;
    image(
        bb.architecture,
        vec![base.clone(), top],
        &RunConfig {
            entrypoint: vec![PAUSE_PATH.into()],
            cmd: vec![],
            env: vec![],
            exposed_ports: vec![],
            labels: vec![(
                "org.opencontainers.image.title".into(),
                "mdiag pause".into(),
            )],
        },
        &["busybox-static", "COPY pause.sh /pause"],
    )
}

/// The model-server stand-in at one version: the same script, with
/// `MODEL_SERVER_VERSION` set in the config (so every version is an image
/// of its own digest that shares the layers).
pub fn model_server_image(bb: &Busybox, base: &Layer, version: &str) -> anyhow::Result<Image> {
    let top = layer(&[
        Entry::Dir("srv", 0o755),
        Entry::Dir("srv/www", 0o755),
        Entry::Dir("srv/www/cgi-bin", 0o755),
        Entry::Dir("srv/www/healthz", 0o755),
        Entry::File(
            "srv/www/cgi-bin/index.cgi".into(),
            0o755,
            HEALTHZ_CGI.as_bytes().to_vec(),
        ),
        Entry::File(
            "srv/www/index.html".into(),
            0o644,
            b"model-server stand-in of mdiag\n".to_vec(),
        ),
        Entry::File(
            MODEL_SERVER_PATH.trim_start_matches('/').into(),
            0o755,
            MODEL_SERVER_SH.as_bytes().to_vec(),
        ),
    ])?;
    image(
        bb.architecture,
        vec![base.clone(), top],
        &RunConfig {
            entrypoint: vec![MODEL_SERVER_PATH.into()],
            cmd: vec![],
            env: vec![format!("MODEL_SERVER_VERSION={version}")],
            exposed_ports: vec![8080],
            labels: vec![
                (
                    "org.opencontainers.image.title".into(),
                    "mdiag model-server stand-in".into(),
                ),
                ("org.opencontainers.image.version".into(), version.into()),
            ],
        },
        &[
            "busybox-static",
            "COPY model-server.sh healthz.cgi",
            &format!("ENV MODEL_SERVER_VERSION={version}"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
    use std::io::Read;

    fn fake_busybox() -> Busybox {
        let mut bin = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0".to_vec();
        bin.extend_from_slice(b"rest of a binary");
        Busybox {
            architecture: elf_architecture(&bin).unwrap(),
            binary: bin,
            applets: vec!["bin/sh".into(), "bin/sleep".into(), "usr/bin/httpd".into()],
        }
    }

    fn gunzip(b: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        GzDecoder::new(b).read_to_end(&mut out).unwrap();
        out
    }

    /// Path, type, mode, data and link target of a tar entry.
    type TarEntry = (String, tar::EntryType, u32, Vec<u8>, Option<String>);

    fn entries(tar: &[u8]) -> Vec<TarEntry> {
        let mut a = tar::Archive::new(tar);
        a.entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let h = e.header().clone();
                let link = e
                    .link_name()
                    .unwrap()
                    .map(|l| l.to_string_lossy().into_owned());
                let mut data = Vec::new();
                e.read_to_end(&mut data).unwrap();
                (
                    e.path().unwrap().to_string_lossy().into_owned(),
                    h.entry_type(),
                    h.mode().unwrap(),
                    data,
                    link,
                )
            })
            .collect()
    }

    #[test]
    fn model_server_image_is_well_formed() {
        let bb = fake_busybox();
        let base = bb.base_layer().unwrap();
        let img = model_server_image(&bb, &base, "v1.4.0").unwrap();
        let m: Value = serde_json::from_slice(&img.manifest.bytes).unwrap();
        assert_eq!(img.manifest.digest, digest(&img.manifest.bytes));
        assert_eq!(m["schemaVersion"], 2);
        assert_eq!(m["mediaType"], MEDIA_MANIFEST);
        assert_eq!(m["config"]["digest"], json!(img.config.digest));
        assert_eq!(m["config"]["size"], json!(img.config.bytes.len()));
        assert_eq!(img.config.digest, digest(&img.config.bytes));
        let layers = m["layers"].as_array().unwrap();
        assert_eq!(layers.len(), 2);
        let cfg: Value = serde_json::from_slice(&img.config.bytes).unwrap();
        for (i, l) in img.layers.iter().enumerate() {
            assert_eq!(layers[i]["digest"], json!(digest(&l.blob.bytes)));
            assert_eq!(layers[i]["size"], json!(l.blob.bytes.len()));
            assert_eq!(layers[i]["mediaType"], MEDIA_LAYER_GZIP);
            // diff_id is the digest of the uncompressed tar.
            assert_eq!(
                cfg["rootfs"]["diff_ids"][i],
                json!(digest(&gunzip(&l.blob.bytes)))
            );
        }
        assert_eq!(cfg["architecture"], "amd64");
        assert_eq!(cfg["os"], "linux");
        assert_eq!(cfg["config"]["Entrypoint"], json!([MODEL_SERVER_PATH]));
        assert!(cfg["config"].get("Cmd").is_none());
        assert!(
            cfg["config"]["Env"]
                .as_array()
                .unwrap()
                .contains(&json!("MODEL_SERVER_VERSION=v1.4.0"))
        );

        let base_entries = entries(&gunzip(&img.layers[0].blob.bytes));
        let bb_entry = base_entries.iter().find(|e| e.0 == "bin/busybox").unwrap();
        assert_eq!(bb_entry.2, 0o755);
        assert_eq!(bb_entry.3, bb.binary);
        let sh = base_entries.iter().find(|e| e.0 == "bin/sh").unwrap();
        assert_eq!(sh.1, tar::EntryType::Symlink);
        assert_eq!(sh.4.as_deref(), Some("/bin/busybox"));
        let tmp = base_entries.iter().find(|e| e.0 == "tmp/").unwrap();
        assert_eq!(tmp.2, 0o1777);

        let top = entries(&gunzip(&img.layers[1].blob.bytes));
        let script = top
            .iter()
            .find(|e| e.0 == "usr/local/bin/model-server")
            .unwrap();
        assert_eq!(script.3, MODEL_SERVER_SH.as_bytes());
        assert_eq!(script.2, 0o755);
        assert!(top.iter().any(|e| e.0 == "srv/www/cgi-bin/index.cgi"));
    }

    #[test]
    fn versions_share_layers_and_differ_in_config() {
        let bb = fake_busybox();
        let base = bb.base_layer().unwrap();
        let a = model_server_image(&bb, &base, "v1.4.0").unwrap();
        let b = model_server_image(&bb, &base, "v1.5.0").unwrap();
        let again = model_server_image(&bb, &base, "v1.4.0").unwrap();
        assert_eq!(a.manifest.digest, again.manifest.digest, "deterministic");
        assert_ne!(a.manifest.digest, b.manifest.digest);
        assert_eq!(a.layers[1].blob.digest, b.layers[1].blob.digest);
        let p = pause_image(&bb, &base).unwrap();
        let cfg: Value = serde_json::from_slice(&p.config.bytes).unwrap();
        assert_eq!(cfg["config"]["Entrypoint"], json!([PAUSE_PATH]));
        assert_eq!(p.layers[0].blob.digest, a.layers[0].blob.digest);
    }

    #[test]
    fn elf_checks() {
        assert!(elf_architecture(b"#!/bin/sh\n").is_err());
        let mut arm = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\xb7\0".to_vec();
        assert_eq!(elf_architecture(&arm).unwrap(), "arm64");
        arm[18] = 0x99;
        assert!(elf_architecture(&arm).is_err());
    }

    #[test]
    fn real_busybox_layer() {
        // busybox-static is what the images are made of; its absence is a
        // setup error, not a reason to skip.
        let path = Path::new("/bin/busybox");
        let bb = Busybox::load(path).expect("apt-get install busybox-static");
        assert!(
            bb.applets.iter().any(|a| a == "usr/sbin/httpd"
                || a == "sbin/httpd"
                || a == "usr/bin/httpd"
                || a == "bin/httpd"),
            "busybox without httpd: {:?}",
            bb.applets
        );
        let l = bb.base_layer().unwrap();
        let es = entries(&gunzip(&l.blob.bytes));
        assert!(
            es.iter()
                .any(|e| e.0 == "bin/sh" && e.1 == tar::EntryType::Symlink)
        );
    }
}
