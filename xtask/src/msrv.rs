//! `cargo xtask msrv`: the minimum Rust version in Cargo.toml holds for the
//! dependency tree. This machine cannot download an older toolchain, so the
//! check has two halves: clippy's `incompatible_msrv` lint (on by default)
//! reads `rust-version` and flags our own use of newer std APIs, and this
//! command refuses any locked dependency that declares a newer
//! `rust-version` than ours.

use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

/// `1.89` or `1.89.0` as comparable numbers.
fn version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

pub fn run() -> anyhow::Result<()> {
    let root = crate::generate::repo_root();
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let metadata: Value = serde_json::from_slice(&out.stdout).context("reading cargo metadata")?;
    let packages = metadata["packages"].as_array().context("no packages")?;
    let ours = packages
        .iter()
        .find(|p| p["name"] == "mdiag")
        .and_then(|p| p["rust_version"].as_str())
        .context("the mdiag package declares no rust-version")?;
    let msrv = version(ours).context("unreadable rust-version")?;
    let mut newer = Vec::new();
    for p in packages {
        if let Some(v) = p["rust_version"].as_str()
            && version(v).is_some_and(|v| v > msrv)
        {
            newer.push(format!(
                "{} {} needs Rust {v}",
                p["name"].as_str().unwrap_or("?"),
                p["version"].as_str().unwrap_or("?")
            ));
        }
    }
    if !newer.is_empty() {
        bail!(
            "rust-version {ours} is not met by:\n  {}",
            newer.join("\n  ")
        );
    }
    println!(
        "rust-version {ours}: all {} packages of the lock file allow it",
        packages.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn versions_compare_as_numbers() {
        assert!(super::version("1.89") < super::version("1.100.0"));
        assert_eq!(super::version("1.89"), super::version("1.89.0"));
    }
}
