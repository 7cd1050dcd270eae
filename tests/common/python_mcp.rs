//! Runs tests/mcp_client.py, the Python `mcp` SDK's stdio client, against
//! `mdiag mcp`. The interpreter is `MDIAG_MCP_PYTHON`, else the virtual
//! environment `.ci/run` makes (target/mcp-venv, with the version of
//! tests/mcp_client.requirements.txt).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub const PYTHON_ENV: &str = "MDIAG_MCP_PYTHON";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Python with the `mcp` package, or how to make one.
pub fn python() -> Result<PathBuf, String> {
    let python = std::env::var_os(PYTHON_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/mcp-venv/bin/python"));
    if !python.exists() {
        return Err(format!(
            "{} is missing: run .ci/run, or python3 -m venv target/mcp-venv && \
             target/mcp-venv/bin/pip install -r tests/mcp_client.requirements.txt \
             (or set {PYTHON_ENV})",
            python.display()
        ));
    }
    Ok(python)
}

/// Starts `mdiag mcp FLAGS` in the repository through the Python client,
/// makes `calls` (`[[tool, arguments], ...]`) and returns what it printed.
pub fn run(calls: &Value, flags: &[&str]) -> Result<Value, String> {
    let out = Command::new(python()?)
        .arg(repo().join("tests/mcp_client.py"))
        .arg(env!("CARGO_BIN_EXE_mdiag"))
        .arg(repo())
        .arg(calls.to_string())
        .arg("--")
        .args(flags)
        .output()
        .map_err(|e| format!("running tests/mcp_client.py: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tests/mcp_client.py failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "tests/mcp_client.py printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}
