use std::process::ExitCode;

use clap::Parser;
use mdiag::cli::Cli;
use mdiag::exit;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mdiag: cannot start the async runtime: {e}");
            return ExitCode::from(exit::Exit::Problem.code());
        }
    };
    match runtime.block_on(mdiag::cmd::run(cli)) {
        Ok(code) => code.into(),
        Err(err) => {
            eprintln!("mdiag: {err:#}");
            exit::for_error(&err).into()
        }
    }
}
