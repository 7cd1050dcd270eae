use clap::Args;

#[derive(Args)]
pub struct GenerateArgs {
    /// Compare instead of writing; fail when a generated file is stale.
    #[arg(long)]
    pub check: bool,
}

pub fn run(_args: GenerateArgs) -> anyhow::Result<()> {
    Ok(())
}
