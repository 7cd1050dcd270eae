//! The cluster's certificates and keys, made with the openssl CLI.
//!
//! One CA of our own signs every certificate: the apiserver's serving
//! certificate (so clients such as kube-rs with rustls see a real CA -> leaf
//! chain) and the client certificates of each identity. A second CA, the
//! front-proxy CA, signs only the client certificate the apiserver presents
//! to aggregated API servers (the requestheader setup that delegated
//! authentication in the controller manager and scheduler reads). A separate
//! RSA key pair signs service-account tokens.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, bail};

/// A client identity: the certificate's CN is the user name and each O a
/// group.
pub struct Identity {
    /// File stem under pki/, e.g. `admin` -> admin.crt and admin.key.
    pub file: &'static str,
    pub user: &'static str,
    pub groups: &'static [&'static str],
}

pub const ADMIN: Identity = Identity {
    file: "admin",
    user: "mdiag-admin",
    groups: &["system:masters"],
};
pub const VIEWER: Identity = Identity {
    file: "viewer",
    user: "mdiag-viewer",
    groups: &[],
};
pub const CONTROLLER_MANAGER: Identity = Identity {
    file: "controller-manager",
    user: "system:kube-controller-manager",
    groups: &[],
};
pub const SCHEDULER: Identity = Identity {
    file: "scheduler",
    user: "system:kube-scheduler",
    groups: &[],
};

/// The real node's kubelet (see `mdiag_harness_node`): the Node authorizer and
/// NodeRestriction know it by this name and group.
pub const NODE: Identity = Identity {
    file: "kubelet-client",
    user: "system:node:mdiag-real-node",
    groups: &["system:nodes"],
};
/// The apiserver, when it calls a kubelet (logs, exec): the real kubelet
/// authenticates it by this certificate and asks the apiserver whether
/// it may (system:masters may).
pub const APISERVER_KUBELET_CLIENT: Identity = Identity {
    file: "apiserver-kubelet-client",
    user: "kube-apiserver-kubelet-client",
    groups: &["system:masters"],
};

pub const IDENTITIES: [&Identity; 6] = [
    &ADMIN,
    &VIEWER,
    &CONTROLLER_MANAGER,
    &SCHEDULER,
    &NODE,
    &APISERVER_KUBELET_CLIENT,
];

/// Paths of the generated files.
pub struct Pki {
    pub dir: PathBuf,
}

