//! Self-contained kubeconfig files (certificates embedded as *-data).

use std::io::Write;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::pki::{self, Identity, Pki};
use super::procs;

pub const CLUSTER_NAME: &str = "mdiag";

/// Writes a kubeconfig (mode 0600) for `id` talking to `server`.
pub fn write(path: &Path, server: &str, pki: &Pki, id: &Identity) -> anyhow::Result<()> {
    let ca = STANDARD.encode(pki::read(&pki.ca_crt())?);
    let crt = STANDARD.encode(pki::read(&pki.client_crt(id))?);
    let key = STANDARD.encode(pki::read(&pki.client_key(id))?);
    let user = id.user;
    let context = format!("{user}@{CLUSTER_NAME}");
    let text = format!(
        "# Written by `cargo xtask cluster up`.\n\
         apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: {CLUSTER_NAME}\n  \
           cluster:\n    \
             server: {server}\n    \
             certificate-authority-data: {ca}\n\
         users:\n\
         - name: {user}\n  \
           user:\n    \
             client-certificate-data: {crt}\n    \
             client-key-data: {key}\n\
         contexts:\n\
         - name: {context}\n  \
           context:\n    \
             cluster: {CLUSTER_NAME}\n    \
             user: {user}\n    \
             namespace: default\n\
         current-context: {context}\n\
         preferences: {{}}\n"
    );
    let mut f = procs::private_file(path)?;
    f.write_all(text.as_bytes())?;
    Ok(())
}
