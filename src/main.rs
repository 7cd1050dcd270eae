use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use mdiag::cli::Cli;
use mdiag::exit;
use mdiag_core::catalogue;

/// jemalloc, not the system's allocator: a triage of 50,000 Pods took
/// 39 s instead of 42 and 151 MB instead of 159, a 50 MB YAML dump 1.5 s
/// instead of 1.8 (docs/benchmarks.md, "jemalloc"); configured in
/// .cargo/config.toml.
#[cfg(all(unix, not(target_os = "openbsd")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    // Run as the kubectl plugin (`kubectl-mdiag`), the commands it prints,
    // and its usage lines, say `kubectl mdiag`.
    let program = catalogue::program_for(&std::env::args_os().next().unwrap_or_default());
    catalogue::set_program(program);
    let matches = Cli::command().bin_name(program).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let lang = mdiag::request::lang(&cli.global);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let err = anyhow::Error::from(mdiag_core::catalogue::Failed::new("error.runtime", e));
            eprintln!("{program}: {}", mdiag::error::said(&err, lang));
            return ExitCode::from(exit::Exit::Problem.code());
        }
    };
    // An error may quote what it could not reach (a server URL with its
    // password): it is redacted like every other answer.
    let redactor = mdiag::request::redactor(&cli.global).ok();
    match runtime.block_on(mdiag::cmd::run(cli)) {
        Ok(code) => code.into(),
        Err(err) => {
            let mut text = mdiag::error::said(&err, lang);
            if let Some(r) = &redactor {
                r.line(&mut text);
            }
            // An error can quote a file or a cluster's words: inert too.
            eprintln!("{program}: {}", mdiag_render::inert::text(&text, false));
            exit::for_error(&err).into()
        }
    }
}