impl Pki {
    pub fn new(dir: PathBuf) -> Self {
        Pki { dir }
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    pub fn ca_crt(&self) -> PathBuf {
        self.path("ca.crt")
    }
    pub fn ca_key(&self) -> PathBuf {
        self.path("ca.key")
    }
    pub fn serving_crt(&self) -> PathBuf {
        self.path("apiserver.crt")
    }
    pub fn serving_key(&self) -> PathBuf {
        self.path("apiserver.key")
    }
    pub fn front_proxy_ca_crt(&self) -> PathBuf {
        self.path("front-proxy-ca.crt")
    }
    pub fn front_proxy_client_crt(&self) -> PathBuf {
        self.path("front-proxy-client.crt")
    }
    pub fn front_proxy_client_key(&self) -> PathBuf {
        self.path("front-proxy-client.key")
    }
    /// The real kubelet's serving certificate (for the node address).
    pub fn kubelet_serving_crt(&self) -> PathBuf {
        self.path("kubelet.crt")
    }
    pub fn kubelet_serving_key(&self) -> PathBuf {
        self.path("kubelet.key")
    }
    pub fn sa_key(&self) -> PathBuf {
        self.path("sa.key")
    }
    pub fn sa_pub(&self) -> PathBuf {
        self.path("sa.pub")
    }
    pub fn client_crt(&self, id: &Identity) -> PathBuf {
        self.path(&format!("{}.crt", id.file))
    }
    pub fn client_key(&self, id: &Identity) -> PathBuf {
        self.path(&format!("{}.key", id.file))
    }

    /// Makes every key and certificate. `service_ip` is the first address of
    /// the service range (the `kubernetes` Service's ClusterIP); `node` the
    /// real node's name and address (for the kubelet's serving certificate).
    pub fn generate(&self, service_ip: &str, node: (&str, &str)) -> anyhow::Result<()> {
        fs::create_dir_all(&self.dir)?;
        fs::write(self.path("openssl.cnf"), OPENSSL_CNF)?;

        // RSA key generation is the slow part: run it in parallel.
        let mut keys = vec![
            self.ca_key(),
            self.serving_key(),
            self.kubelet_serving_key(),
            self.sa_key(),
            self.path("front-proxy-ca.key"),
            self.front_proxy_client_key(),
        ];
        keys.extend(IDENTITIES.iter().map(|id| self.client_key(id)));
        let children: Vec<(PathBuf, Child)> = keys
            .into_iter()
            .map(|k| {
                let child = self
                    .openssl()
                    .args([
                        "genpkey",
                        "-algorithm",
                        "RSA",
                        "-pkeyopt",
                        "rsa_keygen_bits:2048",
                        "-out",
                    ])
                    .arg(&k)
                    .stderr(Stdio::piped())
                    .spawn()
                    .context("running openssl (is the openssl CLI installed?)")?;
                Ok((k, child))
            })
            .collect::<anyhow::Result<_>>()?;
        for (key, child) in children {
            let out = child.wait_with_output()?;
            if !out.status.success() {
                bail!(
                    "openssl genpkey {}: {}",
                    key.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        self.run(
            self.openssl()
                .args(["pkey", "-pubout", "-in"])
                .arg(self.sa_key())
                .arg("-out")
                .arg(self.sa_pub()),
        )?;

        // The CAs: self-signed, CA:TRUE, for signing certificates only.
        self.ca("ca", "/CN=mdiag-harness-ca")?;
        self.ca("front-proxy-ca", "/CN=mdiag-harness-front-proxy-ca")?;

        // The apiserver's serving certificate, a leaf signed by the CA.
        let sans = [
            "IP:127.0.0.1".to_owned(),
            "DNS:localhost".to_owned(),
            format!("IP:{service_ip}"),
            "DNS:kubernetes".to_owned(),
            "DNS:kubernetes.default".to_owned(),
            "DNS:kubernetes.default.svc".to_owned(),
            "DNS:kubernetes.default.svc.cluster.local".to_owned(),
        ];
        self.leaf(
            "ca",
            "apiserver",
            "/CN=kube-apiserver",
            "serverAuth",
            Some(&sans.join(",")),
        )?;
        self.leaf(
            "ca",
            "kubelet",
            &format!("/O=system:nodes/CN=system:node:{}", node.0),
            "serverAuth",
            Some(&format!("IP:{},DNS:{}", node.1, node.0)),
        )?;
        self.leaf(
            "front-proxy-ca",
            "front-proxy-client",
            "/CN=front-proxy-client",
            "clientAuth",
            None,
        )?;

        for id in IDENTITIES {
            let mut subject = String::new();
            for g in id.groups {
                subject.push_str(&format!("/O={g}"));
            }
            subject.push_str(&format!("/CN={}", id.user));
            self.leaf("ca", id.file, &subject, "clientAuth", None)?;
        }

        // Private keys readable by the owner only.
        for entry in fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "key") {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(&path, fs::Permissions::from_mode(0o600))?;
            }
        }
        Ok(())
    }

    /// Makes the self-signed `<stem>.crt` for the existing `<stem>.key`.
    fn ca(&self, stem: &str, subject: &str) -> anyhow::Result<()> {
        self.run(
            self.openssl()
                .args([
                    "req", "-x509", "-new", "-sha256", "-days", "3650", "-subj", subject,
                ])
                .args(["-extensions", "v3_ca", "-key"])
                .arg(self.path(&format!("{stem}.key")))
                .arg("-out")
                .arg(self.path(&format!("{stem}.crt"))),
        )
    }

    /// Signs `<stem>.crt` for the existing `<stem>.key` with the CA `<ca>`.
    fn leaf(
        &self,
        ca: &str,
        stem: &str,
        subject: &str,
        usage: &str,
        sans: Option<&str>,
    ) -> anyhow::Result<()> {
        let key = self.path(&format!("{stem}.key"));
        let csr = self.path(&format!("{stem}.csr"));
        let crt = self.path(&format!("{stem}.crt"));
        let ext = self.path(&format!("{stem}.ext"));
        let mut text = format!(
            "[leaf]\nbasicConstraints = critical, CA:FALSE\n\
             keyUsage = critical, digitalSignature, keyEncipherment\n\
             extendedKeyUsage = {usage}\n\
             subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n"
        );
        if let Some(sans) = sans {
            text.push_str(&format!("subjectAltName = {sans}\n"));
        }
        fs::write(&ext, text)?;
        self.run(
            self.openssl()
                .args(["req", "-new", "-subj", subject, "-key"])
                .arg(&key)
                .arg("-out")
                .arg(&csr),
        )?;
        self.run(
            self.openssl()
                .args(["x509", "-req", "-sha256", "-days", "365", "-in"])
                .arg(&csr)
                .arg("-CA")
                .arg(self.path(&format!("{ca}.crt")))
                .arg("-CAkey")
                .arg(self.path(&format!("{ca}.key")))
                .arg("-CAcreateserial")
                .arg("-CAserial")
                .arg(self.path(&format!("{ca}.srl")))
                .arg("-extfile")
                .arg(&ext)
                .args(["-extensions", "leaf", "-out"])
                .arg(&crt),
        )?;
        fs::remove_file(&csr)?;
        fs::remove_file(&ext)?;
        Ok(())
    }

    /// `openssl` with our own config, so the system's openssl.cnf does not
    /// add extensions of its own.
    fn openssl(&self) -> Command {
        let mut c = Command::new("openssl");
        c.env("OPENSSL_CONF", self.path("openssl.cnf"))
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        c
    }

    fn run(&self, cmd: &mut Command) -> anyhow::Result<()> {
        let out = cmd
            .output()
            .context("running openssl (is the openssl CLI installed?)")?;
        if !out.status.success() {
            bail!("{:?} failed: {}", cmd, String::from_utf8_lossy(&out.stderr));
        }
        Ok(())
    }
}

/// Reads a PEM file for embedding in a kubeconfig.
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    fs::read(path).with_context(|| format!("reading {}", path.display()))
}

const OPENSSL_CNF: &str = "\
# Written by `cargo xtask cluster up`.
[req]
distinguished_name = dn
prompt = no
[dn]
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
";

#[cfg(test)]
mod tests {
    use super::*;

