//! `cargo xtask test`: the whole suite, the one command README and CI use.

use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;

#[derive(Args)]
pub struct TestArgs {
    /// Extra arguments passed to `cargo test` (after `--`, e.g. a test name filter).
    #[arg(last = true)]
    pub cargo_args: Vec<String>,
}

pub fn run(args: TestArgs) -> anyhow::Result<()> {
    let root = crate::generate::repo_root();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        .args(["test", "--workspace", "--locked"])
        // The live ring (tests/live.rs) runs only when asked for.
        .env("MDIAG_LIVE", "1")
        .args(&args.cargo_args)
        .status()
        .context("running cargo test")?;
    if !status.success() {
        bail!("cargo test failed ({status})");
    }
    Ok(())
}