    fn openssl_out(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn the_node_identity_names_the_real_node() {
        assert_eq!(
            NODE.user,
            format!("system:node:{}", mdiag_harness_node::NODE_NAME)
        );
    }

    #[test]
    fn generates_a_ca_and_leaves_signed_by_it() {
        let dir = std::env::temp_dir().join(format!("mdiag-pki-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let pki = Pki::new(dir.clone());
        pki.generate("10.96.0.1", ("mdiag-real-node", "10.123.0.1"))
            .unwrap();

        let ca = openssl_out(&dir, &["x509", "-in", "ca.crt", "-noout", "-text"]);
        assert!(ca.contains("CA:TRUE"), "{ca}");
        assert!(ca.contains("Certificate Sign"), "{ca}");

        let serving = openssl_out(&dir, &["x509", "-in", "apiserver.crt", "-noout", "-text"]);
        assert!(serving.contains("CA:FALSE"), "{serving}");
        assert!(serving.contains("IP Address:127.0.0.1"), "{serving}");
        assert!(serving.contains("DNS:localhost"), "{serving}");
        assert!(
            serving.contains("TLS Web Server Authentication"),
            "{serving}"
        );
        let verified = openssl_out(
            &dir,
            &[
                "verify",
                "-CAfile",
                "ca.crt",
                "-purpose",
                "sslserver",
                "apiserver.crt",
            ],
        );
        assert!(verified.contains("OK"), "{verified}");

        let kubelet = openssl_out(&dir, &["x509", "-in", "kubelet.crt", "-noout", "-text"]);
        assert!(kubelet.contains("IP Address:10.123.0.1"), "{kubelet}");
        assert!(kubelet.contains("DNS:mdiag-real-node"), "{kubelet}");
        let verified = openssl_out(
            &dir,
            &[
                "verify",
                "-CAfile",
                "ca.crt",
                "-purpose",
                "sslserver",
                "kubelet.crt",
            ],
        );
        assert!(verified.contains("OK"), "{verified}");

        for id in IDENTITIES {
            let crt = format!("{}.crt", id.file);
            let subject = openssl_out(
                &dir,
                &[
                    "x509", "-in", &crt, "-noout", "-subject", "-nameopt", "RFC2253",
                ],
            );
            assert!(subject.contains(&format!("CN={}", id.user)), "{subject}");
            for g in id.groups {
                assert!(subject.contains(&format!("O={g}")), "{subject}");
            }
            let verified = openssl_out(
                &dir,
                &["verify", "-CAfile", "ca.crt", "-purpose", "sslclient", &crt],
            );
            assert!(verified.contains("OK"), "{verified}");
        }
        let verified = openssl_out(
            &dir,
            &[
                "verify",
                "-CAfile",
                "front-proxy-ca.crt",
                "-purpose",
                "sslclient",
                "front-proxy-client.crt",
            ],
        );
        assert!(verified.contains("OK"), "{verified}");
        let _ = fs::remove_dir_all(&dir);
    }
}
